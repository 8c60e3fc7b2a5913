#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Spectra (--power-spectrum, --spectrum-only, --cross, --box-size, --bins,
# --los): every spectrum equals tests/spectrum_oracle.py's computation of
# the definition from numpy's full complex fftn (modes exact, k and power
# within 1e-10 relative), on every strategy, slabs and pencils, 1 to 8
# ranks; --spectrum-only writes nothing else; refusals come before any
# work and leave OUTPUT alone.

load helpers

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
}

# spectra CASE...: the oracle's check of each case.
spectra() {
    python_serial "$srcdir/tests/spectrum_oracle.py" check "$@"
}

@test "c2c and --real, 2-D to 4-D, odd and even lengths, every strategy, slab and pencil, 1 to 8 ranks" {
    oracle make c3.h5 9x8x7:complex128 -- r3.h5 10x7x6:float64 -- c2.h5 13x6:complex128 \
        -- r4.h5 5x4x6x3:float64 -- c4.h5 3x5x4x6:complex128
    local strategies=(alltoall random xorswap pairwise) cases=() i=0 np s
    for np in 1 2 3 5 8; do
        s=${strategies[i % 4]}
        fftshard "$np" -q --transpose="$s" --power-spectrum c3.h5 o$i.h5
        cases+=("in=c3.h5 out=o$i.h5")
        i=$((i + 1))
        s=${strategies[i % 4]}
        fftshard "$np" -q --transpose="$s" --real --spectrum-only --box-size=100,50,30 r3.h5 o$i.h5
        cases+=("in=r3.h5 out=o$i.h5 box=100,50,30 only")
        i=$((i + 1))
        s=${strategies[i % 4]}
        fftshard "$np" -q --transpose="$s" --spectrum-only --box-size=2.5 c2.h5 o$i.h5
        cases+=("in=c2.h5 out=o$i.h5 box=2.5 only")
        i=$((i + 1))
        [ "$np" -gt 1 ] || continue
        s=${strategies[i % 4]}
        fftshard "$np" -q --transpose="$s" --decomp=pencil --real --spectrum-only r4.h5 o$i.h5
        cases+=("in=r4.h5 out=o$i.h5 only")
        i=$((i + 1))
    done
    for s in "${strategies[@]}"; do
        fftshard 4 -q --transpose="$s" --decomp=pencil --power-spectrum c4.h5 o$i.h5
        cases+=("in=c4.h5 out=o$i.h5")
        i=$((i + 1))
        fftshard 3 -q --transpose="$s" --decomp=slab --real --spectrum-only r3.h5 o$i.h5
        cases+=("in=r3.h5 out=o$i.h5 only")
        i=$((i + 1))
    done
    run spectra "${cases[@]}"
    assert_success
}

@test "one dimension (four-step), batch axes, float32 and integer input, a rank with nothing" {
    oracle make c1.h5 60:complex128 -- r1.h5 60:float64 -- r3.h5 10x7x6:float64 \
        -- f3.h5 8x6x10:float32 -- i3.h5 6x5x4:int32 -- thin.h5 2x9x8:float64
    fftshard 4 -q --power-spectrum c1.h5 o1.h5
    fftshard 4 -q --real --spectrum-only r1.h5 o2.h5
    fftshard 3 -q --real --axes=1,2 --spectrum-only r3.h5 o3.h5
    fftshard 3 -q --real --axes=0,2 --spectrum-only r3.h5 o4.h5
    fftshard 3 -q --real --spectrum-only f3.h5 o5.h5
    fftshard 3 -q --real --spectrum-only i3.h5 o6.h5
    fftshard 3 -q --real --axes=1,2 --spectrum-only thin.h5 o7.h5
    run spectra "in=c1.h5 out=o1.h5" "in=r1.h5 out=o2.h5" "in=r3.h5 out=o3.h5 axes=1,2" \
        "in=r3.h5 out=o4.h5 axes=0,2" "in=f3.h5 out=o5.h5" "in=i3.h5 out=o6.h5" \
        "in=thin.h5 out=o7.h5 axes=1,2"
    assert_success
}

