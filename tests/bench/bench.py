#!/usr/bin/env python3
"""fftshard benchmark: every exchange strategy, file to file, for a list of sizes
and rank counts, then the exchange strategies alone next to MPI_Alltoall.

    tests/bench/bench.py [--sizes 128x128x128,256x256x256] [--ranks 2,4] [--repeats 3]

Environment: MPIEXEC, FFTSHARD, FFTSHARD_MKDATA, BENCH_EXCHANGE (set by
`make bench`), BENCH_DIR (scratch directory for the inputs, default a new
temporary directory). Prints tables; times are the best of --repeats runs
(the machine may be shared: compare ratios within one run, not across runs).
Peak memory is the largest VmHWM of any rank, from the JSON report, minus
that of a run on a 1x1x1 input (the libraries' own footprint), divided by the
rank's share of the array in complex double."""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

STRATEGIES = ["alltoall", "random", "xorswap", "pairwise"]
PHASES = ["read", "plan", "fft", "exchange", "write", "total"]


def env(name, default=None):
    value = os.environ.get(name, default)
    if value is None:
        sys.exit("bench.py: %s is not set (run it through `make bench`)" % name)
    return value


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("bench.py: %s failed (%d):\n%s" % (" ".join(cmd), p.returncode, p.stderr))
    return p


def fftshard(mpiexec, exe, ranks, strategy, inp, out, extra=()):
    """Run fftshard and return the figures of its JSON report."""
    report = out + ".json"
    run([mpiexec, "-n", str(ranks), exe, "--force", "--quiet", "--report=" + report,
         "--transpose=" + strategy] + list(extra) + [inp, out])
    with open(report) as f:
        r = json.load(f)
    fig = {ph: r["phases"][ph]["max"] for ph in PHASES}
    fig["gflops"] = r["gflops"]
    fig["gbs"] = r["exchange"]["bandwidth_gbs"]
    fig["peak_mib"] = r["memory"]["peak_bytes_max"] / 1048576.0
    fig["overlap"] = (r["exchange"]["block_fft_overlapped_seconds"],
                      r["exchange"]["block_fft_seconds"])
    return fig


def elems(shape):
    n = 1
    for s in shape.split("x"):
        n *= int(s)
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="128x128x128,256x256x256")
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    mpiexec, exe, mkdata = env("MPIEXEC"), env("FFTSHARD"), env("FFTSHARD_MKDATA")
    bench_exchange = env("BENCH_EXCHANGE")
    own_dir = "BENCH_DIR" not in os.environ
    work = os.environ.get("BENCH_DIR") or tempfile.mkdtemp(prefix="fftshard-bench.")
    try:
        tiny = os.path.join(work, "tiny.h5")
        run([mpiexec, "-n", "1", mkdata, "-q", "-f", "1x1x1", tiny])
        print("# fftshard file to file, complex128 input, best of %d; peak = (VmHWM - VmHWM of a "
              "1x1x1 run) / local array" % args.repeats)
        print("%-9s %-12s %5s %7s %7s %7s %8s %7s %7s %8s %7s %8s %6s" % (
            "strategy", "size", "ranks", "read", "plan", "fft", "exchange", "write", "total",
            "GFlop/s", "GB/s", "peak MiB", "peak/a"))
        for size in args.sizes.split(","):
            inp = os.path.join(work, "in-%s.h5" % size)
            out = os.path.join(work, "out.h5")
            run([mpiexec, "-n", "2", mkdata, "-q", "-f", size, inp])
            for ranks in [int(r) for r in args.ranks.split(",")]:
                base = fftshard(mpiexec, exe, ranks, "alltoall", tiny, out)["peak_mib"]
                local_mib = elems(size) * 16 / ranks / 1048576.0
                for strategy in STRATEGIES:
                    best = None
                    for _ in range(args.repeats):
                        s = fftshard(mpiexec, exe, ranks, strategy, inp, out)
                        if best is None or s["total"] < best["total"]:
                            best = s
                    print("%-9s %-12s %5d %7.3f %7.3f %7.3f %8.3f %7.3f %7.3f %8.2f %7.3f %8.1f %6.2f" % (
                        strategy, size, ranks, best["read"], best["plan"], best["fft"],
                        best["exchange"], best["write"], best["total"], best.get("gflops", 0),
                        best.get("gbs", 0), best["peak_mib"],
                        (best["peak_mib"] - base) / local_mib))
        print()
        for size in args.sizes.split(","):
            for ranks in [int(r) for r in args.ranks.split(",")]:
                p = run([mpiexec, "-n", str(ranks), bench_exchange, size, str(args.repeats)])
                print(p.stdout)
    finally:
        if own_dir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
