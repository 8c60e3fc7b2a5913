#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# A time series of spectra in one file: --spectrum-only with OUTPUT:/GROUP
# puts the spectrum's group under GROUP, --add adds one such group per run
# to an existing file (refused only where that group exists, replaced with
# --force, the other groups left bit for bit), never through a link and
# never over a file that another program changed meanwhile. Each group
# carries the attributes of its input's dataset (time, viscosity; not units),
# xarray and netCDF4 read it by its path, and the report names what was
# written, the axes as given and the array's bytes as fftshard(1) says.

load helpers

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    job=
}

teardown() {
    kill_job
}

# snapshots N SHAPE: snap0.h5 ... snap<N-1>.h5, each holding /u (float64,
# random, SHAPE as a Python tuple) with the attributes time (0.1 i),
# viscosity and units, written by h5py.
snapshots() {
    python_serial -c 'import h5py, numpy as np, sys
n, shape = int(sys.argv[1]), eval(sys.argv[2])
for i in range(n):
    with h5py.File("snap%d.h5" % i, "w") as f:
        d = f.create_dataset("u", data=np.random.default_rng(i).standard_normal(shape))
        d.attrs["time"] = 0.1 * i
        d.attrs["viscosity"] = 1e-3
        d.attrs["units"] = "m/s"
        d.attrs["step"] = np.int64(100 * i)' "$@"
}

# reader_check: skip where xarray, h5netcdf or netCDF4 is missing.
needs_readers() {
    python_serial -c "import netCDF4, xarray, h5netcdf" 2>/dev/null ||
        skip "needs python3-netcdf4, python3-xarray and python3-h5netcdf"
}

# paused POINT:SECONDS ERR ARGS...: fftshard --quiet ARGS on 2 ranks in the
# background ($job), once rank 0 says in ERR that it holds at POINT.
paused() {
    local point=$1 err=$2
    shift 2
    rm -f "$err"
    FFTSHARD_PAUSE=$point "$MPIEXEC" -n 2 "$FFTSHARD" --quiet "$@" >/dev/null 2>"$err" &
    job=$!
    await_pause "$err" "pausing at" "$point"
}

@test "ten snapshots into one file with ten --add runs: xarray and netCDF4 read each group, its power is numpy's, its time is the snapshot's" {
    needs_readers
    snapshots 10 "(16, 16, 16)"
    local i
    for ((i = 0; i < 10; i++)); do
        fftshard 2 -q --add --spectrum-only "snap$i.h5:/u" "series.h5:/t$(printf %04d "$i")"
    done
    assert_no_temporaries
    run python_serial - "$srcdir/tests" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import h5py, netCDF4, numpy as np, xarray as xr
from spectrum_oracle import reference

with h5py.File("series.h5") as f:
    top = sorted(f)
    assert top == ["t%04d" % i for i in range(10)], top
    assert all(sorted(f[t]) == ["power_spectrum"] for t in top), [sorted(f[t]) for t in top]
nc = netCDF4.Dataset("series.h5")
for i in range(10):
    group = "/t%04d/power_spectrum" % i
    with h5py.File("snap%d.h5" % i) as f:
        u = f["u"][()]
    # the documented definition, from numpy.fft.fftn of the whole field
    ref = reference([u], [0, 1, 2], None, None, {})["/power_spectrum"]
    for engine in "h5netcdf", "netcdf4":
        x = xr.open_dataset("series.h5", group=group, engine=engine)
        assert x["power"].dims == ("k",), x["power"].dims
        assert np.array_equal(x["modes"].values, ref["modes"]), (group, engine)
        assert np.allclose(x["power"].values, ref["power"], rtol=1e-10, atol=0), (group, engine)
        assert np.allclose(x["k"].values, ref["k"], rtol=1e-12, atol=0), (group, engine)
        assert x.attrs["time"] == 0.1 * i and x.attrs["viscosity"] == 1e-3, x.attrs
        # the field's units are not its power's: left out (fftshard(1), SPECTRA)
        assert "units" not in x.attrs and x.attrs["step"] == 100 * i, x.attrs
        assert x.attrs["inputs"] == "snap%d.h5:/u" % i, x.attrs["inputs"]
        x.close()
    g = nc[group]
    assert g.getncattr("time") == 0.1 * i
    assert np.allclose(g.variables["power"][:], ref["power"], rtol=1e-10, atol=0)
times = [xr.open_dataset("series.h5", group="/t%04d/power_spectrum" % i, engine="h5netcdf").attrs["time"]
         for i in range(10)]
print("ok", len(times), np.allclose(times, 0.1 * np.arange(10)))
PY
    assert_success
    assert_output "ok 10 True"
}

