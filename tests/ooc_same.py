# SPDX-License-Identifier: GPL-3.0-or-later
"""ooc_same.py A.h5 B.h5 [TOL]: whether two fftshard outputs hold the same
layout (every dataset's path, shape, dtype, chunks and attribute names and
values) and the same numbers within TOL relative to the largest magnitude
(default 1e-12). Prints "same" or what differs. Serial h5py and numpy."""
import sys

import h5py
import numpy as np

VOLATILE = {"strategy", "transpose", "ranks", "command_line", "created", "fftshard_version"}


def datasets(f):
    out = {}
    f.visititems(lambda n, o: out.__setitem__(n, o) if isinstance(o, h5py.Dataset) else None)
    return out


def same_attr(x, y):
    if np.asarray(x).dtype.hasobject:  # references: dimension scales
        return np.asarray(x).shape == np.asarray(y).shape
    try:
        return bool(np.all(np.asarray(x) == np.asarray(y)))
    except Exception:
        return str(x) == str(y)


def main():
    tol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-12
    with h5py.File(sys.argv[1], "r") as a, h5py.File(sys.argv[2], "r") as b:
        da, db = datasets(a), datasets(b)
        if set(da) != set(db):
            return "datasets differ: %s" % sorted(set(da) ^ set(db))
        for n in sorted(da):
            x, y = da[n], db[n]
            if (x.shape, x.dtype, x.chunks) != (y.shape, y.dtype, y.chunks):
                return "%s: %s %s %s against %s %s %s" % (n, x.shape, x.dtype, x.chunks,
                                                          y.shape, y.dtype, y.chunks)
            if sorted(x.attrs) != sorted(y.attrs):
                return "%s: attributes %s against %s" % (n, sorted(x.attrs), sorted(y.attrs))
            for k in x.attrs:
                if k not in VOLATILE and not same_attr(x.attrs[k], y.attrs[k]):
                    return "%s: attribute %s: %r against %r" % (n, k, x.attrs[k], y.attrs[k])
            u, v = x[()], y[()]
            if u.dtype.kind in "fc":
                # empty bins hold NaN in both (fftshard(1), spectra)
                if not np.array_equal(np.isnan(u), np.isnan(v)):
                    return "%s: NaN in different places" % n
                u, v = np.nan_to_num(u), np.nan_to_num(v)
                scale = float(np.max(np.abs(u))) if u.size else 0.0
                err = float(np.max(np.abs(u - v))) / (scale or 1.0) if u.size else 0.0
                if not err <= tol:
                    return "%s: error %.3g above %.3g" % (n, err, tol)
            elif not np.array_equal(u, v):
                return "%s: values differ" % n
    return "same"


print(main())
