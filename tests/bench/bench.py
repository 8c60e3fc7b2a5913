#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""fftshard benchmark: every exchange strategy and decomposition, file to file,
for a list of sizes and rank counts, next to what users would run instead, then
the exchange strategies alone next to MPI_Alltoall.

    tests/bench/bench.py [--sizes 128x128x128,256x256x256] [--ranks 2,4]
                         [--repeats 3] [--strategies alltoall,random,xorswap,pairwise]
                         [--no-real] [--no-spectrum] [--no-operators] [--no-r2r]
                         [--only-operators] [--only-r2r] [--no-poisson]
                         [--only-poisson] [--no-ooc] [--only-ooc]
                         [--ooc-size 384x320x256] [--ooc-args OPTS] [--ooc-baseline EXE]
                         [--ooc-cgroup LIMIT] [--ooc-disk WRITE[:READ]]

Environment: MPIEXEC, FFTSHARD, FFTSHARD_MKDATA, BENCH_EXCHANGE, BENCH_HELLO (set by
`make bench`), BENCH_DIR (scratch directory for the inputs, default a new
temporary directory), FFTW_MPI_REF (optional: the path of a script that runs
FFTW-MPI's in-memory transform as `SCRIPT RANKS N0 N1 N2 TRANSPOSED_OUT measure`
and prints "fftw-mpi ... best=SECONDS"; its rows and ratios are added).

