#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Output refusals (exit 4) and atomic output: a failed or refused run leaves
# no temporary and an existing OUTPUT byte for byte unchanged; the result gets
# the permissions the umask gives.

load helpers

setup_file() {
    cd "$BATS_FILE_TMPDIR" || return 1
    oracle make in.h5 6x5x4:complex128
    # More than the machine's memory (see huge_input).
    huge_input big.h5
}

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    cp "$BATS_FILE_TMPDIR/in.h5" .
    run_pid=
}

# A test that failed half-way must not leave a background run behind.
teardown() {
    if [ -n "$run_pid" ] && kill -0 "$run_pid" 2>/dev/null; then
        kill "$run_pid" 2>/dev/null || true
        wait "$run_pid" 2>/dev/null || true
    fi
}

@test "existing OUTPUT without --force: exit 4, OUTPUT unchanged" {
    fftshard 2 --quiet --inverse in.h5 out.h5
    local before
    before=$(checksum out.h5)
    run --separate-stderr fftshard 2 in.h5 out.h5
    assert_error "$EXIT_OUTPUT" "out.h5" "--force"
    assert_equal "$(checksum out.h5)" "$before"
    assert_no_temporaries
    # Not even an HDF5 file: still refused, still untouched.
    echo "precious" >notes.txt
    run --separate-stderr fftshard 2 in.h5 notes.txt
    assert_error "$EXIT_OUTPUT" "notes.txt"
    assert_equal "$(cat notes.txt)" "precious"
}

@test "--force replaces an existing OUTPUT with the new result" {
    fftshard 2 --quiet --inverse in.h5 out.h5
    local before
    before=$(checksum out.h5)
    run --separate-stderr fftshard 2 --quiet --force in.h5 out.h5
    assert_success
    [ "$(checksum out.h5)" != "$before" ] || fail "out.h5 was not replaced"
    run oracle check "in=in.h5 out=out.h5 ranks=2"
    assert_success
    run --separate-stderr fftshard 2 --quiet -f --norm=ortho in.h5 out.h5
    assert_success
    run oracle check "in=in.h5 out=out.h5 ranks=2 norm=ortho"
    assert_success
    assert_no_temporaries
}

@test "OUTPUT is INPUT (same path, ./path, absolute, hard link, symlink): exit 4, input unchanged" {
    local before target
    before=$(checksum in.h5)
    ln in.h5 hardlink.h5
    ln -s in.h5 symlink.h5
    # (not $output: bats's run sets it)
    for target in in.h5 ./in.h5 "$PWD/in.h5" hardlink.h5 symlink.h5 in.h5:/other; do
        run --separate-stderr fftshard 2 in.h5 "$target"
        assert_error "$EXIT_OUTPUT" "input"
        run --separate-stderr fftshard 2 --force in.h5 "$target"
        assert_error "$EXIT_OUTPUT" "input"
        assert_equal "$(checksum in.h5)" "$before"
    done
    # The other way round: the input named through the link.
    run --separate-stderr fftshard 2 --force hardlink.h5 in.h5
    assert_error "$EXIT_OUTPUT" "input"
    assert_equal "$(checksum in.h5)" "$before"
    [ -L symlink.h5 ] || fail "symlink.h5 is no longer a symlink"
    assert_no_temporaries
}

@test "OUTPUT in a missing directory: exit 4, nothing created" {
    run --separate-stderr fftshard 2 in.h5 nodir/out.h5
    assert_error "$EXIT_OUTPUT" "nodir"
    [ ! -e nodir ]
    run --separate-stderr fftshard 2 --force in.h5 nodir/deeper/out.h5
    assert_error "$EXIT_OUTPUT" "nodir"
    [ ! -e nodir ]
}

@test "OUTPUT is an existing directory: exit 4, directory untouched" {
    mkdir outdir.h5
    run --separate-stderr fftshard 2 in.h5 outdir.h5
    assert_error "$EXIT_OUTPUT" "outdir.h5" "directory"
    run --separate-stderr fftshard 2 --force in.h5 outdir.h5
    assert_error "$EXIT_OUTPUT" "outdir.h5" "directory"
    [ -d outdir.h5 ]
    assert_equal "$(ls -A outdir.h5)" ""
    assert_no_temporaries
}

