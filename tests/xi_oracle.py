#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""xi_oracle: the independent check of fftshard --correlation-function.

Computes xi(r) from fftshard(1)'s definition (CORRELATION FUNCTION) in
float64 with numpy's full complex FFTs, never the half spectrum:
C = ifftn(fftn(a) conj(fftn(b))) / N over the transformed axes (b = a
without --cross; N their points; several inputs without --cross add their
C), element d at separation r = sqrt(sum_a (h_a d_a)^2), d_a =
fftfreq(n_a, 1/n_a)[j_a] (the minimum image), h_a = L_a / n_a; xi of a bin
is the mean of Re C over the bin's elements, batch axes pooled. The bins
are taken explicitly: shells floor(r / h + 1/2) with h the largest cell,
N equal bins [i w, (i+1) w) up to the largest r (the last one holding it),
or edges searched half-open [E_i, E_i+1).

  xi_oracle.py check CASE [CASE...]
      Each CASE is whitespace-separated tokens:
        in=FILE[,FILE...]  the inputs (their only dataset)
        out=FILE           fftshard's OUTPUT
        cross=1            --cross of the two inputs
        axes=LIST          --axes (default all)
        box=L[,L...]       --box-size
        rbins=SPEC         --r-bins (N, E0,E1,... or LO:HI:STEP)
        brute=1            C also by a double loop over x and d (tiny
                           grids): the FFT's answer must equal it
        field=real|complex the transformed array beside it must be numpy's
                           rfftn / fftn of the (first) input
        tol=X              max |xi - xi_ref| / max |xi_ref| (default 1e-12;
                           1e-5 for single precision)
      The group /correlation_function must hold xi, r, cells and edges,
      r and edges dimension scales, xi and cells along r, with units.

