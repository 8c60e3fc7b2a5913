#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# The bad-input corpus: inputs, option values and side files (--wisdom,
# --report) that fftshard must refuse. Every case is run on 1 and on 3 ranks
# and must end with its documented exit status and one message naming the
# problem: no crash, no hang, no sanitizer report, no OUTPUT, no temporary,
# and the corpus files left byte for byte alone. tests/corpus/make-corpus.py
# writes the files and says what each one is.

load helpers

setup_file() {
    cd "$BATS_FILE_TMPDIR" || return 1
    python_serial "$srcdir/tests/corpus/make-corpus.py" corpus
    (cd corpus && find . -type f -print0 | sort -z | xargs -0 sha256sum) >corpus.sha256
}

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    cp -R "$BATS_FILE_TMPDIR/corpus/." .
}

# The ranks every case runs on.
RANKS="1 3"
# Seconds a case may take before it counts as a hang.
CASE_TIMEOUT=120

# refused STATUS FRAGMENT... -- ARGS...: run `fftshard ARGS... out.h5` on
# each of $RANKS ranks and check what every refusal must do: the status, no
# signal, no sanitizer or launcher report, nothing on stdout and exactly one
# line `fftshard: error: ...` holding every FRAGMENT on stderr (with the Try
# line after it for usage errors, status 2), no out.h5, no temporary, and
# every corpus file unchanged.
refused() {
    local want=$1 np
    shift
    local fragments=()
    while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
        fragments+=("$1")
        shift
    done
    [ "${1:-}" = -- ] || fail "refused: no -- before the arguments"
    shift
    for np in $RANKS; do
        run --separate-stderr timeout -k 10 "$CASE_TIMEOUT" \
            "$MPIEXEC" -n "$np" "$FFTSHARD" "$@" out.h5
        [ "$status" -ne 124 ] && [ "$status" -ne 137 ] ||
            fail "fftshard $* on $np ranks: no answer within $CASE_TIMEOUT s"
        [ "$status" -ne "$SANITIZER_EXIT" ] && [ "$status" -lt 128 ] &&
            ! grep -qE 'Sanitizer|runtime error:|BAD TERMINATION|TERMINATED WITH' <<<"$output$stderr" ||
            fail "fftshard $* on $np ranks crashed (status $status):
$output
$stderr"
        assert_error "$want" "${fragments[@]}"
        [ ! -e out.h5 ] || fail "fftshard $* on $np ranks left out.h5"
        assert_no_temporaries
        (cd "$BATS_TEST_TMPDIR" && sha256sum --quiet --strict -c "$BATS_FILE_TMPDIR/corpus.sha256") ||
            fail "fftshard $* on $np ranks changed a corpus file"
    done
}

# ---------------------------------------------------------------- not HDF5 files (3)

# bats test_tags=quick, sanitized
@test "truncated HDF5 files: inside the superblock, the object headers, the raw data" {
    refused "$EXIT_INPUT" truncated-superblock.h5 "HDF5 cannot open it" -- truncated-superblock.h5
    refused "$EXIT_INPUT" truncated-header.h5 "truncated file" -- truncated-header.h5
    refused "$EXIT_INPUT" truncated-data.h5 "truncated file" -- truncated-data.h5
}

@test "random bytes, with and without the HDF5 signature" {
    refused "$EXIT_INPUT" random.h5 "not an HDF5 file" -- random.h5
    refused "$EXIT_INPUT" random-signature.h5 "HDF5 cannot open it" -- random-signature.h5
}

@test "input that is not an HDF5 file: a line of text" {
    refused "$EXIT_INPUT" text.h5 "not an HDF5 file" -- text.h5
}

@test "empty input file" {
    refused "$EXIT_INPUT" empty.h5 "empty" -- empty.h5
}

@test "input that is a directory" {
    refused "$EXIT_INPUT" dir.h5 "directory" -- dir.h5
}

@test "input that is a FIFO or a device: refused, not waited on" {
    refused "$EXIT_INPUT" fifo.h5 "not a regular file" -- fifo.h5
    refused "$EXIT_INPUT" /dev/null "not a regular file" -- /dev/null
    [ -p fifo.h5 ] || fail "fifo.h5 is no longer a FIFO"
}

