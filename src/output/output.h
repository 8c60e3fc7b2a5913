/* SPDX-License-Identifier: GPL-3.0-or-later */
/* output: the policy of what a run writes and when it becomes visible.
 *
 * It owns OUTPUT's temporary (core/atomic.h), the report's and the
 * wisdom's, the sharded output set (shardout.h), the storage and the
 * free-space and file-size checks made before anything is written
 * (space.h), the check of every destination (destinations.h), the
 * attributes of a result (fftshard's own, what a stage made it from, then
 * the input dataset's under their own names) and its coordinates
 * (coords.h), the write of the last stage's boxes and the commit that puts
 * the result, the report and the wisdom in place together. What OUTPUT is
 * to hold (the results' paths, the stages' groups) is the caller's to say;
 * the output knows no stage. Every failure leaves no temporary; a write
 * that fails part way through a collective call ends the job (see
 * fs_output_abandon). */
#ifndef FS_OUTPUT_H
#define FS_OUTPUT_H

#include <mpi.h>

#include "core/atomic.h"
#include "core/errors.h"
#include "core/layout.h"
#include "core/optable.h"
#include "core/progress.h"
#include "io/h5attrs.h"
#include "io/h5io.h"
#include "output/coords.h"
#include "output/shardout.h"
#include "plan/transform.h"

/* The options of what is written (output_options.c). */
typedef struct fs_output_options {
    char *file;                    /* OUTPUT's file (NULL: none, a dry run without OUTPUT) */
    char *dataset;                 /* OUTPUT's path (NULL: each input dataset's) */
    char *wisdom_file;             /* --wisdom (NULL: none) */
    char *report_file;             /* --report (NULL: none; "-": standard output) */
    int shard_output;              /* 0: one file, -1: one per rank, else files */
    int chunks_ndim;               /* 0: HDF5's contiguous layout */
    int64_t chunks[FS_LAYOUT_MAX_DIMS];
    int deflate;                   /* level, 0: none */
    int add;                       /* into an existing OUTPUT */
    int force;
    int nattrs;                    /* --attr: "NAME=VALUE" each, in order */
    char **attrs;
} fs_output_options;

/* The option lines, their --help, and the check of the options together
 * (several INPUTs, --add with --shard-output). */
extern const fs_opt fs_output_option_lines[];
fs_status fs_output_options_check(const fs_output_options *o, int ninputs, int named_result);
/* Whether name is one of the attributes fftshard writes on a result (an
 * input's of that name is not copied; --attr refuses it). */
int fs_output_own_attr(const char *name);
void fs_output_options_free(fs_output_options *o);

/* The INPUTs as the output sees them. */
typedef struct fs_output_inputs {
    int n;
    const fs_location *inputs;     /* as named */
    const fs_input_info *infos;    /* as probed */
    const fs_shard_set *shards;    /* rank 0: the --shards files (NULL: files) */
    int coords;                    /* their batch axes' coordinates are wanted */
    const fs_transform *const *ts; /* each one's transform (which axes are batch axes) */
    int verbose, quiet;
} fs_output_inputs;

/* What OUTPUT is to hold, known before any work. */
typedef struct fs_output_layout {
    int nresults;                  /* datasets, in the order they are written */
    const char *const *results;    /* each one's path */
    const int *result_input;       /* the INPUT it is made from (for messages) */
    int ngroups;
    const char *const *groups;     /* the stages' groups */
    int nbox;                      /* --box-size: the coordinates' box lengths (0: none) */
    const double *box;
} fs_output_layout;

/* The result written next and what it records besides the transform. */
typedef struct fs_output_result {
    const char *dataset;           /* its path (one of the layout's results) */
    int input;                     /* whose name, attributes and coordinates it carries */
    const char *strategy;          /* the one that ran ("none" without exchange) */
    int nranks;
    int inverse;                   /* --inverse */
    int keep;                      /* the data is read again after the write */
    const char *operation;         /* what a stage made it with (NULL: none) */
    int nbox;                      /* and its box lengths ("box_size"; 0: none) */
    double box[FS_LAYOUT_MAX_DIMS];
    int second;                    /* the second INPUT it is made with (-1: none) */
    const char *components;        /* "FILE:DATASET, ..." of its components (NULL: none) */
    const char *crop;              /* "mode": "full", "same", "valid" of a linear convolution
                                      (NULL: none) */
    const char *weights;           /* "weights": the factors on a combined product (NULL:
                                      none) */
} fs_output_result;

