/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pass: one pass of the out-of-core executor on this rank's blocks, the
 * engine of fs_exec_run (ooc.h says what a pass does). Private to exec/.
 * Owns the pass's FFTW plans, its I/O thread and its layouts of the
 * scratch files. */
#ifndef FS_EXEC_PASS_H
#define FS_EXEC_PASS_H

#include <stdint.h>

#include "compute/check.h"
#include "exec/ooc.h"
#include "io/finite.h"

/* One dataset's run, the same through its passes. */
typedef struct fs_exec_data {
    const fs_exec_args *a;
    const fs_transform *vt;            /* the plan's, over its virtual ranks */
    int rank, k;                       /* this rank's blocks: rank k .. rank k + k - 1 */
    size_t cb;                         /* bytes of a working element */
    int in_raw;                        /* INPUT read with pread (else through HDF5) */
    int64_t in_offset;                 /* its dataset's first byte in the file */
    int out_raw;                       /* OUTPUT's result written with pwrite */
    int64_t out_offset;
    const char *out_path;              /* the file that is (OUTPUT's temporary) */
    fs_finite finite;                  /* the first pass's count of NaN and Inf */
    int counting;
    fs_check_sums sums;                /* --check's */
    fs_stage_turn turn;                /* the stages' view of a block */
} fs_exec_data;

/* Collective: pass p of x->a->plan; *stats (out) its figures on this rank.
 * Not agreed (a rank that failed stops with the others at the next block
 * and returns its own status: the caller agrees). */
fs_status fs_exec_pass(fs_exec_data *x, int p, fs_exec_pass_stats *stats);

#endif
