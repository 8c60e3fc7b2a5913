/* transform: see transform.h. */
#include "config.h"

#include "transform.h"

#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The axis split after the exchange (or before it, for the reversed slab):
 * the first axis past 0 long enough to give every rank a share, else the
 * longest one. */
static int choose_split_axis(int ndim, const int64_t *shape, int nranks)
{
    int best = 1;
    for (int k = 1; k < ndim; k++) {
        if (shape[k] >= nranks)
            return k;
        if (shape[k] > shape[best])
            best = k;
    }
    return best;
}

/* The four-step factors: n1 the largest divisor of n not above sqrt(n). */
static int64_t four_step_n1(int64_t n)
{
    int64_t best = 1;
    for (int64_t d = 1; d * d <= n; d++)
        if (n % d == 0)
            best = d;
    return best;
}

static void add_op(fs_op_spec *list, int *n, fs_op_spec op)
{
    list[(*n)++] = op;
}

static fs_op_spec c2c(const int *axes, int ndim, int sign)
{
    fs_op_spec s;
    memset(&s, 0, sizeof s);
    s.kind = FS_OP_C2C;
    s.sign = sign;
    for (int k = 0; k < ndim; k++)
        s.axes[k] = axes[k];
    return s;
}

/* FFTW's padded r2c along t's real axis, with complex transforms of axes. */
static fs_op_spec r2c(const fs_transform *t, const int *axes)
{
    fs_op_spec s;
    memset(&s, 0, sizeof s);
    s.kind = FS_OP_R2C;
    memcpy(s.axes, axes, sizeof s.axes);
    s.real_axis = t->real_axis;
    s.real_len = t->real_len;
    return s;
}

static int any(const int *axes, int ndim)
{
    for (int k = 0; k < ndim; k++)
        if (axes[k])
            return 1;
    return 0;
}

/* Three stages on a P1 x P2 grid: axes 0, 1 split, then 0, 2, then 1, 2.
 * Stage 0 transforms the axes from 2 on (the real one with FFTW's padded
 * layout for r2c), stage 1 axis 1, stage 2 axis 0. */
static fs_status plan_pencil(fs_transform *t, int ndim, fs_op_spec scale_op)
{
    t->nstages = 3;
    t->exchanges = 1;
    t->from_axis = 0;
    t->to_axis = 1;
    int s0[3][2] = {{0, 1}, {0, 2}, {1, 2}};
    memcpy(t->split, s0, sizeof s0);
    int rest[FS_LAYOUT_MAX_DIMS] = {0}, ax1[FS_LAYOUT_MAX_DIMS] = {0}, ax0[FS_LAYOUT_MAX_DIMS] = {0};
    for (int k = 2; k < ndim; k++)
        rest[k] = t->transform_axis[k];
    ax1[1] = t->transform_axis[1];
    ax0[0] = t->transform_axis[0];
    if (t->kind == FS_R2C) {
        t->padded = 1;
        t->shape[t->real_axis] = t->half_len;
        add_op(t->ops[0], &t->nops[0], r2c(t, rest));
    } else if (any(rest, ndim)) {
        add_op(t->ops[0], &t->nops[0], c2c(rest, ndim, t->sign));
    }
    if (any(ax1, ndim))
        add_op(t->ops[1], &t->nops[1], c2c(ax1, ndim, t->sign));
    if (any(ax0, ndim))
        add_op(t->ops[2], &t->nops[2], c2c(ax0, ndim, t->sign));
    add_op(t->ops[2], &t->nops[2], scale_op);
    return FS_OK;
}

/* The largest box any rank holds in any stage of a pencil grid. */
static int64_t pencil_peak(int ndim, const int64_t *shape, int p1, int p2)
{
    int s0[3][2] = {{0, 1}, {0, 2}, {1, 2}};
    int64_t peak = 0;
    for (int s = 0; s < 3; s++) {
        int64_t n = 1;
        for (int k = 0; k < ndim; k++) {
            int64_t len = shape[k];
            if (k == s0[s][0])
                len = (len + p1 - 1) / p1;
            else if (k == s0[s][1])
                len = (len + p2 - 1) / p2;
            n *= len;
        }
        peak = n > peak ? n : peak;
    }
    return peak;
}

