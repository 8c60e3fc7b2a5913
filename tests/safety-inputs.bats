#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Inputs and I/O that must neither hang nor crash nor be misread: special
# files anywhere among the inputs (refused without being waited on),
# datasets whose metadata contradicts itself (refused by the input check,
# at once), names with a colon (given to MPI-IO literally), and a disk that
# fills up while HDF5 writes data or metadata (exit 1 on every rank count,
# no hang, no crash, nothing left).

load helpers

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    job=
    small=
}

teardown() {
    kill_job
    if [ -n "$small" ] && mountpoint -q "$small"; then
        umount "$small" || true
    fi
}

# Seconds a refusal may take before it counts as a hang.
HANG=30

# refused_quickly NP STATUS FRAGMENT... -- ARGS...: `fftshard ARGS... out.h5`
# on NP ranks ends with STATUS and our one line holding every FRAGMENT,
# within $HANG seconds, leaving no out.h5 and no temporary.
refused_quickly() {
    local np=$1 want=$2
    shift 2
    local fragments=()
    while [ "$1" != -- ]; do
        fragments+=("$1")
        shift
    done
    shift
    run --separate-stderr timeout -k 5 "$HANG" "$MPIEXEC" -n "$np" "$FFTSHARD" "$@" out.h5
    [ "$status" -ne 124 ] && [ "$status" -ne 137 ] ||
        fail "fftshard $* on $np ranks: no answer within $HANG s"
    assert_error "$want" "${fragments[@]}"
    [ ! -e out.h5 ] || fail "fftshard $* on $np ranks wrote out.h5"
    assert_no_temporaries
}

# virtual FILE SOURCE: a 4x6 float64 virtual dataset /data in FILE over the
# dataset /data of SOURCE (which need not exist).
virtual() {
    python_serial -c 'import h5py, sys
layout = h5py.VirtualLayout(shape=(4, 6), dtype="<f8")
layout[:] = h5py.VirtualSource(sys.argv[2], "data", shape=(4, 6))
with h5py.File(sys.argv[1], "w") as f:
    f.create_virtual_dataset("data", layout)' "$1" "$2"
}

# same_fft IN OUT: OUT holds the forward FFT of IN's only dataset (names of
# any characters; the oracle's case strings cannot hold spaces).
same_fft() {
    python_serial -c 'import h5py, numpy as np, sys
with h5py.File(sys.argv[1], "r") as f, h5py.File(sys.argv[2], "r") as g:
    x = f["data"][...]
    y = g["data"][...]
    err = np.abs(np.fft.fftn(x) - y).max() / max(np.abs(y).max(), 1e-300)
    sys.exit(0 if err < 1e-12 else "%s is not the FFT of %s: relative error %g" % (sys.argv[2], sys.argv[1], err))' "$1" "$2"
}

# ---------------------------------------------------------------- case 12: special files (3)

@test "special files among the inputs: a virtual dataset's source, a shard's, a --shards list, refused at once" {
    mkfifo fifo.h5
    virtual vds-fifo.h5 fifo.h5
    python_serial -c 'import socket; socket.socket(socket.AF_UNIX).bind("sock.h5")'
    virtual vds-sock.h5 sock.h5
    mkfifo list.txt
    refused_quickly 2 "$EXIT_INPUT" vds-fifo.h5 "source fifo.h5" "not a regular file (a FIFO)" -- vds-fifo.h5
    refused_quickly 1 "$EXIT_INPUT" "source fifo.h5" "not a regular file" -- vds-fifo.h5
    refused_quickly 2 "$EXIT_INPUT" "source sock.h5" "not a regular file (a socket)" -- vds-sock.h5
    if [ "$(id -u)" -eq 0 ]; then
        mknod null c 1 3
        virtual vds-dev.h5 null
        refused_quickly 2 "$EXIT_INPUT" "source null" "not a regular file (a device)" -- vds-dev.h5
        [ -c null ] || fail "the device was replaced"
    fi
    # a shard that is a virtual dataset over a FIFO; a list that is a FIFO
    cp vds-fifo.h5 sh.0.h5
    refused_quickly 2 "$EXIT_INPUT" sh.0.h5 "source fifo.h5" "not a regular file" -- --shards 'sh.%d.h5'
    refused_quickly 2 "$EXIT_INPUT" "--shards: list.txt" "not a regular file" -- --shards list.txt
    refused_quickly 1 "$EXIT_INPUT" "fifo.h5" "not a regular file" -- --dry-run vds-fifo.h5
    [ -p fifo.h5 ] && [ -p list.txt ] || fail "a FIFO was replaced"
}

