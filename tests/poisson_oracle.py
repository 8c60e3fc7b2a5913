#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""poisson_oracle: the independent check of fftshard --apply --boundary
(numpy, scipy.fft, h5py), written from fftshard(1), OPERATORS (Boundaries).

  poisson_oracle.py check CASE [CASE...]
      Each CASE is whitespace-separated tokens:
        in=FILE[:/ds]     the input
        out=FILE[:/ds]    fftshard's OUTPUT (dataset default: in's)
        apply=LIST        --apply's value (apply_oracle.py's operators)
        boundary=B[,B...] --boundary: periodic, dirichlet or neumann, one
                          for all or one per transformed axis in the order
                          of --axes
        axes=LIST         --axes (default all)
        box=L[,L...]      --box-size
        tol=X             max |result - reference| / max |reference|
                          (default 1e-12; 1e-5 for single precision)
      The reference: along a Dirichlet axis scipy.fft.dst(type=2), k =
      pi (j + 1) / L; along a Neumann axis scipy.fft.dct(type=2), k =
      pi j / L; along a periodic axis numpy.fft.fft, k = 2 pi
      fftfreq(n, 1/n) / L; H(k) of the operators at k^2 = sum of k_a^2;
      then idst, idct, ifft (type 2) along the same axes; the real part for
      real input. boundary=free (every axis; apply=poisson): the direct sum
      phi_i = (h_0 h_1 ...) sum_j G(x_i - x_j) f_j over the grid, G(r) =
      |x| / 2, ln(r) / (2 pi), -1 / (4 pi r) in 1-D, 2-D, 3-D, G(0) its
      mean over the cell around 0 (scipy.integrate). The result carries the
      attribute boundary (the boundaries in the order of --axes) where
      some axis is not periodic.

  poisson_oracle.py manufactured FILE SHAPE B[,B...] [L[,L...]]
      Write /phi = u_0(x_0) u_1(x_1) ... and /f = laplacian(phi), exactly,
      with s = x / L along each axis:
        dirichlet  u = e^s sin(pi s), x = (j + 1/2) L / n (walls at 0, L)
        neumann    u = s^2 (1 - s)^2, x = (j + 1/2) L / n
        periodic   u = exp(sin(2 pi s)), x = j L / n
      Without a Dirichlet axis /phi has its mean taken off (the solution
      fftshard gives has zero mean).

  poisson_oracle.py gaussian FILE N SIGMA
      Write /rho, a unit Gaussian charge exp(-r^2 / (2 SIGMA^2)) / ((2 pi)^1.5
      SIGMA^3) centred in the unit cube of N^3 cell-centred points, and
      /phi = -erf(r / (sqrt 2 SIGMA)) / (4 pi r), its potential in free
      space (laplacian(phi) = rho).

  poisson_oracle.py error OUT[:/ds] EXPECT[:/ds]
      Print max |out - expect| / max |expect|.

Exit status: 0 when everything matched, 1 when something did not (each
failure printed), 2 on a usage error.
"""

import os
import sys

import h5py
import numpy as np
import scipy.fft as sf
from scipy import integrate

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from apply_oracle import factor  # noqa: E402
from oracle_common import (Failure, box_lengths, frequencies, along, parse_axes,  # noqa: E402
                           parse_box, parse_case, read_location, relative_error,
                           tolerance)


def boundaries(text, axes):
    """{a: boundary} over the transformed axes: one for all, or one per
    axis in the order of axes."""
    given = (text or "periodic").split(",")
    if len(given) == 1:
        given = given * len(axes)
    if len(given) != len(axes):
        raise Failure("boundary=%s for %d axes" % (text, len(axes)))
    return dict(zip(axes, given))


def wall_wave_numbers(shape, axes, box, bnd):
    """{a: k_a} shaped along a: the kind of each axis's own."""
    L = box_lengths(shape, axes, box)
    ks = {}
    for a in sorted(axes):
        n = shape[a]
        if bnd[a] == "dirichlet":
            k = np.pi * (np.arange(n) + 1) / L[a]
        elif bnd[a] == "neumann":
            k = np.pi * np.arange(n) / L[a]
        else:
            k = 2 * np.pi * frequencies(n) / L[a]
        ks[a] = along(k, a, len(shape))
    return ks


def green(d, r):
    return r / 2 if d == 1 else np.log(r) / (2 * np.pi) if d == 2 else -1 / (4 * np.pi * r)


def cell_mean(h):
    """G's mean over the cell of sides h around 0, by quadrature."""
    d = len(h)
    ranges = [(-v / 2, v / 2) for v in h]
    f = lambda *p: green(d, np.sqrt(sum(c * c for c in p)))  # noqa: E731
    return integrate.nquad(f, ranges, opts={"points": [0.0], "limit": 200})[0] / np.prod(h)


def free_space(x, axes, box):
    """The direct sum over every pair of points (small grids)."""
    L = box_lengths(x.shape, axes, box)
    h = [L[a] / x.shape[a] for a in axes]
    moved = np.moveaxis(x, axes, list(range(len(axes))))
    grid = moved.shape[:len(axes)]
    pos = np.stack(np.meshgrid(*[np.arange(n) * hh for n, hh in zip(grid, h)], indexing="ij"),
                   -1).reshape(-1, len(axes))
    r = np.sqrt(((pos[:, None, :] - pos[None, :, :]) ** 2).sum(-1))
    with np.errstate(divide="ignore"):
        G = np.where(r > 0, green(len(axes), np.where(r > 0, r, 1)), cell_mean(h))
    flat = moved.reshape(len(pos), -1)
    phi = (G @ flat * np.prod(h)).reshape(moved.shape)
    return np.moveaxis(phi, list(range(len(axes))), axes)


