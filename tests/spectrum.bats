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
    local strategies=(alltoall random xorswap pairwise) cases=() i=0 np d w
    local windows=(ngp cic tsc pcs ngp-shotnoise cic-shotnoise tsc-shotnoise pcs-shotnoise)
    for np in 1 2 3 4 5; do
        for d in slab pencil; do
            [ "$np" -gt 1 ] || [ "$d" = slab ] || continue
            w=${windows[i % 8]}
            fftshard "$np" -q --transpose="${strategies[i % 4]}" --decomp=$d --real --compensate=$w \
                --shot-noise=0.25 --los=$((i % 3)) --multipoles=0,2 --box-size=40 --spectrum-only r3.h5 o$i.h5
            cases+=("in=r3.h5 out=o$i.h5 window=$w shot=0.25 los=$((i % 3)) poles=0,2 box=40 only")
            i=$((i + 1))
        done
    done
    fftshard 3 -q --decomp=pencil --compensate=tsc --spectrum-only c3.h5 a.h5
    fftshard 4 -q --real --axes=1,2 --spectrum-per=0 --compensate=pcs --shot-noise=3 --spectrum-only \
        b3.h5 b.h5
    fftshard 4 -q --compensate=cic-shotnoise --spectrum-only c1.h5 c.h5
    fftshard 2 -q --real --cross --power-spectrum --compensate=cic --shot-noise=2,0.5 --los=1 \
        uv.h5:/u uv.h5:/v d.h5
    run spectra "${cases[@]}" "in=c3.h5 out=a.h5 window=tsc only" \
        "in=b3.h5 out=b.h5 axes=1,2 per=0 window=pcs shot=3 only" \
        "in=c1.h5 out=c.h5 window=cic-shotnoise only" \
        "in=uv.h5:/u in=uv.h5:/v out=d.h5 cross power window=cic shot=2,0.5 los=1"
    assert_success
    run python_serial -c "
import h5py
f = h5py.File('d.h5')
p, c = f['power_spectrum'].attrs, f['cross_spectrum'].attrs
print(p['compensate'], p['shot_noise'], list(p['shot_noise_inputs']), c['compensate'], 'shot_noise' in c,
      c['shot_noise_a'], c['shot_noise_b'], p['convention'].split('; ')[1])
print(h5py.File('c.h5')['power_spectrum'].attrs['convention'].split('; ')[1])"
    assert_line --index 0 "cic 2.5 [2.0, 0.5] cic False 2.0 0.5 mean |k| and mean |X|^2 / W(k)^2, W = prod_a sinc(pi f_a / n_a)^2 of the modes, less shot_noise"
    assert_line --index 1 "mean |k| and mean |X|^2 / C(k), C = prod_a sum over m of sinc(pi (f_a / n_a + m))^4 of the modes"
}