fs_status fs_transform_choose_grid(const fs_transform_request *rq, int *pencil, int grid[2])
{
    int ndim = rq->ndim, P = rq->nranks;
    const int64_t *shape = rq->shape;
    *pencil = 0;
    grid[0] = P;
    grid[1] = 1;
    int possible = ndim >= 3 && rq->transform_axis[0] && rq->transform_axis[1];
    if (rq->grid[0]) {
        if (!possible)
            return fs_error_set(FS_ERR_USAGE,
                                "--grid=%dx%d: pencils need 3 or more axes with axes 0 and 1 "
                                "transformed",
                                rq->grid[0], rq->grid[1]);
        if (rq->grid[0] * rq->grid[1] != P)
            return fs_error_set(FS_ERR_USAGE, "--grid=%dx%d: is %d ranks, the job has %d",
                                rq->grid[0], rq->grid[1], rq->grid[0] * rq->grid[1], P);
        *pencil = 1;
        grid[0] = rq->grid[0];
        grid[1] = rq->grid[1];
        return FS_OK;
    }
    if (rq->decomp == FS_DECOMP_SLAB)
        return FS_OK;
    if (!possible) {
        if (rq->decomp == FS_DECOMP_PENCIL)
            return fs_error_set(FS_ERR_USAGE,
                                "--decomp=pencil: needs 3 or more axes with axes 0 and 1 "
                                "transformed");
        return FS_OK;
    }
    /* auto: slabs exchange the array once, pencils twice; slabs win while
     * every rank holds data in both stages. */
    int64_t longest_later = 0;
    for (int k = 1; k < ndim; k++)
        longest_later = shape[k] > longest_later ? shape[k] : longest_later;
    if (rq->decomp == FS_DECOMP_AUTO && shape[0] >= P && longest_later >= P)
        return FS_OK;
    /* The grid whose largest local box is smallest, then the squarest. */
    int best = 0;
    int64_t best_peak = 0;
    for (int p1 = 1; p1 <= P; p1++) {
        if (P % p1)
            continue;
        int64_t peak = pencil_peak(ndim, shape, p1, P / p1);
        int sq = abs(p1 - P / p1), best_sq = best ? abs(best - P / best) : 0;
        if (!best || peak < best_peak || (peak == best_peak && sq < best_sq)) {
            best = p1;
            best_peak = peak;
        }
    }
    *pencil = 1;
    grid[0] = best;
    grid[1] = P / best;
    return FS_OK;
}

int fs_transform_exchange_dim(const fs_transform *t, int s)
{
    return t->split[s][0] != t->split[s + 1][0] ? 0 : 1;
}

fs_box fs_transform_box(const fs_transform *t, int s, int c1, int c2)
{
    fs_box b = fs_box_full(t->ndim, t->shape);
    int c[2] = {c1, c2};
    for (int g = 0; g < 2; g++) {
        int a = t->split[s][g];
        if (a == FS_GATHER) {
            if (c[g] != 0)
                for (int k = 0; k < b.ndim; k++)
                    b.count[k] = 0;
        } else if (a >= 0) {
            fs_split_block(t->shape[a], t->grid[g], c[g], &b.count[a], &b.start[a]);
        }
    }
    if (fs_box_elems(&b) == 0)
        for (int k = 0; k < b.ndim; k++)
            b.count[k] = 0;
    return b;
}