@test "a --shards list holding a NUL byte, larger than 1 GiB or written to while read: refused at once" {
    oracle make a.h5 6x5x4:complex128
    oracle shard a.h5 'f.%d.h5' 3,3
    # a name cut at its NUL byte would name another file
    printf 'f.0.h5\nf.1.h5\0.old\n' >nul.txt
    # 2 GiB of a list and holes: sparse, it takes no room
    printf 'f.0.h5\nf.1.h5\n' >huge.txt
    truncate -s 2G huge.txt
    local np
    for np in 1 2; do
        refused_quickly "$np" "$EXIT_INPUT" "--shards: nul.txt: line 2 holds a NUL byte" -- --shards nul.txt
        refused_quickly "$np" "$EXIT_INPUT" "--shards: huge.txt: larger than 1 GiB" -- --shards huge.txt
    done
    printf 'f.0.h5\nf.1.h5\n' >list.txt
    rm -f run.err
    FFTSHARD_PAUSE=text-read:4 "$MPIEXEC" -n 2 "$FFTSHARD" --shards list.txt out.h5 2>run.err &
    job=$!
    await_pause run.err "pausing at text-read" "the list's end"
    echo "# one more line" >>list.txt
    end_job
    assert_equal "$job_status" "$EXIT_RUNTIME"
    grep -q "^fftshard: error: --shards: list.txt: changed while it was read (its size)" run.err ||
        fail "$(cat run.err)"
    [ ! -e out.h5 ] || fail "out.h5 was written"
    assert_no_temporaries
}

# ---------------------------------------------------------------- case 14: damaged metadata (3)

