#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""apply_oracle: the independent check of fftshard --apply (numpy, h5py).

Computes each operator from fftshard(1)'s definition (OPERATORS) on numpy's
full complex fftn over the transformed axes, never the half spectrum:
result = ifftn(H(k) * fftn(x)), its real part for real input.

  apply_oracle.py check CASE [CASE...]
      Each CASE is whitespace-separated tokens:
        in=FILE[:/ds]     the input (its only dataset without a path)
        out=FILE[:/ds]    fftshard's OUTPUT (dataset default: in's)
        apply=LIST        --apply's value
        axes=LIST         --axes (default all)
        box=L[,L...]      --box-size
        expect=FILE:/ds   compare with this dataset instead (an analytic
                          answer)
        tol=X             max |result - reference| / max |reference|
                          (default 1e-12; 1e-5 for single precision)
      The result must have the input's shape, be real for real input, and
      carry the attributes operation (the list, parameters written out),
      direction "round trip" and the input's own attributes.

  apply_oracle.py cut SHAPE [L[,L...]]
      Print two wave numbers K for a cut exactly at a mode of the grid of
      SHAPE (every axis transformed, box lengths L): the |k| of a mode, as
      fftshard(1) defines it (k^2 summed in increasing axis order), that
      summing the k_a^2 in some other order would make larger (so a path
      that does drops the mode at sharpk:K), then the double just below
      the |k| of a mode that another order would make smaller (a path that
      does keeps it). Each is the mode with the most such orders.

  apply_oracle.py sines FILE SHAPE L[,L...]
      Write /phi = sin(2 pi 2 x / L0) sin(2 pi 3 y / L1) cos(2 pi z / L2)
      (x = L0 j / n0, ...) and /f = its Laplacian, -(k.k) phi, on a 3-D
      grid: poisson on /f gives /phi.

