/* pipeline: see pipeline.h. */
#include "config.h"

#include "pipeline.h"

#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libgen.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "atomic.h"
#include "exchange.h"
#include "fft.h"
#include "h5io.h"
#include "layout.h"
#include "prefix.h"
#include "progress.h"
#include "report.h"
#include "shardout.h"
#include "shards.h"
#include "transform.h"
#include "wisdom.h"

/* Everything that depends on the exchange strategy: `auto` plans, times and
 * frees one of these per candidate before keeping the fastest. */
#define FS_MAX_EXCH (FS_MAX_STAGES - 1)

/* Everything that depends on the exchange strategy: `auto` plans, times and
 * frees one of these per candidate before keeping the fastest. */
typedef struct compute {
    const fs_exchange_ops *ops;   /* NULL: no exchange */
    fs_transform t;               /* the plan of the transform for this strategy */
    fs_exchange *x[FS_MAX_EXCH];
    fs_op *op[FS_MAX_STAGES][FS_MAX_OPS];
    fs_fft_blockwise *bw_pre, *bw_post;  /* block work handed to the strategy */
    fs_block_hooks hooks;
    fs_precision prec;
    /* --check: the inverse, planned before the data is read */
    fs_exchange *x_back[FS_MAX_EXCH];
    fs_op *inv[FS_MAX_STAGES][FS_MAX_OPS];
    fs_op *inv_hooks;             /* the inverse of the block work the hooks did */
} compute;

typedef struct run {
    MPI_Comm comm;
    int rank, nranks;
    const fs_options *opts;
    fs_input_info info;
    fs_shard_set shards;        /* --shards: the files (n 0 for one file) */
    fs_shard_output so;         /* --shard-output */
    fs_h5_storage storage;      /* --chunks, --deflate */
    fs_transform t;             /* what is computed (for the chosen strategy) */
    int coord[2];               /* this rank in the P1 x P2 grid */
    MPI_Comm dim_comm[2];       /* the ranks varying along each grid dimension */
    int64_t *prefix[2];         /* [member * nstages + stage]: inclusive counts along dim g */
    fs_box box[FS_MAX_STAGES];  /* this rank's box in every stage */
    fs_redist *rd[FS_MAX_EXCH], *rd_back[FS_MAX_EXCH];
    fs_exchange_params params;
    compute c;
    const char *strategy;       /* the strategy used ("none" without exchange) */
    const char *auto_note;      /* how auto decided, for --verbose */
    fs_wisdom *wisdom;
    void *data;
    int64_t data_elems;         /* complex elements of the buffer */
    char *tmp_path;
    char *report_tmp;           /* the report's temporary, made before any work */
    fs_h5_output *out;
    fs_timers timers;
    fs_progress progress;
    fs_check_result check;
} run;

#define FIRST(r) ((r)->box[0])
#define LAST(r) ((r)->box[(r)->t.nstages - 1])

/* ------------------------------------------------------------------ helpers */

static unsigned plan_flags(const run *r)
{
    return r->opts->plan == FS_PLAN_PATIENT   ? FFTW_PATIENT
           : r->opts->plan == FS_PLAN_MEASURE ? FFTW_MEASURE
                                              : FFTW_ESTIMATE;
}

static size_t cbytes(const run *r)
{
    return fs_complex_bytes(r->t.prec);
}

static void describe(const run *r, char *buf, size_t size)
{
    char shape[256], axes[64] = "";
    fs_format_shape(r->info.ndim, r->info.shape, shape, sizeof shape);
    size_t used = 0;
    for (int k = 0; k < r->info.ndim; k++)
        if (r->t.transform_axis[k])
            used += (size_t)snprintf(axes + used, sizeof axes - used, used ? ",%d" : "%d", k);
    char decomp[96];
    if (r->t.pencil)
        snprintf(decomp, sizeof decomp, "pencil %dx%d", r->t.grid[0], r->t.grid[1]);
    else if (r->t.fold)
        snprintf(decomp, sizeof decomp, "1-D four-step %lldx%lld",
                 (long long)r->t.n2, (long long)r->t.n1);
    else if (!r->t.exchanges)
        snprintf(decomp, sizeof decomp, "slab on axis %d, no exchange", r->t.from_axis);
    else if (r->t.to_axis < 0)
        snprintf(decomp, sizeof decomp, "gathered on rank 0 (1-D)");
    else
        snprintf(decomp, sizeof decomp, "slab, axis %d -> axis %d", r->t.from_axis, r->t.to_axis);
    snprintf(buf, size, "%s %s, %s %s %s axes %s, %d rank%s, %s, %s", shape, r->info.type_name,
             fs_kind_name(r->t.kind), r->t.prec == FS_SINGLE ? "single" : "double",
             r->opts->inverse ? "inverse" : "forward", axes, r->nranks, r->nranks == 1 ? "" : "s",
             decomp, r->t.exchanges ? r->strategy : "no exchange");
}

/* The same path, by name (the file may not exist yet). */
static int same_path(const char *a, const char *b)
{
    char *ra = realpath(a, NULL), *rb = realpath(b, NULL);
    int same = ra && rb && strcmp(ra, rb) == 0;
    free(ra);
    free(rb);
    if (same)
        return 1;
    /* Not both existing: compare the directories and the names. */
    char *da = strdup(a), *db = strdup(b);
    const char *na = strrchr(a, '/') ? strrchr(a, '/') + 1 : a;
    const char *nb = strrchr(b, '/') ? strrchr(b, '/') + 1 : b;
    if (da && db) {
        char *sa = strrchr(da, '/'), *sb = strrchr(db, '/');
        if (sa)
            *sa = '\0';
        if (sb)
            *sb = '\0';
        char *rda = realpath(sa ? (da[0] ? da : "/") : ".", NULL);
        char *rdb = realpath(sb ? (db[0] ? db : "/") : ".", NULL);
        same = rda && rdb && strcmp(rda, rdb) == 0 && strcmp(na, nb) == 0;
        free(rda);
        free(rdb);
    }
    free(da);
    free(db);
    return same;
}


/* ------------------------------------------------------------------ stages */

