/* SPDX-License-Identifier: GPL-3.0-or-later */
/* stage: what a run computes from the transformed array while it is still
 * distributed over the ranks, behind one interface, as an exchange strategy
 * is behind exchange.h's: the spectra, the correlation function, --apply's
 * operators, the combined spectra, --vector. A stage is one file with a
 * const fs_stage_ops table, and one line of the stage table (stage.c); the
 * pipeline, the dry run, the output and the report loop over the active
 * stages and name none of them.
 *
 * What a stage declares, from the command line alone (the run and the dry
 * run alike):
 *   options   its lines of the command line (optable.h) into a section of
 *             its own, made and freed by the parser (options.h); a line
 *             marked `shared` sets the section every stage reads
 *             (fs_stage_shared: --box-size, --cross, --spectrum-only, --paint's) and is printed
 *             in --help where the stage's lines are; --los and --multipoles, read by
 *             more than one stage and owned by none, are a section of the command line
 *             of their own in fs_stage_shared (los.h);
 *   active    whether the options ask for it;
 *   check     its options against the rest of the command line (usage
 *             errors), also when inactive (its options without the one
 *             that asks for it); the checks among stages are stage.c's;
 *   needs     what it asks of the run (fs_stage_needs): a round trip, the
 *             inverse plans, the result whole before its write, the first
 *             INPUT's result kept, buffers of its own (the footprint);
 *   domain    the transform it needs of each INPUT when it is not the
 *             input's own: the zero-padded shape and the part of the field
 *             written (a linear convolution's), from every INPUT's shape.
 * Its life in a run (collective where said; every hook may be NULL):
 *   create    once every INPUT is probed and its transform planned: the
 *             options against the inputs (usage errors, decided alike on
 *             every rank: rank 0 speaks for them); a stage that reads a
 *             file (rank 0) and shares it says create_collective and
 *             agrees its status itself;
 *   forward   each INPUT's forward result in the last layout, before its
 *             write: read (binned) or kept; this rank's status;
 *   results   how many results an INPUT's turn writes, their paths and
 *             what they record (a stage that makes the field written);
 *   operate   result k made from the forward result (and the kept ones)
 *             and brought back to real space by the compute plan's
 *             inverse: collective, the status agreed; in Fourier space,
 *             before that inverse, the stage hands the result to
 *             fs_stage_made, and leaves the inverse out when the turn
 *             says no_inverse (--spectrum-only: nothing is written);
 *   result    a stage that bins what the field stage makes (the spectrum
 *             of a filtered field, of the vorticity): result k of the
 *             turn in Fourier space, with what it records; then the
 *             stage does not bin the forward result;
 *   weigh     a stage of factors (--apply) when the field stage takes weights
 *             (--phase-correlate): the field's product in Fourier space, this
 *             rank's box of it, times its factors; the field stage calls it
 *             through fs_stage_weigh, before its inverse;
 *   written   after the turn's write: the result is the stage's to use up
 *             (the correlation function's product); collective, agreed;
 *   finish    once every INPUT is done: its sums over the ranks and its
 *             groups into OUTPUT; collective, agreed;
 *   json, summary  its part of the report (inside the report's member
 *             report_member, which stages may share) and of the summary;
 *   destroy.
 * Out of core (exec/: the forward result never whole in memory, it passes
 * through in blocks, each a box of the last stage of a transform planned
 * over more ranks than the run's; a rank gets several, in any order, and
 * the ranks as many each), a stage takes part through its block hooks
 * (the first INPUT's result kept: turn->kept, the same block of it; every
 * INPUT's: turn->kept_each), and a run with an active stage that needs
 * more (the first's kept result in a field's operation, the result read
 * again, buffers of its own but every INPUT's result, a hook without its
 * block variant) does not go out of core (fs_stages_block_wise):
 *   forward_block  as forward, on one block of the forward result (its
 *             box in global coordinates, its elements row-major at data);
 *             this rank's status, not collective;
 *   operate_block  as operate's work between the transforms, on one block
 *             of the forward result in place (result k); the executor
 *             runs the inverse; not collective.
 * A stage owns its state and what it allocates; the kept first result, the
 * working buffer, the compute plan and OUTPUT are the run's. */
