/* SPDX-License-Identifier: GPL-3.0-or-later */
/* plan_options: the options of what a run computes (fs_transform_options:
 * --inverse, --real, --axes, --dct, --dst, --r2r, --norm, --precision,
 * --decomp, --grid, --plan, --pad, --window ...) and of how the ranks exchange (fs_strategy_options:
 * --transpose, --seed, --packet, --queues, --mem-per-rank), in typed
 * values: their lines (optable.h), their --help and their check together,
 * read by the planner (planner.h). Owns nothing. */
#ifndef FS_PLAN_OPTIONS_H
#define FS_PLAN_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/errors.h"
#include "core/layout.h"
#include "core/optable.h"
#include "exchange/exchange.h"
#include "plan/domain.h"

typedef enum fs_precision_choice { FS_PRECISION_AUTO, FS_PRECISION_SINGLE, FS_PRECISION_DOUBLE } fs_precision_choice;
typedef enum fs_plan_effort { FS_PLAN_ESTIMATE, FS_PLAN_MEASURE, FS_PLAN_PATIENT } fs_plan_effort;

typedef struct fs_transform_options {
    int inverse;
    int real;                    /* r2c forward, c2r inverse */
    int64_t last_size;           /* --last-size (0: from the input's attribute) */
    fs_precision_choice precision;
    fs_plan_effort plan;
    fs_norm norm;
    int norm_given;              /* else an inverse takes the forward run's */
    int naxes;                   /* 0: all axes */
    int axes[FS_LAYOUT_MAX_DIMS]; /* as given; negative counts from the end */
    /* cosine and sine axes: --dct=TYPE or --dst=TYPE, the kind of every
     * transformed axis; --r2r=AXIS:KIND,..., the kind of each axis named */
    unsigned r2r_given;          /* FS_R2R_OPTION_* of the options given */
    fs_r2r r2r_all;              /* --dct, --dst (the last given) */
    int nr2r;                    /* --r2r: its entries, axes as given */
    int r2r_axes[FS_LAYOUT_MAX_DIMS];
    fs_r2r r2r_kinds[FS_LAYOUT_MAX_DIMS];
    fs_decomp decomp;
    int grid[2];                 /* --grid (0: not given) */
    fs_pad_list pad;             /* --pad: per transformed axis in the order of --axes (n 0:
                                    none) */
    fs_window_list window;       /* --window: likewise */
    int window_sym;              /* --window-symmetric */
} fs_transform_options;

#define FS_R2R_OPTION_DCT 1u
#define FS_R2R_OPTION_DST 2u
#define FS_R2R_OPTION_R2R 4u

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

typedef struct fs_strategy_options {
    fs_strategy_request strategy;
    uint64_t seed;
    size_t packet_bytes;
    int queues;
    uint64_t mem_per_rank;       /* 0: the node's available memory */
} fs_strategy_options;

/* The lines; the sections with their defaults; the check of the transform
 * options together (--last-size only with --inverse --real; one of --dct,
 * --dst and --r2r, and neither --dct nor --dst with --real; --pad and
 * --window only forward). */
extern const fs_opt fs_transform_option_lines[];
extern const fs_opt fs_strategy_option_lines[];
void fs_transform_options_init(fs_transform_options *o);
void fs_strategy_options_init(fs_strategy_options *o);
fs_status fs_transform_options_check(const fs_transform_options *o);

/* The strategy's name as the report and the dry run give it: the
 * strategy's own, "auto" or "default". */
const char *fs_strategy_request_name(const fs_strategy_request *r);

/* The transformed axes of a rank-ndim array: axes_out[k] is nonzero when
 * axis k is transformed. FS_ERR_USAGE for an axis out of range or given
 * twice. */
fs_status fs_transform_options_axes(const fs_transform_options *o, int ndim,
                                    int axes_out[FS_LAYOUT_MAX_DIMS]);

/* o as an INPUT reads it that is broadcast over the first `lead` axes of
 * another (numpy's shapes aligned at the end): --axes and --r2r's axes
 * given from the start name the other's, lead more than its own (the
 * negative ones are alike for both), into out. FS_ERR_USAGE for one of
 * those lead axes, which it has not. */
fs_status fs_transform_options_aligned(const fs_transform_options *o, int lead,
                                       fs_transform_options *out);

/* The kinds the options give the axes of a rank-ndim array whose
 * transformed axes are `transformed` (fs_transform_options_axes): r2r_out[k]
 * FS_AXIS_FFT unless --dct, --dst or --r2r names it. FS_ERR_USAGE for an
 * --r2r axis out of range, named twice or not transformed. */
fs_status fs_transform_options_kinds(const fs_transform_options *o, int ndim,
                                     const int transformed[FS_LAYOUT_MAX_DIMS],
                                     fs_r2r r2r_out[FS_LAYOUT_MAX_DIMS]);
/* "--dct", "--dst" or "--r2r": the option that gave the kinds (NULL: none),
 * for messages. */
const char *fs_transform_options_kinds_name(const fs_transform_options *o);

#endif
