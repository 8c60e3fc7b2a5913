#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# The exchange strategies (--transpose) through the whole command: every
# strategy and auto against numpy on 1 to 8 ranks with uneven sizes and idle
# ranks, their parameters (--packet, --queues, --seed) at their extremes, the
# wisdom file, the bad values, the overlap line of pairwise, the memory of
# xorswap and the default's choice. test_exchange.c checks each exchange alone.

load helpers

STRATEGIES="alltoall random xorswap pairwise auto"

# same_values A B: the datasets /data of A and B are equal bit for bit,
# attributes aside (they name the strategy). alltoall, random and xorswap
# only move the data between the same FFT passes: their results must be
# identical, not merely close. (pairwise runs FFTW on blocks with other
# plans: its last bits may differ, the oracle's tolerance judges it.)
same_values() {
    run h5diff --exclude-attribute /data "$1" "$2" /data /data
    [ "$status" -eq 0 ] || fail "$1 and $2 differ: $output"
}

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    CASES=()
}

@test "every strategy on 1 rank: no exchange, the attribute says none" {
    oracle make a.h5 5x4x3x2:complex128 -- d.h5 11:float32
    local s
    for s in $STRATEGIES; do
        fs 1 a.h5 "a_$s.h5" --transpose="$s"
        fs 1 d.h5 "d_$s.h5" --transpose="$s" --inverse
        assert_equal "$s: $(oracle_attr "a_$s.h5" transpose)" "$s: none"
    done
    check_all
}

@test "every strategy on 2, 3 and 4 ranks: 3-D, 4-D, 2-D, 1-D, uneven sizes" {
    # f.h5 on 4 ranks: 3 rows leave rank 3 empty before the exchange, and the
    # axis split after it (axis 2, 3 long) leaves rank 3 empty after
    oracle make a.h5 13x7x4:complex128 -- b.h5 7x5x3x4:complex128 -- c.h5 9x6:float32 \
        -- d.h5 23:complex128 -- e.h5 7x5x3:float64 -- f.h5 3x2x3x2:float32
    local s
    for s in $STRATEGIES; do
        fs 3 a.h5 "a_$s.h5" --transpose="$s"
        fs 4 b.h5 "b_$s.h5" --transpose="$s"
        fs 2 c.h5 "c_$s.h5" --transpose="$s"
        fs 3 d.h5 "d_$s.h5" --transpose="$s"
        fs 4 e.h5 "e_$s.h5" --transpose="$s" --inverse
        fs 4 f.h5 "f_$s.h5" --transpose="$s" --inverse
    done
    check_all
    for s in random xorswap; do
        for f in a b c d e f; do
            same_values "${f}_alltoall.h5" "${f}_$s.h5"
        done
    done
}

@test "every strategy with --axes subsets: the axes pairwise runs per block, and without axis 0" {
    oracle make a.h5 6x5x4x7:complex128
    local s
    for s in $STRATEGIES; do
        fs 3 a.h5 "all_$s.h5" --transpose="$s"
        fs 3 a.h5 "sub_$s.h5" --transpose="$s" --axes=0,2,3
        fs 2 a.h5 "no0_$s.h5" --transpose="$s" --axes=1,-1
        fs 4 a.h5 "one_$s.h5" --transpose="$s" --axes=0
    done
    check_all
}

@test "every strategy on 5 and 8 ranks with idle ranks: 13x7x4 on 5, 3x40x40 on 8" {
    oracle make a.h5 13x7x4:complex128 -- b.h5 3x40x40:complex128
    local s
    for s in $STRATEGIES; do
        fs 5 a.h5 "a_$s.h5" --transpose="$s"
        fs 8 b.h5 "b_$s.h5" --transpose="$s"
    done
    check_all
    for s in random xorswap; do
        same_values a_alltoall.h5 "a_$s.h5"
        same_values b_alltoall.h5 "b_$s.h5"
    done
}