#ifndef FS_STAGE_H
#define FS_STAGE_H

#include <mpi.h>
#include <stddef.h>

#include "compute/compute.h"
#include "core/errors.h"
#include "core/json.h"
#include "core/layout.h"
#include "core/optable.h"
#include "core/progress.h"
#include "core/timers.h"
#include "io/h5attrs.h"
#include "io/h5io.h"
#include "io/h5probe.h"
#include "io/h5scales.h"
#include "sources/particles.h"
#include "plan/decomp.h"
#include "plan/transform.h"
#include "stages/kgrid.h"
#include "stages/los.h"

/* What every stage reads (options lines marked `shared`). */
typedef struct fs_stage_shared {
    fs_box_lengths box;                /* --box-size (kgrid.h); with --paint the run's box */
    fs_particles_options particles;        /* --paint and its options (particles.h): the particles the
                                          run paints instead of reading a field, whose window
                                          and interlacing the stages learn here */
    int cross;                         /* --cross: of the two INPUTs */
    int spectrum_only;                 /* --spectrum-only: no transformed array written;
                                          the groups go under OUTPUT's path */
    fs_los_options los;                /* --los, --multipoles (los.h: a section of the
                                          command line of their own) */
} fs_stage_shared;

/* The rest of the command line, as a stage's check and needs see it. */
typedef struct fs_stage_facts {
    int ninputs;                 /* INPUTs named (a dry run names one, or none) */
    int dry_run;
    int inverse, check, shard_output;
    const char *r2r;             /* "--dct", "--dst" or "--r2r": cosine or sine axes asked
                                    for (NULL: Fourier axes alone) */
    int pad, window;             /* --pad, --window given */
    int boundary;                /* --boundary given */
    const char *output_file;
    const char *output_dataset;  /* OUTPUT's path when given (NULL: none) */
    const fs_stage_shared *shared;
    int others_with_groups;      /* other active stages that write groups */
    const char *field;           /* the active field stage's option ("--apply"; NULL: none):
                                    the stages with a result hook bin its results */
    const char *weighed;         /* the active field stage that takes weights
                                    ("--phase-correlate"; NULL: none): a stage of factors
                                    (--apply) then weighs its product (weigh) and makes no
                                    field of its own */
} fs_stage_facts;

/* What a stage asks of the run. */
typedef struct fs_stage_needs {
    int forward;      /* reads the forward transform's result: not with --inverse */
    int field;        /* makes the written result, from the forward result, and brings it
                         back with the inverse (a round trip, transform.h): one per run */
    int in_pass;      /* field: its work may run inside the last forward pass */
    int whole;        /* the forward result whole in memory before its write */
    int undo;         /* the compute plan's inverse besides */
    int reread;       /* reads the result again after its write */
    int keep_first;   /* the first INPUT's forward result kept for the later turns */
    int first;        /* makes the forward result the others read (the interlaced meshes'
                         combination): its forward hook runs before theirs and before the
                         first INPUT's result is kept, never inside the last forward pass */
    int buffers;      /* last-stage boxes it holds itself, each as large as a rank's */
    int keeps_each;   /* a field whose results are made from every INPUT's forward result
                         (--vector): in memory its buffers hold the earlier ones; out of core
                         each is kept on the disk and read block by block (turn->kept_each) */
    int inputs;       /* the INPUTs it takes, as the options say (0: any) */
    int results;      /* the results the last INPUT's turn writes, as the options say
                         (0: one per INPUT) */
    int buffers_gone; /* they are freed before the inverse's first exchange (a field of
                         one result): the inverse's exchange buffers, first touched then,
                         take their place (fs_stages_needs: how many buffers are) */
    const char *kept; /* what the dry run calls the kept first result and the buffers */
    int pads;         /* takes a zero-padded forward result (--pad; a field: its part of the
                         input's shape written) */
    int windows;      /* takes a windowed forward result (--window) */
    int walls;        /* a field that takes --boundary's cosine and sine axes */
    int groups;       /* writes groups of its own into OUTPUT (none with --shard-output) */
    int sees_results; /* bins the field stage's results in Fourier space: the field's
                         work then runs on the whole box, not inside the last pass */
    int hands_results; /* a field stage that hands its results to fs_stage_made */
    int broadcasts;    /* the first INPUT may be the last's shape without its first axes
                          (numpy's broadcasting): --axes from the start name the last's */
    int takes_weights; /* a field stage whose product in Fourier space the stages of factors
                          multiply (fs_stage_weigh) before its inverse */
    const char *longest_group; /* the longest name among them */
} fs_stage_needs;

