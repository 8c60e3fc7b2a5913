/* SPDX-License-Identifier: GPL-3.0-or-later */
/* output: the policy of what a run writes and when it becomes visible.
 *
 * It owns OUTPUT's temporary (atomic.h), the report's and the wisdom's,
 * the sharded output set (shardout.h), the storage choice (--chunks,
 * --deflate), the check of every destination (destinations.h) and the
 * free-space and file-size checks made before anything is written, the
 * attributes of the result (fftshard's own, then the input dataset's under
 * their own names) and its coordinates (coords.h), the write of the last stage's boxes and the
 * commit that puts the result, the report and the wisdom in place together.
 * Every failure leaves no temporary; a write that fails part way through a
 * collective call ends the job (see fs_output_abandon). */
#ifndef FS_OUTPUT_H
#define FS_OUTPUT_H

#include <mpi.h>

#include "analysis/combine.h"
#include "analysis/vector.h"
#include "core/errors.h"
#include "io/h5io.h"
#include "output/coords.h"
#include "plan/runconfig.h"
#include "core/atomic.h"
#include "core/progress.h"
#include "output/shardout.h"
#include "core/layout.h"
#include "plan/transform.h"

/* What the result's attributes say besides the transform. */
typedef struct fs_output_attrs {
    const char *input_file;
    const char *input_dataset;
    const char *strategy;          /* "none" without exchange */
    int nranks;
    const fs_input_attrs *copied;  /* the input dataset's own attributes (NULL: none) */
    /* --apply (a round trip, transform.h): the operators as recorded and
     * the box length of each transformed axis in order (fs_output_set_operation) */
    const char *operation;
    int nbox;
    double box[FS_LAYOUT_MAX_DIMS];
    /* a combined result of two INPUTs (combine.h): the second (NULL: none) */
    const char *second_file, *second_dataset, *second_slice; /* slice: "" none */
    const char *input_slice;       /* the input's slice as numpy spells it (NULL: none) */
    /* --vector of several INPUTs: FILE:/ds of each, comma separated (NULL: none) */
    const char *components;
} fs_output_attrs;

typedef struct fs_output {
    MPI_Comm comm;
    int rank;
    const fs_run_config *opts;
    const char *dataset;           /* the output dataset's path */
    char *tmp_path;                /* OUTPUT's temporary (the master with --shard-output) */
    char *report_tmp;              /* the report's temporary, made before any work
                                      (NULL: none, or --report=-) */
    char *wisdom_tmp;              /* the wisdom's, written before the commit (fs_wisdom_save) */
    fs_shard_output so;            /* --shard-output */
    fs_h5_storage storage;         /* --chunks, --deflate */
    fs_h5_output *h5;              /* the file being written (NULL: none on this rank) */
    fs_output_attrs attrs;
    fs_file_id copied;             /* rank 0, --add: OUTPUT when it was copied (or that it
                                      did not exist), which the commit must find again */
    const fs_input_info *infos;    /* the probed inputs (fs_output_begin's), for the
                                      result paths */
    int ninfos;
    fs_input_attrs *input_attrs;   /* each input dataset's own attributes, on every rank */
    fs_input_coords *input_coords; /* each input dataset's coordinates (as many) */
    int n_input_attrs;
    int current;                   /* the input whose result is written (fs_output_select) */
    int result;                    /* and which of its results (fs_output_select_result) */
    /* the combined spectra's results, written on the last INPUT's turn (combine.h) */
    int nresults;
    char results[FS_VECTOR_MAX_RESULTS][FS_COMBINE_PATH_MAX];
    char components[FS_VECTOR_MAX_AXES * (2 * FS_PATH_MAX + 4)]; /* attrs.components */
} fs_output;

/* Nothing begun: what fs_output_finish may be given before fs_output_begin. */
void fs_output_init(fs_output *out);

/* OUTPUT's temporary as HDF5 writes it (NULL: none on this rank). */
fs_h5_output *fs_output_h5(const fs_output *out);

