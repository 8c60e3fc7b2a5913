/* SPDX-License-Identifier: GPL-3.0-or-later */
/* dryrun: see dryrun.h. */
#include "config.h"

#include "dryrun.h"
#include "ooc_run.h"
#include "options.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/atomic.h"
#include "core/collective.h"
#include "exchange/exchange.h"
#include "io/h5io.h"
#include "io/shards.h"
#include "output/destinations.h"
#include "plan/footprint.h"
#include "plan/outofcore.h"
#include "plan/planner.h"
#include "plan/transform.h"
#include "report/report.h"
#include "stages/stage.h"

static double mib(double bytes)
{
    return bytes / 1048576.0;
}

static void box_text(const fs_box *b, char *buf, size_t size)
{
    fs_format_shape(b->ndim, b->count, buf, size);
}

/* Smallest and largest box of a stage over all ranks. */
static void stage_extent(const fs_transform *t, int s, fs_box *small, fs_box *large, int *empty)
{
    int64_t lo = INT64_MAX, hi = -1;
    *empty = 0;
    for (int c1 = 0; c1 < t->grid[0]; c1++)
        for (int c2 = 0; c2 < t->grid[1]; c2++) {
            fs_box b = fs_transform_box(t, s, c1, c2);
            int64_t n = fs_box_elems(&b);
            if (n == 0)
                (*empty)++;
            if (n < lo) {
                lo = n;
                *small = b;
            }
            if (n > hi) {
                hi = n;
                *large = b;
            }
        }
}

/* The largest block a rank sends in exchange e: the largest share of the
 * moving axis before times the largest share of the axis it moves to,
 * times the rest of the largest box. */
static int64_t largest_block(const fs_transform *t, int e, const fs_box *large_from)
{
    int g = fs_transform_exchange_dim(t, e);
    int b = t->split[e + 1][g];
    fs_box blk = *large_from;
    if (b >= 0) {
        int64_t cnt, off;
        fs_split_block(t->shape[b], t->grid[g], 0, &cnt, &off);
        blk.count[b] = cnt;
    }
    return fs_box_elems(&blk);
}

/* What the stages ask of the run on the transformed axes of rq. */
static fs_stage_needs needs_of(const fs_run_config *opts, const fs_transform_request *rq)
{
    int D = 0;
    for (int a = 0; a < FS_LAYOUT_MAX_DIMS; a++)
        D += rq->transform_axis[a] != 0;
    fs_stage_facts f = fs_options_facts(opts);
    fs_stage_needs n;
    fs_stages_needs(&opts->stages, &f, D, &n);
    return n;
}

/* Each strategy's footprint (ops: the one named; NULL: all of them, as
 * `auto` and the default may pick any). *n of them in table order (none
 * without exchange), and *worst the index of the largest. */
static fs_status strategy_needs(const fs_run_config *opts, const fs_transform_request *rq,
                                const fs_exchange_ops *ops, int io_thread, fs_footprint *fps,
                                int *n, int *worst)
{
    fs_exchange_params params = {opts->strategy.seed, opts->strategy.packet_bytes,
                                 opts->strategy.queues, 0};
    fs_footprint_keeps keeps = fs_options_keeps(opts, rq);
    *n = 0;
    *worst = -1;
    for (int i = 0; fs_exchange_strategies[i] && *n < FS_EXCHANGE_MAX_STRATEGIES; i++) {
        const fs_exchange_ops *o = fs_exchange_strategies[i];
        if (ops && o != ops)
            continue;
        fs_status st = fs_footprint_of(rq, o, &params, &keeps, io_thread, &fps[*n]);
        if (st != FS_OK || !fps[*n].ops)
            return st;
        if (*worst < 0 || fps[*n].total_bytes > fps[*worst].total_bytes)
            *worst = *n;
        (*n)++;
    }
    return FS_OK;
}

/* The input: described by --shape/--dtype, or probed by rank 0; every rank
 * gets it. *shards (out, rank 0): the --shards files, for the caller to
 * free. */
static fs_status dry_input(MPI_Comm comm, const fs_run_config *opts, fs_input_info *info,
                           fs_shard_set *shards)
{
    memset(info, 0, sizeof *info);
    memset(shards, 0, sizeof *shards);
    const fs_dryrun_options *d = &opts->dry;
    if (!d->shape_ndim) /* with --paint, the table's mesh */
        return fs_particles_dry_probe(comm, &opts->stages.shared.particles, opts->shards,
                                      opts->inputs, info, shards);
    info->ndim = d->shape_ndim;
    info->painted_rows = -1; /* no table: --paint's rounds counted whole */
    memcpy(info->shape, d->shape, sizeof info->shape);
    snprintf(info->type_name, sizeof info->type_name, "%s", fs_dtype_name(d->dtype));
    snprintf(info->dataset, sizeof info->dataset, "(--shape)");
    info->dtype = d->dtype;
    return FS_OK;
}

