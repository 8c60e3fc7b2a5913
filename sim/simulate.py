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
import math
import os
import signal
import subprocess
import sys
import tempfile
import time

STRATEGIES = ["alltoall", "random", "xorswap", "pairwise"]
# SimGrid settings (the same as fftshard --dry-run --platform's):
# - smpi/simulate-computation:no: the real copy loops add no time of their
#   own; the simulator models them (and the FFTs) by the calibrated rates;
# - network/crosstraffic:0: no reverse-direction acknowledgement flows
#   (half the flows for the solver; a torus or fat tree link is full duplex);
# - network/model:CM02: plain max-min sharing of the links' bandwidth, without
#   the TCP corrections of the default LV08 (latency factor 13, bandwidth
#   factor 0.97), which model Ethernet, not a torus or InfiniBand fabric;
# - smpi/alltoallv:bruck: MPI_Alltoallv as MPICH runs it (the "scattered"
#   algorithm, isend/irecv to rank+i in throttled batches) instead of SMPI's
#   default of posting every message at once, which no MPI library does for
#   large messages;
# - contexts/stack-size: small stacks for thousands of ranks.
SMPI_CFG = [
    "--cfg=smpi/simulate-computation:no",
    "--cfg=network/crosstraffic:0",
    "--cfg=network/model:CM02",
    "--cfg=smpi/alltoallv:bruck",
    "--cfg=contexts/stack-size:1024",
    "--log=root.thresh:critical",
]


def smpirun(platform, np_, sim, args, timeout):
    cmd = ["smpirun", "-no-privatize", "-platform", platform, "-np", str(np_), sim] + SMPI_CFG + args
    # Its own session: on timeout the whole group goes, smpirun's
    # simulation process (smpimain) with it.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None, "timeout"
    out = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
    rows = [r for r in csv.reader(l for l in out.stdout.splitlines() if l and not l.startswith("strategy,"))]
    if out.returncode != 0 and not rows:
        return None, "failed: " + (out.stderr.strip().splitlines() or ["?"])[-1]
    return rows, ""


def grid_of(ranks, decomp):
    """The grid fftshard's planner picks: P x 1 slabs, near-square pencils."""
    if decomp == "slab":
        return ranks, 1
    g = int(ranks ** 0.5)
    while ranks % g:
        g -= 1
    return g, ranks // g


def messages_of(ranks, decomp, shape):
    """Messages of the whole transform (one per peer, exchange and packet
    of the default 1 MiB, complex128), or None when the decomposition does
    not fit the shape: what the solver's time grows with."""
    n = [int(x) for x in shape.split("x")]
    g0, g1 = grid_of(ranks, decomp)
    if decomp == "slab" and ranks > min(n[0], n[1]):
        return None
    total = 16 * math.prod(n)
    msgs = 0
    for g in (g0, g1):
        if g > 1:
            msgs += ranks * (g - 1) * math.ceil(total / ranks / g / 2 ** 20)
    return msgs


def record(case, strategy, **kw):
    platform, kind, ranks, decomp, shape, dtype = case
    rec = {"platform": kind, "ranks": ranks, "decomp": decomp, "shape": shape, "dtype": dtype,
           "strategy": strategy, "grid": "", "exchange_s": "", "fft_s": "", "total_s": "",
           "messages": "", "note": "", "wall_s": 0}
    rec.update(kw)
    return rec


def simulate_case(case, sim, calibration, timeout):
    """One strategy on one platform: its own smpirun, so that one slow
    strategy costs only its own row."""
    platform, kind, ranks, decomp, shape, dtype, strategy = case
    start = time.time()
    rows, why = smpirun(platform, ranks, sim,
                        ["--shape=" + shape, "--dtype=" + dtype, "--decomp=" + decomp,
                         "--strategy=" + strategy, "--calibration=" + calibration], timeout)
    row = next((r for r in rows or [] if r[0] == strategy), None)
    rec = record(case[:6], strategy, note=why, wall_s=round(time.time() - start, 1))
    if row:
        rec.update(grid=row[2], exchange_s=row[6], fft_s=row[7], total_s=row[8],
                   messages=row[9], note=row[10] if len(row) > 10 else "")
    return [rec]


def run_table(a, sim, calibration):
    cases, rows = [], []
    for shape in a.sizes.split(","):
        for ranks in [int(r) for r in a.ranks.split(",")]:
            for kind in a.platforms.split(","):
                for decomp in a.decomps.split(","):
                    platform = os.path.join(a.srcdir, "sim", "platforms", "%s-%d.xml" % (kind, ranks))
                    case = (platform, kind, ranks, decomp, shape, a.dtype)
                    msgs = messages_of(ranks, decomp, shape)
                    for s in STRATEGIES:
                        if msgs is None:
                            rows.append(record(case, s, note="no slab: more ranks than planes"))
                        elif msgs > a.max_messages:
                            rows.append(record(case, s, note="not simulated: %d messages, over "
                                               "--max-messages %d" % (msgs, a.max_messages)))
                        else:
                            cases.append(case + (s,))
    # Cheap cases first, so the budget goes to as many of them as it can.
    order = {k: i for i, k in enumerate(a.platforms.split(","))}
    cases.sort(key=lambda c: (messages_of(c[2], c[3], c[4]), order[c[1]], c[4]))
    deadline = time.time() + a.budget
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futures = [pool.submit(run_or_skip, case, sim, calibration, a.timeout, deadline) for case in cases]
        for f in concurrent.futures.as_completed(futures):
            rows.extend(f.result())
    key = {k: i for i, k in enumerate(a.platforms.split(","))}
    rows.sort(key=lambda r: (r["shape"], r["ranks"], key[r["platform"]], r["decomp"],
                             STRATEGIES.index(r["strategy"])))
    return rows


