/* SPDX-License-Identifier: GPL-3.0-or-later */
/* options: the command line of fftshard, parsed into one struct, and the
 * run configuration (plan/runconfig.h) built from it.
 *
 * Parsing is pure (no MPI, no I/O): every rank parses the same argv and gets
 * the same result, so no broadcast is needed. The caller owns the struct and
 * releases it with fs_options_free(). Only main.c and this module see the
 * options: everything that runs takes the configuration. */
#ifndef FS_OPTIONS_H
#define FS_OPTIONS_H

#include <stdint.h>
#include <stdio.h>
#include "core/dtype.h"
#include "core/errors.h"
#include "core/layout.h"
#include "plan/runconfig.h"
/* --transpose's value when none is given: the fastest strategy that fits
 * the memory per rank (planner.h). */
#define FS_TRANSPOSE_DEFAULT "default"

typedef enum fs_action {
    FS_ACTION_RUN,      /* transform INPUT into OUTPUT */
    FS_ACTION_HELP,     /* --help: print usage on stdout, exit 0 */
    FS_ACTION_VERSION,  /* --version */
} fs_action;

typedef struct fs_options {
    fs_action action;
    char *input_file;      /* the first INPUT without the ":/dataset" part */
    char *input_dataset;   /* NULL: the only dataset in the file */
    int ninputs;           /* INPUT operands (1 but with several; 0 for --dry-run --shape) */
    fs_location *inputs;   /* all of them; inputs[0] is input_file:input_dataset */
    char *output_file;
    char *output_dataset;  /* NULL: the input dataset's path */
    int inverse;           /* --inverse */
    int real;              /* --real: r2c forward, c2r inverse */
    int64_t last_size;     /* --last-size (0: from the input's attribute) */
    fs_precision_choice precision;
    fs_plan_effort plan;   /* --plan */
    int check;             /* --check */
    double check_tolerance; /* --check-tolerance (0: by precision) */
    int allow_nonfinite;   /* --allow-nonfinite */
    fs_norm norm;          /* --norm */
    int norm_given;        /* --norm was given (else an inverse takes the forward run's) */
    int naxes;             /* 0: all axes */
    int axes[FS_MAX_DIMS]; /* as given; negative counts from the end */
    char *transpose;       /* --transpose strategy name, "auto", or FS_TRANSPOSE_DEFAULT */
    uint64_t seed;         /* --seed: random strategy's destination order */
    size_t packet_bytes;   /* --packet */
    int queues;            /* --queues */
    char *wisdom_file;     /* --wisdom, NULL when not given */
    char *report_file;     /* --report, NULL when not given */
    fs_decomp decomp;      /* --decomp */
    int grid[2];           /* --grid=AxB (0: not given) */
    int dry_run;           /* --dry-run */
    int64_t shape[FS_MAX_DIMS]; /* --shape (dry run without a file) */
    int shape_ndim;        /* 0: not given */
    char *dtype;           /* --dtype (dry run without a file) */
    int ranks;             /* --ranks (dry run; 0: this job's) */
    uint64_t mem_per_rank; /* --mem-per-rank (0: not given) */
    int shards;            /* --shards: INPUT names shard files */
    int shard_output;      /* --shard-output: 0 not given, -1 one per rank, else files */
    int64_t chunks[FS_MAX_DIMS]; /* --chunks */
    int chunks_ndim;       /* 0: not given */
    int deflate;           /* --deflate level, 0: none */
    int progress;          /* --progress */
    int add;               /* --add: into an existing OUTPUT, keeping its other contents */
    /* Spectra (spectrum.h): binned on the distributed result. */
    int power_spectrum;    /* --power-spectrum */
    int spectrum_only;     /* --spectrum-only: no transformed array is written */
    int cross;             /* --cross: the cross spectrum of two INPUTs */
    int nbox;              /* --box-size values given (0: each axis's length) */
    double box[FS_MAX_DIMS];
    int bins;              /* --bins=N: N equal bins up to the largest |k| (0: shells of k_f) */
    int nedges;            /* --bins=E0,E1,...: explicit edges (0: none) */
    double edges[FS_MAX_EDGES];
    int correlation;       /* --correlation-function: xi(r) into /correlation_function */
    int r_bins;            /* --r-bins=N: N equal bins of r (0: shells one cell wide) */
    int r_nedges;          /* --r-bins=E0,E1,...: explicit edges of r (0: none) */
    double r_edges[FS_MAX_EDGES];
    int los;               /* --los: the line-of-sight axis as given */
    int los_given;
    int mu_bins;           /* --mu-bins (0: the default) */
    char *apply;           /* --apply=OP[,OP...] (operators.h), NULL when not given */
    int combine;           /* --correlate, --convolve, --phase-correlate (FS_COMBINE_*, 0: none) */
    int npoles;            /* --multipoles=0,2,4: the even l, increasing (0: none) */
    int poles[FS_MAX_POLES];
    int nper;              /* --spectrum-per: batch axes with a spectrum per index (0: none) */
    int per[FS_MAX_DIMS];  /* as given */
    int compensate;        /* --compensate: the window's power, 1 ngp .. 4 pcs (0: none) */
    double shot_noise;     /* --shot-noise: subtracted from the power spectrum */
    int shot_given;
    int force, quiet, verbose;
    char *argv_joined;     /* the command line, for the report and messages */
} fs_options;

/* Parse argv into *opts (out; fields allocated, free with fs_options_free).
 * Returns FS_OK, or FS_ERR_USAGE with the reason recorded by fs_error_set. */
fs_status fs_options_parse(int argc, char **argv, fs_options *opts);
void fs_options_free(fs_options *opts);

/* The run configuration of opts (an FS_ACTION_RUN parse), which borrows
 * its strings: opts must outlive it. */
void fs_options_config(const fs_options *opts, fs_run_config *cfg);

/* The --help text. */
void fs_options_print_help(FILE *out);
void fs_options_print_version(FILE *out);

/* Parse a byte count with an optional K, M or G suffix (powers of 1024).
 * Returns 0 and sets *bytes, or -1. */
int fs_parse_bytes(const char *text, uint64_t *bytes);

#endif