/* Everything the dry run says, worked out once for the text and the JSON. */
typedef struct dry_plan {
    const fs_run_config *opts;
    const fs_input_info *info;
    int P;                             /* the ranks planned for */
    const fs_exchange_ops *ops;        /* the strategy named; NULL for auto and the default */
    int is_default;                    /* no --transpose: the default's choice */
    fs_strategy_choice choice;         /* the default's */
    fs_node node;                      /* the ranks' node: the memory the default
                                        * fitted, crowded, the I/O thread */
    fs_transform t;
    fs_footprint fps[FS_EXCHANGE_MAX_STRATEGIES];  /* per strategy compared, table order */
    int nfps, worst;                   /* worst: the largest, -1 without exchange */
    int chosen;                        /* the one the memory line speaks of, -1: none */
    const char *kept;                  /* what the stages keep, in words (stage.h) */
    int64_t paint_bytes;               /* --paint: the particles' rounds and ghost cells */
    fs_footprint none;                 /* without exchange */
    fs_box small[FS_MAX_STAGES], large[FS_MAX_STAGES];
    int empty[FS_MAX_STAGES];          /* ranks holding nothing, per stage */
    fs_ooc_plan ooc;                   /* in memory, or out of core and its passes */
} dry_plan;

/* The footprint the memory line speaks of: the strategy's (named, or the
 * default's choice), or the largest for auto. */
static const fs_footprint *chosen_need(const dry_plan *p)
{
    return p->chosen >= 0 ? &p->fps[p->chosen] : &p->none;
}

/* Out of core, its passes' memory is the run's. */
static int64_t need_bytes(const dry_plan *p)
{
    return p->ooc.on ? p->ooc.total_bytes : chosen_need(p)->total_bytes;
}

/* The memory per rank the plan is held to: --mem-per-rank, else a share
 * of the job's cgroup's limit (a run refuses a plan beyond it: not with
 * --ranks, whose job is not this one); 0: none. */
static uint64_t limit_of(const dry_plan *p)
{
    if (p->opts->strategy.mem_per_rank)
        return p->opts->strategy.mem_per_rank;
    return p->node.mem_hard && !p->opts->dry.ranks ? p->node.mem_per_rank : 0;
}

static int fits(const dry_plan *p)
{
    return (uint64_t)need_bytes(p) <= limit_of(p);
}

/* The node as a run of this job would find it (the ranks on a node: this
 * job's, or with --ranks as many as the node has processors, at most
 * --ranks). Collective. */
static fs_status dry_node(MPI_Comm comm, const fs_run_config *opts, fs_node *node)
{
    int nranks = 0;
    if (MPI_Comm_size(comm, &nranks) != MPI_SUCCESS)
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_size failed"));
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int ranks = opts->dry.ranks;
    int per_node = !ranks || ranks == nranks ? 0 : cpus > 0 && cpus < ranks ? (int)cpus : ranks;
    return fs_node_facts(comm, opts->strategy.mem_per_rank, per_node, node);
}

/* The default's choice, as a run of this job would make it. Collective. */
static fs_status choose_default(MPI_Comm comm, const fs_run_config *opts, const fs_transform_request *rq,
                                dry_plan *p)
{
    const fs_node *node = &p->node;
    fs_wisdom *w = NULL;
    fs_status st = fs_wisdom_load(comm, opts->output.wisdom_file, &w); /* agreed */
    if (st == FS_OK) {
        fs_exchange_params params = {opts->strategy.seed, opts->strategy.packet_bytes,
                                     opts->strategy.queues, node->crowded};
        char key[512];
        fs_planner_auto_key(&p->t, &params, opts->transform.inverse, key, sizeof key);
        fs_default_args da = {rq, &params, fs_options_keeps(opts, rq), node->mem_per_rank, node->mem_source,
                              w,  key,     node->io_thread};
        st = fs_error_agree(comm, fs_planner_default(&da, &p->choice));
    }
    fs_wisdom_free(&w);
    for (int k = 0; st == FS_OK && k < p->nfps; k++)
        if (p->fps[k].ops == p->choice.ops)
            p->chosen = k;
    return st;
}

