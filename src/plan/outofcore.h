/* SPDX-License-Identifier: GPL-3.0-or-later */
/* outofcore: whether a run goes out of core, and its passes, decided
 * before any data moves.
 *
 * A transform that does not fit the ranks' memory (--mem-per-rank, else
 * the node's available memory over its ranks: fs_node), or one asked to
 * (--out-of-core), streams blocks through each rank's memory instead:
 * Cormen and Nicol's out-of-core FFT, which costs what sorting costs in
 * external memory (Aggarwal and Vitter): two passes over the disk for 2-D
 * to N-D arrays of practical sizes. The blocks are the boxes of the same
 * transform planned for V = P x k virtual ranks (transform.h): each stage
 * of that plan is one pass, whose blocks hold whole the axes the stage
 * transforms (a slab: blocks whole along every axis but axis 1, then
 * blocks of whole planes (rows in 2-D) for axis 1, so that OUTPUT is
 * written in whole planes; a 2-D real forward, whose halved axis 1 must be
 * whole first, the other way round; a pencil decomposition, three passes,
 * only when a plane does not fit). Each exchange is a scratch file laid
 * out in the blocks of the pass that writes it, one after the other: every
 * write of a pass is one long run but OUTPUT's of a 2-D real forward, and
 * the next pass reads its block's part of each (runs the I/O thread asks
 * the kernel to read ahead).
 * Rank r works on the blocks r k to r k + k - 1 of every pass. A round
 * trip (--apply) runs its operation between the last forward pass and the
 * first inverse pass, in the same pass; --check transforms back through
 * the scratch and compares with the input read again.
 *
 * INPUTs' forward results are kept on the disk where a stage takes them
 * together: the last forward pass writes each block into a scratch file of
 * the INPUT's own (a kept file) as well. --cross keeps the first's; the
 * second's last forward pass reads the same block of it beside its own,
 * for the bin hooks. --vector keeps each INPUT's; on the last INPUT's turn
 * the results' passes run once per result: the first reads a block of
 * every kept file, makes the result (the field stage's operate_block) and
 * undoes the last stage, the others undo the rest, the last writing the
 * result into OUTPUT. Every INPUT goes out of core then, with blocks alike
 * (their transforms are alike).
 *
 * Each rank holds two block buffers (one computed while the other is read
 * and written), two more for each kept file read beside them, so k is the
 * least that fits the memory per rank with them,
 * at least FS_OOC_MIN_BLOCKS where that costs no pass (the I/O of a pass
 * overlaps its FFTs block by block). The time of a pass is predicted from
 * the disk's rate: the bytes every rank reads and writes through one disk.
 * Pure arithmetic: no MPI, no I/O. Owns nothing. */
#ifndef FS_OUTOFCORE_H
#define FS_OUTOFCORE_H

#include <stdint.h>

#include "core/errors.h"
#include "core/optable.h"
#include "exchange/exchange.h"
#include "plan/footprint.h"
#include "plan/plan_options.h"
#include "plan/transform.h"

/* --out-of-core, --scratch, --disk-rate. */
typedef struct fs_ooc_options {
    int forced;                /* --out-of-core */
    int in_memory;             /* --in-memory: never out of core */
    char *scratch_dir;         /* --scratch (NULL: OUTPUT's directory) */
    double read_rate, write_rate; /* --disk-rate, bytes per second (0: probed) */
} fs_ooc_options;

extern const fs_opt fs_ooc_option_lines[];
void fs_ooc_options_free(fs_ooc_options *o);

#define FS_OOC_MAX_PASSES (3 * FS_MAX_STAGES) /* forward, back (--check), a result's */
#define FS_OOC_MIN_BLOCKS 4
#define FS_OOC_INPUT (-1)     /* a pass's source: INPUT, not a scratch file */
#define FS_OOC_NONE (-1)      /* a pass's scratch written: none */
#define FS_OOC_KEEP_FIRST 1   /* fs_ooc_args.keeps: --cross's, the first INPUT's result */
#define FS_OOC_KEEP_EACH 2    /* ... --vector's, every INPUT's, the results made from them */
#define FS_OOC_KEPT_FILE 2    /* the first kept file's scratch file (after the passes' two) */
#define FS_OOC_MAX_KEPT 3     /* kept files: --vector's three components */

/* One pass: blocks of one stage's boxes read, transformed and written. */
typedef struct fs_ooc_pass {
    int stage;                /* the virtual transform's stage whose boxes are the blocks */
    int from;                 /* FS_OOC_INPUT, or the scratch file read (0 or 1), */
    int from_stage;           /* laid out in the blocks of the stage that wrote it */
    int forward;              /* the stage's operations run */
    int keep_to;              /* then the block written into this kept file (FS_OOC_NONE) */
    int with_kept;            /* the first with_kept kept files' blocks read beside, for the
                                 hooks (turn->kept, turn->kept_each) */
    int runs;                 /* it runs once, or once per result (the results' passes) */
    int bin;                  /* then the stages' forward_block hooks (stage.h) */
    int write_output;         /* then the transform written into OUTPUT */
    int operate;              /* then the field stage's operate_block */
    int inverse;              /* then the stage's operations undone */
    int to;                   /* then the scratch file written (FS_OOC_NONE: none), laid
                                 out in this pass's own blocks */
    int write_field;          /* the field written into OUTPUT (a round trip's end) */
    int compare;              /* compared with INPUT read again (--check's end) */
    double read_bytes, written_bytes; /* of all ranks */
    double predicted_s;       /* at the disk's rate (0: not known) */
} fs_ooc_pass;