@test "--shot-noise=P0[,P0...] is each INPUT's: its own auto spectrum less it, the summed power less their sum, a cross spectrum never" {
    python_serial -c "
import h5py, numpy as np
rng = np.random.default_rng(7)
with h5py.File('ab.h5', 'w') as f:
    for name in 'abc':
        f[name] = rng.standard_normal((16, 12, 10))"
    fftshard 2 -q --real --cross --power-spectrum --box-size=100 --los=0 --shot-noise=3,5 ab.h5:/a ab.h5:/b x.h5
    fftshard 3 -q --real --spectrum-only --box-size=100 --shot-noise=1,2,4 ab.h5:/a ab.h5:/b ab.h5:/c s.h5
    fftshard 1 -q --real --spectrum-only --box-size=100 --shot-noise=7 ab.h5:/b one.h5
    # fftshard(1), SPECTRA, in numpy: shells of k_f = 2 pi / 100, power times V / N^2.
    run python_serial -c "
import h5py, numpy as np
f = h5py.File('ab.h5')
X = {n: np.fft.fftn(f[n][()]) for n in 'abc'}
fr = [np.rint(np.fft.fftfreq(n, 1 / n)) for n in (16, 12, 10)]
k = np.sqrt(sum(g**2 for g in np.meshgrid(*[2 * np.pi * x / 100 for x in fr], indexing='ij')))
shell = np.floor(k / (2 * np.pi / 100) + 0.5).astype(int).ravel()
modes = np.bincount(shell)
factor = 100.0**3 / (16 * 12 * 10)**2
P = lambda v: np.bincount(shell, v.ravel()) / modes * factor
Pa, Pb, Pc = (P(abs(X[n])**2) for n in 'abc')
x = h5py.File('x.h5')
ok = lambda got, want: bool(np.allclose(got[()], want, rtol=1e-10, atol=0))
c = x['cross_spectrum']
print('cross', ok(c['power'], P(np.real(X['a'] * np.conj(X['b'])))), ok(c['power_a'], Pa - 3),
      ok(c['power_b'], Pb - 5), c.attrs['shot_noise_a'], c.attrs['shot_noise_b'])
mu_b = np.nan_to_num(c['power_b_mu'][()] + 5)  # every mu bin of b's own spectrum less b's 5
print('mu', bool(np.allclose((mu_b * c['modes_mu'][()]).sum(axis=1) / c['modes'][()], Pb, rtol=1e-10)))
p = x['power_spectrum']
print('sum of two', ok(p['power'], Pa + Pb - 8), p.attrs['shot_noise'], list(p.attrs['shot_noise_inputs']))
p = h5py.File('s.h5')['power_spectrum']
print('sum of three', ok(p['power'], Pa + Pb + Pc - 7), p.attrs['shot_noise'], list(p.attrs['shot_noise_inputs']))
p = h5py.File('one.h5')['power_spectrum']
print('one', ok(p['power'], Pb - 7), p.attrs['shot_noise'], 'shot_noise_inputs' in p.attrs)"
    assert_success
    assert_line --index 0 "cross True True True 3.0 5.0"
    assert_line --index 1 "mu True"
    assert_line --index 2 "sum of two True 8.0 [3.0, 5.0]"
    assert_line --index 3 "sum of three True 7.0 [1.0, 2.0, 4.0]"
    assert_line --index 4 "one True 7.0 False"
    # One value for two INPUTs is either's or the sum's: refused, naming the way out.
    run --separate-stderr fftshard 2 --real --cross --power-spectrum --shot-noise=5 ab.h5:/a ab.h5:/b r.h5
    assert_failure "$EXIT_USAGE"
    [[ "${stderr_lines[0]}" == "fftshard: error: --shot-noise: 1 value for 2 INPUTs; give one per INPUT in their order, 0 for none (e.g. --shot-noise=0,P0: the second's alone)" ]] ||
        fail "$stderr"
    [ ! -e r.h5 ]
}

