#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# A spectrum that remembers how it was made: a plain --inverse (--inverse
# --real after --real) of a forward result takes the axes in their order,
# the norm, the halved axis and last_size from its attributes and gives the
# input back; an option that contradicts them is honoured with a warning;
# the input dataset's own attributes are carried to the output. Checked with
# numpy and h5py (tests/oracle.py and inline Python).

load helpers

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    CASES=()
}

# same A B: B's dataset /data equals A's within 1e-12 of A's largest
# magnitude (double precision), with A's shape.
same() {
    run python_serial -c 'import h5py, numpy as np, sys
a = h5py.File(sys.argv[1], "r")["data"][()]; b = h5py.File(sys.argv[2], "r")["data"][()]
err = np.abs(a - b).max() / np.abs(a).max() if b.shape == a.shape else float("inf")
print("shape %s, error %.3g" % (b.shape, err)); sys.exit(0 if err <= 1e-12 else 1)' "$1" "$2"
    assert_success
}

# The driver of the random round trips: `make SEED N` writes N inputs c<i>.h5
# and prints one case per line, "i ranks_forward ranks_inverse options...";
# `check SEED CASES_FILE` compares every b<i>.h5 with c<i>.h5.
write_driver() {
    cat >driver.py <<'EOF'
import sys
import h5py
import numpy as np

def make(seed, n):
    rng = np.random.default_rng(seed)
    for i in range(n):
        ndim = int(rng.integers(2, 5))
        shape = [int(rng.integers(1, 8 if ndim < 4 else 6)) for _ in range(ndim)]
        real = rng.random() < 0.4
        opts = []
        if real:
            opts.append("--real")
        if rng.random() < 0.8:
            # A random subset in random order; batch axes are the others.
            k = int(rng.integers(1, ndim + 1))
            axes = [int(a) for a in rng.permutation(ndim)[:k]]
            axes = [a - ndim if rng.random() < 0.5 else a for a in axes]
            opts.append("--axes=" + ",".join(map(str, axes)))
        norm = rng.choice(["", "backward", "ortho", "forward"])
        if norm:
            opts.append("--norm=" + norm)
        x = rng.uniform(-1, 1, shape)
        if not real and rng.random() < 0.5:
            x = x + 1j * rng.uniform(-1, 1, shape)
        with h5py.File("c%d.h5" % i, "w") as f:
            f["data"] = x
        print(i, int(rng.integers(1, 5)), int(rng.integers(1, 5)), " ".join(opts))

def check(seed, cases):
    failed = 0
    for line in open(cases):
        i = line.split()[0]
        x = h5py.File("c%s.h5" % i, "r")["data"][()]
        b = h5py.File("b%s.h5" % i, "r")["data"][()]
        err = np.abs(b - x).max() / np.abs(x).max() if b.shape == x.shape else float("inf")
        if not err <= 1e-12:
            failed += 1
            print("seed %d case %s: shape %s of %s, error %.3g" % (seed, line.strip(), b.shape,
                                                                 x.shape, err))
    print("%d of %d round trips failed" % (failed, len(open(cases).readlines())))
    sys.exit(1 if failed else 0)

if sys.argv[1] == "make":
    make(int(sys.argv[2]), int(sys.argv[3]))
else:
    check(int(sys.argv[2]), sys.argv[3])
EOF
}

