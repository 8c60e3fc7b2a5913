/* SPDX-License-Identifier: GPL-3.0-or-later */
/* options: the command line of fftshard, parsed once into the run
 * configuration (fs_run_config), one typed section per module that reads
 * it: the transform and the strategy (plan/plan_options.h), --check
 * (compute/check.h), what is written (output/output.h), the dry run
 * (dryrun.h), each stage's and the one they share (stages/stage.h), and
 * the few of its own (the INPUTs, --shards, --allow-nonfinite, messages).
 * Every module declares its lines and checks them; this one gathers the
 * lines into getopt's table, takes the operands, runs the checks that span
 * sections and prints --help in its order.
 *
 * Parsing is pure (no MPI, no I/O): every rank parses the same argv and gets
 * the same result, so no broadcast is needed. The caller owns the
 * configuration and releases it with fs_options_free(). Only main.c, the
 * pipeline and the dry run see it whole; every module below them takes its
 * own section. */
#ifndef FS_OPTIONS_H
#define FS_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

#include "compute/check.h"
#include "core/collective.h"
#include "core/errors.h"
#include "dryrun.h"
#include "io/h5probe.h"
#include "output/output.h"
#include "plan/outofcore.h"
#include "plan/plan_options.h"
#include "report/report_run.h"
#include "stages/stage.h"

typedef enum fs_action {
    FS_ACTION_RUN,      /* transform INPUT into OUTPUT */
    FS_ACTION_HELP,     /* --help: print usage on stdout, exit 0 */
    FS_ACTION_VERSION,  /* --version */
} fs_action;

struct fs_run_config {
    fs_action action;
    int ninputs;                      /* INPUT operands (none for --dry-run --shape) */
    fs_location *inputs;
    int shards;                       /* --shards: INPUT names shard files */
    int allow_nonfinite;              /* an input holding NaN or Inf is transformed */
    fs_transform_options transform;
    fs_strategy_options strategy;
    fs_ooc_options ooc;               /* --out-of-core, --scratch, --disk-rate */
    fs_check_options check;
    fs_output_options output;         /* OUTPUT and what else is written */
    fs_dryrun_options dry;
    fs_stage_config stages;
    int progress, quiet, verbose;
    char *command_line;               /* for the report and messages */
};

/* Parse argv into *c (out; free with fs_options_free, also on failure).
 * Returns FS_OK, or FS_ERR_USAGE with the reason recorded by fs_error_set. */
fs_status fs_options_parse(int argc, char **argv, fs_run_config *c);
void fs_options_free(fs_run_config *c);

/* The stages' view of the rest of the command line. */
fs_stage_facts fs_options_facts(const fs_run_config *c);

/* What the command line asked for, as the report tells it (the stages'
 * parts left for the caller). */
fs_run_asked fs_options_asked(const fs_run_config *c);

/* What the run keeps besides the transform of rq (footprint.h): --check's,
 * the stages' kept results, buffers and inverse plans, their own bytes. */
fs_footprint_keeps fs_options_keeps(const fs_run_config *c, const fs_transform_request *rq);

/* What the out-of-core decision (plan/outofcore.h) is made from, for the
 * transform request rq on this node: the memory, the strategy, what the
 * stages and --check need, why these options cannot run out of core.
 * params (out) holds the exchange settings a->params points to. */
void fs_options_ooc_args(const fs_run_config *c, const fs_transform_request *rq,
                         const fs_node *node, fs_exchange_params *params, fs_ooc_args *a);

/* The --help text, and --version's. */
void fs_options_print_help(FILE *out);
void fs_options_print_version(FILE *out);

#endif
