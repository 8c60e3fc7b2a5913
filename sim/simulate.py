#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""make simulate: fftshard's exchange strategies on simulated machines.

Runs sim/fftshard-sim under smpirun for every platform (sim/platforms/),
rank count, decomposition and array size, prints the table strategy x
platform x ranks x decomposition with the predicted exchange and total
times, writes it as CSV and draws it as a PNG. Then (unless
--no-calibrate) runs the real fftshard on 2, 4 and 8 ranks here and the
simulator on the calibration platform (sim/platforms/local.xml) with the
same parameters, and prints the prediction error of each case.

Rank i runs on host node-i (a hostfile), so that a row of the process
grid is a block of neighbouring nodes, as a batch system places them. The
simulator runs with --groups=component: each exchange of a pencil
decomposition runs only in the groups of ranks (rows, then columns of the
grid) whose routes can share a link with rank 0's group, the others skip
it, and every stage starts on every rank together. The times are then
those of the simulated ranks, summed stage by stage (the note column says
so, the simulated column gives the ranks that ran each exchange); in
SimGrid's max-min model that is exact, which --exactness measures at 64
and 512 ranks against runs of every rank. A component of more than
--max-simulated ranks (the dragonfly's columns, whose global links every
column shares) is sampled: every k-th group runs, with the bandwidth of
each link it uses scaled to its share of the component's routes through
it; the note says so, and --exactness measures that error too.

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
import threading
import time

STRATEGIES = ["alltoall", "random", "xorswap", "pairwise"]
NICE = 0
HOSTFILE_LOCK = threading.Lock()
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
# - contexts/stack-size: small stacks for thousands of ranks;
# - smpi/gather and smpi/reduce: tree algorithms for the setup's and the
#   results' collectives, which SMPI's defaults run linearly at a cost to
#   the simulator of seconds per collective at 4096 ranks (no timed phase
#   uses them).
# - smpi/test:1e-7: an MPI_Test costs about 0.1 us. SMPI's default charges
#   1e-4 s times a back-off counter that every simulated rank shares, which
#   made pairwise's polling (its only user) up to 13 x slower than its
#   messages and coupled ranks that share no link.
SMPI_CFG = [
    "--cfg=smpi/test:1e-7",
    "--cfg=smpi/gather:ompi_binomial",
    "--cfg=smpi/reduce:binomial",
    "--cfg=smpi/simulate-computation:no",
    "--cfg=network/crosstraffic:0",
    "--cfg=network/model:CM02",
    "--cfg=smpi/alltoallv:bruck",
    "--cfg=contexts/stack-size:1024",
    "--log=root.thresh:critical",
]


def hostfile(np_, directory):
    """Rank i on node-i: the cluster platforms' hosts in their own order
    (smpirun's default, the host names sorted as strings, would put rank 2
    on node-10)."""
    path = os.path.join(directory, "hosts-%d.txt" % np_)
    with HOSTFILE_LOCK:
        if not os.path.exists(path):
            with open(path, "w") as f:
                f.writelines("node-%d\n" % i for i in range(np_))
    return path


def smpirun(platform, np_, sim, args, timeout, hosts=None):
    """The simulator's CSV rows and "" or why it failed; on a timeout the
    rows printed before it."""
    cmd = (["nice", "-n", str(NICE), "smpirun", "-no-privatize", "-platform", platform, "-np", str(np_)]
           + (["-hostfile", hosts] if hosts else []) + [sim] + SMPI_CFG + args)
    # Its own session: on timeout the whole group goes, smpirun's
    # simulation process (smpimain) with it.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    why = ""
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        why = "timeout"
    # The simulator's lines only: smpirun reports failures on stdout too.
    rows = [r for r in csv.reader(l for l in stdout.splitlines() if l and not l.startswith("strategy,"))
            if len(r) >= 11]
    if not why and not rows:
        lines = stderr.strip().splitlines() or ["?"]
        why = "failed: " + next((l.split("[root/CRITICAL] ")[1] for l in lines if "[root/CRITICAL] " in l),
                                lines[-1])
    return rows, why


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
           "messages": "", "simulated": "", "note": "", "wall_s": 0}
    rec.update(kw)
    return rec


