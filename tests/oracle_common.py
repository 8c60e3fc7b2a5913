# SPDX-License-Identifier: GPL-3.0-or-later
"""oracle_common: the conventions every test oracle reads the same way.

The oracles (tests/oracle.py, tests/*_oracle.py) each compute fftshard's
results anew from fftshard(1)'s definitions with numpy and h5py; this module
holds only what they share, written from the same page, never from
fftshard's code:

  split_location     FILE[:/ds] as fftshard splits it
  only_dataset       a file's one result, beside its coordinates
  read_location      the values, path and attributes at FILE[:/ds]
  complex_of         fftshard's complex compound {r, i} as numpy complex
  parse_case         a case's KEY=VALUE tokens and flags
  parse_axes, parse_box, parse_bins   --axes, --box-size, --bins/--r-bins
  box_lengths        L_a of each transformed axis
  frequencies, along, wave_numbers, k_prime   the k grid, k_a = 2 pi f_a / L_a
  bin_index          the shells, equal bins or edges of --bins
  is_single, computed_single, tolerance, relative_error, lost_attributes

Each oracle puts its own directory first on sys.path before importing it,
so that it is found whatever the working directory (the build directory of
a VPATH build, make distcheck's) and even where Python leaves the script's
directory out (-P, PYTHONSAFEPATH).
"""

import os
from typing import NamedTuple

import h5py
import numpy as np

# max |result - reference| / max |reference| for double and integer input
# (fftshard computes in double and so does numpy: only rounding differs), and
# for single-precision input (the input itself holds 24-bit mantissas).
TOL_DOUBLE = 1e-12
TOL_SINGLE = 1e-5


class Failure(Exception):
    """A check that did not hold, or a case that cannot be checked."""


# ---------------------------------------------------------------- files

def split_location(arg):
    """(file, dataset path or None) of FILE[:/ds] as fftshard(1) reads it:
    only a colon followed by '/' separates, so a file name may hold other
    colons; the path comes back as HDF5 resolves it, empty and "." components
    dropped ("//u", "/./u" and "/u/" are all "/u")."""
    i = arg.find(":/")
    if i < 0:
        return arg, None
    parts = [p for p in arg[i + 1:].split("/") if p not in ("", ".")]
    return arg[:i], "/" + "/".join(parts)


def only_dataset(f, file_name, nested=True):
    """The path of the one result dataset in the open file f (FILE without a
    path names it). A result's coordinates (dimension scales k0.., x0..,
    fftshard(1) What readers see) are written beside it and are not results.
    nested: look in every group, else at the top level alone. Failure unless
    exactly one."""
    def is_result(o):
        return isinstance(o, h5py.Dataset) and not h5py.h5ds.is_scale(o.id)
    if nested:
        names = []
        f.visititems(lambda n, o: names.append("/" + n) if is_result(o) else None)
    else:
        names = ["/" + n for n in f if is_result(f[n])]
    if len(names) != 1:
        raise Failure("%s: expected exactly one dataset, found %s" % (file_name, names))
    return names[0]


class Located(NamedTuple):
    values: np.ndarray
    file: str   # the file name as given
    path: str   # the dataset's path as HDF5 names it
    attrs: dict


def read_location(location, nested=True, default=None):
    """The dataset at FILE[:/ds] (without a path: default, else FILE's only
    one), as stored."""
    file_name, path = split_location(location)
    with h5py.File(file_name, "r") as f:
        d = f[path or default or only_dataset(f, file_name, nested)]
        return Located(d[()], file_name, d.name, dict(d.attrs))


def complex_of(raw):
    """fftshard's complex type, the compound {r, i}, as numpy complex: h5py
    reads it so itself, netCDF4 and xarray give the compound."""
    return raw["r"] + 1j * raw["i"] if raw.dtype.names else raw


# ---------------------------------------------------------------- cases

def parse_case(text, repeated=()):
    """A case's whitespace-separated tokens: KEY=VALUE, or a flag KEY (True).
    The keys in repeated collect their values in a list; any other keeps its
    last value."""
    tokens = {key: [] for key in repeated}
    for token in text.split():
        key, eq, value = token.partition("=")
        value = value if eq else True
        if key in repeated:
            tokens[key].append(value)
        else:
            tokens[key] = value
    return tokens


def parse_axes(text, ndim):
    """--axes' list in the order given, a negative axis counted from the
    end; every axis in order without it (text None)."""
    if text is None:
        return list(range(ndim))
    return [int(a) % ndim for a in text.split(",")]


def parse_box(text):
    """--box-size's lengths, or None without it."""
    return None if text is None else [float(v) for v in text.split(",")]


def parse_bins(text):
    """--bins (and --r-bins, which takes them alike): None without it; [N]
    for N equal bins; else the edges, given (E0,E1,...) or LO:HI:STEP, the
    edges LO + i STEP up to the last not beyond HI."""
    if text is None:
        return None
    if ":" in text:
        lo, hi, step = (float(v) for v in text.split(":"))
        return list(lo + step * np.arange(int((hi - lo) / step + 1e-9) + 1))
    return [float(v) for v in text.split(",")]


