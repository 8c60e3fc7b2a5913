/* SPDX-License-Identifier: GPL-3.0-or-later */
/* transform: see transform.h. */
#include "config.h"

#include "plan/transform.h"

#include <fftw3.h>
#include <math.h>
#include <stdio.h>
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

/* ---------------------------------------------------------------- layouts
 *
 * A layout is a decomposition before its operations: the grid and the axes
 * each stage splits. Batch axes (not transformed) never need to be whole,
 * so a layout may split them in every stage; a transformed axis must be
 * whole in some stage. Today's layouts (slabs from axis 0, pencils on axes
 * 0, 1 and 2) are kept wherever every rank holds data in them; otherwise
 * every layout of the families below is costed and the best one taken. */

typedef struct layout {
    int pencil;                  /* a P1 x P2 grid splitting two axes per stage */
    int grid[2];
    int nstages;
    int split[FS_MAX_STAGES][2]; /* as fs_transform's */
} layout;

typedef struct layout_cost {
    int idle;                    /* some rank holds nothing in some stage */
    int exchanges;
    int64_t peak;                /* the largest local box, in elements */
    int skew;                    /* |P1 - P2| of a pencil grid */
} layout_cost;

static int split_in(const int split[2], int k)
{
    return split[0] == k || split[1] == k;
}

/* Whether L can compute t: every transformed axis whole in some stage, and
 * c2r's halved axis whole in the last (its transform comes last). Gives
 * the working shape and whether FFTW's padded real layout is used: r2c
 * when the halved axis is the array's last and whole in the first stage,
 * c2r when it is the array's last. */
static int layout_fits(const fs_transform *t, const layout *L, int64_t *shape, int *padded)
{
    int ndim = t->in_ndim, r = t->real_axis;
    for (int k = 0; k < ndim; k++) {
        int whole = 0;
        for (int s = 0; s < L->nstages; s++)
            whole = whole || !split_in(L->split[s], k);
        if (t->transform_axis[k] && !whole)
            return 0;
    }
    if (t->kind == FS_C2R && split_in(L->split[L->nstages - 1], r))
        return 0;
    memcpy(shape, t->in_shape, sizeof t->in_shape);
    *padded = 0;
    if (t->kind == FS_R2C && r == ndim - 1 && !split_in(L->split[0], r)) {
        *padded = 1;
        shape[r] = t->half_len;
    }
    if (t->kind == FS_C2R) {
        *padded = r == ndim - 1;
        if (!*padded)
            shape[r] = t->real_len;
    }
    return 1;
}

static layout_cost cost_of(const layout *L, int ndim, const int64_t *shape)
{
    layout_cost c = {0, L->nstages - 1, 0, L->pencil ? abs(L->grid[0] - L->grid[1]) : 0};
    int64_t P = (int64_t)L->grid[0] * L->grid[1];
    for (int s = 0; s < L->nstages; s++) {
        int64_t largest = 1, holders = 1;
        for (int k = 0; k < ndim; k++) {
            int64_t len = shape[k];
            for (int g = 0; g < 2; g++)
                if (L->split[s][g] == k) {
                    holders *= len < L->grid[g] ? len : L->grid[g];
                    len = (len + L->grid[g] - 1) / L->grid[g];
                }
            largest *= len;
        }
        if (split_in(L->split[s], FS_GATHER))
            holders = 1;
        c.idle = c.idle || holders < P;
        c.peak = largest > c.peak ? largest : c.peak;
    }
    return c;
}

/* a strictly before b: layouts where every rank holds data first. Among
 * those fewer exchanges (each moves the whole array), then a largest box
 * smaller by more than an eighth: layouts come in order of their split
 * axes, and earlier axes read longer runs of the file. Among the others
 * the smaller largest box, then fewer exchanges. Then the squarer grid. */
static int better(const layout_cost *a, const layout_cost *b)
{
    if (a->idle != b->idle)
        return a->idle < b->idle;
    if (a->idle) {
        if (a->peak != b->peak)
            return a->peak < b->peak;
        if (a->exchanges != b->exchanges)
            return a->exchanges < b->exchanges;
    } else {
        if (a->exchanges != b->exchanges)
            return a->exchanges < b->exchanges;
        if (a->peak * 8 < b->peak * 7 || b->peak * 8 < a->peak * 7)
            return a->peak < b->peak;
    }
    return a->skew < b->skew;
}

