#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# fixture.sh: a one-node Slurm cluster for tests/slurm.bats, on this machine.
#
#   fixture.sh start DIR   start it, with its configuration and state in DIR
#                          (made anew); DIR/env then sets SLURM_CONF for the
#                          clients (sbatch, srun, squeue)
#   fixture.sh stop DIR    stop what start started and undo what it changed
#
# Needs root and Debian's slurm-wlm and munge. What a sandboxed machine
# lacks is supplied here and taken back at stop, each only when missing: a
# line in /etc/hosts for the host name (slurmd looks itself up), tmpfs on
# /dev/shm (MPI's shared memory) and on /sys/fs/cgroup with cgroup v1
# (slurmd reads the cgroup version there even when it tracks processes
# without cgroups: proctrack/linuxproc, task/none), and munged (Slurm's
# authentication). What start did is listed in DIR/undo, one action a line,
# for stop. The node has 8 CPUs and the machine's memory, one partition,
# processes killed 5 s after the SIGTERM of a time limit (KillWait).
set -eu

usage() {
    echo "usage: $0 start|stop DIR" >&2
    exit 2
}
[ $# -eq 2 ] || usage
action=$1
dir=$2

say() {
    echo "slurm-fixture: $*" >&2
}

# wait_for SECONDS COMMAND...: until COMMAND succeeds; 1 after SECONDS.
wait_for() {
    n=$(($1 * 10))
    shift
    while ! "$@" >/dev/null 2>&1; do
        n=$((n - 1))
        [ "$n" -gt 0 ] || return 1
        sleep 0.1
    done
}

start() {
    [ "$(id -u)" -eq 0 ] || { say "needs root"; exit 77; }
    for cmd in slurmctld slurmd sbatch munged; do
        command -v "$cmd" >/dev/null 2>&1 || { say "no $cmd (install slurm-wlm and munge)"; exit 77; }
    done
    rm -rf "$dir"
    mkdir -p "$dir/state" "$dir/spool" "$dir/log"
    : >"$dir/undo"
    host=$(hostname -s)

    if ! getent hosts "$host" >/dev/null 2>&1; then
        echo "127.0.1.1 $host # slurm-fixture" >>/etc/hosts
        echo "hosts" >>"$dir/undo"
    fi
    if ! mountpoint -q /dev/shm 2>/dev/null; then
        mkdir -p /dev/shm
        mount -t tmpfs -o mode=1777 tmpfs /dev/shm
        echo "umount /dev/shm" >>"$dir/undo"
    fi
    if [ ! -d /sys/fs/cgroup/freezer ] && [ ! -f /sys/fs/cgroup/cgroup.controllers ]; then
        mount -t tmpfs -o mode=755 tmpfs /sys/fs/cgroup
        mkdir -p /sys/fs/cgroup/freezer
        mount -t cgroup -o freezer cgroup /sys/fs/cgroup/freezer 2>/dev/null || true
        echo "umount -R /sys/fs/cgroup" >>"$dir/undo"
    fi

    # munge: the one of this machine when it answers, else one started here
    if ! (munge -n | unmunge) >/dev/null 2>&1; then
        if [ ! -s /etc/munge/munge.key ]; then
            mkdir -p /etc/munge
            dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null
            chown munge:munge /etc/munge/munge.key
            chmod 400 /etc/munge/munge.key
            echo "rm -f /etc/munge/munge.key" >>"$dir/undo"
        fi
        mkdir -p /run/munge /var/lib/munge /var/log/munge
        chown munge:munge /run/munge /var/lib/munge /var/log/munge
        runuser -u munge -- munged --force
        echo "kill munged /run/munge/munged.pid" >>"$dir/undo"
        wait_for 10 sh -c 'munge -n | unmunge' || { say "munged did not start"; exit 1; }
    fi

    # 8 CPUs whatever the machine has (the tests run up to 4 ranks and
    # batch jobs beside them; config_overrides keeps the node from being
    # drained for claiming more than it has)
    cpus=8
    mem=$(awk '/^MemTotal:/ { print int($2 / 1024 * 0.9) }' /proc/meminfo)
    cat >"$dir/slurm.conf" <<EOF
ClusterName=fixture
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=5
OverTimeLimit=0
MinJobAge=600
InactiveLimit=0
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF
    echo "CgroupPlugin=cgroup/v1" >"$dir/cgroup.conf"
    echo "export SLURM_CONF='$dir/slurm.conf'" >"$dir/env"
    SLURM_CONF=$dir/slurm.conf
    export SLURM_CONF

    slurmctld -f "$SLURM_CONF"
    echo "kill slurmctld $dir/slurmctld.pid" >>"$dir/undo"
    slurmd -f "$SLURM_CONF"
    echo "kill slurmd $dir/slurmd.pid" >>"$dir/undo"
    if ! wait_for 60 sh -c 'sinfo -h -o %T | grep -Eq "^(idle|mixed|allocated)"'; then
        say "the node did not come up; its logs follow"
        tail -n 20 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
        exit 1
    fi
}

# kill_pidfile NAME FILE: end the daemon whose pid FILE holds, and wait.
kill_pidfile() {
    [ -s "$2" ] || return 0
    pid=$(cat "$2")
    kill -TERM "$pid" 2>/dev/null || return 0
    wait_for 20 sh -c "! kill -0 $pid" || kill -KILL "$pid" 2>/dev/null || true
}

stop() {
    [ -f "$dir/undo" ] || return 0
    if [ -f "$dir/env" ]; then
        SLURM_CONF=$dir/slurm.conf
        export SLURM_CONF
        scancel --full --quiet --user=root 2>/dev/null || true
        wait_for 15 sh -c '[ -z "$(squeue -h -o %i 2>/dev/null)" ]' || true
    fi
    # the last action first
    tac "$dir/undo" | while read -r what arg1 arg2; do
        case $what in
        kill) kill_pidfile "$arg1" "$arg2" ;;
        umount) umount $arg1 ${arg2:-} 2>/dev/null || umount -l "${arg2:-$arg1}" 2>/dev/null || true ;;
        hosts) sed -i '/ # slurm-fixture$/d' /etc/hosts ;;
        rm) rm -f "$arg2" ;;
        esac
    done
    rm -rf "$dir"
}

case $action in
start) start ;;
stop) stop ;;
*) usage ;;
esac