/* Why a run is in memory or out of core. */
typedef enum fs_ooc_why {
    FS_OOC_FITS,              /* in memory: it fits */
    FS_OOC_KEPT,              /* in memory: --in-memory */
    FS_OOC_TOO_LARGE,         /* out of core: the in-memory plan does not fit */
    FS_OOC_ASKED,             /* out of core: --out-of-core */
    FS_OOC_CANNOT,            /* refused: it does not fit and out of core cannot run it */
    FS_OOC_NEITHER,           /* in memory although it does not fit: nor does out of core */
} fs_ooc_why;

typedef struct fs_ooc_plan {
    int on;                   /* out of core */
    fs_ooc_why why;
    char reason[640];         /* the decision in words (the dry run, --verbose, the report) */
    int64_t in_memory_bytes;  /* what the in-memory plan needs per rank */
    fs_transform vt;          /* the transform over `blocks` virtual ranks */
    int blocks, per_rank;     /* V and k */
    int npasses;
    fs_ooc_pass pass[FS_OOC_MAX_PASSES];
    int nscratch;             /* scratch files (1 or 2: a pass reads one and writes the other) */
    int64_t scratch_bytes;    /* each of them: the working array */
    int keeps;                /* FS_OOC_KEEP_FIRST, FS_OOC_KEEP_EACH (0: nothing kept), */
    int nkept;                /* in this many kept files, FS_OOC_KEPT_FILE on (KEEP_EACH:
                                 one per INPUT) */
    int first_result;         /* the first of the results' passes (npasses: none) */
    int nbuffers;             /* the block buffers: 2, and 2 per kept file read beside */
    int64_t buffer_bytes;     /* each of the block buffers */
    /* the memory per rank: total_bytes is the sum of the four */
    int64_t buffers_bytes, plans_io_bytes, library_bytes, total_bytes;
    int fits;                 /* total_bytes within the memory per rank (or none known) */
    double read_rate, write_rate; /* bytes per second (0: not known) */
    int rates_probed;         /* the rates are a probe's (else --disk-rate's) */
    double predicted_s;       /* all passes (0: not known) */
} fs_ooc_plan;

/* What the decision is made from. */
typedef struct fs_ooc_args {
    const fs_transform_request *rq;     /* the run's, on its ranks */
    const fs_strategy_request *strategy;/* the in-memory plan's strategy */
    const fs_exchange_params *params;
    fs_footprint_keeps keeps;           /* what the in-memory run keeps besides */
    int io_thread;                      /* fs_node.io_thread */
    uint64_t mem_per_rank;              /* bytes a rank may use (0: not known) */
    const char *mem_source;             /* where that figure comes from */
    int forced;                         /* --out-of-core */
    int in_memory;                      /* --in-memory */
    char cannot[200];                   /* why the options cannot run out of core, following
                                           "fftshard " ("cannot write ...": "": they can) */
    int round_trip;                     /* a field stage: operate between forward and inverse */
    int check;                          /* --check */
    int bins;                           /* stages take each block of the forward result */
    int kept;                           /* FS_OOC_KEEP_FIRST, FS_OOC_KEEP_EACH: the INPUTs'
                                           forward results kept (0: none), */
    int inputs, input;                  /* of this many INPUTs, for this one (the pipeline's
                                           decision, fs_ooc_run_decide, says which) */
    int results;                        /* FS_OOC_KEEP_EACH: the last INPUT's (0: one) */
    int per_rank;                       /* k as given (the first INPUT's, for the second:
                                           its blocks alike; 0: the least that fits) */
    int writes_transform;               /* the transform is written (not --spectrum-only) */
    double read_rate, write_rate;       /* the disk's, bytes per second (0: not known) */
} fs_ooc_args;

/* The decision and, out of core, the passes. --out-of-core where the run
 * cannot go out of core is FS_ERR_USAGE ("--out-of-core: ..."). */
fs_status fs_ooc_plan_make(const fs_ooc_args *a, fs_ooc_plan *p);

/* The predicted times again, for rates found later (probed: a probe of the
 * disk's). */
void fs_ooc_plan_rates(fs_ooc_plan *p, double read_rate, double write_rate, int probed);

/* The bounding box of rank `rank`'s blocks in stage s (what it reads or
 * writes of the stage's array: a box for slabs). */
fs_box fs_ooc_rank_box(const fs_ooc_plan *p, int rank, int s);

/* "pass 1" ... : pass i's name in messages, progress and the report (a
 * static string). */
const char *fs_ooc_pass_name(int i);

/* The scratch files made (the passes', then the kept files from
 * FS_OOC_KEPT_FILE on), and those that hold bytes at once: their space. */
int fs_ooc_files(const fs_ooc_plan *p);
int fs_ooc_files_held(const fs_ooc_plan *p);

/* Where pass `i`'s blocks come from and go to, in words ("INPUT", "the
 * scratch", "OUTPUT"), for the dry run and the report. */
void fs_ooc_pass_text(const fs_ooc_plan *p, int i, char *buf, size_t size);

#endif