/* The best layout so far; the first of equals stays. */
typedef struct search {
    const fs_transform *t;
    int have;
    layout best;
    layout_cost cost;
} search;

static void consider(search *sr, const layout *L)
{
    int64_t shape[FS_LAYOUT_MAX_DIMS];
    int padded;
    if (!layout_fits(sr->t, L, shape, &padded))
        return;
    layout_cost c = cost_of(L, sr->t->in_ndim, shape);
    if (!sr->have || better(&c, &sr->cost)) {
        sr->have = 1;
        sr->best = *L;
        sr->cost = c;
    }
}

static layout empty_layout(int pencil, int p1, int p2, int nstages)
{
    layout L = {pencil, {p1, p2}, nstages, {{-1, -1}, {-1, -1}, {-1, -1}}};
    return L;
}

/* Grids P x 1: a batch axis split alone (no exchange), or with
 * exchanges > 0 a transformed axis a split and then another axis b (one
 * exchange), b taken from the axes after a first. */
static void search_slabs(search *sr, int P, int exchanges)
{
    const fs_transform *t = sr->t;
    int ndim = t->in_ndim;
    layout L = empty_layout(0, P, 1, 1);
    for (int b = 0; b < ndim; b++)
        if (!t->transform_axis[b]) {
            L.split[0][0] = b;
            consider(sr, &L);
        }
    L.nstages = 2;
    for (int a = 0; a < ndim && exchanges > 0; a++)
        for (int i = 1; i < ndim && t->transform_axis[a]; i++) {
            L.split[0][0] = a;
            L.split[1][0] = (a + i) % ndim;
            consider(sr, &L);
        }
}

/* Grids p1 x p2: two batch axes (no exchange); with exchanges > 0 a
 * batch axis c over the rows in every stage while a transformed axis a
 * moves to b over the columns (one exchange), or {x, y}, {x, z}, {y, z}
 * with x and y transformed (two exchanges, as today's pencils on axes 0, 1
 * and 2). */
static void search_pencils(search *sr, int p1, int p2, int exchanges)
{
    const fs_transform *t = sr->t;
    const int *T = t->transform_axis;
    int ndim = t->in_ndim;
    layout L = empty_layout(1, p1, p2, 1);
    for (int b1 = 0; b1 < ndim; b1++)
        for (int b2 = b1 + 1; b2 < ndim && !T[b1]; b2++)
            if (!T[b2]) {
                L.split[0][0] = b1;
                L.split[0][1] = b2;
                consider(sr, &L);
            }
    if (exchanges == 0)
        return;
    L.nstages = 2;
    for (int c = 0; c < ndim; c++)
        for (int a = 0; a < ndim && !T[c]; a++)
            for (int i = 1; i < ndim && T[a]; i++) {
                int b = (a + i) % ndim;
                if (b == c)
                    continue;
                int s[2][2] = {{c, a}, {c, b}};
                memcpy(L.split, s, sizeof s);
                consider(sr, &L);
            }
    L = empty_layout(1, p1, p2, 3);
    for (int x = 0; x < ndim; x++)
        for (int i = 1; i < ndim && T[x]; i++) {
            int y = (x + i) % ndim;
            for (int j = 1; j < ndim && T[y]; j++) {
                int z = (y + j) % ndim;
                if (z == x)
                    continue;
                int s[3][2] = {{x, y}, {x, z}, {y, z}};
                memcpy(L.split, s, sizeof s);
                consider(sr, &L);
            }
        }
}

/* The largest box any rank holds in any stage of today's pencils. */
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

/* Today's pencils: axes 0, 1 split, then 0, 2, then 1, 2, on the grid
 * given or the one whose largest local box is smallest, then the squarest. */
