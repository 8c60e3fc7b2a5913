#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Cosine and sine transforms (--dct, --dst, --r2r): every type and norm,
# mixed per axis with complex and real FFT axes, forward and inverse, odd
# and even sizes and the edge sizes 1 and 2, batch axes, slices, several
# inputs, single precision, complex input, slabs and pencils, every
# strategy, round trips through the recorded attributes, --check, the dry
# run and the report, and the refusals, against scipy.fft
# (tests/r2r_oracle.py: 1e-12 double, 1e-5 single). A quick sample of the
# matrix; tests/r2r-long.bats runs all of it (make check-long).

load helpers
load r2r

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    R2R_CASES=()
}

# bats test_tags=sanitized
@test "every DCT and DST type with every norm equals scipy.fft.dctn and dstn, 1 to 3 ranks" {
    oracle make a.h5 7x6x5:float64
    local i=0 k n
    for k in "${KINDS[@]}"; do
        for n in "${NORMS[@]}"; do
            rr $((i % 3 + 1)) a.h5 "o$i.h5" "$(kind_option "$k")" --norm="$n"
            i=$((i + 1))
        done
    done
    rr_check
}

@test "the inverses equal scipy.fft.idctn and idstn, every type and norm" {
    oracle make a.h5 6x5x4:float64
    local i=0 k n
    for k in "${KINDS[@]}"; do
        for n in "${NORMS[@]}"; do
            rr $((i % 3 + 2)) a.h5 "o$i.h5" --inverse "$(kind_option "$k")" --norm="$n"
            i=$((i + 1))
        done
    done
    rr_check
}

@test "kinds per axis, mixed with complex and real FFT axes, forward and inverse" {
    oracle make a.h5 8x5x6:float64 -- z.h5 5x6x7:complex128 -- h.h5 6x5x4:complex128
    rr 2 a.h5 m1.h5 --r2r=0:dst1,1:dct2,2:dct4
    rr 3 a.h5 m2.h5 --r2r=0:dst1 --real --axes=0,2
    rr 4 a.h5 m3.h5 --r2r=-1:dct3 --real --norm=ortho
    rr 2 z.h5 m4.h5 --r2r=1:dst2,2:dct1 --norm=ortho
    rr 3 z.h5 m5.h5 --r2r=0:dct2 --inverse --norm=forward
    rr 4 h.h5 m6.h5 --r2r=0:dst1 --real --inverse --axes=0,2 --last-size=7
    rr 2 h.h5 m7.h5 --r2r=2:dct2,0:fft --real --inverse --norm=ortho
    rr_check
}

@test "round trips: a plain --inverse takes the kinds, axes and norm recorded and gives the input back" {
    oracle make a.h5 7x6x5:float64 -- z.h5 5x4x6:complex128
    local i=0 k
    for k in "${KINDS[@]}"; do
        rr_round_trip $((i % 4 + 1)) a.h5 "$(kind_option "$k")" --norm="${NORMS[i % 3]}"
        i=$((i + 1))
    done
    rr_round_trip 3 a.h5 --r2r=0:dst1,2:dct2 --real
    rr_round_trip 2 z.h5 --r2r=1:dst3 --norm=ortho --axes=2,1
    rr_check
}

@test "sizes 1 and 2: DST-I and every other type of one point, DCT-I of two, as scipy" {
    oracle make one.h5 1x5:float64 -- two.h5 2x3:float64 -- z.h5 1x2x2:complex128
    local i=0 k
    for k in "${KINDS[@]}"; do
        [ "$k" = dct1 ] || rr $((i % 2 + 1)) one.h5 "one$i.h5" --r2r=0:"$k" --norm="${NORMS[i % 3]}"
        rr $((i % 2 + 1)) two.h5 "two$i.h5" "$(kind_option "$k")" --norm="${NORMS[i % 3]}"
        i=$((i + 1))
    done
    rr 2 z.h5 z1.h5 --dst=1 --norm=ortho
    rr 1 z.h5 z2.h5 --r2r=0:dst2,1:dct1,2:dst3 --norm=ortho
    rr_check
}

