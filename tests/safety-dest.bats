#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Destinations: OUTPUT, --report and --wisdom are refused (exit 4, before
# any work) when one is the same file as an input, an input shard, a
# virtual dataset's source or another destination, or names no file in a
# writable directory; the report and the wisdom are written before the
# result is committed, so a full disk leaves OUTPUT untouched; the space
# check counts every destination and HDF5's metadata for small chunks.

load helpers

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    job=
}

teardown() {
    kill_job
    if mountpoint -q small 2>/dev/null; then
        umount small
    fi
}

# small_disk KIB_FREE: a 1 MiB tmpfs at small/ with KIB_FREE KiB left free.
small_disk() {
    mkdir small
    mount -t tmpfs -o size=1m tmpfs small 2>/dev/null || skip "cannot mount a small tmpfs here"
    local fill=$((1024 - $1))
    if [ "$fill" -gt 0 ]; then
        dd if=/dev/zero of=small/filler bs=1k count="$fill" 2>/dev/null || true
    fi
}

# refused_before_work STATUS FRAGMENT... -- ARGS: fftshard on 2 ranks
# refuses with STATUS and one line, writing nothing.
refused_before_work() {
    local want=$1 fragments=()
    shift
    while [ "$1" != -- ]; do
        fragments+=("$1")
        shift
    done
    shift
    run --separate-stderr timeout -k 5 60 "$MPIEXEC" -n 2 "$FFTSHARD" --quiet "$@"
    assert_error "$want" "${fragments[@]}"
    assert_no_temporaries
}

@test "--wisdom or --report naming OUTPUT, the input or each other: exit 4, nothing written" {
    oracle make in.h5 6x5:complex128
    refused_before_work "$EXIT_OUTPUT" "--wisdom=out.h5" "output file" -- --wisdom=out.h5 in.h5 out.h5
    [ ! -e out.h5 ] || fail "the wisdom or the result was written to out.h5"
    refused_before_work "$EXIT_OUTPUT" "--wisdom=w.txt" "--report" -- --report=w.txt --wisdom=w.txt in.h5 out.h5
    [ ! -e w.txt ] && [ ! -e out.h5 ] || fail "a refused run wrote a file"
    # existing files, named two ways
    fftshard 2 --quiet --wisdom=w.txt in.h5 out.h5
    local before_w before_in
    before_w=$(checksum w.txt)
    before_in=$(checksum in.h5)
    refused_before_work "$EXIT_OUTPUT" "--wisdom=./w.txt" "--report" -- --report=w.txt --wisdom=./w.txt in.h5 o2.h5
    refused_before_work "$EXIT_OUTPUT" "--wisdom=in.h5" "input file" -- --wisdom=in.h5 in.h5 o2.h5
    refused_before_work "$EXIT_OUTPUT" "--report=out.h5" "output file" -- --force --report=out.h5 in.h5 out.h5
    [ ! -e o2.h5 ] || fail "a refused run wrote o2.h5"
    assert_equal "$(checksum w.txt)" "$before_w"
    assert_equal "$(checksum in.h5)" "$before_in"
}