@test "--bins=N, --bins=edges, --los with mu bins" {
    oracle make c3.h5 9x8x7:complex128 -- r3.h5 10x7x6:float64 -- r4.h5 5x4x6x3:float64
    fftshard 4 -q --real --axes=0,2,3 --bins=7 --spectrum-only r4.h5 o1.h5
    fftshard 2 -q --bins=0.5,1,2,2.5 --spectrum-only c3.h5 o2.h5
    fftshard 3 -q --real --los=0 --mu-bins=4 --spectrum-only r3.h5 o3.h5
    fftshard 2 -q --real --los=-1 --decomp=pencil --box-size=5,6,7 --spectrum-only r3.h5 o4.h5
    run spectra "in=r4.h5 out=o1.h5 axes=0,2,3 bins=7" "in=c3.h5 out=o2.h5 bins=0.5,1,2,2.5" \
        "in=r3.h5 out=o3.h5 los=0 mubins=4" "in=r3.h5 out=o4.h5 los=2 box=5,6,7"
    assert_success
}

@test "bins are half-open [E_i, E_i+1) decided on the lattice: numpy.digitize's counts, ties on the edges" {
    oracle make c3.h5 9x8x7:complex128 -- r2.h5 8x8:float64 -- r3.h5 12x6x6:float64 \
        -- b3.h5 4x12x10:float64
    # k_f = 1 with a box of 2 pi: the edges 0, 1, 2, ... hold lattice points (|k|^2 = 1, 4, 9, ...).
    local twopi=6.283185307179586 kf
    kf=$(python_serial -c "import math; print(','.join(repr(i * 2 * math.pi / 12) for i in range(10)))")
    fftshard 1 -q --box-size=$twopi --bins=0:12:1 --spectrum-only c3.h5 o1.h5
    fftshard 3 -q --transpose=random --decomp=pencil --box-size=$twopi --bins=0:12:1 --spectrum-only c3.h5 o2.h5
    fftshard 2 -q --transpose=xorswap --real --bins=4 --spectrum-only r2.h5 o3.h5
    fftshard 4 -q --transpose=pairwise --real --bins="$kf" --spectrum-only r3.h5 o4.h5
    fftshard 5 -q --transpose=alltoall --real --box-size=12,6,6 --bins="$kf" --spectrum-only r3.h5 o5.h5
    fftshard 2 -q --real --axes=1,2 --box-size=$twopi --bins=1:5.5:0.5 --spectrum-only b3.h5 o6.h5
    run spectra "in=c3.h5 out=o1.h5 box=$twopi bins=0:12:1" "in=c3.h5 out=o2.h5 box=$twopi bins=0:12:1" \
        "in=r2.h5 out=o3.h5 bins=4" "in=r3.h5 out=o4.h5 bins=$kf" "in=r3.h5 out=o5.h5 box=12,6,6 bins=$kf" \
        "in=b3.h5 out=o6.h5 axes=1,2 box=$twopi bins=1:5.5:0.5"
    assert_success
    # numpy.digitize on the written edges, |k| from the integer frequencies: the same counts.
    run python_serial -c "
import h5py, numpy as np
f = np.rint(np.fft.fftfreq(9, 1 / 9)), np.rint(np.fft.fftfreq(8, 1 / 8)), np.rint(np.fft.fftfreq(7, 1 / 7))
k = np.sqrt(sum(g**2 for g in np.meshgrid(*f, indexing='ij')))
for out in 'o1.h5', 'o2.h5':
    g = h5py.File(out)['power_spectrum']
    e = g['edges'][()]
    assert list(e) == list(range(13)), e
    i = np.digitize(k.ravel(), e)
    ref = np.bincount(i[(i > 0) & (i < len(e))] - 1, minlength=len(e) - 1)
    assert (g['modes'][()] == ref).all(), (g['modes'][()], ref)
    on = np.isin(k, e).sum()
print('ties', on)"
    assert_success
    assert_output "ties 62"
}

