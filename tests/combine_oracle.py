#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""combine_oracle: the independent check of fftshard --correlate, --convolve
and --phase-correlate (numpy, h5py).

Computes each result from fftshard(1)'s definition (COMBINED SPECTRA) with
numpy's full complex fftn over the transformed axes (never the half
spectrum), N the number of points of those axes:
  correlate        ifftn(fftn(a) * conj(fftn(b))) / N   (b = a with one input)
  convolve         ifftn(fftn(a) * fftn(b))
  phase-correlate  ifftn(R / |R|), R = fftn(a) * conj(fftn(b)), 0 where |R| = 0
the real part for real inputs.

  combine_oracle.py check CASE [CASE...]
      Each CASE is whitespace-separated tokens:
        op=correlate|convolve|phase-correlate
        a=FILE[:/ds]      the first input (its only dataset without a path)
        b=FILE[:/ds]      the second input (none: one input)
        out=FILE[:/ds]    fftshard's OUTPUT (dataset default: /correlation,
                          /convolution, /phase_correlation)
        axes=LIST         --axes (default all)
        tol=X             max |result - reference| / max |reference|
                          (default 1e-12; 1e-5 for single precision)
        report=FILE       --report's JSON: its combine.peak (phase-correlate)
                          must be numpy's argmax of the reference's real part
                          (or an equal maximum, to tol) and its signed shift
                          (index - n above n / 2)
        shift=S[,S...]    that shift must be this one (a known np.roll)
      The result must have the inputs' shape and precision, be real for
      real inputs, and carry the attributes operation, direction "round
      trip", input (a), second_input (b) and a's own attributes.

  combine_oracle.py roll IN[:/ds] OUT:/ds SHIFT[,SHIFT...]
      Write OUT's dataset = np.roll(IN's, SHIFT over the first axes).

Exit status: 0 when everything matched, 1 when something did not (each
failure printed), 2 on a usage error.
"""

import json
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from oracle_common import (Failure, computed_single, is_single, lost_attributes, parse_axes,  # noqa: E402
                           parse_case, read_location, split_location, tolerance)

PATHS = {"correlate": "/correlation", "convolve": "/convolution",
         "phase-correlate": "/phase_correlation"}


def reference(op, a, b, axes):
    """The documented formula, in complex128 whatever the inputs' type."""
    n = int(np.prod([a.shape[k] for k in axes]))
    fa = np.fft.fftn(a.astype(np.complex128), axes=axes)
    fb = fa if b is None else np.fft.fftn(b.astype(np.complex128), axes=axes)
    if op == "correlate":
        y = np.fft.ifftn(fa * np.conj(fb), axes=axes) / n
    elif op == "convolve":
        y = np.fft.ifftn(fa * fb, axes=axes)
    elif op == "phase-correlate":
        r = fa * np.conj(fb)
        m = np.abs(r)
        y = np.fft.ifftn(np.where(m > 0, r / np.where(m > 0, m, 1), 0), axes=axes)
    else:
        raise Failure("unknown operation " + op)
    return y if np.iscomplexobj(a) or (b is not None and np.iscomplexobj(b)) else y.real


def check_peak(tok, ref, axes, tol):
    with open(tok["report"]) as f:
        peak = json.load(f)["combine"]["peak"]
    index = tuple(int(i) for i in np.unravel_index(np.argmax(ref.real), ref.shape))
    got = tuple(int(i) for i in peak["index"])
    top = ref.real[index]
    # equal maxima (the images of batch axes) may differ in the last bits
    if got != index and not ref.real[got] >= top - tol * abs(top):
        raise Failure(f"peak index {list(got)}, numpy's argmax {list(index)}")
    index = got
    if abs(peak["value"] - top) > tol * abs(top):
        raise Failure(f"peak value {peak['value']}, numpy's {top}")
    shift = [index[k] - ref.shape[k] if index[k] > ref.shape[k] // 2 else index[k] for k in axes]
    if list(peak["shift"]) != shift or list(peak["axes"]) != list(axes):
        raise Failure(f"shift {peak['shift']} along {peak['axes']}, expected {shift} along {axes}")
    if "shift" in tok and shift != [int(s) for s in tok["shift"].split(",")]:
        raise Failure(f"shift {shift}, the roll was {tok['shift']}")


def check_case(case):
    tok = parse_case(case)
    op = tok["op"]
    first = read_location(tok["a"])
    a, a_name = first.values, f"{first.file}:{first.path}"
    b, b_name = None, None
    if "b" in tok:
        second = read_location(tok["b"])
        b, b_name = second.values, f"{second.file}:{second.path}"
    axes = parse_axes(tok.get("axes"), a.ndim)
    out = read_location(tok["out"], default=PATHS[op])
    y, attrs = out.values, out.attrs
    ref = reference(op, a, b, axes)
    if y.shape != a.shape:
        raise Failure(f"shape {y.shape}, input {a.shape}")
    if np.iscomplexobj(y) != np.iscomplexobj(ref):
        raise Failure(f"type {y.dtype} for {'complex' if np.iscomplexobj(ref) else 'real'} input")
    if is_single(y.dtype) != computed_single(a.dtype):
        raise Failure(f"type {y.dtype} for a {a.dtype} input")
    tol = float(tok.get("tol", tolerance(a.dtype)))
    err = np.max(np.abs(y - ref)) / max(np.max(np.abs(ref)), 1e-300)
    if not err <= tol:
        raise Failure(f"relative error {err:.3g} > {tol:g}")
    expected = {"operation": op, "direction": "round trip", "input": a_name}
    if b_name:
        expected["second_input"] = b_name
    for key, value in expected.items():
        got = attrs.get(key)
        got = got.decode() if isinstance(got, bytes) else got
        if got != value:
            raise Failure(f"attribute {key} = {got!r}, expected {value!r}")
    if b_name is None and "second_input" in attrs:
        raise Failure("attribute second_input with one input")
    for key in lost_attributes(first.attrs, attrs):
        raise Failure(f"the input's attribute {key} not kept")
    if "report" in tok:
        check_peak(tok, ref, axes, max(tol, 1e-9))
    return err


def check(cases):
    failed = 0
    for case in cases:
        try:
            err = check_case(case)
            print(f"ok {case}: {err:.3g}")
        except (Failure, KeyError, OSError) as e:
            print(f"FAIL {case}: {e}")
            failed += 1
    return 1 if failed else 0


def roll(args):
    x = read_location(args[0]).values
    name, ds = split_location(args[1])
    shift = [int(s) for s in args[2].split(",")]
    with h5py.File(name, "a") as f:
        f[ds] = np.roll(x, shift, axis=tuple(range(len(shift))))
    return 0


def main(argv):
    if len(argv) >= 2 and argv[1] == "check":
        return check(argv[2:])
    if len(argv) == 5 and argv[1] == "roll":
        return roll(argv[2:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
