#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Sharded files: virtual-dataset input, --shards by pattern and by list (with
# and without offset attributes), --shard-output with its virtual-dataset
# master, compressed input and --chunks/--deflate output, against numpy; bad
# shards named with exit 3; a killed --shard-output run leaves no master.

load helpers

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    CASES=()
}

# sfs NP SOURCE REF OUT [OPTIONS...]: run fftshard on NP ranks with input
# SOURCE and queue the check of OUT against numpy of REF (the unsharded
# array); the output's input attribute names SOURCE.
sfs() {
    local np=$1 src=$2 ref=$3 out=$4
    shift 4
    run fftshard "$np" --quiet "$@" "$src" "$out"
    assert_success
    local c="in=$ref out=$out ranks=$np source=${src%%:/*}"
    [[ " $* " == *" --inverse "* ]] && c+=" inverse"
    CASES+=("$c")
}

# no_output OUT: nothing of a failed run is left: no OUTPUT, no shard
# directory, no temporary.
no_output() {
    [ ! -e "$1" ] || fail "$1 was created"
    [ -z "$(compgen -G "$1.shards-*")" ] || fail "a shard directory of $1 was left"
    assert_no_temporaries
}

# bats test_tags=sanitized
@test "7 shards as a virtual dataset and by pattern on 4 ranks equal numpy" {
    oracle make a.h5 13x6x5:complex128
    oracle shard a.h5 'f.%04d.h5' 2,2,1,3,2,1,2 --vds=v.h5 --list=list.txt
    sfs 4 v.h5 a.h5 o1.h5
    sfs 4 'f.%04d.h5' a.h5 o2.h5 --shards
    sfs 4 list.txt a.h5 o3.h5 --shards
    check_all
}

@test "1, 3 and 7 shards on 1 to 8 ranks, by pattern, list and virtual dataset" {
    oracle make a.h5 11x4x3:float64 -- b.h5 7x9:complex64 -- c.h5 9x2x3x2:complex128
    oracle shard a.h5 'a%d.h5' 11
    oracle shard b.h5 'b.%02d.h5' 3,1,3 --list=b.txt
    oracle shard c.h5 's/c_%03d.h5' 1,1,1,2,1,2,1 --vds=c-vds.h5
    local np
    for np in 1 2 3 5 8; do
        sfs "$np" 'a%d.h5' a.h5 "out_a$np.h5" --shards
        sfs "$np" b.txt b.h5 "out_b$np.h5" --shards
        sfs "$np" c-vds.h5 c.h5 "out_c$np.h5"
    done
    check_all
}

@test "shards placed by offset attributes, numbered out of order; a list from another directory" {
    oracle make a.h5 10x5x6:complex128
    oracle shard a.h5 'p.%d.h5' 4,3,2,1 --offsets
    sfs 3 'p.%d.h5' a.h5 o.h5 --shards
    mkdir sub
    oracle shard a.h5 'sub/q%d.h5' 5,5 --list=sub/list
    # list entries are relative to the list's directory
    sed -i 's|^sub/||' sub/list
    sfs 2 sub/list a.h5 o2.h5 --shards
    check_all
}

@test "a virtual dataset in another directory finds its sources beside it" {
    mkdir -p d/parts
    oracle make a.h5 8x6x4:complex128
    oracle shard a.h5 'd/parts/x%d.h5' 3,5 --vds=d/v.h5
    sfs 3 d/v.h5 a.h5 o.h5
    check_all
}

