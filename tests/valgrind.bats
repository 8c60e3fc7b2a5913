#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# valgrind's memcheck on fftshard: a small transform with every exchange
# strategy and with pencils, on 2 ranks, must run without a single memcheck
# error (invalid reads or writes, uninitialised values reaching a decision,
# bad frees) and without memory definitely lost. tests/valgrind.supp lists
# what the libraries (MPICH, UCX, hwloc, HDF5) report on their own. The
# results must still equal numpy's. The input check, which fftshard runs in a
# child process valgrind does not follow, is run on its own on good and bad
# files.

load helpers

setup_file() {
    cd "$BATS_FILE_TMPDIR" || return 1
    oracle make in.h5 8x6x5:complex128 -- real.h5 8x6x5:float64
    python_serial "$srcdir/tests/corpus/make-corpus.py" corpus
}

setup() {
    command -v valgrind >/dev/null ||
        skip "valgrind is not installed (Debian package valgrind)"
    [ "$FFTSHARD_SANITIZERS" != yes ] ||
        skip "this build uses the sanitizers, which cannot run under valgrind"
    cd "$BATS_TEST_TMPDIR" || return 1
    cp "$BATS_FILE_TMPDIR"/*.h5 .
    CASES=()
}

# memcheck ARGS...: fftshard --quiet ARGS... under valgrind on 2 ranks. Any
# memcheck report makes valgrind exit 99; with -q it prints nothing else, so
# every line of its own (==PID==) other than its note on huge pages is a
# report too.
memcheck() {
    run --separate-stderr timeout 900 "$MPIEXEC" -n 2 \
        valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
        --show-leak-kinds=definite --num-callers=40 \
        --suppressions="$srcdir/tests/valgrind.supp" "$FFTSHARD" --quiet "$@"
    [ "$status" -eq 0 ] || fail "status $status under valgrind:
$output
$stderr"
    local reports
    reports=$(grep -E '^==[0-9]+== ' <<<"$stderr" | grep -v 'WARNING: valgrind ignores shmget' || true)
    [ -z "$reports" ] || fail "valgrind reported:
$stderr"
}

@test "memcheck: --transpose=alltoall" {
    memcheck --transpose=alltoall in.h5 o.h5
    check_all "in=in.h5 out=o.h5 ranks=2 transpose=alltoall"
}

@test "memcheck: --transpose=random" {
    memcheck --transpose=random --packet=64 in.h5 o.h5
    check_all "in=in.h5 out=o.h5 ranks=2 transpose=random"
}

@test "memcheck: --transpose=xorswap" {
    memcheck --transpose=xorswap in.h5 o.h5
    check_all "in=in.h5 out=o.h5 ranks=2 transpose=xorswap"
}

@test "memcheck: --transpose=pairwise, real input" {
    memcheck --transpose=pairwise --real real.h5 o.h5
    check_all "in=real.h5 out=o.h5 ranks=2 transpose=pairwise real"
}

@test "memcheck: --transpose=auto with a new wisdom file" {
    memcheck --transpose=auto --wisdom=w.txt in.h5 o.h5
    check_all "in=in.h5 out=o.h5 ranks=2 transpose=auto"
    grep -q '^transpose ' w.txt || fail "no strategy stored in the wisdom file: $(cat w.txt)"
}

@test "memcheck: --decomp=pencil, inverse, with --check and --report" {
    memcheck --decomp=pencil --inverse --check --report=r.json in.h5 o.h5
    check_all "in=in.h5 out=o.h5 ranks=2 inverse"
    [ -s r.json ] || fail "no report"
}

@test "memcheck: the input check on the fuzzing seeds and on the bad-input corpus" {
    local files=("$srcdir"/tests/fuzz/corpus-probe/* "$srcdir"/tests/fuzz/hdf5/huge-*)
    mapfile -t -O "${#files[@]}" files < <(find "$BATS_FILE_TMPDIR/corpus" -maxdepth 1 -type f -name '*.h5' | sort)
    run --separate-stderr timeout 600 valgrind -q --error-exitcode=99 --leak-check=full \
        --errors-for-leak-kinds=definite --show-leak-kinds=definite --num-callers=40 \
        --suppressions="$srcdir/tests/valgrind.supp" "$TEST_BINDIR/fuzz/replay_probe" "${files[@]}"
    [ "$status" -eq 0 ] || fail "status $status under valgrind:
$stderr"
    assert_output "replay: ${#files[@]} inputs, no failure"
    ! grep -qE '^==[0-9]+== ' <<<"$stderr" || fail "valgrind reported:
$stderr"
}