@test "DCT-I of one point is refused with status 2 and one line, before anything is written" {
    oracle make one.h5 4x1x3:float64
    run --separate-stderr fftshard 2 --dct=1 one.h5 out.h5
    assert_error "$EXIT_USAGE" "DCT-I on axis 1 of length 1" "2 points or more"
    [ ! -e out.h5 ] || fail "out.h5 was written"
    run --separate-stderr fftshard 1 --r2r=1:dct1 --axes=1 one.h5 out.h5
    assert_error "$EXIT_USAGE" "DCT-I on axis 1"
    # the other axes may take it
    rr 2 one.h5 ok.h5 --r2r=0:dct1,2:dct1
    rr_check
}

@test "single precision, complex and integer input: each part transformed, float32 and complex64 at 1e-5" {
    oracle make f.h5 9x6x4:float32 -- c.h5 5x6x3:complex64 -- d.h5 6x7:complex128 -- i.h5 5x6:int16
    rr 3 i.h5 i1.h5 --dst=2 --norm=forward
    rr 2 f.h5 f1.h5 --dct=2
    rr 3 f.h5 f2.h5 --r2r=0:dst4 --real --norm=ortho
    rr 2 c.h5 c1.h5 --dst=3 --norm=ortho
    rr 3 c.h5 c2.h5 --r2r=1:dct1 --inverse
    rr 2 d.h5 d1.h5 --dct=4 --precision=single
    rr 2 f.h5 f3.h5 --dct=1 --precision=double
    rr_check
}

@test "batch axes, an input slice, several inputs, shards in and out" {
    oracle make a.h5 /u=6x7x5:float64 /v=6x7x5:float64 -- b.h5 4x9x8:float64
    rr 3 a.h5:/u o1.h5 --dct=2 --axes=1,2
    rr 2 a.h5:/u o2.h5 --r2r=0:dst2 --axes=0,2
    rr 4 b.h5 o3.h5 --dst=1 --axes=-1
    run fftshard 3 --quiet --dct=3 --norm=ortho "b.h5:/data[1:4, ::2, 2:]" s.h5
    assert_success
    run python_serial -c 'import h5py, numpy as np, scipy.fft as sf
a = h5py.File("b.h5")["data"][1:4, ::2, 2:]; o = h5py.File("s.h5")["data"][()]
print(np.abs(o - sf.dctn(a, type=3, norm="ortho")).max() <= 1e-12 * np.abs(o).max())'
    assert_output True
    run fftshard 2 --quiet --dst=2 a.h5:/u a.h5:/v two.h5
    assert_success
    R2R_CASES+=("in=a.h5:/u out=two.h5:/u dst=2 ranks=2" "in=a.h5:/v out=two.h5:/v dst=2 ranks=2")
    # shards in, shards out
    oracle shard a.h5:/u 'sh.%d.h5' 2,3,1
    run fftshard 3 --quiet --r2r=0:dct1,2:dst4 --shards 'sh.%d.h5' sh.h5
    assert_success
    R2R_CASES+=("in=a.h5:/u out=sh.h5 r2r=0:dct1,2:dst4 ranks=3")
    rr 4 b.h5 so.h5 --dct=4 --norm=ortho --shard-output=2
    rr_check
}

@test "the read and the write in pieces beside the FFTs (the I/O thread), --norm=ortho on each piece" {
    oracle make a.h5 48x40x36:float64 -- z.h5 36x30x20:complex128
    export FFTSHARD_IO_THREAD=on
    rr 2 a.h5 o1.h5 --dct=2 --norm=ortho --report=r1.json
    rr 1 a.h5 o2.h5 --r2r=1:dst3,2:dct1 --norm=ortho
    rr 2 z.h5 o3.h5 --r2r=0:dst2 --norm=ortho --report=r3.json
    rr_check
    run python_serial -c 'import json
for f in ("r1.json", "r3.json"):
    io = json.load(open(f))["io_overlap"]
    print(io["read_seconds"] > 0, io["write_seconds"] > 0)'
    assert_output "True True
True True"
}