# ---------------------------------------------------------------- datasets fftshard cannot transform (3)

@test "zero-length axis: the axis and the real shape 3x0x2 named" {
    refused "$EXIT_INPUT" zero-axis.h5:/data "axis 1" "length 0" "3x0x2" -- zero-axis.h5
}

@test "scalar and null datasets" {
    refused "$EXIT_INPUT" scalar.h5:/data "scalar" -- scalar.h5
    refused "$EXIT_INPUT" null.h5:/data "null" -- null.h5
}

@test "9 dimensions (fftshard handles 1 to 8)" {
    refused "$EXIT_INPUT" nine-d.h5:/data "9 dimensions" "1 to 8" -- nine-d.h5
}

# bats test_tags=sanitized
@test "more elements than fftshard can count: 2^40 x 2^40 x 2^40" {
    refused "$EXIT_INPUT" huge.h5:/data "1099511627776x1099511627776x1099511627776" "too large" -- huge.h5
    refused "$EXIT_INPUT" huge.h5:/data "too large" -- --dry-run huge.h5
}

@test "string and enum element types" {
    refused "$EXIT_INPUT" string.h5:/data "unsupported element type string" -- string.h5
    refused "$EXIT_INPUT" vlen-string.h5:/data "unsupported element type string" -- vlen-string.h5
    refused "$EXIT_INPUT" enum.h5:/data "unsupported element type enum" -- enum.h5
}

# bats test_tags=sanitized
@test "compounds that are not {r, i} of two equal floats" {
    refused "$EXIT_INPUT" compound-xy.h5:/data "compound" "x, y" -- compound-xy.h5
    refused "$EXIT_INPUT" compound-rij.h5:/data "compound" "r, i, j" -- compound-rij.h5
    refused "$EXIT_INPUT" compound-mixed.h5:/data "compound" -- compound-mixed.h5
    refused "$EXIT_INPUT" compound-int.h5:/data "compound" -- compound-int.h5
}

@test "other element types: float16, opaque, array, variable-length, reference" {
    refused "$EXIT_INPUT" float16.h5:/data "float16" -- float16.h5
    refused "$EXIT_INPUT" opaque.h5:/data "opaque" -- opaque.h5
    refused "$EXIT_INPUT" array.h5:/data "array" -- array.h5
    refused "$EXIT_INPUT" vlen.h5:/data "variable-length" -- vlen.h5
    refused "$EXIT_INPUT" reference.h5:/data "reference" -- reference.h5:/data
}

@test "a dangling soft link and an external link into a missing file" {
    refused "$EXIT_INPUT" dangling.h5 "no dataset" -- dangling.h5
    refused "$EXIT_INPUT" dangling.h5 "no dataset /data" -- dangling.h5:/data
    refused "$EXIT_INPUT" external.h5 "no dataset /data" -- external.h5:/data
}

@test "--real on complex input" {
    refused "$EXIT_INPUT" "--real" "complex128" -- --real ok.h5
}

# ---------------------------------------------------------------- complex-to-real with a last size that does not fit

@test "--inverse --real: a last_size attribute that does not fit the last axis (3)" {
    refused "$EXIT_INPUT" last_size 11 -- --inverse --real half-attr.h5
}

@test "--inverse --real: --last-size that does not fit the last axis (2)" {
    refused "$EXIT_USAGE" --last-size 9 -- --inverse --real --last-size=9 half.h5
    refused "$EXIT_USAGE" --last-size 5 -- --inverse --real --last-size=5 half-attr.h5
}

# ---------------------------------------------------------------- --wisdom files that are not wisdom (3)

@test "--wisdom: binary data, an HDF5 file, text, another version" {
    local f
    for f in wisdom-binary.txt wisdom-h5.txt wisdom-text.txt wisdom-version.txt; do
        refused "$EXIT_INPUT" "$f" "not a fftshard wisdom file" -- --wisdom="$f" ok.h5
    done
}

