/* SPDX-License-Identifier: GPL-3.0-or-later */
/* runconfig: the run as configured, in the terms of the modules that carry
 * it out.
 *
 * Built once from the command line (options.h, fs_options_config) before
 * anything runs, then read by the planner, the dry run, the output, the
 * spectra, the report and the pipeline; none of them sees the command line
 * itself. Every value is typed (the strategy asked for, the dry run's
 * element type, enums for the precision and the planning effort); the
 * strings are file and dataset names and the command line as given. It
 * lives in plan/ because its types are the planner's (decomposition,
 * normalization, strategy) and every module that reads it sits in plan/ or
 * above. The strings are borrowed from the parsed options: the
 * configuration lives no longer than they do. */
#ifndef FS_RUNCONFIG_H
#define FS_RUNCONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/errors.h"
#include "exchange/exchange.h"
#include "io/slice.h"
#include "core/layout.h"

#define FS_MAX_DIMS FS_LAYOUT_MAX_DIMS
#define FS_MAX_EDGES 1025
#define FS_MAX_POLES 8

typedef enum fs_precision_choice { FS_PRECISION_AUTO, FS_PRECISION_SINGLE, FS_PRECISION_DOUBLE } fs_precision_choice;
typedef enum fs_plan_effort { FS_PLAN_ESTIMATE, FS_PLAN_MEASURE, FS_PLAN_PATIENT } fs_plan_effort;
/* The spectra of the inputs combined (analysis/combine.h). */
typedef enum fs_combine_op {
    FS_COMBINE_NONE,
    FS_COMBINE_CORRELATE,     /* --correlate: ifftn(X_a conj X_b) / N */
    FS_COMBINE_CONVOLVE,      /* --convolve: ifftn(X_a X_b) */
    FS_COMBINE_PHASE,         /* --phase-correlate: ifftn(R / |R|), R = X_a conj X_b */
    FS_COMBINE_GRADIENT,      /* --vector=gradient ... --vector=helmholtz (analysis/vector.h) */
    FS_COMBINE_CURL,
    FS_COMBINE_DIVERGENCE,
    FS_COMBINE_HELMHOLTZ,
} fs_combine_op;

/* One INPUT operand: FILE.h5[:/path[SLICE]]. */
typedef struct fs_location {
    char *file;
    char *dataset;         /* NULL: the only dataset in the file */
    fs_slice_spec slice;   /* given 0: the whole dataset */
} fs_location;

/* The exchange strategy asked for (--transpose). */
typedef enum fs_strategy_kind {
    FS_STRATEGY_DEFAULT,   /* the fastest that fits (planner.h) */
    FS_STRATEGY_AUTO,      /* time each on the real sizes */
    FS_STRATEGY_NAMED,     /* `ops` */
} fs_strategy_kind;

typedef struct fs_strategy_request {
    fs_strategy_kind kind;
    const fs_exchange_ops *ops;   /* FS_STRATEGY_NAMED only */
} fs_strategy_request;

typedef struct fs_run_config {
    /* What is read. */
    const char *input_file;      /* the first INPUT's file (NULL: --shape) */
    const char *input_dataset;   /* NULL: the only dataset in the file */
    int ninputs;
    const fs_location *inputs;   /* inputs[0] is input_file:input_dataset */
    int shards;                  /* INPUT names shard files */
    /* The dry run's problem without a file, and its job. */
    int shape_ndim;              /* 0: INPUT is probed */
    int64_t shape[FS_MAX_DIMS];
    fs_dtype dtype;              /* of --shape (complex128 unless given) */
    int ranks;                   /* 0: this job's */
    uint64_t mem_per_rank;       /* 0: the node's available memory */
    /* The transform. */
    int inverse;
    int real;                    /* r2c forward, c2r inverse */
    int64_t last_size;           /* 0: from the input's attribute */
    fs_precision_choice precision;
    fs_plan_effort plan;
    fs_norm norm;
    int norm_given;              /* else an inverse takes the forward run's */
    int naxes;                   /* 0: all axes */
    int axes[FS_MAX_DIMS];       /* as given; negative counts from the end */
    int check;
    double check_tolerance;      /* 0: by precision */
    int allow_nonfinite;         /* an input holding NaN or Inf is transformed */
    /* The parallel algorithm. */
    fs_strategy_request strategy;
    uint64_t seed;
    size_t packet_bytes;
    int queues;
    fs_decomp decomp;
    int grid[2];                 /* 0: not given */
    /* What is written. */
    const char *output_file;     /* NULL: none (a dry run without OUTPUT) */
    const char *output_dataset;  /* NULL: the input dataset's path */
    const char *wisdom_file;     /* NULL: none */
    const char *report_file;     /* NULL: none; "-": standard output */
    int shard_output;            /* 0: one file, -1: one per rank, else files */
    int chunks_ndim;             /* 0: HDF5's contiguous layout */
    int64_t chunks[FS_MAX_DIMS];
    int deflate;                 /* level, 0: none */
    int add;                     /* into an existing OUTPUT */
    int force;
    /* Spectra (spectrum.h). */
    int power_spectrum;
    int spectrum_only;           /* no transformed array is written */
    int cross;
    int nbox;                    /* box lengths given (0: each axis's length) */
    double box[FS_MAX_DIMS];
    int bins;                    /* N equal bins up to the largest |k| (0: shells of k_f) */
    int nedges;                  /* explicit bin edges (0: none) */
    double edges[FS_MAX_EDGES];
    int correlation;             /* --correlation-function (correlation.h) */
    int r_bins;                  /* N equal bins of r up to the largest (0: shells of one cell) */
    int r_nedges;                /* explicit edges of r (0: none) */
    double r_edges[FS_MAX_EDGES];
    int los, los_given;          /* the line-of-sight axis as given */
    int mu_bins;                 /* 0: the default */
    int npoles;                  /* --multipoles: the even l, increasing (0: none) */
    int poles[FS_MAX_POLES];
    int nper;                    /* --spectrum-per: batch axes with a spectrum per index */
    int per[FS_MAX_DIMS];        /* as given; negative counts from the end */
    int compensate;              /* the mass assignment window's power, 1 ngp .. 4 pcs (0: none) */
    double shot_noise;           /* subtracted from the power spectrum */
    int shot_given;
    /* Operators in Fourier space (operators.h). */
    const char *apply;           /* --apply's list as given, NULL: none */
    /* Several inputs' spectra combined (combine.h). */
    fs_combine_op combine;       /* FS_COMBINE_NONE: none */
    /* What the run keeps beside the data buffer, for the footprint: how
     * many forward results (--cross, --correlate of two INPUTs...: the
     * first input's; --vector: vector.h's slots) and, for a dry run of
     * --vector=divergence or helmholtz (one INPUT named for D components),
     * as many more per transformed axis */
    int keep_first, keep_per_axis;
    /* Messages. */
    int progress, quiet, verbose;
    const char *command_line;    /* for the report and messages */
} fs_run_config;

/* The strategy's name as the report and the dry run give it: the
 * strategy's own, "auto" or "default". */
const char *fs_strategy_request_name(const fs_strategy_request *r);

/* The transformed axes of a rank-ndim array: axes_out[k] is nonzero when
 * axis k is transformed. FS_ERR_USAGE for an axis out of range or given
 * twice. */
fs_status fs_run_config_axes(const fs_run_config *c, int ndim, int axes_out[FS_MAX_DIMS]);

const char *fs_norm_name(fs_norm norm);

#endif
