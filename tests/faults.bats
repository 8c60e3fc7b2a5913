#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Faults: SIGTERM and SIGINT in every phase (to every rank, to rank 0, to
# another rank), a rank killed outright and what it leaves for the next run,
# a full disk and a file size limit, an unwritable directory, and the
# network transport forced onto TCP for every strategy.

load helpers

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    CASES=()
    job=
}

# A failed test must not leave a paused job behind.
teardown() {
    kill_job
}

# paused_run PHASE[:SECONDS] NP ARGS...: start fftshard in the background, every rank
# held at the start of PHASE (FFTSHARD_PAUSE; or rank 0 at a step of the
# commit); returns once rank 0 says so.
# The job's pid is $job, its stderr run.err.
paused_run() {
    local phase=$1 np=$2
    shift 2
    # (removed first: the background job truncates it only once it runs, and
    # the previous job's "pausing" line must not be taken for this one's)
    rm -f run.out run.err
    FFTSHARD_PAUSE=$phase "$MPIEXEC" -n "$np" "$FFTSHARD" --quiet "$@" >run.out 2>run.err &
    job=$!
    local name=${phase%%:*}
    await_pause run.err "pausing at (the start of the $name phase|$name) \(" "the $name phase"
}


# signal_run SIG TARGET: send SIG to the 3 ranks of the paused job (every),
# to one rank (its number) or to mpiexec, then end_job.
signal_run() {
    local sig=$1 target=$2 pid
    case $target in
    every) pid="$(rank_pid "$job" 0) $(rank_pid "$job" 1) $(rank_pid "$job" 2)" ;;
    mpiexec) pid=$job ;;
    *) pid=$(rank_pid "$job" "$target") ;;
    esac
    [ -n "${pid// /}" ] || skip "cannot find the ranks among mpiexec's processes"
    # shellcheck disable=SC2086
    kill "-$sig" $pid
    end_job
}

# bats test_tags=sanitized
@test "SIGTERM and SIGINT in every phase: the phase named, nothing written, OUTPUT unchanged" {
    oracle make in.h5 12x10x8:complex128
    fftshard 3 --quiet in.h5 old.h5
    local before phase i=0 target sig
    before=$(checksum old.h5)
    for phase in plan read fft exchange write check commit; do
        sig=$([ $((i % 2)) -eq 0 ] && echo TERM || echo INT)
        # 0: every rank (what a scheduler such as SLURM does at the time
        # limit), 1: rank 0 alone, 2: rank 2 alone. (atomic.bats signals
        # mpiexec itself.)
        target=$(case $((i % 3)) in 0) echo every ;; 1) echo 0 ;; 2) echo 2 ;; esac)
        paused_run "$phase" 3 --force --check in.h5 old.h5
        signal_run "$sig" "$target"
        # The ranks end with 128 + the signal; mpiexec's own status is the
        # launcher's (MPICH: that, or 9 when it had to kill ranks).
        [ "$job_status" -ne 0 ] || fail "$phase: the job succeeded after SIG$sig"
        grep -q "^fftshard: error: interrupted by SIG$sig during the $phase phase (rank [0-9]*): the temporary output was removed$" run.err ||
            fail "$phase, SIG$sig: no message naming the phase: $(cat run.err)"
        [ "$(grep -c 'fftshard: error' run.err)" -eq 1 ] ||
            fail "$phase: more than one message: $(cat run.err)"
        assert_equal "$(checksum old.h5)" "$before"
        assert_no_temporaries
        i=$((i + 1))
    done
}

