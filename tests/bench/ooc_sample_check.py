#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""ooc_sample_check: a 3-D transform too large for numpy checked on samples.

  ooc_sample_check.py INPUT.h5[:/path] OUTPUT.h5[:/path] [--planes K0,K0...]
                      [--pencils K1:K2,...]

OUTPUT should hold numpy.fft.fftn(INPUT) (fftshard's forward transform, no
normalisation). One read of INPUT, a slab of planes at a time, gives from the
definition X[k0, k1, k2] = sum a[i0, i1, i2] exp(-2 pi i (k0 i0 / N0 + k1 i1 /
N1 + k2 i2 / N2)):
  a whole plane X[k0, :, :]: the sum over i0 of a[i0] exp(-2 pi i k0 i0 / N0),
      then numpy's 2-D FFT of that plane;
  a pencil X[:, k1, k2] along axis 0: for every i0 the sum over the plane
      a[i0] weighted by exp(-2 pi i (k1 i1 / N1 + k2 i2 / N2)), then numpy's
      1-D FFT of those N0 sums.
Sums in double precision. Prints each sample's largest difference over the
sample's largest magnitude; exit status 1 when one exceeds --tol (default
1e-5 for single precision OUTPUT, 1e-10 for double)."""

import argparse
import sys

import h5py
import numpy as np


def dataset(spec):
    name, _, path = spec.partition(":")
    return name, path or "/data"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--planes", default="0,1")
    ap.add_argument("--pencils", default="0:0,1:2,5:7")
    ap.add_argument("--tol", type=float)
    ap.add_argument("--slab-bytes", type=float, default=256e6)
    a = ap.parse_args()
    planes = [int(k) for k in a.planes.split(",") if k]
    pencils = [tuple(int(k) for k in p.split(":")) for p in a.pencils.split(",") if p]
    fin, pin = dataset(a.input)
    fout, pout = dataset(a.output)
    with h5py.File(fin, "r") as f:
        x = f[pin]
        n0, n1, n2 = x.shape
        # every sample's index taken modulo its axis, as numpy's negative indices
        planes = [k % n0 for k in planes]
        pencils = [(k1 % n1, k2 % n2) for k1, k2 in pencils]
        acc = {k: np.zeros((n1, n2), np.complex128) for k in planes}
        sums = {p: np.zeros(n0, np.complex128) for p in pencils}
        w1 = {p: np.exp(-2j * np.pi * p[0] * np.arange(n1) / n1) for p in pencils}
        w2 = {p: np.exp(-2j * np.pi * p[1] * np.arange(n2) / n2) for p in pencils}
        step = max(1, int(a.slab_bytes // (n1 * n2 * x.dtype.itemsize)))
        for i in range(0, n0, step):
            slab = x[i:i + step].astype(np.complex128)
            idx = np.arange(i, i + slab.shape[0])
            for k in planes:
                ph = np.exp(-2j * np.pi * k * idx / n0)
                acc[k] += np.tensordot(ph, slab, axes=(0, 0))
            for p in pencils:
                sums[p][i:i + slab.shape[0]] = (slab @ w2[p]) @ w1[p]
    single = False
    worst = 0.0
    with h5py.File(fout, "r") as g:
        y = g[pout]
        single = y.dtype == np.complex64
        for k in planes:
            want = np.fft.fft2(acc[k])
            got = y[k].astype(np.complex128)
            e = np.abs(got - want).max() / np.abs(want).max()
            print("plane k0=%d: %.3g" % (k, e))
            worst = max(worst, e)
        for p in pencils:
            want = np.fft.fft(sums[p])
            got = y[:, p[0], p[1]].astype(np.complex128)
            e = np.abs(got - want).max() / np.abs(want).max()
            print("pencil k1=%d k2=%d: %.3g" % (p[0], p[1], e))
            worst = max(worst, e)
    tol = a.tol if a.tol is not None else (1e-5 if single else 1e-10)
    print("largest relative difference %.3g (tolerance %.3g)" % (worst, tol))
    return 0 if worst <= tol else 1


if __name__ == "__main__":
    sys.exit(main())
