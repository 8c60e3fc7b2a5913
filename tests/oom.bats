#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Jobs inside a memory cgroup (v1's memory controller, which charges the
# page cache of the files written too) sized by --dry-run's memory per rank:
# the ranks times the estimate, plus LAUNCHER_MIB for mpiexec and its proxy
# (about 2 MiB measured). A job the dry run says fits ends with status 0,
# nothing killed; one given less is refused with status 1 before it
# allocates or writes anything: no temporary left, OUTPUT untouched. The
# 1-D cases are the four-step, whose real peak the estimate once missed
# by up to 3.5 x (one rank, --real --apply).

load helpers

LAUNCHER_MIB=16

setup_file() {
    cd "$BATS_FILE_TMPDIR" || return 1
    mkdata 2 -q --type=float64 --seed=1 4194304 r22.h5
}

setup() {
    [ "$FFTSHARD_SANITIZERS" != yes ] || skip "peak memory under the sanitizers"
    [ "$(id -u)" = 0 ] || skip "needs root to make a memory cgroup"
    # this process's cgroup of the v1 memory controller: the job's is made
    # inside it, so that every limit above still holds
    local rel
    rel=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' /proc/self/cgroup)
    [ -n "$rel" ] && [ -w "/sys/fs/cgroup/memory${rel%/}/cgroup.procs" ] ||
        skip "no cgroup v1 memory controller to make a cgroup in"
    CG="/sys/fs/cgroup/memory${rel%/}/fftshard-oom-$$-$BATS_TEST_NUMBER"
    mkdir "$CG" || skip "cannot make a memory cgroup"
    cd "$BATS_FILE_TMPDIR" || return 1
    rm -f out.h5
}

teardown() {
    # its processes have ended; the page cache it was charged moves up
    [ -z "${CG:-}" ] || rmdir "$CG" 2>/dev/null || true
}

# estimate NP ARGS...: the dry run's memory per rank in bytes, on NP ranks
# (it decides the strategy and the I/O thread as the run does).
estimate() {
    local np=$1
    shift
    fftshard "$np" --dry-run -q --report=- "$@" | python_serial -c 'import json, sys
print(json.load(sys.stdin)["memory_per_rank"]["total_bytes"])'
}

# in_cgroup BYTES CMD...: CMD in the cgroup limited to BYTES.
in_cgroup() {
    echo "$1" >"$CG/memory.limit_in_bytes"
    shift
    sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$@"
}

killed() {
    sed -n 's/^oom_kill //p' "$CG/memory.oom_control"
}

# fits NP ARGS...: the job on NP ranks in a cgroup of NP x the estimate
# (plus the launcher's) ends with status 0, nothing killed, OUTPUT written.
fits() {
    local np=$1 est
    shift
    est=$(estimate "$np" "$@")
    [ -n "$est" ] || fail "no estimate"
    run --separate-stderr in_cgroup $((np * est + LAUNCHER_MIB * 1048576)) \
        "$MPIEXEC" -n "$np" "$FFTSHARD" -q -f "$@" out.h5
    echo "estimate $((est / 1048576)) MiB per rank, $np ranks: status $status, killed $(killed)"
    assert_success
    assert_equal "$(killed)" 0
    [ -s out.h5 ] || fail "no OUTPUT"
    assert_no_temporaries
}

@test "sized by the dry run: 1-D 2^22 float64 --real --apply on 1 rank fits" {
    fits 1 --real --apply=gaussian:2 r22.h5
}

@test "sized by the dry run: 1-D 2^22 float64 --real --apply on 2 ranks fits" {
    fits 2 --real --apply=gaussian:2 r22.h5
}

@test "sized by the dry run: 1-D 2^22 float64 --real --apply on 4 ranks fits" {
    fits 4 --real --apply=gaussian:2 r22.h5
}

@test "given less than the dry run's figure: refused before any work, no temporary, OUTPUT untouched" {
    local est limit sum
    est=$(estimate 1 --real --apply=gaussian:2 r22.h5)
    limit=$((est * 3 / 4))
    echo keep >out.h5
    sum=$(cksum <out.h5)
    # a 1-D transform cannot go out of core: refused as such (fftshard(1), OUT OF CORE)
    run --separate-stderr in_cgroup "$limit" "$MPIEXEC" -n 1 "$FFTSHARD" -f \
        --real --apply=gaussian:2 r22.h5 out.h5
    assert_error "$EXIT_USAGE" "the cgroup's limit" "cannot run a 1-D transform" "--in-memory"
    # kept in memory: the dry run in the same cgroup says it does not fit
    # (status 1, the plan printed), and the run is refused before any work
    run --separate-stderr in_cgroup "$limit" "$MPIEXEC" -n 1 "$FFTSHARD" --dry-run --in-memory \
        --real --apply=gaussian:2 r22.h5 out.h5
    assert_equal "$status" 1
    assert_output --partial "memory per rank"
    run --separate-stderr in_cgroup "$limit" "$MPIEXEC" -n 1 "$FFTSHARD" -f --in-memory \
        --real --apply=gaussian:2 r22.h5 out.h5
    assert_error 1 "not enough memory" "the cgroup's limit" "fftshard --dry-run"
    assert_equal "$(killed)" 0
    assert_equal "$(cksum <out.h5)" "$sum"
    assert_no_temporaries
}

# The spectra's sums per bin are on every rank: 2^22 points have about 2^21
# shells, 112 MiB of the spectrum's sums per rank, which the figure once
# left out (the job was killed).
@test "sized by the dry run: 1-D 2^22 float64 --real --spectrum-only on 2 ranks fits" {
    fits 2 --real --spectrum-only r22.h5
}

@test "sized by the dry run: 1-D 2^22 float64 --real --correlation-function on 1 rank fits" {
    fits 1 --real --correlation-function r22.h5
}
