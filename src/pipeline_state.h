/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pipeline_state: the state of one run through the pipeline's phases
 * (pipeline.c), its datasets and what they share. Private to pipeline.c. */
#ifndef FS_PIPELINE_STATE_H
#define FS_PIPELINE_STATE_H

#include <mpi.h>

#include "compute/check.h"
#include "compute/compute.h"
#include "compute/overlap.h"
#include "io/shards.h"
#include "ooc_run.h"
#include "output/output.h"
#include "plan/decomp.h"
#include "plan/planner.h"
#include "plan/wisdom.h"
#include "report/report_run.h"
#include "stages/driver.h"

/* One INPUT and what is computed from it. */
typedef struct dataset {
    const char *file;             /* the INPUT file (the pattern or list with --shards) */
    const fs_input_info *info;    /* the probed input (in run.infos) */
    fs_transform_request rq;      /* what the compute plan is planned for */
    fs_planned planned;           /* the transform, per capability */
    const fs_transform *t;        /* the one the chosen strategy runs */
    fs_strategy_choice strategy;
    fs_timers timers;             /* its own phases */
    fs_check_result check;
    fs_ooc_dataset *ooc;          /* in memory, or out of core and its passes (in run.ooc) */
    fs_exchange_params ooc_params; /* what out of core decides from (ooc_args points */
    fs_ooc_args ooc_args;          /* at ooc_params) */
    fs_exchange_stats exchange_before; /* the reused compute plan's count before it */
    int64_t plans_before[2];      /* FFTW's plan counts before it */
} dataset;

typedef struct run {
    MPI_Comm comm;
    int rank, nranks;
    const fs_run_config *cfg;
    int n;                        /* datasets */
    fs_input_info *infos;         /* each INPUT as probed */
    dataset *ds;
    fs_ooc_dataset *ooc;          /* each dataset's out-of-core side */
    dataset *cur;                 /* the one being worked on */
    fs_shard_set shards;          /* --shards: the files (n 0 for one file) */
    const fs_shard_set *in_shards; /* &shards with --shards, else NULL */
    /* The compute plan, kept across datasets that ask for the same. */
    const dataset *planned_for;   /* NULL: none */
    fs_decomposition *d;
    fs_exchange_params params;
    fs_compute *c;
    fs_wisdom *wisdom;
    fs_workbuf buf;               /* the local array */
    fs_output out;
    fs_timers timers;             /* the run's own phases (opening, closing, commit, total) */
    fs_progress progress;
    fs_report_sections *sections; /* several inputs */
    fs_node node;                 /* the facts of the node, found once */
    fs_overlap *overlap;          /* the current dataset's overlapped I/O (NULL: none) */
    fs_stage_facts facts;         /* the stages' view of the command line */
    fs_particles *particles;      /* the first boxes made of particles (NULL: a field read) */
    fs_stage_needs needs;         /* what they ask of the run (options alone) */
    const fs_transform **ts;      /* each dataset's transform, as planned */
    fs_stages *stages;
    fs_stages_layout lay;         /* what OUTPUT holds: the results, then the groups */
    fs_scratch scratch;           /* out of core: the scratch files */
    fs_run_asked asked;           /* what the report says was asked */
} run;

#endif