/* Every rank plans alike; the default's memory per rank is collective. */
static fs_status make_plan(MPI_Comm comm, const fs_run_config *opts, const fs_input_info *info, int P,
                           dry_plan *p)
{
    memset(p, 0, sizeof *p);
    p->opts = opts;
    p->info = info;
    p->P = P;
    p->worst = p->chosen = -1;
    const fs_strategy_request *asked = &opts->strategy.strategy;
    p->is_default = asked->kind == FS_STRATEGY_DEFAULT;
    p->ops = asked->kind == FS_STRATEGY_NAMED ? asked->ops : NULL;
    fs_transform_request rq;
    fs_exchange_params params = {opts->strategy.seed, opts->strategy.packet_bytes,
                                 opts->strategy.queues, 0};
    fs_status st = dry_node(comm, opts, &p->node); /* agreed */
    if (st != FS_OK)
        return st;
    int io = p->node.io_thread;
    fs_stage_facts facts = fs_options_facts(opts);
    fs_stage_needs any;
    fs_stages_needs(&opts->stages, &facts, 0, &any);
    st = fs_planner_request(&opts->transform, any.field, opts->ninputs ? opts->inputs[0].file : "",
                            info, P, &rq);
    if (st == FS_OK) /* a stage's padding: the one INPUT stands for all */
        st = fs_stages_domain(&opts->stages, 1, info, &rq);
    rq.hooks = p->ops && p->ops->uses_hooks;
    if (st == FS_OK)
        st = fs_transform_plan(&rq, &p->t);
    fs_footprint_keeps keeps = fs_options_keeps(opts, &rq);
    p->kept = needs_of(opts, &rq).kept;
    if (st == FS_OK)
        st = fs_footprint_of(&rq, NULL, &params, &keeps, io, &p->none);
    if (st == FS_OK)
        st = strategy_needs(opts, &rq, p->ops, io, p->fps, &p->nfps, &p->worst);
    p->paint_bytes = fs_particles_dry_bytes(&opts->stages.shared.particles, info->ndim,
                                           info->painted_rows, &p->t);
    for (int k = -1; st == FS_OK && k < p->nfps; k++) /* in every footprint's total */
        fs_footprint_add_source(k < 0 ? &p->none : &p->fps[k], p->paint_bytes);
    for (int s = 0; st == FS_OK && s < p->t.nstages; s++)
        stage_extent(&p->t, s, &p->small[s], &p->large[s], &p->empty[s]);
    if (!p->is_default)
        p->chosen = p->worst;
    fs_ooc_args oa;
    if (st == FS_OK) { /* in memory or out of core, as the run decides */
        fs_options_ooc_args(opts, &rq, &p->node, &params, &oa);
        st = fs_ooc_plan_make(&oa, &p->ooc);
    }
    /* Every rank plans the same way: rank 0 speaks. */
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    st = fs_error_agree(comm, rank == 0 ? st : FS_OK);
    if (st == FS_OK && p->is_default && p->nfps)
        st = choose_default(comm, opts, &rq, p);
    return st;
}

/* ------------------------------------------------------------------ text */

/* Why pencils (the text's and the JSON's words). */
static const char *pencil_reason(const dry_plan *p)
{
    return p->opts->transform.grid[0] ? "--grid"
           : p->opts->transform.decomp == FS_DECOMP_PENCIL ? "--decomp=pencil"
                                                 : "slabs would leave ranks without data";
}

/* Which ranks exchange e involves. */
static const char *exchange_among(const fs_transform *t, int e)
{
    int g = fs_transform_exchange_dim(t, e);
    return t->pencil ? (g == 1 ? "a row of the grid" : "a column of the grid") : "all ranks";
}

/* The first lines: what is computed and how the ranks split it. */
static void print_decomposition(FILE *out, const dry_plan *p)
{
    const fs_transform *t = &p->t;
    char shape[256];
    fs_format_shape(p->info->ndim, p->info->shape, shape, sizeof shape);
    fprintf(out, "fftshard dry run: %s %s on %d ranks: %s, %s precision, %s\n", shape,
            p->info->type_name, p->P, fs_kind_name(t->kind), fs_precision_name(t->prec),
            p->opts->transform.inverse ? "inverse" : "forward");
    if (p->info->slice.given) {
        int64_t whole[FS_LAYOUT_MAX_DIMS];
        fs_format_shape(fs_input_file_shape(p->info, whole), whole, shape, sizeof shape);
        fprintf(out, "input: the slice %s of the %s dataset, read alone\n", p->info->slice.text,
                shape);
    }
    if (fs_r2r_any(t->r2r, t->in_ndim)) {
        char kinds[256] = "";
        size_t u = 0;
        for (int i = 0; i < t->naxes && u < sizeof kinds; i++)
            u += (size_t)snprintf(kinds + u, sizeof kinds - u, "%saxis %d %s", i ? ", " : "",
                                  t->axes[i], fs_r2r_name(t->r2r[t->axes[i]]));
        fprintf(out, "kinds: %s; working array %s\n", kinds, fs_dtype_name(t->work_type));
    }
    char win[FS_LAYOUT_MAX_DIMS * 64];
    fs_domain_window_text(t, win, sizeof win);
    if (t->resized) {
        fs_format_shape(t->in_ndim, t->in_shape, shape, sizeof shape);
        fprintf(out, "zero padding: the input read into the first elements of %s\n", shape);
    }
    if (win[0])
        fprintf(out, "window: %s (%s), as the input is read\n", win,
                t->window_sym ? "symmetric" : "periodic");
    if (t->pencil)
        fprintf(out, "decomposition: pencil, grid %d x %d%s (%s)\n", t->grid[0], t->grid[1],
                t->exchanges ? "" : ", no exchange", pencil_reason(p));
    else if (t->fold)
        fprintf(out, "decomposition: 1-D four-step, %lld x %lld\n", (long long)t->n2, (long long)t->n1);
    else if (!t->exchanges)
        fprintf(out, "decomposition: slab on axis %d, no exchange\n", t->from_axis);
    else if (t->split[1][0] == FS_GATHER)
        fprintf(out, "decomposition: slab on axis %d, gathered on rank 0 for the last pass\n",
                t->split[0][0]);
    else
        fprintf(out, "decomposition: slab, axis %d -> axis %d\n", t->split[0][0], t->split[1][0]);
}

