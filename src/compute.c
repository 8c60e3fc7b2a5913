/* compute: see compute.h. */
#include "config.h"

#include "compute.h"

#include <fftw3.h>
#include <stdlib.h>
#include <string.h>

struct fs_compute {
    MPI_Comm comm;
    const fs_transform *t;
    const fs_decomposition *d;
    fs_precision prec;
    fs_workbuf *buf;                     /* the caller's, whose data may trade places */
    fs_exchange *x[FS_MAX_EXCH];
    fs_op *op[FS_MAX_STAGES][FS_MAX_OPS];
    fs_fft_blockwise *bw_pre, *bw_post;  /* block work handed to the strategy */
    fs_block_hooks hooks;
    /* --check: the inverse */
    fs_exchange *x_back[FS_MAX_EXCH];
    fs_op *inv[FS_MAX_STAGES][FS_MAX_OPS];
    fs_op *inv_hooks;                    /* the inverse of the block work the hooks did */
};

fs_status fs_workbuf_reserve(fs_workbuf *b, int64_t n)
{
    if (n <= b->elems && b->data)
        return FS_OK;
    fs_buffer_free(b->data);
    b->elems = n > 0 ? n : 1;
    size_t bytes = (size_t)b->elems * fs_complex_bytes(b->prec);
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
    free(c);
    *cp = NULL;
}

/* The exchange plans (and their reverses); *need grows to what they need. */
static fs_status plan_exchanges(fs_compute *c, const fs_compute_args *a, int64_t *need)
{
    const fs_transform *t = c->t;
    fs_status st = FS_OK;
    for (int e = 0; e + 1 < t->nstages && a->ops && st == FS_OK; e++) {
        int g = fs_transform_exchange_dim(t, e);
        fs_exchange_args args = {
            .comm = c->d->dim_comm[g],
            .rd = c->d->rd[e],
            .elem_bytes = fs_complex_bytes(c->prec),
            .elem_type = c->prec == FS_SINGLE ? MPI_C_FLOAT_COMPLEX : MPI_C_DOUBLE_COMPLEX,
            .params = a->params,
            .hooks = t->hooks && e == 0 ? &c->hooks : NULL,
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
    /* A buffer kept from a transform of the other precision counts its
     * elements in that precision's size. */
    if (buf->prec != t->prec)
        fs_workbuf_release(buf);
    buf->prec = t->prec;
    if (st == FS_OK)
        st = fs_workbuf_reserve(buf, need);
    c->buf = buf;
    /* Second arrays trade places with the data buffer: as large as it. */
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
    if (st != FS_OK)
        fs_compute_free(&c);
    *out = c;
    return st;
}

static fs_status run_ops(fs_op **ops, int n, void *data, fs_progress *progress)
{
    double flops = 0;
    for (int i = 0; i < n; i++)
        flops += fs_op_flops(ops[i]);
    if (progress)
        fs_progress_begin(progress, "fft", flops, "flop");
    fs_status st = FS_OK;
    for (int i = 0; i < n && st == FS_OK; i++)
        st = fs_op_execute_on(ops[i], data);
    if (progress)
        fs_progress_end(progress);
    return st;
}

/* One exchange, its block FFTs counted as FFT time. */
static fs_status run_exchange(fs_compute *c, int e, fs_timers *timers, fs_progress *progress)
{
    fs_exchange *x = c->x[e];
    const fs_redist *rd = c->d->rd[e];
    fs_timer_start(timers, FS_PHASE_EXCHANGE);
    if (progress)
        fs_progress_begin(progress, "exchange",
                          (double)(rd->send_total - rd->send_elems[rd->self]) *
                              (double)fs_complex_bytes(c->prec),
                          "B");
    double hooks_before = x->stats.t_hooks_s;
    fs_status st = fs_exchange_execute(x, &c->buf->data, &c->buf->elems);
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
    fs_status st = check_data(c, data);
    for (int s = 0; s < c->t->nstages; s++) {
        fs_timer_start(timers, FS_PHASE_FFT);
        if (st == FS_OK)
            st = run_ops(c->op[s], c->t->nops[s], c->buf->data, progress);
        fs_timer_stop(timers, FS_PHASE_FFT);
        if (s + 1 >= c->t->nstages || !c->x[s])
            continue;
        if (fs_error_agree_quiet(c->comm, st) != FS_OK)
            break;
        st = run_exchange(c, s, timers, progress);
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

fs_status fs_compute_undo(fs_compute *c, void *data)
{
    const fs_transform *t = c->t;
    fs_status st = check_data(c, data);
    for (int sg = t->nstages - 1; sg >= 0; sg--) {
        if (st == FS_OK)
            st = run_ops_reverse(c->inv[sg], t->nops[sg], c->buf->data);
        if (sg > 0 && c->x_back[sg - 1]) {
            /* as in fs_compute_run: nobody waits in an exchange for a rank that failed */
            if (fs_error_agree_quiet(c->comm, st) != FS_OK)
                break;
            st = fs_exchange_execute(c->x_back[sg - 1], &c->buf->data, &c->buf->elems);
        }
        if (st == FS_OK && sg == 1 && c->inv_hooks)
            st = fs_op_execute_on(c->inv_hooks, c->buf->data);
    }
    return st;
}

fs_exchange_stats fs_compute_exchange_totals(const fs_compute *c)
{
    fs_exchange_stats t;
    memset(&t, 0, sizeof t);
    for (int e = 0; c && e < FS_MAX_EXCH; e++) {
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

size_t fs_compute_scratch_bytes(const fs_compute *c)
{
    size_t n = 0;
    for (int e = 0; c && e < FS_MAX_EXCH; e++)
        if (c->x[e])
            n += c->x[e]->scratch_bytes;
    return n;
}

void *fs_compute_data(const fs_compute *c)
{
    return c->buf->data;
}

int fs_compute_exchanges(const fs_compute *c)
{
    return c && c->x[0] != NULL;
}