@test "--compensate=cic-shotnoise and tsc-shotnoise: a Poisson mesh painted without interlacing keeps no power at high k, where cic and tsc leave up to 3 P0" {
    # A user's mesh: 65536 particles uniform in a box of 1000, painted on 32^3 by
    # cloud in cell and by triangular shaped cloud; delta = counts / mean - 1.
    python_serial -c "
import h5py, numpy as np
rng = np.random.default_rng(2026)
n, Np = 32, 65536
u = rng.uniform(0, n, size=(Np, 3))  # in cells; cell j is centred on j
def paint(weights):
    grid = np.zeros((n, n, n))
    for ix, wx in weights[0]:
        for iy, wy in weights[1]:
            for iz, wz in weights[2]:
                np.add.at(grid, (ix % n, iy % n, iz % n), wx * wy * wz)
    return grid / grid.mean() - 1
i0 = np.floor(u).astype(int); d = u - i0
c = np.rint(u).astype(int); x = u - c
with h5py.File('mesh.h5', 'w') as f:
    f['cic'] = paint([[(i0[:, a], 1 - d[:, a]), (i0[:, a] + 1, d[:, a])] for a in range(3)])
    f['tsc'] = paint([[(c[:, a] - 1, 0.5 * (0.5 - x[:, a])**2), (c[:, a], 0.75 - x[:, a]**2),
                       (c[:, a] + 1, 0.5 * (0.5 + x[:, a])**2)] for a in range(3)])"
    local P0=15258.7890625 s # V / N_particles
    for s in cic tsc; do
        fftshard 2 -q --real --spectrum-only --box-size=1000 --compensate=$s-shotnoise --shot-noise=$P0 \
            mesh.h5:/$s $s-aliased.h5
        fftshard 2 -q --real --spectrum-only --box-size=1000 --compensate=$s --shot-noise=$P0 \
            mesh.h5:/$s $s-flat.h5
    done
    # The truth is no power at any k > 0; the scatter of a shell's mean of M
    # modes (M / 2 independent: the field is real) is P0 sqrt(2 / M).
    run python_serial -c "
import h5py, numpy as np
P0, n, L = 15258.7890625, 32, 1000.0
f = np.fft.fftfreq(n)
m = np.arange(-2000, 2001)
for s, p in ('cic', 2), ('tsc', 3):
    # fftshard(1): C(k) = prod_a sum over the aliases m of sinc(f_a / n_a + m)^2p
    C1 = (np.sinc(f[:, None] + m) ** (2 * p)).sum(axis=1)
    C = C1[:, None, None] * C1[None, :, None] * C1[None, None, :]
    X = np.fft.fftn(h5py.File('mesh.h5')[s][()])
    fr = np.rint(np.fft.fftfreq(n, 1 / n))
    k = np.sqrt(sum(g**2 for g in np.meshgrid(*(2 * np.pi * fr / L,) * 3, indexing='ij')))
    shell = np.floor(k / (2 * np.pi / L) + 0.5).astype(int).ravel()
    modes = np.bincount(shell)
    mine = np.bincount(shell, (abs(X)**2 / C).ravel()) / modes * L**3 / n**6 - P0
    g, flat = h5py.File(s + '-aliased.h5')['power_spectrum'], h5py.File(s + '-flat.h5')['power_spectrum']
    assert np.allclose(g['power'][()], mine, rtol=1e-9, atol=1e-9 * P0), (g['power'][()], mine)
    high = g['k'][()] > 0.5 * np.pi * n / L  # beyond half the Nyquist frequency
    sigma = P0 * np.sqrt(2 / g['modes'][()])
    z, zflat = g['power'][()] / sigma, flat['power'][()] / sigma
    print(s, 'aliased: every shell within 4 sigma of 0:', bool(np.all(abs(z[high]) < 4)),
          'chi2/shell < 2:', bool(np.mean(z[high]**2) < 2))
    print(s, 'flat: off by more than 10 sigma:', bool(np.max(zflat[high]) > 10),
          'by more than 2 P0:', bool(np.max(flat['power'][()][high]) > 2 * P0),
          'largest / P0 %.1f' % np.max(flat['power'][()][high] / P0))"
    assert_success
    assert_line --index 0 "cic aliased: every shell within 4 sigma of 0: True chi2/shell < 2: True"
    assert_line --index 1 --partial "cic flat: off by more than 10 sigma: True by more than 2 P0: True"
    assert_line --index 2 "tsc aliased: every shell within 4 sigma of 0: True chi2/shell < 2: True"
    assert_line --index 3 --partial "tsc flat: off by more than 10 sigma: True by more than 2 P0: True"
}

