#!/usr/bin/env python3
"""make simulate: fftshard's exchange strategies on simulated machines.

Runs sim/fftshard-sim under smpirun for every platform (sim/platforms/),
rank count, decomposition and array size, prints the table strategy x
platform x ranks x decomposition with the predicted exchange and total
times (the slowest rank's), writes it as CSV and draws it as a PNG. Then
(unless --no-calibrate) runs the real fftshard on 2, 4 and 8 ranks here and
the simulator on the calibration platform (sim/platforms/local.xml) with
the same parameters, and prints the prediction error of each case.

Each simulation has a time limit (--timeout) and the whole a budget
(--budget): a run over its limit, or not started within the budget, is a
row marked "timeout" or "skipped", so the table always comes out.

Environment: FFTSHARD_SIM (the simulator), SIM_CALIBRATE, FFTSHARD,
FFTSHARD_MKDATA, MPIEXEC (set by make simulate).
"""
import argparse
import concurrent.futures
import csv
import json
import os
import subprocess
import sys
import tempfile
import time

STRATEGIES = ["alltoall", "random", "xorswap", "pairwise"]
# Options that keep SimGrid fast and honest about what it models: the
# real copy loops add no time (the model does), no reverse-direction
# acknowledgement flows, small stacks for thousands of ranks.
SMPI_CFG = [
    "--cfg=smpi/simulate-computation:no",
    "--cfg=network/crosstraffic:0",
    "--cfg=contexts/stack-size:1024",
    "--log=root.thresh:critical",
]


def smpirun(platform, np_, sim, args, timeout):
    cmd = ["smpirun", "-no-privatize", "-platform", platform, "-np", str(np_), sim] + SMPI_CFG + args
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    rows = [r for r in csv.reader(l for l in out.stdout.splitlines() if l and not l.startswith("strategy,"))]
    if out.returncode != 0 and not rows:
        return None, "failed: " + (out.stderr.strip().splitlines() or ["?"])[-1]
    return rows, ""


def simulate_case(case, sim, calibration, timeout):
    platform, kind, ranks, decomp, shape, dtype = case
    start = time.time()
    rows, why = smpirun(platform, ranks, sim,
                        ["--shape=" + shape, "--dtype=" + dtype, "--decomp=" + decomp,
                         "--calibration=" + calibration], timeout)
    elapsed = time.time() - start
    result = []
    for s in STRATEGIES:
        row = next((r for r in rows or [] if r[0] == s), None)
        rec = {"platform": kind, "ranks": ranks, "decomp": decomp, "shape": shape, "dtype": dtype,
               "strategy": s, "grid": "", "exchange_s": "", "fft_s": "", "total_s": "",
               "messages": "", "note": why, "wall_s": round(elapsed, 1)}
        if row:
            rec.update(grid=row[2], exchange_s=row[6], fft_s=row[7], total_s=row[8],
                       messages=row[9], note=row[10] if len(row) > 10 else "")
        result.append(rec)
    return result


def run_table(a, sim, calibration):
    cases = []
    for shape in a.sizes.split(","):
        for ranks in [int(r) for r in a.ranks.split(",")]:
            for kind in a.platforms.split(","):
                for decomp in a.decomps.split(","):
                    platform = os.path.join(a.srcdir, "sim", "platforms", "%s-%d.xml" % (kind, ranks))
                    cases.append((platform, kind, ranks, decomp, shape, a.dtype))
    # Small cases first, so the budget goes to as many of them as it can.
    cases.sort(key=lambda c: (c[2], c[4]))
    deadline = time.time() + a.budget
    rows = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futures = {}
        for case in cases:
            futures[pool.submit(run_or_skip, case, sim, calibration, a.timeout, deadline)] = case
        for f in concurrent.futures.as_completed(futures):
            for rec in f.result():
                rows.append(rec)
    key = {k: i for i, k in enumerate(a.platforms.split(","))}
    rows.sort(key=lambda r: (r["shape"], r["ranks"], key[r["platform"]], r["decomp"],
                             STRATEGIES.index(r["strategy"])))
    return rows


