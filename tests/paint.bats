#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# --paint: every window's mesh (--write-mesh) equals tests/paint_oracle.py's
# numpy.add.at painting of the documented formulas to 1e-12 (float64 and
# float32 positions, weights, 1-D to 3-D, odd meshes, particles on cells'
# edges, at 0 and L and a period outside, empty ranks) on 1 to 8 ranks,
# slabs and pencils, one round or many; --interlace equals the oracle's
# nbodykit scheme; the spectra equal tests/spectrum_oracle.py's of the
# oracle's mesh with the window compensated and the shot noise V / N_p
# subtracted; snapshots of 16 files read as one; what cannot be painted is
# refused with one line and its status.

load helpers

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
}

paint_oracle() {
    python_serial "$srcdir/tests/paint_oracle.py" "$@"
}

# painted NP SNAP MESH WINDOW [FFTSHARD OPTIONS...] -- [ORACLE KEYS...]:
# fftshard's --write-mesh of SNAP against the oracle's.
painted() {
    local np=$1 snap=$2 mesh=$3 window=$4 opts=() keys=() field=delta k
    shift 4
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        opts+=("$1")
        shift
    done
    [ $# -eq 0 ] || shift
    keys=("$@")
    for k in "${keys[@]}"; do
        [[ $k != field=* ]] || field=${k#field=}
    done
    fftshard "$np" -q --force --paint="$window" --mesh="$mesh" --write-mesh "${opts[@]}" \
        "$snap:/PartType1/Coordinates" mesh.h5
    paint_oracle check "$snap" "mesh.h5:/PartType1/$field" window="$window" mesh="$mesh" "${keys[@]}"
}

@test "every window, 1-D to 3-D, odd meshes, cells' edges and the box's, slab and pencil, 1 to 8 ranks" {
    paint_oracle make e3.h5 box=16 edges mesh=8 masses
    paint_oracle make e2.h5 d=2 box=8 edges mesh=8 n=300
    paint_oracle make e1.h5 d=1 box=4 edges mesh=8 n=200 masses
    local w np i=0 windows=(ngp cic tsc pcs)
    for w in "${windows[@]}"; do
        for np in 1 2 3 4; do
            [ $(((np + i) % 2)) -eq 0 ] || [ "$np" -eq 1 ] || continue
            painted "$np" e3.h5 8 "$w" --weights=Masses -- masses
            painted "$np" e3.h5 9x8x7 "$w" --real
            painted "$np" e2.h5 8x13 "$w"
            painted "$np" e1.h5 61 "$w" --weights=Masses -- masses
            [ "$np" -gt 1 ] || continue
            painted "$np" e3.h5 9x8x7 "$w" --decomp=pencil --weights=Masses -- masses
        done
        painted 8 e3.h5 8 "$w" --decomp=pencil
        painted 8 e3.h5 5x3x4 "$w" # ranks with no plane of the mesh
        painted 6 e1.h5 24 "$w" --real
        i=$((i + 1))
    done
}

@test "float32 positions, the density and the sum, a box given, particles fewer than ranks" {
    paint_oracle make f.h5 dtype=float32 box=12 n=500 masses
    painted 3 f.h5 10x9x8 cic --paint-field=density -- field=density
    painted 2 f.h5 7 tsc --paint-field=sum --weights=Masses -- field=sum masses
    painted 4 f.h5 8 pcs --box-size=13 -- box=13
    paint_oracle make few.h5 n=3 box=8
    painted 5 few.h5 8 cic
}

@test "many rounds of a few particles each paint the same mesh as one" {
    paint_oracle make r.h5 n=2000 box=16 edges mesh=8 masses
    FFTSHARD_PAINT_ROUND_BYTES=2000 painted 3 r.h5 9x8x7 tsc --weights=Masses -- masses
    FFTSHARD_PAINT_ROUND_BYTES=1000 painted 4 r.h5 8 pcs --decomp=pencil --interlace -- interlace
    run fftshard 2 --force --paint=cic --mesh=8 --spectrum-only --report=rep.json \
        r.h5:/PartType1/Coordinates pk.h5
    assert_success
    python_serial -c 'import json, sys
p = json.load(open("rep.json"))["paint"]["inputs"][0]
assert p["particles"] == 2052 and p["box_from"] == "the Header'"'"'s BoxSize", p
assert p["particles_per_second_per_rank"] > 0 and p["rounds"] >= 1, p'
    assert_output --partial "paint: 2052 particles"
    assert_output --regexp "paint +[0-9.]+ +[0-9.]+"
}

@test "--interlace equals nbodykit's scheme: c2c and --real, even and odd meshes, slab and pencil" {
    paint_oracle make i3.h5 box=16 edges mesh=8 masses
    paint_oracle make i1.h5 d=1 box=16 n=300
    local w np
    for w in ngp cic tsc pcs; do
        for np in 1 3; do
            painted "$np" i3.h5 8 "$w" --interlace -- interlace
            painted "$np" i3.h5 9x8x7 "$w" --real --interlace --weights=Masses -- real interlace masses
            painted "$np" i1.h5 60 "$w" --real --interlace -- real interlace
        done
        painted 4 i3.h5 8x6x10 "$w" --real --interlace --decomp=pencil -- real interlace
    done
}

@test "spectra: the window compensated and the shot noise subtracted, as numpy's of the oracle's mesh" {
    paint_oracle make p.h5 n=4000 box=16 masses
    local np shot
    for np in 1 2 4; do
        fftshard "$np" -q --force --real --spectrum-only --paint=tsc --interlace --weights=Masses \
            --mesh=9x7x5 p.h5:/PartType1/Coordinates pk.h5
        shot=$(paint_oracle reference p.h5 ref.h5 window=tsc masses mesh=9x7x5 real interlace)
        python_serial "$srcdir/tests/spectrum_oracle.py" check \
            "in=ref.h5:/mesh out=pk.h5 box=16 window=tsc shot=$shot only"
        fftshard "$np" -q --force --spectrum-only --paint=cic --mesh=8 p.h5:/PartType1/Coordinates pk.h5
        shot=$(paint_oracle reference p.h5 ref.h5 window=cic mesh=8)
        python_serial "$srcdir/tests/spectrum_oracle.py" check \
            "in=ref.h5:/mesh out=pk.h5 box=16 window=cic-shotnoise shot=$shot only"
    done
    python_serial -c 'import h5py
a = h5py.File("pk.h5")["power_spectrum"].attrs
s = lambda v: v.decode() if isinstance(v, bytes) else v
assert s(a["paint"]) == "cic" and a["interlaced"] == 0 and a["particles"] == 4000, dict(a)
assert s(a["compensate"]) == "cic-shotnoise" and abs(a["shot_noise"] - 16.0 ** 3 / 4000) < 1e-12, dict(a)'
    # said otherwise: no compensation, the shot noise given (the sum: delta's
    # power at k = 0 is rounding, which no relative tolerance holds)
    fftshard 2 -q --force --spectrum-only --paint=cic --paint-field=sum --mesh=8 --compensate=none \
        --shot-noise=0 p.h5:/PartType1/Coordinates pk.h5
    paint_oracle reference p.h5 ref.h5 window=cic mesh=8 field=sum
    python_serial "$srcdir/tests/spectrum_oracle.py" check "in=ref.h5:/mesh out=pk.h5 box=16 shot=0 only"
}

# The accuracy of a painted spectrum: fftshard-mkdata's Poisson sample (5
# particles per cell of 128^3, 10.5 M particles, uniform in their cells) of
# a Gaussian field of P(k) = 40 k^-2 in a box of 1000, painted on 64^3.
# Against the analytic P(k), sample variance would be 10 % in the first
# bins, so the reference is the spectrum of the generating field itself
# (the same seed, fftshard-mkdata -t float64): the Poisson intensity
# max(0, 1 + delta) over its mean (the clipping exact, so the field can be
# strong: the shot noise's scatter is then 0.5 % a bin), its modes below
# the mesh's Nyquist frequency times sinc^2(pi f_a / 128) per axis (the
# particles uniform in the generating cells), averaged in the bins of
# width 2 k_f up to 0.7 k_N. The compensated, interlaced spectrum with the
# shot noise subtracted is within 2 % of it in every bin; the raw one (no
# interlacing, no compensation, no shot noise subtracted) is not.
@test "a Poisson sample of a known field: the compensated interlaced spectrum within 2 % of the field's up to 0.7 k_N, the raw one not" {
    local gen=(--power-law=-2 --amplitude=40 --box-size=1000 128x128x128) edges
    mkdata 1 -q -t float64 "${gen[@]}" field.h5
    mkdata 2 -q --particles=5 "${gen[@]}" snap.h5
    edges=$(python_serial -c 'import math
kf = 2 * math.pi / 1000
print(",".join("%.17g" % (kf * e) for e in [0.5 + 2 * i for i in range(11)] + [0.7 * 32]))')
    fftshard 2 -q --real --spectrum-only --paint=cic --interlace --mesh=64 --bins="$edges" \
        snap.h5:/PartType1/Coordinates pk.h5
    fftshard 2 -q --real --spectrum-only --paint=cic --compensate=none --shot-noise=0 --mesh=64 \
        --bins="$edges" snap.h5:/PartType1/Coordinates raw.h5
    python_serial -c 'import h5py, numpy as np
G, M, L = 128, 64, 1000.0
c = np.maximum(0.0, 1.0 + h5py.File("field.h5")["data"][()])
X = np.fft.fftn(c / c.mean() - 1.0)
f = np.fft.fftfreq(G, 1.0 / G)
keep = np.abs(f) < M // 2
f = f[keep]
s = np.sinc(f / G) ** 2
P = np.abs(X[np.ix_(keep, keep, keep)]) ** 2 * L ** 3 / G ** 6
P *= s[:, None, None] * s[None, :, None] * s[None, None, :]
k = 2 * np.pi / L * np.sqrt(f[:, None, None] ** 2 + f[None, :, None] ** 2 + f[None, None, :] ** 2)
def error(name):
    o = h5py.File(name)["power_spectrum"]
    e = o["edges"][()]
    b = np.digitize(k.ravel(), e) - 1
    ok = (b >= 0) & (b < len(e) - 1)
    ref = np.bincount(b[ok], P.ravel()[ok], len(e) - 1) / np.bincount(b[ok], None, len(e) - 1)
    assert e[-1] <= 0.7 * np.pi * M / L * (1 + 1e-12), e
    return o["power"][()] / ref - 1.0
good, raw = error("pk.h5"), error("raw.h5")
print("compensated, interlaced:", np.round(good, 4))
print("raw:", np.round(raw, 4))
assert np.all(np.abs(good) < 0.02), good
assert np.max(np.abs(raw)) > 0.2, raw'
}

@test "a snapshot of 16 files read as one; a missing file, a Header that disagrees: refused" {
    paint_oracle make 'snap.%d.hdf5' files=16 n=3000 box=16 masses
    local names
    names=$(for i in $(seq 0 15); do printf 'snap.%d.hdf5,' "$i"; done)
    fftshard 3 -q --shards --paint=cic --weights=Masses --mesh=9x8x7 --write-mesh \
        'snap.%d.hdf5:/PartType1/Coordinates' mesh.h5
    paint_oracle check "${names%,}" mesh.h5:/PartType1/delta window=cic mesh=9x8x7 masses
    run --separate-stderr fftshard 2 --paint=cic --mesh=8 snap.3.hdf5:/PartType1/Coordinates out.h5
    assert_error "$EXIT_INPUT" "NumFilesPerSnapshot is 16"
    python_serial -c 'import h5py
with h5py.File("snap.5.hdf5", "a") as f:
    f["Header"].attrs["BoxSize"] = 17.0'
    run --separate-stderr fftshard 2 --shards --paint=cic --mesh=8 'snap.%d.hdf5:/PartType1/Coordinates' out.h5
    assert_error "$EXIT_INPUT" "snap.5.hdf5: its /Header BoxSize differs"
    rm snap.7.hdf5
    run --separate-stderr fftshard 2 --shards --paint=cic --mesh=8 'snap.%d.hdf5:/PartType1/Coordinates' out.h5
    assert_error "$EXIT_INPUT" "snap.7.hdf5" "missing"
    [ ! -e out.h5 ]
}

@test "--write-mesh and the report name the positions painted as the input, a snapshot's files by their pattern" {
    paint_oracle make one.h5 n=200 box=8
    paint_oracle make 'two.%d.hdf5' files=2 n=200 box=8
    fftshard 2 -q --paint=cic --mesh=8 --write-mesh --report=one.json one.h5:/PartType1/Coordinates m1.h5
    fftshard 2 -q --shards --paint=tsc --mesh=8 --write-mesh --report=two.json \
        'two.%d.hdf5:/PartType1/Coordinates' m2.h5
    python_serial -c 'import h5py, json
s = lambda v: v.decode() if isinstance(v, bytes) else v
for out, rep, want in (("m1.h5", "one.json", "one.h5:/PartType1/Coordinates"),
                       ("m2.h5", "two.json", "two.%d.hdf5:/PartType1/Coordinates")):
    got = s(h5py.File(out)["PartType1/delta"].attrs["input"])
    assert got == want, (out, got)
    got = json.load(open(rep))["input"]
    assert got == want, (rep, got)'
}

@test "NaN positions and positions a period outside the box: status 3, the count and the first index" {
    paint_oracle make nan.h5 n=40 box=16 nan=17
    run --separate-stderr fftshard 3 --paint=cic --mesh=8 nan.h5:/PartType1/Coordinates out.h5
    assert_error "$EXIT_INPUT" "nan.h5:/PartType1/Coordinates: 1 value is not finite" "[17, 0]"
    [ ! -e out.h5 ]
    run fftshard 3 -q --allow-nonfinite --paint=cic --mesh=8 --write-mesh nan.h5:/PartType1/Coordinates out.h5
    assert_success
    paint_oracle check nan.h5 out.h5:/PartType1/delta window=cic mesh=8
    paint_oracle make far.h5 n=40 box=16
    python_serial -c 'import h5py
with h5py.File("far.h5", "a") as f:
    d = f["PartType1/Coordinates"]
    d[9, 2] = 40.0
    d[30, 0] = -16.5'
    run --separate-stderr fftshard 2 --paint=cic --mesh=8 far.h5:/PartType1/Coordinates out2.h5
    assert_error "$EXIT_INPUT" "2 positions lie more than a period outside the box" "[9, 2]"
    [ ! -e out2.h5 ]
}

@test "usage: --mesh without --paint, --paint without --mesh, no box, a mesh of other dimensions" {
    paint_oracle make nohdr.h5 n=20 header=0
    run --separate-stderr fftshard 1 --mesh=8 nohdr.h5:/PartType1/Coordinates out.h5
    assert_error "$EXIT_USAGE" "only with --paint"
    run --separate-stderr fftshard 1 --paint=cic nohdr.h5:/PartType1/Coordinates out.h5
    assert_error "$EXIT_USAGE" "--mesh"
    run --separate-stderr fftshard 1 --paint=cic --mesh=8 nohdr.h5:/PartType1/Coordinates out.h5
    assert_error "$EXIT_USAGE" "no /Header BoxSize" "--box-size"
    run --separate-stderr fftshard 1 --paint=cic --mesh=8x8 --box-size=1 nohdr.h5:/PartType1/Coordinates out.h5
    assert_error "$EXIT_USAGE" "--mesh: 2 lengths for positions of 3 columns"
    run --separate-stderr fftshard 1 --paint=cic --mesh=8 --inverse nohdr.h5:/PartType1/Coordinates out.h5
    assert_error "$EXIT_USAGE" "--paint" "--inverse"
    [ ! -e out.h5 ]
}

@test "the dry run plans the mesh and counts the particles' buffers" {
    paint_oracle make d.h5 n=100 box=16
    run fftshard 2 --dry-run --paint=cic --mesh=64x32x16 --interlace d.h5:/PartType1/Coordinates out.h5
    assert_success
    assert_output --partial "64x32x16 float64 on 2 ranks"
    assert_output --regexp "shifted mesh 0\.2 MiB; painting: particles [0-9.]+ MiB, in all [0-9.]+ MiB = about"
    fftshard 2 --dry-run --report=dry.json --paint=cic --mesh=64x32x16 --interlace \
        d.h5:/PartType1/Coordinates out.h5 >/dev/null
    python_serial -c 'import json
m = json.load(open("dry.json"))["memory_per_rank"]
parts = ("array_bytes", "exchange_bytes", "plans_and_io_bytes", "libraries_bytes", "cross_bytes",
         "stage_bytes")
# the rounds of 16 MiB of rows are resident as far as the share of a rank of the
# 100 rows fills them (read, sent and their destinations: 68 bytes a row at
# most), the rows waiting to be painted, which receive them, and their ordered
# copy as far as the 100 fill them, the ghost tables and the 65537 counters
# of the sort (512 KiB)
assert 512 << 10 < m["paint_bytes"] < 1 << 20, m
# the painting comes before the transform, with the libraries, the data
# buffer, the shifted mesh, the plans of FFTW and, of the exchange buffers
# and the sums per bin and tables, what is resident before the first exchange
# (at most all of them) taken as resident: the total is the larger of that phase and the
# rest, with what the painting leaves behind (at most 2 MiB, its own bytes)
least = sum(m[k] for k in ("libraries_bytes", "array_bytes", "cross_bytes", "paint_bytes"))
most = least + m["exchange_bytes"] + m["stage_bytes"] + m["plans_and_io_bytes"]
assert least < m["painting_bytes"] <= most, m
left = min(m["paint_bytes"], 2 << 20)
assert m["total_bytes"] == max(sum(m[k] for k in parts) + left, m["painting_bytes"]), m'
    [ ! -e out.h5 ]
}

# The dry run's figure against the peak a real run reports: at or above it
# (a job sized by it fits) and at most 10% above. The exchange buffers but
# the second array are untouched while the particles are painted, as are the
# sums per bin; the particles are received into the rows waiting to be
# painted. It counted the first whole and a round's buffer to receive into:
# 1.1 to 1.5 times the peak on 2 to 4 ranks.
@test "the dry run's figure with --paint: at or above the real peak, at most 10% above, 1-D to 3-D, 1 to 4 ranks" {
    [ "$FFTSHARD_SANITIZERS" != yes ] || skip "peak memory under the sanitizers"
    local c shape np opts
    for c in "1048576 1" "1048576 2 --spectrum-only" "1048576 4" "512x512 2 --interlace" \
        "512x512 4" "96x96x96 2" "96x96x96 4 --spectrum-only"; do
        read -r shape np opts <<<"$c"
        [ -e "p$shape.h5" ] || mkdata 2 -q -f --particles=1 --power-law=-2 --seed=1 "$shape" "p$shape.h5"
        # shellcheck disable=SC2086 # opts: words
        fftshard "$np" --dry-run --report=dry.json -q --paint=cic --mesh="$shape" $opts \
            "p$shape.h5" out.h5 >/dev/null
        # shellcheck disable=SC2086
        fftshard "$np" -q -f --report=r.json --paint=cic --mesh="$shape" $opts "p$shape.h5" out.h5
        python_serial -c 'import json, sys
estimate = json.load(open("dry.json"))["memory_per_rank"]["total_bytes"]
peak = json.load(open("r.json"))["memory"]["peak_bytes_max"]
print(f"{sys.argv[1]}: estimate {estimate / 2**20:.1f} MiB, real peak {peak / 2**20:.1f} MiB")
sys.exit(not peak <= estimate <= 1.10 * peak)' "$shape on $np ranks $opts" ||
            fail "$shape on $np ranks $opts: the figure is below the peak or more than 10% above"
    done
}

@test "fftshard-mkdata --particles: a Poisson sample of the field, the same file on any rank count, painted with its Header's box" {
    mkdata 1 -q --particles=50 --power-law=-2 --amplitude=0.5 --box-size=100 16x16x16 a.h5
    mkdata 3 -q --particles=50 --power-law=-2 --amplitude=0.5 --box-size=100 16x16x16 b.h5
    mkdata 1 -q --power-law=-2 --amplitude=0.5 --box-size=100 -t float64 16x16x16 field.h5
    python_serial -c 'import h5py, numpy as np
a, b = h5py.File("a.h5"), h5py.File("b.h5")
x = a["PartType1/Coordinates"][()]
assert np.array_equal(x, b["PartType1/Coordinates"][()])
h = a["Header"].attrs
assert list(h["BoxSize"]) == [100.0] * 3 and h["NumPart_Total"][1] == len(x) == h["NumPart_ThisFile"][1]
assert h["NumFilesPerSnapshot"] == 1 and x.min() >= 0 and x.max() < 100
# the counts per cell: Poisson of 50 (1 + delta), delta the field of the same
# seed: their total within 5 sigma, (count - mean)^2 / mean averaging 1
d = h5py.File("field.h5")["data"][()]
counts = np.histogramdd(x, bins=16, range=[(0, 100)] * 3)[0]
lam = 50 * np.maximum(0, 1 + d)
z = (counts.sum() - lam.sum()) / np.sqrt(lam.sum())
chi2 = np.mean((counts - lam) ** 2 / lam)
assert abs(z) < 5 and abs(chi2 - 1) < 5 * np.sqrt(2 / counts.size), (z, chi2)
assert np.corrcoef(counts.ravel(), lam.ravel())[0, 1] > 0.5'
    run fftshard 2 --paint=cic --mesh=16 --spectrum-only a.h5:/PartType1/Coordinates pk.h5
    assert_success
    run --separate-stderr mkdata 1 --particles=0 --power-law=-2 16x16x16 c.h5
    [ "$status" -eq "$EXIT_USAGE" ]
    run fftshard 2 --paint=cic --mesh=16 --spectrum-only --force a.h5:/PartType1/Coordinates pk.h5
    assert_success
    assert_output --partial "box 100 (the Header's BoxSize)"
    run --separate-stderr mkdata 1 --particles=4 16x16x16 c.h5
    [ "$status" -eq "$EXIT_USAGE" ]
    [[ $stderr == *"--particles: samples a field of --power-law or --power-table"* ]]
}
