#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# --correlation-function: xi(r) of the input, binned in shells of the
# separation r. Every result equals tests/xi_oracle.py's numpy computation
# of the documented definition (circular correlation by numpy's FFTs in
# float64, explicit minimum-image binning, on tiny grids a double loop too)
# on odd and even shapes, real and complex input, --real, batch axes, the
# 1-D four-step, --box-size, --r-bins' three forms, --cross, single
# precision, 1 to 4 ranks (ranks that own nothing); the transformed array
# beside it is untouched; the dry run counts the inverse; refusals. The
# multipoles xi_l(s) (--los, --multipoles) against the oracle's Legendre
# weighted shell average, and physically: a field stretched along the line
# of sight has xi_2 > 0, an isotropic one xi_2 ~ 0.

load helpers

xi_check() {
    python_serial "$srcdir/tests/xi_oracle.py" check "$@"
}

@test "odd and even shapes, --real and complex, 1 to 4 ranks, against numpy and a double loop" {
    oracle make r.h5 10x7x6:float64 -- c.h5 9x8x7:complex128 -- e.h5 8x6x4:float64 \
        -- t.h5 5x4:float64 -- u.h5 3x4x5:complex128
    local cases=() i=0 np in real field
    for in in r.h5 c.h5 e.h5; do
        for np in 1 2 3 4; do
            real=
            field=complex
            if [ "$in" != c.h5 ] && [ $((np % 2)) = 0 ]; then
                real=--real
                field=real
            fi
            fftshard "$np" -q $real --correlation-function "$in" o$i.h5
            cases+=("in=$in out=o$i.h5 field=$field")
            i=$((i + 1))
        done
    done
    fftshard 3 -q --correlation-function --spectrum-only t.h5 ot.h5
    fftshard 2 -q --correlation-function --spectrum-only u.h5 ou.h5
    cases+=("in=t.h5 out=ot.h5 brute=1" "in=u.h5 out=ou.h5 brute=1")
    run xi_check "${cases[@]}"
    echo "$output"
    assert_success
    # --spectrum-only: the group alone
    run python_serial -c 'import h5py, sys; print(sorted(h5py.File(sys.argv[1]).keys()))' ot.h5
    assert_output "['correlation_function']"
}

@test "--cross, several inputs, batch axes, the 1-D four-step, single precision, ranks that own nothing" {
    oracle make a.h5 8x9x5:float64 -- b5.h5 6x5x4:float64 -- bc.h5 6x5x4:complex128 -- one.h5 60:float64 \
        -- onec.h5 45:complex128 -- thin.h5 2x9x8:float64 -- f.h5 8x6x10:float32
    oracle make --seed 2 b.h5 /v=8x9x5:float64
    fftshard 2 -q --cross --correlation-function a.h5 b.h5 o1.h5
    fftshard 3 -q --cross --correlation-function --spectrum-only --real a.h5 b.h5 o2.h5
    fftshard 4 -q --correlation-function --spectrum-only a.h5 b.h5 o3.h5
    fftshard 3 -q --axes=1,2 --real --correlation-function b5.h5 o4.h5
    fftshard 2 -q --axes=0,2 --correlation-function --spectrum-only a.h5 o5.h5
    fftshard 4 -q --correlation-function one.h5 o6.h5
    fftshard 3 -q --real --correlation-function --spectrum-only one.h5 o7.h5
    fftshard 2 -q --correlation-function --spectrum-only onec.h5 o8.h5
    fftshard 4 -q --real --correlation-function thin.h5 o9.h5
    fftshard 3 -q --correlation-function --spectrum-only f.h5 o10.h5
    fftshard 4 -q --decomp=pencil --correlation-function --spectrum-only a.h5 o11.h5
    fftshard 4 -q --axes=0,-2 --correlation-function bc.h5 o12.h5
    run xi_check "in=a.h5,b.h5 out=o1.h5 cross=1" "in=a.h5,b.h5 out=o2.h5 cross=1" \
        "in=a.h5,b.h5 out=o3.h5" "in=b5.h5 out=o4.h5 axes=1,2 field=real" \
        "in=a.h5 out=o5.h5 axes=0,2" "in=one.h5 out=o6.h5 field=complex" "in=one.h5 out=o7.h5" \
        "in=onec.h5 out=o8.h5" "in=thin.h5 out=o9.h5 field=real" "in=f.h5 out=o10.h5" \
        "in=a.h5 out=o11.h5" "in=bc.h5 out=o12.h5 axes=0,1 field=complex"
    echo "$output"
    assert_success
}