static layout classic_pencils(const fs_transform_request *rq)
{
    int P = rq->nranks, best = rq->grid[0];
    int64_t best_peak = 0;
    for (int p1 = 1; p1 <= P && !rq->grid[0]; p1++) {
        if (P % p1)
            continue;
        int64_t peak = pencil_peak(rq->ndim, rq->shape, p1, P / p1);
        int sq = abs(p1 - P / p1), best_sq = best ? abs(best - P / best) : 0;
        if (!best || peak < best_peak || (peak == best_peak && sq < best_sq)) {
            best = p1;
            best_peak = peak;
        }
    }
    layout L = empty_layout(1, best, P / best, 3);
    int s[3][2] = {{0, 1}, {0, 2}, {1, 2}};
    memcpy(L.split, s, sizeof s);
    return L;
}

/* Today's layouts. Slabs from axis 0 to choose_split_axis's (reversed for
 * c2r, so the halved axis ends whole, and for rq->planes_last), or one
 * slab of axis 0 without exchange when axis 0 is not transformed; auto
 * takes pencils when a slab would leave ranks without data, on 3-D or
 * larger inputs with axes 0 and 1 transformed (not for c2r, nor r2c with
 * the halved axis not last). 0 when pencils are asked for where today's
 * do not apply. */
static int classic_layout(const fs_transform_request *rq, const fs_transform *t, int want_pencil,
                          layout *L)
{
    int ndim = rq->ndim, P = rq->nranks, a = t->real_axis;
    const int64_t *shape = rq->shape;
    int exchanges = P > 1 && t->transform_axis[0];
    int pencils = exchanges && ndim >= 3 && t->transform_axis[1] && t->kind != FS_C2R &&
                  !(t->kind == FS_R2C && a != ndim - 1);
    int64_t longest_later = 0;
    for (int k = 1; k < ndim; k++)
        longest_later = shape[k] > longest_later ? shape[k] : longest_later;
    int slabs_fill = shape[0] >= P && longest_later >= P;
    if (want_pencil || (rq->decomp == FS_DECOMP_AUTO && pencils && !slabs_fill)) {
        if (pencils)
            *L = classic_pencils(rq);
        return pencils;
    }
    *L = empty_layout(0, P, 1, exchanges ? 2 : 1);
    if (!exchanges) {
        L->split[0][0] = P > 1 ? 0 : -1;
    } else if (ndim == 1) {
        L->split[0][0] = 0;
        L->split[1][0] = FS_GATHER;
    } else if ((t->kind == FS_C2R && a != 0) || rq->planes_last) {
        L->split[0][0] = choose_split_axis(ndim, shape, P);
        L->split[1][0] = 0;
    } else {
        L->split[0][0] = 0;
        L->split[1][0] = choose_split_axis(ndim, shape, P);
    }
    return 1;
}

/* Every layout of the families allowed (slabs, pencils, or both for auto),
 * with at most `exchanges` exchanges. */
static void search_all(const fs_transform_request *rq, int want_pencil, int exchanges, search *sr)
{
    int P = rq->nranks;
    if (P < 2)
        return;
    if (!want_pencil)
        search_slabs(sr, P, exchanges);
    for (int p1 = 1; p1 <= P && (want_pencil || rq->decomp == FS_DECOMP_AUTO); p1++)
        if (P % p1 == 0 && (!rq->grid[0] || p1 == rq->grid[0]))
            search_pencils(sr, p1, P / p1, exchanges);
}

/* The layout for rq->decomp / rq->grid (usage errors recorded). In order:
 * today's layout when it needs no exchange and every rank holds data in
 * it; batch axes alone when they give every rank data; today's layout when
 * every rank holds data; the best of all (see better). */
