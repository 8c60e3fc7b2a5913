#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""phase_oracle: the independent check of fftshard --phase-correlate's
shifts per frame (numpy, h5py).

  phase_oracle.py make FILE SHAPE AXES SEED MAXSHIFT NOISE [DTYPE] [crop]
      Write FILE with /a, a stack of one smooth random image (white noise
      times exp(-|k|^2 / 2 sigma^2) in numpy's fftn), repeated over the
      batch axes, and /b, each frame of it moved by a known shift drawn
      uniformly in [-MAXSHIFT, MAXSHIFT] along each transformed axis
      (sub-pixel: the Fourier shift theorem, the real part for a real
      image), plus Gaussian noise of NOISE times the image's standard
      deviation; /truth holds the shifts (frames x axes), /ref the image
      once (the reference a user broadcasts over the stack). SHAPE is
      N0xN1x..., AXES the transformed axes (0,1 or 1,2 ...), DTYPE float64
      (default), float32 or complex128. crop: the image is the centre of a
      larger scene and each frame the same centre of the moved scene (the
      frames are not periodic: what --window is for).

  phase_oracle.py check FILE OUT REPORT AXES UPSAMPLE [TOL [WINDOW [WEIGHT]]]
      From the definition (Guizar-Sicairos, Thurman and Fienup, Opt. Lett.
      33, 156 (2008)), per frame: R = fftn(a) conj(fftn(b)), R / |R| (0
      where |R| = 0), times WEIGHT's W(|k|) when given, the integer peak s = argmax Re ifftn (numpy's signed
      shift), then with UPSAMPLE U > 1 the direct sum
        r(x) = 1/N sum over the full spectrum of R/|R| exp(2 pi i sum_a f_a x_a / n_a),
        f_a = fftfreq(n_a, 1/n_a),
      at x_a = s_a + (j - floor(M/2)) / U, j = 0 .. M - 1, M = ceil(1.5 U),
      and its largest real part. OUT's group /phase_shifts (shift,
      peak_height, frame and axis as dimension scales) and REPORT's
      combine.frames must equal it (1e-9; single precision: one grid step
      1/U and 2e-3 of the height), and every shift must be within TOL
      (default 0.1) of /truth. AXES in any order, as --axes. WINDOW hann: a and b multiplied by the
      product of scipy.signal.windows.hann(n, sym=False) over the
      transformed axes first (fftshard's --window=hann; none: no window).
      WEIGHT: --apply's list of gaussian:R, lowpass:K[:N], highpass:K[:N]
      (N 2 by default), the product of exp(-k^2 R^2 / 2),
      1 / (1 + (k/K)^2N) and (k/K)^2N / (1 + (k/K)^2N), k^2 the sum over
      the transformed axes of (2 pi fftfreq(n))^2 (radians per sample).

Exit status: 0 when everything matched, 1 when something did not, 2 on a
usage error.
"""

import json
import math
import sys

import h5py
import numpy as np


def smooth_image(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if dtype == "complex128":
        x = x + 1j * rng.standard_normal(shape)
    k2 = sum(np.meshgrid(*[(np.fft.fftfreq(n) * n / (n / 8.0)) ** 2 for n in shape],
                         indexing="ij"))
    y = np.fft.ifftn(np.fft.fftn(x) * np.exp(-k2 / 2))
    return y if dtype == "complex128" else y.real


def fourier_shift(img, d):
    """img moved by -d: b(x) = img(x + d), so that img(x) = b(x - d)."""
    phase = sum(np.meshgrid(*[np.fft.fftfreq(n) * dk for n, dk in zip(img.shape, d)],
                            indexing="ij"))
    y = np.fft.ifftn(np.fft.fftn(img) * np.exp(2j * np.pi * phase))
    return y if np.iscomplexobj(img) else y.real


def make(path, shape, axes, seed, maxshift, noise, *options):
    dtype = ([o for o in options if o != "crop"] or ["float64"])[0]
    crop = "crop" in options
    rng = np.random.default_rng(seed)
    batch = [k for k in range(len(shape)) if k not in axes]
    tshape = [shape[k] for k in axes]
    # crop: the frames are the centre of a larger scene, moved: not periodic
    margin = int(math.ceil(maxshift)) + 32 if crop else 0
    scene = smooth_image(rng, [n + 2 * margin for n in tshape], dtype)
    centre = tuple(slice(margin, margin + n) for n in tshape)
    img = scene[centre]
    frames = int(np.prod([shape[k] for k in batch])) if batch else 1
    truth = rng.uniform(-maxshift, maxshift, size=(frames, len(axes)))
    a = np.empty([shape[k] for k in batch] + tshape, dtype=img.dtype)
    b = np.empty_like(a)
    for f, idx in enumerate(np.ndindex(*[shape[k] for k in batch])):
        a[idx] = img
        moved = fourier_shift(scene, truth[f])[centre]
        b[idx] = moved + noise * img.std() * rng.standard_normal(tshape)
    # the batch axes back where SHAPE puts them
    order = batch + list(axes)
    inv = np.argsort(order)
    with h5py.File(path, "w") as f:
        f["a"] = np.transpose(a, inv).astype(dtype)
        f["b"] = np.transpose(b, inv).astype(dtype)
        f["truth"] = truth
        f["ref"] = img.astype(dtype)


def weight(shape, text):
    """W(|k|) of --apply's list on the full spectrum of shape."""
    k2 = sum(np.meshgrid(*[(2 * np.pi * np.fft.fftfreq(n)) ** 2 for n in shape], indexing="ij"))
    k = np.sqrt(k2)
    w = np.ones(shape)
    for item in text.split(","):
        name, *p = item.split(":")
        if name == "gaussian":
            w = w * np.exp(-k2 * float(p[0]) ** 2 / 2)
        elif name in ("lowpass", "highpass"):
            q = (k / float(p[0])) ** (2 * (int(p[1]) if len(p) > 1 else 2))
            w = w * (1 / (1 + q) if name == "lowpass" else q / (1 + q))
        else:
            raise SystemExit(f"phase_oracle: weight {item}: not known")
    return w


def register(a, b, upsample, weights=None):
    """One frame: the shift of a against b and its height, from the
    definition (the full spectrum, numpy's FFT, explicit kernels)."""
    r = np.fft.fftn(a.astype(np.complex128)) * np.conj(np.fft.fftn(b.astype(np.complex128)))
    m = np.abs(r)
    r = np.where(m > 0, r / np.where(m > 0, m, 1), 0)
    if weights is not None:
        r = r * weights
    field = np.fft.ifftn(r).real
    idx = np.unravel_index(np.argmax(field), field.shape)
    s = np.array([i - n if i > n // 2 else i for i, n in zip(idx, field.shape)], dtype=float)
    if upsample <= 1:
        return s, field[idx]
    M = int(math.ceil(1.5 * upsample))
    c = M // 2
    val = r / r.size
    for a_, n in enumerate(r.shape):
        x = s[a_] + (np.arange(M) - c) / upsample
        f = np.fft.fftfreq(n, 1.0 / n)
        E = np.exp(2j * np.pi * np.outer(x, f) / n)
        val = np.tensordot(val, E, axes=([0], [1]))
    top = np.unravel_index(np.argmax(val.real), val.shape)
    return s + (np.array(top) - c) / upsample, val.real[top]


def check(path, out, report, axes, upsample, tol, window=None, weights=None):
    with h5py.File(path, "r") as f:
        a, b, truth = f["a"][...], f["b"][...], f["truth"][...]
    batch = [k for k in range(a.ndim) if k not in axes]
    a = np.transpose(a, batch + list(axes))
    b = np.transpose(b, batch + list(axes))
    if window == "hann":
        import scipy.signal.windows
        w = np.ones(())
        for n in a.shape[len(batch):]:
            w = np.multiply.outer(w, scipy.signal.windows.hann(n, sym=False))
        a, b = a * w.astype(a.dtype), b * w.astype(a.dtype)
    with h5py.File(out, "r") as f:
        g = f["phase_shifts"]
        shift, height = g["shift"][...], g["peak_height"][...]
        frame, axis = g["frame"][...], g["axis"][...]
        scales = [[h5py.h5r.get_name(ref, f.id).decode() for ref in refs]
                  for refs in g["shift"].attrs.get("DIMENSION_LIST", [])]
        up = int(g.attrs["upsample"])
    with open(report) as fr:
        fj = json.load(fr)["combine"]["frames"]
    failed = []
    frames = truth.shape[0]
    if shift.shape != (frames, len(axes)) or height.shape != (frames,):
        failed.append(f"shapes {shift.shape} {height.shape}, expected ({frames}, {len(axes)})")
    if list(frame) != list(range(frames)) or list(axis) != list(axes) or up != upsample:
        failed.append(f"frame {list(frame)}, axis {list(axis)}, upsample {up}")
    if scales != [["/phase_shifts/frame"], ["/phase_shifts/axis"]]:
        failed.append(f"dimension scales {scales}")
    # the report's numbers have 9 significant digits
    if fj["count"] != frames or not np.allclose(np.array(fj["shift"]), shift, rtol=1e-8, atol=0) or \
            not np.allclose(np.array(fj["height"]), height, rtol=1e-8, atol=0):
        failed.append("the report's frames differ from the group")
    # single precision: R / |R| takes the rounding of the spectrum's small
    # elements at full weight; one grid step and 2e-3 of the height
    single = a.dtype in (np.float32, np.complex64)
    satol, hatol = (1.0 / max(upsample, 1) + 1e-9, 2e-3) if single else (1e-9, 1e-9)
    worst = 0.0
    w = weight(a.shape[len(batch):], weights) if weights else None
    for fi, idx in enumerate(np.ndindex(*a.shape[:len(batch)])):
        s, h = register(a[idx], b[idx], upsample, w)
        if not np.allclose(shift[fi], s, rtol=0, atol=satol) or abs(height[fi] - h) > hatol:
            failed.append(f"frame {fi}: shift {shift[fi]} height {height[fi]}, numpy {s} {h}")
        err = np.max(np.abs(shift[fi] - truth[fi]))
        worst = max(worst, err)
        if not err <= tol:
            failed.append(f"frame {fi}: shift {shift[fi]}, truth {truth[fi]}")
    for msg in failed:
        print("FAIL " + msg)
    print(f"{'FAIL' if failed else 'ok'} {out}: {frames} frames, largest error {worst:.4f} px")
    return 1 if failed else 0


def main(argv):
    if len(argv) in (8, 9, 10) and argv[1] == "make":
        make(argv[2], [int(n) for n in argv[3].split("x")], [int(k) for k in argv[4].split(",")],
             int(argv[5]), float(argv[6]), float(argv[7]), *argv[8:])
        return 0
    if len(argv) in (7, 8, 9, 10) and argv[1] == "check":
        if len(argv) >= 9 and argv[8] == "none":
            argv = argv[:8] + [None] + argv[9:]
        return check(argv[2], argv[3], argv[4], sorted(int(k) for k in argv[5].split(",")),
                     int(argv[6]), float(argv[7]) if len(argv) >= 8 else 0.1, *argv[8:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
