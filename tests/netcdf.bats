#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Spectra read by the netCDF-4 library (netCDF4) and by xarray (h5netcdf)
# without options: every table has named dimensions whose coordinates are
# k, edges, the mu bins and the slices' axes, with units and long names.
# Transformed results too: netCDF4.Dataset and xarray (h5netcdf and its
# default engine) show each with the coordinates tests/coords_oracle.py
# computes from the definition (2 pi numpy.fft.fftfreq / rfftfreq, the
# positions of an inverse, the input's own batch coordinates), and complex
# values equal to h5py's. --add into files written by netCDF4 and by xarray
# (netcdf4 and h5netcdf engines) with dimensions in groups: every reader
# sees each result and spectrum with its own dimensions (the scales carry
# _Netcdf4Dimid, unique in the file), and a dimension a variable uses is
# never replaced.

load helpers

# coords CASE...: tests/coords_oracle.py's check of each result.
coords() {
    python_serial "$srcdir/tests/coords_oracle.py" "$@"
}

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    python_serial -c "import netCDF4, xarray, h5netcdf" 2>/dev/null ||
        skip "needs python3-netcdf4, python3-xarray and python3-h5netcdf"
}

@test "a spectrum with mu bins, multipoles and a spectrum per slice: netCDF4 and xarray see its dimensions and coordinates" {
    oracle make b4.h5 5x9x7x4:float64
    fftshard 2 -q --real --axes=1,2 --spectrum-per=0,3 --los=1 --multipoles=0,2 --box-size=100 \
        --spectrum-only b4.h5 s.h5
    run python_serial -c "
import netCDF4, numpy as np, xarray as xr
d = netCDF4.Dataset('s.h5').groups['power_spectrum']
v = d.variables
print(v['power'].dimensions, v['power_mu'].dimensions, v['modes'].dimensions, v['edges'].dimensions)
print(v['k'].units, v['power'].units, v['k_mu'].dimensions, v['power_2'].long_name)
x = xr.open_dataset('s.h5', group='power_spectrum', engine='h5netcdf')
print(sorted(x.coords), x['power'].dims, x['power'].sizes['axis0'])
h = xr.open_dataset('s.h5', group='power_spectrum', engine='netcdf4')
assert np.array_equal(h['power'].values, x['power'].values, equal_nan=True)
assert np.array_equal(x['k'].values, x['power'].k.values, equal_nan=True)
print(list(x['axis3'].values), x['mu_bin'].values[0])"
    assert_success
    assert_line --index 0 "('axis0', 'axis3', 'k') ('axis0', 'axis3', 'k', 'mu_bin') ('k',) ('edges',)"
    assert_line --index 1 "rad/box_length_unit box_length_unit^2 ('k', 'mu_bin') Legendre multipole l = 2: (2l + 1) <|X|^2 L_l(mu)>"
    assert_line --index 2 "['axis0', 'axis3', 'edges', 'k', 'mu_bin', 'mu_edges'] ('axis0', 'axis3', 'k') 5"
    assert_line --index 3 "[0, 1, 2, 3] 0.1"
}

@test "a cross spectrum beside the power spectrum: both groups readable" {
    oracle make uv.h5 /u=9x8x7:float64 /v=9x8x7:float64
    fftshard 3 -q --real --cross --power-spectrum --spectrum-only uv.h5:/u uv.h5:/v c.h5
    run python_serial -c "
import netCDF4, xarray as xr
d = netCDF4.Dataset('c.h5')
for g in 'cross_spectrum', 'power_spectrum':
    v = d.groups[g].variables
    print(g, sorted(v), v['power'].dimensions, v['k'].long_name)
x = xr.open_dataset('c.h5', group='cross_spectrum', engine='h5netcdf')
print(x['power_a'].dims, x['power'].attrs['long_name'])"
    assert_success
    assert_line --index 0 "cross_spectrum ['edges', 'k', 'modes', 'power', 'power_a', 'power_b'] ('k',) mean |k| of the bin's modes"
    assert_line --index 1 "power_spectrum ['edges', 'k', 'modes', 'power'] ('k',) mean |k| of the bin's modes"
    assert_line --index 2 "('k',) mean Re(X_a conj X_b) of the bin's modes"
}

