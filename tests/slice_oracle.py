#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""slice_oracle.py: fftshard's sliced inputs against numpy.

    slice_oracle.py check CASE...

Each CASE is a space-separated list of key=value words:
    in=FILE ds=/PATH sl=SLICE out=FILE [ods=/PATH] [axes=0,2] [real] [inverse]
    [last=N] [expect=SLICE]
SLICE is Python's spelling of numpy's basic slicing between the brackets
("0:10:2,:,5"; no blanks, or '_' for one). The expected result is computed
here from the definition alone: np.fft.fftn (rfftn with real, ifftn or
irfftn with inverse) of h5py's file[PATH][SLICE], over the axes given or
all. The result's input_slice attribute must be present and select, in
numpy, the same elements (with expect=SLICE it must also be exactly that
text, blanks as '_'). Prints "N of M cases differ" and exits 1 when N > 0.
"""
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from oracle_common import parse_axes, parse_case  # noqa: E402


def parse(case):
    """The case's words, a '_' in a value standing for a blank."""
    return {key: value.replace("_", " ") if isinstance(value, str) else value
            for key, value in parse_case(case).items()}


def index_of(text):
    """numpy's index tuple for the slice text between brackets."""
    return eval("np.s_[" + text + "]", {"np": np})


def expected(c):
    with h5py.File(c["in"], "r") as f:
        whole = f[c["ds"]][()]
    x = whole[index_of(c["sl"])]
    axes = parse_axes(c.get("axes"), x.ndim)
    if "inverse" in c and "real" in c:
        s = None
        if "last" in c:
            s = [x.shape[a] for a in axes]
            s[-1] = int(c["last"])
        return whole, x, np.fft.irfftn(x, s=s, axes=axes)
    if "inverse" in c:
        return whole, x, np.fft.ifftn(x, axes=axes)
    if "real" in c:
        return whole, x, np.fft.rfftn(x, axes=axes)
    return whole, x, np.fft.fftn(x.astype(np.complex128), axes=axes)


def check(c):
    whole, x, want = expected(c)
    with h5py.File(c["out"], "r") as g:
        d = g[c.get("ods", c["ds"])]
        got = d[()]
        attr = d.attrs.get("input_slice")
    if isinstance(attr, bytes):
        attr = attr.decode()
    why = []
    if attr is None:
        why.append("no input_slice attribute")
    else:
        if not (attr.startswith("[") and attr.endswith("]")):
            why.append("input_slice %r is not in brackets" % attr)
        elif not np.array_equal(whole[index_of(attr[1:-1])], x):
            why.append("input_slice %r selects other elements than [%s]" % (attr, c["sl"]))
        if "expect" in c and attr != "[" + c["expect"] + "]":
            why.append("input_slice %r, expected [%s]" % (attr, c["expect"]))
    if got.shape != want.shape:
        why.append("shape %s, numpy's %s" % (got.shape, want.shape))
    else:
        err = np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-300)
        if not err < 1e-10:
            why.append("max relative error %.3g" % err)
    return why


def main(argv):
    if len(argv) < 2 or argv[0] != "check":
        sys.exit(__doc__)
    bad = 0
    for case in argv[1:]:
        why = check(parse(case))
        if why:
            bad += 1
            print("DIFFERS: %s: %s" % (case, "; ".join(why)))
    print("%d of %d cases differ" % (bad, len(argv) - 1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