@test "random round trips: forward with --axes, --norm, --real, batch axes; a plain --inverse gives the input back" {
    # FFTSHARD_INVERSE_SEED=N replays a failure.
    # FFTSHARD_INVERSE_COUNT=N draws N combinations (default 16).
    local seed=${FFTSHARD_INVERSE_SEED:-$(((RANDOM << 15) | RANDOM))} n=${FFTSHARD_INVERSE_COUNT:-16}
    echo "# seed $seed (replay: FFTSHARD_INVERSE_SEED=$seed)" >&3
    write_driver
    python_serial driver.py make "$seed" "$n" >cases.txt
    local i npf npi opts inverse
    # The cases on descriptor 4: mpiexec reads standard input.
    while read -r -u 4 i npf npi opts; do
        # shellcheck disable=SC2086 # the options are words
        run fftshard "$npf" --quiet $opts "c$i.h5" "f$i.h5"
        [ "$status" -eq 0 ] || fail "seed $seed: forward of case '$i $npf $npi $opts': $output"
        local c="in=c$i.h5 out=f$i.h5 ranks=$npf" opt
        for opt in $opts; do
            case $opt in
            --real) c+=" real" ;;
            --axes=*) c+=" axes=${opt#--axes=}" ;;
            --norm=*) c+=" norm=${opt#--norm=}" ;;
            esac
        done
        CASES+=("$c")
        inverse=--inverse
        [[ " $opts " == *" --real "* ]] && inverse="--inverse --real"
        # shellcheck disable=SC2086
        run fftshard "$npi" --quiet $inverse "f$i.h5" "b$i.h5"
        [ "$status" -eq 0 ] || fail "seed $seed: inverse of case '$i $npf $npi $opts': $output"
    done 4<cases.txt
    # The forward results against numpy, with their attributes (the axes as given)...
    run oracle check "${CASES[@]}"
    [ "$status" -eq 0 ] || fail "seed $seed: $output"
    # ...and every round trip.
    run python_serial driver.py check "$seed" cases.txt
    [ "$status" -eq 0 ] || fail "$output"
    assert_output --partial "0 of $n round trips failed"
}

@test "after --axes=-2,-1 a plain --inverse transforms those axes only" {
    oracle make a.h5 6x8x10:complex128
    fftshard 2 --quiet --axes=-2,-1 a.h5 f.h5
    run --separate-stderr fftshard 2 --inverse f.h5 b.h5
    assert_success
    [[ ${stderr_lines[0]} == *"inverse axes 1,2, 2 ranks"* ]] || fail "${stderr_lines[0]}"
    same a.h5 b.h5
}

@test "after --norm=ortho a plain --inverse scales by 1/sqrt(N)" {
    oracle make a.h5 6x5x4:complex128
    fftshard 3 --quiet --norm=ortho a.h5 f.h5
    fftshard 2 --quiet --inverse f.h5 b.h5
    same a.h5 b.h5
    run python_serial -c 'import h5py; print(h5py.File("b.h5")["data"].attrs["norm"])'
    assert_output ortho
}

@test "after --real --axes=2,0 a plain --inverse --real restores axis 0 with its odd length" {
    oracle make a.h5 7x4x6:float64
    fftshard 2 --quiet --real --axes=2,0 a.h5 f.h5
    run python_serial -c 'import h5py; a = h5py.File("f.h5")["data"].attrs
print(a["axes"].tolist(), a["real_axis"], a["last_size"], h5py.File("f.h5")["data"].shape)'
    assert_output "[2, 0] 0 7 (4, 4, 6)"
    fftshard 3 --quiet --inverse --real f.h5 b.h5
    same a.h5 b.h5
    # the halved axis need not be given: axis 0 from real_axis, the rest in order
    fftshard 4 --quiet --real --axes=-1,0,1 a.h5 g.h5
    fftshard 1 --quiet --inverse --real g.h5 c.h5
    same a.h5 c.h5
}

@test "an option that contradicts the record is honoured, with a warning unless --quiet" {
    oracle make a.h5 6x5x4:complex128
    fftshard 2 --quiet --axes=1 --norm=ortho a.h5 f.h5
    run --separate-stderr fftshard 2 --inverse --norm=backward --axes=0,1 f.h5 b.h5
    assert_success
    [[ $stderr == *"fftshard: warning: --axes: transforming axes 0,1 as asked, but the forward run transformed axes 1"* ]] ||
        fail "no --axes warning: $stderr"
    [[ $stderr == *"fftshard: warning: --norm=backward: scaling as asked, but the forward run used --norm=ortho"* ]] ||
        fail "no --norm warning: $stderr"
    # one line each, from one rank, before the summary
    assert_equal "$(grep -c 'warning' <<<"$stderr")" 2
    [[ ${stderr_lines[2]} == "fftshard: 6x5x4 complex128, c2c double inverse axes 0,1,"* ]] ||
        fail "${stderr_lines[2]}"
    CASES+=("in=f.h5 out=b.h5 ranks=2 inverse axes=0,1 norm=backward")
    # --verbose shows them too; --quiet silences them
    run --separate-stderr fftshard 2 --verbose --inverse --norm=forward f.h5 v.h5
    assert_success
    [[ $stderr == *"fftshard: warning: --norm=forward: scaling as asked"* ]] || fail "$stderr"
    [[ $stderr == *"fftshard: --inverse: axes 1, as the forward run recorded on the input"* ]] ||
        fail "$stderr"
    CASES+=("in=f.h5 out=v.h5 ranks=2 inverse axes=1 norm=forward")
    run --separate-stderr fftshard 2 --quiet --inverse --norm=backward f.h5 q.h5
    assert_success
    assert_equal "$stderr" ""
    check_all
}

