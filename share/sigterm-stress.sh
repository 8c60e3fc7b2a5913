#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# sigterm-stress.sh [N]: what a batch system's time limit does to fftshard.
#
# Runs a small transform N times (default 100) on 1 to 3 ranks with every
# exchange strategy, a third of the runs over an existing OUTPUT with
# --force, each job in a process group of its own (setsid, as a batch
# script's job step), and sends SIGTERM to the whole group at a random
# moment between 0 and the end of a run (a run's length is measured first).
# After each run it checks:
#   - status 0 only when OUTPUT holds the complete, correct new result
#     (compared with a reference run's dataset by h5diff), or else, when
#     the launcher reported 0 for a job it ended before fftshard had
#     started, that the check of fftshard(1), EXIT STATUS, catches it:
#     OUTPUT is not newer than the job's start;
#   - an existing OUTPUT either byte for byte unchanged or the complete new
#     result, whatever the status; a new OUTPUT either absent or complete;
#   - no temporary left (names containing ".fftshard-tmp-"), and no process
#     of the job left running.
# A job still running 20 s after the signal (MPICH 4.0's mpiexec can hang
# when the signal comes while it starts the ranks) is ended as a user would
# end it, by SIGKILL to mpiexec alone, counted and checked like the others:
# its ranks, waiting in MPI_Init, must then end by themselves. Processes
# still running 10 s after the job ended are reported, then killed.
# It prints one line per violation and a summary line, and exits 1 when
# there was any violation (its work directory is then kept), 2 on a usage
# or set-up error, 0 otherwise.
#
# STRESS_VERBOSE=1 prints a line for every run.
#
# The programs: FFTSHARD, FFTSHARD_MKDATA, MPIEXEC and H5DIFF from the
# environment, else src/fftshard and src/fftshard-mkdata beside this
# script's directory, mpiexec.mpich and h5diff. The work directory is made
# under TMPDIR (default /tmp).
set -u

here=$(cd "$(dirname "$0")" && pwd)
FFTSHARD=${FFTSHARD:-$here/../src/fftshard}
FFTSHARD_MKDATA=${FFTSHARD_MKDATA:-$here/../src/fftshard-mkdata}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
H5DIFF=${H5DIFF:-h5diff}
runs=${1:-100}
case $runs in
'' | *[!0-9]*)
    echo "usage: $0 [N]" >&2
    exit 2
    ;;