@test "the I/O thread's pieces keep an axis of one point: a cosine or sine of one point is no identity" {
    oracle make c.h5 60x1:float64 -- e.h5 40x1x30:float64 -- z.h5 1x30x20:complex128
    export FFTSHARD_IO_THREAD=on
    rr 1 c.h5 o1.h5 --dct=2
    rr 2 c.h5 o2.h5 --r2r=1:dst2
    rr 2 e.h5 o3.h5 --dct=2 --axes=0,1
    rr 2 z.h5 o4.h5 --r2r=0:dst2 --norm=ortho
    rr_check
}

@test "slabs and pencils with every strategy, the mixed kinds on blocks of pairwise" {
    oracle make a.h5 8x6x10:float64 -- z.h5 6x5x7:complex128
    local s
    for s in alltoall random xorswap pairwise; do
        rr 3 a.h5 "s_$s.h5" --dct=2 --transpose="$s"
        rr 4 a.h5 "p_$s.h5" --r2r=0:dst1,2:dct3 --decomp=pencil --transpose="$s"
        rr 2 z.h5 "m_$s.h5" --r2r=1:dct2 --transpose="$s"
    done
    rr 6 a.h5 g.h5 --dst=4 --grid=2x3
    rr_check
}

# Types II and III run as complex FFTs of two real lines (or a complex
# value's line) in blocks of about 32 KiB (src/compute/dctfft.c): 301 points
# make blocks of 6 pairs in float64, 12 in float32, none filling the lines
# of a rank; 15x301 lines per rank on 3 slabs leave an odd last line with
# no partner; 33 and 45 points the odd lengths on the other axes.
@test "types II and III as complex FFTs: blocks of line pairs, an odd last line, odd lengths, float32, complex, batch axes, pencils" {
    oracle make a.h5 45x301x33:float64 -- f.h5 45x301x33:float32 -- z.h5 15x301x9:complex128
    rr 3 a.h5 a1.h5 --dct=2
    rr 3 a.h5 a2.h5 --dst=3 --norm=ortho
    rr 4 a.h5 a3.h5 --dst=2 --decomp=pencil
    rr 2 a.h5 a4.h5 --inverse --dct=2 --norm=forward
    rr 3 a.h5 a5.h5 --r2r=1:dct3,2:dst2 --axes=1,2
    rr 2 a.h5 a6.h5 --r2r=0:dst3,2:dct2 --axes=0,2 --plan=measure
    rr 3 f.h5 f1.h5 --dct=3
    rr 4 f.h5 f2.h5 --r2r=0:dst2,1:dct2 --axes=0,1 --decomp=pencil --norm=ortho
    rr 3 z.h5 z1.h5 --dst=2
    rr 2 z.h5 z2.h5 --r2r=0:dct2,1:dst3 --axes=0,1 --precision=single
    rr_check
}

@test "--check passes on cosine and sine axes, their Parseval sum weighted as the norm leaves them" {
    oracle make a.h5 6x5x4:float64 -- z.h5 4x5x3:complex128
    local k
    for k in dct1 dct2 dst2 dst3; do
        run --separate-stderr fftshard 2 --check "$(kind_option "$k")" a.h5 "c_$k.h5"
        assert_success
        [[ $stderr == *"check: round trip error"*"passed"* ]] || fail "$k: $stderr"
    done
    run fftshard 3 --quiet --check --r2r=0:dst1 --real --norm=ortho a.h5 c_mix.h5
    assert_success
    run fftshard 2 --quiet --check --dct=3 --inverse z.h5 c_inv.h5
    assert_success
}