Exit status: 0 when everything matched, 1 when something did not (each
failure printed), 2 on a usage error.
"""

import itertools
import sys

import h5py
import numpy as np


def only_dataset(path):
    with h5py.File(path, "r") as f:
        names = [k for k in f if isinstance(f[k], h5py.Dataset)]
        return f[names[0]][()]


def correlation(a, b, axes):
    n = 1
    for ax in axes:
        n *= a.shape[ax]
    fa = np.fft.fftn(a.astype(np.complex128), axes=axes)
    fb = np.fft.fftn(b.astype(np.complex128), axes=axes)
    return np.fft.ifftn(fa * np.conj(fb), axes=axes).real / n


def brute(a, b, axes):
    """C[d] = (1/N) sum_x a[x + d] conj(b[x]) over the transformed axes, by loops."""
    shape = a.shape
    batch = [ax for ax in range(a.ndim) if ax not in axes]
    out = np.zeros(shape)
    n = 1
    for ax in axes:
        n *= shape[ax]
    ranges = [range(shape[ax]) for ax in axes]
    for bidx in itertools.product(*[range(shape[ax]) for ax in batch]):
        for d in itertools.product(*ranges):
            s = 0j
            for x in itertools.product(*ranges):
                ia, ib = [0] * a.ndim, [0] * a.ndim
                for k, ax in enumerate(batch):
                    ia[ax] = ib[ax] = bidx[k]
                for k, ax in enumerate(axes):
                    ia[ax] = (x[k] + d[k]) % shape[ax]
                    ib[ax] = x[k]
                s += a[tuple(ia)] * np.conj(b[tuple(ib)])
            o = [0] * a.ndim
            for k, ax in enumerate(batch):
                o[ax] = bidx[k]
            for k, ax in enumerate(axes):
                o[ax] = d[k]
            out[tuple(o)] = (s / n).real
    return out


def separations(shape, axes, box):
    """r of every element (broadcast over the whole array), and the cells."""
    lengths = {}
    for i, ax in enumerate(axes):
        lengths[ax] = float(shape[ax]) if box is None else box[i if len(box) > 1 else 0]
    r2 = np.zeros(shape)
    h = {}
    for ax in sorted(axes):
        h[ax] = lengths[ax] / shape[ax]
        d = h[ax] * np.fft.fftfreq(shape[ax], 1.0 / shape[ax])
        idx = [1] * len(shape)
        idx[ax] = shape[ax]
        r2 = r2 + (d * d).reshape(idx)
    rmax2 = 0.0
    for ax in sorted(axes):
        m = h[ax] * (shape[ax] // 2)
        rmax2 = rmax2 + m * m
    return np.sqrt(r2), h, np.sqrt(rmax2)


def bins_of(r, h, rmax, spec):
    hmax = max(h.values())
    if spec is None:
        nb = int(np.floor(rmax / hmax + 0.5)) + 1
        edges = np.array([0.0] + [(i - 0.5) * hmax for i in range(1, nb + 1)])
        return np.floor(r / hmax + 0.5).astype(int), nb, edges
    if ":" in spec:
        lo, hi, step = (float(x) for x in spec.split(":"))
        count = int(np.floor((hi - lo) / step + 1e-9))
        edges = np.array([lo + i * step for i in range(count + 1)])
    elif "," in spec:
        edges = np.array([float(x) for x in spec.split(",")])
    else:
        nb = int(spec)
        w = rmax / nb
        b = np.floor(r / w).astype(int) if w > 0 else np.zeros(r.shape, int)
        edges = np.array([i * w for i in range(nb)] + [rmax])
        return np.minimum(b, nb - 1), nb, edges
    nb = len(edges) - 1
    b = np.searchsorted(edges, r, side="right") - 1
    b[(r < edges[0]) | (r >= edges[-1])] = -1
    return b, nb, edges


def check_case(case):
    tok = dict(t.split("=", 1) for t in case.split())
    fails = []
    ins = [only_dataset(p) for p in tok["in"].split(",")]
    ndim = ins[0].ndim
    axes = (sorted(int(a) % ndim for a in tok["axes"].split(","))
            if "axes" in tok else list(range(ndim)))
    box = [float(x) for x in tok["box"].split(",")] if "box" in tok else None
    if tok.get("cross"):
        C = correlation(ins[0], ins[1], axes)
        pairs = [(ins[0], ins[1])]
    else:
        C = sum(correlation(x, x, axes) for x in ins)
        pairs = [(x, x) for x in ins]
    if tok.get("brute"):
        B = sum(brute(a, b, axes) for a, b in pairs)
        err = np.abs(B - C).max() / max(np.abs(B).max(), 1e-300)
        if err > 1e-12:
            fails.append(f"{case}: the FFT's C differs from the double loop's by {err:.3g}")
    r, h, rmax = separations(ins[0].shape, axes, box)
    b, nb, edges = bins_of(r, h, rmax, tok.get("rbins"))
    keep = b >= 0
    cells = np.bincount(b[keep], minlength=nb)
    with np.errstate(invalid="ignore"):
        xi = np.bincount(b[keep], C[keep], minlength=nb) / cells
        rr = np.bincount(b[keep], r[keep], minlength=nb) / cells
    single = any(x.dtype in (np.float32, np.complex64) for x in ins)
    tol = float(tok.get("tol", 1e-5 if single else 1e-12))
    with h5py.File(tok["out"], "r") as f:
        if "correlation_function" not in f:
            return [f"{case}: no /correlation_function"]
        g = f["correlation_function"]
        got = {k: g[k][()] for k in ("xi", "r", "cells", "edges") if k in g}
        if len(got) < 4:
            return [f"{case}: /correlation_function holds {sorted(g.keys())}"]
        if got["cells"].shape != (nb,) or not np.array_equal(got["cells"], cells):
            fails.append(f"{case}: cells {got['cells']} != {cells}")
        elif not np.array_equal(np.isnan(got["xi"]), cells == 0):
            fails.append(f"{case}: xi is NaN at {np.isnan(got['xi'])}, cells {cells}")
        else:
            m = cells > 0
            scale = max(np.abs(xi[m]).max(), 1e-300)
            err = np.abs(got["xi"][m] - xi[m]).max() / scale
            if err > tol:
                fails.append(f"{case}: xi error {err:.3g} > {tol}: {got['xi']} != {xi}")
            if np.abs(got["r"][m] - rr[m]).max() > 1e-12 * max(rmax, 1):
                fails.append(f"{case}: r {got['r']} != {rr}")
        if got["edges"].shape != edges.shape or np.abs(got["edges"] - edges).max() > 1e-12 * max(rmax, 1):
            fails.append(f"{case}: edges {got['edges']} != {edges}")
        for k in ("r", "edges"):
            if g[k].attrs.get("CLASS") != b"DIMENSION_SCALE":
                fails.append(f"{case}: {k} is not a dimension scale")
        for k in ("xi", "cells"):
            dims = g[k].dims[0]
            if len(dims) != 1 or dims[0].name != "/correlation_function/r":
                fails.append(f"{case}: {k} does not lie along /correlation_function/r")
        for k in ("xi", "r", "cells", "edges"):
            if "units" not in g[k].attrs:
                fails.append(f"{case}: {k} has no units")
        want_units = "box_length_unit" if box else "grid_spacing"
        if g["r"].attrs.get("units") not in (want_units, want_units.encode()):
            fails.append(f"{case}: r's units {g['r'].attrs.get('units')!r} != {want_units}")
        if "field" in tok:
            # the result, not the coordinates written beside it
            names = [k for k in f if isinstance(f[k], h5py.Dataset)
                     and f[k].attrs.get("CLASS") != b"DIMENSION_SCALE"]
            x = ins[0].astype(np.complex128 if tok["field"] == "complex" else np.float64)
            ref = (np.fft.rfftn(x, axes=axes) if tok["field"] == "real"
                   else np.fft.fftn(x, axes=axes))
            res = f[names[0]][()]
            err = np.abs(res - ref).max() / np.abs(ref).max()
            if res.shape != ref.shape or err > tol * 10:
                fails.append(f"{case}: the transformed array beside it is off by {err:.3g}")
    return fails


def main(argv):
    if len(argv) < 3 or argv[1] != "check":
        print(__doc__, file=sys.stderr)
        return 2
    fails = []
    for case in argv[2:]:
        fails += check_case(case)
    for msg in fails:
        print(msg)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