/* The kind, direction, precision and the halved axis of a real transform. */
static fs_status plan_kind(const fs_transform_request *rq, fs_transform *t)
{
    t->in_ndim = rq->ndim;
    t->in_dtype = rq->in_dtype;
    memcpy(t->in_shape, rq->shape, sizeof t->in_shape);
    memcpy(t->transform_axis, rq->transform_axis, sizeof t->transform_axis);
    t->kind = !rq->real ? FS_C2C : rq->inverse ? FS_C2R : FS_R2C;
    t->sign = rq->inverse ? FFTW_BACKWARD : FFTW_FORWARD;
    t->prec = rq->prec;
    t->real_axis = t->kind == FS_C2C ? -1 : rq->real_axis;
    if (t->kind == FS_R2C) {
        if (!fs_dtype_is_real(rq->in_dtype))
            return fs_error_set(FS_ERR_INPUT,
                                "--real: the forward real transform needs real input (float32, "
                                "float64 or integers); %s is %s",
                                rq->in_name, rq->in_type_name);
        t->real_len = rq->shape[t->real_axis];
        t->half_len = t->real_len / 2 + 1;
    } else if (t->kind == FS_C2R) {
        t->half_len = rq->shape[t->real_axis];
        int64_t n = rq->last_size;
        if (n == 0 && t->half_len < 2)
            return fs_error_set(FS_ERR_USAGE,
                                "--inverse --real: axis %d has length 1; give the output length "
                                "with --last-size",
                                t->real_axis);
        if (n == 0)
            n = 2 * (t->half_len - 1);
        if (n / 2 + 1 != t->half_len)
            return fs_error_set(rq->last_size_given ? FS_ERR_USAGE : FS_ERR_INPUT,
                                "%s %lld: does not fit axis %d of length %lld (a real length n "
                                "has n/2+1 = %lld complex values)",
                                rq->last_size_given ? "--last-size" : "the last_size attribute,",
                                (long long)n, t->real_axis, (long long)t->half_len,
                                (long long)(n / 2 + 1));
        t->real_len = n;
    }
    return FS_OK;
}

/* The output's shape and type, the scaling (as an operation) and the
 * nominal flop count. */
static fs_op_spec plan_output(const fs_transform_request *rq, fs_transform *t)
{
    int ndim = rq->ndim;
    t->out_ndim = ndim;
    memcpy(t->out_shape, rq->shape, sizeof t->out_shape);
    if (t->kind == FS_R2C)
        t->out_shape[t->real_axis] = t->half_len;
    if (t->kind == FS_C2R)
        t->out_shape[t->real_axis] = t->real_len;
    t->out_type = t->kind == FS_C2R ? fs_real_dtype(t->prec) : fs_complex_dtype(t->prec);
    double npts = 1, nall = 1;
    for (int k = 0; k < ndim; k++) {
        int64_t len = k == t->real_axis ? t->real_len : rq->shape[k];
        nall *= (double)len;
        if (t->transform_axis[k])
            npts *= (double)len;
    }
    fs_norm scaled = rq->inverse ? FS_NORM_BACKWARD : FS_NORM_FORWARD;
    t->scale = rq->norm == FS_NORM_ORTHO ? 1.0 / sqrt(npts) : rq->norm == scaled ? 1.0 / npts : 1.0;
    t->nominal_flops = npts > 1 ? (t->kind == FS_C2C ? 5.0 : 2.5) * nall * log2(npts) : 0;
    fs_op_spec scale_op;
    memset(&scale_op, 0, sizeof scale_op);
    scale_op.kind = FS_OP_SCALE;
    scale_op.factor = t->scale;
    return scale_op;
}

/* A 1-D transform of N = n1 x n2 on several ranks: the four-step
 * factorisation, a 2-D transform (n2, n1) with twiddles between the passes. */