# bats test_tags=sanitized
@test "bad shards: wrong shape, wrong type, missing file, each exit 3 naming the shard" {
    oracle make a.h5 6x4x3:complex128 -- bad.h5 2x5x3:complex128 -- f32.h5 2x4x3:complex64
    oracle shard a.h5 'g%d.h5' 2,2,2 --vds=v.h5 --list=list.txt
    cp g1.h5 keep.h5
    cp bad.h5 g1.h5
    run --separate-stderr fftshard 2 --shards 'g%d.h5' o.h5
    assert_error "$EXIT_INPUT" g1.h5 "shape 2x5x3"
    no_output o.h5
    cp f32.h5 g1.h5
    run --separate-stderr fftshard 2 --shards list.txt o.h5
    assert_error "$EXIT_INPUT" g1.h5 complex64
    no_output o.h5
    # a gap in the numbers names the missing shard; a list names its file
    mv g1.h5 gone.h5
    run --separate-stderr fftshard 3 --shards 'g%d.h5' o.h5
    assert_error "$EXIT_INPUT" g1.h5 "shard 1 is missing"
    no_output o.h5
    run --separate-stderr fftshard 2 --shards list.txt o.h5
    assert_error "$EXIT_INPUT" g1.h5 "no such file"
    no_output o.h5
    # a virtual dataset must not read fill values for a missing source
    run --separate-stderr fftshard 2 v.h5 o.h5
    assert_error "$EXIT_INPUT" g1.h5 "source"
    no_output o.h5
    # a source smaller than its mapping
    cp bad.h5 g1.h5
    oracle make g1.h5 1x4x3:complex128
    run --separate-stderr fftshard 2 v.h5 o.h5
    assert_error "$EXIT_INPUT" g1.h5 "shape 1x4x3"
    no_output o.h5
    # no file at all, an empty list, offsets that overlap
    run --separate-stderr fftshard 2 --shards 'none%d.h5' o.h5
    assert_error "$EXIT_INPUT" "no file matches"
    : >empty.txt
    run --separate-stderr fftshard 2 --shards empty.txt o.h5
    assert_error "$EXIT_INPUT" "lists no file"
    oracle shard a.h5 'h%d.h5' 3,3 --offsets
    cp h0.h5 h2.h5
    run --separate-stderr fftshard 2 --shards 'h%d.h5' o.h5
    assert_error "$EXIT_INPUT" overlaps
    no_output o.h5
}

# bats test_tags=sanitized
@test "--shard-output: files plus a master that h5py reads as one array equal to numpy" {
    oracle make a.h5 13x7x6:complex128 -- b.h5 3x40x8:float64
    sfs 4 a.h5 a.h5 o4.h5 --shard-output
    sfs 3 a.h5 a.h5 o2.h5 --shard-output=2
    sfs 6 a.h5 a.h5 op.h5 --shard-output=6 --decomp=pencil --grid=2x3
    sfs 6 a.h5 a.h5 oq.h5 --shard-output=2 --decomp=pencil --grid=2x3
    sfs 8 b.h5 b.h5 ob.h5 --shard-output
    check_all
    # one directory of files per master, as many as asked for
    [ "$(ls o4.h5.shards-*/ | wc -l)" -eq 4 ]
    [ "$(ls o2.h5.shards-*/ | wc -l)" -eq 2 ]
    [ "$(ls op.h5.shards-*/ | wc -l)" -eq 6 ]
    run h5dump -d /data -s 12,6,5 -c 1,1,1 o4.h5
    assert_success
    # the files carry offsets: they are --shards input again (round trip)
    local dir
    dir=$(compgen -G 'op.h5.shards-*')
    run fftshard 3 --quiet --inverse --shards "$dir/op.%04d.h5" back.h5
    assert_success
    run oracle check "in=op.h5 out=back.h5 inverse ranks=3 expect=a.h5 source=$dir/op.%04d.h5"
    assert_success
}

@test "--shard-output --force replaces the set; a refused or failed run leaves it whole" {
    oracle make a.h5 9x4x4:complex128
    fftshard 3 --quiet --shard-output a.h5 o.h5
    local first before
    first=$(compgen -G 'o.h5.shards-*')
    before=$(checksum o.h5)
    run --separate-stderr fftshard 3 --shard-output a.h5 o.h5
    assert_error "$EXIT_OUTPUT" "exists"
    assert_equal "$(checksum o.h5)" "$before"
    # a failure after the files were written (--check with an impossible
    # tolerance) keeps the old set
    run --separate-stderr fftshard 3 --force --shard-output --check --check-tolerance=1e-300 a.h5 o.h5
    assert_error "$EXIT_CHECK"
    assert_equal "$(checksum o.h5)" "$before"
    assert_equal "$(compgen -G 'o.h5.shards-*')" "$first"
    assert_no_temporaries
    fftshard 2 --quiet --force --inverse --shard-output a.h5 o.h5
    local now
    now=$(compgen -G 'o.h5.shards-*')
    [ "$now" != "$first" ] || fail "the shard directory was not replaced"
    [ "$(echo "$now" | wc -l)" -eq 1 ] || fail "old shard directories left: $now"
    run oracle check "in=a.h5 out=o.h5 inverse ranks=2"
    assert_success
}

