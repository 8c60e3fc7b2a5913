#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Reading and writing the data: real, integer and single-precision input
# without --real (read at the file's speed through a staging buffer and
# spread into complex memory), real output, reads in small pieces, progress
# lines while a read runs (FFTSHARD_SLOW_READ slows it down), and the report
# in the units of the values read and written, reads and writes overlapped
# with the FFTs (the helper thread of rawio.h), input holding NaN or Inf
# refused with numpy's count and first index. Values against numpy
# (tests/oracle.py).

load helpers

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    CASES=()
    job=
}

# A failed test must not leave its background job behind.
teardown() {
    kill_job
}

# json FILE EXPR: a Python expression on the parsed report `r`.
json() {
    python_serial -c "import json, sys; r = json.load(open(sys.argv[1])); print($2)" "$1"
}

# read_s NP FILE [OPTIONS...]: the read phase's seconds (slowest rank), the
# least of two runs.
read_s() {
    local np=$1 in=$2 best= s
    shift 2
    for _ in 1 2; do
        fftshard "$np" --quiet --force --report=r.json "$@" "$in" o.h5 || return 1
        s=$(json r.json 'r["phases"]["read"]["max"]')
        best=$(python_serial -c 'import sys; print(min(float(a) for a in sys.argv[1:] if a))' "$s" $best)
    done
    echo "$best"
}

# bats test_tags=sanitized
@test "real input without --real: float64 and float32, 1 to 4 ranks, 1-D to 4-D, against numpy" {
    oracle make a.h5 13x7x6:float64 -- b.h5 9x10:float32 -- c.h5 1000:float64 -- d.h5 5x4x3x6:float64
    fs 1 a.h5 a1.h5
    fs 3 a.h5 a3.h5 --axes=1,2
    fs 2 b.h5 b2.h5
    fs 3 b.h5 b3.h5 --precision=double
    fs 3 c.h5 c3.h5
    fs 4 d.h5 d4.h5 --axes=0,1,3
    check_all
}

@test "integer input (int16, int32, uint8, int64): converted in the read, 1 to 4 ranks, against numpy" {
    oracle make i16.h5 11x6x5:int16 -- i32.h5 7x9:int32 -- u8.h5 6x5x8:uint8 -- i64.h5 10x4x3:int64
    fs 3 i16.h5 i16_3.h5
    fs 1 i32.h5 i32_1.h5
    fs 4 u8.h5 u8_4.h5
    fs 2 u8.h5 u8_r.h5 --real
    fs 3 i64.h5 i64_3.h5
    fs 4 i64.h5 i64_r.h5 --real --axes=0,1
    check_all
}

@test "a uint16 image filtered with --real --apply=gaussian:2 is float32, as numpy's filter to single precision" {
    python_serial - <<'PY'
import h5py, numpy as np
img = np.random.default_rng(3).integers(0, 65536, (45, 64)).astype(np.uint16)
with h5py.File("img.h5", "w") as f:
    f["img"] = img
PY
    for np in 1 3; do
        fftshard "$np" -q --real --apply=gaussian:2 img.h5 "f$np.h5"
    done
    fftshard 4 -q --transpose=pairwise --real --apply=gaussian:2 img.h5 fp.h5
    fftshard 2 -q --precision=double --real --apply=gaussian:2 img.h5 f64.h5
    python_serial - <<'PY'
import h5py, numpy as np
x = h5py.File("img.h5", "r")["img"][()].astype(np.float64)
# fftshard(1), OPERATORS: k in radians per grid spacing, H = exp(-k^2 R^2 / 2)
ks = [2 * np.pi * np.fft.fftfreq(n, 1 / n) / n for n in x.shape]
k2 = ks[0][:, None] ** 2 + ks[1][None, :] ** 2
want = np.fft.ifftn(np.exp(-k2 * 2.0**2 / 2) * np.fft.fftn(x)).real
for name, dtype, tol in (("f1", np.float32, 1e-6), ("f3", np.float32, 1e-6),
                         ("fp", np.float32, 1e-6), ("f64", np.float64, 1e-12)):
    y = h5py.File(name + ".h5", "r")["img"]
    assert y.dtype == dtype, (name, y.dtype)
    err = np.abs(y[()] - want).max() / np.abs(want).max()
    assert err < tol, (name, err)
    print(name, y.dtype, "error", err)
PY
}