@test "--multipoles: P_l(k) = (2l + 1) <|X|^2 L_l(mu)>, odd shapes, every strategy, slab and pencil, 1 to 5 ranks" {
    oracle make c3.h5 9x7x5:complex128 -- r3.h5 11x9x7:float64 -- r4.h5 3x9x5x7:float64 \
        -- uv.h5 /u=9x8x7:float64 /v=9x8x7:float64
    local strategies=(alltoall random xorswap pairwise) cases=() i=0 np d
    for np in 1 2 3 4 5; do
        for d in slab pencil; do
            [ "$np" -gt 1 ] || [ "$d" = slab ] || continue
            fftshard "$np" -q --transpose="${strategies[i % 4]}" --decomp=$d --real --los=$((i % 3)) \
                --multipoles=0,2,4 --spectrum-only r3.h5 o$i.h5
            cases+=("in=r3.h5 out=o$i.h5 los=$((i % 3)) poles=0,2,4")
            i=$((i + 1))
        done
    done
    fftshard 3 -q --decomp=pencil --los=-1 --multipoles=0,2,4,6 --box-size=30,20,10 --bins=6 \
        --spectrum-only c3.h5 o$i.h5
    cases+=("in=c3.h5 out=o$i.h5 los=2 poles=0,2,4,6 box=30,20,10 bins=6")
    fftshard 4 -q --transpose=pairwise --real --axes=1,2,3 --los=2 --multipoles=2 --spectrum-only \
        r4.h5 o$((i + 1)).h5
    cases+=("in=r4.h5 out=o$((i + 1)).h5 axes=1,2,3 los=2 poles=2")
    fftshard 2 -q --real --cross --power-spectrum --los=0 --multipoles=0,2 uv.h5:/u uv.h5:/v \
        o$((i + 2)).h5
    cases+=("in=uv.h5:/u in=uv.h5:/v out=o$((i + 2)).h5 cross power los=0 poles=0,2")
    run spectra "${cases[@]}"
    assert_success
    # The monopole is the power.
    run python_serial -c "
import h5py, numpy as np
g = h5py.File('o0.h5')['power_spectrum']
print(np.allclose(g['power_0'][()], g['power'][()], rtol=1e-12), sorted(k for k in g if k[6:].isdigit()))"
    assert_output "True ['power_0', 'power_2', 'power_4']"
}

@test "--spectrum-per: a spectrum per index of batch axes, each that of its slice; odd shapes, every strategy, slab and pencil, 1 to 5 ranks" {
    oracle make r3.h5 7x9x8:float64 -- c3.h5 9x7x5:complex128 -- r4.h5 3x5x9x7:float64 \
        -- b4.h5 5x9x7x4:float64 -- uv.h5 /u=4x9x7:float64 /v=4x9x7:float64
    local strategies=(alltoall random xorswap pairwise) cases=() i=0 np d
    for np in 1 2 3 4 5; do
        for d in slab pencil; do
            [ "$np" -gt 1 ] || [ "$d" = slab ] || continue
            fftshard "$np" -q --transpose="${strategies[i % 4]}" --decomp=$d --real --axes=1,2 \
                --spectrum-per=0 --spectrum-only r3.h5 o$i.h5
            cases+=("in=r3.h5 out=o$i.h5 axes=1,2 per=0 only")
            i=$((i + 1))
        done
    done
    # The slice along the rows (the last axis), a pooled batch axis beside one per slice,
    # two axes per slice with mu bins and multipoles, --cross.
    fftshard 3 -q --transpose=xorswap --axes=0,1 --spectrum-per=-1 --bins=4 --spectrum-only c3.h5 a.h5
    fftshard 4 -q --decomp=pencil --real --axes=2,3 --spectrum-per=1 --box-size=2 --spectrum-only \
        r4.h5 b.h5
    fftshard 5 -q --transpose=pairwise --real --axes=1,2 --spectrum-per=3,0 --los=1 --multipoles=0,2 \
        --spectrum-only b4.h5 c.h5
    fftshard 2 -q --real --axes=1,2 --spectrum-per=0 --cross --power-spectrum uv.h5:/u uv.h5:/v d.h5
    run spectra "${cases[@]}" "in=c3.h5 out=a.h5 axes=0,1 per=2 bins=4 only" \
        "in=r4.h5 out=b.h5 axes=2,3 per=1 box=2 only" \
        "in=b4.h5 out=c.h5 axes=1,2 per=0,3 los=1 poles=0,2 only" \
        "in=uv.h5:/u in=uv.h5:/v out=d.h5 axes=1,2 per=0 cross power"
    assert_success
    run python_serial -c "
import h5py
g = h5py.File('c.h5')['power_spectrum']
print(g['power'].shape, g['power_mu'].shape, g['modes'].shape, list(g.attrs['spectrum_per']))"
    assert_output "(5, 4, 7) (5, 4, 7, 5) (7,) [0, 3]"
    run --separate-stderr fftshard 2 --real --axes=1,2 --spectrum-per=0 --spectrum-only r3.h5 s.h5
    assert_success
    [[ "$stderr" == *"spectrum: 7 bins x 7 slices (shells of k_f"* ]]
    # Sums beyond 1 GiB per rank: refused before any work.
    oracle make many.h5 3000x2x2:float64
    run --separate-stderr fftshard 2 --axes=1,2 --spectrum-per=0 --los=1 --mu-bins=1000 \
        --multipoles=0,2,4,6,8,10,12,14 --spectrum-only many.h5 m.h5
    assert_failure "$EXIT_USAGE"
    [[ "$stderr" == "fftshard: error: --spectrum-per: 3000 spectra of 2 bins need 1.0 GiB of sums"* ]]
    [ ! -e m.h5 ]
}

