/* SPDX-License-Identifier: GPL-3.0-or-later */
/* rawio: a rank's pieces of contiguous datasets and raw files moved
 * between memory and their files by a helper thread, with pread or pwrite,
 * while the rank computes on the pieces already moved (pipeline.c overlaps
 * the read with the first FFT pass and the write with the last; the
 * out-of-core executor streams blocks of the input, its scratch files and
 * the output through one thread, reads and writes in the order queued).
 *
 * The caller has learnt from HDF5 where the dataset's bytes lie and that
 * they are stored exactly as in memory (h5io.h: fs_h5_raw_input,
 * fs_h5_output_raw), or made the raw file itself. This module calls neither
 * HDF5 nor MPI, so the thread never meets HDF5's global state and
 * MPI_THREAD_FUNNELED is all MPI has to allow. The thread holds every
 * signal: SIGINT and SIGTERM stay with the main thread (signals.h).
 *
 * Drop behind: a file moved once and not again soon (the out-of-core
 * passes) can leave the page cache as the thread goes. Its reads are
 * asked ahead of the read (posix_fadvise's WILLNEED, a few MiB: a piece
 * of short strided runs then waits on the disk about once) and dropped
 * once read; its writes are started to the disk as soon as they are
 * written, and the thread waits for the oldest once more than
 * FS_RAWIO_DIRTY_BYTES are on their way, then drops them: a run in a
 * memory cgroup, which counts the page cache, holds that much of it dirty
 * and no more, and the disk is fed at its own pace.
 * Owns the thread, the file descriptors it opens and the queue of pieces;
 * the memory of a piece is the caller's until the piece is done
 * (fs_rawio_wait). */
#ifndef FS_RAWIO_H
#define FS_RAWIO_H

#include <stddef.h>
#include <stdint.h>

#include "core/errors.h"
#include "core/layout.h"

/* The files one thread may move pieces of. */
#define FS_RAWIO_MAX_FILES 4
/* The most one pread or pwrite moves; with drop_behind, the longest range
 * started to the disk (or dropped) at once. */
#define FS_RAWIO_CHUNK_BYTES ((int64_t)8 * 1024 * 1024)
/* Bytes of a piece read with drop_behind asked ahead of the read. */
#define FS_RAWIO_AHEAD_BYTES ((int64_t)8 * 1024 * 1024)
/* Bytes written with drop_behind that may be on their way to the disk. */
#define FS_RAWIO_DIRTY_BYTES ((int64_t)32 * 1024 * 1024)

typedef struct fs_rawio_args {
    const char *path;        /* the file: opened read-only, or write-only (it must exist);
                                NULL in fs_rawio_new: none yet (fs_rawio_add) */
    const char *name;        /* what messages call it */
    int writing;
    int64_t data_offset;     /* byte offset of the dataset's first element in the file */
    fs_box dataset;          /* the whole dataset (start 0) */
    size_t elem_bytes;
    int64_t max_pieces;      /* fs_rawio_new: the most pieces queued at a time, of every
                                file (a submit waits for room) */
    int drop_behind;         /* out of the page cache once moved (see above) */
} fs_rawio_args;

typedef struct fs_rawio fs_rawio;

/* Start the thread and open a->path (unless NULL) as file 0. Free with
 * fs_rawio_free. */
fs_status fs_rawio_new(const fs_rawio_args *a, fs_rawio **out);

/* Open one more file for the thread (its max_pieces unused); *slot (out)
 * names it in fs_rawio_submit_to. */
fs_status fs_rawio_add(fs_rawio *io, const fs_rawio_args *a, int *slot);

/* Queue box `piece` of file 0's dataset: its elements at `mem`, the
 * storage of box mem_box (which holds piece; mem is mem_box's first
 * element). */
fs_status fs_rawio_submit(fs_rawio *io, const fs_box *piece, const fs_box *mem_box, void *mem);

/* The same for file `slot`, the piece a box of `region`, an array stored
 * row-major from byte data_offset of the file (global coordinates: a tile
 * of a larger array). */
fs_status fs_rawio_submit_to(fs_rawio *io, int slot, int64_t data_offset, const fs_box *region,
                             const fs_box *piece, const fs_box *mem_box, void *mem);

/* Pieces submitted so far (the count fs_rawio_wait takes). */
int64_t fs_rawio_submitted(const fs_rawio *io);

/* Wait until the first n pieces submitted are done: FS_OK, or the first
 * failure of any piece (message set), at once. */
fs_status fs_rawio_wait(fs_rawio *io, int64_t n);

/* Wait for every piece submitted (and, drop_behind, for the writes to
 * reach the disk), end the thread and close the files: FS_OK, or the first
 * failure (message set). */
fs_status fs_rawio_close(fs_rawio *io);

/* Seconds the thread spent moving data (and of those reading and
 * writing, with the bytes and the ranges of neighbouring runs they were
 * moved in), and seconds fs_rawio_wait waited for it: the difference ran
 * while the caller computed. */
typedef struct fs_rawio_times {
    double busy_s, waited_s;
    double read_s, write_s;
    int64_t read_bytes, written_bytes;
    int64_t read_ranges, written_ranges;
} fs_rawio_times;

/* Without fs_rawio_close first (a failure elsewhere), the pieces still
 * queued are dropped; the thread joined, the files closed;
 * times (may be NULL) filled; *io set to NULL. */
void fs_rawio_free(fs_rawio **io, fs_rawio_times *times);

#endif