# bats test_tags=sanitized
@test "--packet=1, 7 and 1G, --queues=1 and 9 on 3 ranks give the same result" {
    oracle make a.h5 5x4x3:complex128
    local s
    for s in random xorswap pairwise; do
        fs 3 a.h5 "p1_$s.h5" --transpose="$s" --packet=1
        fs 3 a.h5 "p7_$s.h5" --transpose="$s" --packet=7 --queues=9
        fs 3 a.h5 "pg_$s.h5" --transpose="$s" --packet=1G --queues=1
    done
    fs 3 a.h5 pk.h5 --transpose=random --packet=64K
    fs 3 a.h5 ref.h5 --transpose=alltoall
    check_all
    for s in random xorswap; do
        same_values ref.h5 "p1_$s.h5"
        same_values ref.h5 "p7_$s.h5"
        same_values ref.h5 "pg_$s.h5"
    done
}

@test "--seed changes random's order, not its result" {
    oracle make a.h5 8x6x5:complex128
    fftshard 4 --quiet --transpose=random --seed=1 a.h5 s1.h5
    fftshard 4 --quiet --transpose=random --seed=18446744073709551615 a.h5 s2.h5
    run h5diff s1.h5 s2.h5
    assert_success
}

# bats test_tags=sanitized
@test "auto: the attribute names the strategy chosen; --wisdom stores it and the next run reuses it" {
    oracle make a.h5 12x8x6:complex128
    run --separate-stderr fftshard 3 --verbose --transpose=auto --wisdom=w.txt a.h5 o1.h5
    assert_success
    grep -q 'auto: timed every strategy' <<<"$stderr" || fail "$stderr"
    local chosen
    chosen=$(oracle_attr o1.h5 transpose)
    [[ " alltoall random xorswap pairwise " == *" $chosen "* ]] || fail "attribute: $chosen"
    assert_equal "$(head -1 w.txt)" "# fftshard wisdom 1"
    grep -Eq "^transpose [^ ]*ranks=3[^ ]* $chosen [0-9.]+$" w.txt || fail "$(cat w.txt)"
    grep -qx '%fftw' w.txt || fail "no FFTW part: $(cat w.txt)"
    run --separate-stderr fftshard 3 --verbose --transpose=auto --wisdom=w.txt a.h5 o2.h5
    assert_success
    grep -q "auto: taken from the wisdom file: $chosen" <<<"$stderr" || fail "$stderr"
    grep -q "auto: alltoall takes" <<<"$stderr" && fail "timed the strategies again: $stderr"
    assert_equal "$(oracle_attr o2.h5 transpose)" "$chosen"
    # The choice, and every strategy's time beside it (for the default).
    assert_equal "entries: $(grep -c '^transpose ' w.txt)" "entries: 5"
    assert_equal "times: $(grep -c '^transpose [^ ]*/timed=' w.txt)" "times: 4"
    CASES=("in=a.h5 out=o1.h5 ranks=3 transpose=auto" "in=a.h5 out=o2.h5 ranks=3 transpose=auto")
    check_all
}

@test "a corrupt wisdom file: exit 3 naming it, no output, the file left alone" {
    oracle make a.h5 4x4:complex128
    head -c 300 /dev/urandom > bin.txt
    # binary data for certain: an HDF5 file given as the wisdom file
    cp a.h5 h5.txt
    printf 'not wisdom\n' > bad.txt
    # another version, the rest well-formed: only the first line is wrong
    printf '# fftshard wisdom 2\n%%fftw\n' > version.txt
    printf '# fftshard wisdom 1\ntranspose x\n' > entry.txt
    printf '# fftshard wisdom 1\n%%fftw\n(garbage\n' > fftw.txt
    local f before
    for f in bin.txt h5.txt bad.txt version.txt entry.txt fftw.txt; do
        before=$(checksum "$f")
        run --separate-stderr fftshard 2 --transpose=auto --wisdom="$f" a.h5 o.h5
        assert_error "$EXIT_INPUT" "$f"
        [ ! -e o.h5 ] || fail "output written with a corrupt wisdom file $f"
        assert_no_temporaries
        assert_equal "$f: $(checksum "$f")" "$f: $before"
    done
    # not only with auto: the file also holds FFTW's wisdom
    run --separate-stderr fftshard 3 --transpose=xorswap --wisdom=version.txt a.h5 o.h5
    assert_error "$EXIT_INPUT" version.txt
    [ ! -e o.h5 ] || fail "output written with a corrupt wisdom file"
    assert_no_temporaries
}