/* Whether stage s's axis along grid dimension g is a batch axis. */
static int batch_axis(const fs_transform *t, int s, int g)
{
    int ax = t->split[s][g];
    return ax >= 0 && !t->fold && !t->transform_axis[ax];
}

/* One line per stage. */
static void print_stages(FILE *out, const dry_plan *p)
{
    const fs_transform *t = &p->t;
    size_t cb = fs_dtype_bytes(t->work_type);
    for (int s = 0; s < t->nstages; s++) {
        char a[128], b[128], split[128] = "";
        box_text(&p->small[s], a, sizeof a);
        box_text(&p->large[s], b, sizeof b);
        for (int g = 0; g < 2; g++) {
            int ax = t->split[s][g];
            size_t u = strlen(split);
            if (ax >= 0)
                snprintf(split + u, sizeof split - u, "%saxis %d over %d%s", u ? ", " : "", ax,
                         t->grid[g], batch_axis(t, s, g) ? " (batch)" : "");
            else if (ax == FS_GATHER)
                snprintf(split + u, sizeof split - u, "%sall on rank 0", u ? ", " : "");
        }
        int64_t n = fs_box_elems(&p->large[s]);
        fprintf(out, "stage %d: %s; local blocks %s to %s (up to %" PRId64 " elements, %.1f MiB)\n",
                s, split[0] ? split : "not split", a, b, n, mib((double)n * (double)cb));
        if (p->empty[s])
            fprintf(out, "  %d of %d ranks hold nothing in this stage\n", p->empty[s], p->P);
    }
}

/* One line per exchange, with every strategy's messages. */
static void print_exchanges(FILE *out, const dry_plan *p)
{
    const fs_transform *t = &p->t;
    size_t cb = fs_dtype_bytes(t->work_type);
    for (int e = 0; e + 1 < t->nstages; e++) {
        int64_t blk = largest_block(t, e, &p->large[e]);
        char msgs[512] = "";
        for (int k = 0; k < p->nfps; k++) {
            size_t u = strlen(msgs);
            snprintf(msgs + u, sizeof msgs - u, "%s%s %" PRIu64, k ? ", " : "",
                     p->fps[k].ops->name, p->fps[k].messages[e]);
        }
        fprintf(out, "exchange %d: among %d ranks (%s), blocks of up to %" PRId64
                " elements (%.2f MiB); messages per rank: %s\n",
                e + 1, t->grid[fs_transform_exchange_dim(t, e)], exchange_among(t, e), blk,
                mib((double)blk * (double)cb), msgs);
    }
}

/* The strategy a run would take and why (NULL name: auto, decided by
 * timing in the run; "none": no exchange). */
static const char *strategy_name(const dry_plan *p)
{
    return !p->nfps ? "none" : p->ops ? p->ops->name : p->is_default ? p->choice.name : NULL;
}

static const char *strategy_reason(const dry_plan *p)
{
    return !p->nfps      ? "no exchange"
           : p->ops      ? "named by --transpose"
           : p->is_default ? p->choice.reason
                           : "auto: the run times every strategy on these sizes";
}