@test "transformed results: netCDF4 and xarray see k = 2 pi fftfreq (rfftfreq for --real, 2 pi / L with a spectrum's --box-size), 1 and 3 ranks, float32 and float64" {
    oracle make c3.h5 6x5x4:complex128 -- r3.h5 7x6x5:float32 -- one.h5 12:float64 \
        -- b4.h5 5x6x4x3:float64
    fftshard 1 -q c3.h5 o1.h5
    fftshard 3 -q --real r3.h5 o2.h5
    fftshard 3 -q --real --axes=2,0 --power-spectrum --box-size=10,2.5 r3.h5 o3.h5
    fftshard 1 -q --power-spectrum --box-size=3 one.h5 o4.h5
    fftshard 3 -q --decomp=pencil --axes=1,3 b4.h5 o5.h5
    run coords "in=c3.h5 out=o1.h5" "in=r3.h5 out=o2.h5 real" \
        "in=r3.h5 out=o3.h5 real axes=2,0 box=10,2.5" "in=one.h5 out=o4.h5 box=3" \
        "in=b4.h5 out=o5.h5 axes=1,3"
    assert_success
    assert_output "ok 5"
    # what each reader is given: netCDF4 a compound {r, i} of the type named as
    # netCDF's complex convention, h5netcdf numpy complex, h5py numpy complex
    run python_serial -c "
import h5py, netCDF4, xarray as xr
d = netCDF4.Dataset('o2.h5')
print(sorted(d.variables), d['data'].dimensions, d['data'].datatype.name, d['data'].datatype.dtype.names)
print(d['k2'].units, d['k2'].long_name)
print(xr.open_dataset('o2.h5', engine='h5netcdf')['data'].dtype, h5py.File('o2.h5')['data'].dtype)
x = xr.open_dataset('o5.h5')
print(x['data'].dims, x['axis0'].attrs['units'], x['axis0'].attrs['long_name'])"
    assert_success
    assert_line --index 0 "['data', 'k0', 'k1', 'k2'] ('k0', 'k1', 'k2') _PFNC_FLOAT_COMPLEX_TYPE ('r', 'i')"
    assert_line --index 1 "rad/grid_spacing wave number along axis 2: 2 pi numpy.fft.rfftfreq(5, L/5), L = 5"
    assert_line --index 2 "complex64 complex64"
    assert_line --index 3 "('axis0', 'k1', 'axis2', 'k3') 1 index along axis 0"
}

@test "batch axes keep the input's coordinates; several inputs share theirs; --inverse of a result reads it back with positions x" {
    python_serial -c "
import h5py, numpy as np
r = np.random.default_rng(5)
with h5py.File('snap.h5', 'w') as f:
    t = f.create_dataset('time', data=np.array([0.5, 1.5, 2.5, 4.0]))
    t.make_scale('time')
    t.attrs['units'] = 's'
    t.attrs['long_name'] = 'time of the snapshot'
    for name, dt in ('u', '<f4'), ('v', '<f8'), ('w', '<f8'):
        f[name] = r.standard_normal((4, 6, 5)).astype(dt)
        f[name].dims[0].attach_scale(t)"
    fftshard 2 -q --axes=1,2 snap.h5:/u snap.h5:/v snap.h5:/w out.h5
    run coords "in=snap.h5:/u out=out.h5 axes=1,2" "in=snap.h5:/v out=out.h5 axes=1,2" \
        "in=snap.h5:/w out=out.h5 axes=1,2"
    assert_success
    assert_output "ok 3"
    run python_serial -c "
import h5py, netCDF4
f = h5py.File('out.h5')
print(sorted(n for n, o in f.items() if isinstance(o, h5py.Dataset)), f['u'].dtype, f['v'].dtype)
d = netCDF4.Dataset('out.h5')
print(d['time'].units, d['time'].long_name, d['u'].dimensions == d['w'].dimensions)"
    assert_success
    assert_line --index 0 "['k1', 'k2', 'time', 'u', 'v', 'w'] complex64 complex128"
    assert_line --index 1 "s time of the snapshot True"
    # the result as INPUT: named, or the only dataset that is no coordinate
    fftshard 2 -q --real --axes=2 snap.h5:/v half.h5
    fftshard 3 -q --inverse --real --axes=2 half.h5 back.h5
    fftshard 2 -q --inverse --axes=1,2 out.h5:/v backv.h5
    CASES=("in=half.h5 out=back.h5 inverse real axes=2 last=5 expect=snap.h5:/v")
    check_all
    run coords "in=half.h5 out=back.h5 inverse real axes=2 last=5" \
        "in=out.h5:/v out=backv.h5 inverse axes=1,2"
    assert_success
    assert_output "ok 2"
    # a listing of the datasets names no coordinate
    run --separate-stderr fftshard 1 --inverse half.h5:/nothing back2.h5
    assert_error "$EXIT_INPUT" "datasets in the file: /v)"
}