def run_or_skip(case, sim, calibration, timeout, deadline):
    left = deadline - time.time()
    if left < 5:
        return [record(case[:6], case[6], note="skipped (budget)")]
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
    """The patent's claim on the torus: random order against the fixed
    orders (alltoall: MPICH's rank+i batches; pairwise: its fixed schedule)."""
    lines = []
    for r in rows:
        if r["platform"] != "torus" or r["strategy"] != "random" or not r["exchange_s"]:
            continue
        same = [b for b in rows if b["platform"] == "torus" and b["ranks"] == r["ranks"]
                and b["decomp"] == r["decomp"] and b["shape"] == r["shape"] and b["exchange_s"]]
        x = float(r["exchange_s"])
        parts = []
        for other in ("alltoall", "pairwise", "xorswap"):
            b = next((b for b in same if b["strategy"] == other), None)
            if b:
                ratio = float(b["exchange_s"]) / x
                parts.append("%s %.4f s (random %s by %.0f%%)" % (other, float(b["exchange_s"]),
                                                                "faster" if ratio > 1 else "slower",
                                                                abs(ratio - 1) * 100))
        lines.append("torus %s %d ranks %s: random %.4f s; %s" % (r["shape"], r["ranks"], r["decomp"], x,
                                                                 ", ".join(parts) or "nothing to compare"))
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


LOCAL_XML = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <!-- This machine, fitted by make simulate (sim/simulate.py): one host of 2 cores,
       every message through one shared link standing for MPICH's shared memory. -->
  <zone id="local" routing="Full">
    <host id="local" speed="1Gf" core="2"/>
    <link id="shm" bandwidth="%gBps" latency="%gs" sharing_policy="SHARED"/>
    <route src="local" dst="local"><link_ctn id="shm"/></route>
  </zone>