@test "--box-size, --r-bins (N, edges, RMIN:RMAX:DR), --norm: r in box units, xi unchanged" {
    oracle make r.h5 10x7x6:float64 -- c.h5 9x8:complex128
    fftshard 2 -q --correlation-function --spectrum-only --box-size=100,70,30 r.h5 o1.h5
    fftshard 3 -q --correlation-function --spectrum-only --box-size=5 --r-bins=4 c.h5 o2.h5
    fftshard 1 -q --correlation-function --spectrum-only --r-bins=0.5,1,2,3.5 r.h5 o3.h5
    fftshard 4 -q --real --correlation-function --box-size=20 --r-bins=1:30:2.5 r.h5 o4.h5
    fftshard 2 -q --correlation-function --norm=ortho c.h5 o5.h5
    fftshard 3 -q --correlation-function --spectrum-only --norm=forward --r-bins=7 r.h5 o6.h5
    run xi_check "in=r.h5 out=o1.h5 box=100,70,30" "in=c.h5 out=o2.h5 box=5 rbins=4" \
        "in=r.h5 out=o3.h5 rbins=0.5,1,2,3.5" "in=r.h5 out=o4.h5 box=20 rbins=1:30:2.5" \
        "in=c.h5 out=o5.h5" "in=r.h5 out=o6.h5 rbins=7"
    echo "$output"
    assert_success
}

@test "a plane wave's xi is cos(2 pi r / lambda) / 2 along its axis" {
    python_serial -c 'import h5py, numpy as np
x = np.cos(2 * np.pi * 3 * np.arange(24) / 24)
with h5py.File("w.h5", "w") as f: f["x"] = np.broadcast_to(x[:, None], (24, 5)).copy()'
    fftshard 2 -q --correlation-function --spectrum-only --axes=0 w.h5 o.h5
    run python_serial -c 'import h5py, numpy as np
g = h5py.File("o.h5")["correlation_function"]
ref = 0.5 * np.cos(2 * np.pi * 3 * g["r"][()] / 24)
err = np.abs(g["xi"][()] - ref).max()
assert err < 1e-12, (g["xi"][()], ref)
assert g["cells"][0] == 5 and g["cells"][-1] == 5, g["cells"][()]'
    echo "$output"
    assert_success
}

@test "the report and the summary name the group; the dry run counts the inverse" {
    oracle make r.h5 16x12x8:float64
    run fftshard 2 --correlation-function --report=rep.json r.h5 o.h5
    assert_success
    assert_output --partial "in o.h5:/correlation_function"
    run python_serial -c 'import json; j = json.load(open("rep.json"))["spectra"]
c = j["correlation_function"]
assert len(c["xi"]) == len(c["r"]) == len(c["cells"]) and sum(c["cells"]) == 16 * 12 * 8, c
assert "power_spectrum" not in j'
    assert_success
    python_serial -c 'import h5py; h5py.File("big.h5", "w").create_dataset("x", (64, 64, 32), "f8")'
    run --separate-stderr fftshard 2 --dry-run --report=- big.h5 dry.h5
    local plain=$output
    run --separate-stderr fftshard 2 --dry-run --report=- --correlation-function big.h5 dry.h5
    run python_serial -c 'import json, sys
a, b = (json.loads(x)["memory_per_rank"] for x in sys.argv[1:])
assert b["exchange_bytes"] > a["exchange_bytes"], (a, b)
# the inverse: its exchange buffers and its plans (plans and I/O); the sums per bin
assert a["stage_bytes"] == 0 and b["stage_bytes"] > 0, (a, b)
assert b["total_bytes"] - a["total_bytes"] == (b["exchange_bytes"] - a["exchange_bytes"] +
                                               b["plans_and_io_bytes"] - a["plans_and_io_bytes"] +
                                               b["stage_bytes"]), (a, b)' \
        "$plain" "$output"
    echo "$output"
    assert_success
    [ ! -e dry.h5 ]
}

