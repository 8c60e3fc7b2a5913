#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# What fuzzing found, replayed without clang (make fuzz does the fuzzing;
# see tests/fuzz/run-fuzz.sh). The fuzz targets, built here as plain
# programs (tests/fuzz/replay_*), run the seeds and every regression
# (tests/fuzz/regressions/): inputs that once broke fftshard's own code, or a
# promise the target checks (one-line messages, values in range). Then
# fftshard itself runs every regression, and every file of tests/fuzz/hdf5/:
# damaged files on which HDF5 1.10 itself crashes or asks for absurd
# memory, which fftshard must answer with status 3 and one message.

load helpers

# bats file_tags=sanitized

FUZZ=$srcdir/tests/fuzz

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
}

# replay TARGET FILE...: the target run once on each FILE.
replay() {
    local target=$1
    shift
    run --separate-stderr timeout 600 "$TEST_BINDIR/fuzz/replay_$target" "$@"
    [ "$status" -eq 0 ] || fail "replay_$target failed (status $status):
$stderr"
    assert_output "replay: $# inputs, no failure"
}

# answered STATUS ARGS...: fftshard ARGS... on 1 rank ends with STATUS (one
# of its own: 0 to 5), no crash or sanitizer report, at most one error line
# (and the Try line for status 2), and no temporary.
answered() {
    local want=$1
    shift
    run --separate-stderr timeout -k 10 120 "$MPIEXEC" -n 1 "$FFTSHARD" "$@"
    # In a sanitized build, ASan says so when it gives HDF5 NULL for the
    # terabyte a damaged file asks for: a note of the tool, not a report.
    if [ "$FFTSHARD_SANITIZERS" = yes ]; then
        stderr=$(grep -vE '^==[0-9]+==WARNING: AddressSanitizer failed to allocate ' <<<"$stderr" || true)
        stderr_lines=()
        [ -z "$stderr" ] || mapfile -t stderr_lines <<<"$stderr"
    fi
    [ "$status" -le 5 ] && ! grep -qE 'Sanitizer|runtime error:|BAD TERMINATION' <<<"$output$stderr" ||
        fail "fftshard $* crashed or hung (status $status):
$output
$stderr"
    if [ "$want" = any ]; then
        want=$status
        [ "$status" -eq 0 ] && { assert_no_temporaries; return; }
    fi
    assert_error "$want"
    assert_no_temporaries
}

# bats test_tags=quick
@test "the option parser: seeds and regressions replayed" {
    replay options "$FUZZ"/corpus-options/* "$FUZZ"/regressions/options-*
}

# bats test_tags=quick
@test "the input check: seeds and regressions replayed" {
    local regressions=()
    compgen -G "$FUZZ/regressions/probe-*" >/dev/null && regressions=("$FUZZ"/regressions/probe-*)
    replay probe "$FUZZ"/corpus-probe/* "${regressions[@]}"
}

@test "fftshard on the option regressions: its own status, one message" {
    local f words
    for f in "$FUZZ"/regressions/options-*; do
        # The arguments, each ended by a NUL byte (fuzz_options.c).
        mapfile -d '' -t words <"$f"
        answered any "${words[@]}"
    done
}

@test "regression: a newline in an argument stays inside the one-line message" {
    run --separate-stderr fftshard 1 $'-\n' in.h5 out.h5
    assert_error "$EXIT_USAGE" "'-?': unknown option"
    run --separate-stderr fftshard 1 $'--norm=a\nb' in.h5 out.h5
    assert_error "$EXIT_USAGE" "--norm=a?b"
}

@test "regression: --report after --dtype in a dry run" {
    run --separate-stderr fftshard 1 --dry-run --shape=4x4 --dtype=float32 --report=r.json
    assert_success
    assert_output --partial "4x4 float32"
}

@test "fftshard on the probe regressions and on HDF5's crashes: status 3, one message" {
    local f
    for f in "$FUZZ"/regressions/probe-* "$FUZZ"/hdf5/*; do
        [ -e "$f" ] || continue
        cp "$f" in.h5
        answered "$EXIT_INPUT" in.h5 out.h5
        [ ! -e out.h5 ] || fail "out.h5 written for $f"
    done
}

@test "HDF5 crashing in the input check: the run ends at once with status 3" {
    cp "$FUZZ"/hdf5/segv-local-heap-1.h5 in.h5
    run --separate-stderr timeout 120 "$MPIEXEC" -n 3 "$FFTSHARD" --report=r.json in.h5 out.h5
    assert_error "$EXIT_INPUT" "in.h5" "HDF5 crashed reading it" "damaged"
    [ ! -e out.h5 ] && [ ! -e r.json ] || fail "output or report written"
    assert_no_temporaries
    run --separate-stderr timeout 120 "$MPIEXEC" -n 2 "$FFTSHARD" --dry-run in.h5
    assert_error "$EXIT_INPUT" "HDF5 crashed reading it"
}

# The input check's process is forked at start-up, before MPI_Init, not the
# program started again (which cost a tenth of a second of start-up): no
# rank runs a second execve, and HDF5's crash there is still an unusable
# input.
@test "the input check runs in the helper forked at start-up, and a crash there is still status 3" {
    command -v strace >/dev/null || skip "strace is not installed (Debian package strace)"
    # LeakSanitizer cannot run under ptrace (strace): the other tests of the
    # sanitized slice look for leaks.
    [ "$FFTSHARD_SANITIZERS" != yes ] || export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
    oracle make good.h5 4x4:complex128
    run --separate-stderr timeout 120 strace -f -qq -e trace=execve -o trace.txt \
        "$MPIEXEC" -n 2 "$FFTSHARD" --quiet good.h5 out.h5
    assert_success
    local started
    started=$(grep -c "execve(\"[^\"]*$(basename "$FFTSHARD")\"" trace.txt || true)
    [ "$started" -eq 2 ] || fail "fftshard started $started times for 2 ranks:
$(grep execve trace.txt)"
    cp "$FUZZ"/hdf5/segv-local-heap-1.h5 in.h5
    run --separate-stderr timeout 120 strace -f -qq -e trace=execve -o trace.txt \
        "$MPIEXEC" -n 2 "$FFTSHARD" in.h5 out2.h5
    assert_error "$EXIT_INPUT" "in.h5" "HDF5 crashed reading it" "damaged"
    started=$(grep -c "execve(\"[^\"]*$(basename "$FFTSHARD")\"" trace.txt || true)
    [ "$started" -eq 2 ] || fail "fftshard started $started times for 2 ranks:
$(grep execve trace.txt)"
}
