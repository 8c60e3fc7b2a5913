/* SPDX-License-Identifier: GPL-3.0-or-later */
/* planner: what a run will compute and with which strategy, decided before
 * any data moves.
 *
 * It turns the command line and the probed input (with what a forward run
 * recorded on it, for an inverse) into the transform request
 * (transform.h) once, plans the transform once per capability (without
 * block work, and with it for strategies that overlap block FFTs with their
 * messages), and chooses the exchange strategy: the one named; for
 * `auto` the one the wisdom file remembers or the fastest in a trial on the
 * real sizes; without --transpose (`default`) the fastest whose footprint
 * (footprint.h) fits the memory per rank (fs_node), by the timings the
 * wisdom file holds for these sizes, else by the expected order. */
#ifndef FS_PLANNER_H
#define FS_PLANNER_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "plan/footprint.h"
#include "core/collective.h"
#include "core/errors.h"
#include "exchange/exchange.h"
#include "io/h5io.h"
#include "plan/plan_options.h"
#include "plan/transform.h"
#include "plan/wisdom.h"

/* The request of a run on nranks ranks (usage errors recorded); round_trip:
 * a stage makes the result from the forward one and brings it back. An
 * --inverse run whose input is a forward result of fftshard (in->recorded)
 * takes from it what the options leave open: the axes in their order, the
 * norm, and for --real the halved axis (last_size comes from the input in
 * any case). An option that contradicts the record is honoured. `file`
 * names the INPUT in messages, with the dataset and its slice
 * (fs_input_name: FILE:/DATASET[SLICE]), kept in rq->in_name. */
fs_status fs_planner_request(const fs_transform_options *o, int round_trip, const char *file,
                             const fs_input_info *in, int nranks, fs_transform_request *rq);

/* What the request took from the record (notes for --verbose) and where
 * the options contradict it (warnings: the round trip will not give the
 * input back), one line each. */
#define FS_PLANNER_MAX_NOTES 8
typedef struct fs_planner_notes {
    int n;
    int warning[FS_PLANNER_MAX_NOTES];
    char text[FS_PLANNER_MAX_NOTES][320];
} fs_planner_notes;

/* fs_planner_request, with its notes in *notes (out). */
fs_status fs_planner_request_noted(const fs_transform_options *o, int round_trip,
                                   const char *file, const fs_input_info *in, int nranks,
                                   fs_transform_request *rq, fs_planner_notes *notes);

/* Rank 0: print the warnings unless quiet, and with verbose the notes. */
void fs_planner_print_notes(const fs_planner_notes *notes, int quiet, int verbose);

/* FFTW planner flags of --plan. */
unsigned fs_planner_fftw_flags(fs_plan_effort plan);

/* The transform of each capability. Both have the same decomposition. */
typedef struct fs_planned {
    fs_transform plain;    /* no exchange, or a strategy without block hooks */
    fs_transform hooked;   /* a strategy that runs fs_block_hooks itself */
} fs_planned;

fs_status fs_planner_transforms(const fs_transform_request *rq, fs_planned *p);
/* Whether two requests ask for the same compute plan (the input's names
 * aside): a run keeps its plan for the next dataset when they do. */
int fs_planner_same_request(const fs_transform_request *a, const fs_transform_request *b);
const fs_transform *fs_planned_for(const fs_planned *p, const fs_exchange_ops *ops);

/* The strategy of a run. */
typedef struct fs_strategy_choice {
    const fs_exchange_ops *ops;   /* NULL: no exchange */
    const char *name;             /* "none" without exchange */
    const char *note;             /* how auto decided; NULL when named */
    char reason[512];             /* why this one, for --verbose and the report */
} fs_strategy_choice;

/* The key under which `auto` remembers its choice for the transform
 * `plain` (fs_planned.plain) in the wisdom file. */
void fs_planner_auto_key(const fs_transform *plain, const fs_exchange_params *params, int inverse,
                         char *key, size_t size);

/* What the default strategy is chosen from. */
typedef struct fs_default_args {
    const fs_transform_request *rq;   /* its hooks are ignored */
    const fs_exchange_params *params;
    fs_footprint_keeps keeps;         /* --check, --cross: what the run keeps counts too */
    uint64_t mem_per_rank;            /* bytes a rank may use (0: unknown, all fit) */
    const char *mem_source;           /* where that figure comes from */
    const fs_wisdom *wisdom;          /* may be NULL */
    const char *wisdom_key;           /* fs_planner_auto_key of these sizes */
    int io_thread;                    /* the I/O overlaps the FFTs (fs_node.io_thread) */
} fs_default_args;

/* Not collective, no MPI (the dry run and the run decide alike): the
 * strategies whose footprint fits a->mem_per_rank, the fastest of them by
 * the seconds auto stored in the wisdom file for these sizes when it holds
 * some, else auto's remembered choice, else the first in the order of
 * expected speed (the strategy table's, exchange.h); when none fits, the
 * one that needs least. */
fs_status fs_planner_default(const fs_default_args *a, fs_strategy_choice *out);

/* One strategy of the auto trial timed (collective; the seconds of the
 * slowest rank, the same on every rank; the status agreed): the caller's,
 * who computes. */
typedef fs_status (*fs_trial_time_fn)(void *ctx, const fs_exchange_ops *ops, double *slowest);

/* What the auto trial needs. */
typedef struct fs_trial_args {
    MPI_Comm comm;
    const fs_planned *planned;
    const fs_exchange_params *params;
    fs_trial_time_fn time;        /* each strategy's time (auto without a remembered choice) */
    void *time_ctx;
    int inverse;                  /* for the wisdom key */
    int verbose;                  /* print each strategy's time */
    fs_wisdom *wisdom;            /* remembers auto's choice (may be NULL) */
    const fs_transform_request *rq; /* for the default: the footprints */
    fs_footprint_keeps keeps;     /* --check, --cross (the footprints) */
    const fs_node *node;          /* the memory per rank, for the default */
} fs_trial_args;

/* Collective: the strategy `requested` names (auto: from the wisdom, or
 * each strategy timed by a->time, keeping the one whose slowest rank was
 * fastest; the wisdom remembers it and every strategy's time; the default:
 * fs_planner_default with the node's memory per rank). When that memory
 * is a cgroup's limit (fs_node.mem_hard), a plan whose footprint exceeds
 * it is refused (FS_ERR_RUNTIME, not enough memory) before anything is
 * allocated. Returns the agreed status, its message already printed
 * (once, by the rank that failed). */
fs_status fs_planner_choose(const fs_strategy_request *requested, const fs_trial_args *a,
                            fs_strategy_choice *out);

#endif
