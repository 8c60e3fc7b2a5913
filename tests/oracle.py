#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""oracle: the independent checker of the fftshard tests (numpy and h5py only).

Nothing here shares code with fftshard: inputs are written by h5py, results are
compared with numpy.fft. Run it serially and outside mpiexec (serial h5py).

  oracle.py make [--seed N] FILE SPEC [SPEC...] [-- FILE SPEC...]...
      Write datasets into FILE (created or truncated); "--" starts the next
      file, so one call makes several. SPEC is
      [/path=]SHAPE[:TYPE]: path default /data, TYPE default complex128.
      SHAPE: 7x5x3, 0x4 (a zero-length axis), "scalar" or "null".
      TYPE: float16 float32 float64 complex64 complex128 int8 int16 int32
      int64 uint8 uint16 uint32 uint64, and for the refusal tests: string,
      enum, compound-xy (two floats not named r and i), compound-rij (three
      members), complex-mixed ({r: float32, i: float64}).
      A third field adds storage flags, comma-separated: "gzip" (chunked and
      compressed), "be" (big-endian). Random values (uniform in [-1, 1);
      integers in [-100, 100) or [0, 200)), reproducible from the seed and
      the dataset path. SPEC /path->/target makes a soft link.

  oracle.py check CASE [CASE...]
      Check fftshard outputs, one CASE per argument, each a string of
      whitespace-separated tokens:
        in=FILE[:/ds] out=FILE[:/ds]   as given to fftshard (out's dataset
                                       defaults to in's)
        axes=LIST norm=MODE inverse    fftshard's options (default all axes,
                                       backward, forward)
        ranks=N transpose=NAME         compared with the attributes (transpose
                                       may also be "none" when no exchange is
                                       needed: one rank or a batch axis;
                                       with auto, any strategy it may choose;
                                       without it, "default": any, as the
                                       default fits the memory per rank)
        expect=FILE[:/ds]              compare the values with this dataset
                                       instead of numpy.fft (round trips)
        source=TEXT                    the input attribute fftshard records
                                       when in= is not what it was given
                                       (--shards: the pattern or list)
        real last=N precision=P        --real (rfftn; with inverse, irfftn of
                                       last size N, default 2*(m-1)) and
                                       --precision (default auto)
      Checks the dtype (complex128, complex64 in single precision, float for
      irfftn), the shape, every attribute and the values:
      error = max|out - ref| / max|ref| must not exceed the tolerance.
      Tolerances: 1e-12 for float64, complex128 and integer input (fftshard
      computes in double and so does the reference: only rounding differs);
      1e-5 for float32 and complex64 input (the input itself holds 24-bit
      mantissas, and a single-precision computation must pass too).
      The reference is computed from the input converted to complex128.

  oracle.py shard IN[:/ds] PATTERN ROWS [--vds=FILE] [--offsets] [--list=FILE]
      Cut IN's dataset into shards along axis 0, ROWS a comma-separated list
      of row counts (summing to the first axis), shard i written to
      PATTERN % i with the same dataset path. --vds writes FILE with a
      virtual dataset of that path stitching the shards (source names
      relative to FILE's directory); --offsets gives every shard an "offset"
      attribute (its start on every axis) and writes them in reverse order
      of their numbers; --list writes the shard names, one per line.

  oracle.py waves IN OUT
      IN was written by fftshard-mkdata --waves; OUT is fftshard's forward
      transform of it (all axes, backward norm). Both numpy.fft.fftn(IN) and
      OUT must equal the spectrum the attributes describe: for complex types
      N * amplitude at each wave vector (summed over equal vectors), for real
      types half of that at k and its conjugate at -k; zero elsewhere.

Exit status: 0 when everything matched, 1 when something did not (each
failure is printed), 2 on a usage error.
"""

import os
import re
import sys
import zlib

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from oracle_common import (TOL_SINGLE, Failure, computed_single, parse_axes, parse_case,  # noqa: E402
                           read_location, relative_error, run_cases, split_location, tolerance)

# The strategies --transpose=auto chooses from (src/exchange/exchange.c's table).
STRATEGIES = ["alltoall", "random", "xorswap", "pairwise"]

SIMPLE_TYPES = {
    "float16": np.float16, "float32": np.float32, "float64": np.float64,
    "complex64": np.complex64, "complex128": np.complex128,
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
}


def parse_shape(text):
    if text in ("scalar", "null"):
        return text
    return tuple(int(n) for n in text.split("x"))


# ---------------------------------------------------------------- make

def random_values(rng, shape, type_name):
    if type_name in ("complex64", "complex128"):
        v = rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)
        return v.astype(SIMPLE_TYPES[type_name])
    if type_name.startswith("float"):
        return rng.uniform(-1, 1, shape).astype(SIMPLE_TYPES[type_name])
    if type_name.startswith("uint"):
        return rng.integers(0, 200, shape).astype(SIMPLE_TYPES[type_name])
    if type_name.startswith("int"):
        return rng.integers(-100, 100, shape).astype(SIMPLE_TYPES[type_name])
    if type_name == "string":
        return np.array(rng.choice([b"ab", b"cd", b"ef"], shape), dtype="S2")
    if type_name == "enum":
        return rng.integers(0, 2, shape).astype(np.int8)
    if type_name == "compound-xy":
        v = np.zeros(shape, dtype=[("x", "<f8"), ("y", "<f8")])
        v["x"] = rng.uniform(-1, 1, shape)
        v["y"] = rng.uniform(-1, 1, shape)
        return v
    if type_name == "compound-rij":
        return np.zeros(shape, dtype=[("r", "<f8"), ("i", "<f8"), ("j", "<f8")])
    if type_name == "complex-mixed":
        return np.zeros(shape, dtype=[("r", "<f4"), ("i", "<f8")])
    raise Failure("unknown type %s" % type_name)


def make(args):
    seed = 1
    if len(args) >= 2 and args[0] == "--seed":
        seed = int(args[1])
        args = args[2:]
    groups = [[]]
    for a in args:
        if a == "--":
            groups.append([])
        else:
            groups[-1].append(a)
    if any(len(g) < 2 for g in groups):
        usage()
    for g in groups:
        make_file(g[0], g[1:], seed)
    return 0


def make_file(path, specs, seed):
    with h5py.File(path, "w") as f:
        for spec in specs:
            if "->" in spec:
                link, _, target = spec.partition("->")
                f[link] = h5py.SoftLink(target)
                continue
            name, _, rest = spec.rpartition("=")
            name = name or "/data"
            shape_text, _, type_name = rest.partition(":")
            type_name, _, flags = type_name.partition(":")
            type_name = type_name or "complex128"
            flags = set(flags.split(",")) - {""}
            if flags - {"gzip", "be"}:
                raise Failure("unknown flags %s" % (flags - {"gzip", "be"}))
            shape = parse_shape(shape_text)
            # Independent of the order of the specs: seed mixed with the path.
            rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
            if shape == "null":
                f.create_dataset(name, data=h5py.Empty("<f8"))
                continue
            values = random_values(rng, () if shape == "scalar" else shape, type_name)
            if type_name == "enum":
                dt = h5py.enum_dtype({"RED": 0, "GREEN": 1}, basetype="i1")
                f.create_dataset(name, data=values, dtype=dt)
            else:
                if "be" in flags:
                    values = values.astype(values.dtype.newbyteorder(">"))
                kwargs = {"compression": "gzip", "chunks": True} if "gzip" in flags else {}
                f.create_dataset(name, data=values, **kwargs)


# ---------------------------------------------------------------- check

def read_input(location):
    """FILE[:/ds]'s dataset (read_location) and its values as complex128."""
    d = read_location(location)
    if d.values.dtype.names:  # h5py reads {r,i} as complex; anything else is not input
        raise Failure("%s: %s is not a number type" % (location, d.values.dtype))
    return d, d.values.astype(np.complex128)


def check_attr(attrs, name, expected, problems):
    if name not in attrs:
        problems.append("attribute %s missing" % name)
        return
    got = attrs[name]
    if isinstance(expected, str):
        if not isinstance(got, str) or got != expected:
            problems.append("attribute %s = %r, expected %r" % (name, got, expected))
        return
    got = np.asarray(got)
    expected = np.asarray(expected, dtype=np.int64)
    if got.dtype.kind not in "iu" or got.shape != expected.shape or not np.array_equal(got, expected):
        problems.append("attribute %s = %r (%s, shape %s), expected %r (int64, shape %s)"
                        % (name, got.tolist(), got.dtype, got.shape, expected.tolist(),
                           expected.shape))


def check_case(text, version):
    opts = {"inverse": False, "real": False, "norm": "backward", "axes": None, "ranks": None,
            "transpose": "default", "expect": None, "last": None, "precision": "auto",
            "source": None}
    for key, value in parse_case(text).items():
        if value is True:
            if key not in ("inverse", "real"):
                raise Failure("unknown flag %r" % key)
        elif key not in ("in", "out", "axes", "norm", "ranks", "transpose", "expect", "last",
                         "precision", "source"):
            raise Failure("unknown key %r" % key)
        opts[key] = value
    if "in" not in opts or "out" not in opts:
        raise Failure("in= and out= are required")

    src, x = read_input(opts["in"])
    in_dtype, in_ds = src.values.dtype, src.path
    ndim = x.ndim
    # numpy's rfftn/irfftn: the last axis as given is the real one.
    given = parse_axes(opts["axes"], ndim)
    axes = sorted(given)
    kind = "c2c" if not opts["real"] else ("c2r" if opts["inverse"] else "r2c")
    single = opts["precision"] == "single" or (
        opts["precision"] == "auto" and computed_single(in_dtype))
    real_len = None
    if kind == "r2c":
        real_len = x.shape[given[-1]]
    elif kind == "c2r":
        real_len = int(opts["last"]) if opts["last"] else 2 * (x.shape[given[-1]] - 1)
    out_shape = list(x.shape)
    if kind == "r2c":
        out_shape[given[-1]] = real_len // 2 + 1
    elif kind == "c2r":
        out_shape[given[-1]] = real_len
    if opts["expect"]:
        expected, ref = read_input(opts["expect"])
        tol = tolerance(expected.values.dtype)
    else:
        if kind == "r2c":
            ref = np.fft.rfftn(x.real, axes=given, norm=opts["norm"])
        elif kind == "c2r":
            s = [x.shape[a] for a in given[:-1]] + [real_len]
            ref = np.fft.irfftn(x, s=s, axes=given, norm=opts["norm"])
        else:
            transform = np.fft.ifftn if opts["inverse"] else np.fft.fftn
            ref = transform(x, axes=axes, norm=opts["norm"])
        tol = TOL_SINGLE if single else tolerance(in_dtype)
    if kind == "c2r":
        want_dtype = np.float32 if single else np.float64
    else:
        want_dtype = np.complex64 if single else np.complex128

    out_file, out_ds = split_location(opts["out"])
    out_ds = out_ds or in_ds
    problems = []
    with h5py.File(out_file, "r") as f:
        if out_ds not in f or not isinstance(f[out_ds], h5py.Dataset):
            raise Failure("%s has no dataset %s" % (out_file, out_ds))
        d = f[out_ds]
        if d.dtype != want_dtype:
            problems.append("dtype %s, expected %s" % (d.dtype, np.dtype(want_dtype)))
        if list(d.shape) != out_shape:
            problems.append("shape %s, expected %s" % (d.shape, tuple(out_shape)))
        attrs = dict(d.attrs)
        out = d[()]
    if not problems:
        err = relative_error(out.astype(np.complex128), ref)
        if not err <= tol:
            problems.append("error %.3g above tolerance %g" % (err, tol))
    else:
        err = float("nan")

    v = attrs.get("fftshard_version")
    if not isinstance(v, str) or not re.fullmatch(r"\d+\.\d+\.\d+\S*", v) or \
            (version and v != version):
        problems.append("attribute fftshard_version = %r, expected %r" % (v, version or "X.Y.Z"))
    check_attr(attrs, "transform", kind, problems)
    check_attr(attrs, "precision", "single" if single else "double", problems)
    check_attr(attrs, "direction", "inverse" if opts["inverse"] else "forward", problems)
    check_attr(attrs, "norm", opts["norm"], problems)
    # In the order given, as numpy's axes argument; --real's halved axis last.
    check_attr(attrs, "axes", given, problems)
    if kind != "c2c":
        check_attr(attrs, "real_axis", given[-1], problems)
    check_attr(attrs, "input", "%s:%s" % (opts["source"] or src.file, in_ds), problems)
    check_attr(attrs, "input_shape", list(x.shape), problems)
    check_attr(attrs, "last_size", real_len if real_len else x.shape[given[-1]], problems)
    # The strategy asked for, or "none" when no exchange is needed (one rank,
    # or some axis not transformed: the ranks may split only such batch axes).
    # With auto, the strategy it chose: any of them; so for the default, whose
    # choice depends on the memory per rank (strategies.bats checks it).
    transpose = attrs.get("transpose")
    exchange_needed = len(axes) == ndim and opts["ranks"] is not None and int(opts["ranks"]) > 1
    asked = STRATEGIES if opts["transpose"] in ("auto", "default") else [opts["transpose"]]
    allowed = asked if exchange_needed else asked + ["none"]
    if not isinstance(transpose, str) or transpose not in allowed:
        problems.append("attribute transpose = %r, expected %s" % (transpose, " or ".join(
            repr(a) for a in allowed)))
    if opts["ranks"] is not None:
        check_attr(attrs, "ranks", int(opts["ranks"]), problems)
    return err, problems


def check(cases):
    return run_cases(check_case, cases)


# ---------------------------------------------------------------- waves

def waves(in_location, out_location):
    src, x = read_input(in_location)
    dtype, in_ds = src.values.dtype, src.path
    k = np.asarray(src.attrs["wave_vectors"])
    amp = np.asarray(src.attrs["wave_amplitudes"])
    n = x.size
    if k.ndim != 2 or k.shape[1] != x.ndim or amp.shape != (k.shape[0], 2):
        print("FAIL wave_vectors %s / wave_amplitudes %s do not fit a %d-D array"
              % (k.shape, amp.shape, x.ndim))
        return 1
    spectrum = np.zeros(x.shape, dtype=np.complex128)
    for kj, (re_, im_) in zip(k, amp):
        a = complex(re_, im_)
        if dtype.kind == "c":
            spectrum[tuple(kj)] += n * a
        else:
            spectrum[tuple(kj)] += n * a / 2
            spectrum[tuple((-kj) % np.array(x.shape))] += n * a.conjugate() / 2
    out_file, out_ds = split_location(out_location)
    with h5py.File(out_file, "r") as f:
        out = f[out_ds or in_ds][()].astype(np.complex128)
    tol = tolerance(dtype)
    failed = 0
    for what, values in (("numpy.fft.fftn(input)", np.fft.fftn(x)), ("fftshard output", out)):
        err = relative_error(values, spectrum)
        peaks = {tuple(int(i) for i in p)
                 for p in np.argwhere(np.abs(values) > 1e-3 * np.max(np.abs(values)))}
        expected = {tuple(int(i) for i in p)
                    for p in np.argwhere(np.abs(spectrum) > 1e-3 * np.max(np.abs(spectrum)))}
        ok = err <= tol and peaks == expected
        failed += not ok
        print("%s %s: error %.2g against the attributes' spectrum; peaks %s%s"
              % ("ok  " if ok else "FAIL", what, err, sorted(peaks),
                 "" if peaks == expected else ", expected %s" % sorted(expected)))
    return 1 if failed else 0


# ---------------------------------------------------------------- shards

def shard(args):
    opts = {"vds": None, "offsets": False, "list": None}
    rest = []
    for a in args:
        if a.startswith("--vds="):
            opts["vds"] = a[6:]
        elif a == "--offsets":
            opts["offsets"] = True
        elif a.startswith("--list="):
            opts["list"] = a[7:]
        else:
            rest.append(a)
    if len(rest) != 3:
        usage()
    location, pattern, rows = rest
    src = read_location(location)
    x, ds = src.values, src.path
    counts = [int(r) for r in rows.split(",")]
    if sum(counts) != x.shape[0]:
        raise SystemExit("shard: rows %s do not add up to %d" % (rows, x.shape[0]))
    names, start = [], 0
    layout = h5py.VirtualLayout(shape=x.shape, dtype=x.dtype) if opts["vds"] else None
    order = list(range(len(counts)))
    starts = [sum(counts[:i]) for i in order]
    if opts["offsets"]:
        order.reverse()  # numbers no longer follow the rows: the offsets place them
    for n, i in enumerate(order):
        name = pattern % n
        piece = x[starts[i]:starts[i] + counts[i]]
        if os.path.dirname(name):
            os.makedirs(os.path.dirname(name), exist_ok=True)
        with h5py.File(name, "w") as f:
            f[ds] = piece
            if opts["offsets"]:
                f[ds].attrs["offset"] = np.array([starts[i]] + [0] * (x.ndim - 1), dtype=np.int64)
        names.append(name)
        if layout is not None:
            rel = os.path.relpath(name, os.path.dirname(os.path.abspath(opts["vds"])))
            layout[starts[i]:starts[i] + counts[i]] = h5py.VirtualSource(rel, ds, shape=piece.shape)
    if layout is not None:
        with h5py.File(opts["vds"], "w") as f:
            f.create_virtual_dataset(ds, layout)
    if opts["list"]:
        with open(opts["list"], "w") as f:
            f.write("# shards\n" + "\n".join(names) + "\n")
    return 0


# ---------------------------------------------------------------- main

def usage():
    sys.stderr.write(__doc__)
    sys.exit(2)


def main(argv):
    if len(argv) < 2:
        usage()
    command, args = argv[1], argv[2:]
    if command == "make":
        return make(args)
    if command == "check" and args:
        return check(args)
    if command == "shard" and args:
        return shard(args)
    if command == "waves" and len(args) == 2:
        return waves(*args)
    usage()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