</platform>
"""


def real_runs(a, tmp):
    """Best of --repeats runs (by fft + exchange) of the real fftshard here."""
    fftshard, mkdata, mpiexec = (os.environ.get(k) for k in ("FFTSHARD", "FFTSHARD_MKDATA", "MPIEXEC"))
    if not (fftshard and mkdata and mpiexec):
        print("simulate: FFTSHARD, FFTSHARD_MKDATA and MPIEXEC are needed to calibrate", file=sys.stderr)
        return {}
    real = {}
    for shape in a.calibration_sizes.split(","):
        data = os.path.join(tmp, "in.h5")
        subprocess.run([mpiexec, "-n", "2", mkdata, "-q", "-f", shape, data], check=True)
        for ranks in (2, 4, 8):
            for s in STRATEGIES:
                best = None
                for _ in range(a.repeats):
                    report = os.path.join(tmp, "r.json")
                    subprocess.run([mpiexec, "-n", str(ranks), fftshard, "-q", "-f", "--transpose=" + s,
                                    "--report=" + report, data, os.path.join(tmp, "out.h5")], check=True)
                    with open(report) as f:
                        ph = json.load(f)["phases"]
                    run = (ph["exchange"]["max"], ph["fft"]["max"])
                    if best is None or sum(run) < sum(best):
                        best = run
                real[(shape, ranks, s)] = best
    return real


def simulate_local(a, sim, tmp, bw, lat, calibration, shapes):
    """{(shape, ranks, strategy): (exchange_s, fft_s)} on the local platform."""
    platform = os.path.join(tmp, "local-%g-%g.xml" % (bw, lat))
    with open(platform, "w") as f:
        f.write(LOCAL_XML % (bw, lat))
    out = {}
    for shape in shapes:
        for ranks in (2, 4, 8):
            rows, _ = smpirun(platform, ranks, sim, ["--shape=" + shape, "--dtype=complex128",
                                                     "--calibration=" + calibration], a.timeout)
            for r in rows or []:
                if r[6]:
                    out[(shape, ranks, r[0])] = (float(r[6]), float(r[7]))
    return out


def log_error(real, simmed, part):
    """Root mean square of log(predicted / measured) over the common cases."""
    import math
    errs = [math.log(part(simmed[k]) / part(v)) for k, v in real.items() if k in simmed]
    return math.sqrt(sum(e * e for e in errs) / len(errs)) if errs else float("inf")


def fit(a, sim, tmp, real, calibration):
    """The FFT rate from the 2-rank runs of the first calibration size (one
    rank per core: their FFT phase is the FFTs alone), then the shared
    link's bandwidth and latency from all that size's runs, by their
    fft + exchange time: with more ranks than cores MPICH's busy-polling
    ranks take turns on the cores, which shows as a per-message latency and
    smears time between the phases. Returns the fitted rates file and
    platform parameters."""
    import math
    subset_shape = a.calibration_sizes.split(",")[0]
    subset = {k: v for k, v in real.items() if k[0] == subset_shape}
    rates = {}
    with open(calibration) as f:
        for line in f:
            w = line.split()
            if len(w) == 2 and not w[0].startswith("#"):
                rates[w[0]] = float(w[1])
    # The modelled FFT time is inversely proportional to the rate.
    simmed = simulate_local(a, sim, tmp, 3.2e9, 5e-6, calibration, [subset_shape])
    ratios = [simmed[k][1] / v[1] for k, v in subset.items() if k in simmed and k[1] == 2 and v[1] > 0]
    if ratios:
        rates["fft_rate_double"] *= math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    fitted = os.path.join(a.out, "calibration-fitted.txt")
    with open(fitted, "w") as f:
        f.write("# fitted by make simulate to the real %s runs\n" % subset_shape)
        for k, v in rates.items():
            f.write("%s %.4g\n" % (k, v))
    best = None
    for bw in (0.5e9, 1e9, 2e9, 4e9):
        for lat in (5e-6, 100e-6, 500e-6, 2e-3):
            e = log_error(subset, simulate_local(a, sim, tmp, bw, lat, fitted, [subset_shape]),
                          lambda p: p[0] + p[1])
            if best is None or e < best[0]:
                best = (e, bw, lat)
    with open(os.path.join(a.out, "local-fitted.xml"), "w") as f:
        f.write(LOCAL_XML % (best[1], best[2]))
    return fitted, best[1], best[2], subset_shape


def calibrate(a, sim, calibration):
    """Real runs here; the model fitted to a subset; the error of all."""
    with tempfile.TemporaryDirectory() as tmp:
        real = real_runs(a, tmp)
        if not real:
            return []
        fitted, bw, lat, subset_shape = fit(a, sim, tmp, real, calibration)
        simmed = simulate_local(a, sim, tmp, bw, lat, fitted, a.calibration_sizes.split(","))
    with open(fitted) as f:
        rates = ", ".join(l.strip() for l in f if not l.startswith("#"))
    print("\nCalibration: real runs here (best of %d, slowest rank) against the simulator on this machine's"
          " platform, fitted to the %s runs: shared link %.3g GB/s, %.3g us; %s (%s, local-fitted.xml)"
          % (a.repeats, subset_shape, bw / 1e9, lat * 1e6, rates, fitted))
    print("load average: %s" % " ".join("%.1f" % l for l in os.getloadavg()))
    print("%-12s %5s %-9s %4s %10s %10s %10s %10s %8s %8s" %
          ("shape", "ranks", "strategy", "fit", "real_x_s", "sim_x_s", "real_fx_s", "sim_fx_s", "err_x",
           "err_fx"))
    out = []
    for (shape, ranks, s), (rx, rf) in sorted(real.items(), key=lambda kv: (kv[0][0], kv[0][1],
                                                                          STRATEGIES.index(kv[0][2]))):
        tag = "yes" if shape == subset_shape else "no"
        if (shape, ranks, s) not in simmed:
            print("%-12s %5d %-9s %4s %10.4f %10s  no simulation" % (shape, ranks, s, tag, rx, "-"))
            continue
        sx, sf = simmed[(shape, ranks, s)]
        ex, efx = 100 * (sx - rx) / rx, 100 * (sx + sf - rx - rf) / (rx + rf)
        out.append((shape, ranks, s, tag, ex, efx))
        print("%-12s %5d %-9s %4s %10.4f %10.4f %10.4f %10.4f %7.0f%% %7.0f%%" %
              (shape, ranks, s, tag, rx, sx, rx + rf, sx + sf, ex, efx))
    held = [abs(o[5]) for o in out if o[3] == "no"]
    if held:
        print("fft+exchange error of the cases not fitted: mean %.0f%%, worst %.0f%%; within 30%%: %d of %d"
              % (sum(held) / len(held), max(held), sum(h <= 30 for h in held), len(held)))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--srcdir", default=".")
    p.add_argument("--sizes", default="256x256x256,512x512x512")
    p.add_argument("--dtype", default="complex128")
    p.add_argument("--ranks", default="64,512,4096")
    p.add_argument("--platforms", default="torus,fattree,dragonfly")
    p.add_argument("--decomps", default="slab,pencil")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=200, help="seconds per simulation")
    p.add_argument("--max-messages", type=int, default=30000,
                   help="do not simulate a case of more messages than this (the solver's cost)")
    p.add_argument("--budget", type=float, default=270, help="seconds for the whole table")
    p.add_argument("--out", default="sim-results")
    p.add_argument("--calibration", help="rates file (default: measure with sim/calibrate)")
    p.add_argument("--calibration-sizes", default="128x128x128,256x256x256")
    p.add_argument("--repeats", type=int, default=3, help="real runs per case (the best counts)")
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