static fs_status stage_probe(run *r)
{
    fs_status st = FS_OK;
    if (r->rank == 0)
        st = fs_input_probe(r->opts->shards, r->opts->input_file, r->opts->input_dataset, &r->info,
                            &r->shards);
    st = fs_error_agree(r->comm, st);
    if (st != FS_OK)
        return st;
    if (MPI_Bcast(&r->info, (int)sizeof r->info, MPI_BYTE, 0, r->comm) != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Bcast failed");
    if (r->opts->shards && (st = fs_shards_bcast(r->comm, &r->shards)) != FS_OK)
        return st;
    /* Every rank judges the options against the input the same way: rank 0
     * speaks. The strategy does not change what is valid. */
    fs_transform t;
    st = fs_transform_plan(r->opts, &r->info, r->nranks, 0, &t);
    return fs_error_agree(r->comm, r->rank == 0 ? st : FS_OK);
}

static fs_status stage_output(run *r)
{
    const fs_options *o = r->opts;
    if (o->report_file) {
        /* Every rank judges the same names the same way: rank 0 speaks. */
        fs_status st = FS_OK;
        if (same_path(o->report_file, o->output_file) || same_path(o->report_file, o->input_file))
            st = fs_error_set(FS_ERR_USAGE, "--report=%s: is the %s file", o->report_file,
                              same_path(o->report_file, o->output_file) ? "output" : "input");
        if ((st = fs_error_agree(r->comm, r->rank == 0 ? st : FS_OK)) != FS_OK)
            return st;
    }
    fs_status st = fs_atomic_begin(r->comm, o->output_file, o->input_file, o->force, &r->tmp_path);
    /* A report is a log: it replaces an earlier one without --force. Its
     * temporary exists from now on, so an unwritable report path fails the
     * run before any work. */
    if (st == FS_OK && o->report_file)
        st = fs_atomic_begin(r->comm, o->report_file, o->input_file, 1, &r->report_tmp);
    if (st == FS_OK && o->shard_output)
        st = fs_shard_output_begin(r->comm, o->output_file, &r->so);
    return st;
}


/* The block hooks of an overlapping strategy. */
static fs_status hook_pre(void *ctx, const fs_box *block, void *data)
{
    compute *c = ctx;
    if (c->t.hook_twiddle) {
        fs_op_spec tw;
        memset(&tw, 0, sizeof tw);
        tw.kind = FS_OP_TWIDDLE;
        tw.sign = c->t.sign;
        tw.twiddle_n = c->t.in_shape[0];
        fs_op *op = NULL;
        fs_status st = fs_op_new(&tw, block, c->prec, data, FFTW_ESTIMATE, &op);
        if (st == FS_OK)
            fs_op_execute(op);
        fs_op_free(&op);
        return st;
    }
    if (fs_fft_blockwise_execute(c->bw_pre, block, data) != 0)
        return fs_error_set(FS_ERR_RUNTIME, "FFTW could not plan a block transform");
    return FS_OK;
}

static fs_status hook_post(void *ctx, const fs_box *block, void *data)
{
    compute *c = ctx;
    if (c->bw_post && fs_fft_blockwise_execute(c->bw_post, block, data) != 0)
        return fs_error_set(FS_ERR_RUNTIME, "FFTW could not plan a block transform");
    return FS_OK;
}

static void compute_free(compute *c)
{
    for (int st = 0; st < FS_MAX_STAGES; st++)
        for (int i = 0; i < FS_MAX_OPS; i++) {
            fs_op_free(&c->op[st][i]);
            fs_op_free(&c->inv[st][i]);
        }
    fs_op_free(&c->inv_hooks);
    fs_fft_blockwise_free(&c->bw_pre);
    fs_fft_blockwise_free(&c->bw_post);
    for (int e = 0; e < FS_MAX_EXCH; e++) {
        fs_exchange_free(&c->x[e]);
        fs_exchange_free(&c->x_back[e]);
    }
    memset(c, 0, sizeof *c);
}

/* Make sure the data buffer holds n complex elements (contents may be lost). */
static fs_status reserve(run *r, int64_t n)
{
    if (n <= r->data_elems && r->data)
        return FS_OK;
    fs_buffer_free(r->data);
    r->data_elems = n > 0 ? n : 1;
    r->data = fs_buffer_alloc((size_t)r->data_elems * cbytes(r));
    if (!r->data)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory: %lld bytes for the local array",
                            (long long)r->data_elems * (long long)cbytes(r));
    return FS_OK;
}

static void free_layout(run *r)
{
    for (int e = 0; e < FS_MAX_EXCH; e++) {
        fs_redist_free(&r->rd[e]);
        fs_redist_free(&r->rd_back[e]);
    }
    for (int g = 0; g < 2; g++) {
        free(r->prefix[g]);
        r->prefix[g] = NULL;
        if (r->dim_comm[g] != MPI_COMM_NULL && r->dim_comm[g] != 0)
            MPI_Comm_free(&r->dim_comm[g]);
        r->dim_comm[g] = MPI_COMM_NULL;
    }
}

/* The box of member m (coordinate along dim g) of this rank's dim-g
 * communicator in stage s: this rank's box with the dim-g axis moved. */
static fs_box member_box(const run *r, int s, int g, int m)
{
    fs_box b = r->box[s];
    int a = r->t.split[s][g], ns = r->t.nstages;
    const int64_t *p = r->prefix[g];
    int64_t incl = p[(size_t)m * (size_t)ns + (size_t)s];
    int64_t start = m ? p[(size_t)(m - 1) * (size_t)ns + (size_t)s] : 0;
    if (a >= 0) {
        b.start[a] = start;
        b.count[a] = incl - start;
    } else if (a == FS_GATHER) {
        /* everything on member 0, nothing elsewhere */
        b = fs_box_full(r->t.ndim, r->t.shape);
        if (incl - start == 0)
            for (int k = 0; k < b.ndim; k++)
                b.count[k] = 0;
    }
    return b;
}

/* Grid communicators, every rank's boxes and the redistributions. Each rank
 * computes only its own shares; the starts of all come from one parallel
 * prefix broadcast per grid dimension, inside the ranks along it: the
 * hyperslab offsets of the read, the exchanges and the write. */
