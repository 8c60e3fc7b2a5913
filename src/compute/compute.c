/* SPDX-License-Identifier: GPL-3.0-or-later */
/* compute: see compute.h. */
#include "config.h"

#include "compute/compute.h"
#include "core/buffer.h"
#include "core/collective.h"

#include <fftw3.h>
#include <stdlib.h>
#include <string.h>

struct fs_compute {
    MPI_Comm comm;
    const fs_transform *t;
    const fs_decomposition *d;
    fs_precision prec;
    size_t elem_bytes;                   /* of the working array (the transform's work_type) */
    fs_workbuf *buf;                     /* the caller's, whose data may trade places */
    unsigned fftw_flags;
    fs_exchange *x[FS_MAX_EXCH];
    fs_spare spare;                      /* the one second array of every exchange that needs one */
    fs_op *op[FS_MAX_STAGES][FS_MAX_OPS];
    fs_fft_blockwise *bw_pre, *bw_post;  /* block work handed to the strategy */
    fs_block_hooks hooks;
    /* --check: the inverse */
    fs_exchange *x_back[FS_MAX_EXCH];
    fs_op *inv[FS_MAX_STAGES][FS_MAX_OPS];
    fs_op *inv_hooks;                    /* the inverse of the block work the hooks did */
    int fused;                           /* 1 + the index of the last stage's operation that runs
                                            with its inverse (fs_compute_round_trip); 0: none */
};

/* Make sure b holds at least n elements (old contents may be lost). */
static fs_status workbuf_reserve(fs_workbuf *b, int64_t n)
{
    if (n <= b->elems && b->data)
        return FS_OK;
    fs_buffer_free(b->data);
    b->elems = n > 0 ? n : 1;
    size_t bytes = (size_t)b->elems * fs_dtype_bytes(b->type);
    b->data = fs_buffer_alloc(bytes);
    if (!b->data) {
        b->elems = 0;
        return fs_error_set(FS_ERR_RUNTIME, "out of memory: %zu bytes for the local array", bytes);
    }
    return FS_OK;
}

void fs_workbuf_release(fs_workbuf *b)
{
    fs_buffer_free(b->data);
    b->data = NULL;
    b->elems = 0;
}

/* The block hooks of an overlapping strategy: a failure stops the block
 * work; the strategy finishes its messages and agrees the status. */
static fs_status hook_pre(void *ctx, const fs_box *block, void *data)
{
    fs_compute *c = ctx;
    if (c->t->hook_twiddle) {
        fs_op_spec tw;
        memset(&tw, 0, sizeof tw);
        tw.kind = FS_OP_TWIDDLE;
        tw.sign = c->t->sign;
        tw.twiddle_n = c->t->in_shape[0];
        fs_op *op = NULL;
        fs_status st = fs_op_new(&tw, block, c->prec, data, FFTW_ESTIMATE, &op);
        if (st == FS_OK)
            st = fs_op_execute(op);
        fs_op_free(&op);
        return st;
    }
    return fs_fft_blockwise_execute(c->bw_pre, block, data);
}

static fs_status hook_post(void *ctx, const fs_box *block, void *data)
{
    fs_compute *c = ctx;
    return c->bw_post ? fs_fft_blockwise_execute(c->bw_post, block, data) : FS_OK;
}

void fs_compute_free(fs_compute **cp)
{
    fs_compute *c = *cp;
    if (!c)
        return;
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
    fs_exchange_spare_free(&c->spare);
    free(c);
    *cp = NULL;
}