typedef struct fs_output {
    MPI_Comm comm;
    int rank;
    const fs_output_options *opts;
    fs_output_inputs in;
    fs_output_layout layout;
    char *tmp_path;                /* OUTPUT's temporary (the master with --shard-output) */
    char *report_tmp;              /* the report's temporary, made before any work
                                      (NULL: none, or --report=-) */
    char *wisdom_tmp;              /* the wisdom's, written before the commit (fs_wisdom_save) */
    fs_shard_output so;            /* --shard-output */
    fs_h5_storage storage;         /* --chunks, --deflate */
    fs_h5_output *h5;              /* the file being written (NULL: none on this rank) */
    fs_output_result result;       /* the one written next (fs_output_select) */
    fs_file_id copied;             /* rank 0, --add: OUTPUT when it was copied (or that it
                                      did not exist), which the commit must find again */
    const char *scratch_path;      /* an out-of-core run's scratch file (NULL: none), whose
                                      space fs_output_plan checks with the others: */
    double scratch_bytes;          /* what the scratch files take at most */
    fs_input_attrs *input_attrs;   /* each input dataset's own attributes, on every rank */
    fs_input_coords *input_coords; /* each input dataset's coordinates (as many) */
    int n_input_attrs;
} fs_output;

/* Nothing begun: what fs_output_finish may be given before fs_output_begin. */
void fs_output_init(fs_output *out);

/* OUTPUT's temporary as HDF5 writes it (NULL: none on this rank). */
fs_h5_output *fs_output_h5(const fs_output *out);

/* Each input dataset's own attributes (NULL before fs_output_begin). */
const fs_input_attrs *fs_output_input_attrs(const fs_output *out);
/* Each input dataset's coordinates (NULL before fs_output_begin). */
const fs_input_coords *fs_output_input_coords(const fs_output *out);

/* The result written next (copied; its strings borrowed until it is
 * written). */
void fs_output_select(fs_output *out, const fs_output_result *r);

/* Collective: refuse destinations that clash with each other or with the
 * inputs (fs_destinations_check) and results that would share a path
 * (FS_ERR_USAGE); with --add, results whose path in the existing OUTPUT
 * holds a dataset (without --force) or anything else, and groups whose
 * path holds anything (without --force) (FS_ERR_OUTPUT). Create the
 * temporaries of OUTPUT, the report and the shard set. Take each input
 * dataset's own attributes (rank 0 reads them, from the first shard with
 * --shards) and, with in->coords, its coordinates. in and layout are
 * borrowed for the run. */
fs_status fs_output_begin(MPI_Comm comm, const fs_output_options *o, const fs_output_inputs *in,
                          const fs_output_layout *layout, fs_output *out);

/* Collective: the storage, the shard files, and (rank 0) the free space of
  * every destination's file system (the layout's results in one file, each
  * of its INPUT's transform in input_ts, with HDF5's metadata and with --add
  * what OUTPUT holds; the report, the wisdom; an out-of-core run's scratch,
  * out->scratch_path; the destinations of one file system counted together)
  * and the file-size limit. The returned status is agreed and printed. */
fs_status fs_output_plan(fs_output *out, const fs_transform *const *input_ts);

/* Collective: open OUTPUT's temporary, a new HDF5 file or, with --add, a
 * copy of OUTPUT (rank 0 copies it, with its permissions, records what
 * OUTPUT was in out->copied, and checks the paths again in the copy:
 * FS_ERR_OUTPUT for a link on them); nothing with --shard-output. The
 * status is this rank's: the caller agrees it. */
fs_status fs_output_open(fs_output *out);

/* Collective: create the selected result's dataset for t in the open file
 * (replacing one of that path with --add --force), or with --shard-output
 * the shard file and its dataset. */
fs_status fs_output_create(fs_output *out, const fs_transform *t);

/* Collective: write this rank's box `box` of t's result from data, then the
 * attributes and the coordinates. Padded rows are packed in place for the
 * write (h5io.h) and put back only when the result is read again (its
 * keep). */
fs_status fs_output_write(fs_output *out, const fs_transform *t, const fs_box *box,
                          void *data, fs_progress *progress);

/* Collective: the attributes and the coordinates alone, after the caller
 * wrote the data itself (fs_h5_output_raw). */
fs_status fs_output_write_attributes(fs_output *out, const fs_transform *t);

/* Collective: close the file(s) written. */
fs_status fs_output_close(fs_output *out);

/* Collective, once the report and the wisdom are written into their
 * temporaries: put the result in place (with --add only if OUTPUT is still
 * the file copied, else FS_ERR_OUTPUT: fs_atomic_place_checked), then the
 * report and the wisdom (rank 0 renames while every rank holds the
 * signals); then, with --report=-, rank 0 writes the report to standard
 * output (a failure there is FS_ERR_RUNTIME with the result already in
 * place). t: the transform of a sharded result's master. */
fs_status fs_output_commit(fs_output *out, const fs_transform *t);

/* A collective write or close failed on some rank: remove the temporaries
 * and end the job at once with status st. Does not return. */
void fs_output_abandon(fs_output *out, fs_status st) __attribute__((noreturn));

/* Close what is open; after a failure (st != FS_OK) remove every temporary.
 * Frees what out holds. */
void fs_output_finish(fs_output *out, fs_status st);

#endif