static fs_status plan_four_step(const fs_transform_request *rq, fs_transform *t, int64_t n1,
                                fs_op_spec scale_op)
{
    int64_t N = rq->shape[0];
    t->fold = 1;
    t->n1 = n1;
    t->n2 = N / n1;
    t->ndim = 2;
    t->shape[0] = t->n2;
    t->shape[1] = t->n1;
    t->exchanges = 1;
    t->from_axis = 1;
    t->to_axis = 0;
    t->nstages = 2;
    t->grid[0] = rq->nranks;
    t->grid[1] = 1;
    t->split[0][0] = 1;
    t->split[1][0] = 0;
    t->split[0][1] = t->split[1][1] = -1;
    int ax0[FS_LAYOUT_MAX_DIMS] = {1}, ax1[FS_LAYOUT_MAX_DIMS] = {0, 1};
    add_op(t->ops[0], &t->nops[0], c2c(ax0, 2, t->sign));
    fs_op_spec tw;
    memset(&tw, 0, sizeof tw);
    tw.kind = FS_OP_TWIDDLE;
    tw.sign = t->sign;
    tw.twiddle_n = N;
    /* pairwise multiplies block by block while the blocks travel */
    if (rq->hooks)
        t->hooks = t->hook_twiddle = 1;
    else
        add_op(t->ops[0], &t->nops[0], tw);
    add_op(t->ops[1], &t->nops[1], c2c(ax1, 2, t->sign));
    fs_op_spec tr;
    memset(&tr, 0, sizeof tr);
    tr.kind = FS_OP_TRANSPOSE;
    add_op(t->ops[1], &t->nops[1], tr);
    add_op(t->ops[1], &t->nops[1], scale_op);
    return FS_OK;
}

/* Slabs: the split axes of the two stages, and whether the real axis can
 * use FFTW's padded layout (it must be the last axis and whole). */
static void plan_slab_layout(const fs_transform_request *rq, fs_transform *t)
{
    int ndim = rq->ndim, P = rq->nranks, a = t->real_axis;
    if (!t->exchanges) {
        t->from_axis = t->to_axis = 0;
    } else if (ndim == 1) {
        t->from_axis = 0;
        t->to_axis = -1;
    } else if (t->kind == FS_C2R && a != 0) {
        /* c2r comes last, on the real axis whole: end split along axis 0. */
        t->to_axis = 0;
        t->from_axis = choose_split_axis(ndim, rq->shape, P);
    } else {
        t->from_axis = 0;
        t->to_axis = choose_split_axis(ndim, rq->shape, P);
    }
    t->nstages = t->exchanges ? 2 : 1;
    t->split[0][0] = P > 1 ? t->from_axis : -1;
    t->split[1][0] = t->to_axis >= 0 ? t->to_axis : FS_GATHER;
    t->split[0][1] = t->split[1][1] = -1;
    int split_first = P > 1 ? t->from_axis : -1;
    int split_last = !t->exchanges ? split_first : t->to_axis;
    if (t->kind == FS_R2C)
        t->padded = a == ndim - 1 && a != split_first;
    if (t->kind == FS_C2R)
        t->padded = a == ndim - 1 && a != split_last;
    if (t->kind == FS_R2C && t->padded)
        t->shape[a] = t->half_len;
    if (t->kind == FS_C2R && !t->padded)
        t->shape[a] = t->real_len;
}

/* c2c on slabs: B the axes done before the exchange, A after it. An
 * overlapping strategy gets the axes whole on both sides as block work: all
 * but the last before a block leaves, the last after it arrived. */
static void plan_slab_c2c(const fs_transform_request *rq, fs_transform *t, int *B, const int *A)
{
    int ndim = t->ndim;
    if (rq->hooks && t->exchanges && t->to_axis >= 0) {
        int last = -1;
        for (int k = 0; k < ndim; k++) {
            if (!B[k] || k == t->to_axis)
                continue;
            B[k] = 0;
            t->hook_axes_pre[k] = 1;
            last = k;
        }
        if (last >= 0) {
            t->hook_axes_pre[last] = 0;
            t->hook_axes_post[last] = 1;
            t->hooks = 1;
        }
    }
    if (any(B, ndim))
        add_op(t->ops[0], &t->nops[0], c2c(B, ndim, t->sign));
    if (any(A, ndim))
        add_op(t->ops[1], &t->nops[1], c2c(A, ndim, t->sign));
}