@test "--multipoles: xi_l(s) = (2l + 1) <C L_l(mu)> against numpy, 1 to 4 ranks, slab and pencil, --real and complex, --cross, --box-size, --r-bins, batch axes, the 1-D four-step, single precision" {
    oracle make r.h5 10x7x6:float64 -- c.h5 9x8x7:complex128 -- e.h5 8x6x4:float64 -- one.h5 60:float64 \
        -- f.h5 8x6x10:float32
    oracle make --seed 2 b.h5 /v=10x7x6:float64
    local cases=() i=0 np d real in
    for np in 1 2 3 4; do
        for d in slab pencil; do
            [ "$np$d" = 1pencil ] && continue # pencils need 2 ranks
            real=
            [ $((i % 3)) = 1 ] && real=--real
            in=r.h5
            [ $((i % 2)) = 1 ] && in=e.h5
            fftshard "$np" -q --decomp=$d $real --correlation-function --spectrum-only \
                --los=$((i % 3 - 1)) --multipoles=0,2,4 $in o$i.h5
            cases+=("in=$in out=o$i.h5 los=$((i % 3 - 1)) poles=0,2,4")
            i=$((i + 1))
        done
    done
    fftshard 3 -q --correlation-function --los=2 --multipoles=2,6 c.h5 c1.h5
    fftshard 2 -q --real --cross --correlation-function --spectrum-only --los=1 --multipoles=0,2 \
        r.h5 b.h5 x1.h5
    fftshard 4 -q --cross --correlation-function --decomp=pencil --los=0 --multipoles=0,2,4 \
        --box-size=100,70,30 --r-bins=6 r.h5 b.h5 x2.h5
    fftshard 2 -q --correlation-function --spectrum-only --box-size=5,20,3 --los=-2 --multipoles=0,2 \
        --r-bins=0.5,2,4,9 c.h5 b1.h5
    fftshard 3 -q --real --axes=1,2 --correlation-function --spectrum-only --los=2 --multipoles=2 \
        r.h5 b2.h5
    # the 1-D four-step's folded coordinates; single precision
    fftshard 4 -q --correlation-function --spectrum-only --los=0 --multipoles=0,2 one.h5 b3.h5
    fftshard 3 -q --correlation-function --spectrum-only --los=-3 --multipoles=0,2,4 f.h5 b5.h5
    # --los alone: no multipoles
    fftshard 2 -q --correlation-function --spectrum-only --los=1 r.h5 b4.h5
    cases+=("in=c.h5 out=c1.h5 los=2 poles=2,6 field=complex"
        "in=r.h5,b.h5 out=x1.h5 cross=1 los=1 poles=0,2"
        "in=r.h5,b.h5 out=x2.h5 cross=1 los=0 poles=0,2,4 box=100,70,30 rbins=6"
        "in=c.h5 out=b1.h5 los=-2 poles=0,2 box=5,20,3 rbins=0.5,2,4,9"
        "in=r.h5 out=b2.h5 axes=1,2 los=2 poles=2" "in=one.h5 out=b3.h5 los=0 poles=0,2"
        "in=f.h5 out=b5.h5 los=0 poles=0,2,4"
        "in=r.h5 out=b4.h5")
    run xi_check "${cases[@]}"
    echo "$output"
    assert_success
    # the report's part, as the spectrum's multipoles are
    run fftshard 2 --correlation-function --los=0 --multipoles=0,2 --report=rep.json r.h5 rep.h5
    assert_success
    assert_output --partial "in rep.h5:/correlation_function"
    run python_serial -c 'import json, h5py, numpy as np
c = json.load(open("rep.json"))["spectra"]["correlation_function"]
g = h5py.File("rep.h5")["correlation_function"]
for k in ("xi", "xi_0", "xi_2"):
    assert np.allclose(np.array(c[k], float), g[k][()], rtol=1e-8, atol=0, equal_nan=True), k  # %.9g
print(sorted(k for k in c if k.startswith("xi")))'
    assert_success
    assert_output "['xi', 'xi_0', 'xi_2']"
}

