#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""window_oracle: the independent check of fftshard's non-periodic data
(--pad, --window, --mode) with numpy, scipy and h5py, from fftshard(1)'s
definitions (NON-PERIODIC DATA):

  a zero-padded (or cut) transform is numpy.fft.fftn(x, s, axes) (rfftn for
  --real), x the input times the windows;
  the windows are scipy.signal.windows.get_window(W, m, fftbins=not sym)
  over the m = min(n, s) points read along each transformed axis, their
  product over the axes;
  a linear convolution is scipy.signal.fftconvolve(a, b, mode, axes), a
  linear correlation scipy.signal.correlate(a, b, mode, method='fft') (of
  each index of the batch axes, which it cannot take itself).

  window_oracle.py check CASE [CASE...]
      Each CASE is whitespace-separated tokens:
        in=FILE[:/ds]     the input
        out=FILE[:/ds]    fftshard's OUTPUT (dataset default: in's)
        axes=LIST         --axes (default all, increasing)
        pad=N|Kx[,...]    --pad: one for all, or one per axis of axes
        window=W[,...]    --window: W is NAME or NAME:PARAM, likewise
        sym               --window-symmetric
        real              --real: numpy.fft.rfftn
        tol=X             max |result - reference| / max |reference|
                          (default 1e-12; 1e-5 for single precision)
      Besides the values: the attributes input_shape (the input's),
      padded_shape (with pad), window (the windows in the order of axes),
      window_form and window_power (the product of the mean(w^2)).

  window_oracle.py prepare IN[:/ds] OUT:/ds TOKENS...
      With the tokens axes=, pad=, window=, sym and box= of a spectrum run:
      write to OUT the input times its windows, zero padded (or cut) as
      numpy's s does, and print the tokens for tests/spectrum_oracle.py of
      its spectrum: box= (the padded axes' lengths at the input's spacing,
      L n_padded / n) and scale= (every power times 1 / mean(w^2), and with
      box= N / M, N the points of the padded axes and M those read).

  window_oracle.py linear CASE [CASE...]
      Each CASE: op=convolve|correlate mode=full|same|valid a=FILE[:/ds]
      [b=FILE[:/ds]] out=FILE[:/ds] [axes=LIST] [tol=X]. The result must
      have the mode's shape, be real for real inputs, single precision for
      single inputs, and carry operation, mode, direction "round trip",
      input and second_input.

  window_oracle.py apply CASE [CASE...]
      Each CASE: in= out= apply=LIST pad= [axes=] [box=] [tol=]: --apply on
      the zero-padded domain, tests/apply_oracle.py's definition on the
      padded input (its k on the padded grid, L_a n_padded / n), the first
      elements of the input's shape kept.

Exit status: 0 when everything matched, 1 when something did not (each
failure printed), 2 on a usage error.
"""

import os
import sys

import h5py
import numpy as np
import scipy.signal
from scipy.signal import windows as sw

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from oracle_common import (Failure, complex_of, is_single, parse_axes, parse_box,  # noqa: E402
                           parse_case, read_location, relative_error, split_location,
                           tolerance)

PATHS = {"convolve": "/convolution", "correlate": "/correlation"}


def per_axis(text, axes, what):
    """One item of a comma list for each of axes: one for all, or one each."""
    if text is None:
        return {a: None for a in axes}
    items = text.split(",")
    if len(items) == 1:
        items = items * len(axes)
    if len(items) != len(axes):
        raise Failure(f"{what}={text}: {len(items)} items for {len(axes)} axes")
    return dict(zip(axes, items))


def padded_length(item, n):
    if item is None:
        return n
    return n * int(item[:-1]) if item.endswith("x") else int(item)


def window_values(item, m, sym):
    """scipy's window of m points; None and 'none' give ones."""
    if item is None or item == "none":
        return np.ones(m)
    name, _, param = item.partition(":")
    if name == "tukey" and not param:
        param = "0.5"  # scipy's default alpha
    spec = (name, float(param)) if param else name
    return sw.get_window(spec, m, fftbins=not sym)


def domain(x, tok):
    """(axes, s by axis, the windowed input cut to the points read, the
    windows by axis)."""
    axes = parse_axes(tok.get("axes"), x.ndim)
    pads = per_axis(tok.get("pad"), axes, "pad")
    wins = per_axis(tok.get("window"), axes, "window")
    s = {a: padded_length(pads[a], x.shape[a]) for a in axes}
    cut = tuple(slice(0, min(x.shape[a], s[a])) if a in s else slice(None)
                for a in range(x.ndim))
    xr = x[cut].astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    ws = {}
    for a in axes:
        w = window_values(wins[a], xr.shape[a], "sym" in tok)
        ws[a] = w
        view = [1] * x.ndim
        view[a] = len(w)
        xr = xr * w.reshape(view)
    return axes, s, xr, ws, wins


def expected_window_text(axes, wins):
    if all(wins[a] in (None, "none") for a in axes):
        return None
    return [wins[a] or "none" for a in axes]


def same_windows(got, expected):
    """The window attribute against the windows asked: names equal,
    parameters equal as numbers (tukey's default alpha written out)."""
    items = got.split(",")
    if len(items) != len(expected):
        return False
    for g, e in zip(items, expected):
        gn, _, gp = g.partition(":")
        en, _, ep = e.partition(":")
        ep = ep or ("0.5" if en == "tukey" else "")
        if gn != en or (gp or ep) and float(gp or "nan") != float(ep or "nan"):
            return False
    return True


def check_attributes(attrs, x, axes, s, ws, wins, tok):
    def get(key):
        v = attrs.get(key)
        return v.decode() if isinstance(v, bytes) else v
    if list(np.atleast_1d(attrs.get("input_shape"))) != list(x.shape):
        raise Failure(f"input_shape {attrs.get('input_shape')}, the input's {x.shape}")
    shape = [s.get(a, x.shape[a]) for a in range(x.ndim)]
    if "pad" in tok and list(np.atleast_1d(attrs.get("padded_shape"))) != shape:
        raise Failure(f"padded_shape {attrs.get('padded_shape')}, expected {shape}")
    if "pad" not in tok and "padded_shape" in attrs:
        raise Failure("padded_shape without --pad")
    want = expected_window_text(axes, wins)
    if want is None:
        if "window" in attrs:
            raise Failure(f"window attribute {get('window')!r} without windows")
        return
    if not same_windows(get("window") or "", want):
        raise Failure(f"window attribute {get('window')!r}, expected {','.join(want)}")
    if get("window_form") != ("symmetric" if "sym" in tok else "periodic"):
        raise Failure(f"window_form {get('window_form')!r}")
    power = float(np.prod([np.mean(ws[a] ** 2) for a in axes]))
    if abs(float(attrs.get("window_power", np.nan)) - power) > 1e-12 * power:
        raise Failure(f"window_power {attrs.get('window_power')}, expected {power}")


def check_case(case):
    tok = parse_case(case)
    src = read_location(tok["in"])
    x = src.values
    axes, s, xr, ws, wins = domain(x, tok)
    sizes = [s[a] for a in axes]
    if "real" in tok:
        ref = np.fft.rfftn(xr, s=sizes, axes=axes)
    else:
        ref = np.fft.fftn(xr, s=sizes, axes=axes)
    out = read_location(tok["out"], default=src.path)
    y, attrs = complex_of(out.values), out.attrs
    if y.shape != ref.shape:
        raise Failure(f"shape {y.shape}, expected {ref.shape}")
    tol = float(tok.get("tol", tolerance(x.dtype)))
    err = relative_error(y, ref)
    if not err <= tol:
        raise Failure(f"relative error {err:.3g} > {tol:g}")
    check_attributes(attrs, x, axes, s, ws, wins, tok)
    return err


def prepare(args):
    src = read_location(args[0])
    tok = parse_case(" ".join(args[2:]))
    x = src.values
    axes, s, xr, ws, _ = domain(x, tok)
    padded = np.zeros([s.get(a, x.shape[a]) for a in range(x.ndim)], xr.dtype)
    padded[tuple(slice(0, n) for n in xr.shape)] = xr
    name, ds = split_location(args[1])
    with h5py.File(name, "a") as f:
        f[ds] = padded
    scale = 1.0 / float(np.prod([np.mean(ws[a] ** 2) for a in axes]))
    box = parse_box(tok.get("box"))
    tokens = []
    if box is not None:
        lengths = box * len(axes) if len(box) == 1 else box
        inc = sorted(axes)
        L = [lengths[i] * padded.shape[a] / x.shape[a] for i, a in enumerate(inc)]
        tokens.append("box=" + ",".join(repr(v) for v in L))
        N = float(np.prod([padded.shape[a] for a in axes]))
        M = float(np.prod([xr.shape[a] for a in axes]))
        scale *= N / M
    tokens.append(f"scale={scale!r}")
    print(" ".join(tokens))
    return 0


def linear_reference(op, a, b, mode, axes):
    if op == "convolve":
        return scipy.signal.fftconvolve(a, b, mode, axes=axes)
    batch = [k for k in range(a.ndim) if k not in axes]
    if not batch:
        return scipy.signal.correlate(a, b, mode, method="fft")
    slices = {}
    for index in np.ndindex(*[a.shape[k] for k in batch]):
        sel = [slice(None)] * a.ndim
        for k, i in zip(batch, index):
            sel[k] = i
        slices[index] = scipy.signal.correlate(a[tuple(sel)], b[tuple(sel)], mode, method="fft")
    first = next(iter(slices.values()))
    shape = list(first.shape)
    for k in batch:
        shape.insert(k, a.shape[k])
    out = np.zeros(shape, first.dtype)
    for index, v in slices.items():
        sel = [slice(None)] * a.ndim
        for k, i in zip(batch, index):
            sel[k] = i
        out[tuple(sel)] = v
    return out


def check_linear(case):
    tok = parse_case(case)
    first = read_location(tok["a"])
    second = read_location(tok.get("b", tok["a"]))
    a, b = first.values, second.values
    axes = parse_axes(tok.get("axes"), a.ndim)
    ref = linear_reference(tok["op"], a.astype(np.result_type(a, np.float64)),
                           b.astype(np.result_type(b, np.float64)), tok["mode"], axes)
    out = read_location(tok["out"], default=PATHS[tok["op"]])
    y = complex_of(out.values)
    attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in out.attrs.items()}
    if y.shape != ref.shape:
        raise Failure(f"shape {y.shape}, scipy's {ref.shape}")
    if np.iscomplexobj(y) != np.iscomplexobj(ref):
        raise Failure(f"type {y.dtype}, scipy's {ref.dtype}")
    if is_single(y.dtype) != (is_single(a.dtype) and is_single(b.dtype)):
        raise Failure(f"type {y.dtype} for {a.dtype} and {b.dtype}")
    tol = float(tok.get("tol", tolerance(a.dtype)))
    err = relative_error(y, ref)
    if not err <= tol:
        raise Failure(f"relative error {err:.3g} > {tol:g}")
    expected = {"operation": tok["op"], "mode": tok["mode"], "direction": "round trip",
                "input": f"{first.file}:{first.path}"}
    if "b" in tok:
        expected["second_input"] = f"{second.file}:{second.path}"
    for key, value in expected.items():
        if attrs.get(key) != value:
            raise Failure(f"attribute {key} = {attrs.get(key)!r}, expected {value!r}")
    return err


