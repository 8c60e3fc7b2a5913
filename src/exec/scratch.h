/* SPDX-License-Identifier: GPL-3.0-or-later */
/* scratch: the scratch files of an out-of-core run, and how a pass's
 * blocks lie in them.
 *
 * A scratch file is fftshard's own temporary (core/atomic.h), named as
 * OUTPUT's temporary is (.NAME.fftshard-tmp-HOST-PID-XXXXXX, NAME OUTPUT's
 * last component) in the scratch directory (--scratch, else OUTPUT's), so
 * that a signal removes it with the other temporaries and the next run
 * that writes OUTPUT there removes what a killed run left. Rank 0 creates
 * them before any work and holds them open and locked; every rank
 * registers them and moves their bytes with rawio (the I/O thread).
 *
 * The layout: the scratch written after pass p holds the array in the
 * blocks of the next pass, each stored row-major, one after the other in
 * the order of the virtual ranks (fs_tiles): a block of the next pass is
 * one run, and a block of this pass is one run in each of them (slabs) or
 * a few. Owns the names. */
#ifndef FS_SCRATCH_H
#define FS_SCRATCH_H

#include <mpi.h>
#include <stdint.h>

#include "core/errors.h"
#include "core/layout.h"
#include "plan/outofcore.h"
#include "plan/transform.h"

/* a pass reads one and writes another; the kept files (--vector's: one per INPUT) */
#define FS_SCRATCH_FILES (FS_OOC_KEPT_FILE + FS_OOC_MAX_KEPT)

typedef struct fs_scratch {
    char *final;                     /* the name the temporaries are made for, */
    char *dir;                       /* in this directory */
    int n;
    char *path[FS_SCRATCH_FILES];    /* every rank's copy of the names */
} fs_scratch;

/* Collective: n scratch files (none: s->final alone) for OUTPUT
 * (output_file) in dir (NULL: OUTPUT's directory), empty. FS_ERR_OUTPUT (status 4) when the directory
 * is missing or does not allow creating a file. Agreed, printed. */
fs_status fs_scratch_begin(MPI_Comm comm, const char *output_file, const char *dir, int n,
                           fs_scratch *s);
/* Collective: the files first .. first + n - 1 `bytes` long each, their
 * space taken (fallocate where the file system allows: a disk that fills
 * meanwhile fails here, not in a pass); 0 frees it. Agreed. */
fs_status fs_scratch_size(MPI_Comm comm, fs_scratch *s, int first, int n, int64_t bytes);
/* Remove the files (rank 0 unlinks, every rank forgets them). */
void fs_scratch_end(fs_scratch *s, int rank);

/* Where the blocks of one stage of a transform planned over V virtual
 * ranks lie in a scratch file: block w's box and its byte offset. */
typedef struct fs_tiles {
    int n;
    fs_box *box;
    int64_t *offset;
} fs_tiles;

/* The blocks of stage s of vt (elements of elem_bytes); free with
 * fs_tiles_free. FS_ERR_RUNTIME when out of memory. */
fs_status fs_tiles_new(const fs_transform *vt, int s, size_t elem_bytes, fs_tiles *t);
void fs_tiles_free(fs_tiles *t);

#endif