Exit status: 0 when everything matched, 1 when something did not (each
failure printed), 2 on a usage error.
"""

import itertools
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from oracle_common import (Failure, k_prime, lost_attributes, parse_axes, parse_box,  # noqa: E402
                           parse_case, read_location, relative_error, tolerance,
                           wave_numbers)

SERIES_X = 0.5
# fftshard's own attribute names: an input that is itself a result has them,
# and the result's own values hold (fftshard(1), FILES AND CONVENTIONS).
OWN = {"fftshard_version", "transform", "direction", "norm", "input", "transpose", "precision",
       "axes", "real_axis", "input_shape", "last_size", "ranks", "offset", "shards",
       "operation", "box_size", "k_convention",
       # a result's coordinates' bookkeeping (fftshard(1), What readers see)
       "DIMENSION_LIST", "REFERENCE_LIST", "CLASS", "NAME", "_Netcdf4Dimid",
       "_Netcdf4Coordinates"}
BUTTERWORTH_ORDER = 2


def factor(op, ks, shape):
    """H(k) of op, ks the k_a of the transformed axes (wave_numbers)."""
    name, _, params = op.partition(":")
    k2 = sum(ks[a] ** 2 for a in sorted(ks))
    k2 = np.broadcast_to(k2, shape)
    k = np.sqrt(k2)
    if name == "gaussian":
        R = float(params)
        with np.errstate(over="ignore"):
            return np.exp(-(k * R) ** 2 / 2)
    if name == "tophat":
        with np.errstate(all="ignore"):
            x = k * float(params)
            direct = 3 * ((np.sin(x) - x * np.cos(x)) / x / x / x)
            x2 = x * x
            series = 1 - x2 / 10 * (1 - x2 / 28 * (1 - x2 / 54 * (1 - x2 / 88 * (1 - x2 / 130))))
            return np.where(x < SERIES_X, series, np.where(np.isinf(x), 0, direct))
    if name == "sharpk":
        return (k <= float(params)).astype(float)
    if name in ("lowpass", "highpass"):
        K, _, N = params.partition(":")
        K = float(K)
        below = k <= K
        with np.errstate(over="ignore", under="ignore"):
            p = np.where(below, k / K, K / np.where(below, 1, k)) ** (2 * int(N or BUTTERWORTH_ORDER))
        return np.where(below == (name == "lowpass"), 1, p) / (1 + p)
    if name == "deriv":
        return 1j * np.broadcast_to(k_prime(ks[int(params) % len(shape)]), shape)
    if name == "laplacian":
        return -k2
    if name == "poisson":
        with np.errstate(divide="ignore"):
            return np.where(k2 > 0, -1 / np.where(k2 > 0, k2, 1), 0)
    if name == "transfer":
        return interpolate(k, np.loadtxt(params, ndmin=2))
    raise Failure("unknown operator " + op)


def interpolate(k, table):
    """np.interp(k, table k, table T), but where two rows' T differ by more
    than double holds, T_i (1 - w) + T_i+1 w, w = (k - k_i) / (k_i+1 - k_i)
    (fftshard(1), OPERATORS transfer)."""
    tk, tv = table[:, 0], table[:, 1]
    hi = np.clip(np.searchsorted(tk, k, side="right"), 1, len(tk) - 1)
    lo = hi - 1
    w = np.clip((k - tk[lo]) / (tk[hi] - tk[lo]), 0, 1)
    with np.errstate(over="ignore", invalid="ignore"):
        d = tv[hi] - tv[lo]
        return np.where(np.isfinite(d), np.interp(k, tk, tv), tv[lo] * (1 - w) + tv[hi] * w)


def reference(x, ops, axes, box):
    ks = wave_numbers(x.shape, axes, box)
    H = np.ones(x.shape, dtype=complex)
    for op in ops:
        H = H * factor(op, ks, x.shape)
    y = np.fft.ifftn(H * np.fft.fftn(x.astype(np.complex128), axes=axes), axes=axes)
    return y if np.iscomplexobj(x) else y.real


def check_case(case):
    tok = parse_case(case)
    src = read_location(tok["in"])
    x = src.values
    out = read_location(tok["out"], default=src.path)
    y, attrs = out.values, out.attrs
    axes = parse_axes(tok.get("axes"), x.ndim)
    box = parse_box(tok.get("box"))
    ops = tok["apply"].split(",")
    tol = float(tok.get("tol", tolerance(x.dtype)))
    if "expect" in tok:
        ref = read_location(tok["expect"]).values
    else:
        ref = reference(x, ops, axes, box)
    if y.shape != x.shape:
        raise Failure("%s: shape %s, expected the input's %s" % (case, y.shape, x.shape))
    if np.iscomplexobj(y) != np.iscomplexobj(x):
        raise Failure("%s: result type %s for input %s" % (case, y.dtype, x.dtype))
    err = relative_error(y, ref)
    if not err <= tol:
        raise Failure("%s: relative error %.3g above %.3g" % (case, err, tol))
    if attrs.get("direction") != "round trip":
        raise Failure("%s: direction attribute %r" % (case, attrs.get("direction")))
    recorded = attrs.get("operation", "").split(",")
    if [r.split(":")[0] for r in recorded] != [o.split(":")[0] for o in ops]:
        raise Failure("%s: operation attribute %r" % (case, attrs.get("operation")))
    for key in lost_attributes(src.attrs, attrs, OWN):
        raise Failure("%s: input attribute %s not kept" % (case, key))
    return err


def cut(shape_text, box_text=None):
    shape = [int(v) for v in shape_text.split("x")]
    axes = list(range(len(shape)))
    ks = wave_numbers(shape, axes, parse_box(box_text))
    k = np.sqrt(np.broadcast_to(sum(ks[a] ** 2 for a in axes), shape))
    larger = np.zeros(shape, dtype=int)
    smaller = np.zeros(shape, dtype=int)
    for order in itertools.permutations(axes):
        other = np.sqrt(np.broadcast_to(sum(ks[a] ** 2 for a in order), shape))
        larger += other > k
        smaller += other < k
    if larger.max() == 0 or smaller.max() == 0:
        raise Failure("no mode of %s whose |k| depends on the order of the sum" % shape_text)
    above = k.flat[np.argmax(larger)]
    below = np.nextafter(k.flat[np.argmax(smaller)], 0)
    print("%.17g %.17g" % (above, below))


def sines(path, shape_text, box_text):
    shape = [int(v) for v in shape_text.split("x")]
    L = [float(v) for v in box_text.split(",")]
    L = L * 3 if len(L) == 1 else L
    x = [L[a] * np.arange(shape[a]) / shape[a] for a in range(3)]
    X, Y, Z = np.meshgrid(*x, indexing="ij")
    k = [2 * np.pi * 2 / L[0], 2 * np.pi * 3 / L[1], 2 * np.pi / L[2]]
    phi = np.sin(k[0] * X) * np.sin(k[1] * Y) * np.cos(k[2] * Z)
    with h5py.File(path, "w") as f:
        f["phi"] = phi
        f["f"] = -(k[0] ** 2 + k[1] ** 2 + k[2] ** 2) * phi


def main(argv):
    if len(argv) < 3 or argv[1] not in ("check", "cut", "sines"):
        print(__doc__, file=sys.stderr)
        return 2
    if argv[1] == "cut":
        try:
            cut(*argv[2:4])
        except Failure as e:
            print("FAILED: %s" % e)
            return 1
        return 0
    if argv[1] == "sines":
        sines(*argv[2:5])
        return 0
    failed = 0
    for case in argv[2:]:
        try:
            err = check_case(case)
            print("ok %.3g: %s" % (err, case))
        except (Failure, KeyError, OSError) as e:
            print("FAILED: %s" % e)
            failed = 1
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv))