@test "--add: the group that exists is refused (status 4, one line, OUTPUT untouched); --force replaces that group alone" {
    snapshots 4 "(8, 6, 5)"
    local i
    for i in 0 1 2; do
        fftshard 2 -q --add --spectrum-only "snap$i.h5:/u" "series.h5:/t$i"
    done
    cp series.h5 before.h5
    run --separate-stderr fftshard 2 --add --spectrum-only snap3.h5:/u series.h5:/t1
    assert_error "$EXIT_OUTPUT" "series.h5:/t1/power_spectrum: the file holds a spectrum" "--force"
    cmp series.h5 before.h5
    assert_no_temporaries
    # the same group name under another group is another group; a group
    # that exists without a spectrum takes one beside what it holds
    fftshard 2 -q --add --spectrum-only snap3.h5:/u series.h5:/run2/t1
    python_serial -c 'import h5py
with h5py.File("series.h5", "r+") as f:
    f["t5/note"] = [5.0]'
    fftshard 2 -q --add --spectrum-only snap3.h5:/u series.h5:/t5
    run python_serial -c 'import h5py
with h5py.File("series.h5") as f:
    print(sorted(f["t5"]), f["t5/note"][0])'
    assert_output "['note', 'power_spectrum'] 5.0"
    cp series.h5 before.h5
    fftshard 2 -q --add --force --spectrum-only --bins=3 snap3.h5:/u series.h5:/t1
    assert_no_temporaries
    for i in /t0 /t2 /t5 /run2; do
        h5diff -v before.h5 series.h5 "$i" "$i" >/dev/null || fail "$i changed: $(h5diff before.h5 series.h5 "$i" "$i")"
    done
    run python_serial -c 'import h5py
with h5py.File("series.h5") as f, h5py.File("before.h5") as b:
    g = f["t1/power_spectrum"]
    print(sorted(f), sorted(f["t1"]), g["power"].shape, round(g.attrs["time"], 6), g.attrs["inputs"],
          b["t1/power_spectrum"].attrs["inputs"])'
    assert_output "['run2', 't0', 't1', 't2', 't5'] ['power_spectrum'] (3,) 0.3 snap3.h5:/u snap1.h5:/u"
    run python_serial "$srcdir/tests/spectrum_oracle.py" check "in=snap3.h5:/u out=series.h5 group=/t1 bins=3" \
        "in=snap0.h5:/u out=series.h5 group=/t0" "in=snap3.h5:/u out=series.h5 group=/run2/t1"
    assert_success
    # --force into a group that does not exist yet, under one that does not either
    fftshard 2 -q --add --force --spectrum-only snap2.h5:/u series.h5:/new/deep/t2
    run python_serial "$srcdir/tests/spectrum_oracle.py" check "in=snap2.h5:/u out=series.h5 group=/new/deep/t2"
    assert_success
    # and a transformed dataset, --force, in a group that does not exist yet
    fs 2 snap1.h5:/u series.h5:/fresh/u --add --force
    check_all
    assert_no_temporaries
}