static void plan_slab_r2c(fs_transform *t, const int *B, const int *A)
{
    int ndim = t->ndim;
    if (t->padded) {
        add_op(t->ops[0], &t->nops[0], r2c(t, B));
    } else if (any(B, ndim)) {
        /* The full complex transform; the write keeps n/2+1 values. */
        add_op(t->ops[0], &t->nops[0], c2c(B, ndim, t->sign));
    }
    if (any(A, ndim))
        add_op(t->ops[1], &t->nops[1], c2c(A, ndim, t->sign));
}

/* c2r: the complex axes first, the real axis last, where it is whole. */
static void plan_slab_c2r(fs_transform *t, int *B, int *A)
{
    int ndim = t->ndim, a = t->real_axis;
    fs_op_spec r;
    memset(&r, 0, sizeof r);
    r.kind = t->padded ? FS_OP_C2R : FS_OP_C2R_VIA_C2C;
    r.real_axis = a;
    r.real_len = t->real_len;
    B[a] = 0;
    A[a] = 0;
    if (any(B, ndim))
        add_op(t->ops[0], &t->nops[0], c2c(B, ndim, t->sign));
    fs_op_spec *side = t->exchanges ? t->ops[1] : t->ops[0];
    int *nside = t->exchanges ? &t->nops[1] : &t->nops[0];
    if (any(A, ndim))
        add_op(t->ops[1], &t->nops[1], c2c(A, ndim, t->sign));
    add_op(side, nside, r);
}

/* Slabs: split along one axis, then (after one exchange) another. */
static fs_status plan_slab(const fs_transform_request *rq, fs_transform *t, fs_op_spec scale_op)
{
    plan_slab_layout(rq, t);
    int T[FS_LAYOUT_MAX_DIMS], B[FS_LAYOUT_MAX_DIMS], A[FS_LAYOUT_MAX_DIMS] = {0};
    memcpy(T, t->transform_axis, sizeof T);
    memcpy(B, T, sizeof B);
    if (t->exchanges) {
        B[t->from_axis] = 0;
        A[t->from_axis] = T[t->from_axis];
    }
    if (t->kind == FS_C2C)
        plan_slab_c2c(rq, t, B, A);
    else if (t->kind == FS_R2C)
        plan_slab_r2c(t, B, A);
    else
        plan_slab_c2r(t, B, A);
    if (t->exchanges)
        add_op(t->ops[1], &t->nops[1], scale_op);
    else
        add_op(t->ops[0], &t->nops[0], scale_op);
    return FS_OK;
}

fs_status fs_transform_plan(const fs_transform_request *rq, fs_transform *t)
{
    memset(t, 0, sizeof *t);
    fs_status st = plan_kind(rq, t);
    if (st != FS_OK)
        return st;
    fs_op_spec scale_op = plan_output(rq, t);
    int ndim = rq->ndim, P = rq->nranks;

    int64_t n1 = ndim == 1 ? four_step_n1(t->kind == FS_R2C ? t->real_len : rq->shape[0]) : 1;
    if (ndim == 1 && P > 1 && t->kind != FS_C2R && n1 > 1)
        return plan_four_step(rq, t, n1, scale_op);

    t->ndim = ndim;
    memcpy(t->shape, rq->shape, sizeof t->shape);
    t->exchanges = P > 1 && t->transform_axis[0];
    t->grid[0] = P;
    t->grid[1] = 1;
    int a = t->real_axis;
    if (t->exchanges && t->kind != FS_C2R && !(t->kind == FS_R2C && a != ndim - 1)) {
        if ((st = fs_transform_choose_grid(rq, &t->pencil, t->grid)) != FS_OK)
            return st;
    } else if (rq->decomp == FS_DECOMP_PENCIL || rq->grid[0]) {
        return fs_error_set(FS_ERR_USAGE,
                            "--decomp=pencil: needs an exchange on a 3-D or larger input, and is "
                            "not available for --inverse --real or a real axis before axis 2");
    }
    if (t->pencil)
        return plan_pencil(t, ndim, scale_op);
    return plan_slab(rq, t, scale_op);
}