@test "--multipoles physically: a field stretched along the los has xi_2 > 0, across it xi_2 < 0, an isotropic one xi_2 ~ 0" {
    # white noise smoothed by a Gaussian of widths s_a cells: its xi is
    # exp(-sum_a r_a^2 / (4 s_a^2)), elongated along the long axis
    python_serial -c 'import h5py, numpy as np
n = 48
w = np.fft.fftn(np.random.default_rng(1).standard_normal((n, n, n)))
k = np.meshgrid(*[2 * np.pi * np.fft.fftfreq(n)] * 3, indexing="ij")
with h5py.File("f.h5", "w") as f:
    for name, s in (("iso", (1.5, 1.5, 1.5)), ("long", (3, 1.5, 1.5))):
        g = np.exp(-0.5 * sum((ka * sa) ** 2 for ka, sa in zip(k, s)))
        f[name] = np.fft.ifftn(w * g).real'
    fftshard 2 -q --real --correlation-function --spectrum-only --los=0 --multipoles=0,2 f.h5:/iso iso.h5
    fftshard 2 -q --real --correlation-function --spectrum-only --los=0 --multipoles=0,2 f.h5:/long along.h5
    fftshard 2 -q --real --correlation-function --spectrum-only --los=1 --multipoles=0,2 f.h5:/long across.h5
    run python_serial -c 'import h5py, numpy as np
def xi(name, ell):
    g = h5py.File(name)["correlation_function"]
    return g["xi_%d" % ell][()] / g["xi"][0]
iso, along, across = xi("iso.h5", 2), xi("along.h5", 2), xi("across.h5", 2)
s = slice(1, 7)  # separations of 1 to 6 cells
print(np.round(iso[s], 3), np.round(along[s], 3), np.round(across[s], 3))
assert np.abs(iso[s]).max() < 0.04, iso[s]
assert along[2:6].min() > 0.15, along[s]
assert across[2:6].max() < -0.05, across[s]
print("ok")'
    echo "$output"
    assert_success
    assert_line ok
}

@test "refusals: --check, --apply, --inverse, --correlate, --r-bins alone, bad --r-bins, --los" {
    oracle make r.h5 6x5:float64
    run --separate-stderr fftshard 1 --correlation-function --check r.h5 o.h5
    assert_error "$EXIT_USAGE" "--check, --correlation-function"
    run --separate-stderr fftshard 1 --correlation-function --apply=laplacian r.h5 o.h5
    assert_error "$EXIT_USAGE" "--apply"
    run --separate-stderr fftshard 1 --correlation-function --inverse r.h5 o.h5
    assert_error "$EXIT_USAGE" "--inverse"
    run --separate-stderr fftshard 1 --correlation-function --correlate r.h5 o.h5
    assert_error "$EXIT_USAGE" "--correlate" "not a spectrum"
    run --separate-stderr fftshard 1 --r-bins=4 r.h5 o.h5
    assert_error "$EXIT_USAGE" "--r-bins: only with --correlation-function"
    run --separate-stderr fftshard 1 --correlation-function --r-bins=3,2 r.h5 o.h5
    assert_error "$EXIT_USAGE" "--r-bins=3,2" "increasing edges"
    run --separate-stderr fftshard 1 --correlation-function --r-bins=5:1:1 r.h5 o.h5
    assert_error "$EXIT_USAGE" "--r-bins=5:1:1" "RMIN:RMAX:DR"
    run --separate-stderr fftshard 1 --correlation-function --multipoles=0,2 r.h5 o.h5
    assert_error "$EXIT_USAGE" "--multipoles: only with --los=AXIS"
    run --separate-stderr fftshard 1 --correlation-function --los=2 r.h5 o.h5
    assert_error "$EXIT_USAGE" "--los=2: not a transformed axis"
    run --separate-stderr fftshard 1 --correlation-function --axes=1 --los=0 r.h5 o.h5
    assert_error "$EXIT_USAGE" "--los=0: not a transformed axis"
    run --separate-stderr fftshard 1 --los=0 --multipoles=2 r.h5 o.h5
    assert_error "$EXIT_USAGE" "--los, --multipoles: only with" "--correlation-function"
    run --separate-stderr fftshard 1 --correlation-function --los=0 --mu-bins=3 r.h5 o.h5
    assert_error "$EXIT_USAGE" "--mu-bins: of a power spectrum"
    [ ! -e o.h5 ]
}
