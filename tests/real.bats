#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Transform kinds: --real (rfftn), --inverse --real (irfftn), --precision,
# 1-D transforms split over ranks (four-step), --check, --plan and the
# FFTW wisdom, against numpy (tests/oracle.py: 1e-12 double, 1e-5 single,
# relative to the largest magnitude). Every decomposition of --real, those
# that split the halved last axis first among them: tests/decompositions.bats.

load helpers

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    CASES=()
}

# bats test_tags=sanitized
@test "rfftn: even and odd last axes, 2-D to 4-D, uneven sizes, 1 to 5 ranks" {
    oracle make a.h5 13x7x8:float64 -- b.h5 6x9:float64 -- c.h5 5x4x3x7:float64 -- d.h5 3x1x5:float64
    fs 1 a.h5 a1.h5 --real
    fs 3 a.h5 a3.h5 --real
    fs 5 a.h5 a5.h5 --real --norm=ortho
    fs 4 b.h5 b4.h5 --real
    fs 2 c.h5 c2.h5 --real
    fs 4 c.h5 c4.h5 --real --axes=0,1,3
    fs 5 d.h5 d5.h5 --real
    check_all
}

@test "rfftn with the real axis not last, and without axis 0" {
    oracle make a.h5 6x5x7:float64
    fs 3 a.h5 o1.h5 --real --axes=0,2,1
    fs 2 a.h5 o2.h5 --real --axes=2,0
    fs 4 a.h5 o3.h5 --real --axes=1,2
    fs 3 a.h5 o4.h5 --real --axes=-1
    check_all
}

@test "irfftn: the forward result back with its last_size attribute, odd and even lengths" {
    oracle make a.h5 9x6x7:float64 -- b.h5 8x10:float64
    fftshard 3 --quiet --real a.h5 af.h5
    fftshard 2 --quiet --real b.h5 bf.h5
    fs 4 af.h5 ab.h5 --real --inverse --last-size=7
    fs 3 bf.h5 bb.h5 --real --inverse --last-size=10
    # the attribute alone gives the odd length back
    run fftshard 4 --quiet --real --inverse af.h5 ab2.h5
    assert_success
    CASES+=("in=af.h5 out=ab2.h5 ranks=4 real inverse last=7")
    check_all
    # and that is the original array again
    run python_serial -c 'import h5py, numpy as np
a = h5py.File("a.h5")["data"][()]; b = h5py.File("ab2.h5")["data"][()]
print(b.shape == a.shape and np.abs(a - b).max() < 1e-12 * np.abs(a).max())'
    assert_output True
}

@test "irfftn of arbitrary complex input, the real axis last or not, 1 to 8 ranks" {
    oracle make z.h5 6x5x4:complex128 -- y.h5 7x9:complex128
    fs 1 z.h5 z1.h5 --real --inverse
    fs 3 z.h5 z3.h5 --real --inverse --last-size=7
    fs 8 z.h5 z8.h5 --real --inverse
    fs 2 z.h5 za.h5 --real --inverse --axes=2,0,1
    fs 4 y.h5 y4.h5 --real --inverse --axes=1,0 --last-size=13
    fs 3 y.h5 y3.h5 --real --inverse --axes=0
    check_all
}

@test "every strategy with --real and --inverse --real" {
    oracle make a.h5 10x6x8:float64 -- z.h5 6x5x5:complex128
    local s
    for s in alltoall random xorswap pairwise auto; do
        fs 3 a.h5 "r_$s.h5" --real --transpose="$s"
        fs 4 z.h5 "c_$s.h5" --real --inverse --transpose="$s"
    done
    check_all
}

@test "single precision: float32 and complex64 input by default, --precision either way" {
    oracle make f.h5 12x10:float32 -- c.h5 6x5x4:complex64 -- d.h5 7x6:float64
    fs 3 f.h5 f3.h5
    fs 2 f.h5 fr.h5 --real
    fs 4 c.h5 c4.h5 --inverse
    fs 2 f.h5 fd.h5 --precision=double
    fs 3 d.h5 ds.h5 --precision=single
    fs 2 d.h5 dr.h5 --real --precision=single
    fs 3 c.h5 cr.h5 --real --inverse --last-size=7
    check_all
}