/* box cut to [0, limit) along axis */
static fs_box clip(const fs_box *b, int axis, int64_t limit)
{
    fs_box c = *b;
    int64_t end = b->start[axis] + b->count[axis];
    if (end > limit)
        end = limit;
    c.count[axis] = end > b->start[axis] ? end - b->start[axis] : 0;
    if (fs_box_elems(&c) == 0)
        for (int k = 0; k < c.ndim; k++)
            c.count[k] = 0;
    return c;
}

/* Real elements as the real parts of complex storage (every other element
 * of the doubled last axis), starting at box `at` inside storage `storage`. */
static fs_io_map real_parts(const fs_transform *t, const fs_box *file, const fs_box *storage)
{
    fs_io_map m = fs_io_map_plain(file, fs_real_dtype(t->prec));
    int last = storage->ndim - 1;
    for (int k = 0; k < storage->ndim; k++) {
        m.mem_dims[k] = storage->count[k];
        m.mem_start[k] = fs_box_elems(file) ? file->start[k] - storage->start[k] : 0;
    }
    m.mem_dims[last] *= 2;
    m.mem_start[last] *= 2;
    m.mem_stride_last = 2;
    return m;
}

fs_io_map fs_transform_read_map(const fs_transform *t, const fs_box *from)
{
    int real = fs_dtype_is_real(t->in_dtype);
    fs_box file = *from;
    if (t->kind == FS_C2R && !t->padded)
        file = clip(from, t->real_axis, t->half_len);
    if (t->kind == FS_R2C && t->padded) {
        /* n reals in each padded row of n/2+1 complex */
        file.count[t->real_axis] = fs_box_elems(from) ? t->real_len : 0;
        fs_io_map m = fs_io_map_plain(&file, fs_real_dtype(t->prec));
        for (int k = 0; k < from->ndim; k++)
            m.mem_dims[k] = from->count[k];
        m.mem_dims[t->real_axis] = 2 * t->half_len;
        return m;
    }
    fs_io_map m;
    if (real) {
        m = real_parts(t, &file, from);
    } else {
        m = fs_io_map_plain(&file, fs_complex_dtype(t->prec));
        for (int k = 0; k < from->ndim; k++) {
            m.mem_dims[k] = from->count[k];
            m.mem_start[k] = fs_box_elems(&file) ? file.start[k] - from->start[k] : 0;
        }
    }
    if (t->fold)
        m.fold_inner = t->n1;
    return m;
}

fs_io_map fs_transform_write_map(const fs_transform *t, const fs_box *to)
{
    if (t->fold) {
        /* After the transpose a rank holds k1 = 0 .. n1-1 by its k2 range:
         * output positions k1 * n2 + k2. */
        fs_box file;
        memset(&file, 0, sizeof file);
        file.ndim = 2;
        file.start[1] = to->start[0];
        file.count[0] = fs_box_elems(to) ? t->n1 : 0;
        file.count[1] = fs_box_elems(to) ? to->count[0] : 0;
        fs_io_map m = fs_io_map_plain(&file, fs_complex_dtype(t->prec));
        m.fold_inner = t->n2;
        if (t->kind == FS_R2C)
            m.fold_limit = t->half_len;
        return m;
    }
    if (t->kind == FS_R2C && !t->padded) {
        fs_box file = clip(to, t->real_axis, t->half_len);
        fs_io_map m = fs_io_map_plain(&file, fs_complex_dtype(t->prec));
        for (int k = 0; k < to->ndim; k++)
            m.mem_dims[k] = to->count[k];
        return m;
    }
    if (t->kind == FS_C2R && t->padded) {
        fs_box file = *to;
        file.count[t->real_axis] = fs_box_elems(to) ? t->real_len : 0;
        fs_io_map m = fs_io_map_plain(&file, fs_real_dtype(t->prec));
        for (int k = 0; k < to->ndim; k++)
            m.mem_dims[k] = to->count[k];
        m.mem_dims[t->real_axis] = 2 * t->half_len;
        return m;
    }
    if (t->kind == FS_C2R)
        return real_parts(t, to, to);
    return fs_io_map_plain(to, fs_complex_dtype(t->prec));
}
