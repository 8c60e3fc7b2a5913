/* SPDX-License-Identifier: GPL-3.0-or-later */
/* report: where the time went and how the array was split.
 *
 * Every rank keeps phase timers and fills one record of its own figures. At
 * the end fs_report_finish gathers the records on rank 0, computes the
 * running sums over the ranks with the parallel prefix broadcast (prefix.h),
 * makes the human summary and writes the JSON report (--report=FILE, into
 * its temporary, which the commit renames with the result; schema
 * "fftshard-report/1", documented in fftshard(1)). A run of several inputs
 * makes one section per dataset first (fs_report_section), then the
 * report of the whole run around them. --report=- sends it to standard
 * output instead, which has no temporary: rank 0 keeps the text until the
 * result is committed (fs_report_flush_stdout). The dry run's plan
 * (dryrun.h) is written with the same JSON writer (fs_json). */
#ifndef FS_REPORT_H
#define FS_REPORT_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "compute/check.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/layout.h"
#include "core/timers.h"
#include "exec/ooc.h"
#include "plan/outofcore.h"

#define FS_REPORT_SCHEMA "fftshard-report/1"

/* --report's name for standard output; a file named "-" is "./-". */
#define FS_REPORT_STDOUT "-"

/* Whether path (--report's value, may be NULL) means standard output. */
int fs_report_to_stdout(const char *path);

/* One rank's figures (plain data: gathered as bytes). */
typedef struct fs_rank_record {
    fs_box in, out;                 /* the hyperslabs read and written, in the
                                       files' own coordinates (a 1-D array
                                       computed in four steps: seen as 2-D) */
    int64_t in_elems, out_elems;    /* the values read and written */
    int64_t bytes_sent, bytes_received, messages_sent, wire_bytes_sent;
    int64_t exchanges;              /* exchanges run (forward, and --apply's inverse) */
    double t_s[FS_NPHASES];
    double t_pack_s, t_comm_s, t_unpack_s;
    double t_hooks_s, t_hooks_overlapped_s;
    fs_io_overlap io;
    int64_t peak_memory_bytes;
    int64_t fftw_plans, fftw_plans_from_wisdom; /* plans made; those --wisdom gave */
    fs_exec_stats passes;           /* out of core: what this rank's passes did */
} fs_rank_record;

/* What describes the run (rank 0's view; the same on every rank). */
typedef struct fs_report_info {
    const char *command_line;
    const char *input, *output;     /* "file:/dataset" */
    const char *dtype;              /* input element type */
    const char *precision;          /* "double" */
    const char *transform;          /* "c2c" */
    const char *direction, *norm;
    int ndim;
    const int64_t *shape;
    int naxes;                      /* the transformed axes in the order asked (as the */
    const int *axes;                /* result's attribute axes) */
    const char *decomposition;      /* "slab" */
    int split_from, split_to;       /* axes split before / after the exchange (-1: gathered) */
    int grid[2];                    /* the P1 x P2 process grid */
    int nstages;                    /* stages of the decomposition */
    int split[3][2];                /* per stage, the axis split over each grid dimension */
    const char *strategy;           /* "none" without exchange */
    const char *strategy_requested; /* --transpose ("default" without it) */
    const char *strategy_reason;    /* why the strategy (NULL: no exchange) */
    uint64_t seed;
    size_t packet_bytes;
    int queues;
    int crowded;                    /* waits yield the core (fs_exchange_params) */
    const char *title;              /* the summary's first line */
    double flops;                   /* 5 N log2 N of the transform */
    int64_t array_bytes;            /* whole working array */
    const fs_check_result *check;   /* NULL without --check */
    const fs_ooc_plan *ooc;         /* out of core: its plan (NULL: in memory), */
    const char *scratch_dir;        /* and where the scratch files were */
    const char *operation;          /* --apply's operators (NULL: none) */
    int operation_in_pass;          /* ran inside the last forward pass (compute.h), on rank 0;
                                       -1: not said (several inputs' totals) */
    /* Several inputs: the report of the whole run, whose figures are the
     * totals, with one section per dataset (fs_report_section); ndim 0,
     * and input, shape, transform, decomposition and strategy unused. */
    int ndatasets;                  /* 0: one input, described above */
    char *const *dataset_inputs;    /* each dataset's "file:/dataset" */
    char *const *dataset_json;      /* each one's JSON object */
    char *const *dataset_lines;     /* each one's summary line */
    /* More of the report, written last: nextras parts (the stages'), and
     * lines of the summary before the memory's (NULL: none). */
    int nextras;
    const fs_json_part *extras;
    const char *extra_lines;
} fs_report_info;

/* Collective over comm. Gathers every rank's record; rank 0 makes the
 * summary into *summary (out, malloc'ed text for the caller to print once
 * the result is in place; summary NULL: none; NULL on the other ranks) and
 * writes the JSON report for json_path into its temporary json_tmp (made
 * by fs_atomic_begin; both NULL: no report), which the caller renames; for
 * json_path "-" (json_tmp NULL) it keeps the report for
 * fs_report_flush_stdout. Returns the agreed status, already printed. */
fs_status fs_report_finish(MPI_Comm comm, const fs_report_info *info, const fs_rank_record *mine,
                           char **summary, const char *json_path, const char *json_tmp);

/* Collective over comm, several inputs: one dataset's section. Gathers
 * every rank's record of it; rank 0 makes its JSON object into *json (the
 * members of a one-input report from input to prefix, less the schema,
 * version, command line and ranks) and its summary line into *line (both
 * out, malloc'ed, rank 0; NULL on the others; line NULL: none), for
 * fs_report_finish's dataset_json and dataset_lines. Returns the agreed
 * status. */
fs_status fs_report_section(MPI_Comm comm, const fs_report_info *info, const fs_rank_record *mine,
                            char **json, char **line);

/* Rank 0, once the result is in place: write the report kept for standard
 * output (none kept: FS_OK) and forget it. A write error (a closed pipe, a
 * full disk) is FS_ERR_RUNTIME, set and not printed. */
fs_status fs_report_flush_stdout(void);

/* Forget the report kept for standard output (a run that failed). */
void fs_report_discard_stdout(void);

/* Rank 0: write one JSON object whose members body(j, arg) writes, to
 * standard output (path "-") or into the temporary tmp_path of path (made
 * by fs_atomic_begin; the caller commits it). Errors are set with path's
 * name and returned, not printed. */
fs_status fs_json_write(const char *path, const char *tmp_path,
                        void (*body)(fs_json *j, void *arg), void *arg);

#endif