static fs_status choose_layout(const fs_transform_request *rq, const fs_transform *t, layout *L)
{
    int P = rq->nranks;
    int want_pencil = rq->grid[0] || rq->decomp == FS_DECOMP_PENCIL;
    char what[64];
    if (rq->grid[0])
        snprintf(what, sizeof what, "--grid=%dx%d", rq->grid[0], rq->grid[1]);
    else
        snprintf(what, sizeof what, "--decomp=pencil");
    if (rq->grid[0] && (int64_t)rq->grid[0] * rq->grid[1] != P)
        return fs_error_set(FS_ERR_USAGE, "%s: is %lld ranks, the job has %d", what,
                            (long long)rq->grid[0] * rq->grid[1], P);
    if (want_pencil && (rq->ndim < 3 || P < 2))
        return fs_error_set(FS_ERR_USAGE,
                            "%s: pencils split two axes in every stage, so they need a 3-D or "
                            "larger input and 2 or more ranks",
                            what);
    search classic = {t, 0, empty_layout(0, P, 1, 1), {0, 0, 0, 0}};
    search batch = classic, all = classic;
    layout today;
    if (classic_layout(rq, t, want_pencil, &today))
        consider(&classic, &today);
    int today_fills = classic.have && !classic.cost.idle;
    if (!(today_fills && classic.cost.exchanges == 0)) {
        search_all(rq, want_pencil, 0, &batch);
        if (batch.have && !batch.cost.idle) {
            *L = batch.best;
            return FS_OK;
        }
    }
    if (today_fills) {
        *L = classic.best;
        return FS_OK;
    }
    if (classic.have)
        all = classic;
    search_all(rq, want_pencil, 2, &all);
    if (!all.have)
        return fs_error_set(FS_ERR_USAGE, "%s: no decomposition fits this transform", what);
    *L = all.best;
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
        if (a == FS_GATHER && c[g] != 0)
            b.count[0] = 0; /* everything on member 0: emptied below */
        else if (a >= 0)
            fs_split_block(fs_domain_split_length(t, s, g), t->grid[g], c[g], &b.count[a],
                           &b.start[a]);
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
    fs_domain_plan(rq, t);
    memcpy(t->transform_axis, rq->transform_axis, sizeof t->transform_axis);
    t->naxes = rq->naxes;
    memcpy(t->axes, rq->axes, sizeof t->axes);
    for (int k = 0; !rq->naxes && k < rq->ndim; k++)
        if (rq->transform_axis[k])
            t->axes[t->naxes++] = k;
    t->norm = rq->norm;
    fs_status st = fs_r2r_take_request(rq, t);
    if (st != FS_OK)
        return st;
    t->sign = rq->inverse ? FFTW_BACKWARD : FFTW_FORWARD;
    t->prec = rq->prec;
    t->real_axis = t->kind == FS_C2C || t->kind == FS_R2R ? -1 : rq->real_axis;
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
    t->out_type = t->kind == FS_C2R ? fs_real_dtype(t->prec) : t->work_type;
    t->round_trip = rq->round_trip;
    if (t->round_trip) {
        /* the field again (its part kept): real input gives real values */
        for (int k = 0; k < ndim; k++)
            t->out_shape[k] = rq->keep_shape[k] ? rq->keep_shape[k] : t->read_shape[k];
        t->out_type = rq->in_dtype == FS_DTYPE_COMPLEX64 || rq->in_dtype == FS_DTYPE_COMPLEX128
                          ? fs_complex_dtype(t->prec)
                          : fs_real_dtype(t->prec);
    }
    double npts = 1, nall = 1, points = fs_transform_points(t);
    for (int k = 0; k < ndim; k++) {
        int64_t len = k == t->real_axis ? t->real_len : rq->shape[k];
        nall *= (double)len;
        if (t->transform_axis[k])
            npts *= (double)len;
    }
    fs_norm scaled = rq->inverse ? FS_NORM_BACKWARD : FS_NORM_FORWARD;
    t->scale = 1.0 / (rq->norm == FS_NORM_ORTHO ? sqrt(points) : rq->norm == scaled ? points : 1.0);
    t->nominal_flops = npts > 1 ? fs_transform_flop_rate(t) * nall * log2(npts) : 0;
    fs_op_spec scale_op;
    memset(&scale_op, 0, sizeof scale_op);
    scale_op.kind = FS_OP_SCALE;
    scale_op.factor = t->scale;
    scale_op.reals = fs_dtype_is_real(t->work_type);
    return scale_op;
}

/* A 1-D transform of N = n1 x n2: the four-step, a 2-D transform (n2, n1)
 * with twiddles between the passes; on one rank without exchange, in one
 * stage: FFTW's plan of one line of N holds up to several times the array
 * (more than the footprint can know), its lines of n1 and n2 little. */