@test "results named like coordinates: the coordinates move aside (x1_2), each result is written and right" {
    python_serial -c "
import h5py, numpy as np
r = np.random.default_rng(7)
with h5py.File('nm.h5', 'w') as f:
    for name in 'k1', 'x1':
        f[name] = r.standard_normal((8, 6)) + 1j * r.standard_normal((8, 6))"
    # the first result's positions would be /x0 and /x1, the second result's path
    fftshard 2 -q --inverse nm.h5:/k1 nm.h5:/x1 out.h5
    run coords "in=nm.h5:/k1 out=out.h5 inverse names=x0,x1_2" \
        "in=nm.h5:/x1 out=out.h5 inverse names=x0,x1_2"
    assert_success
    assert_output "ok 2"
    run python_serial -c "
import h5py, numpy as np
f, g = h5py.File('out.h5'), h5py.File('nm.h5')
print(sorted(n for n, o in f.items() if isinstance(o, h5py.Dataset)))
for n in 'k1', 'x1':
    want = np.fft.ifftn(g[n][...])
    print(n, abs(f[n][...] - want).max() <= 1e-12 * abs(want).max(), [list(d.keys()) for d in f[n].dims])"
    assert_success
    assert_line --index 0 "['k1', 'x0', 'x1', 'x1_2']"
    assert_line --index 1 "k1 True [['x0'], ['x1_2']]"
    assert_line --index 2 "x1 True [['x0'], ['x1_2']]"
}

@test "--add onto a file with coordinates shares or adds them; --add --force replaces a result and detaches its own" {
    oracle make a.h5 /u=6x4:float64 /v=6x4:float64 /w=6x5:float64
    fftshard 2 -q a.h5:/u out.h5
    fftshard 2 -q --add a.h5:/v out.h5
    fftshard 2 -q --add a.h5:/w out.h5:/g/w
    fftshard 2 -q --add --force --axes=1 --power-spectrum --box-size=8 a.h5:/u out.h5
    # /u's k1 (box 8) differs from /v's: it takes the next name
    run coords "in=a.h5:/u out=out.h5 axes=1 box=8 names=axis0,k1_2" "in=a.h5:/v out=out.h5" \
        "in=a.h5:/w out=out.h5:/g/w"
    assert_success
    assert_output "ok 3"
    run python_serial -c "
import h5py
f = h5py.File('out.h5')
print(sorted(n for n, o in f.items() if isinstance(o, h5py.Dataset)))
print([f[r[0]].name for r in f['k1'].attrs['REFERENCE_LIST']], [f[r[0]].name for r in f['k1_2'].attrs['REFERENCE_LIST']])"
    assert_success
    assert_line --index 0 "['axis0', 'k0', 'k1', 'k1_2', 'u', 'v']"
    assert_line --index 1 "['/v'] ['/u']"
}