def run_or_skip(case, sim, calibration, timeout, deadline):
    left = deadline - time.time()
    if left < 5:
        return [{"platform": case[1], "ranks": case[2], "decomp": case[3], "shape": case[4],
                 "dtype": case[5], "strategy": s, "grid": "", "exchange_s": "", "fft_s": "",
                 "total_s": "", "messages": "", "note": "skipped (budget)", "wall_s": 0}
                for s in STRATEGIES]
    return simulate_case(case, sim, calibration, min(timeout, left))


FIELDS = ["shape", "dtype", "platform", "ranks", "decomp", "grid", "strategy", "exchange_s",
          "fft_s", "total_s", "messages", "note", "wall_s"]


def fmt(v):
    try:
        return "%.4f" % float(v)
    except ValueError:
        return "-"


def print_table(rows):
    print("%-14s %-9s %5s %-6s %-6s %-9s %10s %10s %9s  %s" %
          ("shape", "platform", "ranks", "decomp", "grid", "strategy", "exchange_s", "total_s",
           "messages", "note"))
    for r in rows:
        print("%-14s %-9s %5d %-6s %-6s %-9s %10s %10s %9s  %s" %
              (r["shape"], r["platform"], r["ranks"], r["decomp"], r["grid"] or "-", r["strategy"],
               fmt(r["exchange_s"]), fmt(r["total_s"]), r["messages"] or "-", r["note"]))