static fs_status plan_four_step(const fs_transform_request *rq, fs_transform *t, int64_t n1,
                                fs_op_spec scale_op)
{
    int64_t N = rq->shape[0];
    int one = rq->nranks == 1, last = one ? 0 : 1;
    t->fold = 1;
    t->n1 = n1;
    t->n2 = N / n1;
    t->ndim = 2;
    t->shape[0] = t->n2;
    t->shape[1] = t->n1;
    t->exchanges = !one;
    t->from_axis = 1;
    t->to_axis = one ? 1 : 0;
    t->nstages = last + 1;
    t->grid[0] = rq->nranks;
    t->grid[1] = 1;
    t->split[0][0] = 1;
    t->split[1][0] = one ? -1 : 0;
    t->split[0][1] = t->split[1][1] = -1;
    int ax0[FS_LAYOUT_MAX_DIMS] = {1}, ax1[FS_LAYOUT_MAX_DIMS] = {0, 1};
    if (t->windowed)
        add_op(t->ops[0], &t->nops[0], fs_domain_window_op(t));
    add_op(t->ops[0], &t->nops[0], c2c(ax0, 2, t->sign));
    fs_op_spec tw;
    memset(&tw, 0, sizeof tw);
    tw.kind = FS_OP_TWIDDLE;
    tw.sign = t->sign;
    tw.twiddle_n = N;
    /* pairwise multiplies block by block while the blocks travel */
    if (rq->hooks && !one)
        t->hooks = t->hook_twiddle = 1;
    else
        add_op(t->ops[0], &t->nops[0], tw);
    add_op(t->ops[last], &t->nops[last], c2c(ax1, 2, t->sign));
    fs_op_spec tr;
    memset(&tr, 0, sizeof tr);
    tr.kind = FS_OP_TRANSPOSE;
    add_op(t->ops[last], &t->nops[last], tr);
    add_op(t->ops[last], &t->nops[last], scale_op);
    return FS_OK;
}

/* t's decomposition from L: grid, stages, working shape, split axes. */
static void apply_layout(const fs_transform_request *rq, fs_transform *t, const layout *L)
{
    t->ndim = rq->ndim;
    layout_fits(t, L, t->shape, &t->padded);
    t->pencil = L->pencil;
    t->grid[0] = L->grid[0];
    t->grid[1] = L->grid[1];
    t->nstages = L->nstages;
    memcpy(t->split, L->split, sizeof t->split);
    t->exchanges = L->nstages > 1;
    if (t->pencil) {
        t->from_axis = L->split[0][0];
        t->to_axis = L->split[0][1];
    } else if (!t->exchanges) {
        t->from_axis = t->to_axis = L->split[0][0] >= 0 ? L->split[0][0] : 0;
    } else {
        t->from_axis = L->split[0][0];
        t->to_axis = L->split[1][0] == FS_GATHER ? -1 : L->split[1][0];
    }
}

/* c2c on slabs with an overlapping strategy: the axes B done before the
 * exchange, whole on both sides of it, become block work: all but the last
 * before a block leaves, the last after it arrived. */