@test "reads in pieces of a few elements: every axis cut, 1-D folded views, staged and not" {
    oracle make a.h5 7x6x5:float64 -- z.h5 7x6x5:complex128 -- c.h5 1001:int32 -- s.h5 9x5:float32
    # 24 bytes: three float64 values, one and a half complex128, per piece
    export FFTSHARD_SLOW_READ=24:0.000001
    fs 3 a.h5 a3.h5
    fs 2 a.h5 ar.h5 --real
    fs 2 z.h5 z2.h5
    fs 3 c.h5 c3.h5
    fs 4 s.h5 s4.h5
    run fftshard 1 --quiet --check a.h5 ac.h5
    assert_success
    unset FFTSHARD_SLOW_READ
    check_all
}

@test "real output: --inverse --real with the real axis last (padded rows) and not (strided), 1 to 4 ranks" {
    oracle make z.h5 9x8x5:complex128 -- y.h5 10x7x6:complex128
    fs 1 z.h5 z1.h5 --real --inverse
    fs 3 z.h5 z3.h5 --real --inverse --last-size=9
    fs 4 y.h5 y4.h5 --real --inverse --axes=1,0 --last-size=19
    check_all
}

@test "real output larger than the staging buffer: 5 MiB of float64 on 1 and 2 ranks" {
    # 96x96x72 reals written from every other slot of complex memory: more
    # than the 4 MiB staging buffer per rank, so the write goes in pieces.
    oracle make y.h5 96x49x72:complex128
    fs 1 y.h5 y1.h5 --real --inverse --axes=0,1
    fs 2 y.h5 y2.h5 --real --inverse --axes=0,1
    check_all
}

@test "float64 input reads at most 2x as long as complex128 input of the same shape" {
    # Read into every other slot of complex memory by HDF5, real input took
    # 30 to 100 times as long as complex input of twice the bytes.
    mkdata 2 -q -t float64 128x128x128 r.h5
    mkdata 2 -q -t complex128 128x128x128 z.h5
    local real= complex= turn
    # in alternate turns, the best of each: a busy machine slows both alike
    for turn in 1 2 3; do
        real="$real $(read_s 2 r.h5)"
        complex="$complex $(read_s 2 z.h5)"
    done
    real=$(python_serial -c 'import sys; print(min(map(float, sys.argv[1:])))' $real)
    complex=$(python_serial -c 'import sys; print(min(map(float, sys.argv[1:])))' $complex)
    python_serial -c 'import sys
real, complex = float(sys.argv[1]), float(sys.argv[2])
print(f"float64 read {real:.3f} s, complex128 read {complex:.3f} s")
sys.exit(real > 2 * complex + 0.05)' "$real" "$complex" ||
        fail "float64 read $real s against complex128 $complex s"
}

@test "--progress: lines during a slow read, with the time left, before the read ends" {
    oracle make z.h5 32x32x32:complex128
    # 256 KiB per rank in pieces of 32 KiB, 1.3 s each: a read of over 10 s
    local lines
    lines=$(FFTSHARD_SLOW_READ=32768:1.3 fftshard 2 --progress --force z.h5 o.h5 2>&1 >/dev/null |
        while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done)
    python_serial -c 'import re, sys
lines = [l.split(" ", 1) for l in sys.argv[1].splitlines()]
reads = [(float(t), l) for t, l in lines if l.startswith("fftshard: progress: read ")]
final = [t for t, l in reads if " 100.0% " in l]
during = [(t, l) for t, l in reads if " 100.0% " not in l]
assert len(final) == 1, f"one 100% line: {reads}"
assert len(during) >= 5, f"lines during the read: {reads}"
for t, l in during:
    assert re.fullmatch(r"fftshard: progress: read +[0-9.]+% +[0-9.]+ GB/s +[0-9.]+ s, [0-9.]+ s left", l), l
times = [t for t, _ in during] + final
# printed as the read went, not all at its end, and never 3 s apart
assert final[0] - times[0] >= 6, f"the first line came {final[0] - times[0]:.1f} s before the end"
assert max(b - a for a, b in zip(times, times[1:])) < 3, f"gaps: {times}"
pcts = [float(re.search(r"([0-9.]+)%", l).group(1)) for _, l in during]
assert pcts == sorted(pcts) and pcts[0] < 50, pcts' "$lines" || fail "$lines"
}

