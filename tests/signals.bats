#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Signals and the status a job script sees: SIGTERM or SIGINT to mpiexec, to
# its process group (what a batch system sends), to one rank or to several;
# during start-up (MPI_Init); one message per job; a file-size limit too
# small for MPI to start; and the SIGTERM acceptance run in short
# (share/sigterm-stress.sh). Every job runs in a process group of its own
# (setsid), as a batch script's job step does.

load helpers

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    job=
}

# A failed test must not leave a paused job behind.
teardown() {
    kill_job
}

# start_job PAUSE NP ARGS...: fftshard on NP ranks in a process group of its
# own, every rank held at PAUSE (FFTSHARD_PAUSE=POINT:SECONDS, a phase or
# start-up); returns once rank 0 says so. $job is mpiexec's process id, also
# the group's; stderr goes to run.err.
start_job() {
    local pause=$1 np=$2
    shift 2
    # not the last job's "pausing" line: the new job may not have opened
    # run.err yet when the wait below starts
    rm -f run.err
    FFTSHARD_PAUSE=$pause setsid "$MPIEXEC" -n "$np" "$FFTSHARD" --quiet "$@" >run.out 2>run.err &
    job=$!
    await_pause run.err "pausing at" "${pause%%:*}"
}

# signal_job SIG TARGET: send SIG to mpiexec, to the job's process group
# (group), to every rank of an NP-rank job (every:NP), to the ranks listed
# (e.g. "1 2") or to a process (pid:PID), then wait for the job (at most
# 60 s); its status goes to $job_status.
signal_job() {
    local sig=$1 target=$2 pids="" r
    case $target in
    mpiexec) pids=$job ;;
    group) pids=-$job ;;
    pid:*) pids=${target#pid:} ;;
    every:*) for ((r = 0; r < ${target#every:}; r++)); do pids+=" $(rank_pid "$job" "$r")"; done ;;
    *) for r in $target; do pids+=" $(rank_pid "$job" "$r")"; done ;;
    esac
    [ -n "${pids// /}" ] || skip "cannot find the ranks among mpiexec's processes"
    # shellcheck disable=SC2086
    kill "-$sig" -- $pids
    end_job
}

# assert_interrupted SIG PHASE RANK [TARGET]: the job ended with 128 + SIG
# and said so in exactly one line on stderr (besides the pause), from RANK.
# TARGET mpiexec or group: the signal reached the launcher itself, and Open
# MPI's mpirun (4.1) then ends with its own status, 1, whatever its ranks
# do (fftshard(1), LAUNCHERS).
assert_interrupted() {
    local sig=$1 phase=$2 rank=$3 target=${4:-} want
    want=$((128 + $(kill -l "$sig")))
    case $MPI_LAUNCHER_KIND:$target in
    # (and it passes SIGINT on to its ranks as SIGTERM)
    openmpi:mpiexec | openmpi:group) want=1 sig=TERM ;;
    esac
    grep -v "pausing at" run.err >err.txt || true
    [ "$job_status" -eq "$want" ] || fail "SIG$sig in $phase: status $job_status, not $want: $(cat err.txt)"
    [ "$(wc -l <err.txt)" -eq 1 ] || fail "SIG$sig in $phase: not one line: $(cat err.txt)"
    grep -q "^fftshard: error: interrupted by SIG$sig during the $phase phase (rank $rank): the temporary output was removed$" err.txt ||
        fail "SIG$sig in $phase: not the message of rank $rank: $(cat err.txt)"
}

# bats test_tags=openmpi
@test "SIGTERM or SIGINT to mpiexec or its process group: the job ends with 128 + signal, on 1, 2 and 3 ranks" {
    oracle make in.h5 12x10x8:complex128
    fftshard 2 --quiet in.h5 old.h5
    local before c np target sig phase force
    before=$(checksum old.h5)
    # NP TARGET SIGNAL PHASE FORCE. MPICH's launcher passes a signal to
    # every rank and then reported 0 for a rank that ended of it: on 1 rank
    # a killed run always looked like a success.
    for c in "1 mpiexec TERM fft no" "1 group INT fft yes" "2 group TERM exchange yes" \
        "3 mpiexec INT write no"; do
        read -r np target sig phase force <<<"$c"
        rm -f new.h5
        if [ "$force" = yes ]; then
            start_job "$phase:30" "$np" --force in.h5 old.h5
        else
            start_job "$phase:30" "$np" in.h5 new.h5
        fi
        signal_job "$sig" "$target"
        assert_interrupted "$sig" "$phase" 0 "$target"
        [ ! -e new.h5 ] || fail "$c: OUTPUT created"
        assert_equal "$(checksum old.h5)" "$before"
        assert_no_temporaries
    done
}

# bats test_tags=openmpi
@test "SIGTERM or SIGINT to one rank or to every rank: the job ends with 128 + signal" {
    oracle make in.h5 12x10x8:complex128
    local c np target sig phase speaker
    # NP TARGET SIGNAL PHASE SPEAKER: the launcher used to report 9 (a rank
    # it killed) or 15 (a rank that died of the signal).
    for c in "2 0 TERM read 0" "3 every:3 INT exchange 0" "3 2 TERM fft 2"; do
        read -r np target sig phase speaker <<<"$c"
        start_job "$phase:30" "$np" in.h5 new.h5
        signal_job "$sig" "$target"
        assert_interrupted "$sig" "$phase" "$speaker"
        [ ! -e new.h5 ] || fail "$c: OUTPUT created"
        assert_no_temporaries
    done
}

