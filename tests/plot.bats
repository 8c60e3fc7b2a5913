#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# share/fftshard-plot: a valid PNG from a /power_spectrum group (made here
# with h5py) and from real --report files of one and of several inputs, and
# one-line errors; the data drawn (read from the matplotlib figure) against
# the HDF5 data and the report: a series of spectra coloured by time, a
# spectrum per slice, E(k) summing to 1/2 <|u|^2>, every phase of a report.
# Run with the oracle's Python, the one configure found numpy and h5py for;
# skipped when it has no matplotlib.

load helpers

FFTSHARD_PLOT=${FFTSHARD_PLOT:-$srcdir/share/fftshard-plot}

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    python_serial -c 'import matplotlib' 2>/dev/null ||
        skip "$PYTHON_ORACLE has no matplotlib (install python3-matplotlib)"
}

plot() {
    python_serial "$FFTSHARD_PLOT" "$@"
}

# assert_png FILE: the PNG signature, then an IHDR chunk of 13 bytes with a
# picture of sensible size.
assert_png() {
    run python_serial - "$1" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit("no PNG signature")
length, kind = struct.unpack(">I4s", data[8:16])
width, height = struct.unpack(">II", data[16:24])
if length != 13 or kind != b"IHDR":
    sys.exit("no IHDR chunk first")
if not (200 <= width <= 4000 and 200 <= height <= 4000):
    sys.exit("picture of %dx%d" % (width, height))
print("%dx%d" % (width, height))
PY
    assert_success
}

# figure OUT.json ARGS...: run fftshard-plot ARGS with the data of its picture
# (each axes' labels, lines, bars and maps) written to OUT.json too, read
# from the matplotlib figure it saves.
figure() {
    local out=$1
    shift
    python_serial - "$FFTSHARD_PLOT" "$out" "$@" <<'PY'
import importlib.machinery, importlib.util, json, sys
import matplotlib.colors, matplotlib.collections
import numpy as np
tool, out, args = sys.argv[1], sys.argv[2], sys.argv[3:]
loader = importlib.machinery.SourceFileLoader("fftshard_plot", tool)
plot = importlib.util.module_from_spec(importlib.util.spec_from_loader("fftshard_plot", loader))
loader.exec_module(plot)
saved = plot.save
floats = lambda a: [float(x) for x in np.ma.filled(np.ma.asarray(a, dtype=float), np.nan).ravel()]
def save(fig, plt, path):
    axes = [{"xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
             "lines": [{"label": l.get_label(), "x": floats(l.get_xdata()), "y": floats(l.get_ydata()),
                        "color": list(matplotlib.colors.to_rgba(l.get_color()))}
                       for l in ax.get_lines()],
             "bars": [{"label": c.get_label(), "heights": [p.get_height() for p in c.patches],
                       "bottoms": [p.get_y() for p in c.patches]} for c in ax.containers],
             "maps": [floats(c.get_array()) for c in ax.collections
                      if isinstance(c, matplotlib.collections.QuadMesh)]} for ax in fig.axes]
    with open(out, "w") as f:
        json.dump(axes, f)
    saved(fig, plt, path)
plot.save = save
sys.exit(plot.main(args))
PY
}

# bats test_tags=quick
@test "spectrum: a PNG from /power_spectrum with empty shells and /cross_spectrum" {
    python_serial - <<'PY'
import h5py, numpy as np
k = np.arange(32) * 0.25
power = 2.0 * np.where(k > 0, k, 1) ** -2
modes = np.rint(4 * np.pi * np.arange(32) ** 2).astype(np.int64)
modes[0] = 1
k[7] = power[7] = np.nan   # a shell without modes
modes[7] = 0
with h5py.File("out.h5", "w") as f:
    f["data"] = np.zeros((4, 4))
    for name, values in (("power_spectrum", power), ("cross_spectrum", power * np.cos(3 * k))):
        g = f.create_group(name)
        g["k"], g["power"], g["modes"] = k, values, modes
        g.attrs["convention"] = "P(k) = <|X(k)|^2> V / N^2"
PY
    run --separate-stderr plot spectrum out.h5
    assert_success
    assert_png spectrum.png
}

@test "report: a PNG from real --report files of one input and of two" {
    oracle make uv.h5 /u=8x6x4:complex128 /v=8x6x4:float64
    run --separate-stderr fftshard 2 --report=one.json uv.h5:/u out1.h5
    assert_success
    run --separate-stderr fftshard 3 --report=two.json uv.h5:/u uv.h5:/v out2.h5
    assert_success
    run --separate-stderr plot report one.json
    assert_success
    assert_png phases.png
    run --separate-stderr plot report two.json -o two.png
    assert_success
    assert_png two.png
}