@test "--real and the record disagree: warned, and --last-size against last_size" {
    oracle make a.h5 6x5:float64 -- b.h5 6x2:float64
    fftshard 2 --quiet --real a.h5 r.h5
    fftshard 2 --quiet b.h5 c.h5
    run --separate-stderr fftshard 2 --inverse r.h5 b1.h5
    assert_success
    [[ $stderr == *"fftshard: warning: --inverse: the input is the half spectrum of a --real forward run"* ]] ||
        fail "$stderr"
    run --separate-stderr fftshard 2 --inverse --real c.h5 b2.h5
    assert_success
    [[ ${stderr_lines[0]} == "fftshard: warning: --inverse --real: the forward run was not --real (transform c2c)"* ]] ||
        fail "$stderr"
    run --separate-stderr fftshard 2 --inverse --real --last-size=4 r.h5 b3.h5
    assert_success
    [[ $stderr == *"fftshard: warning: --last-size=4: as asked, but the forward run recorded last_size 5"* ]] ||
        fail "$stderr"
    # a run refused says so alone
    run --separate-stderr fftshard 2 --inverse --real --last-size=9 r.h5 b5.h5
    assert_error "$EXIT_USAGE" "--last-size 9: does not fit axis 1"
    # what the record says, without warnings
    run --separate-stderr fftshard 2 --inverse --real r.h5 b4.h5
    assert_success
    [[ $stderr != *warning* ]] || fail "$stderr"
    same a.h5 b4.h5
}

@test "--verbose names what the inverse took from the record" {
    oracle make a.h5 5x6x4:float64
    fftshard 2 --quiet --real --axes=2,0 --norm=forward a.h5 f.h5
    run --separate-stderr fftshard 2 --verbose --inverse --real f.h5 b.h5
    assert_success
    [[ $stderr == *"fftshard: --inverse: axes 2,0, as the forward run recorded on the input"* ]] ||
        fail "$stderr"
    [[ $stderr == *"fftshard: --inverse: --norm=forward, as the forward run recorded on the input"* ]] ||
        fail "$stderr"
    [[ $stderr != *warning* ]] || fail "$stderr"
    same a.h5 b.h5
}

@test "files of earlier versions (axes sorted, no real_axis): the axes and the last of them as the halved axis" {
    oracle make a.h5 6x5x7:float64
    fftshard 2 --quiet --axes=-1,0 a.h5 c.h5
    fftshard 2 --quiet --real --axes=0,2 a.h5 r.h5
    fftshard 2 --quiet --real --axes=2,0 a.h5 s.h5
    # as fftshard 0.1.0 wrote them
    python_serial -c 'import h5py, numpy as np
for name in ("c.h5", "r.h5", "s.h5"):
    with h5py.File(name, "r+") as f:
        d = f["data"]
        d.attrs["axes"] = np.sort(d.attrs["axes"])
        if "real_axis" in d.attrs:
            del d.attrs["real_axis"]'
    fftshard 3 --quiet --inverse c.h5 cb.h5
    same a.h5 cb.h5
    fftshard 3 --quiet --inverse --real r.h5 rb.h5
    same a.h5 rb.h5
    # the halved axis was not the last: given again, it is honoured
    fftshard 3 --quiet --inverse --real --axes=2,0 s.h5 sb.h5
    same a.h5 sb.h5
}