# bats test_tags=sanitized
@test "1-D on several ranks: four-step for composite lengths, gather for primes, every strategy" {
    oracle make a.h5 1000:complex128 -- b.h5 97:complex128 -- c.h5 24:complex128 -- r.h5 360:float64 \
        -- s.h5 30:float32
    local s
    for s in alltoall random xorswap pairwise; do
        fs 3 a.h5 "a_$s.h5" --transpose="$s"
    done
    fs 8 a.h5 a8.h5 --inverse --norm=ortho
    fs 2 b.h5 b2.h5
    fs 5 c.h5 c5.h5
    fs 4 r.h5 r4.h5 --real
    fs 3 r.h5 r3.h5 --real --transpose=pairwise
    fs 2 s.h5 s2.h5
    check_all
    run --separate-stderr fftshard 3 --verbose --force a.h5 a_alltoall.h5
    grep -q '1-D four-step 40x25' <<<"$stderr" || fail "$stderr"
}

@test "1-D inverse real transform on several ranks" {
    oracle make r.h5 64:float64
    fftshard 3 --quiet --real r.h5 rf.h5
    fs 4 rf.h5 rb.h5 --real --inverse --last-size=64
    check_all
}

@test "--check: passes, in the summary and the report, for c2c, r2c and c2r" {
    oracle make a.h5 12x8x6:complex128 -- r.h5 10x9:float64 -- f.h5 16x12:float32 -- o.h5 360:complex128
    local args
    for args in "a.h5 a1.h5" "--real r.h5 r1.h5" "--transpose=pairwise a.h5 a2.h5" "f.h5 f1.h5" \
        "o.h5 o1.h5" "--transpose=pairwise o.h5 o2.h5"; do
        # shellcheck disable=SC2086
        run --separate-stderr fftshard 3 --check --report=r.json $args
        assert_success
        grep -Eq '^  check: round trip error [0-9.e+-]+, Parseval error [0-9.e+-]+, tolerance [0-9.e+-]+: passed$' \
            <<<"$stderr" || fail "$args: $stderr"
    done
    fftshard 3 --quiet --real r.h5 rf.h5
    run --separate-stderr fftshard 2 --check --real --inverse rf.h5 rb.h5
    assert_success
    grep -q 'passed' <<<"$stderr" || fail "$stderr"
    run python_serial -c 'import json; c = json.load(open("r.json"))["check"]
print(c["passed"] and c["roundtrip_error"] < 1e-12 and c["parseval_error"] < 1e-12)'
    assert_output True
}

