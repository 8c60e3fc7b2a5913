#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# run-fuzz.sh TARGET SECONDS SRCDIR BUILDDIR: one target of `make fuzz`.
#
# SRCDIR is tests/fuzz of the source tree, BUILDDIR tests/fuzz of the build
# tree (where fuzz_TARGET was built). MPIEXEC and FFTSHARD name the launcher
# and the built program. In turn:
#  1. the seeds (SRCDIR/corpus-TARGET/) and the regressions
#     (SRCDIR/regressions/TARGET-*) are run once each: any failure stops here;
#  2. the target is fuzzed for SECONDS in libFuzzer's fork mode, which goes
#     on after a crash: new inputs go to BUILDDIR/work-TARGET/, what failed
#     to BUILDDIR/findings/ (kept from run to run until removed);
#  3. every finding is sorted. A crash inside HDF5 (the first frame of the
#     report that is fftshard's or HDF5's is HDF5's) is HDF5's own: fftshard,
#     which probes its input in a child process, must answer that file with
#     status 3 and one message. Anything else is a defect of fftshard and
#     fails `make fuzz`.
set -eu

target=$1 seconds=$2 src=$3 build=$4
mkdir -p "$build/work-$target" "$build/findings"
build=$(cd "$build" && pwd) # fftshard runs the findings from elsewhere
fuzzer=$build/fuzz_$target
work=$build/work-$target
findings=$build/findings
: "${MPIEXEC:=mpiexec.mpich}" "${FFTSHARD:=src/fftshard}"

# HDF5 gives back NULL for a size read from a damaged file: not a finding.
# LeakSanitizer: HDF5 loses memory on damaged files (tests/fuzz/lsan.supp).
ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1
LSAN_OPTIONS=suppressions=$src/lsan.supp:print_suppressions=0
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS

echo "run-fuzz: $target: seeds and regressions"
set -- "$src/corpus-$target"/*
for f in "$src/regressions/$target"-*; do
    [ -e "$f" ] && set -- "$@" "$f"
done
if ! "$fuzzer" -runs=1 "$@" >"$build/replay-$target.log" 2>&1; then
    cat "$build/replay-$target.log" >&2
    echo "run-fuzz: $target: a seed or a regression fails (above)" >&2
    exit 1
fi

echo "run-fuzz: $target: fuzzing for $seconds s"
before=$(ls "$findings" | grep -c "^$target-" || true)
"$fuzzer" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -timeout=30 \
    -rss_limit_mb=4096 -malloc_limit_mb=4096 -max_total_time="$seconds" \
    -artifact_prefix="$findings/$target-" "$work" "$src/corpus-$target" \
    >"$build/fuzz-$target.log" 2>&1 || {
    tail -n 30 "$build/fuzz-$target.log" >&2
    echo "run-fuzz: $target: the fuzzer itself failed (log: $build/fuzz-$target.log)" >&2
    exit 1
}
tail -n 3 "$build/fuzz-$target.log"

# Every finding is run again: its report says whose it is, from the first
# frame in HDF5 or in fftshard's code.
limits="-timeout=30 -rss_limit_mb=4096 -malloc_limit_mb=4096"
status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$findings/$target"-*; do
    [ -e "$f" ] || continue
    # shellcheck disable=SC2086
    if "$fuzzer" $limits "$f" >"$tmp/report" 2>&1; then
        echo "run-fuzz: $f passes now (once kept in $src/regressions/, remove it)"
        continue
    fi
    kind=fftshard
    if [ "$target" = probe ] &&
        grep -E '^ *#[0-9]+ ' "$tmp/report" |
        grep -E -m1 'libhdf5|in fs_|/src/[a-z_]+\.c:|tests/fuzz/[a-z_]+\.c:|LLVMFuzzerTestOneInput' |
            grep -q libhdf5; then
        kind=hdf5
    fi
    if [ "$kind" = hdf5 ]; then
        answer=0
        (cd "$tmp" && rm -f out.h5 &&
            timeout 120 "$MPIEXEC" -n 1 "$FFTSHARD" "$f" out.h5 >stdout 2>stderr) || answer=$?
        if [ "$answer" -eq 3 ] && [ ! -s "$tmp/stdout" ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] &&
            grep -q '^fftshard: error: ' "$tmp/stderr"; then
            echo "run-fuzz: HDF5 fails on $f; fftshard answers: $(cat "$tmp/stderr")"
            continue
        fi
        echo "run-fuzz: HDF5 fails on $f and fftshard does not answer it cleanly (status $answer):" >&2
        cat "$tmp/stdout" "$tmp/stderr" >&2
    else
        echo "run-fuzz: a defect of fftshard: $f" >&2
        grep -vE '^(INFO|Running|Executed|\*\*\*)' "$tmp/report" | head -n 60 >&2 || true
    fi
    status=1
done
after=$(ls "$findings" | grep -c "^$target-" || true)
echo "run-fuzz: $target: $((after - before)) new findings in $findings"
if [ "$status" -ne 0 ]; then
    echo "run-fuzz: $target: fix the defects above; keep each input as $src/regressions/$target-NAME" >&2
fi
exit "$status"