# bats test_tags=sanitized
@test "--wisdom: a bad entry, a key longer than any, FFTW wisdom FFTW rejects" {
    refused "$EXIT_INPUT" wisdom-entry.txt "line 2" "not a wisdom entry" -- --wisdom=wisdom-entry.txt ok.h5
    refused "$EXIT_INPUT" wisdom-long-key.txt "line 2" -- --wisdom=wisdom-long-key.txt ok.h5
    refused "$EXIT_INPUT" wisdom-fftw.txt "FFTW rejects" -- --wisdom=wisdom-fftw.txt ok.h5
    refused "$EXIT_INPUT" wisdom-fftw.txt "FFTW rejects" -- --transpose=auto --wisdom=wisdom-fftw.txt ok.h5
}

@test "--wisdom: a directory" {
    refused "$EXIT_INPUT" wisdom-dir "directory" -- --wisdom=wisdom-dir ok.h5
}

@test "--wisdom: a FIFO is not waited on, a device is not replaced" {
    refused "$EXIT_INPUT" wisdom-fifo "not a regular file" -- --wisdom=wisdom-fifo ok.h5
    [ -p wisdom-fifo ] || fail "wisdom-fifo is no longer a FIFO"
    # A device of our own, not /dev/null: a regression would rename a file
    # over it.
    [ "$(id -u)" -eq 0 ] || skip "making a device node needs root"
    mknod null c 1 3
    refused "$EXIT_INPUT" null "not a regular file" -- --wisdom=null ok.h5
    [ -c null ] || fail "the device null was replaced by a regular file"
}

# ---------------------------------------------------------------- --report paths that cannot be written (4)

@test "--report: under a regular file, in a missing directory" {
    refused "$EXIT_OUTPUT" afile/r.json -- --report=afile/r.json ok.h5
    refused "$EXIT_OUTPUT" nodir/r.json -- --report=nodir/r.json ok.h5
    [ ! -e nodir ] || fail "nodir was created"
    refused "$EXIT_OUTPUT" fifo.h5 "not a regular file" -- --report=fifo.h5 ok.h5
    [ -p fifo.h5 ] || fail "fifo.h5 is no longer a FIFO"
}

# ---------------------------------------------------------------- option values out of range (2)

@test "--packet=0 and other sizes out of range" {
    refused "$EXIT_USAGE" --packet=0 "1 byte to 1G" -- --packet=0 ok.h5
    refused "$EXIT_USAGE" --packet=2G -- --packet=2G ok.h5
    refused "$EXIT_USAGE" --packet=18446744073709551616 -- --packet=18446744073709551616 ok.h5
    refused "$EXIT_USAGE" --packet=16777216T -- --packet=16777216T ok.h5
}

@test "--queues=-1 and other counts out of range" {
    refused "$EXIT_USAGE" --queues=-1 "1 to 1024" -- --queues=-1 ok.h5
    refused "$EXIT_USAGE" --queues=0 -- --queues=0 ok.h5
    refused "$EXIT_USAGE" --queues=1025 -- --queues=1025 ok.h5
    refused "$EXIT_USAGE" --queues=99999999999999999999 -- --queues=99999999999999999999 ok.h5
    refused "$EXIT_USAGE" --seed=-1 -- --seed=-1 ok.h5
    refused "$EXIT_USAGE" --grid=0x3 -- --grid=0x3 ok.h5
    refused "$EXIT_USAGE" --last-size=0 -- --inverse --real --last-size=0 half.h5
    refused "$EXIT_USAGE" --check-tolerance=0 -- --check-tolerance=0 ok.h5
}

@test "--axes=0,0: the same axis twice" {
    refused "$EXIT_USAGE" --axes=0,0 "axis 0 given twice" -- --axes=0,0 ok.h5
    refused "$EXIT_USAGE" --axes "same axis" -- --axes=1,-2 ok.h5
}

@test "--axes=7 on a 3-D dataset: out of range" {
    refused "$EXIT_USAGE" --axes "axis 7" "3-D" -- --axes=7 ok.h5
    refused "$EXIT_USAGE" --axes "axis -4" "3-D" -- --axes=-4 ok.h5
    refused "$EXIT_USAGE" --axes=8 "-8 to 7" -- --axes=8 ok.h5
    refused "$EXIT_USAGE" --axes=9 "-8 to 7" -- --axes=9 ok.h5
}
