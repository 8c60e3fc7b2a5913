#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""bench_paint: the --paint rows of tests/bench/bench.py (--only-paint,
--no-paint): particles painted and their P(k), next to the numpy script a
user writes."""

import json
import os
import resource
import time

from bench_common import fftshard, median, run, script_wall, serial_env

PAINT_SCRIPT = r"""
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    x = f["PartType1/Coordinates"][...].astype(np.float64)
    L = float(f["Header"].attrs["BoxSize"])
n = int(sys.argv[3])
def cic(shift):
    u = np.mod(x, L) * n / L + shift
    i0 = np.floor(u).astype(np.int64)
    d = u - i0
    mesh = np.zeros(n ** 3)
    for c in np.ndindex(2, 2, 2):
        w = np.prod([d[:, a] if c[a] else 1 - d[:, a] for a in range(3)], axis=0)
        idx = ((i0[:, 0] + c[0]) % n * n + (i0[:, 1] + c[1]) % n) * n + (i0[:, 2] + c[2]) % n
        mesh += np.bincount(idx, weights=w, minlength=n ** 3)
    return mesh.reshape(n, n, n) * (n ** 3 / len(x)) - 1
f = np.fft.fftfreq(n, 1 / n)
fr = np.fft.rfftfreq(n, 1 / n)
ph = np.exp(1j * np.pi * (f[:, None, None] + f[None, :, None] + fr[None, None, :]) / n)
X = 0.5 * (np.fft.rfftn(cic(0.0)) + np.fft.rfftn(cic(0.5)) * ph)
W = (np.sinc(f / n)[:, None, None] * np.sinc(f / n)[None, :, None] * np.sinc(fr / n)[None, None, :]) ** 2
P = np.abs(X) ** 2 / W ** 2 * L ** 3 / n ** 6
m = np.ones(X.shape)
m[..., 1:(n + 1) // 2] = 2
kk = np.sqrt(f[:, None, None] ** 2 + f[None, :, None] ** 2 + fr[None, None, :] ** 2)
b = np.floor(kk + 0.5).astype(np.int64).ravel()
power = np.bincount(b, weights=(P * m).ravel()) / np.maximum(np.bincount(b, weights=m.ravel()), 1)
with h5py.File(sys.argv[2], "w") as out:
    out["power"] = power - L ** 3 / len(x)
"""


def children_cpu():
    """User and system seconds of the waited-for children (and theirs)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def cpu_timed(fn):
    """fn()'s result, its wall seconds and its children's CPU seconds."""
    c0, t0 = children_cpu(), time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0, children_cpu() - c0


def paint_rows(args, mpiexec, exe, work):
    """--paint=cic --interlace of N^3 particles on an N^3 mesh and its P(k),
    next to the numpy script: rotated turns (the script, then fftshard on
    each rank count), medians of wall and CPU seconds (the machine may be
    shared: the CPU seconds are less noisy, though an MPI rank that waits
    for another spins), the particles per second per rank of the report
    and the measured peak against the dry run's total."""
    turns = max(args.repeats, 3)
    print("# painting N^3 particles (cic, interlaced) on N^3 and P(k): medians of %d rotated "
          "turns, wall and CPU seconds" % turns)
    print("%-40s %-4s %5s %8s %8s %8s %8s %8s %8s %12s %9s %9s %6s" % (
        "command", "N", "ranks", "wall s", "cpu s", "read s", "paint s", "x script",
        "cpu x", "Mpart/s/rank", "peak MiB", "dry MiB", "/dry"))
    out = os.path.join(work, "paint-pk.h5")
    opts = ["--real", "--spectrum-only", "--paint=cic", "--interlace"]
    rank_list = [int(r) for r in args.ranks.split(",")]
    for size in args.sizes.split(","):
        n = int(size.split("x")[0])
        snap = os.path.join(work, "snap-%d.h5" % n)
        run(["/usr/bin/python3", "-c", "import sys, h5py, numpy as np\n"
             "n = int(sys.argv[2])\n"
             "x = np.random.default_rng(1).uniform(0, 1000.0, (n ** 3, 3)).astype(np.float32)\n"
             "with h5py.File(sys.argv[1], 'w') as f:\n"
             "    f['PartType1/Coordinates'] = x\n"
             "    f.create_group('Header').attrs['BoxSize'] = 1000.0\n", snap, str(n)],
            serial_env())
        inp = snap + ":/PartType1/Coordinates"
        mesh = opts + ["--mesh=%d" % n]
        dry = {}
        for ranks in rank_list:
            report = os.path.join(work, "paint-dry.json")
            run([mpiexec, "-n", str(ranks), exe, "--force", "--dry-run", "--report=" + report]
                + mesh + [inp, out])
            with open(report) as f:
                dry[ranks] = json.load(f)["memory_per_rank"]["total_bytes"] / 1048576.0
        script, mine = {"wall": [], "cpu": []}, {r: [] for r in rank_list}
        for _ in range(turns):
            _, wall, cpu = cpu_timed(lambda: script_wall(PAINT_SCRIPT, [snap], out + ".ref",
                                                         [str(n)]))
            script["wall"].append(wall)
            script["cpu"].append(cpu)
            for ranks in rank_list:
                s, wall, cpu = cpu_timed(lambda: fftshard(mpiexec, exe, ranks, inp, out, mesh))
                with open(out + ".json") as f:
                    p = json.load(f)["paint"]["inputs"][0]
                s.update(cpu=cpu, rate=p["particles_per_second_per_rank"] / 1e6)
                mine[ranks].append(s)
        sw, sc = median(script["wall"]), median(script["cpu"])
        for ranks in rank_list:
            m = {k: median([s[k] for s in mine[ranks]])
                 for k in ("wall", "cpu", "read", "paint", "rate", "peak_mib")}
            print("%-40s %-4d %5d %8.2f %8.2f %8.2f %8.2f %8.3f %8.3f %12.2f %9.1f %9.1f %6.3f" % (
                "fftshard " + " ".join(opts), n, ranks, m["wall"], m["cpu"], m["read"],
                m["paint"], m["wall"] / sw, m["cpu"] / sc, m["rate"], m["peak_mib"],
                dry[ranks], m["peak_mib"] / dry[ranks]), flush=True)
        print("%-40s %-4d %5s %8.2f %8.2f %8s %8s %8s %8s %12s %9s %9s %6s" % (
            "numpy script (bincount, rfftn, shells)", n, "1", sw, sc, "-", "-", "1.000",
            "1.000", "-", "-", "-", "-"))
    print()