@test "OUTPUT=/dev/null: exit 4, /dev/null still a character device" {
    run --separate-stderr fftshard 2 in.h5 /dev/null
    assert_error "$EXIT_OUTPUT" "/dev/null"
    run --separate-stderr fftshard 2 --force in.h5 /dev/null
    assert_error "$EXIT_OUTPUT" "/dev/null"
    [ -c /dev/null ] || fail "/dev/null is no longer a character device"
    assert_no_temporaries /dev
}

@test "OUTPUT a fifo: exit 4, still a fifo" {
    mkfifo pipe.h5
    run --separate-stderr fftshard 2 --force in.h5 pipe.h5
    assert_error "$EXIT_OUTPUT" "pipe.h5"
    [ -p pipe.h5 ] || fail "pipe.h5 is no longer a fifo"
    assert_no_temporaries
}

@test "OUTPUT a symlink to another file: the file it points to is never written" {
    echo "precious" >target.txt
    ln -s target.txt link.h5
    run --separate-stderr fftshard 2 in.h5 link.h5
    assert_error "$EXIT_OUTPUT" "link.h5"
    run --separate-stderr fftshard 2 --quiet --force in.h5 link.h5
    assert_equal "$(cat target.txt)" "precious"
    assert_no_temporaries
}

@test "a result written beside OUTPUT in another directory leaves no temporary there" {
    mkdir sub
    run --separate-stderr fftshard 2 --verbose in.h5 sub/out.h5
    assert_success
    # The temporary was created beside OUTPUT, with the documented name.
    [[ $stderr =~ sub/\.out\.h5\.fftshard-tmp-$(hostname)-[0-9]+-[A-Za-z0-9]{6} ]] ||
        fail "--verbose does not show a temporary sub/.out.h5.fftshard-tmp-HOST-PID-XXXXXX: $stderr"
    assert_no_temporaries sub
    assert_no_temporaries
    run oracle check "in=in.h5 out=sub/out.h5 ranks=2"
    assert_success
}

# bats test_tags=sanitized
@test "runtime failure (out of memory): exit 1, no temporary, no OUTPUT" {
    ln -s "$BATS_FILE_TMPDIR/big.h5" big.h5
    run --separate-stderr "$MPIEXEC" -n 2 "$FFTSHARD" --quiet --in-memory --transpose=xorswap big.h5 out.h5
    assert_error "$EXIT_RUNTIME" "out of memory"
    [ ! -e out.h5 ] || fail "a failed run left out.h5"
    assert_no_temporaries
}

# bats test_tags=openmpi
@test "runtime failure with --force: exit 1, existing OUTPUT unchanged" {
    ln -s "$BATS_FILE_TMPDIR/big.h5" big.h5
    fftshard 2 --quiet in.h5 out.h5
    local before
    before=$(checksum out.h5)
    run --separate-stderr "$MPIEXEC" -n 2 "$FFTSHARD" --quiet --force --in-memory \
        --transpose=xorswap big.h5 out.h5
    assert_error "$EXIT_RUNTIME" "out of memory"
    assert_equal "$(checksum out.h5)" "$before"
    assert_no_temporaries
}

@test "new files get the permissions of the umask" {
    run bash -c 'umask 027 && exec "$0" "$@"' "$MPIEXEC" -n 2 "$FFTSHARD" --quiet in.h5 o027.h5
    assert_success
    assert_equal "$(stat -c %a o027.h5)" 640
    run bash -c 'umask 022 && exec "$0" "$@"' "$MPIEXEC" -n 2 "$FFTSHARD" --quiet in.h5 o022.h5
    assert_success
    assert_equal "$(stat -c %a o022.h5)" 644
    run bash -c 'umask 077 && exec "$0" "$@"' "$MPIEXEC" -n 1 "$FFTSHARD_MKDATA" --quiet 4x4 m077.h5
    assert_success
    assert_equal "$(stat -c %a m077.h5)" 600
}

@test "OUTPUT in a directory without write permission: exit 4" {
    [ "$(id -u)" -ne 0 ] || skip "root writes everywhere"
    mkdir locked
    chmod 555 locked
    run --separate-stderr fftshard 2 in.h5 locked/out.h5
    chmod 755 locked
    assert_error "$EXIT_OUTPUT" "locked"
    [ ! -e locked/out.h5 ]
}

@test "fftshard-mkdata: existing OUTPUT without --force refused and unchanged" {
    mkdata 1 --quiet 4x4 m.h5
    local before
    before=$(checksum m.h5)
    run --separate-stderr mkdata 2 --quiet --seed=9 4x4 m.h5
    assert_equal "$status" "$EXIT_OUTPUT"
    assert_equal "$(checksum m.h5)" "$before"
    run --separate-stderr mkdata 2 --quiet --force --seed=9 4x4 m.h5
    assert_success
    [ "$(checksum m.h5)" != "$before" ] || fail "--force did not replace m.h5"
    assert_no_temporaries
}