/* The memory per rank of the strategy (or the largest, for auto). */
static void print_memory(FILE *out, const dry_plan *p)
{
    const fs_footprint *m = chosen_need(p);
    char who[128];
    if (!m->ops)
        snprintf(who, sizeof who, "no exchange");
    else if (p->ops || p->is_default)
        snprintf(who, sizeof who, "%s", m->ops->name);
    else
        snprintf(who, sizeof who, "auto: %s's, the largest of the strategies", m->ops->name);
    if (p->is_default && p->nfps)
        fprintf(out, "strategy: %s (default: %s)\n", p->choice.name, p->choice.reason);
    char cross[64] = "", paint[64] = "", sums[64] = "";
    if (m->cross_bytes)
        snprintf(cross, sizeof cross, " + %s %.1f MiB", p->kept, mib((double)m->cross_bytes));
    if (m->green_bytes) /* --boundary=free's table (not with kept results) */
        snprintf(cross, sizeof cross, " + Green's function %.1f MiB", mib((double)m->green_bytes));
    if (mib((double)m->stage_bytes) >= 0.05) /* --apply's tables of a 3-D box: KiB */
        snprintf(sums, sizeof sums, " + %s %.1f MiB", m->stage_sums_bytes ? "sums per bin"
                 : "operators' tables", mib((double)m->stage_bytes));
    if (p->paint_bytes) /* the painting's phase and the rest's: the larger */
        snprintf(paint, sizeof paint, "; painting: particles %.1f MiB, in all %.1f MiB",
                 mib((double)p->paint_bytes), mib((double)m->source_phase_bytes));
    fprintf(out, "memory per rank (%s): array %.1f MiB + exchange %.1f MiB + plans and I/O ~%.1f MiB + "
            "libraries ~%.0f MiB%s%s%s = about %.1f MiB\n", who, mib((double)m->array_bytes),
            mib((double)m->exchange_bytes), mib((double)m->plans_io_bytes),
            mib((double)m->library_bytes), cross, sums, paint, mib((double)m->total_bytes));
    if (p->opts->strategy.mem_per_rank)
        fprintf(out, "--mem-per-rank %.1f MiB: %s%s\n", mib((double)p->opts->strategy.mem_per_rank),
                fits(p) ? "fits" : "does NOT fit", p->ooc.on ? " out of core" : "");
    else if (limit_of(p))
        fprintf(out, "%.1f MiB per rank (%s): %s%s\n", mib((double)limit_of(p)),
                p->node.mem_source, fits(p) ? "fits" : "does NOT fit",
                p->ooc.on ? " out of core" : "");
}

static void print_text(FILE *out, const dry_plan *p)
{
    print_decomposition(out, p);
    print_stages(out, p);
    print_exchanges(out, p);
    print_memory(out, p);
    fs_ooc_run_print(out, &p->ooc, p->opts->ooc.scratch_dir);
    fprintf(out, "nothing was read, computed or written\n");
    fflush(out);
}

/* ------------------------------------------------------------------ JSON */

static void json_box(fs_json *j, const char *key, const fs_box *b)
{
    fs_json_ints(j, key, b->ndim, b->count);
}

static void json_memory(fs_json *j, const fs_footprint *m)
{
    fs_json_int(j, "array_bytes", m->array_bytes);
    fs_json_int(j, "exchange_bytes", m->exchange_bytes);
    fs_json_int(j, "plans_and_io_bytes", m->plans_io_bytes);
    fs_json_int(j, "libraries_bytes", m->library_bytes);
    fs_json_int(j, "cross_bytes", m->cross_bytes);
    fs_json_int(j, "green_bytes", m->green_bytes);
    fs_json_int(j, "stage_bytes", m->stage_bytes);
    fs_json_int(j, "painting_bytes", m->source_phase_bytes); /* --paint's phase, or 0 */
    fs_json_int(j, "total_bytes", m->total_bytes);
}