@test "OUTPUT, --report or --wisdom an input shard or a virtual dataset's source: exit 4, input unchanged" {
    oracle make a.h5 6x4:complex128
    oracle shard a.h5 'sh.%d.h5' 2,2,2 --vds=v.h5 --list=list.txt
    mkdir sub
    oracle shard a.h5 'sub/s.%d.h5' 3,3 --vds=sub/v.h5
    local f sums
    sums=$(sha256sum sh.*.h5 sub/*.h5 list.txt v.h5)
    refused_before_work "$EXIT_OUTPUT" "sh.1.h5" "input shard" -- --force --shards 'sh.%d.h5' sh.1.h5
    refused_before_work "$EXIT_OUTPUT" "sh.0.h5" "input shard" -- --force --shards list.txt sh.0.h5
    refused_before_work "$EXIT_OUTPUT" "list.txt" "--shards list" -- --force --shards list.txt list.txt
    refused_before_work "$EXIT_OUTPUT" "sh.2.h5" "virtual dataset" -- --force v.h5 sh.2.h5
    refused_before_work "$EXIT_OUTPUT" "--wisdom=sh.0.h5" "virtual dataset" -- --wisdom=sh.0.h5 v.h5 o.h5
    refused_before_work "$EXIT_OUTPUT" "--report=sub/s.1.h5" "virtual dataset" -- --report=sub/s.1.h5 sub/v.h5 o.h5
    assert_equal "$(sha256sum sh.*.h5 sub/*.h5 list.txt v.h5)" "$sums"
    [ ! -e o.h5 ] || fail "a refused run wrote o.h5"
    # a source is where HDF5 finds it: sub/v.h5's s.1.h5 is sub/s.1.h5, not ./s.1.h5
    run fftshard 2 --quiet sub/v.h5 s.1.h5
    assert_success
}

@test "--report or --wisdom on a full disk: exit 1 before any work, OUTPUT unchanged" {
    oracle make in.h5 8x8x8:complex128
    oracle make --seed 3 in2.h5 8x8x8:complex128
    fftshard 2 --quiet in.h5 out.h5
    local before side
    before=$(checksum out.h5)
    small_disk 0
    for side in --report=small/r.json --wisdom=small/w.txt; do
        refused_before_work "$EXIT_RUNTIME" "small/" "disk full" -- --force "$side" in2.h5 out.h5
        assert_equal "$(checksum out.h5)" "$before"
        assert_no_temporaries small
    done
}

@test "the disk fills up during the run: the report or wisdom fails before the commit, OUTPUT unchanged" {
    oracle make in.h5 8x8x8:complex128
    oracle make --seed 3 in2.h5 8x8x8:complex128
    fftshard 2 --quiet in.h5 out.h5
    local before side
    before=$(checksum out.h5)
    small_disk 1024
    for side in --report=small/r.json --wisdom=small/w.txt; do
        # the previous job's "pausing" line must not be taken for this one's
        rm -f run.out run.err
        FFTSHARD_PAUSE=write:2 "$MPIEXEC" -n 2 "$FFTSHARD" --quiet --force "$side" in2.h5 out.h5 \
            >run.out 2>run.err &
        job=$!
        await_pause run.err "pausing" "the write phase"
        dd if=/dev/zero of=small/filler bs=64k count=100 2>/dev/null || true
        local st=0
        wait "$job" || st=$?
        job=
        assert_equal "$(checksum out.h5)" "$before"
        assert_equal "$st" "$EXIT_RUNTIME"
        grep -q "^fftshard: error: small/.*No space left on device" run.err ||
            fail "$side: no message naming the full disk: $(cat run.err)"
        assert_no_temporaries
        assert_equal "$(ls -A small)" "filler"
        rm small/filler
    done
}

@test "the free-space check counts every destination on one file system together" {
    oracle make in.h5 8x8x8:complex128
    # The result needs 8 KiB of data and 256 KiB for HDF5's metadata, the
    # report on 2 ranks 20 KiB (output.c): each fits in 272 KiB, both do not.
    small_disk 272
    run fftshard 2 --quiet in.h5 small/out.h5
    assert_success
    rm small/out.h5
    refused_before_work "$EXIT_RUNTIME" "small/out.h5" "the result and the report need" "disk full" -- \
        --report=small/r.json in.h5 small/out.h5
    [ ! -e small/out.h5 ] || fail "OUTPUT was written"
    assert_no_temporaries small
}

@test "small --chunks on a nearly full disk: exit 1 before any work, no hang, nothing left" {
    oracle make in.h5 32x32x16:complex128
    # 256 KiB of data, but 16384 chunks of one element: their index alone
    # outgrows the 1 MiB disk while HDF5 writes its metadata.
    small_disk 1024
    local np
    for np in 1 2; do
        run --separate-stderr timeout -k 5 60 "$MPIEXEC" -n "$np" "$FFTSHARD" --quiet --chunks=1,1,1 in.h5 small/out.h5
        assert_error "$EXIT_RUNTIME" "small/out.h5" "disk full"
        assert_equal "$(ls -A small)" ""
    done
    # the default chunks fit
    run fftshard 2 --quiet --chunks=32,32,16 in.h5 small/out.h5
    assert_success
}

@test "OUTPUT ending in / or ., --wisdom in a missing or read-only directory: exit 4 before any work" {
    oracle make in.h5 6x5:complex128
    refused_before_work "$EXIT_OUTPUT" "new.h5/" "directory" -- in.h5 new.h5/
    [ ! -e new.h5 ] || fail "new.h5 was created"
    refused_before_work "$EXIT_OUTPUT" "names a directory" -- in.h5 .
    refused_before_work "$EXIT_OUTPUT" "--wisdom=nodir/w.txt" "No such file or directory" -- --wisdom=nodir/w.txt in.h5 out.h5
    refused_before_work "$EXIT_OUTPUT" "--wisdom=in.h5/w.txt" "Not a directory" -- --wisdom=in.h5/w.txt in.h5 out.h5
    [ ! -e nodir ] && [ ! -e out.h5 ] || fail "a refused run created a file"
    mkdir small
    mount -t tmpfs -o ro,size=1m tmpfs small 2>/dev/null || skip "cannot mount a read-only tmpfs here"
    refused_before_work "$EXIT_OUTPUT" "--wisdom=small/w.txt" "Read-only file system" -- --wisdom=small/w.txt in.h5 out.h5
    [ ! -e out.h5 ] || fail "OUTPUT written although the wisdom cannot be"
}

@test "--force --shard-output whose old set holds an input shard: exit 4, the old set kept" {
    oracle make in.h5 8x6x4:complex128
    fftshard 2 --quiet --shard-output=2 in.h5 o.h5
    local dir
    dir=$(ls -d o.h5.shards-*)
    [ -f "$dir/o.0000.h5" ] && [ -f "$dir/o.0001.h5" ] || fail "unexpected set: $(ls -R)"
    local before
    before=$(cksum "$dir"/o.000*.h5)
    # transform the old set itself into a new set over it: the commit would
    # remove the files being read
    refused_before_work "$EXIT_OUTPUT" "o.h5" "shard set --force replaces" "input shard" -- \
        --force --shard-output=2 --shards "$dir/o.%04d.h5" o.h5
    assert_equal "$(cksum "$dir"/o.000*.h5)" "$before"
    # an input that is not in the old set is fine
    fftshard 2 --quiet --force --shard-output=2 in.h5 o.h5
}