@test "a box_size attribute (fftshard-mkdata --box-size) is every stage's box: P(k) in its units without --box-size, said in the summary and the report; --box-size that disagrees refused" {
    mkdata 2 -q --type=float64 --power-law=-2 --amplitude=3 --box-size=1000 --seed=5 32x32x32 grf.h5
    run --separate-stderr fftshard 2 --real --spectrum-only --report=r.json grf.h5 pk.h5
    assert_success
    [[ "$stderr" == *$'\n  box: 1000 x 1000 x 1000 from the box_size attribute of grf.h5:/data\n'* ]] || fail "$stderr"
    # fftshard(1), SPECTRA, in numpy: shells of k_f = 2 pi / L, power times V / N^2.
    run python_serial -c "
import h5py, json, numpy as np
L, n = 1000.0, 32
X = np.fft.fftn(h5py.File('grf.h5')['data'][()])
f = np.rint(np.fft.fftfreq(n, 1 / n))
k = np.sqrt(sum(g**2 for g in np.meshgrid(*(2 * np.pi * f / L,) * 3, indexing='ij')))
shell = np.floor(k / (2 * np.pi / L) + 0.5).astype(int).ravel()
modes = np.bincount(shell)
g = h5py.File('pk.h5')['power_spectrum']
print(np.allclose(g['power'][()], np.bincount(shell, abs(X.ravel())**2) / modes * L**3 / n**6, rtol=1e-10),
      np.allclose(g['k'][()], np.bincount(shell, k.ravel()) / modes, rtol=1e-12), g['k'].attrs['units'],
      list(g.attrs['box_size']))
print(json.load(open('r.json'))['box'])"
    assert_success
    assert_line --index 0 "True True rad/box_length_unit [1000.0, 1000.0, 1000.0]"
    assert_line --index 1 "{'lengths': [1000, 1000, 1000], 'from': 'the box_size attribute of grf.h5:/data'}"
    # Every stage on the grid takes it alike: the same files as with --box-size=1000,
    # and the same refusal of a --box-size that disagrees.
    local op
    for op in "--correlation-function --spectrum-only" "--apply=gaussian:40" "--vector=gradient" \
        "--power-spectrum"; do
        fftshard 2 -q --real $op grf.h5 attr.h5
        fftshard 2 -q --real $op --box-size=1000 grf.h5 given.h5
        run python_serial -c "
import h5py, numpy as np
a, b = h5py.File('attr.h5'), h5py.File('given.h5')
names = []
a.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
same = [np.array_equal(a[n][()], b[n][()], equal_nan=True) for n in names]
print(len(names) > 0 and all(same), names[:3])"
        assert_success
        assert_output --partial "True"
        run --separate-stderr fftshard 2 --real $op --box-size=500 grf.h5 bad.h5
        assert_failure "$EXIT_USAGE"
        [ "${stderr_lines[0]}" = "fftshard: error: --box-size=500 disagrees with the box_size attribute 1000 of grf.h5:/data" ] ||
            fail "$op: $stderr"
        [ ! -e bad.h5 ]
        rm -f attr.h5 given.h5
    done
    # A slice keeps the length of a cell: half the rows are half the box.
    run --separate-stderr fftshard 2 --real --spectrum-only 'grf.h5:/data[0:16]' half.h5
    assert_success
    [[ "$stderr" == *$'\n  box: 500 x 1000 x 1000 from the box_size attribute of grf.h5:/data[0:16, :, :]\n'* ]] ||
        fail "$stderr"
    # An attribute that holds no lengths: unusable, unless --box-size says the box.
    python_serial -c "
import h5py, numpy as np
with h5py.File('text.h5', 'w') as f:
    f['x'] = np.zeros((8, 8))
    f['x'].attrs['box_size'] = '1000 Mpc/h'"
    run --separate-stderr fftshard 2 --real --spectrum-only text.h5 t.h5
    assert_failure "$EXIT_INPUT"
    [ "${stderr_lines[0]}" = "fftshard: error: text.h5:/x: the box_size attribute is a string, not lengths; give --box-size (or --box-size=grid)" ] ||
        fail "$stderr"
    fftshard 2 -q --real --spectrum-only --box-size=1000 text.h5 t.h5
    # --box-size=grid: the grid's own lengths, power |X|^2 as without a box.
    fftshard 2 -q --real --spectrum-only --box-size=grid grf.h5 grid.h5
    run python_serial -c "
import h5py, numpy as np
g, a = h5py.File('grid.h5')['power_spectrum'], h5py.File('pk.h5')['power_spectrum']
print(g['k'].attrs['units'], g.attrs['power_factor'], np.allclose(g['power'][()] / 32**3 * 1000**3 / 32**3, a['power'][()], rtol=1e-12))"
    assert_output "rad/grid_spacing 1.0 True"
}

