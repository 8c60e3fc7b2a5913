#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# The command line: every exit status with its message, --help and
# --version, and one message however many ranks. Results are in
# results.bats, output refusals and atomicity in atomic.bats, the inputs and
# option values fftshard refuses in corpus.bats.

load helpers

setup_file() {
    cd "$BATS_FILE_TMPDIR" || return 1
    oracle make ok.h5 4x3x5:complex128
    oracle make two.h5 /a=3:float64 /g/b=4x2:float64
    oracle make bad.h5 /enum=3:enum /grp/x=3:float64
    oracle make int.h5 5x4:int16
}

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    cp "$BATS_FILE_TMPDIR"/*.h5 .
}

# ---------------------------------------------------------------- statuses

# bats test_tags=quick
@test "exit statuses in helpers.bash mirror enum fs_status in src/core/errors.h" {
    local name value var count=0
    while read -r name value; do
        var=EXIT_${name#ERR_}
        [ -n "${!var+set}" ] || fail "src/core/errors.h has FS_$name = $value; helpers.bash lacks $var"
        assert_equal "$var=${!var}" "$var=$value"
        count=$((count + 1))
    done < <(sed -n 's/^[[:space:]]*FS_\([A-Z_]*\)[[:space:]]*=[[:space:]]*\([0-9][0-9]*\).*/\1 \2/p' \
        "$srcdir/src/core/errors.h")
    [ "$count" -ge 6 ] || fail "found only $count statuses in src/core/errors.h"
    local mirrored
    mirrored=$(compgen -v EXIT_ | wc -l)
    assert_equal "$mirrored statuses in helpers.bash" "$count statuses in helpers.bash"
}

# ---------------------------------------------------------------- --help, --version

@test "--help: usage on stdout, nothing on stderr, exit 0" {
    run --separate-stderr fftshard 1 --help
    assert_success
    assert_equal "$stderr" ""
    assert_line --index 0 --regexp '^Usage: .*fftshard \[OPTIONS\] INPUT\.\.\. OUTPUT$'
    assert_output --partial "--transpose=NAME"
}

# bats test_tags=quick
@test "--version: program and library versions on stdout, exit 0" {
    run --separate-stderr fftshard 1 --version
    assert_success
    assert_equal "$stderr" ""
    assert_line --index 0 "fftshard ${FFTSHARD_VERSION:-0.1.0}"
    assert_line --regexp '^MPI: MPICH'
    assert_line --regexp '^HDF5: [0-9]+\.[0-9]+\.[0-9]+'
    assert_line --regexp '^FFTW: '
}

@test "--help and --version print once on 4 ranks" {
    local one
    one=$(fftshard 1 --help)
    run --separate-stderr fftshard 4 --help
    assert_success
    assert_equal "$output" "$one"
    one=$(fftshard 1 --version)
    run --separate-stderr fftshard 4 --version
    assert_success
    assert_equal "$output" "$one"
}

@test "-h and -V are --help and --version" {
    run --separate-stderr fftshard 1 -h
    assert_success
    assert_equal "$output" "$(fftshard 1 --help)"
    run --separate-stderr fftshard 1 -V
    assert_success
    assert_line --index 0 --regexp '^fftshard '
}

# ---------------------------------------------------------------- unusable input (3)

# bats test_tags=openmpi
@test "missing input file: exit 3" {
    run --separate-stderr fftshard 2 nothere.h5 out.h5
    assert_error "$EXIT_INPUT" "nothere.h5" "no such file"
    [ ! -e out.h5 ]
    assert_no_temporaries
}

# bats test_tags=sanitized,openmpi
@test "truncated HDF5 file: exit 3, HDF5's error stack only with --verbose" {
    head -c 1500 ok.h5 >cut.h5
    run --separate-stderr fftshard 2 cut.h5 out.h5
    assert_error "$EXIT_INPUT" "cut.h5"
    run --separate-stderr fftshard 2 --verbose cut.h5 out.h5
    assert_equal "$status" "$EXIT_INPUT"
    [[ $stderr == *HDF5-DIAG* ]] || fail "--verbose should show HDF5's error stack: $stderr"
    assert_equal "$(grep -c '^fftshard: error: ' <<<"$stderr")" 1
    [ ! -e out.h5 ]
}

@test "two datasets and no path: exit 3, the message lists both" {
    run --separate-stderr fftshard 2 two.h5 out.h5
    assert_error "$EXIT_INPUT" "two.h5" "/a" "/g/b"
    [ ! -e out.h5 ]
}

# bats test_tags=sanitized
@test "missing dataset: exit 3, names it and lists the datasets there are" {
    run --separate-stderr fftshard 2 two.h5:/nope out.h5
    assert_error "$EXIT_INPUT" "/nope" "/a" "/g/b"
    run --separate-stderr fftshard 2 two.h5:/g/nope/deeper out.h5
    assert_error "$EXIT_INPUT" "/g/nope/deeper"
    [ ! -e out.h5 ]
}

@test "a group where a dataset is expected: exit 3" {
    run --separate-stderr fftshard 2 two.h5:/g out.h5
    assert_error "$EXIT_INPUT" "/g" "group"
}

# ---------------------------------------------------------------- usage (2)

# bats test_tags=openmpi
@test "unknown long option: exit 2" {
    run --separate-stderr fftshard 2 --bogus ok.h5 out.h5
    assert_error "$EXIT_USAGE" "--bogus"
    [ ! -e out.h5 ]
    assert_no_temporaries
}

