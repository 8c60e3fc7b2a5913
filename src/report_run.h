/* report_run: what a run says about itself, built from the run's modules:
 * the one-line title of the summary, the --verbose plan, and every rank's
 * figures handed to the report (report.h). Presentation only: nothing here
 * decides anything. */
#ifndef FS_REPORT_RUN_H
#define FS_REPORT_RUN_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "compute.h"
#include "exchange.h"
#include "h5io.h"
#include "options.h"
#include "report.h"
#include "transform.h"

/* A run as the report sees it (rank-local figures; the rest the same on
 * every rank). */
typedef struct fs_run_view {
    const fs_options *opts;
    const fs_input_info *info;
    const fs_transform *t;
    int nranks;
    const char *strategy;              /* "none" without exchange */
    const char *strategy_note;         /* how auto decided (NULL: named) */
    const fs_exchange_params *params;
    const fs_compute *c;               /* NULL before planning */
    const char *tmp_path;              /* OUTPUT's temporary */
    int64_t data_elems;                /* elements of the working buffer */
    const fs_box *first, *last;        /* this rank's boxes read and written */
    const fs_timers *timers;
    const fs_check_result *check;      /* NULL without --check */
} fs_run_view;

/* The summary's first line: shape, type, kind, axes, ranks, decomposition. */
void fs_report_describe(const fs_run_view *v, char *buf, size_t size);

/* --verbose, rank 0: the plan before any data moves. */
void fs_report_verbose_plan(const fs_run_view *v);

/* Collective, before the commit: the summary into *summary (out, rank 0,
 * malloc'ed; NULL with --quiet and on the other ranks) and the JSON report
 * (--report) into its temporary report_tmp. */
fs_status fs_report_run(MPI_Comm comm, const fs_run_view *v, const char *report_tmp, char **summary);

#endif