/* What is computed, on how many ranks, split how. */
static void json_problem(fs_json *j, const dry_plan *p)
{
    const fs_transform *t = &p->t;
    const fs_run_config *o = p->opts;
    char input[FS_INPUT_NAME_MAX];
    fs_input_name(o->ninputs ? o->inputs[0].file : "", p->info, input, sizeof input);
    fs_json_str(j, "schema", FS_DRY_RUN_SCHEMA);
    fs_json_str(j, "version", PACKAGE_VERSION);
    fs_json_str(j, "command_line", o->command_line);
    fs_json_str(j, "input", o->dry.shape_ndim ? NULL : input);
    fs_json_ints(j, "shape", p->info->ndim, p->info->shape);
    char win[FS_LAYOUT_MAX_DIMS * 64];
    fs_domain_window_text(t, win, sizeof win);
    if (t->resized)
        fs_json_ints(j, "padded_shape", t->in_ndim, t->in_shape);
    else
        fs_json_null(j, "padded_shape");
    fs_json_str(j, "window", win[0] ? win : NULL);
    fs_json_str(j, "dtype", p->info->type_name);
    fs_json_str(j, "precision", fs_precision_name(t->prec));
    fs_json_str(j, "transform", fs_kind_name(t->kind));
    fs_json_str(j, "direction", o->transform.inverse ? "inverse" : "forward");
    fs_json_str(j, "norm", fs_norm_name(o->transform.norm));
    int64_t axes[FS_LAYOUT_MAX_DIMS];
    int naxes = 0;
    for (int k = 0; k < p->info->ndim; k++)
        if (t->transform_axis[k])
            axes[naxes++] = k;
    fs_json_ints(j, "axes", naxes, axes);
    fs_json_open(j, "axis_kinds", '[');
    for (int i = 0; i < naxes; i++)
        fs_json_str(j, NULL, fs_r2r_name(t->r2r[axes[i]]));
    fs_json_close(j, ']');
    fs_json_str(j, "work_dtype", fs_dtype_name(t->work_type));
    fs_json_int(j, "ranks", p->P);
    fs_json_str(j, "transpose", fs_strategy_request_name(&o->strategy.strategy));
    fs_json_open(j, "strategy", '{');
    fs_json_str(j, "requested", fs_strategy_request_name(&o->strategy.strategy));
    fs_json_str(j, "name", strategy_name(p));
    fs_json_str(j, "reason", strategy_reason(p));
    fs_json_int(j, "seed", (int64_t)o->strategy.seed);
    fs_json_int(j, "packet_bytes", (int64_t)o->strategy.packet_bytes);
    fs_json_int(j, "queues", o->strategy.queues);
    fs_json_close(j, '}');

    fs_json_open(j, "decomposition", '{');
    fs_json_str(j, "type", t->pencil ? "pencil" : t->fold ? "four-step" : "slab");
    fs_json_int(j, "split_axis_before", t->split[0][0]);
    fs_json_int(j, "split_axis_after",
                t->split[t->nstages - 1][0] == FS_GATHER ? -1 : t->split[t->nstages - 1][0]);
    int64_t grid[2] = {t->grid[0], t->grid[1]};
    fs_json_ints(j, "grid", 2, grid);
    fs_json_str(j, "pencil_reason", t->pencil ? pencil_reason(p) : NULL);
    int64_t four_step[2] = {t->n2, t->n1};
    if (t->fold)
        fs_json_ints(j, "four_step", 2, four_step);
    else
        fs_json_null(j, "four_step");
    fs_json_close(j, '}');
}

/* Every stage's split and blocks, every exchange's ranks, blocks and
 * messages. */
static void json_stages(fs_json *j, const dry_plan *p)
{
    const fs_transform *t = &p->t;
    int64_t cb = (int64_t)fs_dtype_bytes(t->work_type);
    fs_json_open(j, "stages", '[');
    for (int s = 0; s < t->nstages; s++) {
        fs_json_open(j, NULL, '{');
        fs_json_open(j, "split", '[');
        for (int g = 0; g < 2; g++) {
            if (t->split[s][g] < 0)
                continue;
            fs_json_open(j, NULL, '{');
            fs_json_int(j, "axis", t->split[s][g]);
            fs_json_int(j, "ranks", t->grid[g]);
            fs_json_bool(j, "batch", batch_axis(t, s, g));
            fs_json_close(j, '}');
        }
        fs_json_close(j, ']');
        fs_json_bool(j, "gathered", t->split[s][0] == FS_GATHER || t->split[s][1] == FS_GATHER);
        json_box(j, "smallest_block", &p->small[s]);
        json_box(j, "largest_block", &p->large[s]);
        fs_json_int(j, "largest_elements", fs_box_elems(&p->large[s]));
        fs_json_int(j, "largest_bytes", fs_box_elems(&p->large[s]) * cb);
        fs_json_int(j, "empty_ranks", p->empty[s]);
        fs_json_close(j, '}');
    }
    fs_json_close(j, ']');

    fs_json_open(j, "exchanges", '[');
    for (int e = 0; e + 1 < t->nstages; e++) {
        int64_t blk = largest_block(t, e, &p->large[e]);
        fs_json_open(j, NULL, '{');
        fs_json_int(j, "ranks", t->grid[fs_transform_exchange_dim(t, e)]);
        fs_json_str(j, "among", exchange_among(t, e));
        fs_json_int(j, "largest_block_elements", blk);
        fs_json_int(j, "largest_block_bytes", blk * cb);
        fs_json_open(j, "messages_per_rank", '{');
        for (int k = 0; k < p->nfps; k++)
            fs_json_int(j, p->fps[k].ops->name, (int64_t)p->fps[k].messages[e]);
        fs_json_close(j, '}');
        fs_json_close(j, '}');
    }
    fs_json_close(j, ']');
}