static fs_status make_boxes(run *r)
{
    const fs_transform *t = &r->t;
    int ns = t->nstages;
    free_layout(r);
    r->coord[0] = r->rank / t->grid[1];
    r->coord[1] = r->rank % t->grid[1];
    if (MPI_Comm_split(r->comm, r->coord[1], r->coord[0], &r->dim_comm[0]) != MPI_SUCCESS ||
        MPI_Comm_split(r->comm, r->coord[0], r->coord[1], &r->dim_comm[1]) != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_split failed");
    for (int g = 0; g < 2; g++) {
        MPI_Comm_set_errhandler(r->dim_comm[g], MPI_ERRORS_RETURN);
        int64_t share[FS_MAX_STAGES] = {0}, ignored;
        for (int s = 0; s < ns; s++) {
            int a = t->split[s][g];
            if (a >= 0)
                fs_split_block(t->shape[a], t->grid[g], r->coord[g], &share[s], &ignored);
            else if (a == FS_GATHER)
                share[s] = r->coord[g] == 0 ? t->shape[0] : 0;
        }
        r->prefix[g] = malloc((size_t)t->grid[g] * (size_t)ns * sizeof(int64_t));
        if (!r->prefix[g])
            return fs_error_set(FS_ERR_RUNTIME, "out of memory");
        fs_status st = fs_prefix_broadcast_int64(r->dim_comm[g], share, ns, FS_PREFIX_SUM, r->prefix[g]);
        if (st != FS_OK)
            return st;
    }
    for (int s = 0; s < ns; s++) {
        r->box[s] = fs_box_full(t->ndim, t->shape);
        for (int g = 0; g < 2; g++)
            r->box[s] = member_box(r, s, g, r->coord[g]);
    }
    for (int e = 0; e + 1 < ns; e++) {
        int g = fs_transform_exchange_dim(t, e), n = t->grid[g];
        fs_box *from = calloc((size_t)n, sizeof *from), *to = calloc((size_t)n, sizeof *to);
        if (!from || !to) {
            free(from);
            free(to);
            return fs_error_set(FS_ERR_RUNTIME, "out of memory");
        }
        for (int m = 0; m < n; m++) {
            from[m] = member_box(r, e, g, m);
            to[m] = member_box(r, e + 1, g, m);
        }
        r->rd[e] = fs_redist_new(n, r->coord[g], from, to);
        if (r->opts->check)
            r->rd_back[e] = fs_redist_new(n, r->coord[g], to, from);
        free(from);
        free(to);
        if (!r->rd[e] || (r->opts->check && !r->rd_back[e]))
            return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    return FS_OK;
}

/* Plan a stage's operations on its box (the transpose changes the box). */
static fs_status plan_ops(run *r, const fs_op_spec *specs, int n, fs_box box, fs_op **ops,
                          fs_op **inverse)
{
    unsigned flags = plan_flags(r);
    for (int i = 0; i < n; i++) {
        fs_status st = fs_op_new(&specs[i], &box, r->t.prec, r->data, flags, &ops[i]);
        if (st == FS_OK && inverse)
            st = fs_op_inverse(ops[i], r->data, flags, &inverse[i]);
        if (st != FS_OK)
            return st;
        if (specs[i].kind == FS_OP_TRANSPOSE) {
            int64_t c0 = box.count[0];
            box.count[0] = box.count[1];
            box.count[1] = c0;
        }
    }
    return FS_OK;
}

/* Plan the transform with strategy ops (NULL: no exchange) into c: the
 * decomposition, the exchanges, the operations, growing the buffer as needed. */
static fs_status compute_plan(run *r, const fs_exchange_ops *ops, compute *c)
{
    memset(c, 0, sizeof *c);
    c->ops = ops;
    fs_status st = fs_transform_plan(r->opts, &r->info, r->nranks, ops && ops->uses_hooks, &c->t);
    if (st != FS_OK)
        return st;
    r->t = c->t;
    c->prec = c->t.prec;
    if ((st = make_boxes(r)) != FS_OK)
        return st;
    int ns = c->t.nstages;
    int64_t need = 1;
    for (int s = 0; s < ns; s++)
        need = fs_box_elems(&r->box[s]) > need ? fs_box_elems(&r->box[s]) : need;
    if (c->t.hooks && !c->t.hook_twiddle) {
        st = fs_fft_blockwise_new(c->t.hook_axes_pre, c->t.sign, c->prec, &c->bw_pre);
        if (st == FS_OK)
            st = fs_fft_blockwise_new(c->t.hook_axes_post, c->t.sign, c->prec, &c->bw_post);
    }
    /* Pieces are cut along the axis split before the exchange. */
    if (c->t.hooks)
        c->hooks = (fs_block_hooks){hook_pre, hook_post, c, c->t.from_axis};
    for (int e = 0; e + 1 < ns && ops && st == FS_OK; e++) {
        int g = fs_transform_exchange_dim(&c->t, e);
        fs_exchange_args args = {
            .comm = r->dim_comm[g],
            .rd = r->rd[e],
            .elem_bytes = cbytes(r),
            .elem_type = c->prec == FS_SINGLE ? MPI_C_FLOAT_COMPLEX : MPI_C_DOUBLE_COMPLEX,
            .params = &r->params,
            .hooks = c->t.hooks && e == 0 ? &c->hooks : NULL,
        };
        st = fs_exchange_new(ops, &args, &c->x[e]);
        if (st == FS_OK && c->x[e]->work_elems > need)
            need = c->x[e]->work_elems;
        if (st == FS_OK && r->rd_back[e]) {
            args.rd = r->rd_back[e];
            args.hooks = NULL;
            st = fs_exchange_new(ops, &args, &c->x_back[e]);
            if (st == FS_OK && c->x_back[e]->work_elems > need)
                need = c->x_back[e]->work_elems;
        }
    }
    if (st == FS_OK)
        st = reserve(r, need);
    for (int s = 0; s < ns && st == FS_OK; s++)
        st = plan_ops(r, c->t.ops[s], c->t.nops[s], r->box[s], c->op[s],
                      r->opts->check ? c->inv[s] : NULL);
    if (st == FS_OK && r->opts->check && c->hooks.ctx) {
        /* Undone on the first stage, where those axes are whole. */
        fs_op_spec inv;
        memset(&inv, 0, sizeof inv);
        inv.sign = -c->t.sign;
        if (c->t.hook_twiddle) {
            inv.kind = FS_OP_TWIDDLE;
            inv.twiddle_n = c->t.in_shape[0];
        } else {
            inv.kind = FS_OP_C2C;
            for (int k = 0; k < c->t.ndim; k++)
                inv.axes[k] = c->t.hook_axes_pre[k] || c->t.hook_axes_post[k];
        }
        st = fs_op_new(&inv, &r->box[0], c->prec, r->data, plan_flags(r), &c->inv_hooks);
    }
    if (st != FS_OK)
        compute_free(c);
    return st;
}

static void run_ops(run *r, fs_op **ops, int n)
{
    double flops = 0;
    for (int i = 0; i < n; i++)
        flops += fs_op_flops(ops[i]);
    fs_progress_begin(&r->progress, "fft", flops, "flop");
    for (int i = 0; i < n; i++)
        fs_op_execute(ops[i]);
    fs_progress_end(&r->progress);
}

/* The transform itself, on the data buffer: stage by stage, from the first
 * layout after the read to the last before the write. */
static fs_status compute_run(run *r, compute *c)
{
    fs_status st = FS_OK;
    for (int s = 0; s < c->t.nstages && st == FS_OK; s++) {
        fs_timer_start(&r->timers, FS_PHASE_FFT);
        run_ops(r, c->op[s], c->t.nops[s]);
        fs_timer_stop(&r->timers, FS_PHASE_FFT);
        fs_exchange *x = s + 1 < c->t.nstages ? c->x[s] : NULL;
        if (!x)
            continue;
        fs_timer_start(&r->timers, FS_PHASE_EXCHANGE);
        const fs_redist *rd = r->rd[s];
        fs_progress_begin(&r->progress, "exchange",
                          (double)(rd->send_total - rd->send_elems[rd->self]) * (double)cbytes(r), "B");
        double hooks_before = x->stats.t_hooks_s;
        st = fs_exchange_execute(x, r->data);
        fs_progress_end(&r->progress);
        fs_timer_stop(&r->timers, FS_PHASE_EXCHANGE);
        /* Block FFTs run inside the exchange count as fft time. */
        double hooks = x->stats.t_hooks_s - hooks_before;
        r->timers.t_s[FS_PHASE_EXCHANGE] -= hooks;
        r->timers.t_s[FS_PHASE_FFT] += hooks;
        if ((c->bw_pre && fs_fft_blockwise_failed(c->bw_pre)) ||
            (c->bw_post && fs_fft_blockwise_failed(c->bw_post)))
            st = fs_error_set(FS_ERR_RUNTIME, "FFTW could not plan a block transform");
    }
    return st;
}

/* Exchange figures of the run, summed over its exchanges. */
static fs_exchange_stats exchange_totals(const compute *c)
{
    fs_exchange_stats t;
    memset(&t, 0, sizeof t);
    for (int e = 0; e < FS_MAX_EXCH; e++) {
        const fs_exchange *x = c->x[e];
        if (!x)
            continue;
        t.bytes_sent += x->stats.bytes_sent;
        t.bytes_received += x->stats.bytes_received;
        t.messages_sent += x->stats.messages_sent;
        t.wire_bytes_sent += x->stats.wire_bytes_sent;
        t.t_pack_s += x->stats.t_pack_s;
        t.t_comm_s += x->stats.t_comm_s;
        t.t_unpack_s += x->stats.t_unpack_s;
        t.t_hooks_s += x->stats.t_hooks_s;
        t.t_hooks_overlapped_s += x->stats.t_hooks_overlapped_s;
    }
    return t;
}

/* The key under which `auto` remembers its choice in the wisdom file. */
static void auto_key(const run *r, char *key, size_t size)
{
    char shape[256], axes[64] = "";
    fs_format_shape(r->info.ndim, r->info.shape, shape, sizeof shape);
    size_t used = 0;
    for (int k = 0; k < r->info.ndim; k++)
        if (r->t.transform_axis[k])
            used += (size_t)snprintf(axes + used, sizeof axes - used, used ? ",%d" : "%d", k);
    snprintf(key, size, "%s/%s/%s/axes=%s/ranks=%d/%s/%s%dx%d/packet=%zu/queues=%d",
             fs_kind_name(r->t.kind), r->t.prec == FS_SINGLE ? "single" : "double", shape, axes,
             r->nranks, r->opts->inverse ? "inverse" : "forward", r->t.pencil ? "pencil" : "slab",
             r->t.grid[0], r->t.grid[1], r->params.packet_bytes, r->params.queues);
}

/* --transpose=auto: run the transform once with each strategy on the real
 * sizes (on a zeroed buffer, before the input is read), and keep the
 * strategy whose slowest rank was fastest. The wisdom file remembers it. */
static fs_status choose_strategy(run *r, const fs_exchange_ops **chosen)
{
    char key[512];
    auto_key(r, key, sizeof key);
    const char *known = fs_wisdom_lookup(r->wisdom, key);
    if (known && fs_exchange_find(known)) {
        *chosen = fs_exchange_find(known);
        r->auto_note = "auto: taken from the wisdom file";
        return FS_OK;
    }
    double best = 0;
    *chosen = NULL;
    fs_timers saved = r->timers;
    fs_progress quiet = r->progress;
    r->progress.enabled = 0;
    for (int i = 0; fs_exchange_strategies[i]; i++) {
        compute c;
        fs_status st = fs_error_agree(r->comm, compute_plan(r, fs_exchange_strategies[i], &c));
        if (st != FS_OK)
            return st;
        memset(r->data, 0, (size_t)r->data_elems * cbytes(r));
        MPI_Barrier(r->comm);
        double t0 = MPI_Wtime();
        st = compute_run(r, &c);
        double t = MPI_Wtime() - t0, slowest = t;
        compute_free(&c);
        if ((st = fs_error_agree(r->comm, st)) != FS_OK)
            return st;
        MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, r->comm);
        if (r->opts->verbose && r->rank == 0)
            fs_note("auto: %s takes %.4f s", fs_exchange_strategies[i]->name, slowest);
        if (!*chosen || slowest < best) {
            best = slowest;
            *chosen = fs_exchange_strategies[i];
        }
    }
    /* The trial is planning, not the run's fft and exchange time. */
    r->timers = saved;
    r->progress = quiet;
    r->auto_note = "auto: timed every strategy on these sizes";
    return fs_wisdom_set(r->wisdom, key, (*chosen)->name, best);
}

static fs_status stage_plan(run *r)
{
    r->params = (fs_exchange_params){
        .seed = r->opts->seed,
        .packet_bytes = r->opts->packet_bytes,
        .queues = r->opts->queues,
    };
    /* A first plan without strategy says whether there is an exchange. */
    fs_status st = fs_transform_plan(r->opts, &r->info, r->nranks, 0, &r->t);
    if (st != FS_OK)
        return st;
    const fs_exchange_ops *ops = NULL;
    r->strategy = "none";
    if (r->t.exchanges) {
        if (strcmp(r->opts->transpose, "auto") == 0) {
            if ((st = make_boxes(r)) != FS_OK || (st = reserve(r, 1)) != FS_OK ||
                (st = choose_strategy(r, &ops)) != FS_OK)
                return st;
        } else {
            ops = fs_exchange_find(r->opts->transpose);
        }
        r->strategy = ops->name;
    }
    return compute_plan(r, ops, &r->c);
}

static const fs_shard_set *input_shards(const run *r)
{
    return r->info.nshards ? &r->shards : NULL;
}

/* Zero the imaginary parts the read left alone (real input in complex). */
static void zero_imag(run *r, const fs_io_map *m)
{
    if (m->mem_stride_last != 2)
        return;
    int64_t n = fs_box_elems(&FIRST(r));
    if (r->t.prec == FS_SINGLE)
        for (int64_t i = 0; i < n; i++)
            ((float *)r->data)[2 * i + 1] = 0;
    else
        for (int64_t i = 0; i < n; i++)
            ((double *)r->data)[2 * i + 1] = 0;
}

static fs_status stage_read(run *r)
{
    fs_io_map m = fs_transform_read_map(&r->t, &r->info, &FIRST(r));
    /* Slots past the read (padding, the missing half of a c2r) start as zeros. */
    memset(r->data, 0, (size_t)r->data_elems * cbytes(r));
    fs_progress_begin(&r->progress, "read", (double)fs_box_elems(&m.file_box) * (double)cbytes(r), "B");
    fs_status st = fs_h5_read(r->comm, r->opts->input_file, &r->info, input_shards(r), &m, r->data,
                              fs_progress_callback, &r->progress);
    fs_progress_end(&r->progress);
    zero_imag(r, &m);
    return st;
}

/* The attributes of an output dataset (collective over its file's ranks). */
static fs_status write_attributes(const run *r, fs_h5_output *out)
{
    const fs_options *o = r->opts;
    const fs_input_info *in = &r->info;
    char input[2 * FS_PATH_MAX + 2];
    snprintf(input, sizeof input, "%s:%s", o->input_file, in->dataset);
    int64_t axes[FS_MAX_DIMS], ranks = r->nranks, last_size = 0;
    int naxes = 0;
    for (int k = 0; k < in->ndim; k++)
        if (r->t.transform_axis[k])
            axes[naxes++] = k;
    /* The real length along the halved axis (the last transformed one for
     * c2c), which an inverse --real run needs. */
    if (r->t.real_axis >= 0)
        last_size = r->t.real_len;
    else if (naxes)
        last_size = in->shape[axes[naxes - 1]];
    struct { const char *name, *value; } strings[] = {
        {"fftshard_version", PACKAGE_VERSION},
        {"transform", fs_kind_name(r->t.kind)},
        {"direction", o->inverse ? "inverse" : "forward"},
        {"norm", fs_norm_name(o->norm)},
        {"input", input},
        {"transpose", r->strategy},
        {"precision", r->t.prec == FS_SINGLE ? "single" : "double"},
    };
    fs_status st = FS_OK;
    for (size_t i = 0; i < sizeof strings / sizeof strings[0] && st == FS_OK; i++)
        st = fs_h5_output_attr_string(out, strings[i].name, strings[i].value);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(out, "axes", naxes, axes);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(out, "input_shape", in->ndim, in->shape);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(out, "last_size", -1, &last_size);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(out, "ranks", -1, &ranks);
    return st;
}

static const char *output_dataset(const run *r)
{
    return r->opts->output_dataset ? r->opts->output_dataset : r->info.dataset;
}

/* Create the output: one file, or this rank's shard file. */
static fs_status create_output(run *r)
{
    fs_status st = FS_OK;
    if (!r->opts->shard_output)
        st = fs_h5_output_new(r->comm, r->tmp_path, output_dataset(r), r->t.out_ndim,
                              r->t.out_shape, r->t.out_type, &r->storage, &r->out);
    else if (r->so.file >= 0) /* else this rank owns nothing of the output */
        st = fs_h5_output_new(r->so.comm, r->so.path, output_dataset(r), r->t.out_ndim,
                              r->so.box.count, r->t.out_type, &r->storage, &r->out);
    if (r->out)
        fs_h5_output_set_name(r->out, r->opts->output_file);
    return st;
}

/* Rank 0, before anything is written: a write that fails part way through
 * a collective call can leave the other ranks waiting in it for ever, so
 * free space and the file size limit are checked first. Compressed output
 * is counted uncompressed: FFT output hardly compresses. */
static fs_status check_space(const run *r)
{
    if (r->rank != 0)
        return FS_OK;
    double eb = r->t.out_type == FS_DTYPE_COMPLEX128 ? 16 : r->t.out_type == FS_DTYPE_FLOAT32 ? 4 : 8;
    double need = eb, largest_file;
    for (int k = 0; k < r->t.out_ndim; k++)
        need *= (double)r->t.out_shape[k];
    largest_file = need;
    if (r->opts->shard_output) {
        largest_file = 0;
        for (int64_t i = 0; i < r->so.sources.n; i++)
            if ((double)fs_box_elems(&r->so.sources.boxes[i]) * eb > largest_file)
                largest_file = (double)fs_box_elems(&r->so.sources.boxes[i]) * eb;
    }
    need += 65536; /* HDF5's metadata */
    largest_file += 65536;
    const char *out = r->opts->output_file;
    char *copy = strdup(out);
    const char *dir = copy ? dirname(copy) : ".";
    struct statvfs vfs;
    struct rlimit lim;
    fs_status st = FS_OK;
    if (statvfs(dir, &vfs) == 0 && (double)vfs.f_bavail * (double)vfs.f_frsize < need)
        st = fs_error_set(FS_ERR_RUNTIME, "%s: the result needs %.1f MiB but %s has %.1f MiB free "
                          "(disk full)", out, need / 1048576.0, dir,
                          (double)vfs.f_bavail * (double)vfs.f_frsize / 1048576.0);
    else if (getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
             (double)lim.rlim_cur < largest_file)
        st = fs_error_set(FS_ERR_RUNTIME, "%s: the result needs files of %.1f MiB but the file size "
                          "limit (ulimit -f) is %.1f MiB", out, largest_file / 1048576.0,
                          (double)lim.rlim_cur / 1048576.0);
    free(copy);
    return st;
}

static fs_status stage_write(run *r)
{
    fs_io_map m = fs_transform_write_map(&r->t, &LAST(r));
    fs_progress_begin(&r->progress, "write", (double)fs_box_elems(&m.file_box) * (double)cbytes(r), "B");
    fs_status st = FS_OK;
    if (r->opts->shard_output) {
        /* The file holds the group's box: positions relative to its start. */
        for (int k = 0; k < m.file_box.ndim && !r->t.fold; k++)
            m.file_box.start[k] -= r->so.box.start[k];
    }
    if (r->out) {
        st = fs_h5_output_write(r->out, &m, r->data, fs_progress_callback, &r->progress);
        if (st == FS_OK)
            st = write_attributes(r, r->out);
        if (st == FS_OK && r->opts->shard_output)
            st = fs_h5_output_attr_int64s(r->out, "offset", r->t.out_ndim, r->so.box.start);
    }
    fs_progress_end(&r->progress);
    return st;
}

/* Rank 0, sharded output: the master, then everything into place. */
static fs_status commit_shards(run *r)
{
    fs_h5_output *master = NULL;
    fs_status st = fs_h5_output_new_virtual(r->tmp_path, output_dataset(r), r->t.out_ndim,
                                            r->t.out_shape, r->t.out_type, &r->so.sources, &master);
    if (st == FS_OK)
        st = write_attributes(r, master);
    if (st == FS_OK) {
        int64_t n = r->so.nfiles;
        st = fs_h5_output_attr_int64s(master, "shards", -1, &n);
    }
    fs_status closed = fs_h5_output_close(&master);
    st = st != FS_OK ? st : closed;
    if (st != FS_OK)
        return st;
    return fs_shard_output_commit(&r->so, r->tmp_path, r->opts->output_file, output_dataset(r));
}

/* Rank 0 (fs_atomic_commit_collective): the result into place. */
static fs_status commit_output(void *arg)
{
    run *r = arg;
    return r->opts->shard_output ? commit_shards(r) : fs_atomic_commit(r->tmp_path, r->opts->output_file);
}

/* --chunks and --deflate: the output's storage. */
static fs_status choose_storage(run *r)
{
    const fs_options *o = r->opts;
    fs_h5_storage *sg = &r->storage;
    memset(sg, 0, sizeof *sg);
    if (!o->chunks_ndim && !o->deflate)
        return FS_OK;
    int nd = r->t.out_ndim;
    double eb = r->t.out_type == FS_DTYPE_COMPLEX128 ? 16 : r->t.out_type == FS_DTYPE_FLOAT32 ? 4 : 8;
    if (o->chunks_ndim) {
        if (o->chunks_ndim != nd)
            return fs_error_set(FS_ERR_USAGE, "--chunks: %d lengths for a %d-D output", o->chunks_ndim, nd);
        double bytes = eb;
        for (int k = 0; k < nd; k++)
            bytes *= (double)(o->chunks[k] < r->t.out_shape[k] ? o->chunks[k] : r->t.out_shape[k]);
        if (bytes >= 4294967296.0)
            return fs_error_set(FS_ERR_USAGE, "--chunks: a chunk of %.0f bytes; HDF5 allows less "
                                "than 4 GiB", bytes);
        memcpy(sg->chunk, o->chunks, sizeof sg->chunk);
    } else {
        /* About 1 MiB per chunk: halve the longest axis until it fits. */
        memcpy(sg->chunk, r->t.out_shape, sizeof sg->chunk);
        for (;;) {
            double bytes = eb;
            int longest = 0;
            for (int k = 0; k < nd; k++) {
                bytes *= (double)sg->chunk[k];
                if (sg->chunk[k] > sg->chunk[longest])
                    longest = k;
            }
            if (bytes <= 1048576.0 || sg->chunk[longest] == 1)
                break;
            sg->chunk[longest] = (sg->chunk[longest] + 1) / 2;
        }
    }
    sg->chunk_ndim = nd;
    sg->deflate = o->deflate;
    return FS_OK;
}

/* ------------------------------------------------------------------ --check */

/* Element e of a map's memory side as a complex number (real maps: imag 0). */
static void map_element(const run *r, const fs_io_map *m, const void *base, int64_t offset,
                        double *re, double *im)
{
    int single = r->t.prec == FS_SINGLE;
    int complex_mem = m->mem_type == FS_DTYPE_COMPLEX64 || m->mem_type == FS_DTYPE_COMPLEX128;
    if (complex_mem) {
        *re = single ? ((const float *)base)[2 * offset] : ((const double *)base)[2 * offset];
        *im = single ? ((const float *)base)[2 * offset + 1] : ((const double *)base)[2 * offset + 1];
    } else {
        *re = single ? ((const float *)base)[offset] : ((const double *)base)[offset];
        *im = 0;
    }
}

/* Visit every element a map selects: fn(memory offset, global coordinates). */
typedef void (*visit_fn)(void *ctx, int64_t mem_offset, const int64_t *at);
static void map_visit(const fs_io_map *m, int64_t first_row, int64_t rows, visit_fn fn, void *ctx)
{
    const fs_box *b = &m->file_box;
    int nd = b->ndim;
    if (fs_box_elems(b) == 0 || rows <= 0)
        return;
    int64_t stride[FS_LAYOUT_MAX_DIMS], s = 1;
    for (int k = nd - 1; k >= 0; k--) {
        stride[k] = s;
        s *= m->mem_dims[k];
    }
    int64_t idx[FS_LAYOUT_MAX_DIMS] = {0}, at[FS_LAYOUT_MAX_DIMS];
    idx[0] = first_row;
    for (;;) {
        int64_t off = 0;
        for (int k = 0; k < nd; k++) {
            int64_t pos = m->mem_start[k] + (k == nd - 1 ? idx[k] * m->mem_stride_last : idx[k]);
            off += pos * stride[k];
            at[k] = b->start[k] + idx[k];
        }
        int keep = 1;
        if (m->fold_inner > 0 && m->fold_limit > 0)
            keep = at[0] * m->fold_inner + at[1] < m->fold_limit;
        if (keep)
            fn(ctx, off, at);
        int k = nd - 1;
        while (k >= 0 && ++idx[k] == (k == 0 ? first_row + rows : b->count[k])) {
            if (k == 0)
                return;
            idx[k--] = 0;
        }
    }
}

/* The weight of an element in Parseval's sum: a half spectrum counts its
 * interior bins twice. */
static double half_weight(const run *r, const int64_t *at, int folded)
{
    int64_t k, n = r->t.real_len;
    if (folded)
        k = at[0] * r->t.n2 + at[1];
    else
        k = at[r->t.real_axis];
    return k > 0 && 2 * k < n ? 2.0 : 1.0;
}

typedef struct sum_ctx {
    const run *r;
    const fs_io_map *m;
    const void *base;
    int weighted, folded;
    double sum;
} sum_ctx;

static void add_square(void *ctx, int64_t off, const int64_t *at)
{
    sum_ctx *s = ctx;
    double re, im;
    map_element(s->r, s->m, s->base, off, &re, &im);
    s->sum += (re * re + im * im) * (s->weighted ? half_weight(s->r, at, s->folded) : 1.0);
}

typedef struct cmp_ctx {
    const run *r;
    const fs_io_map *m;
    const void *expect, *got;  /* expect: the piece buffer, rows from 0 */
    int64_t row_shift;         /* memory rows of the piece start here in `got` */
    int64_t row_elems;         /* memory elements per row */
    int weighted, folded;
    double factor;             /* the round trip multiplies by the point count */
    double max_err, max_ref, sum;
} cmp_ctx;

static void compare(void *ctx, int64_t off, const int64_t *at)
{
    cmp_ctx *c = ctx;
    double a, ai, b, bi;
    map_element(c->r, c->m, c->expect, off - c->row_shift * c->row_elems, &a, &ai);
    map_element(c->r, c->m, c->got, off, &b, &bi);
    b *= c->factor;
    bi *= c->factor;
    double err = hypot(a - b, ai - bi), ref = hypot(a, ai);
    c->max_err = err > c->max_err ? err : c->max_err;
    c->max_ref = ref > c->max_ref ? ref : c->max_ref;
    c->sum += ref * ref * (c->weighted ? half_weight(c->r, at, c->folded) : 1.0);
}

/* --check: Parseval's identity between the input and the result, and the
 * inverse transform of the result compared with the input read again. */
static fs_status stage_check(run *r)
{
    compute *c = &r->c;
    const fs_transform *t = &r->t;
    fs_check_result *res = &r->check;
    res->done = 1;
    res->tolerance = r->opts->check_tolerance > 0 ? r->opts->check_tolerance
                     : t->prec == FS_SINGLE       ? 1e-3
                                                  : 1e-9;
    /* Parseval on the result, while it is still there. */
    fs_io_map wm = fs_transform_write_map(t, &LAST(r));
    sum_ctx out = {r, &wm, r->data, t->kind == FS_R2C, t->fold, 0};
    map_visit(&wm, 0, wm.file_box.count[0], add_square, &out);

    /* The inverse: the same operations undone in reverse order. */
    fs_status st = FS_OK;
    for (int sg = t->nstages - 1; sg >= 0 && st == FS_OK; sg--) {
        for (int i = t->nops[sg] - 1; i >= 0; i--)
            fs_op_execute(c->inv[sg][i]);
        if (sg > 0 && c->x_back[sg - 1])
            st = fs_exchange_execute(c->x_back[sg - 1], r->data);
        if (sg == 1 && c->inv_hooks)
            fs_op_execute(c->inv_hooks);
    }
    if ((st = fs_error_agree(r->comm, st)) != FS_OK)
        return st;

    /* The input again, a piece of rows at a time, against the round trip. */
    fs_io_map rm = fs_transform_read_map(t, &r->info, &FIRST(r));
    int64_t rows = rm.file_box.count[0], row_elems = 1;
    for (int k = 1; k < rm.file_box.ndim; k++)
        row_elems *= rm.mem_dims[k];
    size_t eb = rm.mem_type == FS_DTYPE_COMPLEX64 || rm.mem_type == FS_DTYPE_COMPLEX128
                    ? cbytes(r)
                    : cbytes(r) / 2;
    int64_t per_piece = row_elems > 0 ? (64 << 20) / (row_elems * (int64_t)eb) : 1;
    per_piece = per_piece < 1 ? 1 : per_piece;
    int64_t local_pieces = rows > 0 ? (rows + per_piece - 1) / per_piece : 0, pieces;
    MPI_Allreduce(&local_pieces, &pieces, 1, MPI_INT64_T, MPI_MAX, r->comm);
    void *buf = malloc((size_t)(per_piece * row_elems > 0 ? per_piece * row_elems : 1) * eb);
    double npts = 1;
    for (int k = 0; k < t->in_ndim; k++)
        if (t->transform_axis[k])
            npts *= (double)(k == t->real_axis ? t->real_len : t->in_shape[k]);
    cmp_ctx cmp = {r, &rm, buf, r->data, 0, row_elems, t->kind == FS_C2R, 0, 1.0 / npts, 0, 0, 0};
    if (!buf)
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory for --check");
    if ((st = fs_error_agree(r->comm, st)) != FS_OK) {
        free(buf);
        return st;
    }
    for (int64_t p = 0; p < pieces && st == FS_OK; p++) {
        int64_t first = p * per_piece;
        int64_t n = first < rows ? (rows - first < per_piece ? rows - first : per_piece) : 0;
        fs_io_map piece = rm;
        piece.file_box.start[0] += first;
        piece.file_box.count[0] = n;
        if (n == 0)
            for (int k = 0; k < piece.file_box.ndim; k++)
                piece.file_box.count[k] = 0;
        piece.mem_dims[0] = n > 0 ? n : 1;
        piece.mem_start[0] = 0;
        st = fs_h5_read(r->comm, r->opts->input_file, &r->info, input_shards(r), &piece, buf, NULL,
                        NULL);
        if (st == FS_OK && n > 0) {
            cmp.row_shift = rm.mem_start[0] + first;
            /* visit the piece's elements as they sit in the whole buffer */
            map_visit(&rm, first, n, compare, &cmp);
        }
        st = fs_error_agree(r->comm, st);
    }
    free(buf);
    if (st != FS_OK)
        return st;
    double local[2] = {out.sum, cmp.sum}, sums[2], maxes[2], lm[2] = {cmp.max_err, cmp.max_ref};
    MPI_Allreduce(local, sums, 2, MPI_DOUBLE, MPI_SUM, r->comm);
    MPI_Allreduce(lm, maxes, 2, MPI_DOUBLE, MPI_MAX, r->comm);
    /* |result|^2 = scale^2 * points * |input|^2 */
    double expect = t->scale * t->scale * npts * sums[1];
    res->parseval_error = expect > 0 ? fabs(sums[0] - expect) / expect : fabs(sums[0]);
    res->roundtrip_error = maxes[1] > 0 ? maxes[0] / maxes[1] : maxes[0];
    res->passed = res->parseval_error <= res->tolerance && res->roundtrip_error <= res->tolerance;
    if (!res->passed)
        return fs_error_agree(r->comm, r->rank == 0 ? fs_error_set(FS_ERR_CHECK,
            "--check: round trip error %.3g, Parseval error %.3g, above the tolerance %.3g; the "
            "result was not kept", res->roundtrip_error, res->parseval_error, res->tolerance)
            : FS_OK);
    return FS_OK;
}

static void verbose_plan(const run *r)
{
    if (!r->opts->verbose || r->rank != 0)
        return;
    char title[512];
    describe(r, title, sizeof title);
    fs_note("plan: %s", title);
    if (r->info.dtype == FS_DTYPE_INTEGER)
        fs_note("input: %s integers converted to %s", r->info.type_name,
                r->t.prec == FS_SINGLE ? "float32" : "float64");
    fs_note("precision: %s (%s); output %s", r->t.prec == FS_SINGLE ? "single" : "double",
            r->opts->precision == FS_PRECISION_AUTO ? "from the input type" : "--precision",
            fs_dtype_name(r->t.out_type));
    if (r->t.kind != FS_C2C)
        fs_note("real axis %d of length %lld (%lld complex values), %s", r->t.real_axis,
                (long long)r->t.real_len, (long long)r->t.half_len,
                r->t.padded ? "FFTW's padded real layout" : "computed as a complex transform");
    fs_note("output: %s:%s via temporary %s", r->opts->output_file,
            r->opts->output_dataset ? r->opts->output_dataset : r->info.dataset, r->tmp_path);
    if (r->auto_note)
        fs_note("%s: %s", r->auto_note, r->strategy);
    fs_note("memory: rank 0 holds %lld elements (%.1f MiB) plus %.1f MiB of exchange buffers",
            (long long)r->data_elems, (double)r->data_elems * (double)cbytes(r) / 1048576.0,
            r->c.x[0] ? (r->c.x[0]->scratch_bytes + (r->c.x[1] ? r->c.x[1]->scratch_bytes : 0)) / 1048576.0
                      : 0.0);
}

/* The summary on stderr and the JSON report, from every rank's figures. */
static fs_status finish_report(run *r)
{
    const fs_options *o = r->opts;
    char title[512], input[2 * FS_PATH_MAX + 2], output[2 * FS_PATH_MAX + 2];
    describe(r, title, sizeof title);
    snprintf(input, sizeof input, "%s:%s", o->input_file, r->info.dataset);
    snprintf(output, sizeof output, "%s:%s", o->output_file,
             o->output_dataset ? o->output_dataset : r->info.dataset);
    int64_t n = 1;
    for (int k = 0; k < r->t.ndim; k++)
        n *= r->t.shape[k];
    fs_report_info info = {
        .command_line = o->argv_joined,
        .input = input,
        .output = output,
        .dtype = r->info.type_name,
        .precision = r->t.prec == FS_SINGLE ? "single" : "double",
        .transform = fs_kind_name(r->t.kind),
        .direction = o->inverse ? "inverse" : "forward",
        .norm = fs_norm_name(o->norm),
        .ndim = r->info.ndim,
        .shape = r->info.shape,
        .transform_axis = r->t.transform_axis,
        .decomposition = r->t.pencil ? "pencil" : r->t.fold ? "four-step" : "slab",
        .split_from = r->t.split[0][0],
        .split_to = r->t.split[r->t.nstages - 1][0] == FS_GATHER ? -1
                                                                 : r->t.split[r->t.nstages - 1][0],
        .grid = {r->t.grid[0], r->t.grid[1]},
        .nstages = r->t.nstages,
        .strategy = r->strategy,
        .strategy_requested = o->transpose,
        .seed = r->params.seed,
        .packet_bytes = r->params.packet_bytes,
        .queues = r->params.queues,
        .title = title,
        .flops = r->t.nominal_flops,
        .array_bytes = n * (int64_t)cbytes(r),
        .check = r->check.done ? &r->check : NULL,
    };
    memcpy(info.split, r->t.split, sizeof info.split);
    fs_rank_record rec;
    memset(&rec, 0, sizeof rec);
    rec.in = FIRST(r);
    rec.out = LAST(r);
    memcpy(rec.t_s, r->timers.t_s, sizeof rec.t_s);
    if (r->c.x[0]) {
        fs_exchange_stats tot = exchange_totals(&r->c);
        const fs_exchange_stats *xs = &tot;
        rec.bytes_sent = (int64_t)xs->bytes_sent;
        rec.bytes_received = (int64_t)xs->bytes_received;
        rec.messages_sent = (int64_t)xs->messages_sent;
        rec.wire_bytes_sent = (int64_t)xs->wire_bytes_sent;
        rec.t_pack_s = xs->t_pack_s;
        rec.t_comm_s = xs->t_comm_s;
        rec.t_unpack_s = xs->t_unpack_s;
        rec.t_hooks_s = xs->t_hooks_s;
        rec.t_hooks_overlapped_s = xs->t_hooks_overlapped_s;
    }
    rec.peak_memory_bytes = fs_peak_memory_bytes();
    return fs_report_finish(r->comm, &info, &rec, o->quiet ? NULL : stderr, o->report_file,
                            r->report_tmp);
}

/* ------------------------------------------------------------------ run */

/* A collective write or close failed on some rank (a full disk): the ranks'
 * HDF5 states now differ, and closing the file would wait forever in a
 * collective call that some rank has left. Remove the temporaries and end
 * the job at once with the agreed status (its message is printed). */
static void abandon(run *r, fs_status st)
{
    if (r->so.path)
        fs_atomic_abort(r->so.path);
    if (r->rank == 0) {
        if (r->tmp_path)
            fs_atomic_abort(r->tmp_path);
        if (r->report_tmp)
            fs_atomic_abort(r->report_tmp);
    }
    MPI_Barrier(r->comm);
    if (r->rank == 0 && r->so.dir_tmp)
        fs_atomic_remove_tree(r->so.dir_tmp);
    fflush(stdout);
    fflush(stderr);
    /* MPI_Abort gives the job the status (MPICH adds one line saying so);
     * ranks that merely exited would be reported as killed. */
    if (r->rank == 0)
        MPI_Abort(MPI_COMM_WORLD, (int)st);
    for (;;)
        pause();
}

fs_status fs_pipeline_run(MPI_Comm comm, const fs_options *opts)
{
    run r;
    memset(&r, 0, sizeof r);
    r.comm = comm;
    r.opts = opts;
    MPI_Comm_rank(comm, &r.rank);
    MPI_Comm_size(comm, &r.nranks);
    fs_timer_start(&r.timers, FS_PHASE_TOTAL);
    fs_progress_init(&r.progress, r.rank == 0 && !opts->quiet && (opts->progress || isatty(2)),
                     opts->progress);

    int created = 0, write_failed = 0; /* the same on every rank */
    fs_status st = stage_probe(&r);
    if (st == FS_OK)
        st = stage_output(&r);
    if (st == FS_OK) {
        fs_timer_start(&r.timers, FS_PHASE_PLAN);
        st = fs_wisdom_load(comm, opts->wisdom_file, &r.wisdom);
        if (st == FS_OK)
            st = fs_error_agree(comm, stage_plan(&r));
        /* Every rank decides alike: rank 0 speaks. */
        if (st == FS_OK) {
            fs_status so = choose_storage(&r);
            if (so == FS_OK && opts->shard_output)
                so = fs_shard_output_plan(comm, &r.t, opts->shard_output, opts->output_file, &r.so);
            if (so == FS_OK)
                so = check_space(&r);
            st = fs_error_agree(comm, r.rank == 0 || fs_error_status() == FS_ERR_RUNTIME ? so : FS_OK);
        }
        fs_timer_stop(&r.timers, FS_PHASE_PLAN);
    }
    if (st == FS_OK) {
        verbose_plan(&r);
        fs_timer_start(&r.timers, FS_PHASE_WRITE);
        st = fs_error_agree(comm, create_output(&r));
        created = st == FS_OK;
        fs_timer_stop(&r.timers, FS_PHASE_WRITE);
    }
    if (st == FS_OK) {
        fs_timer_start(&r.timers, FS_PHASE_READ);
        st = fs_error_agree(comm, stage_read(&r));
        fs_timer_stop(&r.timers, FS_PHASE_READ);
    }
    if (st == FS_OK)
        st = fs_error_agree(comm, compute_run(&r, &r.c));
    if (st == FS_OK) {
        fs_timer_start(&r.timers, FS_PHASE_WRITE);
        st = fs_error_agree(comm, stage_write(&r));
        write_failed = st != FS_OK;
        fs_timer_stop(&r.timers, FS_PHASE_WRITE);
    }
    if (st == FS_OK && opts->check) {
        fs_timer_start(&r.timers, FS_PHASE_CHECK);
        st = stage_check(&r);
        fs_timer_stop(&r.timers, FS_PHASE_CHECK);
    }
    if (created && !write_failed) {
        fs_timer_start(&r.timers, FS_PHASE_WRITE);
        fs_status closed = fs_error_agree(comm, fs_h5_output_close(&r.out));
        fs_timer_stop(&r.timers, FS_PHASE_WRITE);
        write_failed = closed != FS_OK;
        st = st != FS_OK ? st : closed;
    }
    if (write_failed)
        abandon(&r, st);
    if (st == FS_OK) {
        /* Replacing an existing output frees its blocks inside the rename:
         * seconds for a large file on some file systems, shown as commit. */
        fs_timer_start(&r.timers, FS_PHASE_COMMIT);
        st = fs_atomic_commit_collective(comm, commit_output, &r);
        /* The result is in place (a signal from here on says so): a wisdom
         * file that cannot be written costs the next run its head start,
         * not this run its result. */
        if (st == FS_OK)
            fs_atomic_set_phase("report");
        if (st == FS_OK && fs_wisdom_save(comm, r.wisdom) != FS_OK) {
            if (r.rank == 0)
                fprintf(stderr, "fftshard: warning: %s (the result was written)\n",
                        fs_error_message());
            fs_error_clear();
        }
        fs_timer_stop(&r.timers, FS_PHASE_COMMIT);
    }
    fs_timer_stop(&r.timers, FS_PHASE_TOTAL);
    if (st == FS_OK)
        st = finish_report(&r);

    /* One cleanup path: every rank closes its handles; a failed run leaves
     * no temporary behind. */
    fs_h5_output_close(&r.out);
    if (st != FS_OK && r.tmp_path)
        fs_atomic_abort(r.tmp_path);
    if (st != FS_OK && opts->shard_output && r.so.dir_tmp)
        fs_shard_output_abort(comm, &r.so);
    fs_shard_output_free(&r.so);
    fs_shard_set_free(&r.shards);
    if (r.report_tmp)
        fs_atomic_abort(r.report_tmp); /* gone already when the report was written */
    compute_free(&r.c);
    free_layout(&r);
    fs_wisdom_free(&r.wisdom);
    fs_buffer_free(r.data);
    free(r.tmp_path);
    free(r.report_tmp);
    return st;
}
