/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ooc: the out-of-core executor, beside the in-memory one (compute.h and
 * overlap.h, which the pipeline drives phase by phase): one dataset's
 * passes as plan/outofcore.h planned them.
 *
 * Every pass streams this rank's blocks (k of them: the virtual ranks
 * r k .. r k + k - 1) through two block buffers: while the rank transforms
 * one, the I/O thread (rawio.h) writes the block before it and reads the
 * block after it, in that order, so a pass runs at the disk's speed once
 * the FFTs of a block take less than its reads and writes. A block's path
 * through a pass: read (INPUT raw, or through HDF5 where it must convert,
 * slice or map shards; a scratch file raw), the stage's operations, the
 * stages' forward_block hooks (spectra binned), the transform written into
 * OUTPUT (raw where its dataset is contiguous and stored as in memory, else
 * through HDF5), the field stage's operate_block, the operations undone,
 * the scratch written in the next pass's blocks, the field written, or
 * --check's comparison with INPUT. Reads and writes through HDF5 are
 * collective: every rank takes its k blocks in step. NaN and Inf are
 * counted in the first pass and refused at its end, before OUTPUT holds
 * anything of the transform.
 *
 * Owns the FFTW plans of the blocks' shapes and the I/O thread of a pass,
 * and makes and frees the block buffers (fs_exec_buffers, held by the
 * caller between a dataset's runs); the scratch files, OUTPUT and the
 * stages are the caller's. */
#ifndef FS_OOC_H
#define FS_OOC_H

#include <mpi.h>

#include "compute/check.h"
#include "core/errors.h"
#include "core/progress.h"
#include "core/timers.h"
#include "exec/scratch.h"
#include "io/h5io.h"
#include "io/shards.h"
#include "plan/outofcore.h"
#include "stages/driver.h"

/* One pass as it ran on this rank. */
typedef struct fs_exec_pass_stats {
    double read_bytes, written_bytes;  /* this rank's */
    double read_ranges, written_ranges;/* the ranges of the files they were moved in (raw) */
    double seconds;                    /* the pass, from its start to the agreement at its end */
    double read_busy_s, write_busy_s;  /* this rank's I/O thread reading and writing */
} fs_exec_pass_stats;

typedef struct fs_exec_stats {
    int npasses;
    fs_exec_pass_stats pass[FS_OOC_MAX_PASSES];
} fs_exec_stats;

/* The block buffers of a dataset's passes, made by its first run and kept
 * through its results' runs to the last (made again for each run, they
 * would not fit back in the heap between the allocations of the run before,
 * which grew by as many blocks a result). */
typedef struct fs_exec_buffers {
    void *buf[2];                      /* the block buffers */
    void *kbuf[FS_OOC_MAX_KEPT][2];    /* each kept file's blocks read beside them */
} fs_exec_buffers;

/* Frees b's buffers (none: nothing to do). */
void fs_exec_buffers_free(fs_exec_buffers *b);

typedef struct fs_exec_args {
    MPI_Comm comm;
    const fs_ooc_plan *plan;
    const char *input_file;
    const fs_input_info *info;
    const fs_shard_set *shards;       /* --shards (NULL: one file) */
    fs_h5_output *h5;                 /* OUTPUT's result being written (NULL: none) */
    fs_scratch *scratch;              /* fs_scratch_begin's, with plan->nscratch files */
    fs_stages *stages;
    int input;                        /* the INPUT's index (the stages' turn) */
    unsigned fftw_flags;
    int refuse_nonfinite;             /* NaN and Inf refused (status 3) */
    int overlap;                      /* the I/O thread works while the rank computes
                                         (FFTSHARD_IO_THREAD=off: it does not) */
    double tolerance;                 /* --check's (0: by precision) */
    fs_check_result *check;           /* --check's figures (NULL: no --check) */
    fs_exec_buffers *buffers;         /* the dataset's, kept from run to run (freed after
                                         its last, or a failure) */
    int result, results;              /* the passes of result `result` of `results`: 0 runs
                                         every pass, k > 0 the results' passes alone (the
                                         figures added to the first's) */
    fs_timers *timers;
    fs_progress *progress;
} fs_exec_args;

/* Collective: the passes of a->plan for one dataset (or one more result of
 * it), the scratch files sized for it first and emptied after, a kept file
 * once its last reader is done; *stats (out) this rank's figures, added to
 * for a result after the first. The status is agreed (FS_ERR_CHECK with
 * --check above the tolerance). */
fs_status fs_exec_run(const fs_exec_args *a, fs_exec_stats *stats);

#endif
