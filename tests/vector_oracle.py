#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""vector_oracle: the independent check of fftshard --vector (numpy, h5py).

Computes each result from fftshard(1)'s definition (VECTOR CALCULUS) with
numpy's full complex fftn over the transformed axes (never the half
spectrum). The transformed axes a = 0 .. D-1 (x, y, z) are the array's in
increasing order; k_a = 2 pi fftfreq(n_a, 1/n_a) / L_a (L_a = n_a, or
box=), and k'_a = k_a with the Nyquist index n_a / 2 of an even axis 0:
  gradient    grad_a = ifftn(i k'_a X)
  divergence  ifftn(i sum_a k'_a V_a)
  curl        curl_a = ifftn(i (k'_b V_c - k'_c V_b)), (a, b, c) cyclic
  helmholtz   compressive_a = ifftn(k'_a (k'.V) / |k'|^2), 0 where |k'| = 0;
              solenoidal_a = ifftn(V_a) - compressive_a
the real part for real inputs.

  vector_oracle.py check CASE [CASE...]
      CASE: whitespace-separated tokens
        op=gradient|curl|divergence|helmholtz
        in=FILE:/ds[,FILE:/ds...]   the INPUTs (the components in order)
        out=FILE[:/group]            fftshard's OUTPUT (results under /group)
        axes=LIST                    --axes (default all)
        box=L[,L...]                 --box-size (default the lengths)
        tol=X                        max |result - reference| / max |reference|
                                     (default 1e-12; 1e-5 for single precision)
      Every result must be there with the inputs' shape and precision, real
      for real inputs, with the attributes operation and direction "round
      trip" and the first input's own attributes.

  vector_oracle.py helmholtz FILE:/ds,FILE:/ds,FILE:/ds OUT
      The parts in OUT: S + C == V (1e-5 of max |V|), the divergence of S
      and the curl of C (numpy, spectrally, with k') below 1e-5 of V's.

  vector_oracle.py sine OUT:/ds N0xN1xN2 L0,L1,L2 DTYPE
      Write f = sin(2 pi 2 x / L0) cos(2 pi 3 y / L1) + sin(2 pi z / L2) at
      x_j = j L / n.
  vector_oracle.py sine-check FILE:/ds OUT L0,L1,L2 TOL
      OUT's grad_x, grad_y, grad_z equal f's analytic derivatives.

Exit status: 0 when everything matched, 1 when something did not (each
failure printed), 2 on a usage error.
"""

import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from oracle_common import (Failure, k_prime, lost_attributes, parse_axes, parse_box,  # noqa: E402
                           parse_case, read_location, split_location, tolerance, wave_numbers)

LETTERS = "xyz"


def kprime(shape, axes, box):
    """k'_a over the transformed axes in increasing order, each shaped along its axis."""
    return [k_prime(k) for k in wave_numbers(shape, axes, box).values()]


def references(op, fields, axes, box):
    """{name: reference array} from the definition."""
    X = [np.fft.fftn(f.astype(np.complex128), axes=axes) for f in fields]
    ks = kprime(fields[0].shape, axes, box)
    D = len(axes)
    back = lambda s: np.fft.ifftn(s, axes=axes)
    out = {}
    if op == "gradient":
        for a in range(D):
            out["grad_" + LETTERS[a]] = back(1j * ks[a] * X[0])
    elif op == "divergence":
        out["divergence"] = back(1j * sum(ks[a] * X[a] for a in range(D)))
    elif op == "curl":
        for a in range(3):
            b, c = (a + 1) % 3, (a + 2) % 3
            out["curl_" + LETTERS[a]] = back(1j * (ks[b] * X[c] - ks[c] * X[b]))
    elif op == "helmholtz":
        k2 = sum(k * k for k in ks)
        dot = sum(ks[a] * X[a] for a in range(D))
        with np.errstate(divide="ignore", invalid="ignore"):
            phi = np.where(k2 > 0, dot / np.where(k2 > 0, k2, 1), 0)
        for a in range(D):
            C = ks[a] * phi
            out["solenoidal_" + LETTERS[a]] = back(X[a] - C)
            out["compressive_" + LETTERS[a]] = back(C)
    else:
        raise Failure("unknown op " + op)
    if all(np.isrealobj(f) for f in fields):
        out = {n: v.real for n, v in out.items()}
    return out


def check_case(case):
    t = parse_case(case)
    op = t["op"]
    inputs = [read_location(s) for s in t["in"].split(",")]
    fields, attrs0 = [d.values for d in inputs], inputs[0].attrs
    nd = fields[0].ndim
    axes = sorted(parse_axes(t.get("axes"), nd))
    box = parse_box(t.get("box"))
    tol = float(t.get("tol", tolerance(fields[0].dtype)))
    refs = references(op, fields, axes, box)
    outfile, group = split_location(t["out"])
    group = (group or "").rstrip("/")
    scale = max(np.abs(r).max() for r in refs.values())
    with h5py.File(outfile, "r") as f:
        for name, ref in refs.items():
            path = group + "/" + name
            if path not in f:
                raise Failure(f"{case}: {path} missing (has {list(f)})")
            d = f[path]
            got = d[()]
            if got.shape != ref.shape:
                raise Failure(f"{case}: {path} shape {got.shape} != {ref.shape}")
            if got.dtype != fields[0].dtype:
                raise Failure(f"{case}: {path} dtype {got.dtype} != {fields[0].dtype}")
            den = max(np.abs(ref).max(), scale * 1e-3)
            err = np.abs(got - ref).max() / den
            if not err <= tol:
                raise Failure(f"{case}: {path} relative error {err:.3g} > {tol:g}")
            a = d.attrs
            if a.get("operation") != op or a.get("direction") != "round trip":
                raise Failure(f"{case}: {path} attributes {dict(a)}")
            for key in lost_attributes(attrs0, a):
                raise Failure(f"{case}: {path} lacks the input's attribute {key}")
    return len(refs)


def helmholtz_props(specs, outfile):
    V = [read_location(s).values.astype(np.float64) for s in specs.split(",")]
    axes = list(range(V[0].ndim))
    D = len(V)
    with h5py.File(outfile, "r") as f:
        S = [f["solenoidal_" + LETTERS[a]][()].astype(np.float64) for a in range(D)]
        C = [f["compressive_" + LETTERS[a]][()].astype(np.float64) for a in range(D)]
    ks = kprime(V[0].shape, axes, None)
    vmax = max(np.abs(v).max() for v in V)
    err = max(np.abs(S[a] + C[a] - V[a]).max() for a in range(D)) / vmax
    if not err < 1e-5:
        raise Failure(f"S + C != V: {err:.3g}")
    F = lambda x: np.fft.fftn(x)
    div = lambda W: np.abs(np.fft.ifftn(sum(1j * ks[a] * F(W[a]) for a in range(D)))).max()
    curl = lambda W: max(np.abs(np.fft.ifftn(1j * (ks[(a + 1) % 3] * F(W[(a + 2) % 3]) -
                                                  ks[(a + 2) % 3] * F(W[(a + 1) % 3])))).max()
                         for a in range(3))
    dS, dV = div(S), div(V)
    cC, cV = curl(C), curl(V)
    if not dS < 1e-5 * dV:
        raise Failure(f"div S = {dS:.3g}, div V = {dV:.3g}")
    if not cC < 1e-5 * cV:
        raise Failure(f"curl C = {cC:.3g}, curl V = {cV:.3g}")
    print(f"S + C - V {err:.3g}, div S / div V {dS / dV:.3g}, curl C / curl V {cC / cV:.3g}")


def sine_field(shape, box):
    x, y, z = (np.arange(n) * (L / n) for n, L in zip(shape, box))
    X, Y, Z = np.meshgrid(x, y, z, indexing="ij")
    L0, L1, L2 = box
    f = np.sin(2 * np.pi * 2 * X / L0) * np.cos(2 * np.pi * 3 * Y / L1) + np.sin(2 * np.pi * Z / L2)
    g = [2 * np.pi * 2 / L0 * np.cos(2 * np.pi * 2 * X / L0) * np.cos(2 * np.pi * 3 * Y / L1),
         -2 * np.pi * 3 / L1 * np.sin(2 * np.pi * 2 * X / L0) * np.sin(2 * np.pi * 3 * Y / L1),
         2 * np.pi / L2 * np.cos(2 * np.pi * Z / L2)]
    return f, g


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        if argv[1] == "check":
            n = sum(check_case(c) for c in argv[2:])
            print(f"{len(argv) - 2} cases, {n} results match")
        elif argv[1] == "helmholtz":
            helmholtz_props(argv[2], argv[3])
        elif argv[1] == "sine":
            path, ds = split_location(argv[2])
            shape = [int(s) for s in argv[3].split("x")]
            box = [float(s) for s in argv[4].split(",")]
            f, _ = sine_field(shape, box)
            with h5py.File(path, "a") as h:
                h[ds] = f.astype(argv[5])
        elif argv[1] == "sine-check":
            f = read_location(argv[2]).values
            box = [float(s) for s in argv[4].split(",")]
            _, g = sine_field(f.shape, box)
            tol = float(argv[5])
            with h5py.File(argv[3], "r") as h:
                for a in range(3):
                    got = h["grad_" + LETTERS[a]][()]
                    err = np.abs(got - g[a]).max() / np.abs(g[a]).max()
                    if not err <= tol:
                        raise Failure(f"grad_{LETTERS[a]}: {err:.3g} > {tol:g}")
                    print(f"grad_{LETTERS[a]}: {err:.3g}")
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except Failure as e:
        print("FAIL:", e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