def random_order_finding(rows):
    """The patent's claim on the torus: random order against alltoall."""
    lines = []
    for r in rows:
        if r["platform"] != "torus" or r["strategy"] != "random" or not r["exchange_s"]:
            continue
        base = next((b for b in rows if b["platform"] == "torus" and b["strategy"] == "alltoall"
                     and b["ranks"] == r["ranks"] and b["decomp"] == r["decomp"]
                     and b["shape"] == r["shape"] and b["exchange_s"]), None)
        if base:
            ratio = float(base["exchange_s"]) / float(r["exchange_s"])
            lines.append("torus %s %d ranks %s: alltoall %.4f s, random %.4f s: random %s by %.0f%%"
                         % (r["shape"], r["ranks"], r["decomp"], float(base["exchange_s"]),
                            float(r["exchange_s"]), "faster" if ratio > 1 else "slower",
                            abs(ratio - 1) * 100))
    return lines


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("simulate: no matplotlib, no plot (install python3-matplotlib)", file=sys.stderr)
        return
    groups = sorted({(r["shape"], r["decomp"]) for r in rows})
    fig, axes = plt.subplots(len(groups), 1, figsize=(11, 3.2 * len(groups)), squeeze=False)
    for ax, (shape, decomp) in zip(axes[:, 0], groups):
        sel = [r for r in rows if r["shape"] == shape and r["decomp"] == decomp]
        labels = sorted({(r["platform"], r["ranks"]) for r in sel}, key=lambda k: (k[1], k[0]))
        width = 0.8 / len(STRATEGIES)
        for i, s in enumerate(STRATEGIES):
            ys = []
            for lab in labels:
                r = next((x for x in sel if (x["platform"], x["ranks"]) == lab and x["strategy"] == s), None)
                ys.append(float(r["total_s"]) if r and r["total_s"] else 0)
            ax.bar([j + i * width for j in range(len(labels))], ys, width, label=s)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(labels))])
        ax.set_xticklabels(["%s\n%d" % lab for lab in labels], fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel("total s (log)")
        ax.set_title("%s %s: predicted FFT + exchange time (0: no result)" % (shape, decomp))
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def calibrate(a, sim, calibration):
    """Real runs here against the simulator on the calibration platform."""
    fftshard, mkdata, mpiexec = (os.environ.get(k) for k in ("FFTSHARD", "FFTSHARD_MKDATA", "MPIEXEC"))
    if not (fftshard and mkdata and mpiexec):
        print("simulate: FFTSHARD, FFTSHARD_MKDATA and MPIEXEC are needed to calibrate", file=sys.stderr)
        return []
    local = os.path.join(a.srcdir, "sim", "platforms", "local.xml")
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for shape in a.calibration_sizes.split(","):
            data = os.path.join(tmp, "in.h5")
            subprocess.run([mpiexec, "-n", "2", mkdata, "-q", "-f", shape, data], check=True)
            for ranks in (2, 4, 8):
                sim_rows, why = smpirun(local, ranks, sim,
                                        ["--shape=" + shape, "--dtype=complex128",
                                         "--calibration=" + calibration], a.timeout)
                for s in STRATEGIES:
                    report = os.path.join(tmp, "r.json")
                    subprocess.run([mpiexec, "-n", str(ranks), fftshard, "-q", "-f", "--transpose=" + s,
                                    "--report=" + report, data, os.path.join(tmp, "out.h5")], check=True)
                    with open(report) as f:
                        ph = json.load(f)["phases"]
                    real_x, real_f = ph["exchange"]["max"], ph["fft"]["max"]
                    row = next((r for r in sim_rows or [] if r[0] == s), None)
                    if not row or not row[6]:
                        out.append((shape, ranks, s, real_x, real_f, None, None, why or "no result"))
                        continue
                    out.append((shape, ranks, s, real_x, real_f, float(row[6]), float(row[7]), ""))
    print("\nCalibration: measured here (slowest rank) against predicted on sim/platforms/local.xml")
    print("%-12s %5s %-9s %10s %10s %10s %10s %8s %8s" %
          ("shape", "ranks", "strategy", "real_x_s", "sim_x_s", "real_fx_s", "sim_fx_s", "err_x", "err_fx"))
    for shape, ranks, s, rx, rf, sx, sf, why in out:
        if sx is None:
            print("%-12s %5d %-9s %10.4f %10s  %s" % (shape, ranks, s, rx, "-", why))
            continue
        print("%-12s %5d %-9s %10.4f %10.4f %10.4f %10.4f %7.0f%% %7.0f%%" %
              (shape, ranks, s, rx, sx, rx + rf, sx + sf, 100 * (sx - rx) / rx,
               100 * (sx + sf - rx - rf) / (rx + rf)))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--srcdir", default=".")
    p.add_argument("--sizes", default="256x256x256,1024x1024x1024")
    p.add_argument("--dtype", default="complex128")
    p.add_argument("--ranks", default="64,512,4096")
    p.add_argument("--platforms", default="torus,fattree,dragonfly")
    p.add_argument("--decomps", default="slab,pencil")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=240, help="seconds per simulation")
    p.add_argument("--budget", type=float, default=480, help="seconds for the whole table")
    p.add_argument("--out", default="sim-results")
    p.add_argument("--calibration", help="rates file (default: measure with sim/calibrate)")
    p.add_argument("--calibration-sizes", default="128x128x128,256x256x256")
    p.add_argument("--no-calibrate", action="store_true", help="skip the real runs")
    p.add_argument("--no-table", action="store_true", help="only the calibration")
    a = p.parse_args()
    sim = os.environ.get("FFTSHARD_SIM", "sim/fftshard-sim")
    os.makedirs(a.out, exist_ok=True)
    calibration = a.calibration
    if not calibration:
        calibration = os.path.join(a.out, "calibration.txt")
        tool = os.environ.get("SIM_CALIBRATE", "sim/calibrate")
        with open(calibration, "w") as f:
            subprocess.run([tool], stdout=f, check=True)
    with open(calibration) as f:
        print("Rates (%s): %s" % (calibration, ", ".join(l.strip() for l in f if not l.startswith("#"))))
    if not a.no_table:
        rows = run_table(a, sim, calibration)
        print_table(rows)
        with open(os.path.join(a.out, "simulate.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            w.writeheader()
            w.writerows(rows)
        plot(rows, os.path.join(a.out, "simulate.png"))
        print("\nRandom order on the torus (the patent's claim):")
        for line in random_order_finding(rows) or ["no torus case with both strategies finished"]:
            print("  " + line)
        print("\nWritten: %s/simulate.csv, %s/simulate.png" % (a.out, a.out))
    if not a.no_calibrate:
        calibrate(a, sim, calibration)
    return 0


if __name__ == "__main__":
    sys.exit(main())