@test "--compensate divides by prod_a sinc(pi f_a / n_a)^2p, --shot-noise subtracts P0: odd shapes, every strategy, slab and pencil, 1 to 5 ranks" {
    oracle make r3.h5 11x9x7:float64 -- c3.h5 9x8x7:complex128 -- b3.h5 5x9x7:float64 \
        -- c1.h5 60:complex128 -- uv.h5 /u=9x8x7:float64 /v=9x8x7:float64
    local strategies=(alltoall random xorswap pairwise) windows=(ngp cic tsc pcs) cases=() i=0 np d w
    for np in 1 2 3 4 5; do
        for d in slab pencil; do
            [ "$np" -gt 1 ] || [ "$d" = slab ] || continue
            w=${windows[i % 4]}
            fftshard "$np" -q --transpose="${strategies[i % 4]}" --decomp=$d --real --compensate=$w \
                --shot-noise=0.25 --los=$((i % 3)) --multipoles=0,2 --box-size=40 --spectrum-only r3.h5 o$i.h5
            cases+=("in=r3.h5 out=o$i.h5 window=$w shot=0.25 los=$((i % 3)) poles=0,2 box=40 only")
            i=$((i + 1))
        done
    done
    fftshard 3 -q --decomp=pencil --compensate=tsc --spectrum-only c3.h5 a.h5
    fftshard 4 -q --real --axes=1,2 --spectrum-per=0 --compensate=pcs --shot-noise=3 --spectrum-only \
        b3.h5 b.h5
    fftshard 4 -q --compensate=cic --spectrum-only c1.h5 c.h5
    fftshard 2 -q --real --cross --power-spectrum --compensate=cic --shot-noise=2 uv.h5:/u uv.h5:/v d.h5
    run spectra "${cases[@]}" "in=c3.h5 out=a.h5 window=tsc only" \
        "in=b3.h5 out=b.h5 axes=1,2 per=0 window=pcs shot=3 only" "in=c1.h5 out=c.h5 window=cic only" \
        "in=uv.h5:/u in=uv.h5:/v out=d.h5 cross power window=cic shot=2"
    assert_success
    run python_serial -c "
import h5py
f = h5py.File('d.h5')
p, c = f['power_spectrum'].attrs, f['cross_spectrum'].attrs
print(p['compensate'], p['shot_noise'], c['compensate'], 'shot_noise' in c, p['convention'].split('; ')[1])"
    assert_output "cic 2.0 cic False mean |k| and mean |X|^2 / W(k)^2, W = prod_a sinc(pi f_a / n_a)^2 of the modes, less shot_noise"
}

@test "E(k) for any --box-size: 0.5 power modes / V over the shells adds up to the mean kinetic energy 1/2 <|u|^2>" {
    oracle make snap.h5 /u=9x8x7:float64 /v=9x8x7:float64 /w=9x8x7:float64
    local box
    for box in 6.283185307179586 7.5 3,4,5 none; do
        if [ "$box" = none ]; then
            fftshard 3 -q --real --spectrum-only snap.h5:/u snap.h5:/v snap.h5:/w e_$box.h5
        else
            fftshard 2 -q --real --box-size=$box --spectrum-only snap.h5:/u snap.h5:/v snap.h5:/w e_$box.h5
        fi
    done
    run python_serial -c "
import h5py, math, numpy as np
f = h5py.File('snap.h5')
energy = 0.5 * np.mean(f['u'][()]**2 + f['v'][()]**2 + f['w'][()]**2)
for box, V in ('6.283185307179586', (2 * math.pi)**3), ('7.5', 7.5**3), ('3,4,5', 60.0), ('none', (9 * 8 * 7)**2):
    g = h5py.File('e_%s.h5' % box)['power_spectrum']
    p, m, kf = np.nan_to_num(g['power'][()]), g['modes'][()], g.attrs['k_fundamental']
    E = 0.5 * p * m / V
    assert abs(E.sum() / energy - 1) < 1e-12, (box, E.sum(), energy)
    if box == '6.283185307179586':
        assert kf == 1.0 and abs((0.5 * p * m / (2 * math.pi)**3 * kf).sum() / energy - 1) < 1e-12
print('ok')"
    assert_success
    assert_output ok
}

