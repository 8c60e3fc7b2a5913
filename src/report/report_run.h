/* SPDX-License-Identifier: GPL-3.0-or-later */
/* report_run: what a run says about itself, built from the run's modules:
 * the one-line title of the summary, the --verbose plan, and every rank's
 * figures handed to the report (report.h). Presentation only: nothing here
 * decides anything. */
#ifndef FS_REPORT_RUN_H
#define FS_REPORT_RUN_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "compute/compute.h"
#include "exchange/exchange.h"
#include "exec/ooc.h"
#include "io/h5io.h"
#include "plan/transform.h"
#include "report/report.h"

/* A run as the report sees it (rank-local figures; the rest the same on
 * every rank). */
/* What the command line asked for, as the report tells it. */
typedef struct fs_run_asked {
    const char *command_line;
    const char *output_file;           /* OUTPUT's file */
    const char *report_file;           /* --report (NULL: none) */
    const char *strategy;              /* --transpose's request ("default" without) */
    int inverse;                       /* --inverse */
    const char *norm;                  /* --norm's ("backward" without) */
    int precision_given;               /* --precision (else from the input type) */
    int quiet;
    const char *operation;             /* what a stage makes the result with (NULL: none) */
    int nextras;                       /* the stages' parts of the report */
    const fs_json_part *extras;
    const char *extra_lines;           /* and of the summary (NULL: none) */
} fs_run_asked;

typedef struct fs_run_view {
    const fs_run_asked *asked;
    const fs_input_info *info;
    const fs_transform *t;
    int nranks;
    const char *strategy;              /* "none" without exchange */
    const char *strategy_note;         /* how auto decided, "default" (NULL: named) */
    const char *strategy_reason;       /* why this strategy (the report's strategy.reason) */
    const fs_exchange_params *params;
    const fs_compute *c;               /* NULL before planning */
    const char *tmp_path;              /* OUTPUT's temporary */
    int64_t data_elems;                /* elements of the working buffer */
    const fs_box *first, *last;        /* this rank's boxes read and written */
    const fs_timers *timers;
    const fs_check_result *check;      /* NULL without --check */
    /* Several inputs: the dataset's output path, and what the compute plan
     * (reused across datasets) and FFTW had counted before its work, which
     * its figures leave out (NULL: nothing). */
    const char *input_file;            /* the dataset's INPUT file */
    const char *written;               /* its result's path in OUTPUT (or, with none, the
                                          first group's) */
    const fs_exchange_stats *exchange_before;
    const int64_t *plans_before;       /* made, from wisdom */
    /* Out of core: its plan (NULL: in memory) and what this rank's passes
     * did; first and last are then the bounds of this rank's blocks. */
    const fs_ooc_plan *ooc;
    const fs_exec_stats *passes;
    const char *scratch_dir;           /* where its scratch files were */
} fs_run_view;

/* --verbose, rank 0: the plan before any data moves. */
void fs_report_verbose_plan(const fs_run_view *v);

/* Collective, before the commit: the summary into *summary (out, rank 0,
 * malloc'ed; NULL with --quiet and on the other ranks) and the JSON report
 * (--report) into its temporary report_tmp. */
fs_status fs_report_run(MPI_Comm comm, const fs_run_view *v, const char *report_tmp, char **summary);

/* Several inputs: what the report says of each dataset, made as each one
 * ends (the compute plan that counted its exchanges may not outlive it). */
typedef struct fs_report_sections fs_report_sections;

/* Room for n datasets; free with fs_report_sections_free (sets NULL). */
fs_status fs_report_sections_new(int n, fs_report_sections **out);
void fs_report_sections_free(fs_report_sections **s);

/* Collective, once dataset v has been written (v->timers: its own phases):
 * its section of the summary and the report. Returns the agreed status. */
fs_status fs_report_add_section(MPI_Comm comm, const fs_run_view *v, fs_report_sections *s);

/* Collective, before the commit: the summary (one line per dataset, then
 * the totals) and the report (the totals with a "datasets" array) of a run
 * of several inputs, whose phases run_timers holds (the datasets'
 * included), as fs_report_run. */
fs_status fs_report_run_many(MPI_Comm comm, const fs_run_asked *a, int nranks,
                             const fs_report_sections *s, const fs_timers *run_timers,
                             const char *report_tmp, char **summary);

#endif