#define FS_MAX_FAMILIES 8

/* The run as a stage sees it: the same on every rank. */
typedef struct fs_stage_run {
    MPI_Comm comm;
    int n;                            /* INPUTs */
    const fs_location *inputs;        /* as named */
    const fs_input_info *infos;       /* as probed */
    const fs_transform *const *ts;    /* each one's transform, as planned */
    const fs_stage_facts *facts;
    int nfamilies;                    /* with a field stage: the spectra its results make, */
    const char *families[FS_MAX_FAMILIES]; /* each record's family in order (NULL: one) */
} fs_stage_run;

struct fs_stage_turn;
/* Where a field stage that takes weights hands its product: this rank's
 * box of it in Fourier space (the turn's INPUT's grid) multiplied in place
 * by the factors of the stages that weigh. This rank's status. */
typedef fs_status (*fs_stage_weigh_fn)(void *ctx, const struct fs_stage_turn *turn,
                                       const fs_box *box, void *data);
/* Where a field stage hands result k in Fourier space: fourier times
 * scale is the forward transform of the result (the field stages fold the
 * inverse's 1/N into their product). This rank's status. */
typedef fs_status (*fs_stage_made_fn)(void *ctx, const struct fs_stage_turn *turn, int k,
                                      const void *fourier, double scale);

/* One INPUT's turn. */
typedef struct fs_stage_turn {
    MPI_Comm comm;
    int i;                            /* the INPUT */
    const fs_transform *t;
    const fs_decomposition *d;        /* this rank's boxes */
    fs_compute *c;                    /* planned with the inverse a stage needs */
    void *data;                       /* the working array (fs_compute_data after an inverse) */
    const void *kept;                 /* keep_first: the first INPUT's forward result on this
                                         rank, on the later turns (out of core: the block's;
                                         NULL: none) */
    const void *const *kept_each;     /* out of core, keeps_each: INPUT a's block of the
                                         forward result for each a before the turn's (its
                                         own is data; NULL: none) */
    const fs_painted *source;         /* what painting this INPUT made (NULL: a field read) */
    fs_timers *timers;
    fs_progress *progress;
    fs_stage_made_fn made;            /* operate: the result before its inverse (NULL: none) */
    void *made_ctx;
    int no_inverse;                   /* operate: the result is not written; no inverse */
    fs_stage_weigh_fn weigh;          /* operate: the weights on the product (NULL: none) */
    void *weigh_ctx;
} fs_stage_turn;

/* What a result made by a stage records besides the transform (its
 * attributes: fftshard(1), FILES AND CONVENTIONS). */
typedef struct fs_stage_record {
    const char *operation;            /* the "operation" attribute (NULL: none) */
    const char *asked;                /* as the command line gave it, for the report (NULL:
                                         the operation) */
    int nbox;                         /* "box_size": the box length of each transformed axis */
    double box[FS_LAYOUT_MAX_DIMS];
    int input;                        /* the INPUT whose name, attributes and coordinates it
                                         carries */
    int second;                       /* the second INPUT it is made with (-1: none) */
    const char *components;           /* "FILE:DATASET, ..." of its components (NULL: none) */
    const char *family;               /* the spectrum it adds to among the field's results
                                         ("solenoidal"; NULL: the one spectrum of them all) */
    const char *crop;                 /* the "mode" attribute: the part of a linear
                                         convolution kept (full, same, valid; NULL: none) */
    const char *weighed_by;           /* the "weights" attribute: the factors a weighing stage
                                         multiplied the product by (its operation; NULL: none),
                                         in the units of box */
} fs_stage_record;