fs_status fs_compute_time(void *ctx, const fs_exchange_ops *ops, double *slowest)
{
    const fs_compute_trial *tr = ctx;
    fs_compute_args ca = {tr->comm, fs_planned_for(tr->planned, ops), tr->d, ops, tr->params,
                          tr->fftw_flags, 0, 0};
    const fs_compute_args *a = &ca;
    fs_workbuf *buf = tr->buf;
    fs_compute *c = NULL;
    fs_status st = fs_error_agree(a->comm, fs_compute_new(a, buf, &c));
    if (st != FS_OK)
        return st;
    memset(buf->data, 0, (size_t)buf->elems * fs_dtype_bytes(buf->type));
    fs_timers ignored;
    memset(&ignored, 0, sizeof ignored);
    double t0 = 0, t = 0;
    if (MPI_Barrier(a->comm) != MPI_SUCCESS)
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Barrier failed");
    t0 = MPI_Wtime();
    if (st == FS_OK)
        st = fs_compute_run(c, buf->data, &ignored, NULL);
    t = MPI_Wtime() - t0;
    fs_compute_free(&c);
    if ((st = fs_error_agree(a->comm, st)) != FS_OK)
        return st;
    return fs_error_agree(a->comm, fs_allreduce(a->comm, &t, slowest, 1, MPI_DOUBLE, MPI_MAX));
}

/* The exchange plans (and their reverses); *need grows to what they need. */
static fs_status plan_exchanges(fs_compute *c, const fs_compute_args *a, int64_t *need)
{
    const fs_transform *t = c->t;
    fs_status st = FS_OK;
    c->spare.elem_bytes = c->elem_bytes;
    int real = fs_dtype_is_real(t->work_type), single = c->prec == FS_SINGLE;
    for (int e = 0; e + 1 < t->nstages && a->ops && st == FS_OK; e++) {
        int g = fs_transform_exchange_dim(t, e);
        fs_exchange_args args = {
            .comm = c->d->dim_comm[g],
            .rd = c->d->rd[e],
            .elem_bytes = c->elem_bytes,
            .elem_type = real ? (single ? MPI_FLOAT : MPI_DOUBLE)
                              : (single ? MPI_C_FLOAT_COMPLEX : MPI_C_DOUBLE_COMPLEX),
            .params = a->params,
            .hooks = t->hooks && e == 0 ? &c->hooks : NULL,
            .spare = &c->spare,
        };
        st = fs_exchange_new(a->ops, &args, &c->x[e]);
        if (st == FS_OK && c->x[e]->work_elems > *need)
            *need = c->x[e]->work_elems;
        if (st == FS_OK && a->with_inverse) {
            args.rd = c->d->rd_back[e];
            args.hooks = NULL;
            st = fs_exchange_new(a->ops, &args, &c->x_back[e]);
            if (st == FS_OK && c->x_back[e]->work_elems > *need)
                *need = c->x_back[e]->work_elems;
        }
    }
    return st;
}

