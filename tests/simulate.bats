#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# The simulator of the exchange strategies (sim/fftshard-sim, make
# simulate): it builds with SimGrid's smpicc, a 64-rank torus case gives
# every strategy a positive exchange and total time, and the component of
# the groups (--groups=component) has the size the torus's routes give and
# the times of the full run; fftshard-predict's table for a dry run's plan.
# Skipped without SimGrid.

load helpers

FFTSHARD_SIM=${FFTSHARD_SIM:-$srcdir/sim/fftshard-sim}
FFTSHARD_PREDICT=${FFTSHARD_PREDICT:-$srcdir/sim/fftshard-predict}

setup() {
    command -v smpirun >/dev/null || skip "SimGrid's smpirun is not installed"
    cd "$BATS_TEST_TMPDIR" || return 1
}

@test "simulate: the simulator is built" {
    [ -f "$FFTSHARD_SIM" ]
}

@test "simulate: a 64-rank torus gives every strategy a positive time" {
    run --separate-stderr smpirun -no-privatize -platform "$srcdir/sim/platforms/torus-64.xml" -np 64 \
        "$FFTSHARD_SIM" --cfg=smpi/simulate-computation:no --cfg=network/crosstraffic:0 \
        --cfg=contexts/stack-size:1024 --log=root.thresh:critical \
        --cfg=network/model:CM02 --cfg=smpi/alltoallv:bruck \
        --shape=64x64x64 --decomp=slab --calibration="$srcdir/sim/calibration.txt" --header
    assert_success
    assert_line --index 0 "strategy,decomp,grid,ranks,shape,dtype,exchange_s,fft_s,total_s,messages,note,simulated"
    # strategy, slab on 64x1, and positive exchange and total seconds
    "$PYTHON_ORACLE" - "$output" <<'PY'
import csv, sys
rows = list(csv.DictReader(sys.argv[1].splitlines()))
assert [r["strategy"] for r in rows] == ["alltoall", "xorswap", "pairwise", "random"], rows
for r in rows:
    assert r["decomp"] == "slab" and r["grid"] == "64x1" and r["ranks"] == "64", r
    x, t = float(r["exchange_s"]), float(r["total_s"])
    assert 0 < x < t < 10, r
PY
}

# smpirun with the ranks on node-0.. in order, as make simulate places them.
sim_run() {
    local platform=$1 np=$2
    shift 2
    local i
    for ((i = 0; i < np; i++)); do echo "node-$i"; done >hosts
    run --separate-stderr smpirun -no-privatize -platform "$srcdir/sim/platforms/$platform.xml" -np "$np" \
        -hostfile hosts "$FFTSHARD_SIM" --cfg=smpi/simulate-computation:no --cfg=network/crosstraffic:0 \
        --cfg=contexts/stack-size:1024 --log=root.thresh:critical --cfg=network/model:CM02 \
        --cfg=smpi/alltoallv:bruck --cfg=smpi/test:1e-7 --calibration="$srcdir/sim/calibration.txt" "$@"
}

@test "simulate: the component of a 4x4 grid on a 4x4x4 torus is one row, one column" {
    # Ranks 0-15 are the torus's z = 0 plane; a row of the grid is x = 0..3
    # at one y, a column y = 0..3 at one x: no route leaves them.
    sim_run torus-64 16 --shape=32x32x32 --decomp=pencil --grid=4x4 --groups=component --strategy=random
    assert_success
    [[ "$output" == random,pencil,4x4,16,32x32x32,complex128,*",times of the simulated ranks; stages synced,4/4" ]]
}

@test "simulate: the component of an 8x8 grid on a 4x4x4 torus: a row, two columns" {
    # A row is x = 0..3, y = 2i..2i+1 at one z; the columns at one x hold y =
    # {0, 2} and {1, 3} for all z, and the routes from y = 0 to y = 2 cross
    # those from 1 to 3: 8 ranks, then 16.
    sim_run torus-64 64 --shape=64x64x64 --decomp=pencil --groups=component --strategy=xorswap
    assert_success
    [[ "$output" == xorswap,pencil,8x8,64,*",8/16" ]]
}

@test "simulate: the component's times are the full synced run's" {
    sim_run torus-64 64 --shape=64x64x64 --decomp=pencil --groups=component --strategy=random
    assert_success
    local component=$output
    sim_run torus-64 64 --shape=64x64x64 --decomp=pencil --groups=synced --strategy=random
    assert_success
    # exchange, fft and total seconds and messages alike; the ranks simulated differ
    [ "$(cut -d, -f1-10 <<<"$component")" = "$(cut -d, -f1-10 <<<"$output")" ]
    [[ "$output" == *",stages synced,64/64" ]]
    [[ "$component" == *",8/16" ]]
}

# predict ARGS...: fftshard-predict with the oracle's Python and the
# simulator of this build.
predict() {
    FFTSHARD_SIM="$FFTSHARD_SIM" python_serial "$FFTSHARD_PREDICT" "$@"
}