# bats test_tags=sanitized
@test "INPUT truncated, rewritten or replaced while it is read: exit 1 'INPUT changed while it was read', nothing written" {
    oracle make z.h5 32x32x32:complex128 -- y.h5 32x32x32:complex128
    local size change
    size=$(stat -c %s z.h5)
    for change in truncate rewrite replace; do
        cp z.h5 in.h5
        rm -f run.err
        # 256 KiB per rank in pieces of 16 KiB, 0.6 s each: the change comes
        # once the read has begun (its first progress line), seconds before
        # its end
        FFTSHARD_SLOW_READ=16384:0.6 "$MPIEXEC" -n 2 "$FFTSHARD" --progress in.h5 out.h5 \
            >/dev/null 2>run.err &
        job=$!
        await_pause run.err "^fftshard: progress: read +[0-9.]+% " "the read"
        case $change in
        truncate) truncate -s $((size / 2)) in.h5 ;;
        rewrite) printf 'x' | dd of=in.h5 bs=1 seek=$((size - 1)) conv=notrunc status=none ;;
        replace) cp y.h5 in.new && mv in.new in.h5 ;;
        esac
        end_job
        assert_equal "$job_status" "$EXIT_RUNTIME"
        [ "$(grep -c '^fftshard: error' run.err)" -eq 1 ] || fail "$change: not one message: $(cat run.err)"
        grep -q "^fftshard: error: in.h5: INPUT changed while it was read (.*); the result was not kept$" run.err ||
            fail "$change: $(cat run.err)"
        [ ! -e out.h5 ] || fail "$change: out.h5 written"
        assert_no_temporaries
    done
    # the same read undisturbed
    FFTSHARD_SLOW_READ=32768:0.01 fs 2 z.h5 out.h5
    check_all
}

@test "--real: the report's hyperslabs and elements in the values read and written; --verbose too" {
    oracle make a.h5 64x64x64:float64
    run --separate-stderr fftshard 2 --verbose --report=r.json a.h5 f.h5
    assert_success
    [[ $stderr == *"rank 0 reads 32x64x64 at [0,0,0] (131072 float64 values) and writes 64x32x64 at [0,0,0] (131072 complex128 values)"* ]] ||
        fail "$stderr"
    fftshard 2 --quiet --real --report=f.json a.h5 g.h5
    assert_equal "$(json f.json '[(p["input_count"], p["output_count"]) for p in r["per_rank"]]')" \
        "[([32, 64, 64], [64, 32, 33]), ([32, 64, 64], [64, 32, 33])]"
    assert_equal "$(json f.json '[(p["elements"], p["output_elements"]) for p in r["per_rank"]]')" \
        "[(131072, 67584), (131072, 67584)]"
    assert_equal "$(json f.json 'r["prefix"]["elements"]')" "[131072, 262144]"
    # and back: complex n/2+1 in, n reals out
    run --separate-stderr fftshard 2 --verbose --real --inverse --report=b.json g.h5 h.h5
    assert_success
    assert_equal "$(json b.json '[(p["input_count"], p["output_count"]) for p in r["per_rank"]]')" \
        "[([64, 32, 33], [32, 64, 64]), ([64, 32, 33], [32, 64, 64])]"
    [[ $stderr == *"rank 0 reads 64x32x33 at [0,0,0] (67584 complex128 values) and writes 32x64x64 at [0,0,0] (131072 float64 values)"* ]] ||
        fail "$stderr"
    # a 1-D real transform in four steps: only the half spectrum is written
    oracle make s.h5 1000:float64
    fftshard 3 --quiet --real --report=s.json s.h5 t.h5
    assert_equal "$(json s.json 'sum(p["output_elements"] for p in r["per_rank"])')" "501"
}