@test "a signal between the commit's renames waits for them: the result whole, the message says so" {
    oracle make in0.h5 12x10x8:complex128
    oracle make --seed 7 in.h5 12x10x8:complex128
    local c point shard target sig
    # POINT SHARD-OUTPUT TARGET SIGNAL: rank 0 is held after the shard
    # directory's rename (before the master's) or after all its renames;
    # the signal goes to every rank, to rank 2 alone, or to mpiexec.
    for c in "renamed no every TERM" "renamed yes 2 INT" "shards-renamed yes every TERM" \
        "shards-renamed yes mpiexec INT"; do
        read -r point shard target sig <<<"$c"
        rm -rf out.h5 out.h5.shards-*
        fftshard 3 --quiet in0.h5 out.h5
        paused_run "$point:8" 3 --force $([ "$shard" = yes ] && echo --shard-output) in.h5 out.h5
        signal_run "$sig" "$target"
        [ "$job_status" -ne 0 ] || fail "$c: the job succeeded after SIG$sig"
        grep -q "^fftshard: error: interrupted by SIG$sig during the commit phase (rank [0-9]*): the output had been written$" run.err ||
            fail "$c: no message that the output is in place: $(cat run.err)"
        grep -q "temporary output was removed" run.err && fail "$c: a message says nothing was written: $(cat run.err)"
        run oracle check "in=in.h5 out=out.h5 ranks=3"
        assert_success
        assert_no_temporaries
        [ "$(compgen -G 'out.h5.shards-*' | wc -l)" -eq "$([ "$shard" = yes ] && echo 1 || echo 0)" ] ||
            fail "$c: shard directories: $(compgen -G 'out.h5.shards-*')"
    done
}

# bats test_tags=sanitized
@test "the input check's process ended from outside (SIGKILL as the OOM killer, SIGTERM, SIGINT): exit 1 saying so, not a damaged file" {
    oracle make in.h5 8x6:complex128
    local sig rank0 checker
    for sig in KILL TERM INT; do
        # the process checking INPUT for rank 0 holds its question
        paused_run probe 2 in.h5 out.h5
        rank0=$(rank_pid "$job" 0)
        [ -n "$rank0" ] || skip "cannot find the ranks among mpiexec's processes"
        checker=$(ps -o pid= --ppid "$rank0")
        [ -n "$checker" ] || fail "rank 0 has no process checking the input"
        # shellcheck disable=SC2086
        kill "-$sig" $checker
        end_job
        assert_equal "$job_status" "$EXIT_RUNTIME"
        [ "$(grep -c 'fftshard: error' run.err)" -eq 1 ] || fail "not one message: $(cat run.err)"
        grep -q "^fftshard: error: in.h5: the process checking it was ended by SIG$sig (.*) from outside .*; the input was not judged$" run.err ||
            fail "SIG$sig: $(cat run.err)"
        ! grep -q "damaged" run.err || fail "a good file called damaged: $(cat run.err)"
        [ ! -e out.h5 ] || fail "out.h5 written"
        assert_no_temporaries
    done
    fs 2 in.h5 out.h5
    check_all
}

# bats test_tags=sanitized,openmpi
@test "SIGKILL of a rank: the job ends, no OUTPUT; the next run removes what was left" {
    oracle make in.h5 12x10x8:complex128
    local r pid
    for r in 0 1; do
        paused_run write 3 in.h5 out.h5
        pid=$(rank_pid "$job" "$r")
        [ -n "$pid" ] || skip "cannot find the ranks among mpiexec's processes"
        kill -KILL "$pid"
        end_job
        [ "$job_status" -ne 0 ] || fail "the job succeeded after SIGKILL of rank $r"
        [ ! -e out.h5 ] || fail "OUTPUT appeared after SIGKILL of rank $r"
    done
    # What a killed run leaves has a name that says what it is; a dead
    # process of this host made it, so the next run removes it and says so.
    local dead
    dead=$(sh -c 'echo $$')
    : >".out.h5.fftshard-tmp-$(hostname)-$dead-abcdef"
    mkdir ".out.h5.fftshard-tmp-$(hostname)-$dead-ghijkl"
    : >".out.h5.fftshard-tmp-$(hostname)-$dead-ghijkl/out.0000.h5"
    # one from another host is reported, not touched
    : >".out.h5.fftshard-tmp-elsewhere-1234-mnopqr"
    run --separate-stderr fftshard 3 --quiet in.h5 out.h5
    assert_success
    [[ $stderr == *"removed ./.out.h5.fftshard-tmp-$(hostname)-$dead-abcdef, left by an interrupted run"* ]] ||
        fail "no note of the removed temporary: $stderr"
    [[ $stderr == *"fftshard-tmp-elsewhere-1234-mnopqr: left by a run on elsewhere"* ]] ||
        fail "no warning about the other host's temporary: $stderr"
    assert_equal "$(temporaries)" "./.out.h5.fftshard-tmp-elsewhere-1234-mnopqr"
    run oracle check "in=in.h5 out=out.h5 ranks=3"
    assert_success
}

