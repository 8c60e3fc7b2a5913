#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Out of core in a memory cgroup (v1, /sys/fs/cgroup/memory; it counts the
# page cache): 384x320x256 complex128 (500 MB) on 2 ranks in 256 MiB. The
# in-memory run is killed by the OOM killer; the run that goes out of core
# by itself under --mem-per-rank=96M finishes, equal to the in-memory run's
# file made outside the cgroup, with no scratch left. Needs root and
# cgroup v1's memory controller (skips without); long: make check-long.
# Also the real power spectrum of a 250 MiB float64 field at
# --mem-per-rank=64M, and --vector=curl of three 256^3 float64 components,
# out of core by themselves, against the in-memory runs' files.

load helpers

setup_file() {
    [ -w /sys/fs/cgroup/memory ] || return 0
    cd "$BATS_FILE_TMPDIR" || return 1
    mkdata 2 -q 384x320x256 a.h5
    "$MPIEXEC" -n 2 "$FFTSHARD" --quiet --in-memory a.h5 m.h5
}

setup() {
    [ -w /sys/fs/cgroup/memory ] || skip "needs root and cgroup v1's memory controller"
    cd "$BATS_FILE_TMPDIR" || return 1
    CG=/sys/fs/cgroup/memory/fftshard-test-$$-$BATS_TEST_NUMBER
    mkdir "$CG"
    echo 256M >"$CG/memory.limit_in_bytes"
}

teardown() {
    [ -n "${CG:-}" ] && [ -d "$CG" ] && rmdir "$CG" 2>/dev/null
    return 0
}

# in_cgroup CMD...: CMD in the test's cgroup.
in_cgroup() {
    sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$@"
}

@test "256 MiB cgroup: the in-memory run is refused before any work, the out-of-core run finishes with the same result" {
    run --separate-stderr in_cgroup "$MPIEXEC" -n 2 "$FFTSHARD" --quiet --in-memory -f a.h5 killed.h5
    assert_error 1 "not enough memory" "the cgroup's limit"
    [ "$(sed -n 's/^oom_kill //p' "$CG/memory.oom_control")" -eq 0 ] || fail "OOM kill: $stderr"
    [ ! -e killed.h5 ] || fail "a refused run left OUTPUT"
    run --separate-stderr in_cgroup "$MPIEXEC" -n 2 "$FFTSHARD" --mem-per-rank=96M --report=r.json a.h5 o.h5
    assert_success
    [[ $stderr == *"out of core: the in-memory plan needs "*"more than 96.0 MiB (--mem-per-rank)"* ]] || fail "$stderr"
    # none of its own left (the killed run's, of killed.h5, a run writing that removes)
    [ -z "$(temporaries | grep -v '^./.killed.h5.fftshard-tmp-')" ] || fail "left: $(temporaries)"
    rm -f .killed.h5.fftshard-tmp-*
    run python_serial "$srcdir/tests/ooc_same.py" o.h5 m.h5 1e-12
    assert_output same
    # and an independent 1-D check along each axis on sampled lines
    run python_serial -c 'import h5py, numpy as np
a = h5py.File("a.h5")["data"]; o = h5py.File("o.h5")["data"]
x = a[()]
ok = True
for ax in range(3):
    x = np.fft.fft(x, axis=ax)
for (i, j) in ((0, 0), (17, 301), (383, 5)):
    ok &= np.abs(o[i, j, :] - x[i, j, :]).max() <= 1e-10 * np.abs(x[i, j, :]).max()
    ok &= np.abs(o[i, :, j % 256] - x[i, :, j % 256]).max() <= 1e-10 * np.abs(x[i, :, j % 256]).max()
    ok &= np.abs(o[:, j % 320, i % 256] - x[:, j % 320, i % 256]).max() <= 1e-10 * np.abs(x[:, j % 320, i % 256]).max()
print(bool(ok))'
    assert_output True
    rm -f o.h5 r.json
}

# by_itself_in_cgroup MEM SAME ARGS... OUT: fftshard ARGS... OUT on 2 ranks in
# the test's cgroup with --mem-per-rank=MEM (and --report=r.json), which goes
# out of core by itself and says so: no OOM kill, nothing of its own left,
# OUT the in-memory run's file SAME.
by_itself_in_cgroup() {
    local mem=$1 same=$2
    shift 2
    run --separate-stderr in_cgroup "$MPIEXEC" -n 2 "$FFTSHARD" --verbose --mem-per-rank="$mem" \
        --report=r.json "$@"
    assert_success
    [[ $stderr == *"out of core: the in-memory plan needs "*"more than ${mem%M}.0 MiB (--mem-per-rank)"* ]] ||
        fail "$stderr"
    [ "$(sed -n 's/^oom_kill //p' "$CG/memory.oom_control")" -eq 0 ] || fail "OOM kill: $stderr"
    assert_no_temporaries
    run python_serial "$srcdir/tests/ooc_same.py" "${!#}" "$same" 1e-12
    assert_output same
}

@test "256 MiB cgroup: the real power spectrum of a 250 MiB float64 field with --mem-per-rank=64M, the in-memory spectrum" {
    mkdata 2 -q --type=float64 400x320x256 r.h5
    "$MPIEXEC" -n 2 "$FFTSHARD" --quiet --in-memory --real --power-spectrum --spectrum-only r.h5 pm.h5
    by_itself_in_cgroup 64M pm.h5 --real --power-spectrum --spectrum-only r.h5 po.h5
    rm -f r.h5 pm.h5 po.h5
}

@test "256 MiB cgroup: --vector=curl of three 256^3 components out of core by itself, the in-memory run's file" {
    python_serial -c 'import h5py, numpy as np
r = np.random.default_rng(7)
with h5py.File("u.h5", "w") as f:
    for n in "xyz":
        f[n] = r.standard_normal((256, 256, 256))'
    "$MPIEXEC" -n 2 "$FFTSHARD" --quiet --in-memory --real --vector=curl u.h5:/x u.h5:/y u.h5:/z vm.h5
    by_itself_in_cgroup 96M vm.h5 --real --vector=curl u.h5:/x u.h5:/y u.h5:/z vo.h5
    # the peak within the plan's memory per rank, and the cgroup's
    run python_serial -c 'import json
r = json.load(open("r.json"))
plan = max(d["out_of_core"]["memory_per_rank"]["total_bytes"] for d in r["datasets"])
peak = r["memory"]["peak_bytes_max"]
print(peak <= plan <= 96 * 2**20, round(peak / 2**20, 1), round(plan / 2**20, 1))'
    [[ $output == "True "* ]] || fail "peak, plan (MiB): $output"
    rm -f u.h5 vm.h5 vo.h5
}