# overlapped REPORT: which of the read and the write the helper thread did
# while the FFTs ran ("read write", "read -", "- write" or "- -").
overlapped() {
    json "$1" '" ".join(("read" if r["io_overlap"]["read_seconds"] > 0 else "-",
                         "write" if r["io_overlap"]["write_seconds"] > 0 else "-"))'
}

@test "read and write overlapped with the FFTs: contiguous data in pieces, exact; the rest through HDF5" {
    # 18.75 MiB: on 1 and 3 ranks every rank's part is several pieces of
    # about 4 MiB, the last one shorter
    oracle make a.h5 100x128x96:complex128 -- be.h5 100x128x96:complex128:be -- \
        z.h5 20x16x8:complex128:gzip -- s.h5 12x10x8:complex128
    FFTSHARD_IO_THREAD=off fs 3 a.h5 aoff.h5 --report=aoff.json
    # by default only where every rank has a core free for its thread
    export FFTSHARD_IO_THREAD=on
    fs 3 a.h5 a3.h5 --report=a3.json
    fs 1 a.h5 a1.h5 --report=a1.json
    # --check finds the result in memory after the pieces were written
    fs 3 a.h5 ac.h5 --check --report=ac.json
    # big-endian input goes through HDF5; the one stage then runs as the
    # write's pieces, axis 0 transformed whole first
    fs 1 be.h5 be1.h5 --report=be1.json
    fs 2 z.h5 z2.h5 --chunks=4x4x4 --report=z2.json
    fs 4 s.h5 s4.h5 --decomp=pencil --report=s4.json
    check_all
    run overlapped aoff.json
    assert_output "- -"
    run overlapped a3.json
    assert_output "read write"
    # one stage: its FFTs all ran on the pieces read
    run overlapped a1.json
    assert_output "read -"
    run overlapped ac.json
    assert_output "read write"
    run overlapped be1.json
    assert_output "- write"
    run overlapped z2.json
    assert_output "- -"
    run overlapped s4.json
    assert_output "read write"
}

# not_finite FILE:DATASET: the refusal fftshard owes that dataset, from
# numpy: the count of its values that are not finite and the first of them
# in np.argwhere's order (a complex value counts once).
not_finite() {
    python_serial - "$1" <<'PY'
import sys
import h5py, numpy as np
name, path = sys.argv[1].split(":")
with h5py.File(name) as f:
    a = f[path][()]
bad = np.argwhere(~np.isfinite(a))
at = ", ".join(str(i) for i in bad[0])
if len(bad) == 1:
    print(f"{sys.argv[1]}: 1 value is not finite (NaN or Inf), at [{at}]; "
          "give --allow-nonfinite to transform it anyway")
else:
    print(f"{sys.argv[1]}: {len(bad)} values are not finite (NaN or Inf), the first at [{at}]; "
          "give --allow-nonfinite to transform them anyway")
PY
}

# plant FILE SHAPE TYPE INDEX=VALUE...: a dataset /u of random values with
# these set (VALUE nan, inf, -inf, or re,im for complex types).
plant() {
    python_serial - "$@" <<'PY'
import sys
import h5py, numpy as np
name, shape, dtype = sys.argv[1], tuple(int(n) for n in sys.argv[2].split("x")), sys.argv[3]
rng = np.random.default_rng(7)
a = rng.standard_normal(shape).astype(dtype)
if a.dtype.kind == "c":
    a += 1j * rng.standard_normal(shape)
for spec in sys.argv[4:]:
    where, value = spec.split("=")
    parts = [float(v) for v in value.split(",")]
    a[tuple(int(i) for i in where.split(","))] = complex(*parts) if len(parts) == 2 else parts[0]
with h5py.File(name, "w") as f:
    f["u"] = a
PY
}

