/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ooc_run: the pipeline's steps of an out-of-core run (plan/outofcore.h
 * decides, exec/ooc.h runs the passes): the decision for each dataset,
 * the scratch files and the disk's rates before any work, one dataset's
 * passes and its result's attributes, and what the report is shown of
 * them. Borrows everything it is given. */
#ifndef FS_OOC_RUN_H
#define FS_OOC_RUN_H

#include <mpi.h>
#include <stdio.h>

#include "core/errors.h"
#include "exec/ooc.h"
#include "output/output.h"
#include "plan/planner.h"
#include "report/report_run.h"

/* One dataset's out-of-core side. */
typedef struct fs_ooc_dataset {
    fs_ooc_plan plan;             /* in memory, or out of core and its passes */
    fs_exec_stats passes;         /* out of core: what the passes did, */
    fs_box boxes[2];              /* and the bounds of this rank's blocks read and written */
    fs_exec_buffers buffers;      /* the block buffers, through its results' runs */
} fs_ooc_dataset;

/* In memory or out of core for dataset i of ds (a: fs_options_ooc_args'),
 * with the decision as a note of the planner's (said with --verbose; a
 * warning when the run does not fit and cannot go out of core). Where the
 * first's forward result is kept (a->kept: --cross), the second goes as
 * the first went, out of core because it did; a second that does not fit
 * after a first in memory is refused, naming --out-of-core. FS_ERR_USAGE
 * where --out-of-core cannot be honoured. Not collective. */
fs_status fs_ooc_run_decide(const fs_ooc_args *a, fs_ooc_dataset *ds, int i,
                            fs_planner_notes *notes);
/* Frees the n datasets of ds (a failure between a dataset's runs leaves its
 * block buffers), and ds. */
void fs_ooc_run_free(fs_ooc_dataset *ds, int n);

/* Out of core (d->plan.on): no exchange strategy, said in *s. */
int fs_ooc_run_strategy(const fs_ooc_dataset *d, fs_strategy_choice *s);

/* Collective, before OUTPUT's space is checked: the scratch files of the
 * datasets that go out of core (none: nothing), their space counted in
 * out's, and the disk's rates (--disk-rate, else a probe beside them). */
fs_status fs_ooc_run_scratch(MPI_Comm comm, const char *output_file, const fs_ooc_options *o,
                             fs_ooc_dataset *ds, int n, fs_scratch *scratch, fs_output *out);

/* One dataset out of core. */
typedef struct fs_ooc_turn {
    MPI_Comm comm;
    unsigned fftw_flags;
    int refuse_nonfinite;         /* NaN and Inf refused (no --allow-nonfinite) */
    double tolerance;             /* --check's */
    fs_ooc_dataset *d;
    const char *input_file;
    const fs_input_info *info;
    const fs_shard_set *shards;
    const fs_transform *t;        /* the run's transform (its attributes) */
    fs_output *out;
    int writes;                   /* OUTPUT gets its result */
    fs_scratch *scratch;
    fs_stages *stages;
    int input;                    /* its index */
    fs_check_result *check;       /* NULL: no --check */
    fs_timers *timers;
    fs_progress *progress;
    int result;                   /* the result whose passes run (plan/outofcore.h: 0 runs
                                     them all; --vector's others the results' passes) */
} fs_ooc_turn;

/* Collective: the passes, then the result's attributes. Agreed. */
fs_status fs_ooc_run_dataset(const fs_ooc_turn *turn);

/* The report's view of an out-of-core dataset: its blocks' bounds for the
 * in-memory decomposition's boxes, its passes, no compute plan. */
void fs_ooc_run_view(const fs_ooc_dataset *d, const fs_scratch *scratch, fs_run_view *v);

/* The dry run's lines of the decision (an out-of-core plan: its blocks,
 * each pass, the memory per rank, the scratch in dir (NULL: beside
 * OUTPUT) and the predicted time). */
void fs_ooc_run_print(FILE *out, const fs_ooc_plan *o, const char *dir);

#endif