# rank0_held MPIEXEC_PID: the process id of rank 0 once it holds SIGINT
# (its SigBlk in /proc shows signal 2), or after 0.1 s whatever it holds:
# fftshard's first instruction holds the signals; without that the signal
# lands in MPI_Init or before.
rank0_held() {
    local pid held deadline
    pid=$(rank_pid "$1" 0)
    [ -n "$pid" ] || return
    deadline=$((${EPOCHREALTIME/./} + 100000))
    while ((${EPOCHREALTIME/./} < deadline)); do
        held=$(awk '/^SigBlk:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
        [ -n "$held" ] && (((0x$held & 2) != 0)) && break
    done
    echo "$pid"
}

# bats test_tags=openmpi
@test "a signal during start-up (MPI_Init) waits for it: 128 + signal, one message, no crash of the other ranks" {
    oracle make in.h5 12x10x8:complex128
    local attempt pid0
    # SIGINT to rank 0 as soon as it runs: the other ranks used to crash in
    # MPI_Init (SIGSEGV) and the job ended 9, 11 or 255 without a message.
    for attempt in 1 2; do
        setsid "$MPIEXEC" -n 3 "$FFTSHARD" --quiet in.h5 new.h5 >run.out 2>run.err &
        job=$!
        pid0=$(rank0_held "$job")
        [ -n "$pid0" ] || skip "cannot find rank 0 among mpiexec's processes"
        signal_job INT "pid:$pid0"
        assert_interrupted INT start-up 0
        [ ! -e new.h5 ] || fail "OUTPUT created"
    done
    # Held on purpose at the end of start-up (MPI_Init done, the signals not
    # yet let through): to mpiexec, and to every rank.
    start_job start-up:2 2 in.h5 new.h5
    signal_job TERM mpiexec
    assert_interrupted TERM start-up 0 mpiexec
    start_job start-up:2 3 in.h5 new.h5
    signal_job INT every:3
    assert_interrupted INT start-up 0
    [ ! -e new.h5 ] || fail "OUTPUT created"
    assert_no_temporaries
}

@test "several ranks signalled at once: one message, from the lowest of them, never mixed" {
    oracle make in.h5 12x10x8:complex128
    local attempt
    # Ranks 1 and 2 without rank 0 (a signal to some nodes of a job): each
    # used to print its line, at times one inside the other.
    for attempt in 1 2 3; do
        start_job fft:30 3 in.h5 new.h5
        signal_job TERM "1 2"
        assert_interrupted TERM fft 1
    done
    start_job exchange:30 4 in.h5 new.h5
    signal_job INT every:4
    assert_interrupted INT exchange 0
    assert_no_temporaries
}

# bats test_tags=openmpi
@test "a file-size limit too small for MPI to start: exit 1 and one line, not death by SIGXFSZ" {
    oracle make in.h5 6x5x4:complex128
    local np
    for np in 1 2; do
        run --separate-stderr bash -c "ulimit -f 2048 && exec '$MPIEXEC' -n $np '$FFTSHARD' in.h5 out.h5"
        if [ "$MPI_LAUNCHER_KIND" = openmpi ]; then
            # Before MPI_Init no rank can ask mpirun to end the job quietly:
            # it adds its report of a rank's nonzero exit (fftshard(1)).
            assert_equal "$status" "$EXIT_RUNTIME"
            printf '%s\n' "${stderr_lines[@]}" |
                grep -Fqx "fftshard: error: file size limit (ulimit -f) of 2048 KiB: too small for MPI to start, which needs 8192 KiB" ||
                fail "no message: $stderr"
            run grep -c '^fftshard: ' <<<"$stderr"
            assert_output 1
        else
            assert_error "$EXIT_RUNTIME" "file size limit (ulimit -f) of 2048 KiB" "too small for MPI to start"
        fi
        [ ! -e out.h5 ] || fail "OUTPUT was created"
    done
    # A limit MPI starts under still only refuses a result that does not fit.
    run --separate-stderr bash -c "ulimit -f 8192 && exec '$MPIEXEC' -n 2 '$FFTSHARD' --quiet in.h5 out.h5"
    assert_success
}

# bats test_tags=openmpi
@test "--transpose=auto out of memory: its error line once" {
    huge_input huge.h5
    run --separate-stderr fftshard 2 --transpose=auto huge.h5 out.h5
    assert_error "$EXIT_RUNTIME" "out of memory"
    assert_no_temporaries
}

@test "SIGTERM to the job's process group at random moments: status 0 only with the whole result, nothing left (sigterm-stress.sh 10)" {
    run env TMPDIR="$BATS_TEST_TMPDIR" FFTSHARD="$FFTSHARD" FFTSHARD_MKDATA="$FFTSHARD_MKDATA" \
        MPIEXEC="$MPIEXEC" "$srcdir/share/sigterm-stress.sh" 10
    [ "$status" -eq 0 ] || fail "$output"
    [[ $output == *"10 runs: "*"; 0 violations" ]] || fail "$output"
}