/* The memory per rank of every strategy compared, the one the text gives,
 * and the verdict against --mem-per-rank. */
static void json_memory_per_rank(fs_json *j, const dry_plan *p)
{
    fs_json_open(j, "strategies", '{');
    for (int k = 0; k < p->nfps; k++) {
        fs_json_open(j, p->fps[k].ops->name, '{');
        json_memory(j, &p->fps[k]);
        fs_json_close(j, '}');
    }
    fs_json_close(j, '}');

    const fs_footprint *m = chosen_need(p);
    fs_json_open(j, "memory_per_rank", '{');
    fs_json_str(j, "strategy", m->ops ? m->ops->name : NULL);
    json_memory(j, m);
    fs_json_int(j, "paint_bytes", p->paint_bytes); /* in painting_bytes */
    fs_json_close(j, '}');

    fs_json_open(j, "mem_per_rank", '{');
    if (limit_of(p)) {
        fs_json_int(j, "limit_bytes", (int64_t)limit_of(p));
        fs_json_bool(j, "fits", fits(p));
    } else {
        fs_json_null(j, "limit_bytes");
        fs_json_null(j, "fits");
    }
    fs_json_close(j, '}');
}

/* The out-of-core decision and, out of core, its passes. */
static void json_out_of_core(fs_json *j, const dry_plan *p)
{
    const fs_ooc_plan *o = &p->ooc;
    fs_json_open(j, "out_of_core", '{');
    fs_json_bool(j, "on", o->on);
    fs_json_text(j, "reason", o->reason);
    if (o->on) {
        fs_json_int(j, "blocks", o->blocks);
        fs_json_int(j, "blocks_per_rank", o->per_rank);
        fs_json_int(j, "block_bytes", o->buffer_bytes);
        fs_json_int(j, "memory_per_rank_bytes", o->total_bytes);
        fs_json_int(j, "scratch_files", fs_ooc_files_held(o));
        fs_json_int(j, "scratch_bytes", o->scratch_bytes);
        fs_json_num(j, "predicted_seconds", o->predicted_s > 0 ? o->predicted_s : NAN);
        fs_json_open(j, "passes", '[');
        for (int i = 0; i < o->npasses; i++) {
            char text[128];
            fs_ooc_pass_text(o, i, text, sizeof text);
            fs_json_open(j, NULL, '{');
            fs_json_text(j, "moves", text);
            fs_json_int(j, "runs", o->pass[i].runs);
            fs_json_num(j, "read_bytes", o->pass[i].read_bytes);
            fs_json_num(j, "written_bytes", o->pass[i].written_bytes);
            fs_json_close(j, '}');
        }
        fs_json_close(j, ']');
    }
    fs_json_close(j, '}');
}

static void json_plan(fs_json *j, void *arg)
{
    const dry_plan *p = arg;
    json_problem(j, p);
    json_stages(j, p);
    json_memory_per_rank(j, p);
    json_out_of_core(j, p);
}

/* ------------------------------------------------------------------ run */

/* --report=FILE: checked like a run's report (not an input, an input shard
 * or a virtual dataset's source) and its temporary made, collectively. */
static fs_status begin_report(MPI_Comm comm, const fs_run_config *opts, const fs_input_info *info,
                              const fs_shard_set *shards, char **tmp)
{
    *tmp = NULL;
    const char *report = opts->output.report_file;
    if (!report || fs_report_to_stdout(report))
        return FS_OK;
    fs_status st = FS_OK;
    const char *input = opts->ninputs ? opts->inputs[0].file : NULL;
    if (input) {
        const char *inputs[] = {input};
        fs_run_files files = {
            .report = report,
            .ninputs = 1,
            .inputs = inputs,
            .infos = info,
            .shards = info->nshards ? shards : NULL,
        };
        st = fs_destinations_check(comm, &files);
    }
    if (st == FS_OK)
        st = fs_atomic_begin(comm, report, input, 1, tmp);
    return st;
}

/* Rank 0: the text (standard output; with --report=-, standard error
 * unless --quiet), the JSON into its place, then the verdict. */
