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
or edges searched half-open [E_i, E_i+1). With --los and --multipoles,
xi_l of a bin is (2l + 1) times the mean of Re C L_l(mu) over the same
elements, mu = |h_los d_los| / r and, at r = 0, L_l replaced by its mean
over directions (1 for l = 0, else 0); L_l from numpy's Legendre series.

  xi_oracle.py check CASE [CASE...]
      Each CASE is whitespace-separated tokens:
        in=FILE[,FILE...]  the inputs (their only dataset)
        out=FILE           fftshard's OUTPUT
        cross=1            --cross of the two inputs
        axes=LIST          --axes (default all)
        box=L[,L...]       --box-size
        rbins=SPEC         --r-bins (N, E0,E1,... or LO:HI:STEP)
        los=AXIS           --los (negative: from the end)
        poles=L[,L...]     --multipoles: xi_L along r, the group's los and
                           multipoles attributes (without it: no xi_L)
        brute=1            C also by a double loop over x and d (tiny
                           grids): the FFT's answer must equal it
        field=real|complex the transformed array beside it must be numpy's
                           rfftn / fftn of the input (of each input, at
                           its dataset's name, when there are several)
        tol=X              max |xi - xi_ref| / max |xi_ref| (default 1e-12;
                           1e-5 for single precision)
      The group /correlation_function must hold xi, r, cells and edges,
      r and edges dimension scales, xi and cells along r, with units.

Exit status: 0 when everything matched, 1 when something did not (each
failure printed), 2 on a usage error.
"""

import itertools
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from oracle_common import (TOL_DOUBLE, TOL_SINGLE, along, bin_index, box_lengths,  # noqa: E402
                           computed_single, frequencies, only_dataset, parse_axes, parse_bins,
                           parse_box, parse_case, read_location, relative_error)


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


def separations(shape, axes, box, los=None):
    """r of every element (broadcast over the whole array), the cells, the
    largest r and the separation's component along axis los (None: 0)."""
    lengths = box_lengths(shape, axes, box)
    r2 = np.zeros(shape)
    rlos = np.zeros(shape)
    h = {}
    for ax in sorted(axes):
        h[ax] = lengths[ax] / shape[ax]
        d = h[ax] * frequencies(shape[ax])
        r2 = r2 + along(d * d, ax, len(shape))
        if ax == los:
            rlos = rlos + along(d, ax, len(shape))
    rmax2 = 0.0
    for ax in sorted(axes):
        m = h[ax] * (shape[ax] // 2)
        rmax2 = rmax2 + m * m
    return np.sqrt(r2), h, np.sqrt(rmax2), rlos


def multipoles(C, r, rlos, b, nb, cells, poles):
    """{l: (2l + 1) <C L_l(mu)>} per bin, mu = |r_los| / r, L_l at r = 0
    its mean over directions."""
    keep = b >= 0
    with np.errstate(invalid="ignore", divide="ignore"):
        mu = np.where(r > 0, np.abs(rlos) / np.where(r > 0, r, 1), 0.0)
    out = {}
    for ell in poles:
        coef = np.zeros(ell + 1)
        coef[ell] = 1
        L = np.where(r > 0, np.polynomial.legendre.legval(mu, coef), 1.0 if ell == 0 else 0.0)
        with np.errstate(invalid="ignore"):
            out[ell] = (2 * ell + 1) * np.bincount(b[keep], (C * L)[keep], minlength=nb) / cells
    return out


def check_poles(case, g, want, want_xi, cells, los, tol):
    """The group's xi_L against want, their coordinate, units and the
    attributes; no xi_L without poles."""
    fails = []
    names = sorted(k for k in g if k.startswith("xi_"))
    if sorted(f"xi_{ell}" for ell in want) != names:
        return [f"{case}: the group holds multipoles {names}, expected {sorted(want)}"]
    m = cells > 0
    for ell, ref in want.items():
        got = g[f"xi_{ell}"][()]
        if got.shape != ref.shape or not np.array_equal(np.isnan(got), ~m):
            fails.append(f"{case}: xi_{ell} {got} has NaN where cells are {cells}")
            continue
        # relative to the multipole's own scale (one that is 0 to rounding:
        # to a billionth of xi's)
        scale = max(np.abs(ref[m]).max(), 1e-9 * np.abs(want_xi[m]).max(), 1e-300)
        err = np.abs(got[m] - ref[m]).max() / scale
        print(f"{case}: xi_{ell} error {err:.3g}")
        if err > tol:
            fails.append(f"{case}: xi_{ell} error {err:.3g} > {tol}: {got} != {ref}")
        dims = g[f"xi_{ell}"].dims[0]
        if len(dims) != 1 or dims[0].name != g.name + "/r":
            fails.append(f"{case}: xi_{ell} does not lie along r")
        if g[f"xi_{ell}"].attrs.get("units") not in ("1", b"1"):
            fails.append(f"{case}: xi_{ell} has units {g[f'xi_{ell}'].attrs.get('units')!r}")
    if want:
        if int(g.attrs.get("los", -1)) != los:
            fails.append(f"{case}: los attribute {g.attrs.get('los')} != {los}")
        if list(g.attrs.get("multipoles", [])) != sorted(want):
            fails.append(f"{case}: multipoles attribute {g.attrs.get('multipoles')}")
    elif "multipoles" in g.attrs:
        fails.append(f"{case}: a multipoles attribute without --multipoles")
    return fails


def check_case(case):
    tok = parse_case(case)
    fails = []
    ins = [read_location(p).values for p in tok["in"].split(",")]
    ndim = ins[0].ndim
    axes = sorted(parse_axes(tok.get("axes"), ndim))
    box = parse_box(tok.get("box"))
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
    los = int(tok["los"]) % ndim if "los" in tok else None
    poles = [int(ell) for ell in tok["poles"].split(",")] if "poles" in tok else []
    r, h, rmax, rlos = separations(ins[0].shape, axes, box, los)
    # the shells are one largest cell wide; --r-bins takes its bins as --bins does
    b, nb, edges = bin_index(r, max(h.values()), rmax, parse_bins(tok.get("rbins")))
    keep = b >= 0
    cells = np.bincount(b[keep], minlength=nb)
    with np.errstate(invalid="ignore"):
        xi = np.bincount(b[keep], C[keep], minlength=nb) / cells
        rr = np.bincount(b[keep], r[keep], minlength=nb) / cells
    want = multipoles(C, r, rlos, b, nb, cells, poles)
    single = any(computed_single(x.dtype) for x in ins)
    tol = float(tok.get("tol", TOL_SINGLE if single else TOL_DOUBLE))
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
        fails += check_poles(case, g, want, xi, cells, los, tol)
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
            # the results at the top, not the coordinates written beside
            # them: one, of the first input, or (several inputs) each at
            # its input's dataset name
            locs = [read_location(p) for p in tok["in"].split(",")]
            tops = [n for n in f if isinstance(f[n], h5py.Dataset)
                    and not h5py.h5ds.is_scale(f[n].id)]
            wanted = ([(only_dataset(f, tok["out"], nested=False), locs[0])] if len(tops) < 2
                      else [(loc.path, loc) for loc in locs])
            for name, loc in wanted:
                if name not in f:
                    fails.append(f"{case}: no result {name} beside it")
                    continue
                res = f[name][()]
                x = loc.values.astype(np.complex128 if tok["field"] == "complex" else np.float64)
                ref = (np.fft.rfftn(x, axes=axes) if tok["field"] == "real"
                       else np.fft.fftn(x, axes=axes))
                err = relative_error(res, ref) if res.shape == ref.shape else np.inf
                if not err <= tol * 10:
                    fails.append(f"{case}: the transformed array {name} beside it (shape "
                                 f"{res.shape}, numpy's {ref.shape}) is off by {err:.3g}")
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