Times are the best of --repeats runs (the machine may be shared: compare the
ratios within one run, not across runs). "wall" is the whole mpiexec command,
start-up included; the phases come from fftshard's JSON report (max over
ranks); "transform" is fft + exchange. Peak memory is the largest VmHWM of any
rank minus that of a run on a 1x1x1 input (the libraries' own footprint),
divided by the rank's share of the array in complex double. The reference
"scipy" is the file-to-file script a user would write (h5py read,
scipy.fft.fftn with every core, h5py write), run serially outside mpiexec.

The real-input rows (skipped with --no-real) run the default command on
float64 and float32 inputs of each size, without and with --real, and on a
vector field of 3 components (3 x N0 x N1 x N2 float32, --real
--axes=1,2,3), each next to the scipy pipeline on the same file (rfftn for
--real); "read/c128" is the read phase over that of complex128 input of the
same shape on as many ranks (fftshard(1): real input reads at the file's
speed, in half the bytes).

The spectrum rows (skipped with --no-spectrum) time --real --spectrum-only
on float64 input next to the plain --real transform and the numpy/scipy
script a user would write (read, rfftn, numpy.bincount over shells), whose
result they compare with fftshard's.

The operator rows (skipped with --no-operators; alone with
--only-operators) time --real --apply=gaussian:2 on float64 input and
--real --vector=helmholtz on three float32 components (when the binary has
--vector) on the first rank count, next to the plain --real forward of
the same input and the scipy script a user writes for the same job (read,
rfftn with every core, multiply, irfftn, write): after one untimed run of
each fftshard command, the three run in turns whose order rotates; medians
of 5 turns, the ratios to both, the operate phase, the exchanges made and
the peak memory over the plain forward's.

The Poisson rows (skipped with --no-poisson; alone with --only-poisson)
time --apply=poisson of float64 input on the first rank count with each
--boundary: periodic (--real), dirichlet (all walls: the sine transform),
free (--real, the doubled domain), in turns whose order rotates, medians of
5 turns; each row's wall time over the periodic one's, its peak memory per
rank and, for free space, the dry run's memory per rank.

The cosine and sine rows (skipped with --no-r2r; alone with --only-r2r)
time --dct=2 and --dst=1 of every axis of float64 input on the first rank
count next to the plain --real forward of the same input (the same bytes
read, exchanged and written) and the scipy script for the same job (read,
scipy.fft.dctn or dstn with every core, write), in turns as the operator
rows: medians of 5 turns, "x plain" the ratio of the medians of whole wall
times, "fft+ex x plain" that of the medians of fft + exchange.

The paint rows (skipped with --no-paint; alone with --only-paint) paint N^3
uniform float32 particles (cic, interlaced) on an N^3 mesh with --real
--spectrum-only, next to the numpy script a user writes (numpy.bincount
painting of both meshes, rfftn, the combination, compensation, shot noise,
shells): medians of rotated turns (at least 3) of wall and CPU seconds and
their ratios to the script's, the particles painted per second per rank of
the report, and the peak memory against the dry run's total.

The out-of-core rows (skipped with --no-ooc; alone with --only-ooc) are
bench_ooc.py's: --out-of-core on one size next to dd moving the same bytes,
the in-memory run, dask and an h5py two-pass script.

Every timed run of either tool starts alike: the output of the run before is
removed and the page cache written back (sync), so no run pays for freeing
or writing back another run's file. The default fftshard command and the
scipy pipeline are run in turns, best of --repeats each."""

import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

from bench_common import (env, fftshard, fftshard_many, fresh, has_option, median, run,
                          script_wall, serial_env, timed)
from bench_ooc import ooc_rows
from bench_paint import paint_rows

STRATEGIES = ["alltoall", "random", "xorswap", "pairwise"]

# argv: input, output[, fftn or rfftn[, axes "1,2,3"]]
SCIPY_PIPELINE = r'''
import sys, h5py, scipy.fft
with h5py.File(sys.argv[1], "r") as f:
    a = f["data"][...]
fn = getattr(scipy.fft, sys.argv[3] if len(sys.argv) > 3 else "fftn")
axes = tuple(int(k) for k in sys.argv[4].split(",")) if len(sys.argv) > 4 else None
b = fn(a, axes=axes, workers=-1)
with h5py.File(sys.argv[2], "w") as f:
    f.create_dataset("data", data=b)
'''


def best_of(repeats, key, fn):
    best = None
    for _ in range(repeats):
        s = fn()
        if best is None or s[key] < best[key]:
            best = s
    return best


def print_row(s, size, ranks, peak_ratio):
    print("%-11s %-12s %5d %-11s %6.3f %6.3f %6.3f %8.3f %6.3f %6.3f %6.3f %7.2f %6.3f %8.1f %6.2f"
          % (s["strategy"], size, ranks, s["decomp"], s["read"], s["plan"], s["fft"],
             s["exchange"], s["write"], s["total"], s["wall"], s["gflops"], s["gbs"],
             s["peak_mib"], peak_ratio))


def elems(shape):
    n = 1
    for s in shape.split("x"):
        n *= int(s)
    return n


def have_scipy():
    probe = subprocess.run(["/usr/bin/python3", "-c", "import scipy.fft, h5py"],
                           capture_output=True, env=serial_env())
    return probe.returncode == 0


def scipy_wall(inp, out, extra=()):
    """Wall time of one run of the scipy pipeline (extra: its function and
    axes, see SCIPY_PIPELINE)."""
    fresh(out)
    t0 = time.perf_counter()
    run(["/usr/bin/python3", "-c", SCIPY_PIPELINE, inp, out] + list(extra), serial_env())
    return time.perf_counter() - t0


# The real-input rows: (name, mkdata type, leading axis, fftshard options,
# scipy function and axes).
REAL_CASES = [
    ("complex128", "complex128", "", [], None),  # scipy's row is among the references
    ("float64", "float64", "", [], ["fftn"]),
    ("float64", "float64", "", ["--real"], ["rfftn"]),
    ("float32", "float32", "", [], ["fftn"]),
    ("float32", "float32", "", ["--real"], ["rfftn"]),
    ("vector float32", "float32", "3x", ["--real", "--axes=1,2,3"], ["rfftn", "1,2,3"]),
]


def real_rows(args, mpiexec, exe, mkdata, work, scipy_ok):
    """Real and vector-field input with the default command, next to scipy."""
    print("# real and vector-field input, default command, best of %d runs by wall time; "
          "read/c128: read phase over complex128 input's" % args.repeats)
    print("%-15s %-14s %5s %-20s %6s %6s %6s %6s %6s %9s %8s %7s"
          % ("input", "size", "ranks", "options", "read", "fft", "exch", "write", "wall",
             "read/c128", "scipy s", "x scipy"))
    out = os.path.join(work, "out.h5")
    for size in args.sizes.split(","):
        c128_read, scipy_s = {}, {}  # by ranks; by case
        for name, dtype, lead, opts, sp in REAL_CASES:
            inp = os.path.join(work, "real-%s%s-%s.h5" % (lead, dtype, size))
            if not os.path.exists(inp):
                run([mpiexec, "-n", "2", mkdata, "-q", "-f", "-t", dtype, lead + size, inp])
            for ranks in [int(r) for r in args.ranks.split(",")]:
                s = best_of(args.repeats, "wall",
                            lambda: fftshard(mpiexec, exe, ranks, inp, out, opts))
                if name == "complex128":
                    c128_read[ranks] = s["read"]
                ref = c128_read.get(ranks) if not lead else None
                key = (name, tuple(opts))
                if scipy_ok and sp and key not in scipy_s:
                    scipy_s[key] = min(scipy_wall(inp, out, sp) for _ in range(args.repeats))
                t = scipy_s.get(key)
                print("%-15s %-14s %5d %-20s %6.3f %6.3f %6.3f %6.3f %6.3f %9s %8s %7s"
                      % (name, lead + size, ranks, " ".join(opts) or "-", s["read"], s["fft"],
                         s["exchange"], s["write"], s["wall"],
                         "%.2f" % (s["read"] / ref) if ref else "-",
                         "%.3f" % t if t else "-", "%.2f" % (s["wall"] / t) if t else "-"),
                      flush=True)
    print()


# argv: input, output. The power spectrum of a real cube as a user writes
# it: read, rfftn, weights for the half spectrum, numpy.bincount over shells
# of one fundamental frequency; prints its peak RSS and writes the spectrum
# for the comparison with fftshard's.
SPECTRUM_SCRIPT = r'''
import sys, resource, h5py, numpy as np, scipy.fft
with h5py.File(sys.argv[1], "r") as f:
    a = f["data"][...]
n0, n1, n2 = a.shape
X = scipy.fft.rfftn(a, workers=-1)
del a
f0 = np.fft.fftfreq(n0, 1 / n0)[:, None, None]
f1 = np.fft.fftfreq(n1, 1 / n1)[None, :, None]
f2 = np.fft.rfftfreq(n2, 1 / n2)[None, None, :]
k = np.sqrt(f0 ** 2 + f1 ** 2 + f2 ** 2)
shell = np.floor(k + 0.5).astype(np.int64).ravel()
w = np.full(f2.shape, 2.0)
w[..., 0] = 1
if n2 % 2 == 0:
    w[..., -1] = 1
w = np.broadcast_to(w, X.shape).ravel()
modes = np.bincount(shell, weights=w)
power = np.bincount(shell, weights=(np.abs(X) ** 2).ravel() * w) / modes
with h5py.File(sys.argv[2], "w") as f:
    f["modes"] = modes
    f["power"] = power
print("peak_kib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
'''


def spectrum_rows(args, mpiexec, exe, mkdata, work, scipy_ok):
    """--spectrum-only against the plain transform and the numpy script."""
    print("# power spectrum of float64 input (--real), best of %d by wall time; peak: the "
          "largest rank's VmHWM (the script's own peak RSS); x script: wall over the script's"
          % args.repeats)
    print("%-36s %-12s %5s %7s %7s %7s %7s %9s %8s" % (
        "command", "size", "ranks", "wall s", "fft+ex", "spect s", "write", "peak MiB",
        "x script"))
    out = os.path.join(work, "spectrum.h5")
    for size in args.sizes.split(","):
        if len(size.split("x")) != 3:
            continue
        inp = os.path.join(work, "spectrum-float64-%s.h5" % size)
        if not os.path.exists(inp):
            run([mpiexec, "-n", "2", mkdata, "-q", "-f", "-t", "float64", size, inp])
        script = None
        if scipy_ok:
            ref = os.path.join(work, "spectrum-ref.h5")
            best = None
            for _ in range(args.repeats):
                fresh(ref)
                t0 = time.perf_counter()
                p = run(["/usr/bin/python3", "-c", SPECTRUM_SCRIPT, inp, ref], serial_env())
                wall = time.perf_counter() - t0
                peak = int(re.search(r"peak_kib (\d+)", p.stdout).group(1)) / 1024.0
                best = (wall, peak) if best is None or wall < best[0] else best
            script = best
        for ranks in [int(r) for r in args.ranks.split(",")]:
            for name, opts in (("fftshard --real --spectrum-only", ["--real", "--spectrum-only"]),
                               ("fftshard --real (transform only)", ["--real"])):
                s = best_of(args.repeats, "wall",
                            lambda: fftshard(mpiexec, exe, ranks, inp, out, opts))
                with open(out + ".json") as f:
                    spect = json.load(f).get("spectra", {}).get("seconds")
                print("%-36s %-12s %5d %7.3f %7.3f %7s %7.3f %9.1f %8s" % (
                    name, size, ranks, s["wall"], s["transform"],
                    "%.3f" % spect if spect is not None else "-", s["write"], s["peak_mib"],
                    "%.2f" % (s["wall"] / script[0]) if script else "-"), flush=True)
            if script and ranks == int(args.ranks.split(",")[0]):
                fftshard(mpiexec, exe, ranks, inp, out, ["--real", "--spectrum-only"])
                check = run(["/usr/bin/python3", "-c",
                             "import sys, h5py, numpy as np\n"
                             "a = h5py.File(sys.argv[1])['power_spectrum']\n"
                             "b = h5py.File(sys.argv[2])\n"
                             "n = len(a['modes'])\n"
                             "print(int((a['modes'][()] == b['modes'][:n]).all()),"
                             " np.max(np.abs(a['power'][()] / b['power'][:n] - 1)))",
                             out, os.path.join(work, "spectrum-ref.h5")], serial_env())
                same, err = check.stdout.split()
                print("%-36s %-12s %5s %7.3f %7s %7s %7s %9.1f %8s   (modes %s, power within %.1e)"
                      % ("numpy/scipy script (read, rfftn, bincount)", size, "-", script[0], "-",
                         "-", "-", script[1], "1.00", "equal" if same == "1" else "DIFFER",
                         float(err)))
    print()


# argv: input, output, R. A Gaussian smoothing as a user writes it with
# scipy: read, rfftn, multiply by exp(-k^2 R^2 / 2) (k = 2 pi f, grid
# units, as fftshard's --apply=gaussian:R without --box-size), irfftn, write.
GAUSSIAN_SCRIPT = r"""
import sys, h5py, numpy as np, scipy.fft
with h5py.File(sys.argv[1], "r") as f:
    a = f["data"][...]
r = float(sys.argv[3])
X = scipy.fft.rfftn(a, workers=-1)
k2 = 0
for ax, n in enumerate(a.shape):
    fr = np.fft.rfftfreq(n) if ax == a.ndim - 1 else np.fft.fftfreq(n)
    shape = [1] * a.ndim
    shape[ax] = len(fr)
    k2 = k2 + (2 * np.pi * fr.reshape(shape)) ** 2
X *= np.exp(-0.5 * k2 * r * r)
b = scipy.fft.irfftn(X, s=a.shape, workers=-1)
with h5py.File(sys.argv[2], "w") as f:
    f.create_dataset("data", data=b)
"""

# argv: the files of u, v, w (dataset data), output. The Helmholtz split as
# a user writes it: three rfftn, C = k (k.V) / k^2 (k = 0: into S), S = V -
# C, six irfftn, six datasets written.
# argv: input, output, scipy.fft's function (dctn, dstn), its type
R2R_SCRIPT = r"""
import sys, h5py, scipy.fft
with h5py.File(sys.argv[1], "r") as f:
    a = f["data"][...]
b = getattr(scipy.fft, sys.argv[3])(a, type=int(sys.argv[4]), workers=-1)
with h5py.File(sys.argv[2], "w") as f:
    f.create_dataset("data", data=b)
"""


def r2r_rows(args, mpiexec, exe, mkdata, work, scipy_ok, turns=5):
    """--dct=2 and --dst=1 of every axis against the plain --real forward
    of the same float64 input and the scipy script, in rotating turns as
    operator_rows runs them."""
    if not has_option(exe, "--dct"):
        return
    ranks = int(args.ranks.split(",")[0])
    print("# cosine and sine transforms of float64 input, %d ranks, medians of %d turns in "
          "rotating order (r2r, plain --real forward, scipy script)" % (ranks, turns))
    print("%-24s %-14s %7s %7s %8s %14s %8s" % ("command", "size", "wall s", "fft+ex", "x plain",
                                               "fft+ex x plain", "x scipy"))
    out = os.path.join(work, "r2r.h5")
    for size in args.sizes.split(","):
        if len(size.split("x")) != 3:
            continue
        inp = os.path.join(work, "r2r-float64-%s.h5" % size)
        if not os.path.exists(inp):
            run([mpiexec, "-n", "2", mkdata, "-q", "-f", "-t", "float64", size, inp])
        for opt, fn, t in (("--dct=2", "dctn", "2"), ("--dst=1", "dstn", "1")):
            r, plain, sp = [], [], []
            runs = {
                "r2r": lambda: r.append(fftshard(mpiexec, exe, ranks, inp, out, [opt])),
                "plain": lambda: plain.append(fftshard(mpiexec, exe, ranks, inp, out, ["--real"])),
                "scipy": lambda: sp.append(script_wall(R2R_SCRIPT, [inp], out, [fn, t])),
            }
            runs["r2r"](), runs["plain"]()
            del r[:], plain[:]
            order = ["r2r", "plain", "scipy"] if scipy_ok else ["r2r", "plain"]
            for turn in range(turns):
                for who in order[turn % len(order):] + order[:turn % len(order)]:
                    runs[who]()
            w, wp = median([d["wall"] for d in r]), median([d["wall"] for d in plain])
            x, xp = median([d["transform"] for d in r]), median([d["transform"] for d in plain])
            t_sp = median(sp) if sp else None
            print("%-24s %-14s %7.3f %7.3f %8.2f %14.2f %8s" % (
                "fftshard " + opt, size, w, x, w / wp, x / xp,
                "%.2f" % (w / t_sp) if t_sp else "-"), flush=True)
            print("%-24s %-14s %7.3f %7.3f %8s %14s" % (
                "  fftshard --real", size, wp, xp, "1.00", "1.00"))
            if t_sp:
                print("%-24s %-14s %7.3f" % ("  scipy script, same job", size, t_sp))
    print()


HELMHOLTZ_SCRIPT = r"""
import sys, h5py, numpy as np, scipy.fft
v = []
for name in sys.argv[1:4]:
    with h5py.File(name, "r") as f:
        v.append(f["data"][...])
shape = v[0].shape
V = [scipy.fft.rfftn(c, workers=-1) for c in v]
k = []
for ax, n in enumerate(shape):
    fr = np.fft.rfftfreq(n) if ax == 2 else np.fft.fftfreq(n)
    s = [1, 1, 1]
    s[ax] = len(fr)
    k.append((2 * np.pi * fr).reshape(s))
k2 = k[0] ** 2 + k[1] ** 2 + k[2] ** 2
k2[0, 0, 0] = 1
kv = (k[0] * V[0] + k[1] * V[1] + k[2] * V[2]) / k2
with h5py.File(sys.argv[4], "w") as f:
    for a, c in enumerate("xyz"):
        comp = k[a] * kv
        f.create_dataset("compressive_" + c, data=scipy.fft.irfftn(comp, s=shape, workers=-1))
        f.create_dataset("solenoidal_" + c, data=scipy.fft.irfftn(V[a] - comp, s=shape, workers=-1))
"""


def operator_rows(args, mpiexec, exe, mkdata, work, scipy_ok, pairs=5):
    """--apply=gaussian and --vector=helmholtz against the plain --real
    forward of the same input and the scipy script for the same job: one
    untimed run of each fftshard command, then the three in turns whose
    order rotates, medians of `pairs` turns; peak memory per rank over the
    plain forward's; the exchanges each run made (the report's count)."""
    ranks = int(args.ranks.split(",")[0])
    print("# operators, %d ranks, medians of %d turns in rotating order (operator, plain "
          "--real forward, scipy script); peak: the largest rank's VmHWM" % (ranks, pairs))
    print("%-34s %-16s %7s %7s %8s %7s %9s %8s %8s" % (
        "command", "size", "wall s", "fft+ex", "operate", "exch", "peak MiB", "x plain",
        "x scipy"))
    out = os.path.join(work, "op.h5")
    for size in args.sizes.split(","):
        if len(size.split("x")) != 3:
            continue
        cases = [("--real --apply=gaussian:2", "float64", size, ["--real", "--apply=gaussian:2"],
                  1, GAUSSIAN_SCRIPT, ["2"])]
        if has_option(exe, "--vector"):
            cases.append(("--real --vector=helmholtz", "float32", "3x" + size,
                          ["--real", "--vector=helmholtz"], 3, HELMHOLTZ_SCRIPT, []))
        for name, dtype, label, opts, ncomp, script, sargs in cases:
            inputs = [os.path.join(work, "op-%s-%s-%d.h5" % (dtype, size, c)) for c in range(ncomp)]
            for c, inp in enumerate(inputs):
                if not os.path.exists(inp):
                    run([mpiexec, "-n", "2", mkdata, "-q", "-f", "-t", dtype, "--seed",
                         str(c + 1), size, inp])
            op, plain, sp = [], [], []
            runs = {
                "op": lambda: op.append(fftshard_many(mpiexec, exe, ranks, inputs, out, opts)),
                "plain": lambda: plain.append(fftshard(mpiexec, exe, ranks, inputs[0], out,
                                                       ["--real"])),
                "scipy": lambda: sp.append(script_wall(script, inputs[:1] if ncomp == 1
                                                       else inputs, out, sargs)),
            }
            # One untimed run of each fftshard command first (the inputs in the
            # page cache, the libraries loaded), then the three in turns, the
            # order rotated each turn: none always runs first or right after
            # the same other (a run after the scipy script's has been seen to
            # write 8 x slower, its file system still busy with that file).
            runs["op"](), runs["plain"]()
            del op[:], plain[:]
            order = ["op", "plain", "scipy"] if scipy_ok else ["op", "plain"]
            for turn in range(pairs):
                for who in order[turn % len(order):] + order[:turn % len(order)]:
                    runs[who]()
            w, wp = median([d["wall"] for d in op]), median([d["wall"] for d in plain])
            t = median(sp) if sp else None
            best = min(op, key=lambda d: d["wall"])
            print("%-34s %-16s %7.3f %7.3f %8.3f %7d %9.1f %8.2f %8s" % (
                name, label, w, best["transform"], best["operate"], best["exchanges"],
                best["peak_mib"], w / wp, "%.2f" % (w / t) if t else "-"), flush=True)
            b = min(plain, key=lambda d: d["wall"])
            print("%-34s %-16s %7.3f %7.3f %8s %7d %9.1f %8s %8s   (peak %.2f x plain)" % (
                "  fftshard --real (plain forward)", size, wp, b["transform"], "-", b["exchanges"],
                b["peak_mib"], "1.00", "-", best["peak_mib"] / b["peak_mib"]))
            if t:
                print("%-34s %-16s %7.3f" % ("  scipy script, same job", label, t))
    print()


def poisson_rows(args, mpiexec, exe, mkdata, work, turns=5):
    """--apply=poisson with each --boundary (see the docstring)."""
    if not has_option(exe, "--boundary"):
        return
    ranks = int(args.ranks.split(",")[0])
    print("# poisson, %d ranks, medians of %d turns in rotating order; peak: the largest "
          "rank's VmHWM; dry run: its memory per rank" % (ranks, turns))
    print("%-46s %-12s %7s %7s %8s %9s %9s %8s" % (
        "command", "size", "wall s", "fft+ex", "operate", "peak MiB", "dry MiB", "x per."))
    out = os.path.join(work, "poisson.h5")
    cases = [("--real --apply=poisson", ["--real", "--apply=poisson"]),
             ("--apply=poisson --boundary=dirichlet", ["--apply=poisson", "--boundary=dirichlet"]),
             ("--real --apply=poisson --boundary=free",
              ["--real", "--apply=poisson", "--boundary=free"])]
    for size in args.sizes.split(","):
        if len(size.split("x")) != 3:
            continue
        inp = os.path.join(work, "op-float64-%s-0.h5" % size)
        if not os.path.exists(inp):
            run([mpiexec, "-n", "2", mkdata, "-q", "-f", "-t", "float64", "--seed", "1", size, inp])
        figs = {name: [] for name, _ in cases}
        for name, opts in cases:  # untimed: the input in the page cache, the libraries loaded
            fftshard(mpiexec, exe, ranks, inp, out, opts)
        for turn in range(turns):
            order = cases[turn % len(cases):] + cases[:turn % len(cases)]
            for name, opts in order:
                figs[name].append(fftshard(mpiexec, exe, ranks, inp, out, opts))
        base = median([d["wall"] for d in figs[cases[0][0]]])
        for name, opts in cases:
            w = median([d["wall"] for d in figs[name]])
            best = min(figs[name], key=lambda d: d["wall"])
            dry = "-"
            if "--boundary=free" in opts:
                p = run([mpiexec, "-n", str(ranks), exe, "--dry-run"] + opts + [inp])
                m = re.search(r"about ([0-9.]+) MiB", p.stdout)
                dry = m.group(1) if m else "?"
            print("%-46s %-12s %7.3f %7.3f %8.3f %9.1f %9s %8.2f" % (
                name, size, w, best["transform"], best["operate"], best["peak_mib"], dry, w / base),
                flush=True)
    print()


def startup_walls(mpiexec, exe, hello, tiny, work, ranks, runs=11):
    """Median wall times of an MPI program that only starts and ends
    (MPI_Init, a barrier, MPI_Finalize) and of a 1x1x1 fftshard run, taken
    in turns so that both see the same machine."""
    out = os.path.join(work, "tiny-out.h5")
    h, f = [], []
    for _ in range(runs):
        h.append(timed([mpiexec, "-n", str(ranks), hello]))
        f.append(timed([mpiexec, "-n", str(ranks), exe, "-q", "-f", tiny, out]))
    return median(h), median(f)


def startup_rows(mpiexec, exe, hello, tiny, work, ranks):
    h, f = startup_walls(mpiexec, exe, hello, tiny, work, ranks)
    print("%-12s %5d  %-44s %.3f s; fftshard 1x1x1 %.3f s = %.2f x" % (
        "1x1x1", ranks, "MPI hello (start-up floor), median of 11", h, f, f / h))


def file_to_file_rows(mpiexec, exe, ranks, size, inp, out, scipy_ok, startup, pairs=5):
    """The default command against the scipy pipeline, median of A/B pairs
    of whole wall times, and against the sum-free bound max(read, fft +
    exchange, write) + start-up (its phases from the same runs, start-up
    the 1x1x1 run's wall). Returns the fastest default run."""
    runs, sp = [], []
    for _ in range(pairs):
        runs.append(fftshard(mpiexec, exe, ranks, inp, out, []))
        if scipy_ok:
            sp.append(scipy_wall(inp, out))
    wall = median([d["wall"] for d in runs])
    if sp:
        print("%-12s %5d  %-44s %.3f s; fftshard default %.3f s wall = %.2f x (median of %d A/B pairs)"
              % (size, ranks, "h5py + scipy.fft (all cores), file to file", median(sp), wall,
                 wall / median(sp), pairs))
    else:
        print("%-12s %5d  %-44s not run: /usr/bin/python3 cannot import scipy.fft "
              "(apt-get install python3-scipy); fftshard default %.3f s wall" % (
                  size, ranks, "h5py + scipy.fft (all cores), file to file", wall))
    bound = median([max(d["read"], d["transform"], d["write"]) for d in runs]) + startup
    print("%-12s %5d  %-44s %.3f s; fftshard default %.3f s wall = %.2f x" % (
        size, ranks, "sum-free: max(read,fft+exch,write)+start-up", bound, wall,
        wall / bound))
    return min(runs, key=lambda d: d["transform"])


def fftw_threads(exe, size, threads, repeats):
    """FFTW's own threaded in-memory transform (best time), or None."""
    if not exe or len(size.split("x")) != 3:
        return None
    p = subprocess.run([exe] + size.split("x") + [str(threads), str(max(repeats, 3))],
                       capture_output=True, text=True)
    m = re.search(r"best=([0-9.]+)s", p.stdout)
    return float(m.group(1)) if p.returncode == 0 and m else None


def fftw_mpi(script, ranks, size, transposed_out, repeats):
    """FFTW-MPI's in-memory transform (best time), or None."""
    if not script or len(size.split("x")) != 3:
        return None
    best = None
    for _ in range(repeats):
        p = subprocess.run(["sh", script, str(ranks)] + size.split("x")
                           + [str(transposed_out), "measure"],
                           capture_output=True, text=True, env=serial_env())
        m = re.search(r"best=([0-9.]+)s", p.stdout)
        if p.returncode != 0 or not m:
            print("# FFTW_MPI_REF failed: %s" % (p.stderr.strip() or p.stdout.strip()))
            return None
        best = float(m.group(1)) if best is None else min(best, float(m.group(1)))
    return best

# argv: snapshot, output, N. What a user writes to paint N^3 particles
# (cloud in cell, interlaced) on an N^3 mesh and measure P(k): numpy.bincount
# painting of the 8 corners, the shifted mesh, rfftn, nbodykit's
# combination, the window compensated, the shot noise subtracted, shells.
def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="128x128x128,256x256x256")
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--no-real", action="store_true",
                    help="skip the real and vector-field input rows")
    ap.add_argument("--no-spectrum", action="store_true",
                    help="skip the power spectrum rows")
    ap.add_argument("--no-operators", action="store_true",
                    help="skip the --apply and --vector rows")
    ap.add_argument("--only-operators", action="store_true",
                    help="only the --apply and --vector rows")
    ap.add_argument("--no-poisson", action="store_true",
                    help="skip the --apply=poisson --boundary rows")
    ap.add_argument("--only-poisson", action="store_true",
                    help="only the --apply=poisson --boundary rows")
    ap.add_argument("--no-r2r", action="store_true",
                    help="skip the cosine and sine transform rows")
    ap.add_argument("--only-r2r", action="store_true",
                    help="only the cosine and sine transform rows")
    ap.add_argument("--no-paint", action="store_true",
                    help="skip the --paint rows")
    ap.add_argument("--only-paint", action="store_true",
                    help="only the --paint rows")
    ap.add_argument("--no-ooc", action="store_true", help="skip the out-of-core rows")
    ap.add_argument("--only-ooc", action="store_true", help="only the out-of-core rows")
    ap.add_argument("--ooc-size", default="384x320x256")
    ap.add_argument("--ooc-args", help="more options of the out-of-core command")
    ap.add_argument("--ooc-baseline", help="another fftshard binary for the out-of-core rows")
    ap.add_argument("--ooc-cgroup", help="a memory limit (e.g. 256M) every out-of-core row "
                    "runs under, in a cgroup v1 of its own")
    ap.add_argument("--ooc-disk", help="WRITE[:READ] bytes/s (e.g. 110M:500M): the disk "
                    "throttled so while the out-of-core rows run (blkio v1, root)")
    args = ap.parse_args()
    strategies = args.strategies.split(",")
    mpiexec, exe, mkdata = env("MPIEXEC"), env("FFTSHARD"), env("FFTSHARD_MKDATA")
    bench_exchange = env("BENCH_EXCHANGE")
    fftw_ref = os.environ.get("FFTW_MPI_REF")
    own_dir = "BENCH_DIR" not in os.environ
    work = os.environ.get("BENCH_DIR") or tempfile.mkdtemp(prefix="fftshard-bench.")
    refs = []
    try:
        if args.only_operators:
            operator_rows(args, mpiexec, exe, mkdata, work, have_scipy())
            return
        if args.only_poisson:
            poisson_rows(args, mpiexec, exe, mkdata, work)
            return
        if args.only_r2r:
            r2r_rows(args, mpiexec, exe, mkdata, work, have_scipy())
            return
        if args.only_paint:
            paint_rows(args, mpiexec, exe, work)
            return
        if args.only_ooc:
            ooc_rows(args, mpiexec, exe, mkdata, work, serial_env())
            return
        tiny = os.path.join(work, "tiny.h5")
        run([mpiexec, "-n", "1", mkdata, "-q", "-f", "1x1x1", tiny])
        print("# fftshard file to file, complex128 input, best of %d runs by wall time"
              % args.repeats)
        head = ("%-11s %-12s %5s %-11s %6s %6s %6s %8s %6s %6s %6s %7s %6s %8s %6s"
                % ("strategy", "size", "ranks", "decomp", "read", "plan", "fft", "exchange",
                   "write", "total", "wall", "GFlop/s", "GB/s", "peak MiB", "peak/a"))
        print(head)
        for size in args.sizes.split(","):
            inp = os.path.join(work, "in-%s.h5" % size)
            out = os.path.join(work, "out.h5")
            run([mpiexec, "-n", "2", mkdata, "-q", "-f", size, inp])
            for ranks in [int(r) for r in args.ranks.split(",")]:
                base = fftshard(mpiexec, exe, ranks, tiny, out, ["--transpose=alltoall"])["peak_mib"]
                local_mib = elems(size) * 16 / ranks / 1048576.0
                decomps = ["slab", "pencil"] if ranks >= 4 else ["auto"]
                rows = []
                for decomp in decomps:
                    for strategy in strategies:
                        extra = ["--transpose=" + strategy, "--decomp=" + decomp]
                        s = best_of(args.repeats, "wall",
                                    lambda: fftshard(mpiexec, exe, ranks, inp, out, extra))
                        s["strategy"] = strategy
                        rows.append(s)
                        print_row(s, size, ranks, (s["peak_mib"] - base) / local_mib)
                # FFTW's MEASURE planning, as the FFTW-MPI reference uses, with
                # the wisdom kept: the first run plans, the others reuse it.
                wisdom = os.path.join(work, "wisdom-%s-%d" % (size, ranks))
                for strategy in ("alltoall", "pairwise"):
                    if strategy not in strategies:
                        continue
                    extra = ["--transpose=" + strategy, "--plan=measure", "--wisdom=" + wisdom]
                    fftshard(mpiexec, exe, ranks, inp, out, extra)
                    s = best_of(args.repeats, "wall",
                                lambda: fftshard(mpiexec, exe, ranks, inp, out, extra))
                    s["strategy"] = strategy + "/M"
                    rows.append(s)
                    print_row(s, size, ranks, (s["peak_mib"] - base) / local_mib)
                refs.append((size, ranks, rows, inp, out))
        print()
        print("# references, same run (ratios: fftshard / reference; below 1 is faster)")
        print("%-12s %5s  %-44s %s" % ("size", "ranks", "reference", "figures"))
        scipy_ok = have_scipy()
        for size, ranks, rows, inp, out in refs:
            fastest = min(rows, key=lambda s: s["transform"])
            startup = startup_walls(mpiexec, exe, env("BENCH_HELLO"), tiny, work, ranks)[1]
            default = file_to_file_rows(mpiexec, exe, ranks, size, inp, out, scipy_ok, startup)
            t = fftw_threads(os.environ.get("BENCH_FFTW_THREADS"), size, ranks, args.repeats)
            if t is not None:
                print("%-12s %5d  %-44s %.4f s; fftshard default (%s) fft + exchange %.4f s = "
                      "%.2f x" % (size, ranks, "FFTW threads in memory, MEASURE (ceiling)", t,
                                  default["strategy_name"], default["transform"],
                                  default["transform"] / t))
            for transposed, name in ((1, "TRANSPOSED_OUT"), (0, "natural order")):
                t = fftw_mpi(fftw_ref, ranks, size, transposed, args.repeats)
                if t is not None:
                    print("%-12s %5d  %-44s %.4f s; fftshard %s %.4f s = %.2f x" % (
                        size, ranks, "FFTW-MPI in memory, MEASURE, " + name, t,
                        fastest["strategy"], fastest["transform"], fastest["transform"] / t))
        for ranks in [int(r) for r in args.ranks.split(",")]:
            startup_rows(mpiexec, exe, env("BENCH_HELLO"), tiny, work, ranks)
        print()
        if not args.no_real:
            real_rows(args, mpiexec, exe, mkdata, work, scipy_ok)
        if not args.no_spectrum:
            spectrum_rows(args, mpiexec, exe, mkdata, work, scipy_ok)
        if not args.no_operators:
            operator_rows(args, mpiexec, exe, mkdata, work, scipy_ok)
        if not args.no_poisson:
            poisson_rows(args, mpiexec, exe, mkdata, work)
        if not args.no_r2r:
            r2r_rows(args, mpiexec, exe, mkdata, work, scipy_ok)
        if not args.no_paint:
            paint_rows(args, mpiexec, exe, work)
        if not args.no_ooc:
            ooc_rows(args, mpiexec, exe, mkdata, work, serial_env())
        for size in args.sizes.split(","):
            for ranks in [int(r) for r in args.ranks.split(",")]:
                p = run([mpiexec, "-n", str(ranks), bench_exchange, size, str(args.repeats)])
                print(p.stdout)
    finally:
        if own_dir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