def sim_args(shape, dtype, decomp, calibration, a):
    return ["--shape=" + shape, "--dtype=" + dtype, "--decomp=" + decomp, "--strategy=all",
            "--calibration=" + calibration, "--groups=component", "--max-simulated=%d" % a.max_simulated]


def simulate_case(case, sim, calibration, timeout, a):
    """Every strategy on one platform in one smpirun: they share the
    decomposition and the components, whose collectives over thousands of
    simulated ranks cost the simulator more than a strategy's exchanges.
    A timeout keeps the strategies done before it."""
    platform, kind, ranks, decomp, shape, dtype = case
    start = time.time()
    args = sim_args(shape, dtype, decomp, calibration, a)
    rows, why = smpirun(platform, ranks, sim, args, timeout, hostfile(ranks, a.out))
    retried = ""
    if not rows and ("Cannot saturate more a constraint" in why or "Segmentation fault" in why):
        # SimGrid's solver (MaxMin::do_solve) aborts or crashes on its own
        # rounding now and then; a coarser precision, which its message
        # suggests, gets through.
        retried = "; maxmin/precision 1e-4 (SimGrid's solver failed at 1e-5)"
        rows, why = smpirun(platform, ranks, sim, ["--cfg=maxmin/precision:1e-4"] + args,
                            max(5, timeout - (time.time() - start)), hostfile(ranks, a.out))
    wall = round(time.time() - start, 1)
    out = []
    for s in STRATEGIES:
        row = next((r for r in rows if r[0] == s), None)
        rec = record(case, s, note=why or "failed", wall_s=wall)
        if row:
            rec.update(grid=row[2], exchange_s=row[6], fft_s=row[7], total_s=row[8], messages=row[9],
                       note=(row[10] if len(row) > 10 else "") + retried,
                       simulated=row[11] if len(row) > 11 else "")
        out.append(rec)
    return out


def run_table(a, sim, calibration):
    cases, rows = [], []
    for shape in a.sizes.split(","):
        for ranks in [int(r) for r in a.ranks.split(",")]:
            for kind in a.platforms.split(","):
                for decomp in a.decomps.split(","):
                    platform = os.path.join(a.srcdir, "sim", "platforms", "%s-%d.xml" % (kind, ranks))
                    case = (platform, kind, ranks, decomp, shape, a.dtype)
                    msgs = messages_of(ranks, decomp, shape)
                    # A slab's one exchange is one group of every rank: no
                    # component makes it smaller.
                    if msgs is None:
                        rows += [record(case, s, note="no slab: more ranks than planes") for s in STRATEGIES]
                    elif decomp == "slab" and msgs > a.max_messages:
                        rows += [record(case, s, note="not simulated: %d messages in one all-to-all, over "
                                        "--max-messages %d" % (msgs, a.max_messages)) for s in STRATEGIES]
                    else:
                        cases.append(case)
    # The longest first (the most ranks, then messages), so that the two
    # jobs end together; the budget still leaves a row for every case.
    order = {k: i for i, k in enumerate(a.platforms.split(","))}
    cases.sort(key=lambda c: (-c[2], -messages_of(c[2], c[3], c[4]), order[c[1]], c[4]))
    deadline = time.time() + a.budget
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futures = [pool.submit(run_or_skip, case, sim, calibration, a, deadline) for case in cases]
        for f in concurrent.futures.as_completed(futures):
            rows.extend(f.result())
    key = {k: i for i, k in enumerate(a.platforms.split(","))}
    rows.sort(key=lambda r: (r["shape"], r["ranks"], key[r["platform"]], r["decomp"],
                             STRATEGIES.index(r["strategy"])))
    return rows


def run_or_skip(case, sim, calibration, a, deadline):
    left = deadline - time.time()
    if left < 5:
        return [record(case, s, note="skipped (budget)") for s in STRATEGIES]
    return simulate_case(case, sim, calibration, min(a.timeout, left), a)


