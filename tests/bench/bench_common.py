#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""bench_common: what the rows of tests/bench/bench.py share: running
fftshard and the scripts it is compared with, and their figures."""

import json
import os
import re
import subprocess
import sys
import time

PHASES = ["read", "plan", "fft", "exchange", "write", "total"]
OPTIONAL_PHASES = ["paint"]


def env(name, default=None):
    value = os.environ.get(name, default)
    if value is None:
        sys.exit("bench.py: %s is not set (run it through `make bench`)" % name)
    return value


def run(cmd, environ=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=environ)
    if p.returncode != 0:
        sys.exit("bench.py: %s failed (%d):\n%s" % (" ".join(cmd), p.returncode, p.stderr))
    return p


def serial_env():
    """The environment without an enclosing job's MPI variables (h5py would
    pick its MPI build)."""
    return {k: v for k, v in os.environ.items()
            if not re.match(r"(PMI_|HYDRA_|MPI_|OMPI_)", k)}


def fresh(out):
    """Remove the last run's output and write back the page cache."""
    for path in (out, out + ".json"):
        if os.path.exists(path):
            os.remove(path)
    os.sync()


def fftshard(mpiexec, exe, ranks, inp, out, extra):
    """Run fftshard; the figures of its JSON report and the wall time."""
    return fftshard_many(mpiexec, exe, ranks, [inp], out, extra)


def fftshard_many(mpiexec, exe, ranks, inputs, out, extra):
    """fftshard() with several INPUTs."""
    report = out + ".json"
    fresh(out)
    t0 = time.perf_counter()
    run([mpiexec, "-n", str(ranks), exe, "--force", "--quiet", "--report=" + report]
        + list(extra) + list(inputs) + [out])
    wall = time.perf_counter() - t0
    with open(report) as f:
        r = json.load(f)
    fig = {ph: r["phases"][ph]["max"] for ph in PHASES}
    fig.update({ph: r["phases"].get(ph, {}).get("max", 0.0) for ph in OPTIONAL_PHASES})
    fig["wall"] = wall
    fig["transform"] = fig["fft"] + fig["exchange"]
    fig["operate"] = r["phases"].get("operate", {}).get("max", 0.0)
    fig["exchanges"] = r["exchange"].get("count", 0)
    fig["gflops"] = r["gflops"]
    fig["gbs"] = r["exchange"]["bandwidth_gbs"]
    fig["peak_mib"] = r["memory"]["peak_bytes_max"] / 1048576.0
    # several INPUTs: the decomposition and strategy are each dataset's
    first = r["datasets"][0] if "datasets" in r else r
    fig["decomp"] = first["decomposition"]["type"]
    fig["strategy_name"] = first["strategy"]["name"]
    grid = first["decomposition"].get("grid")
    if grid and fig["decomp"] == "pencil":
        fig["decomp"] = "pencil %dx%d" % tuple(grid)
    return fig


def script_wall(script, inputs, out, extra):
    fresh(out)
    t0 = time.perf_counter()
    run(["/usr/bin/python3", "-c", script] + list(inputs) + [out] + list(extra), serial_env())
    return time.perf_counter() - t0


def has_option(exe, name):
    p = subprocess.run([exe, "--help"], capture_output=True, text=True)
    return name in p.stdout


def median(values):
    return sorted(values)[len(values) // 2]


def timed(cmd):
    t0 = time.perf_counter()
    run(cmd)
    return time.perf_counter() - t0
