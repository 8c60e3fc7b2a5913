/* SPDX-License-Identifier: GPL-3.0-or-later */
/* rawio: a rank's pieces of a contiguous dataset moved between memory and
 * its file by a helper thread, with pread or pwrite, while the rank computes
 * on the pieces already moved (pipeline.c overlaps the read with the first
 * FFT pass and the write with the last).
 *
 * The caller has learnt from HDF5 where the dataset's bytes lie and that
 * they are stored exactly as in memory (h5io.h: fs_h5_raw_input,
 * fs_h5_output_raw). This module calls neither HDF5 nor MPI, so the thread
 * never meets HDF5's global state and MPI_THREAD_FUNNELED is all MPI has to
 * allow. The thread holds every signal: SIGINT and SIGTERM stay with the
 * main thread (signals.h).
 * Owns the thread, the file descriptor it opens and the queue of pieces;
 * the memory of a piece is the caller's until the piece is done
 * (fs_rawio_wait). */
#ifndef FS_RAWIO_H
#define FS_RAWIO_H

#include <stddef.h>
#include <stdint.h>

#include "core/errors.h"
#include "core/layout.h"

typedef struct fs_rawio_args {
    const char *path;        /* the file: opened read-only, or write-only (it must exist) */
    const char *name;        /* what messages call it */
    int writing;
    int64_t data_offset;     /* byte offset of the dataset's first element in the file */
    fs_box dataset;          /* the whole dataset (start 0) */
    size_t elem_bytes;
    int64_t max_pieces;      /* the most pieces that will be submitted */
} fs_rawio_args;

typedef struct fs_rawio fs_rawio;

/* Open the file and start the thread. Free with fs_rawio_free. */
fs_status fs_rawio_new(const fs_rawio_args *a, fs_rawio **out);

/* Queue box `piece` of the dataset: its elements at `mem`, the storage of
 * box mem_box (which holds piece; mem is mem_box's first element). */
fs_status fs_rawio_submit(fs_rawio *io, const fs_box *piece, const fs_box *mem_box, void *mem);

/* Wait until the first n pieces submitted are done: FS_OK, or the first
 * failure of any piece (message set), at once. */
fs_status fs_rawio_wait(fs_rawio *io, int64_t n);

/* Wait for every piece submitted, end the thread and close the file:
 * FS_OK, or the first failure (message set). */
fs_status fs_rawio_close(fs_rawio *io);

/* Seconds the thread spent moving data, and seconds fs_rawio_wait waited
 * for it: the difference ran while the caller computed. */
typedef struct fs_rawio_times {
    double busy_s, waited_s;
} fs_rawio_times;

/* Without fs_rawio_close first (a failure elsewhere), the pieces still
 * queued are dropped; the thread joined, the file closed;
 * times (may be NULL) filled; *io set to NULL. */
void fs_rawio_free(fs_rawio **io, fs_rawio_times *times);

#endif