@test "the dry run shows the kinds and a real array's memory; the report and the summary name them" {
    run fftshard 1 --dry-run --ranks=4 --dct=2 --shape=64x64x64 --dtype=float64
    assert_success
    assert_line "kinds: axis 0 dct2, axis 1 dct2, axis 2 dct2; working array float64"
    assert_line --partial "local blocks 16x64x64 to 16x64x64 (up to 65536 elements, 0.5 MiB)"
    run --separate-stderr fftshard 1 --dry-run --ranks=4 --r2r=0:dst1 --shape=64x64x64 --dtype=float64 --report=-
    assert_success
    run python_serial -c 'import json, sys; d = json.loads(sys.argv[1])
print(d["transform"], d["axis_kinds"], d["work_dtype"])' "$output"
    assert_output "c2c ['dst1', 'fft', 'fft'] complex128"
    oracle make a.h5 6x5x4:float64
    run --separate-stderr fftshard 2 --r2r=0:dst1,2:dct2 --report=r.json a.h5 o.h5
    assert_success
    [[ ${stderr_lines[0]} == *"axes 0,1,2 (dst1,fft,dct2)"* ]] || fail "${stderr_lines[0]}"
    run python_serial -c 'import json; d = json.load(open("r.json"))
print(d["transform"], d["axes"], d["axis_kinds"])'
    assert_output "c2c [0, 1, 2] ['dst1', 'fft', 'dct2']"
}

@test "refusals: kinds given twice, --real without a Fourier axis, bad lists, analyses, damaged records" {
    oracle make a.h5 6x5x4:float64
    run --separate-stderr fftshard 1 --dct=2 --dst=2 a.h5 o.h5
    assert_error "$EXIT_USAGE" "--dct, --dst: give one of them"
    run --separate-stderr fftshard 1 --dct=2 --r2r=0:dst1 a.h5 o.h5
    assert_error "$EXIT_USAGE" "--dct, --r2r: give one of them"
    run --separate-stderr fftshard 1 --real --dst=1 a.h5 o.h5
    assert_error "$EXIT_USAGE" "--real, --dst"
    run --separate-stderr fftshard 1 --real --r2r=0:dct2,1:dct2,2:dct2 a.h5 o.h5
    assert_error "$EXIT_USAGE" "--real: every transformed axis is a cosine or sine axis"
    run --separate-stderr fftshard 1 --dct=5 a.h5 o.h5
    assert_error "$EXIT_USAGE" "--dct=5: expected a type from 1 to 4"
    local bad
    for bad in 0:dct5 0 :dct2 0:dct2, 0:dct2,0:dst1 x:dst1; do
        run --separate-stderr fftshard 1 --r2r="$bad" a.h5 o.h5
        assert_error "$EXIT_USAGE" "--r2r=$bad"
    done
    run --separate-stderr fftshard 1 --r2r=2:dct2,-1:dst2 a.h5 o.h5
    assert_error "$EXIT_USAGE" "--r2r: axes 2 and -1 are the same axis"
    run --separate-stderr fftshard 1 --r2r=3:dct2 a.h5 o.h5
    assert_error "$EXIT_USAGE" "--r2r: axis 3 is out of range for a 3-D dataset"
    run --separate-stderr fftshard 1 --r2r=0:dct2 --axes=1,2 a.h5 o.h5
    assert_error "$EXIT_USAGE" "--r2r: axis 0 is not transformed"
    run --separate-stderr fftshard 1 --dct=2 --power-spectrum a.h5 o.h5
    assert_error "$EXIT_USAGE" "--power-spectrum, --dct: the analyses work on Fourier transforms"
    run --separate-stderr fftshard 1 --r2r=1:dst1 --apply=laplacian a.h5 o.h5
    assert_error "$EXIT_USAGE" "--apply, --r2r"
    [ ! -e o.h5 ] || fail "o.h5 was written"
    # a record fftshard cannot have written is refused where the inverse takes it
    run fftshard 1 --quiet --dct=2 a.h5 f.h5
    assert_success
    python_serial -c 'import h5py
with h5py.File("f.h5", "r+") as f: f["data"].attrs["axis_kinds"] = "dct2,dct9,dct2"'
    run --separate-stderr fftshard 2 --inverse f.h5 b.h5
    assert_error "$EXIT_INPUT" "axis_kinds attribute holds 'dct9'" "--dct, --dst or --r2r"
    # the options given in its place leave it unread
    rr 2 f.h5 b.h5 --inverse --dct=2
    rr_check
}

