# SPDX-License-Identifier: GPL-3.0-or-later
"""The out-of-core rows of `make bench` (bench.py --ooc-size, --only-ooc,
--no-ooc): one complex128 array of --ooc-size (default 384x320x256, 0.5
GB) transformed by

  dd          the two passes' I/O alone: `dd bs=16M conv=fsync` of INPUT
              into a file, then of that file into another (what the passes
              read and write, on the disk: the lower bound "x dd" is over);
  fftshard --out-of-core, each pass's seconds from its report;
  fftshard in memory (the default command, when it decides in memory);
  dask        dask.array.fft on an h5py dataset: the trailing axes on
              slabs of planes, rechunked to pencils, the leading axis,
              da.to_hdf5 (the threaded scheduler);
  h5py script the two passes a user writes with numpy: pass 1 the trailing
              axes' FFT of slabs of planes into a scratch HDF5 dataset,
              pass 2 the leading axis on pencils into OUTPUT;

in turns whose order rotates, --repeats turns, medians (the machine may be
shared). Before every timed command the page cache is written back and,
where this process may (root), dropped: the header says whether it was.
--ooc-cgroup=LIMIT runs every timed command in a memory cgroup of LIMIT (v1,
which counts the page cache; root), and gives each one's peak usage.
--ooc-disk=WRITE[:READ] throttles the disk that holds the work directory to
WRITE (and READ) bytes per second (suffixes K, M, G: powers of 1000) while
the rows run, through the root blkio cgroup (v1; root): every process's I/O
to that disk, the kernel's write-back too, so that a fast disk moves data as
a slower one would (the job bound by the disk, not the cores); the limits it
found are put back after.
--ooc-args adds options to the out-of-core command (e.g. "--mem-per-rank=64M":
smaller blocks, more of them); --ooc-baseline=EXE adds the rows of a second fftshard binary (the same
command, taken in the same turns), for a before/after within one run.
The dask and h5py results are compared with fftshard's on two planes."""

import json
import os
import subprocess
import time

# argv: input, output, scratch, planes per slab (pass 1), columns per
# pencil block (pass 2)
H5PY_TWO_PASS = r'''
import sys, h5py, numpy as np
inp, out, scratch, planes, cols = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
with h5py.File(inp, "r") as f, h5py.File(scratch, "w") as s:
    a = f["data"]
    n0, n1, n2 = a.shape
    t = s.create_dataset("data", a.shape, np.complex128)
    for i in range(0, n0, planes):
        t[i:i + planes] = np.fft.fftn(a[i:i + planes], axes=(1, 2))
with h5py.File(scratch, "r") as s, h5py.File(out, "w") as g:
    t = s["data"]
    b = g.create_dataset("data", t.shape, np.complex128)
    for j in range(0, n1, cols):
        b[:, j:j + cols] = np.fft.fft(t[:, j:j + cols], axis=0)
'''

# argv: input, output, planes per chunk, columns per chunk
DASK_SCRIPT = r'''
import sys, h5py, dask.array as da
inp, out, planes, cols = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
with h5py.File(inp, "r") as f:
    a = da.from_array(f["data"], chunks=(planes, -1, -1))
    b = da.fft.fft2(a, axes=(1, 2)).rechunk((-1, cols, -1))
    da.to_hdf5(out, "/data", da.fft.fft(b, axis=0))
'''

# argv: fftshard's OUTPUT, another result: the largest difference on two
# planes over the largest magnitude there
COMPARE = r'''
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f, h5py.File(sys.argv[2], "r") as g:
    a, b = f["data"][:2], g["data"][:2]
print(np.max(np.abs(a - b)) / np.max(np.abs(a)))
'''