# ---------------------------------------------------------------- k

def box_lengths(shape, axes, box):
    """{a: L_a} over the transformed axes: --box-size's one length for all,
    or one per transformed axis in increasing axis order; without it the
    axis's length in grid points."""
    axes = sorted(axes)
    if not box:
        return {a: float(shape[a]) for a in axes}
    if len(box) == 1:
        return {a: box[0] for a in axes}
    return dict(zip(axes, box))


def frequencies(n):
    """numpy.fft.fftfreq(n, 1/n): the integer frequencies 0, 1, ..., -1,
    exactly (the Nyquist one of an even n is -n/2)."""
    return np.rint(np.fft.fftfreq(n, 1.0 / n))


def along(values, axis, ndim):
    """The 1-D values shaped to broadcast along axis of an ndim-D array."""
    view = [1] * ndim
    view[axis] = len(values)
    return np.reshape(values, view)


def wave_numbers(shape, axes, box):
    """{a: k_a = 2 pi fftfreq(n_a, 1/n_a) / L_a} over the transformed axes
    of the full grid, each shaped to broadcast along its axis."""
    lengths = box_lengths(shape, axes, box)
    return {a: along(2 * np.pi * frequencies(shape[a]) / lengths[a], a, len(shape))
            for a in sorted(axes)}


def k_prime(k):
    """k' of the derivatives (fftshard(1) OPERATORS deriv, VECTOR CALCULUS):
    k_a shaped along its axis (wave_numbers), with the Nyquist plane of an
    even axis (index n_a / 2) set to 0, so that a real field has a real
    derivative."""
    k = np.array(k)
    if k.size % 2 == 0:
        k.flat[k.size // 2] = 0.0
    return k


def bin_index(x, unit, top, bins):
    """(bin of every element, -1 outside; number of bins; edges) for --bins
    (bins as parse_bins gives them) on the values x: without bins, shells
    floor(x / unit + 1/2) up to top's; [N]: N equal bins [i w, (i+1) w),
    w = top / N, the last one holding top; edges: half-open [E_i, E_i+1),
    outside them -1."""
    if bins is None:
        nb = int(np.floor(top / unit + 0.5)) + 1
        idx = np.floor(x / unit + 0.5).astype(np.int64)
        edges = np.array([0.0] + [(i - 0.5) * unit for i in range(1, nb + 1)])
        return idx, nb, edges
    if len(bins) == 1:
        nb = int(bins[0])
        width = top / nb
        idx = np.floor(x / width).astype(np.int64) if width > 0 else np.zeros(x.shape, np.int64)
        edges = np.array([i * width for i in range(nb)] + [top])
        return np.minimum(idx, nb - 1), nb, edges
    edges = np.array(bins)
    idx = np.searchsorted(edges, x, side="right") - 1
    idx[(x < edges[0]) | (x >= edges[-1])] = -1
    return idx, len(edges) - 1, edges


# ---------------------------------------------------------------- checks

def is_single(dtype):
    """float32 or complex64, in either byte order."""
    dtype = np.dtype(dtype)
    return (dtype.kind == "f" and dtype.itemsize == 4) or (dtype.kind == "c" and dtype.itemsize == 8)


def computed_single(dtype):
    """Whether fftshard's --precision=auto computes input of dtype in single
    precision (fftshard(1), --precision): float32, complex64, and integers
    of at most 16 bits, which float32 holds exactly."""
    dtype = np.dtype(dtype)
    return is_single(dtype) or (dtype.kind in "iu" and dtype.itemsize <= 2)


def tolerance(dtype):
    return TOL_SINGLE if is_single(dtype) else TOL_DOUBLE


def relative_error(out, ref):
    """max |out - ref| / max |ref|; the absolute error where ref is all
    zero, 0 for empty arrays."""
    scale = np.max(np.abs(ref)) if ref.size else 0.0
    err = np.max(np.abs(out - ref)) if ref.size else 0.0
    return err / scale if scale > 0 else err


def lost_attributes(source, result, ignore=()):
    """The names of source's attributes (a dict) that result does not carry
    with the same value, those in ignore aside."""
    return [key for key, value in source.items() if key not in ignore and (
        key not in result or not np.array_equal(np.asarray(result[key]), np.asarray(value)))]


def run_cases(check_case, cases):
    """Each case checked by check_case(text, version) (version: the
    FFTSHARD_VERSION the results must record), a line per case and a
    count; status 1 when any failed."""
    version = os.environ.get("FFTSHARD_VERSION", "")
    failed = 0
    for text in cases:
        try:
            err, problems = check_case(text, version)
        except (Failure, OSError, KeyError, ValueError) as e:
            err, problems = float("nan"), ["%s: %s" % (type(e).__name__, e)]
        if problems:
            failed += 1
            print("FAIL [%s]" % text)
            for p in problems:
                print("    " + p)
        else:
            print("ok   [%s] error %.2g" % (text, err))
    print("%d of %d cases failed" % (failed, len(cases)))
    return 1 if failed else 0