@test "metadata that contradicts itself: refused by the input check at once, not read for minutes" {
    python_serial "$srcdir/tests/corpus/make-corpus.py" corpus
    local c f fragment np start
    # A run that gets past the check would read for minutes and gigabytes:
    # a memory limit keeps a regression from hurting the machine.
    ulimit -v 3000000
    for c in "damaged-beyond-max.h5:axis 0 has length 40000, beyond its maximum length 4" \
        "damaged-beyond-max-small.h5:axis 0 has length 8, beyond its maximum length 4" \
        "damaged-contiguous.h5:192 bytes of data stored, its shape needs 384" \
        "damaged-chunks.h5:chunks of length 4 along axis 0, whose maximum length is 2"; do
        f=corpus/${c%%:*} fragment=${c#*:}
        for np in 1 2; do
            start=$SECONDS
            refused_quickly "$np" "$EXIT_INPUT" "$f:/data: damaged" "$fragment" -- "$f"
            ((SECONDS - start <= 10)) || fail "$f on $np ranks: refused after $((SECONDS - start)) s"
        done
    done
    # the same file as a virtual dataset's source
    virtual vds.h5 corpus/damaged-beyond-max-small.h5
    refused_quickly 2 "$EXIT_INPUT" "source corpus/damaged-beyond-max-small.h5" "damaged" -- vds.h5
}

# ---------------------------------------------------------------- case 15: names given to MPI-IO

# bats test_tags=openmpi
@test "names with a colon are read and written literally: ufs:x.h5 is not x.h5, snap_12:00.h5 is a name" {
    oracle make x.h5 6x5x4:complex128
    oracle make --seed 7 ufs:x.h5 6x5x4:complex128
    cp ufs:x.h5 snap_12:00.h5
    mkdir 'a:b'
    cp x.h5 'a:b/c d.h5'
    CASES=()
    local np
    for np in 1 3; do
        # ROMIO used to read x.h5 here, and the run succeeded
        fs "$np" ufs:x.h5 "out$np.h5"
        fs "$np" ufs:x.h5 "ufs:out$np.h5" --check
        fs "$np" snap_12:00.h5 "snap_12:00.out$np.h5" --chunks=2x2x2
        fs "$np" x.h5 "nfs:out$np.h5" --deflate=1
        run fftshard "$np" --quiet 'a:b/c d.h5' "a:b/o $np:1.h5"
        assert_success
        run same_fft 'a:b/c d.h5' "a:b/o $np:1.h5"
        assert_success
    done
    check_all
    # the attributes and the shard set name what the user named
    run python_serial -c 'import h5py; print(h5py.File("snap_12:00.out3.h5", "r")["data"].attrs["input"])'
    assert_output "snap_12:00.h5:/data"
    run fftshard 3 --quiet --shard-output=2 snap_12:00.h5 'a:b/s 1:2.h5'
    assert_success
    run same_fft snap_12:00.h5 'a:b/s 1:2.h5'
    assert_success
    # the master's virtual dataset is an input too
    run fftshard 2 --quiet --inverse 'a:b/s 1:2.h5' 'a:b/back.h5'
    assert_success
    run python_serial -c 'import h5py, numpy as np, sys
a = h5py.File("snap_12:00.h5", "r")["data"][...]
b = h5py.File("a:b/back.h5", "r")["data"][...]
sys.exit(0 if np.abs(a - b).max() < 1e-12 else "the round trip differs")'
    assert_success
    assert_no_temporaries
    assert_no_temporaries 'a:b'
}

# ---------------------------------------------------------------- case 13: the disk fills during the write (1)

# fill_while_paused NP FREE_KIB ARGS...: run fftshard on NP ranks writing
# small/out.h5, held at the start of the write phase while the disk is
# filled to leave FREE_KIB; the job's status goes to $job_status, its
# stderr to run.err.
fill_while_paused() {
    local np=$1 free=$2
    shift 2
    rm -f run.err
    FFTSHARD_PAUSE=write:2 "$MPIEXEC" -n "$np" "$FFTSHARD" --quiet "$@" small/out.h5 >run.out 2>run.err &
    job=$!
    await_pause run.err "pausing" "the write phase"
    local avail
    avail=$(df -k --output=avail small | tail -1)
    if ((avail > free)); then
        dd if=/dev/zero of=small/filler bs=1k count=$((avail - free)) 2>/dev/null || true
    fi
    deadline=$((SECONDS + 60))
    while kill -0 "$job" 2>/dev/null; do
        ((SECONDS < deadline)) || fail "$np ranks: the job hangs after the disk filled: $(cat run.err)"
        sleep 0.1
    done
    job_status=0
    wait "$job" || job_status=$?
    job=
    rm -f small/filler
}

# bats test_tags=openmpi
@test "the disk fills while HDF5 writes data or metadata: exit 1, no hang, no crash, nothing left" {
    mkdir small
    mount -t tmpfs -o size=16m tmpfs small 2>/dev/null || skip "cannot mount a small tmpfs here"
    small=$PWD/small
    oracle make in.h5 32x32x32:complex128
    # The disk is filled while every rank is held at the start of the write
    # phase, after the free-space check: however generous its estimate of
    # the metadata, the writes themselves must fail.
    local c np free chunks
    # 512 KiB of result in 32768 chunks of one element: the chunk index is
    # larger than the data. 0 to 100 KiB free: the chunk index written while
    # the dataset is created fails (HDF5 used to go on with the ranks in
    # different collective calls); 300 to 700 KiB: the data writes fail,
    # independent ones and collective ones (--deflate).
    for c in "1 0 1x1x1" "2 100 1x1x1" "3 50 1x1x1" "1 700 1x1x1" "3 700 1x1x1" "2 300 2x2x2" \
        "3 300 deflate"; do
        read -r np free chunks <<<"$c"
        if [ "$chunks" = deflate ]; then
            fill_while_paused "$np" "$free" --deflate=1 --chunks=2x2x2 in.h5
        else
            fill_while_paused "$np" "$free" --chunks="$chunks" in.h5
        fi
        [ "$job_status" -eq "$EXIT_RUNTIME" ] ||
            fail "$c: status $job_status, not $EXIT_RUNTIME: $(cat run.err)"
        ! grep -qE 'Segmentation|BAD TERMINATION|signal 11|backtrace' run.err ||
            fail "$c: a rank crashed: $(cat run.err)"
        # (its temporary's name while the file is being created)
        grep -Eq "^fftshard: error: small/(out.h5|\.out\.h5\.fftshard-tmp-[^:]*): .*No space left on device" run.err ||
            fail "$c: no message naming OUTPUT and the full disk: $(cat run.err)"
        [ "$(grep -c '^fftshard: error' run.err)" -eq 1 ] || fail "$c: more than one message: $(cat run.err)"
        [ -z "$(ls -A small)" ] || fail "$c: left in small/: $(ls -A small)"
    done
}
