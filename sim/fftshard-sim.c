/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fftshard-sim: fftshard's exchange strategies on a simulated machine.
 *
 * Built with SimGrid's smpicc and run by smpirun on a platform file, each
 * simulated rank plans the transform with fftshard's own planner
 * (transform.c), builds its decomposition with the real collective code
 * (decomp.c, prefix.c) and runs the real exchange strategies (exchange*.c,
 * blocked.c, layout.c) on buffers of SMPI shared memory: every message the
 * strategies send, in their order, sizes, packets, queues and windows, goes
 * through SimGrid's network model. What is not simulated but modelled is
 * the local work, whose real time here would say nothing of the simulated
 * machine: the FFTs of every stage (and the block FFTs the pairwise
 * strategy overlaps with its messages) take 5 N log2 N flops at the rate
 * measured by sim/calibrate, and the strategies' local copies (packing,
 * unpacking, the in-place permutations, xorswap's XORs) take their bytes at
 * the measured copy rate. SMPI is run with smpi/simulate-computation:no so
 * that the real copy loops add no time of their own.
 *
 * A host of speed 1Gf in a platform is a core as fast as the calibration
 * machine's (2Gf: twice as fast).
 *
 * --groups=component simulates, in each exchange of a pencil decomposition,
 * only the groups of ranks whose routes can interact with rank 0's group
 * (sim_groups.h); the other ranks skip that exchange. Every stage then
 * starts on every rank at the same simulated time (--groups=synced does the
 * same with every group, as the reference for it), and the times are the
 * sums over the stages of each stage's slowest simulated rank.
 *
 * Rank 0 prints one CSV line per strategy (the slowest rank's times):
 * strategy,decomp,grid,ranks,shape,dtype,exchange_s,fft_s,total_s,messages,
 * note,simulated; the last is the ranks that ran each exchange ("64/256"). */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <mpi.h>
#include <simgrid/actor.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buffer.h"
#include "plan/decomp.h"
#include "core/errors.h"
#include "exchange/exchange.h"
#include "core/layout.h"
#include "sim_groups.h"
#include "sim_shm.h"
#include "plan/transform.h"

typedef struct sim_model {
    double fft_rate[2];   /* flop/s of one core, [FS_DOUBLE], [FS_SINGLE] */
    double copy_rate;     /* bytes/s of one core's memory copies */
    /* The block FFTs an overlapping strategy runs (pairwise's, on blocks
     * cut from the stage's box) at this fraction of fft_rate. */
    double block_fft_factor;
    /* bytes/s of a receiver's copies of its messages (sim_shm.h; 0: none,
     * the messages cost the links only) */
    double receive_copy_rate;
    double wake_s;        /* after a wait that blocked (sim_shm.h; 0: none) */
} sim_model;

/* Which ranks run each exchange (--groups). */
typedef enum sim_groups_mode {
    SIM_GROUPS_ALL,        /* every rank, the stages unsynchronised as in fftshard */
    SIM_GROUPS_SYNCED,     /* every rank, each stage after a barrier */
    SIM_GROUPS_COMPONENT   /* rank 0's component of groups (sim_groups.h), synced */
} sim_groups_mode;

typedef struct sim_args {
    int ndim;
    int64_t shape[FS_LAYOUT_MAX_DIMS];
    fs_dtype dtype;
    fs_decomp decomp;
    int grid[2];
    const char *strategy;           /* a name or "all" */
    fs_exchange_params params;
    sim_model model;
    sim_groups_mode groups;
    int max_simulated;              /* sample a larger component (0: never) */
    int header;
} sim_args;

static void sim_compute(double seconds)
{
    if (seconds > 0)
        smpi_execute_flops(seconds * SIM_REF_SPEED);
}

/* Seconds of one local operation on `box` by the model. */
static double op_seconds(const fs_op_spec *spec, const fs_box *box, fs_precision prec,
                         const sim_model *m)
{
    double elems = (double)fs_box_elems(box), n = 1;
    switch (spec->kind) {
    case FS_OP_C2C:
    case FS_OP_R2C:
    case FS_OP_C2R:
        for (int k = 0; k < box->ndim; k++)
            if (spec->axes[k])
                n *= (double)(spec->kind != FS_OP_C2C && k == spec->real_axis ? spec->real_len
                                                                                : box->count[k]);
        /* A real transform of n points costs about half a complex one: its
         * box counts n/2+1 complex elements along the halved axis. */
        break;
    case FS_OP_C2R_VIA_C2C:
    case FS_OP_R2C_VIA_C2C:
        n = (double)box->count[spec->real_axis];
        break;
    default:
        /* Twiddles, scaling and transposes stream the box once. */
        return 2 * elems * (double)fs_complex_bytes(prec) / m->copy_rate;
    }
    return n > 1 ? 5 * elems * log2(n) / m->fft_rate[prec] : 0;
}

static double stage_seconds(const fs_transform *t, int s, fs_box box, const sim_model *m)
{
    double sec = 0;
    for (int i = 0; i < t->nops[s]; i++) {
        sec += op_seconds(&t->ops[s][i], &box, t->prec, m);
        if (t->ops[s][i].kind == FS_OP_TRANSPOSE) {
            int64_t c0 = box.count[0];
            box.count[0] = box.count[1];
            box.count[1] = c0;
        }
    }
    return sec;
}

/* The block work of an overlapping strategy, as compute.c hands it over. */
typedef struct hook_ctx {
    const fs_transform *t;
    const sim_model *m;
} hook_ctx;

static fs_status hook_run(const hook_ctx *h, const int *axes, const fs_box *block)
{
    fs_op_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.kind = h->t->hook_twiddle ? FS_OP_TWIDDLE : FS_OP_C2C;
    memcpy(spec.axes, axes, sizeof spec.axes);
    sim_compute(op_seconds(&spec, block, h->t->prec, h->m) / h->m->block_fft_factor);
    return FS_OK;
}

static fs_status hook_pre(void *ctx, const fs_box *block, void *data)
{
    hook_ctx *h = ctx;
    return hook_run(h, h->t->hook_axes_pre, block);
}

static fs_status hook_post(void *ctx, const fs_box *block, void *data)
{
    hook_ctx *h = ctx;
    return h->t->hook_twiddle ? FS_OK : hook_run(h, h->t->hook_axes_post, block);
}

/* The local copies of one execute, before its first message and after its
 * last, in bytes: the send buffer packed (the own block moved or copied)
 * and the receive buffer unpacked; for the in-place strategies the two
 * permutations of the whole buffer, and the received pieces copied from
 * scratch into place (pairwise) or XORed in three steps (xorswap). */
static void copy_bytes(const fs_exchange *x, double *pre, double *post)
{
    const fs_redist *rd = x->args.rd;
    double eb = (double)x->args.elem_bytes;
    double others = (double)(rd->recv_total - rd->recv_elems[rd->self]) * eb;
    if (x->ops->in_place) {
        *pre = (double)x->work_elems * eb;
        *post = *pre + (x->ops->uses_hooks ? others : 1.5 * others);
    } else {
        *pre = (double)rd->send_total * eb;
        *post = fs_exchange_receives_in_place(rd) ? 0 : (double)rd->recv_total * eb;
    }
}

static fs_transform_request request_of(const sim_args *a, int nranks, int hooks)
{
    fs_transform_request rq;
    memset(&rq, 0, sizeof rq);
    rq.ndim = a->ndim;
    memcpy(rq.shape, a->shape, sizeof rq.shape);
    rq.in_dtype = a->dtype;
    snprintf(rq.in_name, sizeof rq.in_name, "/data");
    rq.in_type_name = fs_dtype_name(a->dtype);
    rq.naxes = a->ndim;
    for (int k = 0; k < a->ndim; k++) {
        rq.transform_axis[k] = 1;
        rq.axes[k] = k;
    }
    rq.real_axis = a->ndim - 1;
    rq.real = fs_dtype_is_real(a->dtype);
    rq.prec = fs_dtype_is_single(a->dtype) ? FS_SINGLE : FS_DOUBLE;
    rq.norm = FS_NORM_BACKWARD;
    rq.decomp = a->decomp;
    rq.grid[0] = a->grid[0];
    rq.grid[1] = a->grid[1];
    rq.nranks = nranks;
    rq.hooks = hooks;
    return rq;
}

/* What the strategies of one run share while their plans keep the same
 * boxes: the decomposition, whose collectives over thousands of simulated
 * ranks cost the simulator many seconds, and the components. */
typedef struct sim_shared {
    fs_transform t;                   /* the plan d was made for */
    fs_decomposition *d;
    sim_component comp[FS_MAX_EXCH];  /* per exchange: the ranks simulated */
    sim_links *links;                 /* rank 0: the sampled exchanges' bandwidths */
} sim_shared;

typedef struct sim_run {
    fs_transform t;
    sim_shared *sh;                  /* borrowed */
    fs_exchange *x[FS_MAX_EXCH];
    void *data;
    int64_t elems;                   /* of data */
    hook_ctx hctx;
    fs_block_hooks hooks;
} sim_run;

static void sim_run_free(sim_run *r)
{
    for (int e = 0; e < FS_MAX_EXCH; e++)
        fs_exchange_free(&r->x[e]);
    fs_buffer_free(r->data);
    r->data = NULL;
}

/* Plans whose stages have the same boxes: they differ at most in the
 * block work of the overlapping strategies. Padding bytes that differ
 * only cost a decomposition made anew. */
static int same_boxes(const fs_transform *a, const fs_transform *b)
{
    fs_transform x = *a, y = *b;
    fs_transform *both[2] = {&x, &y};
    for (int i = 0; i < 2; i++) {
        memset(both[i]->ops, 0, sizeof both[i]->ops);
        memset(both[i]->nops, 0, sizeof both[i]->nops);
        memset(both[i]->hook_axes_pre, 0, sizeof both[i]->hook_axes_pre);
        memset(both[i]->hook_axes_post, 0, sizeof both[i]->hook_axes_post);
        both[i]->hooks = both[i]->hook_twiddle = 0;
    }
    return memcmp(&x, &y, sizeof x) == 0;
}

/* Which ranks run each exchange: its groups are the ranks along grid
 * dimension g, numbered by their coordinate along the other. */
static fs_status sim_shared_groups(sim_shared *sh, sim_groups_mode mode, int max_ranks, int nranks)
{
    const fs_transform *t = &sh->t;
    int nexch = t->nstages - 1, group[FS_MAX_EXCH], ngroups[FS_MAX_EXCH];
    for (int e = 0; e < nexch; e++) {
        int g = fs_transform_exchange_dim(t, e);
        group[e] = sh->d->coord[1 - g];
        ngroups[e] = t->grid[1 - g];
        sh->comp[e] = (sim_component){1, nranks, ngroups[e], nranks, ngroups[e]};
    }
    if (mode != SIM_GROUPS_COMPONENT || nexch < 1)
        return FS_OK;
    return sim_components_find(MPI_COMM_WORLD, nexch, group, ngroups, max_ranks, sh->comp, &sh->links);
}

/* sh made for t, or kept when it was made for the same boxes. */
static fs_status sim_shared_update(sim_shared *sh, const fs_transform *t, const sim_args *a, int nranks)
{
    if (sh->d && same_boxes(&sh->t, t))
        return FS_OK;
    fs_decomposition_free(&sh->d);
    sim_links_free(&sh->links);
    sh->t = *t;
    fs_status st = fs_decomposition_new(MPI_COMM_WORLD, t, 0, &sh->d);
    return st == FS_OK ? sim_shared_groups(sh, a->groups, a->max_simulated, nranks) : st;
}

static void sim_shared_free(sim_shared *sh)
{
    fs_decomposition_free(&sh->d);
    sim_links_free(&sh->links);
}

/* Plan as compute.c does: the exchange of dimension g over its
 * communicator, the block hooks on the first exchange only; none where
 * this rank does not run the exchange. */
static fs_status sim_run_plan(sim_run *r, const sim_args *a, const fs_exchange_ops *ops, int nranks)
{
    const fs_transform *t = &r->t;
    fs_status st = sim_shared_update(r->sh, t, a, nranks);
    if (st != FS_OK)
        return st;
    r->hctx = (hook_ctx){t, &a->model};
    r->hooks = (fs_block_hooks){hook_pre, hook_post, &r->hctx, t->from_axis};
    int64_t need = fs_decomposition_max_elems(r->sh->d);
    for (int e = 0; e + 1 < t->nstages && st == FS_OK; e++) {
        if (!r->sh->comp[e].simulated)
            continue;
        fs_exchange_args args = {
            .comm = r->sh->d->dim_comm[fs_transform_exchange_dim(t, e)],
            .rd = r->sh->d->rd[e],
            .elem_bytes = fs_complex_bytes(t->prec),
            .elem_type = t->prec == FS_SINGLE ? MPI_C_FLOAT_COMPLEX : MPI_C_DOUBLE_COMPLEX,
            .params = &a->params,
            .hooks = t->hooks && e == 0 ? &r->hooks : NULL,
        };
        st = fs_exchange_new(ops, &args, &r->x[e]);
        if (st == FS_OK && r->x[e]->work_elems > need)
            need = r->x[e]->work_elems;
    }
    if (st != FS_OK)
        return st;
    r->data = fs_buffer_alloc((size_t)need * fs_complex_bytes(t->prec));
    r->elems = need;
    if (!r->data)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    /* A strategy that receives into a second array trades it for the data
     * buffer, as in fftshard (compute.c): as large as the buffer. */
    for (int e = 0; e < FS_MAX_EXCH && st == FS_OK; e++)
        if (r->x[e])
            st = fs_exchange_reserve_second(r->x[e], need);
    return st;
}

/* Per rank: the sums over the stages, then per stage its exchange, FFT
 * and total seconds and its messages, then how late the latest stage
 * ended past the start of the next; reduced by their maximum over the
 * ranks. */
enum { R_EXCHANGE, R_FFT, R_TOTAL, R_MESSAGES, R_STAGES };
#define R_OVERRUN (R_STAGES + 4 * FS_MAX_STAGES)
#define R_SLOTS (R_OVERRUN + 1)

/* Synced stages start at fixed simulated times, this far apart: every rank
 * sleeps until its stage's start, which aligns them exactly and sends no
 * message (a barrier of 4096 simulated ranks costs the simulator seconds
 * and lets them go at different times). Far longer than any stage. */
#define SYNC_GAP_S 1e4

/* The transform's stages and exchanges in simulated time on this rank.
 * With synced stages every stage starts on every rank together, as the
 * component needs (sim_groups.h); a rank that skips a stage's exchange
 * leaves that stage's slots 0. */
static fs_status sim_run_execute(sim_run *r, const sim_model *m, int synced, double *out)
{
    const fs_transform *t = &r->t;
    memset(out, 0, R_SLOTS * sizeof *out);
    double sync0 = 0;
    if (!synced && MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Barrier failed");
    if (synced) {
        /* Past the planning on every rank: its collectives take microseconds. */
        sync0 = (floor(MPI_Wtime() / SYNC_GAP_S) + 2) * SYNC_GAP_S;
        if (MPI_Bcast(&sync0, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
            return fs_error_set(FS_ERR_RUNTIME, "MPI_Bcast failed");
    }
    double start = MPI_Wtime();
    for (int s = 0; s < t->nstages; s++) {
        if (synced) {
            double at = sync0 + s * SYNC_GAP_S, late = MPI_Wtime() - at;
            if (late > out[R_OVERRUN])
                out[R_OVERRUN] = late;
            sg_actor_sleep_until(at);
            /* A sampled exchange's links, as its stage starts. */
            sim_links_apply(r->sh->links, s + 1 < t->nstages ? s : -1);
            if (s == 0)
                start = MPI_Wtime();
        }
        /* The FFTs' simulated time: a host slower than the calibration
         * core (or a core shared by several ranks) takes longer. */
        double stage_start = MPI_Wtime(), x_s = 0;
        sim_compute(stage_seconds(t, s, r->sh->d->box[s], m));
        double f = MPI_Wtime() - stage_start;
        fs_exchange *x = s + 1 < t->nstages ? r->x[s] : NULL;
        double *slot = out + R_STAGES + 4 * s;
        if (x) {
            double pre, post, t0 = MPI_Wtime(), hooks0 = x->stats.t_hooks_s;
            copy_bytes(x, &pre, &post);
            sim_compute(pre / m->copy_rate);
            fs_status st = fs_exchange_execute(x, &r->data, &r->elems);
            if (st != FS_OK)
                return st;
            sim_compute(post / m->copy_rate);
            /* Block FFTs inside the exchange count as FFT time, as in fftshard. */
            double hooks = x->stats.t_hooks_s - hooks0;
            x_s = MPI_Wtime() - t0 - hooks;
            f += hooks;
            slot[3] = (double)x->stats.messages_sent;
        } else if (s + 1 < t->nstages) {
            continue;   /* not simulated here: the stage's slots stay 0 */
        }
        slot[0] = x_s;
        slot[1] = f;
        slot[2] = MPI_Wtime() - stage_start;
        out[R_EXCHANGE] += x_s;
        out[R_FFT] += f;
        out[R_MESSAGES] += slot[3];
    }
    out[R_TOTAL] = MPI_Wtime() - start;
    return FS_OK;
}

/* The four sums of the line from the slots reduced over the ranks: the
 * slowest rank's sums, or with synced stages the sums of every stage's
 * slowest rank (the stages follow one another). */
static void line_sums(const double *worst, int nstages, sim_groups_mode mode, double *sums)
{
    for (int k = 0; k < 4; k++) {
        sums[k] = mode == SIM_GROUPS_ALL ? worst[k] : 0;
        for (int s = 0; mode != SIM_GROUPS_ALL && s < nstages; s++)
            sums[k] += worst[R_STAGES + 4 * s + (k == R_MESSAGES ? 3 : k)];
    }
}

/* What the times are, for the note column. */
static void mode_note(const sim_run *r, sim_groups_mode mode, char *buf, size_t size)
{
    snprintf(buf, size, "%s", mode == SIM_GROUPS_COMPONENT ? "times of the simulated ranks; stages synced"
                              : mode == SIM_GROUPS_SYNCED ? "stages synced" : "");
    for (int e = 0; e + 1 < r->t.nstages; e++) {
        const sim_component *c = &r->sh->comp[e];
        size_t n = strlen(buf);
        if (c->ranks < c->component_ranks)
            snprintf(buf + n, size - n, "; exchange %d sampled: %d of %d groups in rank 0's component; "
                     "link bandwidths scaled", e + 1, c->groups, c->component_groups);
    }
}

/* strategy,decomp,grid,ranks,shape,dtype,exchange_s,fft_s,total_s,messages,
 * note,simulated: the last the ranks that ran each exchange. */
static void print_line(const sim_args *a, const char *name, int nranks, const sim_run *r,
                       const double *worst, const char *note)
{
    char shape[256], simulated[16 * FS_MAX_EXCH] = "", why[512];
    fs_format_shape(a->ndim, a->shape, shape, sizeof shape);
    const char *decomp = a->decomp == FS_DECOMP_SLAB ? "slab" : a->decomp == FS_DECOMP_PENCIL ? "pencil" : "auto";
    if (r && note[0] == '\0') {
        const fs_transform *t = &r->t;
        double sums[4];
        line_sums(worst, t->nstages, a->groups, sums);
        mode_note(r, a->groups, why, sizeof why);
        for (int e = 0; e + 1 < t->nstages; e++)
            snprintf(simulated + strlen(simulated), sizeof simulated - strlen(simulated), "%s%d",
                     e ? "/" : "", r->sh->comp[e].ranks);
        printf("%s,%s,%dx%d,%d,%s,%s,%.6g,%.6g,%.6g,%.0f,%s,%s\n", name, t->pencil ? "pencil" : "slab",
               t->grid[0], t->grid[1], nranks, shape, fs_dtype_name(a->dtype), sums[R_EXCHANGE],
               sums[R_FFT], sums[R_TOTAL], sums[R_MESSAGES], why, simulated);
    } else {
        printf("%s,%s,,%d,%s,%s,,,,,%s,\n", name, decomp, nranks, shape, fs_dtype_name(a->dtype),
               note);
    }
    fflush(stdout);
}

/* One strategy, every rank; rank 0 prints. A plan that does not fit (a
 * slab on more ranks than the axis has planes) is a line with its reason. */
static fs_status simulate(const sim_args *a, const fs_exchange_ops *ops, sim_shared *sh, int rank,
                          int nranks)
{
    sim_run r;
    memset(&r, 0, sizeof r);
    r.sh = sh;
    fs_transform_request rq = request_of(a, nranks, ops->uses_hooks);
    fs_status st = fs_transform_plan(&rq, &r.t);
    if (st != FS_OK) {
        /* Pure arithmetic: every rank fails alike. */
        if (rank == 0)
            print_line(a, ops->name, nranks, NULL, NULL, fs_error_message());
        fs_error_clear();
        return FS_OK;
    }
    double mine[R_SLOTS], worst[R_SLOTS];
    st = sim_run_plan(&r, a, ops, nranks);
    if (st == FS_OK)
        st = sim_run_execute(&r, &a->model, a->groups != SIM_GROUPS_ALL, mine);
    if (st == FS_OK && MPI_Reduce(mine, worst, R_SLOTS, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Reduce failed");
    if (st == FS_OK && rank == 0 && worst[R_OVERRUN] > 0)
        st = fs_error_set(FS_ERR_RUNTIME, "a stage ran %g s past the start of the next", worst[R_OVERRUN]);
    if (st == FS_OK && rank == 0)
        print_line(a, ops->name, nranks, &r, worst, r.t.nstages > 1 ? "" : "no exchange");
    sim_run_free(&r);
    return st;
}

/* "fft_rate_double 2.1e9" lines (fft_rate_double, fft_rate_single,
 * copy_rate, block_fft_factor, receive_copy_rate, wake_s); '#' starts a
 * comment. */
static int read_calibration(const char *path, sim_model *m)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[256], key[64];
    double value;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, " %63s %lf", key, &value) != 2 || key[0] == '#' || value <= 0)
            continue;
        if (strcmp(key, "fft_rate_double") == 0)
            m->fft_rate[FS_DOUBLE] = value;
        else if (strcmp(key, "fft_rate_single") == 0)
            m->fft_rate[FS_SINGLE] = value;
        else if (strcmp(key, "copy_rate") == 0)
            m->copy_rate = value;
        else if (strcmp(key, "block_fft_factor") == 0)
            m->block_fft_factor = value;
        else if (strcmp(key, "receive_copy_rate") == 0)
            m->receive_copy_rate = value;
        else if (strcmp(key, "wake_s") == 0)
            m->wake_s = value;
    }
    fclose(f);
    return 0;
}

static int parse_dtype(const char *s, fs_dtype *out)
{
    static const fs_dtype all[] = {FS_DTYPE_FLOAT32, FS_DTYPE_FLOAT64, FS_DTYPE_COMPLEX64,
                                   FS_DTYPE_COMPLEX128};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(s, fs_dtype_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    return -1;
}

static int usage(int rank, const char *why)
{
    if (rank == 0)
        fprintf(stderr,
                "fftshard-sim: %s\n"
                "Usage: smpirun -platform FILE -np P fftshard-sim [--shape=SHAPE] [--dtype=TYPE]\n"
                "  [--decomp=slab|pencil|auto] [--grid=AxB] [--strategy=NAME|all] [--packet=BYTES]\n"
                "  [--queues=L] [--seed=N] [--calibration=FILE] [--groups=all|synced|component]\n"
                "  [--max-simulated=RANKS] [--header]\n",
                why);
    return 2;
}

static int parse_args(int argc, char **argv, int rank, sim_args *a, const char **calibration)
{
    static const struct option longopts[] = {
        {"shape", required_argument, 0, 's'},   {"dtype", required_argument, 0, 't'},
        {"decomp", required_argument, 0, 'd'},  {"grid", required_argument, 0, 'g'},
        {"strategy", required_argument, 0, 'x'}, {"packet", required_argument, 0, 'p'},
        {"queues", required_argument, 0, 'q'},  {"seed", required_argument, 0, 'r'},
        {"calibration", required_argument, 0, 'c'}, {"header", no_argument, 0, 'H'},
        {"groups", required_argument, 0, 'G'}, {"max-simulated", required_argument, 0, 'M'},
        {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 's':
            if ((a->ndim = fs_parse_shape(optarg, a->shape)) < 1)
                return usage(rank, "bad --shape");
            break;
        case 't':
            if (parse_dtype(optarg, &a->dtype))
                return usage(rank, "bad --dtype");
            break;
        case 'd':
            if (strcmp(optarg, "slab") == 0)
                a->decomp = FS_DECOMP_SLAB;
            else if (strcmp(optarg, "pencil") == 0)
                a->decomp = FS_DECOMP_PENCIL;
            else if (strcmp(optarg, "auto") == 0)
                a->decomp = FS_DECOMP_AUTO;
            else
                return usage(rank, "bad --decomp");
            break;
        case 'g':
            if (sscanf(optarg, "%dx%d", &a->grid[0], &a->grid[1]) != 2 || a->grid[0] < 1 || a->grid[1] < 1)
                return usage(rank, "bad --grid");
            break;
        case 'x':
            a->strategy = optarg;
            if (strcmp(optarg, "all") != 0 && !fs_exchange_find(optarg))
                return usage(rank, "unknown --strategy");
            break;
        case 'p':
            a->params.packet_bytes = (size_t)strtoull(optarg, NULL, 10);
            break;
        case 'q':
            a->params.queues = atoi(optarg);
            break;
        case 'r':
            a->params.seed = strtoull(optarg, NULL, 10);
            break;
        case 'c':
            *calibration = optarg;
            break;
        case 'H':
            a->header = 1;
            break;
        case 'M':
            if ((a->max_simulated = atoi(optarg)) < 1)
                return usage(rank, "bad --max-simulated");
            break;
        case 'G':
            if (strcmp(optarg, "all") == 0)
                a->groups = SIM_GROUPS_ALL;
            else if (strcmp(optarg, "synced") == 0)
                a->groups = SIM_GROUPS_SYNCED;
            else if (strcmp(optarg, "component") == 0)
                a->groups = SIM_GROUPS_COMPONENT;
            else
                return usage(rank, "bad --groups");
            break;
        default:
            return usage(rank, "bad option");
        }
    }
    if (optind != argc)
        return usage(rank, "unexpected operand");
    return 0;
}

/* The working buffers are SMPI shared memory: every simulated rank maps the
 * same few physical pages, so 4096 ranks of a 1024^3 array fit in this
 * machine's memory. Their contents are garbage, which the exchange code does
 * not mind: it moves bytes and never looks at them, and the simulator models
 * the time of the copies instead of measuring them. */
static void *shared_alloc(size_t bytes)
{
    return SMPI_SHARED_MALLOC(bytes);
}

static void shared_free(void *p)
{
    SMPI_SHARED_FREE(p);
}

static const fs_buffer_allocator shared_buffers = {shared_alloc, shared_free};

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    fs_buffer_use(&shared_buffers);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    sim_args a;
    memset(&a, 0, sizeof a);
    a.ndim = fs_parse_shape("256x256x256", a.shape);
    a.dtype = FS_DTYPE_COMPLEX128;
    a.decomp = FS_DECOMP_AUTO;
    a.strategy = "all";
    /* The strategies wait with MPI's calls; a crowded node's turns are
     * sim_shm.h's wake_s. */
    a.params = (fs_exchange_params){FS_DEFAULT_SEED, FS_DEFAULT_PACKET_BYTES, FS_DEFAULT_QUEUES, 0};
    /* Rough rates of a 2020s core, when no calibration is given. */
    a.model = (sim_model){{2e9, 4e9}, 4e9, 1, 0, 0};
    const char *calibration = NULL;
    int ret = parse_args(argc, argv, rank, &a, &calibration);
    /* One rank reads the calibration; all use it. */
    if (ret == 0 && calibration && rank == 0 && read_calibration(calibration, &a.model)) {
        fprintf(stderr, "fftshard-sim: cannot read %s\n", calibration);
        ret = 1;
    }
    if (MPI_Bcast(&ret, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Bcast(&a.model, (int)sizeof a.model, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        ret = 1;
    sim_shm_set_copy_rate(a.model.receive_copy_rate);
    sim_shm_set_wake(a.model.wake_s);
    if (ret == 0 && rank == 0 && a.header)
        printf("strategy,decomp,grid,ranks,shape,dtype,exchange_s,fft_s,total_s,messages,note,"
               "simulated\n");
    sim_shared shared;
    memset(&shared, 0, sizeof shared);
    for (int i = 0; ret == 0 && fs_exchange_strategies[i]; i++) {
        const fs_exchange_ops *ops = fs_exchange_strategies[i];
        if (strcmp(a.strategy, "all") != 0 && strcmp(a.strategy, ops->name) != 0)
            continue;
        if (simulate(&a, ops, &shared, rank, nranks) != FS_OK) {
            /* The other ranks may be waiting in a collective. */
            fprintf(stderr, "fftshard-sim: rank %d: %s\n", rank, fs_error_message());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    sim_shared_free(&shared);
    MPI_Finalize();
    return ret;
}
