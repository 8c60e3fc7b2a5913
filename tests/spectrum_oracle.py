#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""spectrum_oracle: the independent check of fftshard's spectra (numpy, h5py).

Computes the documented definition from the full complex numpy.fft.fftn of
each input (never the half spectrum) and compares OUTPUT's groups with it.

  spectrum_oracle.py check CASE [CASE...]
      Each CASE is whitespace-separated tokens:
        in=FILE[:/ds]     an input (repeat for several; their power adds)
        out=FILE          fftshard's OUTPUT
        axes=LIST         --axes (default all)
        box=L[,L...]      --box-size
        bins=N | bins=E0,E1,... | bins=KMIN:KMAX:DK   --bins
        los=AXIS mubins=N --los, --mu-bins (default 5)
        per=AXIS[,AXIS]   --spectrum-per: each slice's spectra against the
                          reference of the sub-array with those axes taken out
        window=ngp|cic|tsc|pcs  --compensate: every |X|^2 and Re(X_a conj X_b)
                          divided by prod_a numpy.sinc(fftfreq(n_a))^(2p);
                          SCHEME-shotnoise: by prod_a C_a, C_a the sum of
                          numpy.sinc(fftfreq(n_a) + m)^(2p) over the aliases m
        shot=P0[,P0...]   --shot-noise, one per input: their sum less in the
                          power spectrum's power, power_mu and power_0; each
                          input's own less in power_a, power_b (and _mu)
        scale=X           every power (power, power_a, power_b, power_L,
                          power_mu) times X: a window's 1 / mean(w^2) and
                          a zero padding's share of points, as
                          tests/window_oracle.py prepare prints them
        poles=L,L...      --multipoles: power_L = (2L + 1) times the mean of
                          |X|^2 L_L(mu) (numpy.polynomial.legendre) per bin
        cross             --cross (two inputs)
        group=PATH        --spectrum-only with OUTPUT:/PATH: the groups are
                          under PATH (PATH/power_spectrum)
        only              --spectrum-only: OUTPUT (under PATH with group=)
                          holds nothing but spectra
        apply=OPS         --apply=OPS with the spectra: the spectrum of each
                          INPUT's result, tests/apply_oracle.py's numpy of
                          the documented operators (their powers add)
        vector=OP         --vector=OP with the spectra: the spectrum of the
                          results of tests/vector_oracle.py's numpy, their
                          powers added; helmholtz: power_spectrum_solenoidal
                          and power_spectrum_compressive, each of its part's
        tol=X             relative tolerance of k and power (default 1e-10,
                          1e-4 when an input is single precision)
      modes must be equal; k and power (and the mu tables) within tol of
      the reference, NaN where a bin has no mode.