@test "--add follows no link on the group's path and writes only inside groups: exit 4 with or without --force, nothing written" {
    snapshots 1 "(8, 6, 5)"
    python_serial -c 'import h5py, numpy as np
with h5py.File("other.h5", "w") as f:
    f.create_group("g")
with h5py.File("series.h5", "w") as f:
    f["keep"] = np.arange(3.0)
    f.create_group("real")
    f["soft"] = h5py.SoftLink("/real")
    f["ext"] = h5py.ExternalLink("other.h5", "/g")
    f.create_group("t1")
    f["t1/power_spectrum"] = h5py.SoftLink("/real")
    f["t2/power_spectrum"] = h5py.ExternalLink("other.h5", "/g")'
    local before other case force
    before=$(checksum series.h5)
    other=$(checksum other.h5)
    for force in "" --force; do
        for case in "/soft|/soft is a soft link" "/ext|/ext is an external link" \
            "/soft/a/b|/soft is a soft link" "/t1|/t1/power_spectrum is a soft link" \
            "/t2|/t2/power_spectrum is an external link" \
            "/keep|not a group on the way" "/keep/x|not a group on the way"; do
            run --separate-stderr fftshard 2 --add $force --spectrum-only snap0.h5:/u "series.h5:${case%%|*}"
            assert_error "$EXIT_OUTPUT" "${case#*|}"
        done
    done
    assert_equal "$(checksum series.h5)" "$before"
    assert_equal "$(checksum other.h5)" "$other"
    assert_no_temporaries
}

@test "--add --spectrum-only: OUTPUT changed by another writer during the run, or a link made before the copy: exit 4, OUTPUT as the other left it" {
    snapshots 1 "(8, 6, 5)"
    fftshard 2 -q --add --spectrum-only snap0.h5:/u series.h5:/t0
    # another writer adds its own group while the run reads
    paused read:4 run.err --add --spectrum-only snap0.h5:/u series.h5:/t1
    python_serial -c 'import h5py
with h5py.File("series.h5", "r+") as f:
    f.create_group("t9").attrs["by"] = "another writer"'
    local after
    after=$(checksum series.h5)
    end_job
    assert_equal "$job_status" "$EXIT_OUTPUT"
    grep -q "series.h5: OUTPUT changed during the run" run.err || fail "$(cat run.err)"
    [ "$(grep -c error run.err)" -eq 1 ] || fail "$(cat run.err)"
    assert_equal "$(checksum series.h5)" "$after"
    assert_no_temporaries
    # the group's parent turned into a link after the check, before the copy
    python_serial -c 'import h5py
with h5py.File("other.h5", "w") as f:
    f.create_group("g")'
    local other
    other=$(checksum other.h5)
    paused add-copy:5 run.err --add --spectrum-only snap0.h5:/u series.h5:/t9/x
    python_serial -c 'import h5py
with h5py.File("series.h5", "r+") as f:
    del f["t9"]
    f["t9"] = h5py.ExternalLink("other.h5", "/g")'
    after=$(checksum series.h5)
    end_job
    assert_equal "$job_status" "$EXIT_OUTPUT"
    grep -q "series.h5:/t9/x/power_spectrum: /t9 is an external link" run.err || fail "$(cat run.err)"
    assert_equal "$(checksum series.h5)" "$after"
    assert_equal "$(checksum other.h5)" "$other"
    assert_no_temporaries
}

@test "several inputs into one group: the attributes they share go on it, those that differ do not" {
    python_serial -c 'import h5py, numpy as np
with h5py.File("uvw.h5", "w") as f:
    for c in "uvw":
        d = f.create_dataset(c, data=np.random.default_rng(ord(c)).standard_normal((8, 6, 5)))
        d.attrs["time"] = 2.5
        d.attrs["component"] = c
        d.attrs["viscosity"] = 1e-3
        d.attrs["inputs"] = "not the group'"'"'s"
    f["w"].attrs["viscosity"] = 2e-3'
    fftshard 2 -q --spectrum-only --cross --power-spectrum uvw.h5:/u uvw.h5:/v e.h5:/t1
    fftshard 2 -q --spectrum-only uvw.h5:/u uvw.h5:/v uvw.h5:/w e3.h5:/t1
    run python_serial -c 'import h5py
for name in "e.h5", "e3.h5":
    with h5py.File(name) as f:
        for g in sorted(f["t1"]):
            a = f["t1"][g].attrs
            print(name, g, a["time"], a.get("viscosity"), "component" in a, a["inputs"])'
    assert_output "e.h5 cross_spectrum 2.5 0.001 False uvw.h5:/u, uvw.h5:/v
e.h5 power_spectrum 2.5 0.001 False uvw.h5:/u, uvw.h5:/v
e3.h5 power_spectrum 2.5 None False uvw.h5:/u, uvw.h5:/v, uvw.h5:/w"
    run python_serial "$srcdir/tests/spectrum_oracle.py" check \
        "in=uvw.h5:/u in=uvw.h5:/v out=e.h5 group=/t1 cross power only" \
        "in=uvw.h5:/u in=uvw.h5:/v in=uvw.h5:/w out=e3.h5 group=/t1 only"
    assert_success
}

