#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""paint_oracle: the independent check of --paint (numpy, h5py).

Paints particles with numpy.add.at from the documented windows (fftshard(1),
PAINTING): a particle at x, u = x n / L in mesh units, gives mesh point i
(at x = i L / n) the weight W_p(u - i) of the B-spline of order p,

  ngp  W(s) = 1 for -1/2 <= s < 1/2 (the point floor(u + 1/2))
  cic  W(s) = 1 - |s|                      for |s| < 1
  tsc  W(s) = 3/4 - s^2                    for |s| < 1/2
            = (3/2 - |s|)^2 / 2            for 1/2 <= |s| < 3/2
  pcs  W(s) = (4 - 6 s^2 + 3 |s|^3) / 6    for |s| < 1
            = (2 - |s|)^3 / 6              for 1 <= |s| < 2

every axis's weights multiplied, the points wrapped periodically. The
field is delta = rho / mean - 1 (rho the weighted sum per point), the
density sum / (V / N) or the sum. --interlace (nbodykit's scheme): the
particles also painted at u + 1/2, both transformed (numpy.fft.rfftn with
--real, else fftn), X = (X1 + X2 exp(i pi sum_a f_a / n_a)) / 2 with f_a
numpy's rfftfreq on the halved (last) axis, fftfreq on the others, and
brought back (irfftn, ifftn).

  paint_oracle.py make FILE [KEY=VALUE|FLAG ...]
      A snapshot: /PartType1/Coordinates (N x D), /PartType1/Masses with
      `masses`, /Header (BoxSize, NumPart_Total with its high word,
      NumPart_ThisFile, NumFilesPerSnapshot) unless header=0. Keys: n=N
      (particles, default 1000), d=D (1 to 3, default 3), box=L, dtype=
      float32|float64, seed=S, files=K (FILE holds %d: K files, the rows
      split unevenly), edges (particles exactly on cells' edges and
      points, at 0 and just below L, and some a period outside the box;
      with mesh=N the edges of that mesh), nan=J (row J's x is NaN).
  paint_oracle.py reference SNAP[,SNAP...] OUT.h5 KEY=VALUE ...
      The reference mesh written as OUT.h5:/mesh; prints the shot noise
      V / N_p (delta, unweighted: V / N^2 (N / sum w)^2 sum w^2).
  paint_oracle.py check SNAP[,SNAP...] OUT.h5:/DATASET KEY=VALUE ...
      fftshard's --write-mesh against the reference (its real part when
      the transform was c2c): max |got - ref| at most tol (default 1e-12) times max(1, max |ref|).
  Keys of both: window=ngp|cic|tsc|pcs mesh=N|NxNxN box=L (default the
  Header's) interlace real masses field=delta|density|sum.

Exit status 0 when it matched, 1 when not, 2 on a usage error.
"""

import sys

import h5py
import numpy as np

ORDER = {"ngp": 1, "cic": 2, "tsc": 3, "pcs": 4}


def window(p, s):
    """W_p(s), the documented formula."""
    a = np.abs(s)
    if p == 1:
        return ((s >= -0.5) & (s < 0.5)).astype(float)
    if p == 2:
        return np.where(a < 1, 1 - a, 0.0)
    if p == 3:
        return np.where(a < 0.5, 0.75 - s * s, np.where(a < 1.5, 0.5 * (1.5 - a) ** 2, 0.0))
    return np.where(a < 1, (4 - 6 * s * s + 3 * a ** 3) / 6,
                    np.where(a < 2, (2 - a) ** 3 / 6, 0.0))


def paint(x, w, p, n, L, shift=0.0):
    """The weighted sums on a mesh of shape n (numpy.add.at)."""
    D = len(n)
    mesh = np.zeros(n)
    u = [np.mod(x[:, a], L[a]) * n[a] / L[a] + shift for a in range(D)]
    base = [np.floor(ua).astype(np.int64) for ua in u]
    offsets = range(-2, 3)
    for combo in np.ndindex(*([len(offsets)] * D)):
        weight = w.copy()
        idx = []
        for a in range(D):
            c = base[a] + offsets[combo[a]]
            weight = weight * window(p, u[a] - c)
            idx.append(np.mod(c, n[a]))
        keep = weight != 0
        np.add.at(mesh, tuple(i[keep] for i in idx), weight[keep])
    return mesh


def snapshot(names):
    """Positions, weights (None: unit) and the Header's box of the files."""
    xs, ws, box = [], [], None
    for name in names:
        with h5py.File(name, "r") as f:
            xs.append(np.asarray(f["PartType1/Coordinates"], dtype=np.float64))
            if "PartType1/Masses" in f:
                ws.append(np.asarray(f["PartType1/Masses"], dtype=np.float64))
            if "Header" in f and "BoxSize" in f["Header"].attrs:
                box = np.atleast_1d(f["Header"].attrs["BoxSize"]).astype(float)
    x = np.concatenate(xs)
    if x.ndim == 1:
        x = x[:, None]
    return x, (np.concatenate(ws) if ws else None), box


def reference(names, opts):
    x, masses, hbox = snapshot(names)
    D = x.shape[1]
    mesh = [int(v) for v in opts["mesh"].split("x")]
    n = mesh * D if len(mesh) == 1 else mesh
    box = [float(v) for v in opts["box"].split(",")] if "box" in opts else list(hbox)
    L = box * D if len(box) == 1 else box
    w = masses if "masses" in opts and masses is not None else np.ones(len(x))
    p = ORDER[opts["window"]]
    ok = np.all(np.isfinite(x), axis=1)
    x, w = x[ok], w[ok]
    fields = [paint(x, w, p, n, L)]
    if "interlace" in opts:
        fields.append(paint(x, w, p, n, L, 0.5))
    N, V = float(np.prod(n)), float(np.prod(L))
    field = opts.get("field", "delta")
    a, b = (N / V, 0.0) if field == "density" else (1.0, 0.0)
    if field == "delta":
        a, b = N / w.sum(), -1.0
    fields = [f * a + b for f in fields]
    shot = V / (N * N) * a * a * float(np.sum(w * w))
    if len(fields) == 1:
        return fields[0], shot
    real = "real" in opts
    fwd = np.fft.rfftn if real else np.fft.fftn
    X1, X2 = fwd(fields[0]), fwd(fields[1])
    phase = np.zeros(X1.shape)
    for ax in range(D):
        f = np.fft.rfftfreq(n[ax], 1.0 / n[ax]) if real and ax == D - 1 else \
            np.fft.fftfreq(n[ax], 1.0 / n[ax])
        shape = [1] * D
        shape[ax] = len(f)
        phase = phase + np.pi * f.reshape(shape) / n[ax]
    X = 0.5 * (X1 + X2 * np.exp(1j * phase))
    return (np.fft.irfftn(X, s=n) if real else np.fft.ifftn(X)), shot


def keys(args):
    opts = {}
    for a in args:
        k, _, v = a.partition("=")
        opts[k] = v
    return opts


def make(name, opts):
    rng = np.random.default_rng(int(opts.get("seed", 1)))
    n, D = int(opts.get("n", 1000)), int(opts.get("d", 3))
    L = float(opts.get("box", 10.0))
    x = rng.uniform(0, L, (n, D))
    if "edges" in opts:
        m = int(opts.get("mesh", 8))
        h = L / m
        special = [0.0, h, 2 * h, 0.5 * h, 1.5 * h, (m - 1) * h, (m - 0.5) * h,
                   np.nextafter(L, 0), L - 0.5 * h, -0.5 * h, L + 0.25 * h, -L + 0.5 * h,
                   2 * L - h]
        extra = np.array([[special[(i + 3 * a) % len(special)] for a in range(D)]
                          for i in range(4 * len(special))])
        x = np.concatenate([x, extra])
        n = len(x)
    if "nan" in opts:
        x[int(opts["nan"]), 0] = np.nan
    x = x.astype(opts.get("dtype", "float64"))
    if D == 1 and "flat" in opts:
        x = x[:, 0]
    mass = rng.uniform(0.5, 2.0, n)
    k = int(opts.get("files", 1))
    cuts = np.sort(rng.choice(np.arange(1, n), k - 1, replace=False)) if k > 1 else []
    parts = np.split(np.arange(n), cuts)
    for i, rows in enumerate(parts):
        with h5py.File(name % i if k > 1 else name, "w") as f:
            f["PartType1/Coordinates"] = x[rows]
            if "masses" in opts:
                f["PartType1/Masses"] = mass[rows]
            if opts.get("header", "1") != "0":
                h = f.create_group("Header")
                h.attrs["BoxSize"] = L
                total = np.array([0, n, 0, 0, 0, 0], np.uint64)
                h.attrs["NumPart_Total"] = (total & 0xFFFFFFFF).astype(np.uint32)
                h.attrs["NumPart_Total_HighWord"] = (total >> 32).astype(np.uint32)
                h.attrs["NumPart_ThisFile"] = np.array([0, len(rows), 0, 0, 0, 0], np.int32)
                h.attrs["NumFilesPerSnapshot"] = np.int32(k)


def main(argv):
    if len(argv) < 3 or argv[1] not in ("make", "reference", "check"):
        print(__doc__, file=sys.stderr)
        return 2
    if argv[1] == "make":
        make(argv[2], keys(argv[3:]))
        return 0
    names = argv[2].split(",")
    opts = keys(argv[4:])
    ref, shot = reference(names, opts)
    if argv[1] == "reference":
        with h5py.File(argv[3], "w") as f:
            f["mesh"] = ref
        print(repr(shot))
        return 0
    fname, _, ds = argv[3].partition(":")
    with h5py.File(fname, "r") as f:
        got = np.asarray(f[ds])
    if np.iscomplexobj(ref) and not np.iscomplexobj(got):
        ref = ref.real  # a real input's round trip writes the real part
    tol = float(opts.get("tol", 1e-12)) * max(1.0, float(np.max(np.abs(ref))))
    if got.shape != ref.shape:
        print(f"{argv[3]}: shape {got.shape}, expected {ref.shape}")
        return 1
    err = float(np.max(np.abs(got - ref)))
    print(f"{argv[3]}: max |got - ref| {err:.3g} (tol {tol:.3g})")
    return 0 if err <= tol else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