# bats test_tags=sanitized,openmpi
@test "a full disk: exit 1 naming OUTPUT, before or while writing; nothing left, no hang" {
    mkdir small
    mount -t tmpfs -o size=1m tmpfs small 2>/dev/null || skip "cannot mount a small tmpfs here"
    oracle make in.h5 64x64x32:complex128
    # 2 MiB of result: refused before any work
    run --separate-stderr timeout 120 "$MPIEXEC" -n 2 "$FFTSHARD" in.h5 small/out.h5
    assert_error "$EXIT_RUNTIME" "small/out.h5" "disk full"
    # the disk fills up while the run is under way: the write itself fails
    oracle make in2.h5 32x32x32:complex128
    rm -f run.out run.err
    FFTSHARD_PAUSE=write:3 "$MPIEXEC" -n 3 "$FFTSHARD" in2.h5 small/out.h5 >run.out 2>run.err &
    job=$!
    await_pause run.err "pausing" "the write phase"
    dd if=/dev/zero of=small/filler bs=64k count=100 2>/dev/null || true
    end_job
    rm -f small/filler
    # mpiexec has ended; a rank it killed may still be closing its files
    # (slowly under the sanitizers): the mount stays busy until it is gone.
    local left tries=0
    until left=$(ls -A small) && umount small 2>/dev/null; do
        ((++tries < 300)) || fail "small/ still busy 60 s after the job ended: $(fuser -vm small 2>&1)"
        sleep 0.2
    done
    [ -z "$left" ] || fail "left in small/: $left"
    assert_equal "$job_status" "$EXIT_RUNTIME"
    # our line, then MPICH's line about MPI_Abort (the ranks cannot close
    # the file together after a failed collective write)
    grep -v pausing run.err >err.txt
    grep -q "^fftshard: error: small/out.h5: .*No space left on device" err.txt ||
        fail "no message naming OUTPUT and the full disk: $(cat err.txt)"
    # (and under Open MPI the warnings of mpirun's event library as it
    # ends the job: fftshard(1), Launchers)
    [ "$(grep -Evc '^(Abort\(1\)|\[warn\] Epoll )' err.txt)" -eq 1 ] ||
        fail "more than our one line: $(cat err.txt)"
}

# bats test_tags=sanitized
@test "a file size limit: exit 1 naming OUTPUT, nothing left" {
    oracle make in.h5 160x128x64:complex128
    # 20 MiB of result, 16 MiB allowed (MPI itself needs a few MiB to start)
    run --separate-stderr bash -c "ulimit -f 16384 && exec timeout 120 '$MPIEXEC' -n 2 '$FFTSHARD' in.h5 out.h5"
    assert_error "$EXIT_RUNTIME" "out.h5" "file size limit"
    [ ! -e out.h5 ] || fail "OUTPUT was created"
    assert_no_temporaries
    run --separate-stderr bash -c "ulimit -f 16384 && exec timeout 120 '$MPIEXEC' -n 2 '$FFTSHARD' --deflate=1 --shard-output=1 in.h5 out.h5"
    assert_error "$EXIT_RUNTIME" "out.h5" "file size limit"
    [ ! -e out.h5 ] || fail "OUTPUT was created"
    assert_no_temporaries
}