@test "bad strategy parameters: exit 2 with the Try line" {
    oracle make a.h5 4x4:complex128
    local bad
    for bad in --packet=0 --packet=-1 --packet=2G --packet=abc --packet= --queues=0 \
        --queues=-1 --queues=x --queues=1025 --seed=-1 --seed=x --transpose=bogus --wisdom=; do
        run --separate-stderr fftshard 2 "$bad" a.h5 o.h5
        assert_error "$EXIT_USAGE" "${bad%%=*}"
    done
    [ ! -e o.h5 ] || fail "a refused run wrote the output"
}

@test "pairwise reports its overlap; the others do not" {
    oracle make a.h5 16x16x16:complex128
    run --separate-stderr fftshard 2 --transpose=pairwise a.h5 p.h5
    assert_success
    grep -Eq '^  overlap: [0-9.]+ s of [0-9.]+ s block FFT work ran with messages in flight \([0-9]+%, all ranks\)$' \
        <<<"$stderr" || fail "$stderr"
    run --separate-stderr fftshard 2 --transpose=xorswap a.h5 x.h5
    assert_success
    grep -q 'overlap' <<<"$stderr" && fail "xorswap printed an overlap line: $stderr"
    true
}

# peak MiB of a run, from its summary
peak_mib() {
    sed -n 's/^  peak memory \([0-9.]*\) MiB.*/\1/p' <<<"$1"
}

@test "memory: xorswap's peak over a tiny run's is at most 1.25 x the local array; alltoall's is larger" {
    [ "$FFTSHARD_SANITIZERS" != yes ] ||
        skip "AddressSanitizer's redzones, quarantine and shadow memory change the peak this measures"
    mkdata 2 --quiet 256x256x256 big.h5
    mkdata 1 --quiet 1x1x1 tiny.h5
    run --separate-stderr fftshard 2 --transpose=xorswap tiny.h5 t.h5
    assert_success
    local base xor a2a
    base=$(peak_mib "$stderr")
    run --separate-stderr fftshard 2 --transpose=xorswap big.h5 x.h5
    assert_success
    xor=$(peak_mib "$stderr")
    run --separate-stderr fftshard 2 --transpose=alltoall big.h5 a.h5
    assert_success
    a2a=$(peak_mib "$stderr")
    # local array: 256^3 complex128 over 2 ranks = 128 MiB; the libraries and
    # ROMIO's 16 MiB collective buffer come on top, hence the large size
    python_serial -c "import sys; b, x, a = map(float, sys.argv[1:]); local = 256**3 * 16 / 2 / 2**20
assert x - b <= 1.25 * local, ('xorswap', x - b, local)
assert a > x, ('alltoall', a, 'xorswap', x)" "$base" "$xor" "$a2a"
}

# oracle_attr FILE NAME: a string attribute of the file's only result (the
# datasets beside it are its coordinates, dimension scales).
oracle_attr() {
    python_serial -c "import h5py, sys
f = h5py.File(sys.argv[1], 'r')
d = [f[k] for k in f if isinstance(f[k], h5py.Dataset)
     and f[k].attrs.get('CLASS') != b'DIMENSION_SCALE'][0]
print(d.attrs[sys.argv[2]])" "$1" "$2"
}