# start_run OUTPUT [OPTIONS...]: start fftshard on 4 ranks in the background,
# on in.h5, every rank held at $run_pause if set
# (FFTSHARD_PAUSE: a signal finds the run there however quick it is);
# $run_pid is mpiexec's process id.
start_run() {
    local out=$1
    shift
    rm -f run.err # (not the last run's lines: the job truncates it only once it runs)
    FFTSHARD_PAUSE=${run_pause:-} "$MPIEXEC" -n 4 "$FFTSHARD" --quiet "$@" in.h5 "$out" \
        >/dev/null 2>run.err &
    run_pid=$!
}

# wait_for_temporary: busy-wait on a shell glob (no process spawned, so no
# delay) until a temporary exists; fails after 10 s.
wait_for_temporary() {
    local deadline=$((${EPOCHREALTIME/./} + 10000000))
    until compgen -G '.*.fftshard-tmp-*' >/dev/null; do
        ((${EPOCHREALTIME/./} < deadline)) || fail "no temporary appeared within 10 s"
    done
}

# wait_for_pause: busy-wait until rank 0 says it is held (FFTSHARD_PAUSE);
# fails after 10 s.
wait_for_pause() {
    local deadline=$((${EPOCHREALTIME/./} + 10000000))
    until grep -q "pausing at" run.err 2>/dev/null; do
        ((${EPOCHREALTIME/./} < deadline)) || fail "the run was not held within 10 s: $(cat run.err)"
    done
}

# finish_run: wait for mpiexec; its exit status goes to $run_status.
finish_run() {
    run_status=0
    wait "$run_pid" || run_status=$?
}

@test "SIGTERM or SIGINT to mpiexec during a run: no temporary, no OUTPUT, existing OUTPUT unchanged" {
    mpich_only "Open MPI's mpirun signalled itself exits 1 at once, while its ranks finish what the signal found them doing, the commit's renames included (fftshard(1), Launchers)"
    local sig attempt caught=0 before run_pause=fft:30
    fftshard 2 --quiet --inverse in.h5 old.h5
    before=$(checksum old.h5)
    for sig in TERM INT TERM-force; do
        for attempt in 1 2 3; do
            if [ "$sig" = TERM-force ]; then
                start_run old.h5 --force
            else
                start_run "new_$sig.h5"
            fi
            wait_for_temporary
            wait_for_pause # well into the run: every rank knows the temporary
            kill "-${sig%-force}" "$run_pid" 2>/dev/null || true
            finish_run
            assert_no_temporaries
            if [ "$run_status" -ne 0 ] && ! grep -q "the output had been written" run.err; then
                caught=$((caught + 1))
                [ ! -e "new_$sig.h5" ] || fail "SIG$sig left new_$sig.h5"
                assert_equal "$(checksum old.h5)" "$before"
                break
            fi
            # It finished before the signal, or the signal came once the
            # result was in place (its status 143 or 130, fftshard(1)): a
            # complete result; try again.
            rm -f "new_$sig.h5"
            fftshard 2 --quiet --force --inverse in.h5 old.h5
            before=$(checksum old.h5)
        done
    done
    [ "$caught" = 3 ] || fail "$caught of the 3 held runs were interrupted"
}

# bats test_tags=sanitized,openmpi
@test "SIGTERM to rank 0 the moment the temporary exists: the temporary is removed" {
    # Rank 0 creates the temporary; it must be registered for removal at once,
    # not only after the ranks have agreed on its name.
    local attempt pid0 caught=0
    for attempt in 1 2 3; do
        start_run new.h5
        pid0=$(rank_pid "$run_pid" 0)
        if [ -z "$pid0" ]; then
            kill "$run_pid" 2>/dev/null || true
            finish_run
            skip "cannot find rank 0 among mpiexec's processes"
        fi
        wait_for_temporary
        kill -TERM "$pid0" 2>/dev/null || true
        finish_run
        assert_no_temporaries
        if [ "$run_status" -ne 0 ]; then
            caught=1
            [ ! -e new.h5 ] || fail "the interrupted run left new.h5"
            break
        fi
        rm -f new.h5
    done
    [ "$caught" -eq 1 ] || skip "every run finished before the signal arrived"
}