@test "errors: one line, status 2 for usage, 1 for unreadable input" {
    local args
    for args in "" "bogus x" "report a.json b.json"; do
        # shellcheck disable=SC2086  # the words of a case split on purpose
        run --separate-stderr plot $args
        assert_equal "$status" 2
        assert_equal "${#stderr_lines[@]}" 2
        [[ ${stderr_lines[0]} == "fftshard-plot: error: "?* ]] || fail "'$args': $stderr"
        assert_equal "${stderr_lines[1]}" "Try 'fftshard-plot --help' for more information."
    done
    echo '{"per_rank": [' >broken.json
    echo '{"ranks": 2}' >other.json
    python_serial -c 'import h5py; h5py.File("plain.h5", "w")["x"] = [1.0]'
    for args in "spectrum missing.h5" "spectrum plain.h5" "report broken.json" "report other.json"; do
        # shellcheck disable=SC2086
        run --separate-stderr plot $args
        assert_equal "$status" 1
        assert_equal "${#stderr_lines[@]}" 1
        [[ ${stderr_lines[0]} == "fftshard-plot: error: "?* ]] || fail "'$args': $stderr"
    done
    [ -z "$(ls ./*.png 2>/dev/null)" ] || fail "a picture was written: $(ls ./*.png)"
    # without matplotlib: what to install
    mkdir -p nompl/matplotlib
    echo 'raise ImportError("No module named matplotlib")' >nompl/matplotlib/__init__.py
    echo '{"per_rank": [{"seconds": {"read": 1}}]}' >tiny.json
    run --separate-stderr env PYTHONPATH="$PWD/nompl" "$PYTHON_ORACLE" "$FFTSHARD_PLOT" report tiny.json
    assert_equal "$status" 1
    assert_equal "${#stderr_lines[@]}" 1
    [[ ${stderr_lines[0]} == *"install python3-matplotlib"* ]] || fail "$stderr"
}

@test "spectrum and report: a dataset for the group, text for k, a FIFO: one line, status 1, no wait" {
    python_serial -c 'import h5py, numpy as np
with h5py.File("ds.h5", "w") as f:
    f["power_spectrum"] = [1.0, 2.0]
with h5py.File("text.h5", "w") as f:
    g = f.create_group("power_spectrum")
    g["k"] = np.array([b"a", b"b"])
    g["power"] = [1.0, 2.0]
    g["modes"] = [1, 2]
with h5py.File("inner.h5", "w") as f:
    g = f.create_group("power_spectrum")
    g.create_group("k")
    g["power"] = [1.0, 2.0]
    g["modes"] = [1, 2]'
    mkfifo fifo
    local args
    for args in "spectrum ds.h5|ds.h5:/power_spectrum: not a group" \
        "spectrum text.h5|text.h5:/power_spectrum/k: not numeric" \
        "spectrum inner.h5|inner.h5:/power_spectrum/k: not a dataset" \
        "spectrum fifo|fifo: not a regular file" "report fifo|fifo: not a regular file"; do
        # shellcheck disable=SC2086  # the words of a case split on purpose
        run --separate-stderr timeout 20 "$PYTHON_ORACLE" "$FFTSHARD_PLOT" ${args%%|*}
        assert_equal "$status" 1
        assert_equal "${#stderr_lines[@]}" 1
        [[ ${stderr_lines[0]} == "fftshard-plot: error: ${args#*|}"* ]] || fail "'${args%%|*}': $stderr"
    done
    [ -z "$(ls ./*.png 2>/dev/null)" ] || fail "a picture was written: $(ls ./*.png)"
}

@test "spectrum: real outputs with a spectrum per slice, mu bins and multipoles, and --cross: panels of curves" {
    oracle make b3.h5 6x9x8:float64 -- uv.h5 /u=9x8x7:float64 /v=9x8x7:float64
    fftshard 2 -q --real --axes=1,2 --spectrum-per=0 --los=1 --multipoles=0,2,4 --box-size=50 \
        --spectrum-only b3.h5 per.h5
    fftshard 2 -q --real --cross --power-spectrum --spectrum-only uv.h5:/u uv.h5:/v cross.h5
    run --separate-stderr plot spectrum per.h5 -o per.png
    assert_success
    assert_png per.png
    assert_output "2100x500"
    run --separate-stderr plot spectrum cross.h5 -o cross.png
    assert_success
    assert_png cross.png
    assert_output "700x500"
}