@test "unknown short option: exit 2" {
    run --separate-stderr fftshard 2 -x ok.h5 out.h5
    assert_error "$EXIT_USAGE" "-x"
}

@test "option missing its value: exit 2" {
    run --separate-stderr fftshard 2 ok.h5 out.h5 --norm
    assert_error "$EXIT_USAGE" "--norm"
    run --separate-stderr fftshard 2 ok.h5 out.h5 --axes
    assert_error "$EXIT_USAGE" "--axes"
    [ ! -e out.h5 ]
}

@test "--norm=bad: exit 2" {
    run --separate-stderr fftshard 2 --norm=bad ok.h5 out.h5
    assert_error "$EXIT_USAGE" "--norm=bad"
}

@test "--axes=x and --axes= : exit 2" {
    run --separate-stderr fftshard 2 --axes=x ok.h5 out.h5
    assert_error "$EXIT_USAGE" "--axes=x"
    run --separate-stderr fftshard 2 --axes= ok.h5 out.h5
    assert_error "$EXIT_USAGE" "--axes"
    run --separate-stderr fftshard 2 --axes=0,,1 ok.h5 out.h5
    assert_error "$EXIT_USAGE" "--axes"
    [ ! -e out.h5 ]
}

@test "--transpose=nope: exit 2, the known strategies listed" {
    run --separate-stderr fftshard 2 --transpose=nope ok.h5 out.h5
    assert_error "$EXIT_USAGE" "--transpose=nope" "alltoall"
}

@test "one positional argument: exit 2" {
    run --separate-stderr fftshard 2 ok.h5
    assert_error "$EXIT_USAGE" "INPUT and OUTPUT"
    run --separate-stderr fftshard 2
    assert_error "$EXIT_USAGE" "INPUT and OUTPUT"
}

@test "three positional arguments are two INPUTs and OUTPUT: a missing second INPUT is exit 3" {
    # (before several inputs, the third operand was refused as one too many)
    run --separate-stderr fftshard 2 ok.h5 out.h5 more.h5
    assert_error "$EXIT_INPUT" "out.h5"
    [ ! -e out.h5 ]
    [ ! -e more.h5 ]
}

@test "--quiet with --verbose: exit 2" {
    run --separate-stderr fftshard 2 --quiet --verbose ok.h5 out.h5
    assert_error "$EXIT_USAGE" "--quiet" "--verbose"
}

@test "dataset path that is the root group: exit 2" {
    run --separate-stderr fftshard 2 ok.h5:/ out.h5
    assert_error "$EXIT_USAGE" "ok.h5:/"
}

# ---------------------------------------------------------------- one message, however many ranks

# bats test_tags=openmpi
@test "messages are printed once on 4 ranks: usage, input, output, axes" {
    run --separate-stderr fftshard 4 --norm=bad ok.h5 out.h5
    assert_error "$EXIT_USAGE" "--norm=bad"
    run --separate-stderr fftshard 4 two.h5 out.h5
    assert_error "$EXIT_INPUT" "/a" "/g/b"
    touch exists.h5
    run --separate-stderr fftshard 4 ok.h5 exists.h5
    assert_error "$EXIT_OUTPUT" "exists.h5"
    run --separate-stderr fftshard 4 --axes=2,-1 ok.h5 out.h5
    assert_equal "$status" "$EXIT_USAGE"
    assert_equal "$(grep -c '^fftshard: error: ' <<<"$stderr")" 1
}

# bats test_tags=sanitized
@test "messages are printed once on 8 ranks" {
    run --separate-stderr fftshard 8 --axes=x ok.h5 out.h5
    assert_error "$EXIT_USAGE" "--axes=x"
    run --separate-stderr fftshard 8 bad.h5:/enum out.h5
    assert_error "$EXIT_INPUT" "enum"
    [ ! -e out.h5 ]
    assert_no_temporaries
}

# ---------------------------------------------------------------- what a successful run says

@test "--quiet: a successful run prints nothing" {
    run --separate-stderr fftshard 2 --quiet ok.h5 out.h5
    assert_success
    assert_equal "$output" ""
    assert_equal "$stderr" ""
    [ -f out.h5 ]
}

@test "without --quiet: one summary on stderr on 4 ranks, stdout empty" {
    run --separate-stderr fftshard 4 ok.h5 out.h5
    assert_success
    assert_equal "$output" ""
    assert_equal "$(grep -c '^fftshard: ' <<<"$stderr")" 1
    [[ $stderr == *4x3x5* ]] || fail "the summary should name the shape: $stderr"
}

@test "--verbose says integer input is converted: int16 to float32, int32 to float64" {
    run --separate-stderr fftshard 2 --verbose int.h5 out.h5
    assert_success
    [[ $stderr == *"int16 integers converted to float32"* ]] ||
        fail "no word on the int16 -> float32 conversion: $stderr"
    [[ $stderr == *"precision: single"* ]] || fail "int16 not computed in single precision: $stderr"
    oracle make i32.h5 5x4:int32
    run --separate-stderr fftshard 2 --verbose i32.h5 out32.h5
    assert_success
    [[ $stderr == *"int32 integers converted to float64"* ]] ||
        fail "no word on the int32 -> float64 conversion: $stderr"
    run --separate-stderr fftshard 2 --verbose --precision=double int.h5 out64.h5
    assert_success
    [[ $stderr == *"int16 integers converted to float64"* ]] || fail "--precision=double: $stderr"
}