esac
# Absolute: the runs happen in the work directory.
[[ $FFTSHARD == /* ]] || FFTSHARD=$PWD/$FFTSHARD
[[ $FFTSHARD_MKDATA == /* ]] || FFTSHARD_MKDATA=$PWD/$FFTSHARD_MKDATA
for prog in "$FFTSHARD" "$FFTSHARD_MKDATA"; do
    [ -x "$prog" ] || {
        echo "sigterm-stress: $prog: not built" >&2
        exit 2
    }
done
command -v setsid >/dev/null && command -v "$H5DIFF" >/dev/null && command -v "$MPIEXEC" >/dev/null || {
    echo "sigterm-stress: needs setsid, $H5DIFF and $MPIEXEC" >&2
    exit 2
}

work=$(mktemp -d "${TMPDIR:-/tmp}/sigterm-stress.XXXXXX") || exit 2
cd "$work" || exit 2

# now_us: the time in microseconds.
now_us() {
    echo "${EPOCHREALTIME/./}"
}

# same_result FILE: FILE's dataset holds the reference result (every
# strategy and rank count rounds a little differently: absolute difference
# at most 1e-9; the attributes name the strategy and the ranks).
same_result() {
    "$H5DIFF" -q -d 1e-9 --exclude-attribute /data ref.h5 "$1" /data /data >/dev/null 2>&1
}

# job_processes: the processes still running this run's programs (they name
# this run's files, so no other job matches).
job_processes() {
    pgrep -f "$work/in.h5" || true
}

setup_failed() {
    echo "sigterm-stress: set-up failed: $1 (kept in $work)" >&2
    exit 2
}

# The input, a reference result and an older OUTPUT (another input's result).
"$MPIEXEC" -n 2 "$FFTSHARD_MKDATA" --quiet 24x20x16 in.h5 || setup_failed "fftshard-mkdata"
"$MPIEXEC" -n 2 "$FFTSHARD_MKDATA" --quiet --seed=2 24x20x16 other.h5 || setup_failed "fftshard-mkdata"
"$MPIEXEC" -n 1 "$FFTSHARD" --quiet "$work/in.h5" ref.h5 || setup_failed "the reference run"
"$MPIEXEC" -n 2 "$FFTSHARD" --quiet other.h5 old.h5 || setup_failed "the older OUTPUT"
same_result old.h5 && setup_failed "the older OUTPUT equals the new result"

# A run's length on 1, 2 and 3 ranks: the mean of two runs.
length_us=(0)
for np in 1 2 3; do
    total=0
    for i in 1 2; do
        t0=$(now_us)
        "$MPIEXEC" -n "$np" "$FFTSHARD" --quiet --force "$work/in.h5" out.h5 || setup_failed "a timed run"
        total=$((total + $(now_us) - t0))
        same_result out.h5 || setup_failed "a timed run's result differs from the reference"
    done
    length_us+=($((total / 2)))
done
rm -f out.h5
echo "sigterm-stress: a run takes $((length_us[1] / 1000)), $((length_us[2] / 1000)) and $((length_us[3] / 1000)) ms on 1, 2 and 3 ranks; $runs runs, SIGTERM to each job's process group at a random moment within that"

strategies=(alltoall random xorswap pairwise auto)
ended0=0 ended143=0 other=0 finished_first=0 launcher_zero=0 hung=0 violations=0
other_statuses=""

violation() {
    echo "sigterm-stress: run $1 ($2): $3" >&2
    violations=$((violations + 1))
}

# end_hung_job PID: kill a hung job's launcher, mpiexec, and nothing else
# (fftshard(1), EXIT STATUS: the ranks then end by themselves).
end_hung_job() {
    kill -KILL "$1" 2>/dev/null
}

# run_job NP ARGS...: one job in its own process group, SIGTERM to the group
# after $delay_us; sets $status and $signalled (no: it had ended).
run_job() {
    local np=$1 job deadline waited=0
    shift
    setsid "$MPIEXEC" -n "$np" "$FFTSHARD" "$@" "$work/in.h5" out.h5 >run.out 2>run.err &
    job=$!
    deadline=$(($(now_us) + delay_us))
    while (($(now_us) < deadline)); do :; done
    signalled=no
    kill -TERM -- "-$job" 2>/dev/null && signalled=yes
    while kill -0 "$job" 2>/dev/null && ((waited < 200)); do
        sleep 0.1
        waited=$((waited + 1))
    done
    if kill -0 "$job" 2>/dev/null; then
        hung=$((hung + 1))
        end_hung_job "$job"
    fi
    status=0
    wait "$job" 2>/dev/null || status=$?
}

# check_run I WHAT EXISTING: the checks above, after run_job.
check_run() {
    local i=$1 what=$2 existing=$3 state left temps waited=0
    while [ -n "$(job_processes)" ] && ((waited < 100)); do
        sleep 0.1
        waited=$((waited + 1))
    done
    left=$(job_processes | tr '\n' ' ')
    if [ -n "$left" ]; then
        violation "$i" "$what" "processes still running 10 s after the job ended: $left"
        # shellcheck disable=SC2086
        kill -KILL $left 2>/dev/null
    fi
    temps=$(find . -name '*.fftshard-tmp-*' | tr '\n' ' ')
    [ -z "$temps" ] || violation "$i" "$what" "status $status, temporaries left: $temps"
    if [ -e out.h5 ] && same_result out.h5; then
        state=new
    elif [ ! -e out.h5 ]; then
        state=absent
    elif [ "$existing" = yes ] && cmp -s old.h5 out.h5; then
        state=unchanged
    else
        state=damaged
    fi
    if [ "$state" = damaged ]; then
        violation "$i" "$what" "status $status and OUTPUT neither the old file nor the new result"
    elif [ "$existing" = yes ] && [ "$state" = absent ]; then
        violation "$i" "$what" "status $status and the existing OUTPUT is gone"
    elif [ "$status" -eq 0 ] && [ "$state" != new ]; then
        # What a job script sees: status 0 and OUTPUT newer than the start.
        if [ -e out.h5 ] && [ out.h5 -nt started ]; then
            violation "$i" "$what" "status 0, OUTPUT newer than the start, but $state"
        elif grep -q '^fftshard: error' run.err; then
            violation "$i" "$what" "status 0 after fftshard's message: $(tr '\n' ' ' <run.err)"
        else
            launcher_zero=$((launcher_zero + 1))
        fi
    fi
    case $status in
    0) ended0=$((ended0 + 1)) ;;
    143) ended143=$((ended143 + 1)) ;;
    *)
        other=$((other + 1))
        other_statuses+=" $status"
        ;;
    esac
}

for ((i = 1; i <= runs; i++)); do
    np=$((1 + RANDOM % 3))
    strategy=${strategies[RANDOM % ${#strategies[@]}]}
    args=(--quiet "--transpose=$strategy")
    existing=no
    rm -rf out.h5 out.h5.shards-*
    if ((i % 3 == 0)); then
        existing=yes
        cp old.h5 out.h5
        args+=(--force)
    fi
    delay_us=$(((RANDOM * 32768 + RANDOM) % (length_us[np] + 1)))
    what="$np ranks, $strategy, existing OUTPUT $existing, signal at $((delay_us / 1000)) ms"
    touch started
    run_job "$np" "${args[@]}"
    [ "$signalled" = yes ] || finished_first=$((finished_first + 1))
    check_run "$i" "$what" "$existing"
    [ -z "${STRESS_VERBOSE:-}" ] || echo "run $i ($what): status $status; $(grep -v pausing run.err | head -1)"
done

summary="sigterm-stress: $runs runs: $ended0 ended 0, $ended143 ended 143, $other other"
[ -n "$other_statuses" ] && summary+=" (statuses:$other_statuses)"
summary+="; $finished_first finished before the signal; $launcher_zero ended 0 by the launcher before fftshard started (OUTPUT not newer than the start); $hung hung in the launcher; $violations violations"
echo "$summary"
if ((violations > 0)); then
    echo "sigterm-stress: kept $work" >&2
    exit 1
fi
cd / && rm -rf "$work"
exit 0
