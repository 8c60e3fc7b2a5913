#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""What netCDF4 and xarray see of a transformed result, against numpy.

    coords_oracle.py CASE...

Each CASE is one quoted string of key=value tokens:
    in=FILE[:/ds]   the input            out=FILE[:/ds]  the result (default: the input's path)
    axes=LIST       --axes               real / inverse  --real / --inverse
    box=L[,L...]    --box-size           last=N          the length a --real --inverse restores
    names=A,B...    the dimensions' names where they are not the first choice (a
                    coordinate of that name holding other values: name_2 ...)

The coordinates expected, from fftshard(1)'s definition written here anew:
a transformed axis a of a forward result is k<a> = 2 pi numpy.fft.fftfreq(n, L/n)
(rfftfreq along the last axis given with --real), units rad/grid_spacing, or
rad/box_length_unit with box=; of an inverse result x<a> = arange(n) L / n; a batch
axis keeps the input's dimension scale (read here with h5py) or is axis<a> =
arange(n). netCDF4.Dataset, xarray's h5netcdf engine and its default engine
(netcdf4) must each show the result with these dimensions and coordinates, and
the same values h5py reads. Prints one line per problem; exit status 1 if any.
"""
import os
import sys

import h5py
import netCDF4
import numpy as np
import xarray as xr

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from oracle_common import (box_lengths, complex_of, only_dataset, parse_axes,  # noqa: E402
                           parse_box, parse_case, split_location)


def expected(opts):
    """[(name, values, units)] per axis of the result, and its h5py values."""
    in_file, in_ds = split_location(opts["in"])
    with h5py.File(in_file, "r") as f:
        in_ds = in_ds or only_dataset(f, in_file)
        d = f[in_ds]
        shape = d.shape
        batch_scales = [(d.dims[a][0].name.split("/")[-1], d.dims[a][0][()],
                         d.dims[a][0].attrs.get("units"))
                        if len(d.dims[a]) else None for a in range(d.ndim)]
    ndim = len(shape)
    given = parse_axes(opts.get("axes"), ndim)
    transformed = sorted(given)
    boxes = parse_box(opts.get("box"))
    lengths = box_lengths(shape, transformed, boxes)
    coords = []
    for a in range(ndim):
        if a not in transformed:
            s = batch_scales[a]
            if s:
                units = s[2].decode() if isinstance(s[2], bytes) else s[2]
                coords.append((s[0], s[1], units))
            else:
                coords.append(("axis%d" % a, np.arange(shape[a]), "1"))
            continue
        halved = "real" in opts and a == given[-1]
        if "inverse" in opts:
            n = shape[a]
            if halved:
                n = int(opts["last"]) if "last" in opts else 2 * (shape[a] - 1)
        else:
            n = shape[a]
        L = lengths[a] if boxes else n  # without a box, the result's own length
        unit = "box_length_unit" if boxes else "grid_spacing"
        if "inverse" in opts:
            coords.append(("x%d" % a, np.arange(n) * L / n, unit))
        elif halved:
            coords.append(("k%d" % a, 2 * np.pi * np.fft.rfftfreq(n, L / n), "rad/" + unit))
        else:
            coords.append(("k%d" % a, 2 * np.pi * np.fft.fftfreq(n, L / n), "rad/" + unit))
    return coords, in_ds


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-14, atol=1e-300)


def check_case(text):
    opts = parse_case(text)
    coords, in_ds = expected(opts)
    if "names" in opts:
        coords = [(n, v, u) for n, (_, v, u) in zip(opts["names"].split(","), coords)]
    out_file, out_ds = split_location(opts["out"])
    out_ds = out_ds or in_ds
    group, _, var = out_ds.rpartition("/")
    group = group or "/"
    names = tuple(c[0] for c in coords)
    problems = []
    with h5py.File(out_file, "r") as f:
        values = f[out_ds][()]
    # netCDF4: the variable, its dimensions, each a coordinate variable
    with netCDF4.Dataset(out_file) as nc:
        g = nc if group == "/" else nc[group]
        if var not in g.variables:
            problems.append("netCDF4: no variable %s in %s" % (var, sorted(g.variables)))
        else:
            v = g.variables[var]
            if v.dimensions != names:
                problems.append("netCDF4: %s has dimensions %s, expected %s"
                                % (var, v.dimensions, names))
            raw = v[...]
            got = complex_of(raw)
            if raw.dtype.names and raw.dtype.names != ("r", "i"):
                problems.append("netCDF4: compound members %s" % (raw.dtype.names,))
            if not np.array_equal(got, values):
                problems.append("netCDF4: values differ from h5py's")
        for name, want, units in coords:
            if name not in g.variables or g.variables[name].dimensions != (name,):
                problems.append("netCDF4: no coordinate variable %s" % name)
                continue
            c = g.variables[name]
            if not same(c[...], want):
                problems.append("netCDF4: %s = %s, expected %s" % (name, c[...], want))
            if units is not None and getattr(c, "units", None) != units:
                problems.append("netCDF4: %s units %r, expected %r"
                                % (name, getattr(c, "units", None), units))
            if not getattr(c, "long_name", None):
                problems.append("netCDF4: %s has no long_name" % name)
    # xarray, both engines, without options
    for engine in ("h5netcdf", None):
        kw = {"engine": engine} if engine else {}
        if group != "/":
            kw["group"] = group
        with xr.open_dataset(out_file, **kw) as x:
            label = "xarray(%s)" % (engine or "default")
            if var not in x:
                problems.append("%s: no variable %s" % (label, var))
                continue
            if x[var].dims != names:
                problems.append("%s: dims %s, expected %s" % (label, x[var].dims, names))
            raw = x[var].values
            got = complex_of(raw)
            if engine == "h5netcdf" and raw.dtype != values.dtype:
                problems.append("%s: dtype %s, expected %s" % (label, raw.dtype, values.dtype))
            if not np.array_equal(got, values):
                problems.append("%s: values differ from h5py's" % label)
            for name, want, _ in coords:
                if name not in x[var].coords or not same(x[var][name].values, want):
                    problems.append("%s: coordinate %s missing or not %s" % (label, name, want))
    return problems


def main(argv):
    problems = []
    for text in argv[1:]:
        problems += ["%s: %s" % (text, p) for p in check_case(text)]
    for p in problems:
        print(p)
    if not problems:
        print("ok %d" % (len(argv) - 1))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
