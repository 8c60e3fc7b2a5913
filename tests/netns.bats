#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Runs across hosts: 4 ranks on 2 "hosts" (network namespaces joined by a
# switch, share/netns-hosts.sh), started by hydra through a launcher that
# enters a host as ssh would, talking over TCP (UCX_TLS=tcp,self on each
# host's eth0). Every strategy, slabs and pencils, checked against numpy;
# each run must end within 3 s of the same run over shared memory on one
# host (no stall in MPI_Finalize). Needs root and ip netns; not part of
# make check: `make check-net` (share/run-tests.sh, part net).

load helpers

NETNS_HOSTS=$srcdir/share/netns-hosts.sh
# How much longer than the same run over shared memory a run across the
# hosts may take.
SLACK_MS=3000

# Why the tests skip, or empty: this bats cannot skip in setup_file, so
# setup_file notes it and every test's setup skips.
hosts_missing() {
    [ "$(id -u)" -eq 0 ] || { echo "network namespaces need root" && return; }
    command -v ip >/dev/null || { echo "ip (iproute2) is not installed" && return; }
    mpichversion 2>/dev/null | grep -q 'ch4:ucx' || echo "this MPICH does not use UCX"
}

setup_file() {
    export NETNS_SKIP NETNS_NAME=
    NETNS_SKIP=$(hosts_missing)
    [ -z "$NETNS_SKIP" ] || return 0
    # unique per run of this file: two runs can be up at once
    local name="fs$$-${RANDOM}" why
    if ! why=$("$NETNS_HOSTS" up "$name" 2 2>&1); then
        NETNS_SKIP="cannot make network namespaces here: $why"
        return 0
    fi
    NETNS_NAME=$name
    export NETNS_LAUNCHER
    NETNS_LAUNCHER=$("$NETNS_HOSTS" launcher "$NETNS_NAME")
    cd "$BATS_FILE_TMPDIR" || return 1
    oracle make slab.h5 12x10x6:complex128 -- pencil.h5 8x6x4:complex128 >/dev/null
}

teardown_file() {
    if [ -n "${NETNS_NAME:-}" ]; then
        "$NETNS_HOSTS" down "$NETNS_NAME"
    fi
}

setup() {
    [ -z "$NETNS_SKIP" ] || skip "$NETNS_SKIP"
    cd "$BATS_TEST_TMPDIR" || return 1
}

# now_ms: the wall clock in milliseconds.
now_ms() {
    local us=${EPOCHREALTIME/./}
    echo $((us / 1000))
}

# across OUT OPTIONS...: fftshard on 4 ranks, 2 on each host, over TCP,
# mpiexec started on host 1; its time goes to $across_ms. The input is the
# option's decomposition's file.
across() {
    local out=$1 t0
    shift
    t0=$(now_ms)
    run --separate-stderr "$NETNS_HOSTS" exec "$NETNS_NAME" 10.237.0.1 \
        env UCX_TLS=tcp,self UCX_NET_DEVICES=eth0 UCX_LOG_LEVEL=info \
        timeout 120 "$MPIEXEC" -launcher ssh -launcher-exec "$NETNS_LAUNCHER" -iface eth0 \
        -hosts 10.237.0.1:2,10.237.0.2:2 -n 4 "$FFTSHARD" --quiet "$@" "$out"
    across_ms=$(($(now_ms) - t0))
    [ "$status" -eq 0 ] || fail "across the hosts: status $status: $stderr"
    # UCX says which transports each endpoint uses: TCP on the hosts'
    # interface, shared memory never
    [[ $output$stderr == *"tag(tcp/eth0)"* ]] || fail "no TCP endpoint on eth0: $stderr"
    [[ $output$stderr != *"sysv/"* && $output$stderr != *"posix/"* && $output$stderr != *"cma/"* ]] ||
        fail "shared memory used between the hosts: $stderr"
}

# local_shm OUT OPTIONS...: the same run on one host over shared memory;
# its time goes to $local_ms.
local_shm() {
    local out=$1 t0
    shift
    t0=$(now_ms)
    run --separate-stderr timeout 120 "$MPIEXEC" -n 4 "$FFTSHARD" --quiet "$@" "$out"
    local_ms=$(($(now_ms) - t0))
    [ "$status" -eq 0 ] || fail "over shared memory: status $status: $stderr"
}

# both STRATEGY: slabs and pencils across the hosts and locally, timed and
# queued for numpy. On a busy machine the same run over shared memory varies
# by seconds, so a pair over the limit is run once more: a stall (without
# the watchdog, for ever) fails both times.
both() {
    local s=$1 decomp in extra try stalled
    for decomp in slab pencil; do
        in=$BATS_FILE_TMPDIR/$decomp.h5
        extra=()
        [ "$decomp" = pencil ] && extra=(--decomp=pencil --grid=2x2)
        for try in 1 2; do
            rm -f "local_$decomp.h5" "net_$decomp.h5"
            local_shm "local_$decomp.h5" --transpose="$s" "${extra[@]}" "$in"
            across "net_$decomp.h5" --transpose="$s" "${extra[@]}" "$in"
            stalled=
            [[ $stderr == *"MPI_Finalize did not return"* ]] && stalled=" (watchdog in MPI_Finalize)"
            echo "# $s $decomp: ${across_ms} ms across the hosts$stalled, ${local_ms} ms locally" >&3
            ((across_ms <= local_ms + SLACK_MS)) && break
            [ "$try" -eq 1 ] ||
                fail "$s, $decomp: $across_ms ms across the hosts, $local_ms ms over shared memory"
        done
        CASES+=("in=$in out=net_$decomp.h5 ranks=4 transpose=$s")
    done
    check_all
}

@test "across 2 hosts over TCP: alltoall, slabs and pencils" {
    both alltoall
}

@test "across 2 hosts over TCP: random, slabs and pencils" {
    both random
}

@test "across 2 hosts over TCP: xorswap, slabs and pencils" {
    both xorswap
}

@test "across 2 hosts over TCP: pairwise, slabs and pencils" {
    both pairwise
}

@test "the hosts are really apart: ranks 0 and 1 on host 1, ranks 2 and 3 on host 2" {
    run "$NETNS_HOSTS" exec "$NETNS_NAME" 10.237.0.1 timeout 60 "$MPIEXEC" \
        -launcher ssh -launcher-exec "$NETNS_LAUNCHER" -iface eth0 \
        -hosts 10.237.0.1:2,10.237.0.2:2 -n 4 \
        sh -c 'echo "$PMI_RANK $(ip -o -4 addr show dev eth0 | awk "{ print \$4 }")"'
    assert_success
    assert_equal "$(sort <<<"$output")" "0 10.237.0.1/24
1 10.237.0.1/24
2 10.237.0.2/24
3 10.237.0.2/24"
}