Exit status: 0 when everything matched, 1 when something did not (each
failure printed), 2 on a usage error.
"""

import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from oracle_common import (along, bin_index, box_lengths, computed_single,  # noqa: E402
                           frequencies, parse_axes, parse_bins, parse_box, parse_case, read_location,
                           wave_numbers)


def geometry(shape, axes, box):
    """k squared, the components by axis, k_f, kmax and factor."""
    L = box_lengths(shape, axes, box)
    q = np.zeros(shape)
    comp = {}
    qmax = 0.0
    for a, k in wave_numbers(shape, axes, box).items():
        comp[a] = np.broadcast_to(k, shape)
        q = q + comp[a] ** 2
        kmax_a = 2 * np.pi * float(shape[a] // 2) / L[a]
        qmax = qmax + kmax_a * kmax_a
    kf = 2 * np.pi / max(L.values())
    V = np.prod([L[a] for a in axes])
    N = float(np.prod([shape[a] for a in axes]))
    factor = V / (N * N) if box is not None else 1.0
    return q, comp, kf, np.sqrt(qmax), factor


def lattice_norms(shape, axes, box):
    """The lattice norms m = (|k| / k_f)^2 as integers (None unless every
    L_max / L_a is an integer)."""
    L = box_lengths(shape, axes, box)
    Lmax = max(L.values())
    ratios = {a: Lmax / L[a] for a in axes}
    if not all(abs(r - round(r)) <= 1e-12 * r for r in ratios.values()):
        return None
    m = np.zeros(shape, np.int64)
    for a in axes:
        f = frequencies(shape[a]).astype(np.int64) * round(ratios[a])
        m = m + along(f * f, a, len(shape))
    return m


def lattice_bins(m, kf, bins):
    """The bins decided on the integer norms m = (|k| / k_f)^2: numpy.digitize
    of m on each edge's (E / k_f)^2, an edge within 1e-9 of an integer norm
    being that norm; --bins=N on i^2 mmax / N^2 in integers, its last bin
    closed."""
    mmax = int(m.max())
    if bins is None:
        nb = int(np.floor(np.sqrt(mmax) + 0.5)) + 1
        edges = np.array([0.0] + [(i - 0.5) * kf for i in range(1, nb + 1)])
        t = np.array([0.0] + [(i - 0.5) ** 2 for i in range(1, nb + 1)])
        return np.digitize(m, t) - 1, nb, edges
    if len(bins) == 1:
        nb = int(bins[0])
        kmax = kf * np.sqrt(mmax)
        edges = np.array([i * (kmax / nb) for i in range(nb)] + [kmax])
        idx = np.digitize(m * nb * nb, np.arange(nb + 1, dtype=np.int64) ** 2 * mmax) - 1
        return np.minimum(idx, nb - 1), nb, edges
    edges = np.array(bins)
    t = (edges / kf) ** 2
    near = np.rint(t)
    t = np.where(np.abs(t - near) <= 1e-9 * np.maximum(t, 1), near, t)
    idx = np.digitize(m, t) - 1
    idx[idx == len(edges) - 1] = -1
    return idx, len(edges) - 1, edges


def binned(idx, nb, values):
    keep = idx >= 0
    return np.bincount(idx[keep], weights=values[keep], minlength=nb)[:nb]


def means(idx, nb, values, modes, factor=1.0):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(modes > 0, binned(idx, nb, values) / np.maximum(modes, 1) * factor, np.nan)


def compare(problems, what, got, ref, tol, exact=False, floor=0.0):
    """floor: errors relative to at least floor times the largest |ref|
    (the reference of a result passed through ifftn and fftn again, whose
    smallest modes carry that much of the largest's rounding)."""
    got = np.asarray(got)
    ref = np.asarray(ref)
    if got.shape != ref.shape:
        problems.append("%s: shape %s, expected %s" % (what, got.shape, ref.shape))
        return
    if exact:
        if not np.array_equal(got, ref):
            bad = np.nonzero(got != ref)
            problems.append("%s: differs at %s: %s vs %s" % (what, bad[0][:5], got[bad][:5], ref[bad][:5]))
        return
    if not np.array_equal(np.isnan(got), np.isnan(ref)):
        problems.append("%s: NaN where the reference is not (or not where it is)" % what)
        return
    ok = ~np.isnan(ref)
    scale = np.maximum(np.abs(ref[ok]), 1e-300)
    if ok.any():
        scale = np.maximum(scale, floor * np.max(np.abs(ref[ok])))
    err = np.max(np.abs(got[ok] - ref[ok]) / scale) if ok.any() else 0.0
    if err > tol:
        problems.append("%s: relative error %.3g > %.3g" % (what, err, tol))


def window_squared(shape, axes, scheme):
    """Each mode's W(k)^2, W = prod_a sinc(f_a / n_a)^p (numpy's sinc(x) =
    sin(pi x) / (pi x)), flattened; SCHEME-shotnoise: prod_a C_a, the sum of
    sinc(f_a / n_a + m)^(2p) over the aliases m (summed out to |m| = 4000;
    for ngp the sum is 1)."""
    name, _, aliased = scheme.partition("-")
    p = {"ngp": 1, "cic": 2, "tsc": 3, "pcs": 4}[name]
    W2 = np.ones(shape)
    m = np.arange(-4000, 4001)
    for a in axes:
        x = np.fft.fftfreq(shape[a])
        if not aliased:
            w2 = np.sinc(x) ** (2 * p)
        elif p == 1:
            w2 = np.ones(shape[a])
        else:
            w2 = (np.sinc(x[:, None] + m[None, :]) ** (2 * p)).sum(axis=1)
        W2 = W2 * along(w2, a, len(shape))
    return W2.ravel()


def reference(fields, axes, box, bins, opts):
    """The documented spectra of fields (transformed over axes, every other
    axis pooled): {group: {dataset: array}}."""
    shape = fields[0].shape
    X = [np.fft.fftn(f.astype(np.complex128), axes=axes) for f in fields]
    q, comp, kf, kmax, factor = geometry(shape, axes, box)
    m = lattice_norms(shape, axes, box)
    k = np.sqrt(q)
    if m is not None:
        idx, nb, edges = lattice_bins(m, kf, bins)
    else:
        idx, nb, edges = bin_index(k, kf, kmax, bins)
    idx = idx.ravel()
    kflat = k.ravel()
    ones = np.ones(kflat.shape)
    modes = binned(idx, nb, ones)
    power = [np.abs(x.ravel()) ** 2 for x in X]
    cross = np.real(X[0] * np.conj(X[1])).ravel() if "cross" in opts else None
    if "window" in opts:
        W2 = window_squared(shape, axes, opts["window"])
        power = [x / W2 for x in power]
        cross = cross / W2 if cross is not None else None
    shots = [float(x) for x in opts["shot"].split(",")] if "shot" in opts else [0.0] * len(X)
    groups = {}
    if "cross" in opts:
        groups["/cross_spectrum"] = [cross, power[0], power[1]]
    if "cross" not in opts or "power" in opts:
        groups["/power_spectrum"] = [sum(power)]
    out = {}
    for name, quantities in groups.items():
        r = out[name] = {}
        r["modes"] = modes.astype(np.int64)
        r["k"] = means(idx, nb, kflat, modes)
        noise = sum(shots) if name == "/power_spectrum" else 0.0
        r["power"] = means(idx, nb, quantities[0], modes, factor) - noise
        r["edges"] = edges
        if len(quantities) == 3:
            r["power_a"] = means(idx, nb, quantities[1], modes, factor) - shots[0]
            r["power_b"] = means(idx, nb, quantities[2], modes, factor) - shots[1]
        if "los" not in opts:
            continue
        los = opts["los"]
        nmu = int(opts.get("mubins", 5))
        with np.errstate(invalid="ignore", divide="ignore"):
            mu = np.where(k > 0, np.abs(comp[los]) / np.where(k > 0, k, 1), 0.0).ravel()
        for ell in (int(x) for x in opts["poles"].split(",")) if "poles" in opts else ():
            L = np.polynomial.legendre.legval(mu, [0] * ell + [1])
            r["power_%d" % ell] = (2 * ell + 1) * means(idx, nb, quantities[0] * L, modes, factor)
            r["power_%d" % ell] -= noise if ell == 0 else 0.0
        mb = np.minimum(np.floor(mu * nmu).astype(np.int64), nmu - 1)
        cell = np.where(idx >= 0, idx * nmu + mb, -1)
        cmodes = binned(cell, nb * nmu, ones)
        r["modes_mu"] = cmodes.reshape(nb, nmu).astype(np.int64)
        r["power_mu"] = means(cell, nb * nmu, quantities[0], cmodes, factor).reshape(nb, nmu) - noise
        for i, ab in enumerate(("power_a_mu", "power_b_mu")[:len(quantities) - 1]):
            r[ab] = means(cell, nb * nmu, quantities[i + 1], cmodes, factor).reshape(nb, nmu)
            r[ab] -= shots[i]
        r["mu"] = means(cell, nb * nmu, mu, cmodes).reshape(nb, nmu)
    return out


PER_SLICE = ("power", "power_a", "power_b", "power_mu")


def per_slice(name):
    return name in PER_SLICE or name[6:].isdigit()


def sliced_reference(fields, axes, box, bins, opts, per):
    """With --spectrum-per: the reference of each slice's sub-array (the
    per axes taken out), stacked over the slices; every slice's modes, k
    and mu must be the same."""
    shape = fields[0].shape
    keep = [a for a in range(len(shape)) if a not in per]
    sub_axes = [keep.index(a) for a in axes]
    sub_opts = dict(opts)
    if "los" in opts:
        sub_opts["los"] = keep.index(opts["los"])
    refs = []
    for index in np.ndindex(*[shape[a] for a in per]):
        sel = [slice(None)] * len(shape)
        for a, i in zip(per, index):
            sel[a] = i
        refs.append(reference([f[tuple(sel)] for f in fields], sub_axes, box, bins, sub_opts))
    out = {}
    for group in refs[0]:
        out[group] = {}
        for name, first in refs[0][group].items():
            stack = np.array([r[group][name] for r in refs])
            if per_slice(name):
                out[group][name] = stack.reshape(tuple(shape[a] for a in per) + first.shape)
            else:
                assert all(np.array_equal(x, first, equal_nan=True) for x in stack), name
                out[group][name] = first
    return out


def of_results(fields, axes, box, bins, opts):
    """The reference of the inputs, or with apply= or vector= of the field
    stage's results (one group per family of them)."""
    if "apply" in opts:
        import apply_oracle
        ops = opts["apply"].split(",")
        fields = [apply_oracle.reference(f, ops, axes, box) for f in fields]
    if "vector" not in opts:
        return reference(fields, axes, box, bins, opts)
    import vector_oracle
    results = vector_oracle.references(opts["vector"], fields, axes, box)
    if opts["vector"] != "helmholtz":
        return reference(list(results.values()), axes, box, bins, opts)
    out = {}
    for family in ("solenoidal", "compressive"):
        part = [v for n, v in results.items() if n.startswith(family)]
        out["/power_spectrum_" + family] = reference(part, axes, box, bins, opts)["/power_spectrum"]
    return out


def check_case(text):
    opts = parse_case(text, repeated=("in",))
    fields = [read_location(loc).values for loc in opts["in"]]
    single = any(computed_single(f.dtype) for f in fields)
    tol = float(opts.get("tol", 1e-4 if single else 1e-10))
    shape = fields[0].shape
    nd = len(shape)
    axes = sorted(parse_axes(opts.get("axes"), nd))
    box = parse_box(opts.get("box"))
    bins = parse_bins(opts.get("bins"))
    if "los" in opts:
        opts["los"] = int(opts["los"]) % nd
    if "per" in opts:
        per = sorted(int(a) % nd for a in opts["per"].split(","))
        ref = sliced_reference(fields, axes, box, bins, opts, per)
    else:
        ref = of_results(fields, axes, box, bins, opts)
    floor = tol * 1e-2 if "apply" in opts or "vector" in opts else 0.0
    for group in ref.values():
        for name in group:
            if name.startswith("power") and "scale" in opts:
                group[name] = group[name] * float(opts["scale"])
    problems = []
    with h5py.File(opts["out"], "r") as f:
        under = opts.get("group", "").strip("/")
        top = f[under] if under else f
        if "only" in opts:
            names = []
            top.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
            stray = [n for n in names if "_spectrum" not in n.split("/")[0]]
            if stray:
                problems.append("--spectrum-only wrote datasets %s" % stray)
        for name, r in ref.items():
            name = ("/" + under if under else "") + name
            if name not in f:
                problems.append("%s: missing" % name)
                continue
            g = f[name]
            for ds, value in r.items():
                if ds not in g:
                    problems.append("%s/%s: missing" % (name, ds))
                    continue
                exact = ds.startswith("modes")
                compare(problems, name + "/" + ds, g[ds][()], value,
                        0 if exact else 1e-12 if ds == "edges" else tol, exact=exact,
                        floor=floor)
    return problems


def main(argv):
    if len(argv) < 3 or argv[1] != "check":
        sys.stderr.write(__doc__)
        return 2
    failed = 0
    for case in argv[2:]:
        problems = check_case(case)
        for p in problems:
            print("FAIL [%s]: %s" % (case, p))
        failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