@test "an unwritable directory: exit 4, for the result and for --shard-output" {
    mkdir ro
    mount -t tmpfs -o ro,size=1m tmpfs ro 2>/dev/null || skip "cannot mount a read-only tmpfs here"
    oracle make in.h5 6x5x4:complex128
    run --separate-stderr fftshard 2 in.h5 ro/out.h5
    local st=$status err=("${stderr_lines[@]}")
    run --separate-stderr fftshard 2 --report=ro/r.json in.h5 out.h5
    local st2=$status
    umount ro
    status=$st stderr_lines=("${err[@]}") output=
    assert_error "$EXIT_OUTPUT" "ro/out.h5" "Read-only file system"
    [ "$st2" -eq "$EXIT_OUTPUT" ] || fail "unwritable --report: status $st2"
    [ ! -e out.h5 ] || fail "OUTPUT written although the report could not be"
}

@test "the network path: every strategy over TCP (UCX_TLS=tcp,self), slabs and pencils" {
    mpichversion 2>/dev/null | grep -q 'ch4:ucx' || skip "this MPICH does not use UCX"
    oracle make a.h5 13x10x6:complex128 -- b.h5 3x20x10:complex64
    export UCX_TLS=tcp,self
    # the transport really is TCP: UCX lists the lanes of its endpoints
    run env UCX_LOG_LEVEL=info "$MPIEXEC" -n 2 "$FFTSHARD" --quiet a.h5 probe.h5
    assert_success
    [[ $output == *"tag(tcp/"* ]] || fail "no TCP endpoint reported: $output"
    [[ $output != *"sysv/memory"* && $output != *"cma/memory"* ]] ||
        fail "shared memory used although UCX_TLS=tcp,self: $output"
    local s
    for s in alltoall random xorswap pairwise auto; do
        tcp_fs 3 a.h5 "a_$s.h5" --transpose="$s"
        tcp_fs 4 b.h5 "b_$s.h5" --transpose="$s" --decomp=pencil --grid=2x2
    done
    check_all
}

# bats test_tags=openmpi
@test "a stall in MPI_Finalize ends the job within the watchdog, with the status the run had" {
    oracle make a.h5 8x6:complex128
    # FFTSHARD_PAUSE=finalize holds every rank where MPICH's stall does
    local t0=${EPOCHREALTIME/./}
    run --separate-stderr env FFTSHARD_PAUSE=finalize:60 FFTSHARD_FINALIZE_TIMEOUT=1 \
        timeout 50 "$MPIEXEC" -n 3 "$FFTSHARD" --quiet a.h5 out.h5
    local ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
    assert_equal "$status" "$EXIT_OK"
    ((ms < 15000)) || fail "the job took $ms ms to end"
    [ "$(grep -c 'MPI_Finalize did not return' <<<"$stderr")" -eq 1 ] ||
        fail "expected one warning: $stderr"
    CASES=("in=a.h5 out=out.h5 ranks=3")
    check_all
    # a failed run keeps its own status (here a missing input)
    run --separate-stderr env FFTSHARD_PAUSE=finalize:60 FFTSHARD_FINALIZE_TIMEOUT=1 \
        timeout 50 "$MPIEXEC" -n 3 "$FFTSHARD" --quiet missing.h5 out2.h5
    assert_equal "$status" "$EXIT_INPUT"
    [[ $stderr == *"MPI_Finalize did not return"* ]] || fail "no warning: $stderr"
}

# tcp_fs NP IN OUT OPTIONS...: fs over TCP. MPICH 4.0 with UCX's TCP
# transport now and then never returns from MPI_Finalize (see
# FFTSHARD_FINALIZE_TIMEOUT in fftshard(1)); such a run must still have
# written its result and end, with status 0, within the default watchdog.
tcp_fs() {
    local np=$1 in=$2 out=$3
    shift 3
    run timeout 120 "$MPIEXEC" -n "$np" "$FFTSHARD" --quiet "$@" "$in" "$out"
    [ "$status" -eq 0 ] || fail "over TCP: status $status: $output"
    local c="in=$in out=$out ranks=$np" opt
    for opt in "$@"; do
        case $opt in
        --transpose=*) c+=" transpose=${opt#--transpose=}" ;;
        esac
    done
    CASES+=("$c")
}
