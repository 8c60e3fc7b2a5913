#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""r2r_oracle: fftshard's cosine and sine transforms against scipy.fft.

Nothing here shares code with fftshard: the reference is scipy.fft's dct,
dst, idct and idst applied axis by axis (as scipy.fft.dctn does), with
numpy.fft's fftn, rfftn, ifftn or irfftn over the Fourier axes, from the
input read by h5py. Run it serially and outside mpiexec (serial h5py).

  r2r_oracle.py check CASE [CASE...]
      One CASE per argument, whitespace-separated tokens (fftshard's options):
        in=FILE[:/ds] out=FILE[:/ds]   as given to fftshard (out's dataset
                                       defaults to in's)
        dct=TYPE dst=TYPE              --dct, --dst: every transformed axis
        r2r=AXIS:KIND,...              --r2r: KIND dct1-dct4, dst1-dst4, fft
        axes=LIST norm=MODE inverse    --axes, --norm, --inverse
        real last=N precision=P        --real (its halved axis the last
                                       Fourier axis of axes), --last-size,
                                       --precision
        ranks=N transpose=NAME         compared with the attributes ("none"
                                       allowed where no exchange is needed)
        recorded                       --inverse took the kinds, axes and norm
                                       from the input's attributes (the
                                       case's own options still say them)
        expect=FILE[:/ds]              compare the values with this dataset
                                       instead (a round trip: the input back)
      Checks the dtype (float64/float32 for cosine and sine axes alone on
      real input, else complex, float for --inverse --real), the shape, the
      attributes (transform, axis_kinds, axes, norm, direction, ...) and the
      values: max|out - ref| / max|ref| at most 1e-12 in double precision,
      1e-5 in single.

scipy.fft's norm="ortho" makes DST-II and DST-III orthonormal by scaling the
last output (DST-II) or input (DST-III) value, as its documentation states;
scipy releases before the fix of scipy issue 18452 scale the first instead,
which is not orthogonal. The reference computes those two with
orthogonalize=False (on the real and imaginary parts apart: scipy 1.10
ignores orthogonalize=False on complex input) and applies the documented
factor itself, so it holds on any scipy release.

Exit status: 0 when every case matched, 1 when one did not (each failure is
printed), 2 on a usage error.
"""

import os
import re
import sys

import h5py
import numpy as np
import scipy.fft

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from oracle_common import (TOL_SINGLE, Failure, computed_single, parse_axes, parse_case,  # noqa: E402
                           read_location, relative_error, run_cases, split_location, tolerance)

STRATEGIES = ["alltoall", "random", "xorswap", "pairwise"]
KEYS = ("in", "out", "dct", "dst", "r2r", "axes", "norm", "last", "precision", "ranks",
        "transpose", "expect")
FLAGS = ("inverse", "real", "recorded")


def kinds_of(opts, given, ndim):
    """{axis: "fft" | "dct1" ... "dst4"} over the transformed axes."""
    kinds = {a: "fft" for a in given}
    for name in ("dct", "dst"):
        if opts[name]:
            kinds = {a: "%s%d" % (name, int(opts[name])) for a in given}
    for item in (opts["r2r"] or "").split(",") if opts["r2r"] else []:
        axis, _, kind = item.partition(":")
        kinds[int(axis) % ndim] = kind
    return kinds


def one_axis(y, kind, axis, norm, inverse):
    """scipy.fft's dct, dst, idct or idst of `kind` along axis."""
    family, t = kind[:3], int(kind[3])
    computed = (5 - t if t in (2, 3) else t) if inverse else t
    if family == "dst" and computed in (2, 3) and norm == "ortho":
        if np.iscomplexobj(y):
            # scipy 1.10 ignores orthogonalize=False on complex input
            return one_axis(y.real, kind, axis, norm, inverse) + \
                1j * one_axis(y.imag, kind, axis, norm, inverse)
        # the orthonormal DST-II / DST-III of scipy's documentation
        z = np.moveaxis(np.array(y, dtype=float), axis, -1)
        if computed == 3:
            z[..., -1] *= np.sqrt(2)
        z = scipy.fft.dst(z, type=computed, norm="ortho", orthogonalize=False)
        if computed == 2:
            z[..., -1] /= np.sqrt(2)
        return np.moveaxis(z, -1, axis)
    fn = {("dct", False): scipy.fft.dct, ("dct", True): scipy.fft.idct,
          ("dst", False): scipy.fft.dst, ("dst", True): scipy.fft.idst}[(family, inverse)]
    return fn(y, type=t, axis=axis, norm=norm)


def reference(x, opts, given, kinds, fourier, real_len):
    """The transform the case asks for, scipy.fft axis by axis."""
    norm, inverse = opts["norm"], opts["inverse"]
    cosine = [a for a in given if kinds[a] != "fft"]
    y = x
    if not inverse:
        if opts["real"]:
            y = np.fft.rfftn(x.real, axes=fourier, norm=norm)
        elif fourier:
            y = np.fft.fftn(y, axes=fourier, norm=norm)
        elif not np.iscomplexobj(opts["stored"]):
            y = x.real
        for a in cosine:
            y = one_axis(y, kinds[a], a, norm, False)
        return y
    if not fourier and not np.iscomplexobj(opts["stored"]):
        y = x.real
    for a in cosine:
        y = one_axis(y, kinds[a], a, norm, True)
    if opts["real"]:
        s = [x.shape[a] for a in fourier[:-1]] + [real_len]
        return np.fft.irfftn(y, s=s, axes=fourier, norm=norm)
    return np.fft.ifftn(y, axes=fourier, norm=norm) if fourier else y


def check_attr(attrs, name, expected, problems):
    got = attrs.get(name)
    if isinstance(expected, str):
        if got != expected:
            problems.append("attribute %s = %r, expected %r" % (name, got, expected))
        return
    if got is None or not np.array_equal(np.asarray(got), np.asarray(expected)):
        problems.append("attribute %s = %r, expected %r" % (
            name, None if got is None else np.asarray(got).tolist(), expected))


def options_of(text):
    opts = {key: None for key in KEYS}
    opts.update({flag: False for flag in FLAGS})
    opts.update(norm="backward", transpose="default", precision="auto")
    for key, value in parse_case(text).items():
        if (value is True and key not in FLAGS) or (value is not True and key not in KEYS):
            raise Failure("unknown token %r" % key)
        opts[key] = value
    if not opts["in"] or not opts["out"]:
        raise Failure("in= and out= are required")
    return opts


def check_case(text, version):
    opts = options_of(text)
    src = read_location(opts["in"])
    if src.values.dtype.names:
        raise Failure("%s: %s is not a number type" % (opts["in"], src.values.dtype))
    opts["stored"] = src.values
    x = src.values.astype(np.complex128)
    ndim = x.ndim
    given = parse_axes(opts["axes"], ndim)
    kinds = kinds_of(opts, given, ndim)
    fourier = [a for a in given if kinds[a] == "fft"]
    cosine_only = not fourier
    kind = "r2r" if cosine_only else "c2c" if not opts["real"] else \
        "c2r" if opts["inverse"] else "r2c"
    single = opts["precision"] == "single" or (
        opts["precision"] == "auto" and computed_single(src.values.dtype))
    halved = fourier[-1] if fourier else None
    out_shape = list(x.shape)
    real_len = None
    if kind == "r2c":
        real_len = x.shape[halved]
        out_shape[halved] = real_len // 2 + 1
    elif kind == "c2r":
        # --last-size, else the input's last_size attribute when the inverse
        # took the record, else numpy's 2 (m - 1)
        real_len = int(opts["last"]) if opts["last"] else \
            int(src.attrs["last_size"]) if opts["recorded"] else 2 * (x.shape[halved] - 1)
        out_shape[halved] = real_len
    real_in = src.values.dtype.kind in "fiu"
    real_out = kind == "c2r" or (cosine_only and real_in)
    want = (np.float32 if single else np.float64) if real_out else \
        (np.complex64 if single else np.complex128)
    if opts["expect"]:
        expected = read_location(opts["expect"])
        ref, tol = expected.values.astype(np.complex128), tolerance(expected.values.dtype)
    else:
        ref = reference(x, opts, given, kinds, fourier, real_len)
        tol = TOL_SINGLE if single else tolerance(src.values.dtype)

    out_file, out_ds = split_location(opts["out"])
    problems = []
    with h5py.File(out_file, "r") as f:
        d = f[out_ds or src.path]
        out, attrs = d[()], dict(d.attrs)
    if out.dtype != want:
        problems.append("dtype %s, expected %s" % (out.dtype, np.dtype(want)))
    err = float("nan")
    if list(out.shape) != out_shape:
        problems.append("shape %s, expected %s" % (out.shape, tuple(out_shape)))
    else:
        err = relative_error(out.astype(np.complex128), ref)
        if not err <= tol:
            problems.append("error %.3g above tolerance %g" % (err, tol))

    v = attrs.get("fftshard_version")
    if not isinstance(v, str) or not re.fullmatch(r"\d+\.\d+\.\d+\S*", v) or \
            (version and v != version):
        problems.append("attribute fftshard_version = %r" % v)
    check_attr(attrs, "transform", kind, problems)
    check_attr(attrs, "direction", "inverse" if opts["inverse"] else "forward", problems)
    check_attr(attrs, "norm", opts["norm"], problems)
    check_attr(attrs, "precision", "single" if single else "double", problems)
    # as given; an inverse that took them from the record puts the halved axis last
    order = [a for a in given if a != halved] + [halved] if opts["real"] else given
    check_attr(attrs, "axes", order if opts["recorded"] else given, problems)
    if any(k != "fft" for k in kinds.values()):
        axes_attr = [int(a) for a in np.asarray(attrs.get("axes", []))]
        check_attr(attrs, "axis_kinds", ",".join(kinds.get(a, "?") for a in axes_attr), problems)
    elif "axis_kinds" in attrs:
        problems.append("attribute axis_kinds = %r on Fourier axes alone" % attrs["axis_kinds"])
    if kind in ("r2c", "c2r"):
        check_attr(attrs, "real_axis", halved, problems)
        check_attr(attrs, "last_size", real_len, problems)
    check_attr(attrs, "input_shape", list(x.shape), problems)
    transpose = attrs.get("transpose")
    needed = len(given) == ndim and opts["ranks"] is not None and int(opts["ranks"]) > 1
    asked = STRATEGIES if opts["transpose"] in ("auto", "default") else [opts["transpose"]]
    allowed = asked if needed else asked + ["none"]
    if transpose not in allowed:
        problems.append("attribute transpose = %r, expected one of %s" % (transpose, allowed))
    if opts["ranks"] is not None:
        check_attr(attrs, "ranks", int(opts["ranks"]), problems)
    return err, problems


def check(cases):
    return run_cases(check_case, cases)


def main(argv):
    if len(argv) < 2 or argv[0] != "check":
        print(__doc__, file=sys.stderr)
        return 2
    return check(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