# netcdf_files: the same layout written by netCDF4 (nc4.nc) and by xarray's
# to_netcdf with the netcdf4 (xr4.nc) and h5netcdf (xrh.nc) engines:
# dimensions in the root (t, a coordinate variable), in /sub (z without a
# variable, p with one) and in /later (s), each used by a variable; and
# in.h5 with /x (9x8x6 float64), /c (5x7 complex128), /q (4x3x5x6 float32).
netcdf_files() {
    python_serial -c "
import h5py, netCDF4, numpy as np, xarray as xr
r = np.random.default_rng(11)
with h5py.File('in.h5', 'w') as f:
    f['x'] = r.standard_normal((9, 8, 6))
    f['c'] = r.standard_normal((5, 7)) + 1j * r.standard_normal((5, 7))
    f['q'] = r.standard_normal((4, 3, 5, 6)).astype('<f4')
with netCDF4.Dataset('nc4.nc', 'w') as d:
    d.createDimension('t', 3)
    d.createVariable('t', 'f8', ('t',))[:] = [1, 2, 3]
    d.createVariable('temp', 'f8', ('t',))[:] = [5, 6, 7]
    g = d.createGroup('sub')
    g.createDimension('z', 2)
    g.createDimension('p', 4)
    g.createVariable('p', 'f8', ('p',))[:] = [10, 20, 30, 40]
    g.createVariable('w', 'f8', ('z', 'p'))[:] = np.arange(8.0).reshape(2, 4)
    g = d.createGroup('later')
    g.createDimension('s', 5)
    g.createVariable('s', 'f8', ('s',))[:] = np.arange(5.0)
    g.createVariable('q', 'f8', ('s',))[:] = np.arange(5.0) * 2
root = xr.Dataset({'temp': ('t', [5.0, 6, 7])}, coords={'t': [1.0, 2, 3]})
sub = xr.Dataset({'w': (('z', 'p'), np.arange(8.0).reshape(2, 4))},
                 coords={'p': [10.0, 20, 30, 40]})
later = xr.Dataset({'q': ('s', np.arange(5.0) * 2)}, coords={'s': np.arange(5.0)})
for name, engine in ('xr4.nc', 'netcdf4'), ('xrh.nc', 'h5netcdf'):
    root.to_netcdf(name, engine=engine)
    sub.to_netcdf(name, mode='a', group='sub', engine=engine)
    later.to_netcdf(name, mode='a', group='later', engine=engine)"
}

# netcdf_readable FILE...: netCDF4 and both of xarray's engines still read
# the variables netcdf_files wrote, with their dimensions.
netcdf_readable() {
    run python_serial -c "
import sys, netCDF4, numpy as np, xarray as xr
for name in sys.argv[1:]:
    with netCDF4.Dataset(name) as d:
        assert d['temp'].dimensions == ('t',) and list(d['temp'][:]) == [5, 6, 7], name
        assert d['sub/w'].dimensions == ('z', 'p') and d['sub/w'].shape == (2, 4), name
        assert list(d['later/q'][:]) == [0, 2, 4, 6, 8], name
    for engine in 'netcdf4', 'h5netcdf':
        w = xr.open_dataset(name, group='sub', engine=engine)['w']
        assert w.dims == ('z', 'p') and list(w['p'].values) == [10, 20, 30, 40], (name, engine)
        assert np.array_equal(w.values, np.arange(8.0).reshape(2, 4)), (name, engine)
print('readable')" "$@"
    assert_success
    assert_output readable
}