# bats test_tags=sanitized
@test "--check on 1-D real-typed input: lengths 1 to 100, float64, float32, int32, c2c and --real, 1 to 4 ranks" {
    # The input read again for the round trip is a 1-D array of reals in
    # complex slots (every other element, its first axis its last) or a
    # four-step's folded view of it. One run per rank count and kind takes
    # several datasets at once; on 1 rank every length and type.
    local n t specs=() all=()
    for n in 1 2 3 16 17 31 32 100; do
        for t in float64 float32 int32; do
            specs+=("/n${n}_$t=$n:$t")
            all+=("/n${n}_$t")
        done
    done
    oracle make r.h5 "${specs[@]}"
    local runs=(
        "1 c2c ${all[*]}" "1 --real ${all[*]}"
        "2 c2c /n17_float64 /n31_float32 /n32_int32 /n100_float64"
        "2 --real /n3_int32 /n16_float32 /n31_float64 /n100_int32"
        "3 c2c /n17_int32 /n31_float64" "3 --real /n17_float32 /n100_float64"
        "4 c2c /n16_float64 /n31_int32" "4 --real /n17_float64 /n32_float32"
    )
    local r np kind out ds ins
    for r in "${runs[@]}"; do
        read -r np kind ds <<<"$r"
        kind=${kind#c2c}
        out=o$np$kind.h5
        ins=()
        for ds in ${r#* * }; do
            ins+=("r.h5:$ds")
            CASES+=("in=r.h5:$ds out=$out:$ds ranks=$np ${kind:+real}")
        done
        run --separate-stderr timeout 300 "$MPIEXEC" -n "$np" "$FFTSHARD" --quiet --check $kind \
            "${ins[@]}" "$out"
        assert_success
        assert_no_temporaries
    done
    # alone, without --quiet (length 17 on 1 rank crashed after the commit;
    # length 31 on 2 ranks hung)
    for r in "1 /n17_float64" "2 /n31_float32"; do
        read -r np ds <<<"$r"
        run --separate-stderr timeout 120 "$MPIEXEC" -n "$np" "$FFTSHARD" --check "r.h5:$ds" "a$np.h5"
        assert_success
        grep -q 'passed' <<<"$stderr" || fail "$ds on $np ranks: $stderr"
        CASES+=("in=r.h5:$ds out=a$np.h5:$ds ranks=$np")
    done
    check_all
    assert_no_temporaries
}

@test "--check above the tolerance: exit 5, no result kept, an existing OUTPUT unchanged" {
    oracle make a.h5 8x6:complex128
    echo old > out.h5
    local before
    before=$(checksum out.h5)
    run --separate-stderr fftshard 2 --force --check-tolerance=1e-300 a.h5 out.h5
    assert_error "$EXIT_CHECK" "--check" "tolerance"
    assert_equal "$(checksum out.h5)" "$before"
    assert_no_temporaries
    run --separate-stderr fftshard 2 --check-tolerance=1e-300 a.h5 new.h5
    assert_error "$EXIT_CHECK"
    [ ! -e new.h5 ] || fail "a failed check kept the result"
}

@test "--plan=measure with --wisdom: the second run takes every FFTW plan from the wisdom" {
    oracle make a.h5 64x64x32:complex128
    fftshard 2 --quiet --plan=measure --wisdom=w.txt --report=r1.json a.h5 o1.h5
    fftshard 2 --quiet --plan=measure --wisdom=w.txt --report=r2.json a.h5 o2.h5
    run python_serial -c 'import json
p1 = json.load(open("r1.json"))["fftw_plans"]
p2 = json.load(open("r2.json"))["fftw_plans"]
print(p1["from_wisdom"] < p1["made"] and 0 < p2["made"] == p2["from_wisdom"], p1, p2)'
    [[ $output == True* ]] || fail "$output"
    grep -qx '%fftw' w.txt || fail "no FFTW part"
    [ "$(sed -n '/^%fftw$/,$p' w.txt | wc -l)" -gt 3 ] || fail "the FFTW part is empty: $(cat w.txt)"
    CASES=("in=a.h5 out=o1.h5 ranks=2" "in=a.h5 out=o2.h5 ranks=2")
    check_all
}

@test "bad values: --real on complex input exit 3; --last-size misfits and bad options exit 2" {
    oracle make c.h5 4x6:complex128 -- r.h5 4x6:float64
    run --separate-stderr fftshard 2 --real c.h5 o.h5
    assert_error "$EXIT_INPUT" "--real" "; c.h5:/data is complex128"
    fftshard 2 --quiet --real r.h5 rf.h5
    run --separate-stderr fftshard 2 --real --inverse --last-size=9 rf.h5 o.h5
    assert_error "$EXIT_USAGE" "--last-size" "9"
    run --separate-stderr fftshard 2 --last-size=6 r.h5 o.h5
    assert_error "$EXIT_USAGE" "--last-size"
    local bad
    for bad in --last-size=0 --last-size=x --precision=half --plan=fast --check-tolerance=0 \
        --check-tolerance=-1 --check-tolerance=x; do
        run --separate-stderr fftshard 2 --real --inverse "$bad" rf.h5 o.h5
        assert_error "$EXIT_USAGE" "${bad%%=*}"
    done
    [ ! -e o.h5 ] || fail "a refused run wrote the output"
}

@test "an inconsistent last_size attribute: exit 3" {
    oracle make r.h5 4x6:float64
    fftshard 2 --quiet --real r.h5 rf.h5
    python_serial -c 'import h5py
with h5py.File("rf.h5", "r+") as f: f["data"].attrs["last_size"] = 11'
    run --separate-stderr fftshard 2 --real --inverse rf.h5 o.h5
    assert_error "$EXIT_INPUT" "last_size" "11"
}