static void plan_hooks(const fs_transform_request *rq, fs_transform *t, int *B)
{
    if (!rq->hooks || t->pencil || !t->exchanges || t->to_axis < 0)
        return;
    int last = -1;
    for (int k = 0; k < t->ndim; k++) {
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

/* The operations of every stage: each transformed axis in the first stage
 * where it is whole (cosine and sine after complex ones), r2c in FFTW's
 * padded layout in the first, c2r's halved axis last; the scaling at the end. */
static void plan_stages(const fs_transform_request *rq, fs_transform *t, fs_op_spec scale_op)
{
    int ndim = t->ndim, last = t->nstages - 1, r = t->real_axis;
    int axes[FS_MAX_STAGES][FS_LAYOUT_MAX_DIMS] = {{0}};
    int rax[FS_MAX_STAGES][FS_LAYOUT_MAX_DIMS] = {{0}};
    for (int k = 0; k < ndim; k++) {
        if (!t->transform_axis[k] || (t->kind == FS_C2R && k == r))
            continue;
        int s = 0;
        while (split_in(t->split[s], k)) /* layout_fits: whole in some stage */
            s++;
        (t->r2r[k] != FS_AXIS_FFT ? rax : axes)[s][k] = 1;
    }
    if (t->kind == FS_C2C)
        plan_hooks(rq, t, axes[0]);
    if (t->windowed)
        add_op(t->ops[0], &t->nops[0], fs_domain_window_op(t));
    for (int s = 0; s <= last; s++) {
        fs_op_spec op = s == 0 && t->kind == FS_R2C && t->padded ? r2c(t, axes[0])
                        : c2c(axes[s], ndim, t->sign);
        if (s == 0) /* the zeros of the padding: lines of them are left alone */
            fs_domain_limits(t, &op);
        if (op.kind == FS_OP_R2C || any(axes[s], ndim))
            add_op(t->ops[s], &t->nops[s], op);
        if (any(rax[s], ndim))
            add_op(t->ops[s], &t->nops[s], fs_transform_r2r_op(t, rax[s]));
    }
    if (t->kind == FS_C2R)
        add_op(t->ops[last], &t->nops[last],
               (fs_op_spec){.kind = t->padded ? FS_OP_C2R : FS_OP_C2R_VIA_C2C, .real_axis = r,
                            .real_len = t->real_len});
    add_op(t->ops[last], &t->nops[last], scale_op);
}

fs_status fs_transform_plan(const fs_transform_request *rq, fs_transform *t)
{
    memset(t, 0, sizeof *t);
    fs_status st = plan_kind(rq, t);
    if (st != FS_OK)
        return st;
    fs_op_spec scale_op = plan_output(rq, t);
    int ndim = rq->ndim;

    int64_t n1 = ndim == 1 ? four_step_n1(t->kind == FS_R2C ? t->real_len : rq->shape[0]) : 1;
    if (ndim == 1 && t->kind != FS_C2R && t->kind != FS_R2R && n1 > 1)
        return plan_four_step(rq, t, n1, scale_op);

    layout L;
    if ((st = choose_layout(rq, t, &L)) != FS_OK)
        return st;
    apply_layout(rq, t, &L);
    plan_stages(rq, t, scale_op);
    return FS_OK;
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

/* The map of box `from`'s part [0, extent) in the file (the read's part
 * of the input; a round trip's part of the field written). */
static fs_io_map part_map(const fs_transform *t, const fs_box *from, const int64_t *extent)
{
    int real = fs_dtype_is_real(t->in_dtype), r = t->real_axis;
    int padded_r2c = t->kind == FS_R2C && t->padded;
    fs_box file = *from;
    if (t->kind == FS_C2R && !t->padded)
        file = clip(from, r, t->half_len);
    for (int k = 0; k < from->ndim && t->resized && !t->fold; k++)
        if (!(padded_r2c && k == r))
            file = clip(&file, k, extent[k]);
    if (padded_r2c) {
        /* n reals in each padded row of n/2+1 complex */
        int64_t n = t->resized && extent[r] < t->real_len ? extent[r] : t->real_len;
        file.count[r] = fs_box_elems(&file) ? n : 0;
        fs_io_map m = fs_io_map_plain(&file, fs_real_dtype(t->prec));
        for (int k = 0; k < from->ndim; k++)
            m.mem_dims[k] = from->count[k];
        m.mem_dims[r] = 2 * t->half_len;
        m.mem_padding = 1;
        return m;
    }
    fs_io_map m;
    if (real && t->kind != FS_R2R) {
        m = real_parts(t, &file, from);
    } else {
        m = fs_io_map_plain(&file, t->work_type);
        for (int k = 0; k < from->ndim; k++) {
            m.mem_dims[k] = from->count[k];
            m.mem_start[k] = fs_box_elems(&file) ? file.start[k] - from->start[k] : 0;
        }
    }
    if (t->fold)
        m.fold_inner = t->n1;
    if (t->fold && t->resized && extent[0] < t->in_shape[0])
        m.fold_limit = extent[0];
    return m;
}

fs_io_map fs_transform_read_map(const fs_transform *t, const fs_box *from)
{
    return part_map(t, from, t->read_shape);
}

fs_io_map fs_transform_write_map(const fs_transform *t, const fs_box *to)
{
    if (t->round_trip) {
        fs_io_map m = part_map(t, to, t->out_shape);
        m.mem_type = t->out_type;
        return m;
    }
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
        /* the whole spectrum's rows, of which the half is written: the rest
         * is the other half, which --check's and xi's inverse read */
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
        m.mem_padding = 1;
        return m;
    }
    if (t->kind == FS_C2R)
        return real_parts(t, to, to);
    return fs_io_map_plain(to, t->work_type);
}