# bats test_tags=sanitized
@test "recorded attributes fftshard cannot have written: exit 3 naming FILE:/DATASET and the attribute, unless an option replaces it" {
    oracle make a.h5 6x8:float64
    fftshard 1 --quiet a.h5 f.h5
    fftshard 1 --quiet --real a.h5 r.h5
    # FILE ATTRIBUTE PYTHON-VALUE OPTION-THAT-REPLACES-IT MESSAGE-FRAGMENT
    local cases=(
        "f.h5|axes|[0, 5]|--axes=0,1|names axis 5 of a 2-D array"
        "f.h5|axes|[1, 1]|--axes=0,1|names axis 1 twice"
        "f.h5|axes|np.zeros(0, np.int64)|--axes=0,1|the axes attribute is empty"
        "f.h5|axes|list(range(9))|--axes=0,1|holds 9 values"
        "f.h5|axes|[2**62]|--axes=0,1|names axis 4611686018427387904"
        "f.h5|axes|'0,1'|--axes=0,1|the axes attribute is a string"
        "f.h5|norm|'sideways'|--norm=backward|the norm attribute is 'sideways'"
        "f.h5|norm|3|--norm=backward|the norm attribute is a number"
        "f.h5|norm|''|--norm=backward|the norm attribute is ''"
        "r.h5|real_axis|2|--axes=0,1|the real_axis attribute 2"
        "r.h5|last_size|0|--last-size=8|the last_size attribute is 0"
        "r.h5|last_size|-5|--last-size=8|the last_size attribute is -5"
    )
    local c file name value option fragment real n=0
    for c in "${cases[@]}"; do
        IFS='|' read -r file name value option fragment <<<"$c"
        n=$((n + 1))
        cp "$file" "e$n.h5"
        python_serial -c "import h5py, numpy as np
with h5py.File('e$n.h5', 'r+') as f:
    f['data'].attrs['$name'] = $value"
        real=
        [ "$file" = r.h5 ] && real=--real
        run --separate-stderr fftshard $((n % 2 + 1)) --inverse $real "e$n.h5" "b$n.h5"
        assert_error "$EXIT_INPUT" "fftshard: error: e$n.h5:/data: --inverse: " "$fragment" \
            "$name attribute" "give ${option%%=*})"
        [ ! -e "b$n.h5" ] || fail "$c: an output was written"
        assert_no_temporaries
        # the option in its place: the round trip, the attribute unused
        run --separate-stderr fftshard 1 --quiet --inverse $real "$option" "e$n.h5" "b$n.h5"
        [ "$status" -eq 0 ] || fail "$c, $option: $stderr"
        same a.h5 "b$n.h5"
    done
    # a sliced input is named with its slice, and the dry run names it alike
    run --separate-stderr fftshard 2 --inverse "f.h5:/data[2, :]" b.h5
    assert_error "$EXIT_INPUT" "fftshard: error: f.h5:/data[2, :]: --inverse: the slice drops axis 0, which the forward run transformed" "give --axes)"
    run --separate-stderr fftshard 1 --dry-run --inverse e7.h5
    assert_error "$EXIT_INPUT" "fftshard: error: e7.h5:/data: --inverse: the norm attribute is 'sideways'"
}

# The attributes h5py writes, of every kind fftshard copies, and one of
# fftshard's names.
write_attributes() {
    python_serial -c 'import h5py, numpy as np
rng = np.random.default_rng(5)
with h5py.File("a.h5", "w") as f:
    d = f.create_dataset("data", data=rng.uniform(-1, 1, (6, 4, 5)))
    d.attrs["time"] = 1.5
    d.attrs["step"] = np.int32(7)
    d.attrs["box"] = np.array([1.0, 2.0, 3.5], dtype="<f4")
    d.attrs["grid"] = np.arange(6, dtype=">i2").reshape(2, 3)
    d.attrs["units"] = "m/s"
    d.attrs.create("ascii", "abc", dtype=h5py.string_dtype("ascii"))
    d.attrs["label"] = np.bytes_(b"run-12")
    d.attrs["names"] = np.array(["u", "vv", "www"], dtype=h5py.string_dtype())
    d.attrs["fixed_names"] = np.array([b"x", b"yy"], dtype="S2")
    d.attrs["flag"] = np.bool_(True)
    d.attrs["c"] = np.complex128(1 + 2j)
    d.attrs["pair"] = np.array([(1, 2.5)], dtype=[("n", "<i8"), ("v", "<f8")])
    d.attrs["empty"] = h5py.Empty("f8")
    d.attrs["norm"] = "not fftshard'"'"'s"'
}