static fs_status speak(const dry_plan *p, char *tmp)
{
    const fs_run_config *o = p->opts;
    const char *report = o->output.report_file;
    FILE *text = !fs_report_to_stdout(report) ? stdout : o->quiet ? NULL : stderr;
    if (text)
        print_text(text, p);
    fs_status st = FS_OK;
    if (report)
        st = fs_json_write(report, tmp, json_plan, (void *)p);
    if (tmp && st == FS_OK)
        st = fs_atomic_commit(tmp, report);
    else if (tmp)
        fs_atomic_abort(tmp);
    if (st == FS_OK && o->strategy.mem_per_rank && !fits(p))
        st = fs_error_set(FS_ERR_RUNTIME,
                          "--mem-per-rank: the plan needs about %.1f MiB per rank, more than "
                          "%.1f MiB (not enough memory)",
                          mib((double)need_bytes(p)),
                          mib((double)o->strategy.mem_per_rank));
    else if (st == FS_OK && limit_of(p) && !fits(p))
        st = fs_error_set(FS_ERR_RUNTIME, "not enough memory: the plan needs about %.1f MiB per "
                          "rank, more than the %.1f MiB of %s",
                          mib((double)chosen_need(p)->total_bytes), mib((double)limit_of(p)),
                          p->node.mem_source);
    return st;
}

fs_status fs_dry_run(MPI_Comm comm, const fs_run_config *opts)
{
    int rank, nranks;
    int err = MPI_Comm_rank(comm, &rank);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_size(comm, &nranks);
    if (err != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed: %s", fs_mpi_strerror(err));
    fs_input_info info;
    fs_shard_set shards;
    fs_status st = dry_input(comm, opts, &info, &shards); /* agreed */
    if (st != FS_OK) {
        fs_shard_set_free(&shards);
        return st;
    }
    dry_plan *p = malloc(sizeof *p);
    st = fs_error_agree(comm, p ? FS_OK
                                : fs_error_set(FS_ERR_RUNTIME, "out of memory planning the dry run"));
    if (st == FS_OK)
        st = make_plan(comm, opts, &info, opts->dry.ranks ? opts->dry.ranks : nranks, p); /* agreed */
    char *tmp = NULL;
    if (st == FS_OK)
        st = begin_report(comm, opts, &info, &shards, &tmp);
    fs_shard_set_free(&shards);
    if (st == FS_OK) {
        if (rank == 0)
            st = speak(p, tmp); /* commits or removes the temporary */
        else if (tmp)
            fs_atomic_forget(tmp);
        st = fs_error_agree(comm, st);
    }
    free(tmp);
    free(p);
    return st;
}

/* ---------------------------------------------------------- the options */

static fs_status set_shape(const fs_opt *opt, const char *arg, void *section)
{
    fs_dryrun_options *d = section;
    (void)opt;
    int64_t shape[FS_LAYOUT_MAX_DIMS];
    int n = fs_parse_shape(arg, shape);
    if (n < 1)
        return fs_error_set(FS_ERR_USAGE,
                            "--shape=%s: expected lengths like 512x512x256 (1 to %d positive "
                            "lengths, at most %s elements)",
                            arg, FS_LAYOUT_MAX_DIMS, FS_MAX_ELEMS_TEXT);
    memcpy(d->shape, shape, sizeof shape);
    d->shape_ndim = n;
    return FS_OK;
}

static fs_status set_dtype(const fs_opt *opt, const char *arg, void *section)
{
    fs_dryrun_options *d = section;
    fs_status st = fs_opt_enum(opt, arg, section);
    d->dtype_given = st == FS_OK;
    return st;
}

_Static_assert(sizeof(fs_dtype) == sizeof(int), "fs_dtype is stored as an int");
static const fs_opt_name dtype_names[] = {
    {"float32", FS_DTYPE_FLOAT32}, {"float64", FS_DTYPE_FLOAT64},
    {"complex64", FS_DTYPE_COMPLEX64}, {"complex128", FS_DTYPE_COMPLEX128}, {NULL, 0}};

#define D fs_dryrun_options
const fs_opt fs_dryrun_option_lines[] = {
    {FS_OPT("dry-run", 0, FS_OPT_NO_ARG, fs_opt_flag, D, on),
     .help = "      --dry-run           print the decomposition, local blocks, messages and\n"
             "                          memory per rank, then exit; INPUT optional (with\n"
             "                          --report=- piped into fftshard-predict PLATFORM: the\n"
             "                          strategies' times on a simulated machine)\n"},
    {FS_OPT("shape", 0, FS_OPT_ARG, set_shape, D, shape),
     .help = "      --shape=SHAPE       the array's shape (e.g. 2048x2048x2048) instead of INPUT\n"},
    {FS_OPT("dtype", 0, FS_OPT_ARG, set_dtype, D, dtype), .names = dtype_names,
     .help = "      --dtype=TYPE        its type: float32, float64, complex64, complex128\n"},
    {FS_OPT("ranks", 0, FS_OPT_ARG, fs_opt_long, D, ranks), .lo = 1, .hi = 1L << 30,
     .expected = "a positive integer",
     .help = "      --ranks=N           plan for N ranks (default: this job's)\n"},
    {.long_name = NULL},
};
#undef D