def reference(x, ops, axes, box, bnd):
    if "free" in bnd.values():
        if ops != ["poisson"]:
            raise Failure("boundary=free: apply=poisson alone")
        return free_space(x.astype(np.complex128) if np.iscomplexobj(x) else x.astype(float),
                          axes, box)
    X = x.astype(np.complex128)
    for a in axes:
        X = (sf.dst(X, type=2, axis=a) if bnd[a] == "dirichlet"
             else sf.dct(X, type=2, axis=a) if bnd[a] == "neumann" else sf.fft(X, axis=a))
    ks = wall_wave_numbers(x.shape, axes, box, bnd)
    for op in ops:
        X = X * factor(op, ks, x.shape)
    for a in axes:
        X = (sf.idst(X, type=2, axis=a) if bnd[a] == "dirichlet"
             else sf.idct(X, type=2, axis=a) if bnd[a] == "neumann" else sf.ifft(X, axis=a))
    return X if np.iscomplexobj(x) else X.real


def check_case(case):
    tok = parse_case(case)
    src = read_location(tok["in"])
    x = src.values
    out = read_location(tok["out"], default=src.path)
    y, attrs = out.values, out.attrs
    axes = parse_axes(tok.get("axes"), x.ndim)
    bnd = boundaries(tok.get("boundary"), axes)
    ref = reference(x, tok["apply"].split(","), axes, parse_box(tok.get("box")), bnd)
    tol = float(tok.get("tol", tolerance(x.dtype)))
    if y.shape != x.shape or np.iscomplexobj(y) != np.iscomplexobj(x):
        raise Failure("%s: result %s %s for input %s %s" % (case, y.shape, y.dtype, x.shape,
                                                             x.dtype))
    err = relative_error(y, ref)
    if not err <= tol:
        raise Failure("%s: relative error %.3g above %.3g" % (case, err, tol))
    walls = any(b != "periodic" for b in bnd.values())
    want = ",".join(bnd[a] for a in axes) if walls else None
    got = attrs.get("boundary")
    got = got.decode() if isinstance(got, bytes) else got
    if got != want:
        raise Failure("%s: boundary attribute %r, expected %r" % (case, got, want))
    return err


def profile(kind, n, L):
    """(u, u'') of one axis's factor at its samples."""
    if kind == "periodic":
        s = np.arange(n) / n
        w = 2 * np.pi
        u = np.exp(np.sin(w * s))
        return u, u * ((w * np.cos(w * s)) ** 2 - w * w * np.sin(w * s)) / L ** 2
    s = (np.arange(n) + 0.5) / n
    if kind == "dirichlet":
        e = np.exp(s)
        return e * np.sin(np.pi * s), e * ((1 - np.pi ** 2) * np.sin(np.pi * s)
                                           + 2 * np.pi * np.cos(np.pi * s)) / L ** 2
    return s ** 2 * (1 - s) ** 2, (2 - 12 * s + 12 * s ** 2) / L ** 2


def manufactured(path, shape_text, bnd_text, box_text=None):
    shape = [int(v) for v in shape_text.split("x")]
    axes = list(range(len(shape)))
    bnd = boundaries(bnd_text, axes)
    L = box_lengths(shape, axes, parse_box(box_text))
    us = [profile(bnd[a], shape[a], L[a]) for a in axes]
    phi = np.ones(shape)
    f = np.zeros(shape)
    for a in axes:
        phi = phi * along(us[a][0], a, len(shape))
    for a in axes:
        term = np.ones(shape)
        for b in axes:
            term = term * along(us[b][1] if b == a else us[b][0], b, len(shape))
        f = f + term
    if "dirichlet" not in bnd.values():
        phi = phi - phi.mean()
    with h5py.File(path, "w") as h:
        h["phi"] = phi
        h["f"] = f


def gaussian(path, n_text, sigma_text):
    from scipy.special import erf
    n, sigma = int(n_text), float(sigma_text)
    x = (np.arange(n) + 0.5) / n - 0.5
    X, Y, Z = np.meshgrid(x, x, x, indexing="ij")
    r = np.sqrt(X * X + Y * Y + Z * Z)
    with h5py.File(path, "w") as h:
        h["rho"] = np.exp(-r * r / (2 * sigma * sigma)) / ((2 * np.pi) ** 1.5 * sigma ** 3)
        h["phi"] = -erf(r / (np.sqrt(2) * sigma)) / (4 * np.pi * r)


def main(argv):
    if len(argv) < 3 or argv[1] not in ("check", "manufactured", "error", "gaussian"):
        print(__doc__, file=sys.stderr)
        return 2
    if argv[1] == "manufactured":
        manufactured(*argv[2:6])
        return 0
    if argv[1] == "gaussian":
        gaussian(*argv[2:5])
        return 0
    if argv[1] == "error":
        print("%.6g" % relative_error(read_location(argv[2]).values, read_location(argv[3]).values))
        return 0
    failed = 0
    for case in argv[2:]:
        try:
            print("ok %.3g: %s" % (check_case(case), case))
        except (Failure, KeyError, OSError) as e:
            print("FAILED: %s" % e)
            failed = 1
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv))