def drop_caches():
    """Write back the page cache and drop it where allowed; whether it was."""
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def _median(values):
    return sorted(values)[len(values) // 2]


class Cgroup:
    """--ooc-cgroup: a memory cgroup (v1, which counts the page cache) that
    every timed command runs in, its peak read after each."""

    ROOT = "/sys/fs/cgroup/memory"

    def __init__(self, limit):
        self.path, self.peak = None, None
        if limit:
            self.path = os.path.join(self.ROOT, "fftshard-bench-%d" % os.getpid())
            os.mkdir(self.path)
            self._write("memory.limit_in_bytes", limit)

    def _write(self, name, value):
        with open(os.path.join(self.path, name), "w") as f:
            f.write(str(value) + "\n")

    def wrap(self, cmd):
        if not self.path:
            return cmd
        self._write("memory.max_usage_in_bytes", 0)
        return ["sh", "-c", 'echo $$ >"$0/cgroup.procs" && exec "$@"', self.path] + cmd

    def peak_mib(self):
        if not self.path:
            return None
        with open(os.path.join(self.path, "memory.max_usage_in_bytes")) as f:
            return int(f.read()) / 1048576.0

    def remove(self):
        if self.path:
            os.rmdir(self.path)


CGROUP = Cgroup(None)


def _rate(text):
    """'110M' -> 110000000 (bytes per second, powers of 1000)."""
    scale = {"K": 10**3, "M": 10**6, "G": 10**9}
    t = text.strip().upper()
    return int(float(t[:-1]) * scale[t[-1]]) if t[-1:] in scale else int(t)


class DiskThrottle:
    """--ooc-disk: the work directory's disk throttled for every process
    (blkio v1 at the root, which the kernel's write-back obeys too) by
    apply(), the limits found there put back by restore() (each saved
    before it is set: restore() puts back what was set even when a later one
    failed)."""

    ROOT = "/sys/fs/cgroup/blkio"
    FILES = ("blkio.throttle.write_bps_device", "blkio.throttle.read_bps_device")

    def __init__(self):
        self.saved, self.text = {}, None

    def apply(self, spec, work):
        if not spec:
            return
        rates = [_rate(r) for r in spec.split(":")]
        st = os.stat(work)
        dev = "%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev))
        sysdev = "/sys/dev/block/" + dev
        if not os.path.exists(sysdev):
            raise SystemExit("--ooc-disk: %s is on no block device (%s)" % (work, dev))
        if os.path.exists(os.path.join(sysdev, "partition")):  # the whole disk's numbers
            with open(os.path.join(os.path.realpath(sysdev), "..", "dev")) as f:
                dev = f.read().strip()
        for name, rate in zip(self.FILES, rates):
            path = os.path.join(self.ROOT, name)
            with open(path) as f:
                self.saved[path] = [line for line in f.read().splitlines()
                                    if line.split()[0] == dev] or [dev + " 0"]
            with open(path, "w") as f:
                f.write("%s %d\n" % (dev, rate))
        self.text = "the disk %s throttled to %s (blkio, every process)" % (
            dev, " and ".join("%s %.0f MB/s" % (w, r / 1e6)
                              for w, r in zip(("writes", "reads"), rates)))

    def restore(self):
        for path, lines in self.saved.items():
            for line in lines:
                with open(path, "w") as f:
                    f.write(line + "\n")
        self.saved = {}


def _timed(cmd, environ=None):
    t0 = time.perf_counter()
    p = subprocess.run(CGROUP.wrap(cmd), capture_output=True, text=True, env=environ)
    if p.returncode != 0:
        how = ("killed by signal %d" % -p.returncode if p.returncode < 0
               else "exit status %d" % p.returncode)
        last = (p.stderr.strip().splitlines() or [""])[-1]
        raise RuntimeError("%s %s" % (how, last[:60]))
    return time.perf_counter() - t0


def _remove(*paths):
    for path in paths:
        if os.path.exists(path):
            os.remove(path)


class Case:
    """A command timed in turns: its walls (and passes' seconds)."""

    def __init__(self, name, run):
        self.name, self.run, self.walls, self.passes, self.note = name, run, [], [], ""
        self.peaks = []


def _dd_case(inp, work):
    a, b = os.path.join(work, "dd-1"), os.path.join(work, "dd-2")

    def run():
        _remove(a, b)
        drop_caches()
        t1 = _timed(["dd", "if=" + inp, "of=" + a, "bs=16M", "conv=fsync", "status=none"])
        peak = CGROUP.peak_mib()
        drop_caches()  # the second reads what the first wrote, from the disk
        t2 = _timed(["dd", "if=" + a, "of=" + b, "bs=16M", "conv=fsync", "status=none"])
        CGROUP.peak = max(peak, CGROUP.peak_mib()) if peak is not None else None
        _remove(a, b)
        return t1 + t2, [t1, t2]
    return Case("dd twice (bs=16M conv=fsync)", run)


def _fftshard_case(name, mpiexec, exe, ranks, inp, out, extra):
    report = out + ".json"

    def run():
        _remove(out, report)
        drop_caches()
        t = _timed([mpiexec, "-n", str(ranks), exe, "--force", "--quiet", "--report=" + report]
                   + extra + [inp, out])
        with open(report) as f:
            r = json.load(f)
        ooc = r.get("out_of_core", {})
        return t, [p["seconds"] for p in ooc.get("passes", [])]
    return Case(name, run)


def _script_case(name, script, argv, out, cleanup, environ):
    def run():
        _remove(out, *cleanup)
        drop_caches()
        t = _timed(["/usr/bin/python3", "-c", script] + argv, environ)
        _remove(*cleanup)
        return t, []
    return Case(name, run)


def _in_memory(mpiexec, exe, ranks, inp, out):
    """Whether the default command runs this input in memory (its dry run, in
    the cgroup if any)."""
    p = subprocess.run(CGROUP.wrap([mpiexec, "-n", str(ranks), exe, "--dry-run", "--force", inp,
                                    out]), capture_output=True, text=True)
    return p.returncode == 0 and "out of core:" not in p.stdout


def _compare(ref, other, environ):
    p = subprocess.run(["/usr/bin/python3", "-c", COMPARE, ref, other], capture_output=True,
                       text=True, env=environ)
    return "relative difference %s on two planes" % p.stdout.strip() if p.returncode == 0 \
        else "not compared: " + p.stderr.strip().splitlines()[-1]


def _have(module, environ):
    return subprocess.run(["/usr/bin/python3", "-c", "import " + module],
                          capture_output=True, env=environ).returncode == 0


def ooc_rows(args, mpiexec, exe, mkdata, work, environ):
    """The out-of-core section (see the module's text)."""
    global CGROUP
    CGROUP = Cgroup(args.ooc_cgroup)
    disk = DiskThrottle()
    try:
        disk.apply(args.ooc_disk, work)
        _ooc_rows(args, mpiexec, exe, mkdata, work, environ, disk.text)
    finally:
        disk.restore()
        CGROUP.remove()
        CGROUP = Cgroup(None)


def _ooc_rows(args, mpiexec, exe, mkdata, work, environ, throttled):
    size = args.ooc_size
    n = [int(s) for s in size.split("x")]
    gb = n[0] * n[1] * n[2] * 16 / 1e9
    ranks = int(args.ranks.split(",")[0])
    inp = os.path.join(work, "ooc-in-%s.h5" % size)
    if not os.path.exists(inp):
        subprocess.run([mpiexec, "-n", "2", mkdata, "-q", "-f", size, inp], check=True)
    out = os.path.join(work, "ooc-out.h5")
    # blocks of about 64 MB for the scripts, as fftshard's
    planes = max(1, int(64e6 // (n[1] * n[2] * 16)))
    cols = max(1, int(64e6 // (n[0] * n[2] * 16)))
    opts = ["--out-of-core"] + (args.ooc_args.split() if args.ooc_args else [])
    cases = [_dd_case(inp, work),
             _fftshard_case("fftshard " + " ".join(opts), mpiexec, exe, ranks, inp, out, opts)]
    if args.ooc_baseline:
        cases.append(_fftshard_case("baseline " + " ".join(opts), mpiexec, args.ooc_baseline,
                                    ranks, inp, out, opts))
    if _in_memory(mpiexec, exe, ranks, inp, out):
        cases.append(_fftshard_case("fftshard in memory", mpiexec, exe, ranks, inp, out, []))
    results = {}
    if _have("h5py", environ):
        res = os.path.join(work, "ooc-h5py.h5")
        scratch = os.path.join(work, "ooc-h5py-scratch.h5")
        cases.append(_script_case("h5py two-pass numpy script", H5PY_TWO_PASS,
                                  [inp, res, scratch, str(planes), str(cols)], res, [scratch],
                                  environ))
        results[cases[-1].name] = res
    if _have("dask.array, h5py", environ):
        res = os.path.join(work, "ooc-dask.h5")
        cases.append(_script_case("dask.array.fft (rechunked)", DASK_SCRIPT,
                                  [inp, res, str(planes), str(cols)], res, [], environ))
        results[cases[-1].name] = res
    else:
        print("# dask not run: /usr/bin/python3 cannot import dask.array "
              "(apt-get install python3-dask)")
    dropped = drop_caches()
    for turn in range(args.repeats):
        k = turn % len(cases)
        for c in cases[k:] + cases[:k]:
            CGROUP.peak = None
            try:
                wall, passes = c.run()
            except RuntimeError as e:
                c.note = str(e).splitlines()[0][:80]
                continue
            c.walls.append(wall)
            c.passes.append(passes)
            peak = CGROUP.peak if CGROUP.peak is not None else CGROUP.peak_mib()
            if peak is not None:
                c.peaks.append(peak)
    print("# out of core, complex128 %s (%.2f GB), %d ranks; medians of %d turns in rotating "
          "order; page cache %s before each command; pass N s: dd's two copies, "
          "fftshard's passes from its report" % (
              size, gb, ranks, args.repeats,
              "dropped" if dropped else "written back only (not dropped: not root)"))
    print("# GB/s: the two passes' bytes (read and written twice, %.2f GB) over the wall time"
          % (4 * gb))
    if throttled:
        print("# " + throttled)
    if CGROUP.path:
        print("# every command in a memory cgroup of %s (v1: it counts the page cache); "
              "peak MiB: its largest usage" % args.ooc_cgroup)
    print("%-44s %8s %7s %8s %8s %7s %8s" % ("command", "wall s", "x dd", "pass 1 s", "pass 2 s",
                                             "GB/s", "peak MiB"))
    dd = _median(cases[0].walls) if cases[0].walls else None
    for c in cases:
        if not c.walls:
            print("%-44s not run: %s" % (c.name, c.note))
            continue
        w = _median(c.walls)
        p = [_median([ps[i] for ps in c.passes]) if all(len(ps) > i for ps in c.passes) else None
             for i in range(2)]
        note = ""
        if c.name in results and os.path.exists(results[c.name]):
            cases[1].run()  # fftshard's OUTPUT again, for the comparison
            note = "   (" + _compare(out, results[c.name], environ) + ")"
        print("%-44s %8.3f %7s %8s %8s %7.3f %8s%s" % (
            c.name, w, "%.2f" % (w / dd) if dd else "-",
            "%.3f" % p[0] if p[0] is not None else "-",
            "%.3f" % p[1] if p[1] is not None else "-", 4 * gb / w,
            "%.0f" % max(c.peaks) if c.peaks else "-", note), flush=True)
    for res in results.values():
        _remove(res)
    _remove(out, out + ".json")
    print()