python_serial() {
    local unset=() name
    for name in $(compgen -e); do
        case $name in
        PMI_* | HYDRA_* | MPI_* | OMPI_*) unset+=(-u "$name") ;;
        esac
    done
    env "${unset[@]}" "$PYTHON_ORACLE" "$@"
}

# dry_totals ARGS...: from the dry run of ARGS on 2 ranks: each
# strategy's total bytes (NAME=BYTES ...), the strategy, its reason.
dry_totals() {
    fftshard 2 --dry-run --report=- -q "$@" | python_serial -c 'import json, sys
p = json.load(sys.stdin)
print(" ".join("%s=%d" % (k, v["total_bytes"]) for k, v in p["strategies"].items()))
print(p["strategy"]["name"])
print(p["strategy"]["reason"])'
}

# report_strategy JSON: "NAME REQUESTED" then the reason.
report_strategy() {
    python_serial -c 'import json, sys
s = json.load(open(sys.argv[1]))["strategy"]
print(s["name"], s["requested"])
print(s["reason"])' "$1"
}

# How the ranks waited for messages (spin or yield).
report_waits() {
    python_serial -c 'import json, sys; print(json.load(open(sys.argv[1]))["strategy"]["waits"])' "$1"
}

# On 128x64x64 on 2 ranks xorswap (in place) needs less than random and
# alltoall (a send buffer) and pairwise (its blocks' FFT plans).
@test "the default: the fastest that fits --mem-per-rank, saying why; the dry run agrees with the run" {
    oracle make a.h5 128x64x64:complex128
    local totals name reason limit
    # As on a node with a core per rank, whatever this machine has.
    export FFTSHARD_NODE_CPUS=64
    # Room for all: alltoall, the fastest expected, by the node's memory.
    totals=$(dry_totals a.h5)
    name=$(sed -n 2p <<<"$totals")
    reason=$(sed -n 3p <<<"$totals")
    assert_equal "$name" alltoall
    [[ $reason == "the fastest by expected speed that fits: needs "*" MiB per rank ("*"of the node over 2 ranks)" ]] ||
        fail "dry run's reason: $reason"
    fs 2 a.h5 o_default.h5 --report=r.json
    assert_equal "$(report_strategy r.json | head -1)" "alltoall default"
    assert_equal "$(oracle_attr o_default.h5 transpose)" alltoall
    # A limit that random and alltoall (a send buffer) exceed and xorswap
    # (in place) fits takes xorswap, the fastest left.
    read -r -a sizes <<<"$(head -1 <<<"$totals")"
    limit=$(python_serial -c 'import sys
t = dict(kv.split("=") for kv in sys.argv[1:])
t = {k: int(v) for k, v in t.items()}
assert t["xorswap"] < min(t["random"], t["alltoall"], t["pairwise"]), t
print(t["xorswap"])' "${sizes[@]}")
    totals=$(dry_totals --mem-per-rank="$limit" a.h5)
    assert_equal "$(sed -n 2p <<<"$totals")" xorswap
    fs 2 a.h5 o_limited.h5 --mem-per-rank="$limit" --report=r2.json
    assert_equal "$(report_strategy r2.json | head -1)" "xorswap default"
    reason=$(report_strategy r2.json | tail -1)
    assert_equal "$reason" "$(sed -n 3p <<<"$totals")"
    [[ $reason == "the fastest by expected speed that fits: needs "*" MiB per rank (--mem-per-rank); too large: alltoall "*", random "* ]] ||
        fail "reason: $reason"
    run --separate-stderr fftshard 2 --verbose --mem-per-rank="$limit" -f a.h5 o_limited.h5
    assert_success
    grep -qF "fftshard: strategy: xorswap (default: $reason)" <<<"$stderr" || fail "$stderr"
    # Below every estimate: the one that needs least, and the dry run says
    # it does not fit.
    run --separate-stderr fftshard 2 --dry-run --mem-per-rank=1M a.h5
    assert_failure "$EXIT_RUNTIME"
    [[ $output == *"(default: none fits: the one that needs least: "* ]] || fail "$output"
    fs 2 a.h5 o_none.h5 --mem-per-rank=1M --report=r3.json
    [[ $(report_strategy r3.json | tail -1) == "none fits: the one that needs least: "* ]] ||
        fail "$(cat r3.json)"
    check_all
}

@test "with more ranks than cores the default takes the same order, and its waits yield" {
    # 128x128x64: alltoall's second array makes it the largest.
    oracle make a.h5 128x128x64:complex128
    local totals limit
    # Two ranks on a node of one core; the same with two cores is not crowded.
    export FFTSHARD_NODE_CPUS=1
    totals=$(dry_totals a.h5)
    assert_equal "$(sed -n 2p <<<"$totals")" alltoall
    [[ $(sed -n 3p <<<"$totals") == "the fastest by expected speed that fits: needs "* ]] ||
        fail "dry run's reason: $totals"
    fs 2 a.h5 o_crowded.h5 --report=r.json
    assert_equal "$(report_strategy r.json | head -1)" "alltoall default"
    # A rank waiting for messages gives its core up (every strategy waits so
    # in test_exchange's crowded cases); with a core each it spins.
    assert_equal "$(report_waits r.json)" yield
    [[ $(report_strategy r.json | tail -1) == "the fastest by expected speed that fits: needs "* ]] ||
        fail "run's reason: $(report_strategy r.json)"
    # alltoall too large (its send buffer): xorswap, the next in the order.
    limit=$(python_serial -c 'import sys
t = dict(kv.split("=") for kv in sys.argv[1:])
assert int(t["xorswap"]) <= int(t["pairwise"]) < int(t["alltoall"]), t
print(int(t["pairwise"]))' $(head -1 <<<"$totals"))
    fs 2 a.h5 o_crowded_limited.h5 --mem-per-rank="$limit" --report=r2.json
    assert_equal "$(report_strategy r2.json | head -1)" "xorswap default"
    FFTSHARD_NODE_CPUS=2 fs 2 a.h5 o_room.h5 --report=r3.json
    assert_equal "$(report_strategy r3.json | head -1)" "alltoall default"
    assert_equal "$(report_waits r3.json)" spin
    check_all
}

@test "the default takes the fastest by auto's times in --wisdom, when it fits" {
    oracle make a.h5 128x64x64:complex128
    fs 2 a.h5 o_auto.h5 --transpose=auto --wisdom=w.txt
    # Make random, last in the expected order, the fastest on record.
    sed -i -E 's|^(transpose [^ ]*/timed=random random) [0-9.]+$|\1 0.000001|' w.txt
    grep -q 'timed=random random 0.000001$' w.txt || fail "$(cat w.txt)"
    fs 2 a.h5 o_default.h5 --wisdom=w.txt --report=r.json
    assert_equal "$(report_strategy r.json | head -1)" "random default"
    [[ $(report_strategy r.json | tail -1) == "the fastest that fits by auto's times in the wisdom file (0.0000 s): "* ]] ||
        fail "$(report_strategy r.json)"
    run --separate-stderr fftshard 2 --dry-run --wisdom=w.txt a.h5
    assert_success
    [[ $output == *"strategy: random (default: the fastest that fits by auto's times"* ]] || fail "$output"
    # When random does not fit, the fastest timed one that does: only
    # xorswap fits its own figure.
    local limit
    limit=$(fftshard 2 --dry-run --report=- -q a.h5 | python_serial -c 'import json, sys
print(json.load(sys.stdin)["strategies"]["xorswap"]["total_bytes"])')
    fs 2 a.h5 o_limited.h5 --wisdom=w.txt --mem-per-rank="$limit" --report=r2.json
    assert_equal "$(report_strategy r2.json | head -1)" "xorswap default"
    [[ $(report_strategy r2.json | tail -1) == "the fastest that fits by auto's times in the wisdom file ("* ]] ||
        fail "$(report_strategy r2.json)"
    check_all
}
