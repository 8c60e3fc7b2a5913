#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""power_table_oracle: does a measured power spectrum follow a table?

  power_table_oracle.py check SPECTRUM.h5 TABLE SHAPE L [TRANSFER]

SPECTRUM.h5 holds fftshard's /power_spectrum (shells of k_f, --box-size=L
on every axis) of a real Gaussian random field that fftshard-mkdata
--power-table=TABLE wrote with --box-size=L on the grid SHAPE (e.g.
32x32x32); with TRANSFER, of that field after --apply=transfer:TRANSFER.

The expectation is computed here from the definitions, not from the
programs: every mode k of the full grid (k_a = 2 pi fftfreq(n_a, 1/n_a) /
L) has <|X|^2> V / N^2 = P(|k|) T(|k|)^2 (P interpolated linearly in the
table by numpy.interp, T likewise, P = 0 at k = 0), and |X|^2 V / N^2 is
P T^2 times an exponential variable of variance 1, the modes k and -k
being one draw; a mode that is its own mirror (every f_a 0 or n_a/2) is
real, P T^2 times a chi-square variable of one degree (variance 2). A
shell's measured power is the mean over its M modes, so its expectation is
the mean of P T^2 over them and its variance

  var = (sum over pairs of (2 P T^2)^2 + sum over own mirrors of 2 (P T^2)^2) / M^2.

The check: z_i = (measured - expected) / sqrt(var) for every shell with a
nonzero expectation, and chi2 = sum z_i^2 over those B shells. For a field
that follows the table, chi2 follows a chi-square law of about B degrees
(the shells are independent: no mode is in two), of mean B and standard
deviation sqrt(2B), and no |z| is large; the bound chi2 < B + 6 sqrt(2B)
and max |z| < 6 fails a correct field with a probability below 1e-6 (the
few-mode shells are skewed, their exponential tails still well inside 6
sigma of the whole), while a field of another spectrum (the table ignored,
T not applied, a power off by 10 %) exceeds it by far on a 32^3 grid.
Prints chi2, B and the largest |z|. Exit status 0 when the bound holds, 1
when it does not, 2 on a usage error.
"""

import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from oracle_common import along, frequencies, wave_numbers  # noqa: E402


def table(path):
    t = np.loadtxt(path, comments="#", ndmin=2)
    return t[:, 0], t[:, 1]


def main(argv):
    if len(argv) not in (6, 7) or argv[1] != "check":
        print(__doc__, file=sys.stderr)
        return 2
    shape = [int(x) for x in argv[4].split("x")]
    L = float(argv[5])
    kt, pt = table(argv[3])
    ndim = len(shape)
    k2 = np.zeros(shape)
    for k in wave_numbers(shape, range(ndim), [L]).values():
        k2 = k2 + k * k
    own = np.ones(shape, bool)
    for ax, n in enumerate(shape):
        f = frequencies(n)
        mirror = (f == 0) | ((n % 2 == 0) & (np.abs(f) == n // 2))
        own = own & along(mirror, ax, ndim)
    k = np.sqrt(k2)
    power = np.where(k > 0, np.interp(k, kt, pt), 0.0)
    if len(argv) == 7:
        tk, tt = table(argv[6])
        power = power * np.interp(k, tk, tt) ** 2
    kf = 2 * np.pi / L
    shell = np.floor(k / kf + 0.5).astype(int)
    nb = shell.max() + 1
    modes = np.bincount(shell.ravel(), minlength=nb)
    expect = np.bincount(shell.ravel(), power.ravel(), nb) / modes
    # each pair (k, -k) is counted twice among the modes: its share of the
    # sum is 2 P E, variance (2 P)^2, counted once (half the sum over both)
    var_terms = np.where(own, 2 * power**2, 0.5 * (2 * power) ** 2)
    var = np.bincount(shell.ravel(), var_terms.ravel(), nb) / modes**2
    with h5py.File(argv[2], "r") as f:
        got = f["power_spectrum/power"][()]
        got_modes = f["power_spectrum/modes"][()]
    if got.shape != expect.shape or not np.array_equal(got_modes, modes):
        print(f"shells differ: {got_modes} != {modes}")
        return 1
    use = expect > 0
    z = (got[use] - expect[use]) / np.sqrt(var[use])
    chi2, b = float(np.sum(z * z)), int(use.sum())
    bound = b + 6 * np.sqrt(2 * b)
    print(f"chi2 {chi2:.2f} over {b} shells (bound {bound:.1f}), max |z| {np.abs(z).max():.2f}")
    if chi2 > bound or np.abs(z).max() > 6:
        print("measured", got[use])
        print("expected", expect[use])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