@test "the report names what was written: the spectrum's group, the axes as given, array_bytes as fftshard(1) says" {
    python_serial -c 'import h5py, numpy as np
with h5py.File("in.h5", "w") as f:
    f["u"] = np.random.default_rng(1).standard_normal((12, 10, 8)).astype(np.float32)
    f["v"] = np.random.default_rng(2).standard_normal((12, 10, 8))'
    run --separate-stderr fftshard 2 --spectrum-only --axes=2,0 --report=a.json in.h5:/u ser.h5:/t7
    assert_success
    [[ "$stderr" == *"spectrum: "*" in ser.h5:/t7/power_spectrum, "* ]] || fail "$stderr"
    fftshard 2 -q --real --axes=1,0,2 --report=b.json in.h5:/u out.h5
    fftshard 2 -q --real --axes=2,0,1 --report=e.json in.h5:/u e.h5
    fftshard 2 -q --precision=double --spectrum-only --cross --power-spectrum --report=c.json \
        in.h5:/u in.h5:/v c.h5:/t0
    fftshard 2 -q --axes=1,0 --report=d.json in.h5:/v d.h5
    run python_serial - <<'PY'
import json, h5py
a, b, c, d, e = (json.load(open(n + ".json")) for n in "abcde")
with h5py.File("out.h5") as f:
    attr_axes = list(f["u"].attrs["axes"])
with h5py.File("d.h5") as f:
    attr_axes_d = list(f["v"].attrs["axes"])
# "output": what was written
print(a["output"], a["spectra"]["power_spectrum"]["group"], b["output"])
print(c["output"], [s["output"] for s in c["datasets"]],
      c["spectra"]["power_spectrum"]["group"], c["spectra"]["cross_spectrum"]["group"])
# the axes in the order given, as the result's attribute
print(a["axes"], b["axes"], attr_axes, d["axes"], attr_axes_d)
# the working array the ranks hold, in complex of the precision computed:
# float32 -> complex64 (8 bytes), float64 -> complex128 (16); --real
# holds n/2+1 along the halved axis when it is the last in memory (FFTW's
# padded layout), else the whole complex array
print(a["memory"]["array_bytes"] == 12 * 10 * 8 * 8, b["memory"]["array_bytes"] == 12 * 10 * 5 * 8,
      e["memory"]["array_bytes"] == 12 * 10 * 8 * 8, d["memory"]["array_bytes"] == 12 * 10 * 8 * 16)
PY
    assert_success
    assert_output "ser.h5:/t7/power_spectrum /t7/power_spectrum out.h5:/u
c.h5 ['c.h5:/t0/power_spectrum', 'c.h5:/t0/power_spectrum'] /t0/power_spectrum /t0/cross_spectrum
[2, 0] [1, 0, 2] [1, 0, 2] [1, 0] [1, 0]
True True True True"
}

