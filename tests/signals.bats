#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Signals and the status a job script sees: SIGTERM or SIGINT to mpiexec, to
# its process group (what a batch system sends), to one rank or to several;
# during start-up (MPI_Init); twice, and through GNU timeout; a launcher that
# vanishes without ending its ranks; one message per job; a file-size limit
# too small for MPI to start; and the SIGTERM acceptance run in short
# (share/sigterm-stress.sh). Every job runs in a process group of its own
# (setsid), as a batch script's job step does.

load helpers

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    job=
    job_pids=
}

# A failed test must not leave a paused job behind, nor ranks whose
# launcher is gone ($job_pids).
teardown() {
    kill_job
    if [ -n "$job_pids" ]; then
        # shellcheck disable=SC2086
        kill -KILL $job_pids 2>/dev/null || true
    fi
}

# running PID...: those of the processes PID that still run (a zombie has
# ended: its parent may never wait for it).
running() {
    local pids
    # shellcheck disable=SC2048,SC2086
    pids=$(printf '%s\n' $* | paste -sd, -)
    [ -n "$pids" ] || return 0
    ps -o pid=,stat= -p "$pids" 2>/dev/null | awk '$2 !~ /^Z/ {print $1}' | tr '\n' ' '
}

# await_end SECONDS PID...: wait until none of the processes PID runs; fail
# naming those still running after SECONDS.
await_end() {
    local deadline=$((${EPOCHREALTIME/./} + $1 * 1000000))
    shift
    while [ -n "$(running "$@")" ]; do
        ((${EPOCHREALTIME/./} < deadline)) || return 1
        sleep 0.1
    done
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
    # Without the suite's tests/mpi_yield.so: MPI_Init as long as users see
    # it on a loaded node, so that the signal finds it.
    for attempt in 1 2; do
        env -u LD_PRELOAD setsid "$MPIEXEC" -n 3 "$FFTSHARD" --quiet in.h5 new.h5 >run.out 2>run.err &
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

# hung_start_up NP: a job whose mpiexec hangs in start-up, as MPICH 4.0's
# does when a signal reaches it before its proxy has started the ranks: the
# proxy passes the signal on to no rank, starts them, and then only waits
# for them to end, while they wait in MPI_Init for its answers. The signal
# comes first every time: mpiexec runs from a directory of its own, whose
# hydra_pmi_proxy (hydra takes the proxy from mpiexec's directory) starts
# the real one only once mpiexec has the SIGTERM. $job is mpiexec; $ranks
# the ranks; $job_pids the proxy, the ranks and rank 0's probe helper.
hung_start_up() {
    local np=$1 real name deadline proxy r
    real=$(readlink -f "$(command -v "$MPIEXEC")")
    name=$(basename "$MPIEXEC")
    [ -x "$(dirname "$real")/hydra_pmi_proxy" ] || skip "no hydra_pmi_proxy beside $real"
    mkdir -p hydra
    ln -sf "$real" "hydra/$name"
    printf '#!/bin/sh\ntouch "%s/proxy.started"\nwhile [ ! -e "%s/proxy.go" ]; do sleep 0.05; done\nexec "%s/hydra_pmi_proxy" "$@"\n' \
        "$PWD" "$PWD" "$(dirname "$real")" >hydra/hydra_pmi_proxy
    chmod +x hydra/hydra_pmi_proxy
    rm -f proxy.started proxy.go
    setsid "$PWD/hydra/$name" -n "$np" "$FFTSHARD" --quiet in.h5 new.h5 >run.out 2>run.err &
    job=$!
    deadline=$((${EPOCHREALTIME/./} + 10000000))
    until [ -e proxy.started ]; do
        ((${EPOCHREALTIME/./} < deadline)) || skip "hydra did not take its proxy from mpiexec's directory"
        sleep 0.05
    done
    kill -TERM "$job"
    # mpiexec passes it on to the proxy (its socket holds it), then the
    # proxy starts
    sleep 0.5
    touch proxy.go
    proxy=$(ps -o pid= --ppid "$job" | tr -d ' ')
    [ -n "$proxy" ] || fail "no proxy: $(cat run.err)"
    deadline=$((${EPOCHREALTIME/./} + 10000000))
    while ranks=$(ps -o pid= --ppid "$proxy" | xargs); [ "$(wc -w <<<"$ranks")" -lt "$np" ]; do
        ((${EPOCHREALTIME/./} < deadline)) || fail "the proxy did not start $np ranks"
        sleep 0.05
    done
    # and the ranks are in MPI_Init, for good
    sleep 1
    kill -0 "$job" 2>/dev/null || fail "mpiexec did not hang: $(cat run.err)"
    job_pids="$proxy $ranks"
    for r in $ranks; do job_pids+=" $(ps -o pid= --ppid "$r" | xargs)"; done
}

# bats test_tags=sanitized
@test "mpiexec killed while it hangs in start-up: its proxy, every rank and the probe helper end" {
    mpich_only "hydra's proxy and its hang in start-up"
    oracle make in.h5 12x10x8:complex128
    local ranks
    # They waited in MPI_Init for the proxy, which waited for them, with
    # SIGTERM held: 28 minutes until SIGKILL. Each rank now sees its
    # launcher gone (the proxy's connection to mpiexec, which the ranks
    # inherit, hangs up) and ends as on SIGTERM.
    hung_start_up 3
    kill -KILL "$job"
    wait "$job" 2>/dev/null || true
    job=
    await_end 10 $job_pids || fail "still running 10 s after mpiexec was killed: $(running $job_pids)"
    [ ! -e new.h5 ] || fail "OUTPUT created"
    assert_no_temporaries
}

@test "a signal held in a start-up that hangs acts 10 s later: the ranks end, mpiexec with them" {
    mpich_only "hydra's proxy and its hang in start-up"
    oracle make in.h5 12x10x8:complex128
    local ranks t0 waited
    # SIGTERM to the ranks themselves (the launcher does not pass on
    # another): held until MPI_Init returns, which it never does.
    hung_start_up 2
    t0=${EPOCHREALTIME/./}
    # shellcheck disable=SC2086
    kill -TERM $ranks
    await_end 20 $ranks || fail "still running 20 s after SIGTERM: $(running $ranks)"
    waited=$(((${EPOCHREALTIME/./} - t0) / 1000000))
    ((waited >= 9)) || fail "the held SIGTERM acted after $waited s, before MPI_Init had 10 s"
    # the proxy ends with its ranks, then mpiexec
    await_end 10 $job_pids "$job" || fail "still running once the ranks ended: $(running $job_pids "$job")"
    [ ! -e new.h5 ] || fail "OUTPUT created"
    assert_no_temporaries
}

# assert_ended_once WANT WHAT: the job ended with status WANT (in
# $job_status); within 5 s none of the ranks $ranks runs (a launcher that
# vanished leaves them to end by themselves, a tenth of a second later),
# and then one line of fftshard said so (besides the pause and, under Open
# MPI, mpirun's "Forwarding signal 18 to job" for a SIGCONT: fftshard(1),
# Launchers), nothing was created and no temporary left.
assert_ended_once() {
    local want=$1 what=$2
    # shellcheck disable=SC2086
    await_end 5 $ranks || fail "$what: ranks still running: $(running $ranks)"
    grep -v "pausing at" run.err | grep -Ev '^mpirun[.a-z]*: Forwarding signal 18 to job$' >err.txt || true
    [ "$MPI_LAUNCHER_KIND" = openmpi ] || grep -v "pausing at" run.err | diff - err.txt >/dev/null ||
        fail "$what: a line of the launcher: $(cat run.err)"
    [ "$job_status" -eq "$want" ] || fail "$what: status $job_status, not $want: $(cat err.txt)"
    [ "$(wc -l <err.txt)" -eq 1 ] || fail "$what: not one line: $(cat run.err)"
    grep -q "^fftshard: error: interrupted by SIGTERM during the fft phase (rank 0): the temporary output was removed$" err.txt ||
        fail "$what: not the message of rank 0: $(cat err.txt)"
    [ ! -e new.h5 ] || fail "$what: OUTPUT created"
    assert_no_temporaries
}

# bats test_tags=openmpi
@test "SIGTERM twice to mpiexec, and through timeout (TERM to it and its group, then CONT): one line, no temporary, no rank left" {
    oracle make in.h5 12x10x8:complex128
    local want=143 attempt ranks
    # Open MPI's mpirun ends with its own status (fftshard(1), Launchers)
    [ "$MPI_LAUNCHER_KIND" = openmpi ] && want=1
    # Open MPI 4.1's mpirun exits at once at a second SIGTERM within 5 s,
    # without ending its ranks, which Open MPI then ends a second later
    # (status 195) for the lost PMIx server: no message, the temporary left.
    start_job fft:30 2 in.h5 new.h5
    ranks="$(rank_pid "$job" 0) $(rank_pid "$job" 1)"
    job_pids=$ranks
    kill -TERM "$job"
    sleep 0.2
    kill -TERM "$job" 2>/dev/null || true
    end_job
    assert_ended_once "$want" "SIGTERM twice"
    # GNU timeout sends SIGTERM to mpirun and to its process group, then
    # SIGCONT to both: two SIGTERMs, or one when the second comes before
    # the first is taken (it failed in 3 runs of 6).
    for attempt in 1 2 3 4; do
        rm -f run.err
        FFTSHARD_PAUSE=fft:30 setsid timeout 120 "$MPIEXEC" -n 2 "$FFTSHARD" --quiet in.h5 new.h5 >run.out 2>run.err &
        job=$!
        await_pause run.err "pausing at" "fft (timeout, attempt $attempt)"
        ranks="$(rank_pid "$job" 0) $(rank_pid "$job" 1)"
        job_pids=$ranks
        kill -TERM "$job"
        end_job
        assert_ended_once "$want" "timeout, attempt $attempt"
    done
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
    run --separate-stderr fftshard 2 --in-memory --transpose=auto huge.h5 out.h5
    assert_error "$EXIT_RUNTIME" "out of memory"
    assert_no_temporaries
}

@test "SIGTERM to the job's process group at random moments: status 0 only with the whole result, nothing left (sigterm-stress.sh 10)" {
    run env TMPDIR="$BATS_TEST_TMPDIR" FFTSHARD="$FFTSHARD" FFTSHARD_MKDATA="$FFTSHARD_MKDATA" \
        MPIEXEC="$MPIEXEC" "$srcdir/share/sigterm-stress.sh" 10
    [ "$status" -eq 0 ] || fail "$output"
    [[ $output == *"10 runs: "*"; 0 violations" ]] || fail "$output"
}
