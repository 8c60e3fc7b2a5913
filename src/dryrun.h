/* SPDX-License-Identifier: GPL-3.0-or-later */
/* dryrun: --dry-run, planning a job without data.
 *
 * From the input file (probed on rank 0) or --shape and --dtype, and a rank
 * count (--ranks, default this job's), print the decomposition, the grid,
 * the smallest and largest local block of every stage, the exchanges and
 * their largest messages, and the memory per rank of the strategy, with
 * whether it fits --mem-per-rank. With --report, the same figures as JSON
 * (schema FS_DRY_RUN_SCHEMA, documented in fftshard(1)): into a file, made
 * atomically as a run's report is, or on standard output (--report=-; the
 * text then goes to standard error). Only arithmetic: nothing is allocated
 * at full size, nothing is read or written but the report, and it runs on
 * one process. */
#ifndef FS_DRYRUN_H
#define FS_DRYRUN_H

#include <mpi.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/errors.h"
#include "core/layout.h"
#include "core/optable.h"

#define FS_DRY_RUN_SCHEMA "fftshard-dry-run/1"

/* --dry-run and the problem it may plan without a file. */
typedef struct fs_dryrun_options {
    int on;                            /* --dry-run */
    int shape_ndim;                    /* 0: INPUT is probed */
    int64_t shape[FS_LAYOUT_MAX_DIMS];
    fs_dtype dtype;                    /* of --shape (complex128 unless given) */
    int dtype_given;
    int ranks;                         /* 0: this job's */
} fs_dryrun_options;
extern const fs_opt fs_dryrun_option_lines[];

/* The whole configuration (options.h). */
typedef struct fs_run_config fs_run_config;

/* Collective over comm; rank 0 prints. A plan that does not fit
 * --mem-per-rank is FS_ERR_RUNTIME ("not enough memory"), after the text
 * and the JSON are written in full. Returns the agreed status, printed. */
fs_status fs_dry_run(MPI_Comm comm, const fs_run_config *opts);

#endif