@test "a Python without h5py: the system's Python stands in, or the message names the interpreter and the module" {
    mkdir bin
    ln -s "$PYTHON_ORACLE" bin/python3
    oracle make r3.h5 9x8x7:float64
    fftshard 2 -q --real --spectrum-only r3.h5 p.h5
    # -S: no site packages, so no numpy, h5py or matplotlib in this interpreter.
    run --separate-stderr bin/python3 -S "$FFTSHARD_PLOT" spectrum p.h5 -o p.png
    assert_success
    assert_png p.png
    run --separate-stderr env FFTSHARD_PLOT_REEXEC=1 bin/python3 -S "$FFTSHARD_PLOT" spectrum p.h5
    assert_failure 1
    [[ "$stderr" == "fftshard-plot: error: $BATS_TEST_TMPDIR/bin/python3 lacks the modules numpy, h5py, matplotlib"* ]]
}

@test "xi: a PNG of xi(r) and r^2 xi(r) from a real --correlation-function output; one-line errors; the system's Python stands in" {
    oracle make r3.h5 9x8x7:float64
    fftshard 2 -q --real --correlation-function --spectrum-only --box-size=90,80,70 r3.h5 xi.h5
    run --separate-stderr plot xi xi.h5
    assert_success
    assert_png xi.png
    assert_output "1400x500"
    mkdir bin
    ln -s "$PYTHON_ORACLE" bin/python3
    run --separate-stderr bin/python3 -S "$FFTSHARD_PLOT" xi xi.h5 -o s.png
    assert_success
    assert_png s.png
    run --separate-stderr env FFTSHARD_PLOT_REEXEC=1 bin/python3 -S "$FFTSHARD_PLOT" xi xi.h5
    assert_failure 1
    [[ "$stderr" == "fftshard-plot: error: $BATS_TEST_TMPDIR/bin/python3 lacks the modules numpy, h5py, matplotlib"* ]]
    rm -f ./*.png
    python_serial - <<'PY'
import h5py, numpy as np
with h5py.File("plain.h5", "w") as f:
    f["x"] = [1.0]
with h5py.File("dataset.h5", "w") as f:
    f["correlation_function"] = [1.0]
with h5py.File("text.h5", "w") as f:
    g = f.create_group("correlation_function")
    g["r"], g["xi"], g["cells"] = np.array([b"a", b"b"]), [1.0, 2.0], [1, 2]
with h5py.File("short.h5", "w") as f:
    g = f.create_group("correlation_function")
    g["r"], g["xi"], g["cells"] = [0.0, 1.0, 2.0], [1.0, 2.0], [1, 2]
with h5py.File("empty.h5", "w") as f:
    g = f.create_group("correlation_function")
    g["r"], g["xi"], g["cells"] = [0.0, 1.0], [np.nan, np.nan], [0, 0]
with h5py.File("noxi.h5", "w") as f:
    g = f.create_group("correlation_function")
    g["r"], g["cells"] = [0.0, 1.0], [1, 2]
PY
    local args
    for args in "missing.h5|missing.h5: cannot read" "plain.h5|plain.h5: no group /correlation_function" \
        "dataset.h5|dataset.h5:/correlation_function: not a group" \
        "text.h5|text.h5:/correlation_function/r: not numeric" \
        "short.h5|short.h5:/correlation_function: r, xi and cells are not arrays over the same bins" \
        "empty.h5|empty.h5:/correlation_function: no bin with cells" \
        "noxi.h5|noxi.h5:/correlation_function: no dataset xi (expected r, xi and cells)"; do
        run --separate-stderr plot xi "${args%%|*}"
        assert_equal "$status" 1
        assert_equal "${#stderr_lines[@]}" 1
        [[ ${stderr_lines[0]} == "fftshard-plot: error: ${args#*|}"* ]] || fail "'${args%%|*}': $stderr"
    done
    [ -z "$(ls ./*.png 2>/dev/null)" ] || fail "a picture was written: $(ls ./*.png)"
}

@test "spectrum: a time series by --add (groups of one file, a glob of groups or of files) is lines coloured by time, equal to the HDF5 data; --waterfall maps it" {
    python_serial - <<'PY'
import h5py, numpy as np
rng = np.random.default_rng(7)
for i, t in enumerate([0.0, 0.25, 1.0, 2.5]):
    with h5py.File("snap%d.h5" % i, "w") as f:
        f["u"] = rng.standard_normal((8, 6, 4)) * (1 + i)
        f["u"].attrs["time"] = t
PY
    local i
    for i in 0 1 2 3; do
        fftshard 2 -q --real --spectrum-only --add "snap$i.h5:/u" "ek.h5:/t000$i"
    done
    # The same spectra as files of their own, without time: coloured by their order.
    python_serial -c 'import h5py
with h5py.File("ek.h5", "r") as f:
    for i in range(4):
        with h5py.File("pk%d.h5" % i, "w") as g:
            f.copy("t000%d/power_spectrum" % i, g)
            del g["power_spectrum"].attrs["time"]'
    figure all.json spectrum ek.h5 -o all.png
    assert_png all.png
    figure one.json spectrum ek.h5:/t0002 -o one.png
    figure glob.json spectrum 'ek.h5:/t000[13]' -o glob.png
    figure named.json spectrum ek.h5:/t0003/power_spectrum ek.h5:t0000 -o named.png
    figure files.json spectrum 'pk*.h5' -o files.png
    figure map.json spectrum --waterfall ek.h5 -o map.png
    assert_png map.png
    run python_serial - <<'PY'
import json, h5py, numpy as np
import matplotlib
viridis = matplotlib.colormaps["viridis"]
with h5py.File("ek.h5", "r") as f:
    spectra = [{d: f["t000%d/power_spectrum/%s" % (i, d)][()] for d in ("k", "power", "modes")}
               for i in range(4)]
times = np.array([0.0, 0.25, 1.0, 2.5])
def drawn(s):
    keep = (s["modes"] > 0) & (s["k"] > 0) & (s["power"] > 0)
    return s["k"][keep], s["power"][keep]
def lines(name):
    axes = json.load(open(name))
    return [l for l in axes[0]["lines"]], axes
def check(name, which, colour_by=None):
    got, axes = lines(name)
    assert len(got) == len(which), (name, len(got))
    for l, i in zip(got, which):
        k, p = drawn(spectra[i])
        assert len(k) > 5 and np.array_equal(l["x"], k) and np.array_equal(l["y"], p), (name, i)
        if colour_by is not None:
            v = colour_by[which.index(i)]
            lo, hi = min(colour_by), max(colour_by)
            assert np.allclose(l["color"], viridis((v - lo) / (hi - lo))), (name, i, l["color"])
    return axes
axes = check("all.json", [0, 1, 2, 3], list(times))
assert "time" in [a["ylabel"] for a in axes], [a["ylabel"] for a in axes]
check("one.json", [2])
check("glob.json", [1, 3], [0.25, 2.5])
check("named.json", [3, 0], [2.5, 0.0])
axes = check("files.json", [0, 1, 2, 3], [0, 1, 2, 3])
assert "order of the spectra" in [a["ylabel"] for a in axes]
axes = json.load(open("map.json"))
assert axes[0]["ylabel"] == "time" and len(axes[0]["maps"]) == 1, axes[0]["ylabel"]
rows = np.array([np.log10(drawn(s)[1]) for s in spectra])
assert np.allclose(axes[0]["maps"][0], rows.ravel(), rtol=1e-12, atol=0), "waterfall rows"
print("ok")
PY
    assert_success
    assert_output ok
}

@test "spectrum: a spectrum per slice is lines coloured by the slice axis' coordinate" {
    python_serial -c 'import h5py, numpy as np
with h5py.File("stack.h5", "w") as f:
    f["data"] = np.random.default_rng(3).standard_normal((5, 8, 6)) * np.arange(1, 6)[:, None, None]'
    fftshard 2 -q --real --axes=1,2 --spectrum-per=0 --spectrum-only stack.h5 per.h5
    figure per.json spectrum per.h5
    run python_serial - <<'PY'
import json, h5py, numpy as np
import matplotlib
with h5py.File("per.h5", "r") as f:
    g = f["power_spectrum"]
    k, power, modes = g["k"][()], g["power"][()], g["modes"][()]
    coord = g["power"].dims[0][0][()].astype(float)
axes = json.load(open("per.json"))
got = axes[0]["lines"]
assert len(got) == 5 and len(coord) == 5, len(got)
for i, l in enumerate(got):
    keep = (modes > 0) & (k > 0) & (power[i] > 0)
    assert np.array_equal(l["x"], k[keep]) and np.array_equal(l["y"], power[i][keep]), i
    t = (coord[i] - coord.min()) / (coord.max() - coord.min())
    assert np.allclose(l["color"], matplotlib.colormaps["viridis"](t)), (i, l["color"])
print("ok")
PY
    assert_success
    assert_output ok
}

@test "spectrum: a series by --add --attr=time and a --spectrum-per=0 stack with a time coordinate are lines coloured by the given and the input's times" {
    python_serial -c 'import xarray, h5netcdf' 2>/dev/null || skip "needs python3-xarray and python3-h5netcdf"
    python_serial - <<'PY'
import h5py, numpy as np, xarray as xr
u = np.random.default_rng(9).standard_normal((4, 8, 6)) * np.arange(1, 5)[:, None, None]
xr.Dataset({"u": (("time", "y", "x"), u)},
           coords={"time": ("time", [0.5, 1.5, 2.0, 4.0], {"units": "s"})}).to_netcdf(
               "stack.nc", engine="h5netcdf")
for i in range(4):
    with h5py.File("snap%d.h5" % i, "w") as f:
        f["u"] = u[i]
PY
    local i t=(0.5 1.5 2.0 4.0)
    for i in 0 1 2 3; do
        fftshard $((i + 1)) -q --spectrum-only --add "--attr=time=${t[i]}" "snap$i.h5:/u" "ek.h5:/t$i"
    done
    fftshard 2 -q --spectrum-only --axes=1,2 --spectrum-per=0 stack.nc:/u per.h5
    figure series.json spectrum ek.h5 -o series.png
    assert_png series.png
    figure per.json spectrum per.h5 -o per.png
    assert_png per.png
    run python_serial - <<'PY'
import json, h5py, numpy as np
import matplotlib
times = np.array([0.5, 1.5, 2.0, 4.0])
with h5py.File("ek.h5") as f, h5py.File("per.h5") as g:
    k, modes = g["power_spectrum/k"][()], g["power_spectrum/modes"][()]
    data = {"series.json": np.array([f["t%d/power_spectrum/power" % i][()] for i in range(4)]),
            "per.json": g["power_spectrum/power"][()]}
for name, label in ("series.json", "time"), ("per.json", "time [s]"):
    axes = json.load(open(name))
    got = axes[0]["lines"]
    assert len(got) == 4 and label in [a["ylabel"] for a in axes], (name, [a["ylabel"] for a in axes])
    for i, l in enumerate(got):
        keep = (modes > 0) & (k > 0) & (data[name][i] > 0)
        assert np.allclose(l["x"], k[keep], rtol=1e-13) and np.array_equal(l["y"], data[name][i][keep]), (name, i)
        colour = matplotlib.colormaps["viridis"]((times[i] - 0.5) / 3.5)
        assert np.allclose(l["color"], colour), (name, i, l["color"])
print("ok")
PY
    assert_success
    assert_output ok
}

@test "spectrum --energy: E(k) of u, v, w as the README defines it; its bins times dk add up to 1/2 <|u|^2>, with and without --box-size, the box from the inputs" {
    python_serial -c 'import h5py, numpy as np
rng = np.random.default_rng(5)
with h5py.File("uvw.h5", "w") as f:
    for c in "uvw":
        a = rng.standard_normal((16, 12, 8))
        f[c] = a - a.mean()   # no energy in the k = 0 shell, which a log axis leaves out
with h5py.File("uvw.h5", "r") as f, h5py.File("uvwbox.h5", "w") as g:
    for c in "uvw":
        g[c] = f[c][()]
        g[c].attrs["box_size"] = [50.0, 40.0, 30.0]   # the box, from the input alone'
    fftshard 2 -q --real --spectrum-only uvw.h5:/u uvw.h5:/v uvw.h5:/w ek.h5
    fftshard 2 -q --real --spectrum-only --box-size=6.283185307179586 uvw.h5:/u uvw.h5:/v uvw.h5:/w ek2pi.h5
    fftshard 2 -q --real --spectrum-only --box-size=100,80,60 uvw.h5:/u uvw.h5:/v uvw.h5:/w ekbox.h5
    fftshard 2 -q --real --spectrum-only uvwbox.h5:/u uvwbox.h5:/v uvwbox.h5:/w ekattr.h5
    local f
    for f in ek ek2pi ekbox ekattr; do
        figure "$f.json" spectrum --energy "$f.h5" -o "$f.png"
        assert_png "$f.png"
    done
    run python_serial - <<'PY'
import json, h5py, numpy as np
with h5py.File("uvw.h5", "r") as f:
    u, v, w = f["u"][()], f["v"][()], f["w"][()]
energy = 0.5 * np.mean(u ** 2 + v ** 2 + w ** 2)
N = u.size
for name, V in (("ek", None), ("ek2pi", (2 * np.pi) ** 3), ("ekbox", 100.0 * 80 * 60),
                ("ekattr", 50.0 * 40 * 30)):
    with h5py.File(name + ".h5", "r") as f:
        g = f["power_spectrum"]
        k, power, modes, edges = (g[d][()] for d in ("k", "power", "modes", "edges"))
    keep = (modes > 0) & (k > 0)
    dk = np.diff(edges)[keep]
    # README: E_i = 0.5 * power * modes / N**2 (N points; / V with --box-size), per unit of k.
    e = 0.5 * power[keep] * modes[keep] / (N ** 2 if V is None else V) / dk
    axes = json.load(open(name + ".json"))
    (l,) = [l for l in axes[0]["lines"]]
    assert axes[0]["ylabel"].startswith("E(k)"), axes[0]["ylabel"]
    assert np.array_equal(l["x"], k[keep]), name
    assert np.allclose(l["y"], e, rtol=1e-12, atol=0), name
    total = np.sum(np.array(l["y"]) * dk)
    assert abs(total - energy) < 1e-10 * energy, (name, total, energy)
print("ok")
PY
    assert_success
    assert_output ok
}

@test "report: every phase the report lists, operate and a later one among them, bars of the ranks' seconds" {
    oracle make r3.h5 9x8x7:float64
    fftshard 2 -q --real --apply=gaussian:1 --report=apply.json r3.h5 out.h5
    python_serial -c 'import json
r = json.load(open("apply.json"))
r["phases"]["remesh"] = {"min": 0.5, "mean": 0.5, "max": 0.5}
for i, e in enumerate(r["per_rank"]):
    e["seconds"]["remesh"] = 0.25 * (i + 1)
json.dump(r, open("future.json", "w"))'
    figure apply.json.fig report apply.json -o apply.png
    figure future.json.fig report future.json -o future.png
    assert_png future.png
    run python_serial - <<'PY'
import json
import numpy as np
for name in ("apply.json", "future.json"):
    report = json.load(open(name))
    phases = [p for p in report["phases"] if p != "total"]
    assert "operate" in phases and ("remesh" in phases) == (name == "future.json"), phases
    bars = json.load(open(name + ".fig"))[0]["bars"]
    assert [b["label"] for b in bars] == phases, ([b["label"] for b in bars], phases)
    below = [0.0] * len(report["per_rank"])
    # matplotlib keeps a bar as its two ends: a height is exact to the rounding of its top.
    tol = 1e-13 * max(sum(v for p, v in e["seconds"].items() if p != "total")
                      for e in report["per_rank"])
    for b in bars:
        seconds = [e["seconds"][b["label"]] for e in report["per_rank"]]
        assert np.allclose(b["heights"], seconds, rtol=0, atol=tol), (name, b, seconds)
        assert np.allclose(b["bottoms"], below, rtol=0, atol=tol), (name, b, below)
        below = [x + y for x, y in zip(below, seconds)]
print("ok")
PY
    assert_success
    assert_output ok
}

@test "spectrum: series errors, one line, status 1" {
    python_serial -c 'import h5py, numpy as np
with h5py.File("out.h5", "w") as f:
    g = f.create_group("t1/power_spectrum")
    g["k"], g["power"], g["modes"] = np.arange(4.0), np.ones(4), np.ones(4, dtype=np.int64)
    f.create_group("empty")'
    local args
    for args in "--waterfall out.h5|out.h5:/t1: one spectrum of one slice: --waterfall draws a series" \
        "out.h5:/nope|out.h5:/nope: no such group" \
        "out.h5:/empty|out.h5:/empty: no group power_spectrum or cross_spectrum in it" \
        "out.h5:/x*|out.h5:/x*: no group with a spectrum matches" \
        "none*.h5|none*.h5: no file matches" \
        "--energy out.h5|out.h5:/t1/power_spectrum: no box_size attribute: cannot give E(k)"; do
        # shellcheck disable=SC2086  # the words of a case split on purpose
        run --separate-stderr plot spectrum ${args%%|*}
        assert_equal "$status" 1
        assert_equal "${#stderr_lines[@]}" 1
        assert_equal "${stderr_lines[0]}" "fftshard-plot: error: ${args#*|}"
    done
    [ -z "$(ls ./*.png 2>/dev/null)" ] || fail "a picture was written: $(ls ./*.png)"
}