@test "the man page's definitions (COSINE AND SINE TRANSFORMS) compute scipy.fft's dct and dst" {
    python_serial - "$srcdir/man/fftshard.1" <<'PY'
import re, sys
import numpy as np, scipy.fft
text = open(sys.argv[1]).read().replace("\\-", "-")
rows = re.findall(r"^(d[cs]t)([1-4]): (M = .*)$", text, re.M)
assert len(rows) == 8, rows
rng = np.random.default_rng(3)
for family, t, code in rows:
    for n in range(2 if (family, t) == ("dct", "1") else 1, 8):
        j = np.arange(n); k = j[:, None]; x = rng.standard_normal(n)
        env = {"np": np, "n": n, "j": j, "k": k}
        exec(code, env)
        ref = getattr(scipy.fft, family)(x, type=int(t))
        err = np.abs(env["M"] @ x - ref).max()
        assert err < 1e-12 * max(1, np.abs(ref).max()), (family, t, n, err)
print("ok")
PY
}

@test "a cosine or sine axis's coordinate is its angle theta_j (fs_r2r_angle), a Fourier axis's 2 pi fftfreq" {
    oracle make a.h5 6x5x4:float64
    run fftshard 2 --quiet --r2r=0:dst1,1:dct2 a.h5 o.h5
    assert_success
    run fftshard 2 --quiet --inverse --dst=3 a.h5 x.h5
    assert_success
    run python_serial -c 'import h5py, numpy as np
f = h5py.File("o.h5")
ok = [np.allclose(f["k0"][()], np.pi * (np.arange(6) + 1) / 7),
      np.allclose(f["k1"][()], np.pi * np.arange(5) / 5),
      np.allclose(f["k2"][()], 2 * np.pi * np.fft.fftfreq(4)),
      "DST-I" not in f["k0"].attrs["long_name"] and "dst1" in f["k0"].attrs["long_name"]]
g = h5py.File("x.h5")
ok.append(np.allclose(g["x0"][()], np.arange(6)))
print(ok)'
    assert_output "[True, True, True, True, True]"
}

@test "--window and --pad on cosine and sine axes: scipy.fft of the windowed, zero-padded input" {
    oracle make a.h5 6x5x4:float64 -- f.h5 6x5x4:float32 -- z.h5 6x5x4:complex128
    run fftshard 2 --quiet --dct=2 --window=hann a.h5 w1.h5
    assert_success
    run fftshard 3 --quiet --dst=3 --window=hann f.h5 w2.h5
    assert_success
    run fftshard 2 --quiet --dct=4 --window=hann z.h5 w3.h5
    assert_success
    run fftshard 2 --quiet --r2r=0:dst1 --window=hann --pad=8 a.h5 w4.h5
    assert_success
    run fftshard 2 --quiet --dct=1 --pad=7 --norm=ortho a.h5 w5.h5
    assert_success
    run python_serial -c 'import h5py, numpy as np, scipy.fft as sf, scipy.signal.windows as sw
def win(x):
    h = [sw.hann(n, sym=False) for n in x.shape]
    return x * h[0][:, None, None] * h[1][None, :, None] * h[2][None, None, :]
def err(name, ref):
    o = h5py.File(name)["data"][()]
    return o.shape == ref.shape and np.abs(o - ref).max() / np.abs(ref).max()
a, f, z = (h5py.File(n)["data"][()] for n in ("a.h5", "f.h5", "z.h5"))
p = np.pad(win(a), ((0, 2), (0, 3), (0, 4)))
print([err("w1.h5", sf.dctn(win(a), type=2)) <= 1e-12,
       err("w2.h5", sf.dstn(win(f.astype(float)), type=3)) <= 1e-5,
       err("w3.h5", sf.dctn(win(z), type=4)) <= 1e-12,
       err("w4.h5", np.fft.fftn(sf.dst(p, type=1, axis=0), axes=(1, 2))) <= 1e-12,
       err("w5.h5", sf.dctn(a, type=1, s=(7, 7, 7), norm="ortho")) <= 1e-12])'
    assert_output "[True, True, True, True, True]"
}