def exactness(a, sim, calibration):
    """The component against runs of every rank, at 64 and 512 ranks: each
    pencil case with every rank unsynchronised (as fftshard runs), every
    rank with the stages synced (what the component must equal), the
    component whole, and where it has more than --max-simulated x P/4096
    ranks the component sampled as it would be at 4096 ranks."""
    print("\nExactness, %s pencils, total seconds: every rank (all), every rank with synced stages (synced),"
          " the component whole (comp) and sampled (sampled); differences against synced" % a.exactness_size)
    print("%-9s %5s %-9s %9s %9s %9s %9s %8s %8s %8s  %s" % (
        "platform", "ranks", "strategy", "all_s", "synced_s", "comp_s", "sampled_s", "syn/all", "comp",
        "sampled", "simulated (comp; sampled)"))
    base = [x for x in sim_args(a.exactness_size, a.dtype, "pencil", calibration, a)
            if not x.startswith(("--groups=", "--max-simulated="))]
    for ranks in (64, 512):
        limit = max(1, a.max_simulated * ranks // 4096)
        for kind in a.platforms.split(","):
            platform = os.path.join(a.srcdir, "sim", "platforms", "%s-%d.xml" % (kind, ranks))
            runs = {}
            for name, extra in (("all", ["--groups=all"]), ("synced", ["--groups=synced"]),
                                ("comp", ["--groups=component"]),
                                ("sampled", ["--groups=component", "--max-simulated=%d" % limit])):
                rows, _ = smpirun(platform, ranks, sim, base + extra, a.timeout, hostfile(ranks, a.out))
                runs[name] = {r[0]: r for r in rows if len(r) > 11 and r[8]}
            for s in STRATEGIES:
                t = {g: float(runs[g][s][8]) if s in runs[g] else None for g in runs}
                sampled = s in runs["sampled"] and "sampled" in runs["sampled"][s][10]
                if not sampled:
                    t["sampled"] = None

                def pct(x, y):
                    return "%+7.2f%%" % (100 * (x - y) / y) if x and y else "%8s" % "-"
                print("%-9s %5d %-9s %9s %9s %9s %9s %8s %8s %8s  %s; %s" % (
                    kind, ranks, s, fmt(t["all"] or ""), fmt(t["synced"] or ""), fmt(t["comp"] or ""),
                    fmt(t["sampled"] or ""), pct(t["synced"], t["all"]), pct(t["comp"], t["synced"]),
                    pct(t["sampled"], t["synced"]), runs["comp"][s][11] if s in runs["comp"] else "-",
                    runs["sampled"][s][11] if sampled else "not sampled"))


FIELDS = ["shape", "dtype", "platform", "ranks", "decomp", "grid", "strategy", "exchange_s",
          "fft_s", "total_s", "messages", "simulated", "note", "wall_s"]


def fmt(v):
    try:
        return "%.4f" % float(v)
    except ValueError:
        return "-"


def print_table(rows):
    """simulated: the ranks that ran each exchange ("64/256": the first
    exchange on 64 ranks, the second on 256)."""
    print("%-14s %-9s %5s %-6s %-6s %-9s %10s %10s %9s %-10s %s" %
          ("shape", "platform", "ranks", "decomp", "grid", "strategy", "exchange_s", "total_s",
           "messages", "simulated", "note"))
    for r in rows:
        print("%-14s %-9s %5d %-6s %-6s %-9s %10s %10s %9s %-10s %s" %
              (r["shape"], r["platform"], r["ranks"], r["decomp"], r["grid"] or "-", r["strategy"],
               fmt(r["exchange_s"]), fmt(r["total_s"]), r["messages"] or "-", r["simulated"] or "-",
               r["note"]))


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
  <!-- This machine for %(ranks)d ranks, fitted by make simulate (sim/simulate.py): %(cores)d cores
       that the ranks computing at a time share (with more ranks than cores a waiting rank gives
       its core up), every message through one shared link standing for MPICH's shared memory;
       with more ranks than cores a message waits for its receiver's turn on a core: the latency
       grows by %(lat_turn)g s per rank past one per core. -->
  <zone id="local" routing="Full">
    <host id="local" speed="1Gf" core="%(cores)d"/>
    <link id="shm" bandwidth="%(bw)gBps" latency="%(lat)gs" sharing_policy="SHARED"/>
    <route src="local" dst="local"><link_ctn id="shm"/></route>
  </zone>
</platform>
"""


def local_platform(ranks, cores, bw, lat0, lat_turn):
    over = max(0.0, ranks / cores - 1)
    return LOCAL_XML % {"ranks": ranks, "cores": cores, "bw": bw,
                        "lat": lat0 + lat_turn * over, "lat_turn": lat_turn}


QUIET_WAITED = [0.0]


def quiet(a):
    """Waits for the 1-minute load to fall below --max-load, so that the
    real runs time fftshard, not its neighbours (at most --quiet-wait
    seconds over all the runs, so that make simulate still ends); returns
    the load the run starts at."""
    while os.getloadavg()[0] >= a.max_load and QUIET_WAITED[0] < a.quiet_wait:
        time.sleep(2)
        QUIET_WAITED[0] += 2
    return os.getloadavg()[0]


def real_runs(a, tmp):
    """Best of --repeats runs (by fft + exchange) of the real fftshard here,
    each taken when the machine is quiet. Returns the runs and the highest
    1-minute load any started at."""
    fftshard, mkdata, mpiexec = (os.environ.get(k) for k in ("FFTSHARD", "FFTSHARD_MKDATA", "MPIEXEC"))
    if not (fftshard and mkdata and mpiexec):
        print("simulate: FFTSHARD, FFTSHARD_MKDATA and MPIEXEC are needed to calibrate", file=sys.stderr)
        return {}, 0
    real, worst_load = {}, 0.0
    data = {}
    for shape in a.calibration_sizes.split(","):
        data[shape] = os.path.join(tmp, "in-%s.h5" % shape)
        subprocess.run([mpiexec, "-n", "2", mkdata, "-q", "-f", shape, data[shape]], check=True)
    # The repeats in rounds over every case, so that a passing disturbance
    # of the machine spoils one run of a case, not all of them.
    for _ in range(a.repeats):
        for shape in a.calibration_sizes.split(","):
            for ranks in (2, 4, 8):
                for s in STRATEGIES:
                    worst_load = max(worst_load, quiet(a))
                    report = os.path.join(tmp, "r.json")
                    subprocess.run([mpiexec, "-n", str(ranks), fftshard, "-q", "-f", "--transpose=" + s,
                                    "--report=" + report, data[shape], os.path.join(tmp, "out.h5")],
                                   check=True)
                    with open(report) as f:
                        ph = json.load(f)["phases"]
                    run = (ph["exchange"]["max"], ph["fft"]["max"])
                    best = real.get((shape, ranks, s))
                    if best is None or sum(run) < sum(best):
                        real[(shape, ranks, s)] = run
    return real, worst_load


def simulate_local(a, sim, tmp, params, calibration, shapes, rank_counts=(2, 4, 8), strategy="all"):
    """{(shape, ranks, strategy): (exchange_s, fft_s)} on this machine's
    platform of params (bandwidth, latency, latency per turn)."""
    out = {}
    cores = os.cpu_count() or 1
    wake = params[3] if len(params) > 3 else 0
    params = params[:3]
    for ranks in rank_counts:
        platform = os.path.join(tmp, "local-%d-%g-%g-%g.xml" % ((ranks,) + params))
        with open(platform, "w") as f:
            f.write(local_platform(ranks, cores, *params))
        rates = calibration
        over = max(0.0, ranks / cores - 1)
        if wake and over:
            rates = os.path.join(tmp, "rates-wake-%d-%g.txt" % (ranks, wake))
            with open(calibration) as f, open(rates, "w") as g:
                g.write(f.read() + "wake_s %g\n" % (wake * over))
        for shape in shapes:
            rows, _ = smpirun(platform, ranks, sim, ["--shape=" + shape, "--dtype=complex128",
                                                     "--calibration=" + rates,
                                                     "--strategy=" + strategy], a.timeout)
            for r in rows or []:
                if r[6]:
                    out[(shape, ranks, r[0])] = (float(r[6]), float(r[7]))
    return out


def log_error(real, simmed, part):
    """Root mean square of log(predicted / measured) over the common cases."""
    errs = [math.log(part(simmed[k]) / part(v)) for k, v in real.items() if k in simmed]
    return math.sqrt(sum(e * e for e in errs) / len(errs)) if errs else float("inf")


def write_rates(path, rates, shape):
    with open(path, "w") as f:
        f.write("# fitted by make simulate to the real %s runs\n" % shape)
        for k, v in rates.items():
            f.write("%s %.4g\n" % (k, v))


def fit(a, sim, tmp, real, calibration):
    """Fitted on the runs of the first calibration size only (the others
    are held out), in steps, each by the runs it alone explains:
    - the FFT rate from the FFT phase of the 2-rank runs (one rank per
      core) of the strategies whose FFTs are the stages' (not pairwise);
    - the block FFT factor from pairwise's 2-rank FFT phase, which holds
      the FFTs it runs on blocks while its messages fly: the simulator at
      two factors splits that phase into the part the factor scales and
      the rest, and the factor is the one that gives the measured phase;
    - the receivers' copies (sim/sim_shm.h: off, or a multiple of the copy
      rate) with the shared link's bandwidth and latency, from the 2-rank
      runs; then, from the 4- and 8-rank runs, the message latency per
      rank past one per core (see LOCAL_XML) and the wake-up delay of a
      wait that blocked (sim_shm.h), per rank past one per core;
    the last three by the runs' fft + exchange time.
    Returns the fitted rates file, the platform parameters (bandwidth,
    latency, latency per turn, wake-up per turn) and the size."""
    subset_shape = a.calibration_sizes.split(",")[0]
    subset = {k: v for k, v in real.items() if k[0] == subset_shape}
    rates = {}
    with open(calibration) as f:
        for line in f:
            w = line.split()
            if len(w) == 2 and not w[0].startswith("#"):
                rates[w[0]] = float(w[1])
    rates["block_fft_factor"] = 1.0
    fitted = os.path.join(a.out, "calibration-fitted.txt")
    write_rates(fitted, rates, subset_shape)
    plain = (3.2e9, 5e-6, 0)
    # The modelled FFT time is inversely proportional to the rate.
    # The FFT phase holds copies (twiddles, transposes) besides the FFTs:
    # a few rounds bring the rate to the one that gives the measured phase.
    for _ in range(3):
        simmed = simulate_local(a, sim, tmp, plain, fitted, [subset_shape], (2,))
        ratios = [simmed[k][1] / v[1] for k, v in subset.items()
                  if k in simmed and k[1] == 2 and k[2] != "pairwise" and v[1] > 0]
        if ratios:
            rates["fft_rate_double"] *= math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        write_rates(fitted, rates, subset_shape)
    measured = subset.get((subset_shape, 2, "pairwise"))
    if measured:
        key = (subset_shape, 2, "pairwise")
        whole = simulate_local(a, sim, tmp, plain, fitted, [subset_shape], (2,), "pairwise").get(key)
        rates["block_fft_factor"] = 0.5
        write_rates(fitted, rates, subset_shape)
        half = simulate_local(a, sim, tmp, plain, fitted, [subset_shape], (2,), "pairwise").get(key)
        rates["block_fft_factor"] = 1.0
        if whole and half and half[1] > whole[1]:
            blocks = half[1] - whole[1]          # the block FFTs at factor 1
            rest = whole[1] - blocks
            if measured[1] > rest:
                rates["block_fft_factor"] = min(4.0, max(0.25, blocks / (measured[1] - rest)))
        write_rates(fitted, rates, subset_shape)

    def error(params, rank_counts, rates_file):
        runs = {k: v for k, v in subset.items() if k[1] in rank_counts}
        return log_error(runs, simulate_local(a, sim, tmp, params, rates_file, [subset_shape], rank_counts),
                         lambda p: p[0] + p[1])
    # The receivers' copies (sim/sim_shm.h) as a multiple of the copy rate,
    # with the link's bandwidth and latency, by the 2-rank runs.
    candidates = []
    for factor in (0, 0.5, 1, 2):
        trial = dict(rates, receive_copy_rate=factor * rates["copy_rate"])
        path = os.path.join(tmp, "rates-%g.txt" % factor)
        write_rates(path, trial, subset_shape)
        for bw in (2e9, 4e9, 8e9, 16e9, 32e9, 64e9):
            for lat in (2e-6, 10e-6, 50e-6, 200e-6):
                candidates.append((error((bw, lat, 0), (2,), path), (bw, lat, 0), trial))
    _, (bw, lat, _), rates = min(candidates, key=lambda c: c[0])
    write_rates(fitted, rates, subset_shape)
    best = min((error((bw, lat, turn, wake), (4, 8), fitted), (bw, lat, turn, wake))
               for turn in (0, 30e-6, 100e-6, 300e-6, 1e-3)
               for wake in (0, 30e-6, 100e-6, 300e-6, 1e-3))
    cores = os.cpu_count() or 1
    with open(os.path.join(a.out, "local-fitted.xml"), "w") as f:
        f.write(local_platform(8, cores, *best[1][:3]))
    return fitted, best[1], subset_shape


def calibrate(a, sim, calibration):
    """Real runs here; the model fitted to one size; the error of all."""
    with tempfile.TemporaryDirectory() as tmp:
        if a.real_runs and os.path.exists(a.real_runs):
            with open(a.real_runs) as f:
                saved = json.load(f)
            real = {tuple(k.split(",")[:1] + [int(k.split(",")[1]), k.split(",")[2]]): tuple(v)
                    for k, v in saved["runs"].items()}
            load = saved["load"]
            sizes = a.calibration_sizes.split(",")
            real = {k: v for k, v in real.items() if k[0] in sizes}
            print("\nReal runs read from %s" % a.real_runs)
        else:
            real, load = real_runs(a, tmp)
            if real and a.real_runs:
                with open(a.real_runs, "w") as f:
                    json.dump({"load": load, "runs": {"%s,%d,%s" % k: v for k, v in real.items()}}, f)
        if not real:
            return []
        fitted, params, subset_shape = fit(a, sim, tmp, real, calibration)
        simmed = simulate_local(a, sim, tmp, params, fitted, a.calibration_sizes.split(","))
    with open(fitted) as f:
        rates = ", ".join(l.strip() for l in f if not l.startswith("#"))
    print("\nCalibration: real runs here (best of %d, slowest rank) against the simulator on this machine's"
          " platform, fitted to the %s runs: shared link %.3g GB/s, %.3g us, %.3g us more per rank past one"
          " per core, a wait that blocked %.3g us more per rank past one per core; %s (%s, local-fitted.xml)"
          % (a.repeats, subset_shape, params[0] / 1e9, params[1] * 1e6, params[2] * 1e6, params[3] * 1e6,
             rates, fitted))
    print("load average: %s now; the real runs started at a 1-minute load of at most %.1f (limit %.1f)"
          % (" ".join("%.1f" % l for l in os.getloadavg()), load, a.max_load))
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
    p.add_argument("--timeout", type=float, default=300, help="seconds per simulation")
    p.add_argument("--max-messages", type=int, default=30000,
                   help="do not simulate a case of more messages than this (the solver's cost)")
    p.add_argument("--budget", type=float, default=400, help="seconds for the whole table")
    p.add_argument("--max-simulated", type=int, default=256,
                   help="sample a component of more ranks than this (see above)")
    p.add_argument("--nice", type=int, default=0, help="run the simulations at this niceness")
    p.add_argument("--out", default="sim-results")
    p.add_argument("--calibration", help="rates file (default: measure with sim/calibrate)")
    p.add_argument("--calibration-sizes", default="128x128x128,256x256x256")
    p.add_argument("--repeats", type=int, default=3, help="real runs per case (the best counts)")
    p.add_argument("--no-calibrate", action="store_true", help="skip the real runs")
    p.add_argument("--real-runs", help="the real runs' times: read from this JSON file when it exists, "
                   "else measured and written there (fit again without running them)")
    p.add_argument("--max-load", type=float, default=2.0,
                   help="take each real run when the 1-minute load is below this")
    p.add_argument("--quiet-wait", type=float, default=60,
                   help="seconds to wait for that over all the real runs (then run anyway; the load is printed)")
    p.add_argument("--no-table", action="store_true", help="only the calibration")
    p.add_argument("--exactness", action="store_true",
                   help="compare the component with runs of every rank at 64 and 512 ranks (minutes)")
    p.add_argument("--exactness-size", default="256x256x256")
    a = p.parse_args()
    global NICE
    NICE = a.nice
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
    if a.exactness:
        exactness(a, sim, calibration)
    if not a.no_calibrate:
        calibrate(a, sim, calibration)
    return 0


if __name__ == "__main__":
    sys.exit(main())