def check_apply(case):
    import apply_oracle  # the operators' definition, on the padded field
    tok = parse_case(case)
    src = read_location(tok["in"])
    x = src.values
    axes, s, xr, _, _ = domain(x, tok)
    padded = np.zeros([s.get(a, x.shape[a]) for a in range(x.ndim)], xr.dtype)
    padded[tuple(slice(0, n) for n in xr.shape)] = xr
    box = parse_box(tok.get("box"))
    inc = sorted(axes)
    if box is None:
        box = [float(padded.shape[a]) for a in inc]
    else:
        lengths = box * len(axes) if len(box) == 1 else box
        box = [lengths[i] * padded.shape[a] / x.shape[a] for i, a in enumerate(inc)]
    ref = apply_oracle.reference(padded, tok["apply"].split(","), axes, box)
    ref = ref[tuple(slice(0, n) for n in x.shape)]
    y = complex_of(read_location(tok["out"], default=src.path).values)
    if y.shape != x.shape:
        raise Failure(f"shape {y.shape}, the input's {x.shape}")
    tol = float(tok.get("tol", tolerance(x.dtype)))
    err = relative_error(y, ref)
    if not err <= tol:
        raise Failure(f"relative error {err:.3g} > {tol:g}")
    return err


def run(check, cases):
    failed = 0
    for case in cases:
        try:
            err = check(case)
            print(f"ok {case}: {err:.3g}")
        except (Failure, KeyError, OSError, ValueError) as e:
            print(f"FAIL {case}: {e}")
            failed += 1
    return 1 if failed else 0


def main(argv):
    checks = {"check": check_case, "linear": check_linear, "apply": check_apply}
    if len(argv) >= 3 and argv[1] in checks:
        return run(checks[argv[1]], argv[2:])
    if len(argv) >= 4 and argv[1] == "prepare":
        return prepare(argv[2:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