# same_attributes IN OUT...: every attribute of IN's /data but "norm" on each
# OUT's /data with the same HDF5 type, shape and value; "norm" is fftshard's.
same_attributes() {
    run python_serial -c 'import h5py, numpy as np, sys
src = h5py.File(sys.argv[1], "r")["data"]
bad = []
for name in sys.argv[2:]:
    dst = h5py.File(name, "r")["data"]
    for k in src.attrs:
        if k == "norm":
            if dst.attrs["norm"] not in ("backward", "ortho", "forward"):
                bad.append("%s: norm %r" % (name, dst.attrs["norm"]))
            continue
        if k not in dst.attrs:
            bad.append("%s: %s missing" % (name, k))
            continue
        a, b = src.attrs.get_id(k), dst.attrs.get_id(k)
        va, vb = src.attrs[k], dst.attrs[k]
        if a.get_type() != b.get_type() or a.shape != b.shape:
            bad.append("%s: %s type %s shape %s, expected %s %s" % (name, k, b.dtype, b.shape, a.dtype, a.shape))
        elif isinstance(va, h5py.Empty):
            if not isinstance(vb, h5py.Empty):
                bad.append("%s: %s = %r" % (name, k, vb))
        elif not np.array_equal(np.asarray(va), np.asarray(vb)):
            bad.append("%s: %s = %r, expected %r" % (name, k, vb, va))
print("\n".join(bad) or "same")' "$@"
    assert_output same
}

@test "the input dataset's attributes are copied to the output, every type h5py writes, and back by the inverse" {
    write_attributes
    run --separate-stderr fftshard 4 --verbose --real a.h5 f.h5
    assert_success
    [[ $stderr == *"fftshard: a.h5:/data: not copied, the result has its own: norm"* ]] || fail "$stderr"
    [[ $stderr != *warning* ]] || fail "$stderr"
    fftshard 3 --quiet --inverse --real f.h5 b.h5
    same_attributes a.h5 f.h5 b.h5
    same a.h5 b.h5
    # fftshard's own hold: the result's norm, and an input's fftshard names are not copied
    run python_serial -c 'import h5py; print(h5py.File("f.h5")["data"].attrs["norm"], h5py.File("b.h5")["data"].attrs["input"])'
    assert_output "backward f.h5:/data"
}

@test "the attributes go onto every shard file and the master of --shard-output, and come from the first --shards input" {
    write_attributes
    fftshard 4 --quiet --shard-output=2 a.h5 s.h5
    same_attributes a.h5 s.h5 s.h5.shards-*/s.0000.h5 s.h5.shards-*/s.0001.h5
    oracle shard a.h5 'p%d.h5' 2,4
    python_serial -c 'import h5py
for i, t in enumerate((2.5, 9.0)):
    with h5py.File("p%d.h5" % i, "r+") as f:
        f["data"].attrs["time"] = t'
    fftshard 2 --quiet --shards 'p%d.h5' t.h5
    run python_serial -c 'import h5py; print(h5py.File("t.h5")["data"].attrs["time"])'
    assert_output 2.5
}

@test "attributes that cannot be copied are left out with a warning, not with --quiet" {
    python_serial -c 'import h5py, numpy as np
with h5py.File("a.h5", "w", libver="latest") as f:
    d = f.create_dataset("data", data=np.ones((4, 6)))
    d.attrs["time"] = 3.0
    d.attrs["ref"] = d.ref
    d.attrs.create("seq", [np.array([1, 2], "i4"), np.array([3], "i4")], dtype=h5py.vlen_dtype("i4"))
    d.attrs["big"] = np.zeros(9000)'
    run --separate-stderr fftshard 2 a.h5 o.h5
    assert_success
    [[ $stderr == *"fftshard: warning: a.h5:/data: attribute ref not copied to the result: a reference into the input file"* ]] ||
        fail "$stderr"
    [[ $stderr == *"fftshard: warning: a.h5:/data: attribute seq not copied to the result: a variable-length sequence"* ]] ||
        fail "$stderr"
    [[ $stderr == *"fftshard: warning: a.h5:/data: attribute big not copied to the result: 72000 bytes"* ]] ||
        fail "$stderr"
    run python_serial -c 'import h5py; print(sorted(k for k in h5py.File("o.h5")["data"].attrs if k in ("time", "ref", "seq", "big")))'
    assert_output "['time']"
    run --separate-stderr fftshard 2 --quiet a.h5 q.h5
    assert_success
    assert_equal "$stderr" ""
}