# bats test_tags=sanitized
@test "several inputs add their power; --cross gives Re(Xa conj Xb) and both power spectra" {
    oracle make snap.h5 /u=8x6x5:float64 /v=8x6x5:float64 /w=8x6x5:float64
    fftshard 3 -q --real --spectrum-only snap.h5:/u snap.h5:/v snap.h5:/w sum.h5
    fftshard 2 -q --real --cross --los=1 --spectrum-only snap.h5:/u snap.h5:/v cross.h5
    fftshard 3 -q --real --cross --power-spectrum snap.h5:/u snap.h5:/w both.h5
    run spectra "in=snap.h5:/u in=snap.h5:/v in=snap.h5:/w out=sum.h5 only" \
        "in=snap.h5:/u in=snap.h5:/v out=cross.h5 cross los=1 only" \
        "in=snap.h5:/u in=snap.h5:/w out=both.h5 cross power"
    assert_success
    # Beside the spectra, --power-spectrum keeps the transformed results
    # (with their coordinates k0, k1, k2 and the complex type netCDF-4 reads).
    run python_serial -c "import h5py; f = h5py.File('both.h5'); print(sorted(f), f['u'].shape)"
    assert_output "['_PFNC_DOUBLE_COMPLEX_TYPE', 'cross_spectrum', 'k0', 'k1', 'k2', 'power_spectrum', 'u', 'w'] (8, 6, 3)"
}

@test "the report and the summary carry the spectrum" {
    oracle make r3.h5 10x7x6:float64
    run --separate-stderr fftshard 2 --real --spectrum-only --report=r.json r3.h5 o.h5
    assert_success
    [[ "$stderr" == *"spectrum: "*" bins (shells of k_f, k_f 0.628319) in o.h5:/power_spectrum"* ]]
    run python_serial -c "
import json, h5py, math
r = json.load(open('r.json'))['spectra']
g = h5py.File('o.h5')['power_spectrum']
assert r['power_spectrum']['modes'] == list(g['modes'][()])
assert all(math.isclose(a, b, rel_tol=1e-8) for a, b in zip(r['power_spectrum']['power'], g['power'][()]))
assert r['seconds'] >= 0
print(g.attrs['inputs'], g.attrs['convention'].split(':')[0])"
    assert_output "r3.h5:/data power spectrum |X|^2 per bin of |k|"
}

@test "refusals: options that do not fit, before any work, OUTPUT untouched" {
    oracle make r3.h5 10x7x6:float64 -- c3.h5 9x8x7:complex128 -- u.h5 4x4:float64 \
        -- v.h5 4x4:float64 -- w.h5 4x4:float64
    echo keep >out.h5
    local args
    for args in "--los=1 --axes=0,2 --spectrum-only r3.h5" "--box-size=1,2 --spectrum-only r3.h5" \
        "--cross u.h5 v.h5 w.h5" "--inverse --power-spectrum r3.h5" "--spectrum-only r3.h5 c3.h5" \
        "--bins=3,2 --power-spectrum r3.h5" "--mu-bins=3 --power-spectrum r3.h5" \
        "--box-size=1 r3.h5" "--power-spectrum --shard-output r3.h5" "--cross u.h5" \
        "--bins=0:1:2 --spectrum-only r3.h5" "--bins=1:2 --spectrum-only r3.h5" \
        "--multipoles=0,2 --spectrum-only r3.h5" "--los=0 --multipoles=1 --spectrum-only r3.h5" \
        "--los=0 --multipoles=2,0 --spectrum-only r3.h5" "--spectrum-per=0 --spectrum-only r3.h5" \
        "--axes=1,2 --spectrum-per=0,-3 --spectrum-only r3.h5" "--spectrum-per=0 r3.h5" \
        "--compensate=cloud --spectrum-only r3.h5" "--compensate=cic r3.h5" \
        "--shot-noise=-1 --spectrum-only r3.h5" "--shot-noise=1 --cross u.h5 v.h5"; do
        run --separate-stderr fftshard 2 -f $args out.h5
        assert_failure "$EXIT_USAGE"
        [ "$(echo "$stderr" | grep -c 'fftshard: error:')" -eq 1 ]
        [ "$(cat out.h5)" = keep ]
    done
    # OUTPUT's path is the group the spectrum goes under (series.bats): one
    # too long for the spectrum's path is refused
    run --separate-stderr fftshard 2 -f --spectrum-only r3.h5 "out.h5:/$(printf 'x%.0s' {1..1010})"
    assert_failure "$EXIT_USAGE"
    [[ "$stderr" == *": group path too long (at most 1008 bytes)"* ]] || fail "$stderr"
    [ "$(cat out.h5)" = keep ]
}

