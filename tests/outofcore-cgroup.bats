#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Out of core in a memory cgroup (v1, /sys/fs/cgroup/memory; it counts the
# page cache): 384x320x256 complex128 (500 MB) on 2 ranks in 256 MiB. The
# in-memory run is killed by the OOM killer; the run that goes out of core
# by itself under --mem-per-rank=96M finishes, equal to the in-memory run's
# file made outside the cgroup, with no scratch left. Needs root and
# cgroup v1's memory controller (skips without); long: make check-long.

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

@test "256 MiB cgroup: the in-memory run is OOM-killed, the out-of-core run finishes with the same result" {
    run in_cgroup "$MPIEXEC" -n 2 "$FFTSHARD" --quiet --in-memory -f a.h5 killed.h5
    [ "$status" -ne 0 ] || fail "the in-memory run fitted in 256 MiB"
    [ "$(sed -n 's/^oom_kill //p' "$CG/memory.oom_control")" -gt 0 ] || fail "no OOM kill: $output"
    [ ! -e killed.h5 ] || fail "a killed run left OUTPUT"
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
