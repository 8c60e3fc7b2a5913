#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# share/fftshard-plot: a valid PNG from a /power_spectrum group (made here
# with h5py) and from real --report files of one and of several inputs, and
# one-line errors. Run with the oracle's Python, the one configure found
# numpy and h5py for; skipped when it has no matplotlib.

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