@test "--add: an existing spectrum needs --force, which replaces it and keeps the rest" {
    oracle make c3.h5 9x8x7:complex128 -- base.h5 /keep=3x3:float64
    fftshard 2 -q --add --spectrum-only c3.h5 base.h5
    cp base.h5 before.h5
    run --separate-stderr fftshard 2 --add --spectrum-only --bins=3 c3.h5 base.h5
    assert_failure "$EXIT_OUTPUT"
    [[ "$stderr" == *"base.h5:/power_spectrum: the file holds a spectrum"* ]]
    cmp base.h5 before.h5
    fftshard 2 -q --add -f --spectrum-only --bins=3 c3.h5 base.h5
    run spectra "in=c3.h5 out=base.h5 bins=3"
    assert_success
    run python_serial -c "import h5py; f = h5py.File('base.h5'); print(sorted(f), f['keep'].shape)"
    assert_output "['keep', 'power_spectrum'] (3, 3)"
}

@test "the dry run counts --cross's copy of the first result: within 10% of the real peak" {
    oracle make uv.h5 /u=96x96x128:float64 /v=96x96x128:float64
    fftshard 2 -q --real --cross --spectrum-only --report=r.json uv.h5:/u uv.h5:/v cross.h5
    run --separate-stderr fftshard 2 --dry-run --real --cross --report=plan.json uv.h5:/u
    assert_success
    run python_serial -c "
import json
peak = json.load(open('r.json'))['memory']['peak_bytes_max']
m = json.load(open('plan.json'))['memory_per_rank']
assert m['cross_bytes'] >= 96 * 96 * 65 * 16 // 2, m
print(abs(m['total_bytes'] / peak - 1) < 0.10, m['total_bytes'] - m['cross_bytes'] < 0.9 * peak)"
    assert_output "True True"
}

@test "a Gaussian random field of 256^3 with P(k) = A k^-2: the measured slope within 0.05 of -2" {
    mkdata 2 -q --type=float32 --power-law=-2 --amplitude=3 --box-size=1000 --seed=11 \
        256x256x256 grf.h5
    fftshard 2 -q --real --spectrum-only --box-size=1000 grf.h5 pk.h5
    # The middle of the k range: from 4 k_f to half the Nyquist frequency.
    run python_serial -c "
import h5py, numpy as np
g = h5py.File('pk.h5')['power_spectrum']
k, p = g['k'][()], g['power'][()]
sel = (k > 4 * g.attrs['k_fundamental']) & (k < 0.5 * np.pi * 256 / 1000)
slope, lna = np.polyfit(np.log(k[sel]), np.log(p[sel]), 1)
print(sel.sum() > 30, abs(slope + 2) < 0.05, abs(np.exp(lna) / 3 - 1) < 0.1, slope)"
    assert_output --partial "True True True"
}

@test "the inputs attribute names all 50 inputs of long names, whole (one variable-length string)" {
    python_serial -c 'import h5py, numpy as np
with h5py.File("many.h5", "w") as f:
    for i in range(50):
        f["/dataset_with_a_rather_long_descriptive_name_number_%02d_of_fifty" % i] = np.arange(16.0).reshape(4, 4) + i'
    local names=() i
    for ((i = 0; i < 50; i++)); do
        names+=("many.h5:/dataset_with_a_rather_long_descriptive_name_number_$(printf %02d "$i")_of_fifty")
    done
    fftshard 2 --quiet --power-spectrum --spectrum-only "${names[@]}" sp.h5
    run python_serial -c 'import h5py, sys
with h5py.File("sp.h5") as f:
    a = f["power_spectrum"].attrs["inputs"]
    t = f["power_spectrum"].attrs.get_id("inputs").get_type()
print(type(a).__name__, t.is_variable_str(), len(a), a == ", ".join(sys.argv[1:]))' "${names[@]}"
    assert_success
    assert_output "str True 3648 True"
}