/* Where a stage's groups go and what they carry. */
typedef struct fs_stage_out {
    fs_h5_output *h5;                 /* OUTPUT being written */
    const fs_input_attrs *attrs;      /* each INPUT's own attributes (NULL: none) */
    const fs_input_coords *coords;    /* each INPUT's coordinates (NULL: none) */
    int replace;                      /* --add --force: a group there is replaced */
    fs_timers *timers;                /* the write phase */
} fs_stage_out;

/* What a rank holds for a stage of its own, the same on every rank:
 * `held` from the stage's creation to the run's end (sums per bin, their
 * edges), `end` only at the end, once the kept results are freed (MPI's copy
 * in the reduction, the tables the stage writes); `sums`, of held, the sums
 * per bin, calloc's untouched pages till the first result is binned. */
typedef struct fs_stage_bytes {
    int64_t held, end, sums;
} fs_stage_bytes;

typedef struct fs_stage_ops {
    const char *name;                 /* "spectrum", in messages of the code */
    const char *report_member;        /* the report's member its json goes into */
    /* options */
    const fs_opt *options;            /* its lines (NULL long_name ends them) */
    size_t options_bytes;             /* its section */
    const char *help_heading;         /* --help's heading above its lines (NULL: none) */
    const char *grid_options;         /* the options that make it use --box-size (NULL: none) */
    const char *los_options;          /* ... that make it read --los, --multipoles (NULL: none) */
    void (*defaults)(void *opts);
    void (*release)(void *opts);      /* what the parser's strings in it hold */
    int (*active)(const void *opts, const fs_stage_shared *shared);
    const char *(*option)(const void *opts);  /* how messages name it ("--apply") */
    fs_status (*check)(void *opts, const fs_stage_facts *f, int active);
    void (*needs)(const void *opts, const fs_stage_facts *f, int naxes, fs_stage_needs *out);
    /* rq (of one INPUT) zero padded as the stage needs: its shape and keep_shape
     * (transform.h), from the n INPUTs' shapes (a dry run: one for all);
     * usage errors decided alike on every rank */
    fs_status (*domain)(const void *opts, int n, const fs_input_info *infos,
                        fs_transform_request *rq);
    /* the bytes a rank holds for the stage besides last-stage boxes, from
     * t, the transform of one INPUT as planned (the footprint, footprint.h) */
    fs_stage_bytes (*footprint)(const void *opts, const fs_stage_facts *f, const fs_transform *t);
    /* the run */
    fs_status (*create)(const void *opts, const fs_stage_run *r, void **state);
    int create_collective;
    fs_status (*forward)(void *state, const fs_stage_turn *turn);
    int (*results)(const void *state, int i);
    const char *(*result_path)(const void *state, int k);
    void (*record)(const void *state, int i, int k, fs_stage_record *rec);
    const char *(*group)(const void *state, int g);
    fs_status (*operate)(void *state, const fs_stage_turn *turn, int k);
    fs_status (*result)(void *state, const fs_stage_turn *turn, int k, const fs_stage_record *rec,
                        const void *fourier, double scale);
    fs_status (*written)(void *state, const fs_stage_turn *turn);
    /* a stage of factors when the field stage takes weights (facts.weighed):
     * box (of the turn's last stage) at data times its factors; not collective */
    fs_status (*weigh)(void *state, const fs_stage_turn *turn, const fs_box *box, void *data);
    fs_status (*forward_block)(void *state, const fs_stage_turn *turn, const fs_box *box,
                               const void *data);
    fs_status (*operate_block)(void *state, const fs_stage_turn *turn, int k, const fs_box *box,
                               void *data);
    fs_status (*finish)(void *state, MPI_Comm comm, const fs_stage_run *r, const fs_stage_out *out);
    void (*json)(fs_json *j, const void *state);
    void (*summary)(const void *state, const char *output, char *buf, size_t size);
    void (*destroy)(void *state);
} fs_stage_ops;