@test "a 1-D series of 2^24 points (2 ranks): the shell count names --bins, and --bins=N and --bins=KMIN:KMAX:DK bin it as numpy does" {
    python_serial -c "
import h5py, numpy as np
with h5py.File('series.h5', 'w') as f:
    f['x'] = np.random.default_rng(24).standard_normal(2**24)"
    run --separate-stderr fftshard 2 --real --spectrum-only series.h5 o.h5
    assert_failure "$EXIT_USAGE"
    [[ "${stderr_lines[0]}" == "fftshard: error: --power-spectrum: 8388608 shells of k_f = 2 pi / 1.67772e+07 up to |k| = 3.14159 (more than 4194304); give --bins=N"* ]] ||
        fail "$stderr"
    [[ "$stderr" != *"--box-size"* ]] || fail "names --box-size, which was not given: $stderr"
    fftshard 2 -q --real --spectrum-only --bins=1000 series.h5 n.h5
    fftshard 2 -q --real --spectrum-only --bins=0:3.2:0.01 series.h5 e.h5
    # fftshard(1), SPECTRA: --bins=N, bin i holds i w <= |k| < (i + 1) w, w = kmax / N,
    # the largest in the last; edges: numpy.digitize. In integers: |k| / k_f = |f|.
    run python_serial -c "
import h5py, numpy as np
n = 2**24
p = abs(np.fft.fft(h5py.File('series.h5')['x'][()]))**2
f = abs(np.rint(np.fft.fftfreq(n, 1 / n))).astype(np.int64)
b = np.minimum(f * 1000 // (n // 2), 999)
modes = np.bincount(b, minlength=1000)
g = h5py.File('n.h5')['power_spectrum']
print('N', np.array_equal(g['modes'][()], modes), np.allclose(g['power'][()], np.bincount(b, p) / modes, rtol=1e-10))
e = 0.01 * np.arange(int(3.2 / 0.01 + 1e-9) + 1)
i = np.digitize(2 * np.pi * f / n, e) - 1
keep = (i >= 0) & (i < len(e) - 1)
modes = np.bincount(i[keep], minlength=len(e) - 1)
g = h5py.File('e.h5')['power_spectrum']
with np.errstate(invalid='ignore'):
    P = np.bincount(i[keep], p[keep], minlength=len(e) - 1) / modes
print('edges', np.array_equal(g['modes'][()], modes), np.allclose(g['power'][()], P, rtol=1e-10, equal_nan=True))"
    assert_success
    assert_line --index 0 "N True True"
    assert_line --index 1 "edges True True"
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

@test "the spectra of the run's results: --apply's and --vector's (curl, the two Helmholtz parts), with and without --spectrum-only" {
    oracle make r.h5 /a=10x7x6:float64 /b=10x7x6:float64 /c=10x7x6:float64 \
        -- c.h5 9x8x7:complex128 -- s.h5 /a=8x6x10:float32 /b=8x6x10:float32 /c=8x6x10:float32
    local v="in=r.h5:/a in=r.h5:/b in=r.h5:/c" w="in=s.h5:/a in=s.h5:/b in=s.h5:/c" cases=()
    fftshard 1 -q --real --apply=gaussian:1.5,deriv:0 --power-spectrum --box-size=5,3,2 r.h5:/a a1.h5
    cases+=("in=r.h5:/a out=a1.h5 apply=gaussian:1.5,deriv:0 box=5,3,2")
    fftshard 3 -q --real --transpose=pairwise --apply=lowpass:2:4 --spectrum-only r.h5:/a r.h5:/b a3.h5
    cases+=("in=r.h5:/a in=r.h5:/b out=a3.h5 apply=lowpass:2:4 only")
    fftshard 4 -q --decomp=pencil --apply=sharpk:2 --spectrum-only --los=1 --multipoles=0,2 \
        c.h5 a4.h5:/run1
    cases+=("in=c.h5 out=a4.h5 apply=sharpk:2 los=1 poles=0,2 group=/run1 only")
    fftshard 2 -q --real --vector=curl --power-spectrum r.h5:/a r.h5:/b r.h5:/c v2.h5
    cases+=("$v out=v2.h5 vector=curl")
    fftshard 4 -q --real --decomp=pencil --transpose=random --vector=helmholtz --spectrum-only \
        --bins=6 r.h5:/a r.h5:/b r.h5:/c v4.h5
    cases+=("$v out=v4.h5 vector=helmholtz bins=6 only")
    fftshard 3 -q --real --vector=helmholtz --spectrum-only --box-size=8,6,10 \
        s.h5:/a s.h5:/b s.h5:/c v3.h5
    cases+=("$w out=v3.h5 vector=helmholtz box=8,6,10 only")
    run spectra "${cases[@]}"
    assert_success
    # the field itself is still the operation's: the inverse ran on the whole box
    run python_serial "$srcdir/tests/apply_oracle.py" check \
        "in=r.h5:/a out=a1.h5:/a apply=gaussian:1.5,deriv:0 box=5,3,2"
    assert_success
    run python_serial "$srcdir/tests/vector_oracle.py" check "op=curl in=r.h5:/a,r.h5:/b,r.h5:/c out=v2.h5"
    assert_success
    # the report names each family's group
    fftshard 2 -q --real --vector=helmholtz --spectrum-only --report=v.json r.h5:/a r.h5:/b r.h5:/c vr.h5
    run python_serial -c 'import json, sys; s = json.load(open("v.json"))["spectra"]
print(" ".join(k for k in s if k != "seconds"))'
    assert_output "power_spectrum_solenoidal power_spectrum_compressive"
    # with a field stage, spectra are of its results: nothing of an INPUT's own
    run --separate-stderr fftshard 2 --real --apply=gaussian:1 --cross r.h5:/a r.h5:/b x.h5
    assert_error 2 "--apply, --cross: the spectra are of --apply's results"
    run --separate-stderr fftshard 2 --real --vector=curl --power-spectrum --shot-noise=1,1,1 \
        r.h5:/a r.h5:/b r.h5:/c x.h5
    assert_error 2 "--vector=curl, --shot-noise: the spectra are of --vector=curl's results"
    [ ! -e x.h5 ] || fail "x.h5 written"
}

@test "the spectrum group keeps the input's time, not the attributes of its values (_FillValue, units, ...)" {
    python_serial -c "
import h5py, numpy as np
x = np.random.default_rng(3).standard_normal((12, 10, 8))
with h5py.File('u.h5', 'w') as f:
    d = f.create_dataset('u', data=x)
    d.attrs['_FillValue'] = np.float64(-9999.0)
    d.attrs['missing_value'] = np.float64(-9999.0)
    d.attrs['units'] = 'm/s'
    d.attrs['long_name'] = 'velocity'
    d.attrs['time'] = 2.5
    d.attrs['viscosity'] = 1e-3"
    fftshard 2 -q --real --spectrum-only u.h5 pk.h5
    run python_serial -c "
import xarray
s = xarray.open_dataset('pk.h5', group='power_spectrum', engine='h5netcdf')
print(sorted(k for k in ('_FillValue', 'missing_value', 'units', 'long_name', 'time', 'viscosity')
             if k in s.attrs), s.attrs['time'], int(s['power'].isnull().sum()))"
    assert_success
    assert_output "['time', 'viscosity'] 2.5 0"
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
        "--shot-noise=-1 --spectrum-only r3.h5" "--shot-noise=1 --cross u.h5 v.h5" \
        "--shot-noise=1,2,3 --cross u.h5 v.h5" "--shot-noise=1,2 --spectrum-only r3.h5" \
        "--shot-noise=1 --spectrum-only u.h5 v.h5 w.h5" "--shot-noise=1,,2 --spectrum-only u.h5 v.h5" \
        "--compensate=cic-aliased --spectrum-only r3.h5"; do
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
    # large enough that the copy is more than a tenth of the peak
    oracle make uv.h5 /u=192x192x128:float64 /v=192x192x128:float64
    fftshard 2 -q --real --cross --spectrum-only --report=r.json uv.h5:/u uv.h5:/v cross.h5
    run --separate-stderr fftshard 2 --dry-run --real --cross --report=plan.json uv.h5:/u
    assert_success
    run python_serial -c "
import json
peak = json.load(open('r.json'))['memory']['peak_bytes_max']
m = json.load(open('plan.json'))['memory_per_rank']
assert m['cross_bytes'] >= 192 * 192 * 65 * 16 // 2, m
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