/* The result of input i (info, in input_file) is written next: its
 * dataset's path and its attributes (strategy: the one that ran). With
 * combined spectra (combine.h) the path is the combined result's (also on
 * a turn that writes none) and the attributes the first INPUT's. */
void fs_output_select(fs_output *out, int i, const fs_input_info *info, const char *input_file,
                      const char *strategy, int nranks);

/* The combined spectra (combine.h): result k of the last turn is written
 * next (its path; the attributes stay the turn's). */
void fs_output_select_result(fs_output *out, int k);

/* --apply: the selected result records the operators as text (kept by the
 * caller until the write) and the nbox box lengths box (copied). */
void fs_output_set_operation(fs_output *out, const char *text, int nbox, const double *box);

/* Collective: refuse destinations that clash with each other or with the
 * inputs (fs_destinations_check) and results that would share a dataset
 * path (FS_ERR_USAGE); with --add, results whose path in the existing
 * OUTPUT holds a dataset (without --force) or anything else (FS_ERR_OUTPUT).
 * Create the temporaries of OUTPUT, the report and the shard set. infos
 * are the n probed inputs (each one's dataset is its result's path unless
 * OUTPUT names one); shards the --shards files on rank 0 (NULL: files).
 * Take each input dataset's own attributes (rank 0 reads them, from the
 * first shard with --shards) for its result. */
fs_status fs_output_begin(MPI_Comm comm, const fs_run_config *o, const fs_input_info *infos, int n,
                          const fs_shard_set *shards, fs_output *out);

/* Collective: the storage, the shard files, and (rank 0) the free space of
 * every destination's file system (the n results ts in one file, with
 * HDF5's metadata and with --add what OUTPUT holds; the report, the
 * wisdom; the destinations of one file system counted together) and the
 * file-size limit. The returned status is agreed and printed. */
fs_status fs_output_plan(fs_output *out, const fs_transform *const *ts, int n);

/* Collective: open OUTPUT's temporary, a new HDF5 file or, with --add, a
 * copy of OUTPUT (rank 0 copies it, with its permissions, records what
 * OUTPUT was in out->copied, and checks the result paths again in the
 * copy: FS_ERR_OUTPUT for a link on them); nothing with --shard-output.
 * The status is this rank's: the caller agrees it. */
fs_status fs_output_open(fs_output *out);

/* Collective: create the output dataset out->dataset for t in the open
 * file (replacing one of that path with --add --force), or with
 * --shard-output the shard file and its dataset. */
fs_status fs_output_create(fs_output *out, const fs_transform *t);

/* Collective: write this rank's last-stage box `last` from data, then the
 * attributes and the coordinates. Padded rows are packed in place for the
 * write (h5io.h) and put back only when data is read again: by --check,
 * --correlation-function or the input's next result. */
fs_status fs_output_write(fs_output *out, const fs_transform *t, const fs_box *last,
                          void *data, fs_progress *progress);

/* Collective: the attributes and the coordinates alone, after the caller
 * wrote the data itself (fs_h5_output_raw). */
fs_status fs_output_write_attributes(fs_output *out, const fs_transform *t);

/* Collective: close the file(s) written. */
fs_status fs_output_close(fs_output *out);

/* Collective, once the report and the wisdom are written into their
 * temporaries: put the result in place (with --add only if OUTPUT is still
 * the file copied, else FS_ERR_OUTPUT: fs_atomic_place_checked), then the
 * report and the wisdom
 * (rank 0 renames while every rank holds the signals); then, with
 * --report=-, rank 0 writes the report to standard output (a failure there
 * is FS_ERR_RUNTIME with the result already in place). */
fs_status fs_output_commit(fs_output *out, const fs_transform *t);

/* A collective write or close failed on some rank: remove the temporaries
 * and end the job at once with status st. Does not return. */
void fs_output_abandon(fs_output *out, fs_status st) __attribute__((noreturn));

/* Close what is open; after a failure (st != FS_OK) remove every temporary.
 * Frees what out holds. */
void fs_output_finish(fs_output *out, fs_status st);

#endif
