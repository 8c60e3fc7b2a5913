#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Spectra read by the netCDF-4 library (netCDF4) and by xarray (h5netcdf)
# without options: every table has named dimensions whose coordinates are
# k, edges, the mu bins and the slices' axes, with units and long names.

load helpers

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