@test "simulate: fftshard-predict prints every strategy's predicted times for the dry run's plan" {
    "$FFTSHARD" --dry-run --shape=64x64x64 --dtype=complex128 --ranks=8 --report=- 2>/dev/null >plan.json
    run --separate-stderr predict "$srcdir/sim/platforms/fattree-64.xml" <plan.json
    assert_success
    assert_output --partial "Predicted on $srcdir/sim/platforms/fattree-64.xml (8 simulated ranks"
    "$PYTHON_ORACLE" - "$output" <<'PY'
import sys
lines = sys.argv[1].splitlines()
i = next(k for k, l in enumerate(lines) if l.startswith("Predicted on"))
assert lines[i + 1].split() == ["strategy", "exchange_s", "fft_s", "total_s"], lines[i + 1]
rows = [l.split() for l in lines[i + 2:]]
assert [r[0] for r in rows] == ["alltoall", "xorswap", "pairwise", "random"], rows
for r in rows:
    x, f, t = map(float, r[1:])
    assert 0 < x < t < 1 and abs(x + f - t) < 0.5 * t, r
PY
    # The plan named as a file gives the same table.
    local piped=$output
    run --separate-stderr predict "$srcdir/sim/platforms/fattree-64.xml" plan.json
    assert_success
    assert_equal "$output" "$piped"
}

@test "simulate: fftshard-predict without SimGrid fails in one line" {
    "$FFTSHARD" --dry-run --shape=64x64x64 --ranks=8 --report=plan.json >/dev/null
    run --separate-stderr env PATH=/nonexistent FFTSHARD_SIM="$FFTSHARD_SIM" "$PYTHON_ORACLE" \
        "$FFTSHARD_PREDICT" "$srcdir/sim/platforms/fattree-64.xml" plan.json
    assert_failure 1
    [ "$stderr" = "fftshard-predict: error: SimGrid's smpirun is not installed (not in PATH)" ]
}

@test "simulate: fftshard-predict refuses what is not a dry run's plan (3) and a bad command line (2)" {
    echo '{"schema": "fftshard-report/1"}' >report.json
    run --separate-stderr predict "$srcdir/sim/platforms/fattree-64.xml" report.json
    assert_failure 3
    [ "$stderr" = "fftshard-predict: error: report.json: not a dry run's plan (expected the JSON of fftshard --dry-run --report, schema fftshard-dry-run/1)" ]
    run --separate-stderr predict
    assert_failure 2
    [ "${stderr_lines[1]}" = "Try 'fftshard-predict --help' for more information." ]
}

@test "simulate: fftshard --platform names the command that replaced it" {
    local args
    for args in "--dry-run --shape=64x64x64 --ranks=8" "in.h5 out.h5"; do
        # shellcheck disable=SC2086
        run --separate-stderr "$FFTSHARD" $args --platform="$srcdir/sim/platforms/fattree-64.xml"
        assert_failure 2
        [ "${stderr_lines[0]}" = "fftshard: error: --platform: the prediction is a command of its own: fftshard --dry-run --report=- ... | fftshard-predict $srcdir/sim/platforms/fattree-64.xml" ] ||
            fail "$args: $stderr"
    done
}

# Two ranks on one 2-core host whose link costs nothing (a latency of
# $NODE_LATENCY seconds), as make simulate models this machine: a 64^3 slab's one exchange with the calibration
# file plus the lines given (sim/sim_shm.h); prints "strategy seconds"
# lines, the exchange's.
node_exchange() {
    # make simulate's own platform of this machine (sim/simulate.py).
    PYTHONDONTWRITEBYTECODE=1 "$PYTHON_ORACLE" -c 'import sys
sys.path.insert(0, sys.argv[1])
import simulate
print(simulate.local_platform(2, 2, 1e15, float(sys.argv[2]), 0))' "$srcdir/sim" "${NODE_LATENCY:-1e-12}" >node.xml
    { cat "$srcdir/sim/calibration.txt"; printf '%s\n' "$@"; } >rates.txt
    run --separate-stderr smpirun -no-privatize -platform node.xml -np 2 "$FFTSHARD_SIM" \
        --cfg=smpi/simulate-computation:no --cfg=network/crosstraffic:0 --log=root.thresh:critical \
        --cfg=network/model:CM02 --cfg=smpi/test:1e-7 --shape=64x64x64 --decomp=slab --calibration=rates.txt
    assert_success
    cut -d, -f1,7 --output-delimiter=' ' <<<"$output"
}

# The differences of the exchange times of two node_exchange outputs, checked
# by the Python expression given (d: strategy -> seconds).
differences() {
    "$PYTHON_ORACLE" -c 'import sys
a, b = (dict((w[0], float(w[1])) for w in map(str.split, x.splitlines())) for x in sys.argv[1:3])
d = {s: b[s] - a[s] for s in a}
assert sorted(d) == ["alltoall", "pairwise", "random", "xorswap"], d
assert eval(sys.argv[3]), d' "$1" "$2" "$3"
}

@test "simulate: on a node each receiver copies its messages at receive_copy_rate" {
    local plain copied
    plain=$(node_exchange)
    copied=$(node_exchange "receive_copy_rate 1e8")
    # Each rank receives the other's half of its 2 MiB slab, 1 MiB: 10.5 ms at
    # 1e8 bytes/s; xorswap's three XOR steps each wait for the other rank's
    # copy of the step before: 3 x. (With SimGrid's binding of MPI's calls
    # instead of the simulator's, nothing changes.)
    differences "$plain" "$copied" 'all(abs(d[s] - (3 if s == "xorswap" else 1) * 1048576 / 1e8) < 1e-4 for s in d)'
}

@test "simulate: on a crowded node a wait that blocked costs wake_s more" {
    local plain woken
    # Messages 1 ms late, after the copies that go before them: every
    # strategy waits for them at least once, each wait adding 10 ms.
    export NODE_LATENCY=1e-3
    plain=$(node_exchange)
    woken=$(node_exchange "wake_s 0.01")
    differences "$plain" "$woken" 'all(d[s] > 0.009 and abs(d[s] / 0.01 - round(d[s] / 0.01)) < 0.01 for s in d)'
}