# bats test_tags=sanitized
@test "NaN or Inf in the input: exit 3 with numpy's count and first index, nothing written; --allow-nonfinite transforms it" {
    # 2x5x4 on 3 ranks: a rank owns nothing
    plant f32.h5 2x5x4 float32 1,0,2=nan 0,4,1=inf 1,4,3=-inf
    plant f64.h5 2x5x4 float64 1,1,1=-inf
    # an infinite imaginary part; both parts NaN (one value)
    plant c128.h5 2x5x4 complex128 1,2,0=1,inf 0,0,3=nan,nan 1,4,3=-inf,0
    # 1-D on 2 and 3 ranks: read through the four-step's folded view
    plant line.h5 60 float64 50=inf 37=nan
    local f n want
    for f in f32 f64 c128 line; do
        want=$(not_finite "$f.h5:/u")
        for n in 1 2 3; do
            run --separate-stderr fftshard "$n" "$f.h5" out.h5
            assert_error "$EXIT_INPUT"
            assert_equal "${stderr_lines[0]}" "fftshard: error: $want"
            [ ! -e out.h5 ] || fail "$f on $n ranks: out.h5 written"
            assert_no_temporaries
        done
        fftshard 2 --quiet --allow-nonfinite "$f.h5" ok.h5
        assert_equal "$(python_serial -c 'import h5py; print(h5py.File("ok.h5")["u"].shape)')" \
            "$(python_serial -c "import h5py; print(h5py.File('$f.h5')['u'].shape)")"
        rm ok.h5
    done
    # an inverse's complex input, whole and as rfftn's half (the c2r reads it)
    plant half.h5 6x4x3 complex128 5,1,2=nan,0 3,0,2=0,-inf
    want=$(not_finite "half.h5:/u")
    for opts in --inverse "--inverse --real"; do
        # shellcheck disable=SC2086
        run --separate-stderr fftshard 3 $opts half.h5 out.h5
        assert_error "$EXIT_INPUT"
        assert_equal "${stderr_lines[0]}" "fftshard: error: $want"
        [ ! -e out.h5 ] || fail "$opts: out.h5 written"
    done
    # an existing OUTPUT stays as it was, byte for byte
    plant good.h5 2x5x4 float64
    fftshard 1 --quiet good.h5 out.h5
    local sum
    sum=$(checksum out.h5)
    run --separate-stderr fftshard 2 --force f64.h5 out.h5
    assert_error "$EXIT_INPUT" "f64.h5:/u: 1 value is not finite (NaN or Inf), at [1, 1, 1]"
    assert_equal "$(checksum out.h5)" "$sum"
    assert_no_temporaries
    # several inputs: each is checked, the one that holds them named
    python_serial -c 'import h5py; h5py.File("good.h5", "a").move("u", "g")'
    run --separate-stderr fftshard 3 good.h5:/g c128.h5:/u both.h5
    assert_error "$EXIT_INPUT"
    assert_equal "${stderr_lines[0]}" "fftshard: error: $(not_finite c128.h5:/u)"
    [ ! -e both.h5 ] || fail "both.h5 written"
    assert_no_temporaries
}

@test "NaN or Inf in the input read overlapped with the FFTs: each piece counted before its FFTs" {
    # 18.75 MiB: several pieces of about 4 MiB on 1 rank; values in later ones
    plant z.h5 100x128x96 complex128 99,127,95=inf,0 80,0,0=0,nan 71,3,5=-inf,1
    local want
    want=$(not_finite z.h5:/u)
    export FFTSHARD_IO_THREAD=on
    run --separate-stderr fftshard 1 z.h5 out.h5
    assert_error "$EXIT_INPUT"
    assert_equal "${stderr_lines[0]}" "fftshard: error: $want"
    [ ! -e out.h5 ] || fail "out.h5 written"
    assert_no_temporaries
    # the same run let through reads in pieces
    fftshard 1 --quiet --allow-nonfinite --report=r.json z.h5 ok.h5
    run overlapped r.json
    assert_output "read -"
    # and through HDF5
    FFTSHARD_IO_THREAD=off run --separate-stderr fftshard 1 z.h5 out.h5
    assert_error "$EXIT_INPUT"
    assert_equal "${stderr_lines[0]}" "fftshard: error: $want"
}