@test "--add into netCDF-4 files with dimensions in the root and in groups (netCDF4, xarray's netcdf4 and h5netcdf engines): every reader sees each result's shape and values, 1 to 4 ranks" {
    netcdf_files
    local f np=0 cases=() spectra=()
    # each file its own kind of spectrum: plain, with mu bins, one per slice
    local -A spectrum=([nc4.nc]="" [xr4.nc]="--los=2 --mu-bins=3"
        [xrh.nc]="--spectrum-per=0 --axes=1,2")
    local -A keys=([nc4.nc]="" [xr4.nc]="los=2 mubins=3" [xrh.nc]="per=0 axes=1,2")
    CASES=()
    for f in nc4.nc xr4.nc xrh.nc; do
        np=$((np % 4 + 1))
        fs "$np" in.h5:/x "$f:/r" --add
        fs $((np % 4 + 1)) in.h5:/c "$f:/sub/r2" --add --axes=1
        fs $(((np + 1) % 4 + 1)) in.h5:/q "$f:/later/r4" --add --axes=2,3
        run fftshard $(((np + 2) % 4 + 1)) --quiet --add --power-spectrum --spectrum-only \
            ${spectrum[$f]} in.h5:/x "$f:/sub"
        assert_success
        cases+=("in=in.h5:/x out=$f:/r" "in=in.h5:/c out=$f:/sub/r2 axes=1"
            "in=in.h5:/q out=$f:/later/r4 axes=2,3")
        spectra+=("in=in.h5:/x out=$f group=/sub ${keys[$f]}")
    done
    check_all
    run coords "${cases[@]}"
    assert_success
    assert_output "ok 9"
    run python_serial "$srcdir/tests/spectrum_oracle.py" check "${spectra[@]}"
    assert_success
    # every table of the spectrum's group, as each reader sees it
    run python_serial -c "
import sys, h5py, netCDF4, numpy as np, xarray as xr
for name in sys.argv[1:]:
    h = h5py.File(name, 'r')['sub/power_spectrum']
    with netCDF4.Dataset(name) as d:
        g = d['sub/power_spectrum']
        assert sorted(g.variables) == sorted(h), (name, sorted(g.variables), sorted(h))
        for v in g.variables.values():
            assert np.array_equal(v[...], h[v.name][()], equal_nan=True), (name, v.name, v.shape)
    for engine in 'netcdf4', 'h5netcdf':
        x = xr.open_dataset(name, group='sub/power_spectrum', engine=engine)
        for v in x.variables:
            assert np.array_equal(x[v].values, h[v][()], equal_nan=True), (name, engine, v)
    print(name, h['power'].shape, x['power'].dims, len(x.variables))
" nc4.nc xr4.nc xrh.nc
    assert_success
    assert_line --index 0 "nc4.nc (9,) ('k',) 4"
    assert_line --index 1 "xr4.nc (9,) ('k',) 10"
    assert_line --index 2 "xrh.nc (9, 7) ('axis0', 'k') 5"
    netcdf_readable nc4.nc xr4.nc xrh.nc
}

@test "--add beside scales without a netCDF-4 number (h5py's): they keep their own dimension, the results theirs" {
    netcdf_files
    # HDF5 lists this file's objects by name: k0, k0a, k1 ... netCDF-4 numbers
    # k0a after k0, and k1 after it
    python_serial -c "
import h5py, numpy as np
with h5py.File('hp.h5', 'w') as f:
    s = f.create_dataset('k0a', data=np.arange(3.0))
    s.make_scale('k0a')
    f['old'] = np.arange(3.0)
    f['old'].dims[0].attach_scale(s)"
    CASES=()
    fs 2 in.h5:/x hp.h5:/r --add
    check_all
    run coords "in=in.h5:/x out=hp.h5:/r"
    assert_success
    assert_output "ok 1"
    run python_serial -c "
import netCDF4
with netCDF4.Dataset('hp.h5') as d:
    print(d['old'].dimensions, d['old'].shape, d['r'].dimensions, d['r'].shape)"
    assert_success
    assert_output "('k0a',) (3,) ('k0', 'k1', 'k2') (9, 8, 6)"
}

@test "--add never replaces a netCDF-4 dimension a variable uses (netCDF4's, xarray's): exit 4, the file unchanged and readable; a variable is replaced" {
    netcdf_files
    local f item path user before np=0
    for f in nc4.nc xr4.nc xrh.nc; do
        before=$(checksum "$f")
        for item in "/t|axis 0 of /temp" "/sub/z|axis 0 of /sub/w" "/sub/p|axis 1 of /sub/w" \
            "/later/s|axis 0 of /later/q"; do
            path=${item%%|*} user=${item#*|}
            np=$((np % 4 + 1))
            run --separate-stderr fftshard "$np" --add --force in.h5:/x "$f:$path"
            assert_error "$EXIT_OUTPUT" "$f:$path: the dataset is the coordinate of $user"
        done
        assert_equal "$(checksum "$f")" "$before"
    done
    assert_no_temporaries
    netcdf_readable nc4.nc xr4.nc xrh.nc
    # a variable that is no dimension is replaced, its dimension left
    CASES=()
    fs 3 in.h5:/c nc4.nc:/later/q --add --force
    check_all
    run coords "in=in.h5:/c out=nc4.nc:/later/q"
    assert_success
    assert_output "ok 1"
}