@test "a series in xarray: ten --add runs (each snapshot's time attribute, or --attr=time) and one --spectrum-per=0 of the stack with its time coordinate are each one DataArray power(time, k), numpy's spectra at the input's times" {
    python_serial -c 'import xarray, h5netcdf' 2>/dev/null || skip "needs python3-xarray and python3-h5netcdf"
    # The stack as xarray writes it (time a coordinate with units), and each
    # snapshot as a file of its own: the even ones with a time attribute,
    # the odd ones without (their time given with --attr).
    python_serial - <<'PY'
import h5py, numpy as np, xarray as xr
times = 0.5 + 0.125 * np.arange(10) ** 2
u = np.random.default_rng(41).standard_normal((10, 12, 12)) * (1 + np.arange(10))[:, None, None]
stack = xr.Dataset({"u": (("time", "y", "x"), u)}, coords={"time": ("time", times, {"units": "s"})})
stack.to_netcdf("stack.nc", engine="h5netcdf")
for i in range(10):
    with h5py.File("snap%d.h5" % i, "w") as f:
        f["u"] = u[i]
        if i % 2 == 0:
            f["u"].attrs["time"] = times[i]
PY
    local i t
    for ((i = 0; i < 10; i++)); do
        t=()
        ((i % 2)) && t=("--attr=time=$(python_serial -c "print(repr(0.5 + 0.125 * $i ** 2))")")
        fftshard $((i % 4 + 1)) -q --add --spectrum-only "${t[@]}" "snap$i.h5:/u" "series.h5:/t$(printf %04d "$i")"
    done
    fftshard 3 -q --spectrum-only --axes=1,2 --spectrum-per=0 stack.nc:/u per.h5
    run python_serial - <<'PY'
import h5py, numpy as np, xarray as xr
times = 0.5 + 0.125 * np.arange(10) ** 2
with h5py.File("stack.nc") as f:
    u = f["u"][()]
# numpy's spectrum of each snapshot: shells of |f| one wide around 0, 1, 2 ...
f = np.fft.fftfreq(12, 1 / 12)
shell = np.floor(np.hypot(*np.meshgrid(f, f, indexing="ij")) + 0.5).astype(int).ravel()
modes = np.bincount(shell)
numpy_power = [np.bincount(shell, np.abs(np.fft.fft2(a)).ravel() ** 2) / modes for a in u]
engines = ["h5netcdf"]
try:
    import netCDF4  # noqa: F401
    engines.append("netcdf4")
except ImportError:
    pass
for engine in engines:
    groups = [xr.open_dataset("series.h5", group="t%04d/power_spectrum" % i, engine=engine)
              for i in range(10)]
    # the bins' mean |k| of runs on other numbers of ranks may differ in the
    # last digit (summed in another order): the first group's k for all
    series = xr.concat(groups, dim="time", join="override")
    per = xr.open_dataset("per.h5", group="power_spectrum", engine=engine)
    assert per["time"].attrs["units"] == "s", per["time"].attrs
    for name, p in ("--add", series["power"]), ("--spectrum-per", per["power"]):
        assert p.dims == ("time", "k"), (name, engine, p.dims)
        assert np.array_equal(p["time"].values, times), (name, engine, p["time"].values)
        assert np.array_equal(p.sel(time=times[3])["time"], times[3]), name
        assert np.allclose(p["k"].values, groups[0]["k"].values, rtol=1e-13, atol=0), name
        for i in range(10):
            assert np.allclose(p[i].values, numpy_power[i], rtol=1e-12, atol=0), (name, engine, i)
    assert np.array_equal(per["modes"].values, modes)
    for g in groups:
        g.close()
    per.close()
print("ok", engines[0])
PY
    assert_success
    assert_output "ok h5netcdf"
}

@test "--attr: a number and a text on the result and on the spectrum's group, in place of the input's (units not on the group, as the input's); fftshard's own names and no NAME= refused (status 2)" {
    snapshots 1 "(8, 6)"
    fftshard 2 -q --power-spectrum --attr=time=2.5e-1 --attr=units=km/s --attr=note=1e3x snap0.h5:/u out.h5
    run python_serial -c 'import h5py
with h5py.File("out.h5") as f:
    for o in f["u"], f["power_spectrum"]:
        a = o.attrs
        print(a["time"], a["time"].dtype, a.get("units"), a["note"], a["viscosity"], a["step"])
    print(f["power_spectrum/time"][()], f["power_spectrum/power"].attrs["coordinates"])'
    assert_success
    assert_line --index 0 "0.25 float64 km/s 1e3x 0.001 0"
    assert_line --index 1 "0.25 float64 None 1e3x 0.001 0"
    assert_line --index 2 "0.25 time"
    local bad
    for bad in "--attr=axes=0|axes is an attribute fftshard writes itself" \
        "--attr=time|expected NAME=VALUE" "--attr==1|expected NAME=VALUE"; do
        run --separate-stderr fftshard 1 "${bad%%|*}" snap0.h5:/u bad.h5
        assert_error "$EXIT_USAGE" "${bad#*|}"
        [ ! -e bad.h5 ] || fail "bad.h5 written"
    done
}