/* Plan a stage's operations on its box (a transpose changes the box). */
static fs_status plan_ops(const fs_compute_args *a, const fs_op_spec *specs, int n, fs_box box,
                          void *data, fs_op **ops, fs_op **inverse)
{
    for (int i = 0; i < n; i++) {
        fs_status st = fs_op_new(&specs[i], &box, a->t->prec, data, a->fftw_flags, &ops[i]);
        if (st == FS_OK && inverse)
            st = fs_op_inverse(ops[i], data, a->fftw_flags, &inverse[i]);
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

/* --check with block work: undone on the first stage, where those axes are
 * whole. */
static fs_status plan_inverse_hooks(fs_compute *c, const fs_compute_args *a, void *data)
{
    const fs_transform *t = c->t;
    fs_op_spec inv;
    memset(&inv, 0, sizeof inv);
    inv.sign = -t->sign;
    if (t->hook_twiddle) {
        inv.kind = FS_OP_TWIDDLE;
        inv.twiddle_n = t->in_shape[0];
    } else {
        inv.kind = FS_OP_C2C;
        for (int k = 0; k < t->ndim; k++)
            inv.axes[k] = t->hook_axes_pre[k] || t->hook_axes_post[k];
    }
    return fs_op_new(&inv, &c->d->box[0], c->prec, data, a->fftw_flags, &c->inv_hooks);
}

fs_status fs_compute_new(const fs_compute_args *a, fs_workbuf *buf, fs_compute **out)
{
    *out = NULL;
    fs_compute *c = calloc(1, sizeof *c);
    if (!c)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    const fs_transform *t = a->t;
    c->comm = a->comm;
    c->t = t;
    c->d = a->d;
    c->prec = t->prec;
    c->elem_bytes = fs_dtype_bytes(t->work_type);
    c->fftw_flags = a->fftw_flags;
    fs_status st = FS_OK;
    if (t->hooks && !t->hook_twiddle) {
        st = fs_fft_blockwise_new(t->hook_axes_pre, t->sign, c->prec, &c->bw_pre);
        if (st == FS_OK)
            st = fs_fft_blockwise_new(t->hook_axes_post, t->sign, c->prec, &c->bw_post);
    }
    /* Pieces are cut along the axis split before the exchange. */
    if (t->hooks)
        c->hooks = (fs_block_hooks){hook_pre, hook_post, c, t->from_axis};
    int64_t need = fs_decomposition_max_elems(a->d);
    if (st == FS_OK)
        st = plan_exchanges(c, a, &need);
    /* A buffer kept from a transform of another element type counts its
     * elements in that type's size. */
    if (buf->type != t->work_type)
        fs_workbuf_release(buf);
    buf->type = t->work_type;
    if (st == FS_OK)
        st = workbuf_reserve(buf, need);
    c->buf = buf;
    /* The second array trades places with the data buffer: as large as it. */
    for (int e = 0; e < FS_MAX_EXCH && st == FS_OK; e++) {
        if (c->x[e])
            st = fs_exchange_reserve_second(c->x[e], buf->elems);
        if (st == FS_OK && c->x_back[e])
            st = fs_exchange_reserve_second(c->x_back[e], buf->elems);
    }
    for (int s = 0; s < t->nstages && st == FS_OK; s++)
        st = plan_ops(a, t->ops[s], t->nops[s], a->d->box[s], buf->data, c->op[s],
                      a->with_inverse ? c->inv[s] : NULL);
    if (st == FS_OK && a->with_inverse && c->hooks.ctx)
        st = plan_inverse_hooks(c, a, buf->data);
    /* The last stage's last operation that does something (a scale by 1
     * after it does not), in the stage's own box (no transpose before it).
     * Not with one stage: its operations may run on the pieces read. */
    int last = t->nstages - 1, f = last >= 1 ? t->nops[last] - 1 : -1;
    while (f > 0 && t->ops[last][f].kind == FS_OP_SCALE && t->ops[last][f].factor == 1.0)
        f--;
    for (int i = 0; i < f; i++)
        if (t->ops[last][i].kind == FS_OP_TRANSPOSE)
            f = -1;
    if (st == FS_OK && a->operate_between && a->with_inverse && f >= 0 &&
        fs_op_fusable(c->op[last][f], c->inv[last][f]))
        c->fused = f + 1;
    if (st != FS_OK)
        fs_compute_free(&c);
    *out = c;
    return st;
}

/* ops on data (NULL: on the arrays they were planned on, as the pieces'
 * plans at their offsets run). */
static fs_status run_ops(fs_op **ops, int n, void *data, fs_progress *progress)
{
    double flops = 0;
    for (int i = 0; i < n; i++)
        flops += fs_op_flops(ops[i]);
    if (progress)
        fs_progress_begin(progress, "fft", flops, "flop");
    fs_status st = FS_OK;
    for (int i = 0; i < n && st == FS_OK; i++)
        st = data ? fs_op_execute_on(ops[i], data) : fs_op_execute(ops[i]);
    if (progress)
        fs_progress_end(progress);
    return st;
}

/* The part of the second stage's box that the first exchange leaves
 * unwritten, zeroed (fs_domain_exchange_zeros: free space's doubled axis). */
static void zero_unsent(fs_compute *c)
{
    fs_box z = fs_domain_exchange_zeros(c->t, &c->d->box[1]);
    size_t eb = (size_t)c->elem_bytes;
    fs_box_runs w;
    fs_box_runs_begin(&w, &z, &c->d->box[1], NULL, 0);
    while (fs_box_runs_next(&w))
        memset((char *)c->buf->data + (size_t)w.offset * eb, 0, (size_t)w.run_elems * eb);
}

/* One exchange (back: of the inverse), its block FFTs counted as FFT time
 * and the zeros it leaves to write as its own. */
static fs_status run_exchange(fs_compute *c, int e, int back, fs_timers *timers,
                              fs_progress *progress)
{
    fs_exchange *x = back ? c->x_back[e] : c->x[e];
    const fs_redist *rd = back ? c->d->rd_back[e] : c->d->rd[e];
    fs_timer_start(timers, FS_PHASE_EXCHANGE);
    if (progress)
        fs_progress_begin(progress, "exchange",
                          (double)(rd->send_total - rd->send_elems[rd->self]) *
                              (double)c->elem_bytes,
                          "B");
    double hooks_before = x->stats.t_hooks_s;
    fs_status st = fs_exchange_execute(x, &c->buf->data, &c->buf->elems);
    if (st == FS_OK && !back && e == 0)
        zero_unsent(c);
    if (progress)
        fs_progress_end(progress);
    fs_timer_stop(timers, FS_PHASE_EXCHANGE);
    double hooks = x->stats.t_hooks_s - hooks_before;
    timers->t_s[FS_PHASE_EXCHANGE] -= hooks;
    timers->t_s[FS_PHASE_FFT] += hooks;
    return st;
}

/* The data of the working buffer: data passed in must be it. */
static fs_status check_data(const fs_compute *c, const void *data)
{
    if (data != c->buf->data)
        return fs_error_set(FS_ERR_RUNTIME, "internal error: the transform was given a buffer "
                                            "other than its working buffer");
    return FS_OK;
}

fs_status fs_compute_run(fs_compute *c, void *data, fs_timers *timers, fs_progress *progress)
{
    return fs_compute_run_part(c, data, 0, 0, timers, progress);
}

fs_status fs_compute_run_part(fs_compute *c, void *data, int first_done, int last_left,
                              fs_timers *timers, fs_progress *progress)
{
    fs_status st = check_data(c, data);
    int last = c->t->nstages - 1;
    for (int s = 0; s <= last; s++) {
        int skip = (s == 0 && first_done) || (s == last && last_left);
        int n = c->t->nops[s], f = s == last && c->fused ? c->fused - 1 : n; /* f: left out */
        fs_timer_start(timers, FS_PHASE_FFT);
        if (st == FS_OK && !skip)
            st = run_ops(c->op[s], f, c->buf->data, progress);
        if (st == FS_OK && !skip && f < n)
            st = run_ops(c->op[s] + f + 1, n - f - 1, c->buf->data, progress);
        fs_timer_stop(timers, FS_PHASE_FFT);
        if (s >= last || !c->x[s])
            continue;
        if (fs_error_agree_quiet(c->comm, st) != FS_OK)
            break;
        st = run_exchange(c, s, 0, timers, progress);
    }
    return st;
}

/* The inverse operations of a stage, last first. */
static fs_status run_ops_reverse(fs_op **ops, int n, void *data)
{
    fs_status st = FS_OK;
    for (int i = n - 1; i >= 0 && st == FS_OK; i--)
        st = fs_op_execute_on(ops[i], data);
    return st;
}

/* Timers and progress: NULL for --check's undo, which is timed as the
 * check phase (and says so to a signal). */
static void undo_timer(fs_timers *timers, fs_phase p, int start)
{
    if (timers && start)
        fs_timer_start(timers, p);
    else if (timers)
        fs_timer_stop(timers, p);
}

/* fused_done: the fused operation's inverse ran already (fs_compute_round_trip). */
static fs_status undo(fs_compute *c, void *data, fs_timers *timers, fs_progress *progress,
                      int fused_done)
{
    const fs_transform *t = c->t;
    fs_status st = check_data(c, data);
    for (int sg = t->nstages - 1; sg >= 0; sg--) {
        int n = t->nops[sg], f = sg == t->nstages - 1 && fused_done ? c->fused - 1 : n;
        undo_timer(timers, FS_PHASE_FFT, 1);
        if (st == FS_OK && f < n)
            st = run_ops_reverse(c->inv[sg] + f + 1, n - f - 1, c->buf->data);
        if (st == FS_OK)
            st = run_ops_reverse(c->inv[sg], f, c->buf->data);
        undo_timer(timers, FS_PHASE_FFT, 0);
        if (sg > 0 && c->x_back[sg - 1]) {
            /* as in fs_compute_run: nobody waits in an exchange for a rank that failed */
            if (fs_error_agree_quiet(c->comm, st) != FS_OK)
                break;
            if (timers)
                st = run_exchange(c, sg - 1, 1, timers, progress);
            else
                st = fs_exchange_execute(c->x_back[sg - 1], &c->buf->data, &c->buf->elems);
        }
        undo_timer(timers, FS_PHASE_FFT, 1);
        if (st == FS_OK && sg == 1 && c->inv_hooks)
            st = fs_op_execute_on(c->inv_hooks, c->buf->data);
        undo_timer(timers, FS_PHASE_FFT, 0);
    }
    return st;
}

fs_status fs_compute_undo(fs_compute *c, void *data)
{
    return undo(c, data, NULL, NULL, 0);
}

fs_status fs_compute_undo_timed(fs_compute *c, void *data, fs_timers *timers,
                                fs_progress *progress)
{
    return undo(c, data, timers, progress, 0);
}

/* The middle's work on lines, its time kept apart from the pass's. */
typedef struct timed_lines {
    const fs_compute_middle *m;
    double seconds;
} timed_lines;

static void run_lines(void *ctx, const fs_lines *l)
{
    timed_lines *tl = ctx;
    double t0 = MPI_Wtime();
    tl->m->lines(tl->m->ctx, l);
    tl->seconds += MPI_Wtime() - t0;
}

fs_status fs_compute_round_trip(fs_compute *c, void *data, const fs_compute_middle *m,
                                fs_timers *timers, fs_progress *progress)
{
    /* Ranks may differ here (one with nothing to transform has nothing to
     * fuse): either way the undo's agreements are the only collectives. */
    if (!c->fused) {
        fs_timer_start(timers, FS_PHASE_OPERATE);
        if (check_data(c, data) == FS_OK)
            m->whole(m->ctx, data);
        fs_timer_stop(timers, FS_PHASE_OPERATE);
        return fs_error_agree(c->comm, undo(c, data, timers, progress, 0));
    }
    int last = c->t->nstages - 1, f = c->fused - 1;
    timed_lines tl = {m, 0};
    fs_timer_start(timers, FS_PHASE_FFT);
    fs_status st = check_data(c, data);
    if (st == FS_OK)
        st = fs_op_execute_fused(c->op[last][f], c->inv[last][f], data, run_lines, &tl);
    fs_timer_stop(timers, FS_PHASE_FFT);
    timers->t_s[FS_PHASE_FFT] -= tl.seconds;
    timers->t_s[FS_PHASE_OPERATE] += tl.seconds;
    fs_status back = undo(c, data, timers, progress, 1);
    return fs_error_agree(c->comm, st != FS_OK ? st : back);
}

fs_exchange_stats fs_compute_exchange_totals(const fs_compute *c)
{
    fs_exchange_stats t;
    memset(&t, 0, sizeof t);
    /* A round trip's inverse exchanges are part of its result (--check's
     * are counted in the check phase, not here). */
    int back = c && c->t->round_trip;
    for (int i = 0; c && i < (back ? 2 : 1) * FS_MAX_EXCH; i++) {
        const fs_exchange *x = i < FS_MAX_EXCH ? c->x[i] : c->x_back[i - FS_MAX_EXCH];
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
        t.runs += x->stats.runs;
    }
    return t;
}

size_t fs_compute_scratch_bytes(const fs_compute *c)
{
    size_t n = c ? (size_t)c->spare.elems * c->spare.elem_bytes : 0;
    for (int e = 0; c && e < FS_MAX_EXCH; e++)
        if (c->x[e])
            n += c->x[e]->scratch_bytes;
    return n;
}

int fs_compute_operates_in_pass(const fs_compute *c)
{
    return c->fused != 0;
}

MPI_Comm fs_compute_comm(const fs_compute *c)
{
    return c->comm;
}

void *fs_compute_data(const fs_compute *c)
{
    return c->buf->data;
}

int fs_compute_exchanges(const fs_compute *c)
{
    return c && c->x[0] != NULL;
}

/* ------------------------------------------------------------------ pieces */

struct fs_compute_pieces {
    fs_pieces_kind kind;
    fs_precision prec;
    size_t elem_bytes;                  /* of the working array */
    unsigned flags;
    char *data;
    fs_box box;
    int axis;                           /* cut along */
    int64_t per, n;                     /* indices of axis per piece, pieces */
    int keep;
    fs_op_spec piece_specs[FS_MAX_OPS];
    int npiece_specs;
    fs_op *whole[FS_MAX_OPS];           /* FIRST: after the pieces; LAST: before */
    int nwhole;
    int borrowed[FS_MAX_OPS];           /* whole[i] is the stage's own operation */
    fs_op **ops;                        /* FIRST: n x npiece_specs, in place */
    void *buf[FS_PIECE_BUFFERS];        /* LAST: staging, and the plans on it */
    fs_op *buf_ops[FS_PIECE_BUFFERS][FS_MAX_OPS];
    fs_op *rest_ops[FS_MAX_OPS];        /* the shorter last piece's */
    size_t buf_bytes;
};

/* A whole-box operation: the stage's own where one is planned alike (a
 * 1-D series' FFT), else planned on data. */
static fs_status plan_whole(fs_compute_pieces *p, const fs_op_spec *whole, fs_op *const *stage,
                            int nstage)
{
    for (int i = 0; i < nstage; i++)
        if (stage[i] && fs_op_plans_alike(stage[i], whole, &p->box)) {
            p->borrowed[p->nwhole] = 1;
            p->whole[p->nwhole++] = stage[i];
            return FS_OK;
        }
    return fs_op_new(whole, &p->box, p->prec, p->data, p->flags, &p->whole[p->nwhole++]);
}

/* The stage's operations split into those on each piece (every axis but
 * the cut one, the scaling, the window) and those on the whole box (the
 * cut axis; for FIRST the scaling too, after it); the whole ones planned on
 * data. The zeros of a padding (limit) are where they were for the first
 * operations to run alone: FIRST's pieces. */
static fs_status split_specs(fs_compute_pieces *p, const fs_op_spec *specs, int n,
                             fs_op *const *stage)
{
    fs_status st = FS_OK;
    for (int i = 0; i < n && st == FS_OK; i++) {
        fs_op_spec piece = specs[i], whole = specs[i];
        memset(whole.limit, 0, sizeof whole.limit);
        if (p->kind == FS_PIECES_LAST)
            memset(piece.limit, 0, sizeof piece.limit);
        int axes_op = fs_op_transforms_axes(&specs[i]);
        int cut = axes_op && specs[i].axes[p->axis];
        int rest = specs[i].kind == FS_OP_WINDOW;
        if (axes_op) {
            int64_t trivial = fs_op_identity_length(&specs[i]);
            piece.axes[p->axis] = 0;
            for (int k = 0; k < p->box.ndim; k++)
                rest |= piece.axes[k] && p->box.count[k] > trivial;
            memset(whole.axes, 0, sizeof whole.axes);
            whole.axes[p->axis] = 1;
        }
        int scale_whole = specs[i].kind == FS_OP_SCALE && p->kind == FS_PIECES_FIRST;
        if (specs[i].kind == FS_OP_SCALE ? !scale_whole : rest)
            p->piece_specs[p->npiece_specs++] = piece;
        if (cut || scale_whole)
            st = plan_whole(p, &whole, stage, n);
    }
    return st;
}

/* How a stage of t on box is cut (pieces.h); p->axis -1 when it cannot be. */
static void cut(const fs_transform *t, int s, const fs_box *box, fs_pieces_kind kind,
                int64_t piece_bytes, fs_compute_pieces *p)
{
    fs_piece_cut c = fs_pieces_cut(t, s, box, kind, piece_bytes);
    p->kind = kind;
    p->prec = t->prec;
    p->elem_bytes = fs_dtype_bytes(t->work_type);
    p->box = *box;
    p->axis = c.axis;
    p->per = c.per;
    p->n = c.n;
    p->buf_bytes = c.buf_bytes;
}

fs_box fs_compute_pieces_piece(const fs_compute_pieces *p, int64_t i)
{
    fs_box b = p->box;
    int64_t first = i * p->per, left = p->box.count[p->axis] - first;
    b.start[p->axis] += first;
    b.count[p->axis] = left < p->per ? left : p->per;
    return b;
}

/* The piece operations on `box` stored at `at`. */
static fs_status plan_piece_ops(fs_compute_pieces *p, const fs_box *box, void *at, fs_op **ops)
{
    fs_status st = FS_OK;
    for (int i = 0; i < p->npiece_specs && st == FS_OK; i++)
        st = fs_op_new(&p->piece_specs[i], box, p->prec, at, p->flags, &ops[i]);
    return st;
}

/* FIRST: every piece's operations, in place. */
static fs_status plan_in_place(fs_compute_pieces *p)
{
    p->ops = calloc((size_t)(p->n * p->npiece_specs + 1), sizeof *p->ops);
    if (!p->ops)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    size_t cb = p->elem_bytes;
    fs_status st = FS_OK;
    for (int64_t i = 0; i < p->n && st == FS_OK; i++) {
        fs_box b = fs_compute_pieces_piece(p, i);
        void *at = p->data + (size_t)fs_box_offset_in(&b, &p->box) * cb;
        st = plan_piece_ops(p, &b, at, p->ops + i * p->npiece_specs);
    }
    return st;
}

/* LAST: the staging buffers, and the plans of a whole piece on each and of
 * the shorter last piece on its buffer. */
static fs_status plan_staged(fs_compute_pieces *p)
{
    fs_status st = FS_OK;
    for (int k = 0; k < FS_PIECE_BUFFERS && k < p->n && st == FS_OK; k++) {
        p->buf[k] = fs_buffer_alloc(p->buf_bytes);
        if (!p->buf[k])
            return fs_error_set(FS_ERR_RUNTIME, "out of memory: %zu bytes for a staging buffer",
                                p->buf_bytes);
        fs_box b = fs_compute_pieces_piece(p, 0);
        st = plan_piece_ops(p, &b, p->buf[k], p->buf_ops[k]);
    }
    fs_box last = fs_compute_pieces_piece(p, p->n - 1);
    if (st == FS_OK && p->n > 0 && last.count[p->axis] < p->per)
        st = plan_piece_ops(p, &last, p->buf[(p->n - 1) % FS_PIECE_BUFFERS], p->rest_ops);
    return st;
}

fs_status fs_compute_pieces_new(const fs_compute *c, fs_pieces_kind kind, void *data,
                                int64_t piece_bytes, int keep, fs_compute_pieces **out)
{
    *out = NULL;
    int s = kind == FS_PIECES_FIRST ? 0 : c->t->nstages - 1;
    fs_compute_pieces *p = calloc(1, sizeof *p);
    if (!p)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    cut(c->t, s, &c->d->box[s], kind, piece_bytes, p);
    if (p->axis < 0) {
        free(p);
        return FS_OK;
    }
    p->flags = c->fftw_flags;
    p->data = data;
    p->keep = keep;
    fs_status st = split_specs(p, c->t->ops[s], c->t->nops[s], c->op[s]);
    if (st == FS_OK)
        st = kind == FS_PIECES_FIRST ? plan_in_place(p) : plan_staged(p);
    if (st != FS_OK)
        fs_compute_pieces_free(&p);
    *out = p;
    return st;
}

void fs_compute_pieces_free(fs_compute_pieces **pp)
{
    fs_compute_pieces *p = *pp;
    if (!p)
        return;
    for (int i = 0; i < FS_MAX_OPS; i++) {
        if (!p->borrowed[i])
            fs_op_free(&p->whole[i]);
        fs_op_free(&p->rest_ops[i]);
        for (int k = 0; k < FS_PIECE_BUFFERS; k++)
            fs_op_free(&p->buf_ops[k][i]);
    }
    for (int64_t i = 0; p->ops && i < p->n * p->npiece_specs; i++)
        fs_op_free(&p->ops[i]);
    free(p->ops);
    for (int k = 0; k < FS_PIECE_BUFFERS; k++)
        fs_buffer_free(p->buf[k]);
    free(p);
    *pp = NULL;
}

int64_t fs_compute_pieces_count(const fs_compute_pieces *p)
{
    return p->n;
}

fs_box fs_compute_pieces_box(const fs_compute_pieces *p)
{
    return p->box;
}

void fs_compute_pieces_rebase(fs_compute_pieces *p, void *data)
{
    p->data = data;
}

fs_status fs_compute_pieces_begin(fs_compute_pieces *p, fs_progress *progress)
{
    return p->kind == FS_PIECES_LAST ? run_ops(p->whole, p->nwhole, p->data, progress) : FS_OK;
}

fs_status fs_compute_pieces_end(fs_compute_pieces *p, fs_progress *progress)
{
    return p->kind == FS_PIECES_FIRST ? run_ops(p->whole, p->nwhole, p->data, progress) : FS_OK;
}

/* A piece between data and its packed copy at `packed`. */
static void copy_piece(const fs_compute_pieces *p, const fs_box *piece, char *packed, int to_data)
{
    size_t cb = p->elem_bytes;
    fs_box_runs w;
    fs_box_runs_begin(&w, piece, &p->box, NULL, 0);
    while (fs_box_runs_next(&w)) {
        char *in_data = p->data + (size_t)w.offset * cb, *in_packed = packed + (size_t)w.other_offset * cb;
        size_t bytes = (size_t)w.run_elems * cb;
        memcpy(to_data ? in_data : in_packed, to_data ? in_packed : in_data, bytes);
    }
}

fs_status fs_compute_pieces_run(fs_compute_pieces *p, int64_t i, void **at, fs_box *at_box)
{
    if (p->kind == FS_PIECES_FIRST) {
        if (at)
            *at = NULL;
        return run_ops(p->ops + i * p->npiece_specs, p->npiece_specs, NULL, NULL);
    }
    fs_box b = fs_compute_pieces_piece(p, i);
    int k = (int)(i % FS_PIECE_BUFFERS);
    fs_op **ops = b.count[p->axis] < p->per ? p->rest_ops : p->buf_ops[k];
    copy_piece(p, &b, p->buf[k], 0);
    fs_status st = run_ops(ops, p->npiece_specs, NULL, NULL);
    if (st == FS_OK && p->keep)
        copy_piece(p, &b, p->buf[k], 1);
    *at = p->buf[k];
    *at_box = b;
    return st;
}