@test "--shard-output killed midway: no master, no shard directory" {
    oracle make in.h5 96x96x96:complex128
    local attempt caught=0
    # the first run held at the start of its write (FFTSHARD_PAUSE: the
    # shards' directory exists, hidden), so that one signal surely finds a
    # run midway; the others at moments after the temporary appears
    for attempt in 1 2 3 4 5; do
        local pause=
        [ "$attempt" != 1 ] || pause=write:30
        FFTSHARD_PAUSE=$pause "$MPIEXEC" -n 4 "$FFTSHARD" --quiet --shard-output in.h5 out.h5 \
            >/dev/null 2>run.err &
        local pid=$!
        local deadline=$((${EPOCHREALTIME/./} + 10000000))
        until compgen -G '.*.fftshard-tmp-*' >/dev/null; do
            ((${EPOCHREALTIME/./} < deadline)) || break
        done
        if [ -n "$pause" ]; then
            until grep -q "pausing at" run.err || ((${EPOCHREALTIME/./} > deadline)); do :; done
            grep -q "pausing at" run.err || fail "the run was not held: $(cat run.err)"
        else
            sleep 0.0$((attempt * 2))
        fi
        kill -TERM "$pid" 2>/dev/null || true
        local st=0
        wait "$pid" || st=$?
        if [ "$st" -ne 0 ] && [ -e out.h5 ]; then
            # the signal came after the commit: the set must be whole
            grep -q "the output had been written" run.err ||
                fail "a master was left by an interrupted run: $(cat run.err)"
            run oracle check "in=in.h5 out=out.h5 ranks=4"
            assert_success
        elif [ "$st" -ne 0 ]; then
            caught=$((caught + 1))
            [ -z "$(compgen -G 'out.h5.shards-*')" ] || fail "a shard directory was left"
            # (The hidden temporaries are removed by the signal handlers of
            # the ranks that get to run them; the launcher may kill the rest
            # first. atomic.bats covers what is left behind.)
        fi
        rm -rf out.h5 out.h5.shards-*
    done
    [ "$caught" -gt 0 ] || fail "the held run was not interrupted"
}

@test "compressed input and --chunks/--deflate output, also sharded" {
    oracle make z.h5 12x10x6:float64:gzip
    sfs 3 z.h5 z.h5 d.h5 --deflate=6
    sfs 4 z.h5 z.h5 c.h5 --chunks=4x5x6
    sfs 4 z.h5 z.h5 s.h5 --shard-output=2 --deflate=1 --chunks=3x3x3
    check_all
    run python_serial -c '
import h5py
d = h5py.File("d.h5")["data"]; c = h5py.File("c.h5")["data"]
print(d.compression, d.shuffle, d.chunks is not None, c.compression, c.chunks)'
    assert_success
    assert_output "gzip True True None (4, 5, 6)"
}

@test "bad --shards, --shard-output, --chunks and --deflate values: exit 2" {
    oracle make a.h5 8x6x4:complex128
    local bad
    for bad in --deflate=0 --deflate=10 --deflate=x --chunks=0x2x2 --chunks=4x4 \
        --shard-output=0 --shard-output=9; do
        run --separate-stderr fftshard 8 "$bad" a.h5 o.h5
        assert_error "$EXIT_USAGE" "${bad%%=*}"
        no_output o.h5
    done
    run --separate-stderr fftshard 8 --decomp=pencil --grid=2x4 --shard-output=3 a.h5 o.h5
    assert_error "$EXIT_USAGE" "2x4 process grid"
    no_output o.h5
    run --separate-stderr fftshard 2 --shards 'x%d%d.h5' o.h5
    assert_error "$EXIT_INPUT" "no such file"
}

@test "--dry-run plans sharded input from the shards' shapes" {
    oracle make a.h5 10x6x4:complex128
    oracle shard a.h5 'f%d.h5' 4,4,2
    run fftshard 1 --dry-run --ranks=4 --shards 'f%d.h5'
    assert_success
    assert_output --partial "10x6x4 complex128 on 4 ranks"
}