/* The stage table, in the order stages run their hooks, print their
 * summary lines and are listed in --help; NULL ends it. */
extern const fs_stage_ops *const fs_stage_table[];
#define FS_MAX_STAGE_OPS 16

/* The stages' part of the configuration: every stage's section (made by
 * the parser from fs_stages) and the one they share. */
typedef struct fs_stage_config {
    int n;                            /* stages in the table */
    void *opts[FS_MAX_STAGE_OPS];     /* stage s's section */
    fs_stage_shared shared;
} fs_stage_config;

/* Sections with their defaults (FS_ERR_RUNTIME when out of memory), and
 * their release. */
fs_status fs_stage_config_init(fs_stage_config *sc);
void fs_stage_config_free(fs_stage_config *sc);

/* Whether stage s is asked for. */
int fs_stage_active(const fs_stage_config *sc, int s);

/* Collective-free, the same everywhere: every stage's check, and the ones
 * among stages (one field per run, a field with spectra or --inverse,
 * groups with --shard-output, --box-size without a stage using it, a
 * stage of the forward result with cosine or sine axes). */
fs_status fs_stages_check(fs_stage_config *sc, const fs_stage_facts *f);

/* The option of the active field stage that hands its results to the
 * others ("--apply"; NULL: none). */
const char *fs_stages_field(const fs_stage_config *sc, const fs_stage_facts *f);
/* The option of the active field stage that takes weights
 * ("--phase-correlate"; NULL: none): facts.weighed. */
const char *fs_stages_weighed(const fs_stage_config *sc, const fs_stage_facts *f);

/* The needs of the active stages together (naxes: the transformed axes;
 * buffers and flags added up). */
void fs_stages_needs(const fs_stage_config *sc, const fs_stage_facts *f, int naxes,
                     fs_stage_needs *out);

/* The bytes per rank the active stages hold of their own (their footprint
 * hooks) in a run of rq, the request of one INPUT (0: none, or rq cannot
 * be planned): the held ones added up, the largest end (the stages end one
 * after the other). */
fs_stage_bytes fs_stages_footprint(const fs_stage_config *sc, const fs_stage_facts *f,
                                   const fs_transform_request *rq);

/* Out of core (see the block hooks above): NULL when every active stage
 * can run block by block, else the option of the first that cannot
 * ("--correlate"). */
const char *fs_stages_block_wise(const fs_stage_config *sc, const fs_stage_facts *f);
/* A field stage's result k in Fourier space, handed to turn->made (see
 * fs_stage_made_fn); FS_OK when nobody takes it. */
fs_status fs_stage_made(const fs_stage_turn *turn, int k, const void *fourier, double scale);
/* The field stage's product on box (this rank's, in Fourier space) at data
 * times the weighing stages' factors (see fs_stage_weigh_fn); FS_OK when
 * nobody weighs. */
fs_status fs_stage_weigh(const fs_stage_turn *turn, const fs_box *box, void *data);
/* Every active stage's domain on rq, the request of one of the n INPUTs
 * (infos: each one's shape). */
fs_status fs_stages_domain(const fs_stage_config *sc, int n, const fs_input_info *infos,
                           fs_transform_request *rq);

/* A group's path: under OUTPUT's path with --spectrum-only, else at the
 * root ("/power_spectrum"), into buf. */
void fs_stage_group_path(const fs_stage_facts *f, const char *name, char *buf, size_t size);

/* Whether the transforms of n INPUTs lie alike for stage `what`
 * (FS_ERR_USAGE naming it): one shape (the inputs' own too unless
 * own_shapes_differ: a linear convolution pads each to one) and the same
 * transformed axes; with same_boxes also the same kind, precision and
 * boxes (the results of two INPUTs meet element by element). */
fs_status fs_stage_check_alike(const char *what, const fs_transform *const *ts, int n,
                               int same_boxes, int own_shapes_differ, const char *why);

/* "FILE:DATASET[SLICE], ..." of the n INPUTs, malloc'ed (NULL: out of
 * memory). */
char *fs_stage_inputs_text(const fs_location *inputs, const fs_input_info *infos, int n);

#endif
