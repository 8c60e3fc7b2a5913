/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fft: see fft.h. */
#include "config.h"

#include "compute/fft.h"
#include "compute/r2r.h"
#include "compute/pointwise.h"
#include "compute/sharedbuf.h"
#include "plan/domain.h"

#include <complex.h>
#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One axis of a transform done as 1-D FFTs. Contiguous axes go to one
 * FFTW plan over all their lines. Strided axes are done a few lines at a
 * time: `gather` neighbouring lines copied into a small contiguous buffer
 * (it stays in cache), transformed, copied back. FFTW_ESTIMATE picks good
 * plans for contiguous lines but slow ones for long strides; this keeps
 * planning instant and runs at about FFTW_MEASURE's speed. Each trip to a
 * row of the array takes GATHER_ROW_BYTES of it (whole cache lines, fewer
 * trips), and the buffer's lines are GATHER_PAD elements longer than a
 * line: with power-of-two lengths they would otherwise fall on the same
 * cache sets. 256^3 complex128, the strided axis of a slab's last stage:
 * 0.078 s with 8 lines and no padding, 0.045 s like this. */
#define GATHER_ROW_BYTES 512
#define GATHER_BUF_BYTES ((int64_t)512 * 1024)
#define GATHER_PAD 8
static fs_sharedbuf shared_gather; /* every op's gather buffer: one (sharedbuf.h) */

typedef struct axis_pass {
    int axis;                  /* the box's */
    int64_t n, stride, outer;  /* lines: outer x stride of them, n long, stride apart */
    int64_t lines, per_plan;   /* contiguous: lines, and lines per execution of the plan */
    void *plan;                /* contiguous: all lines; strided: `gather` lines of buf */
    void *buf;                 /* strided: gather lines of n + GATHER_PAD complex */
    int64_t gather, dist;      /* strided: lines per trip, and their distance in buf */
    /* Zero padding (fs_op_spec.limit): only the lines whose indices on the
     * axes from `lo` to the pass's are below live[] hold data; a
     * contiguous pass plans just those (pruned: one plan, no per_plan),
     * a strided one skips the others. */
    int restricted, pruned, idle, lo;
    int64_t count[FS_LAYOUT_MAX_DIMS], live[FS_LAYOUT_MAX_DIMS];
} axis_pass;

struct fs_op {
    fs_op_spec spec;
    fs_box box;
    fs_precision prec;
    void *plan;          /* fftw_plan or fftwf_plan; NULL: nothing to plan */
    void *data;
    double flops;
    int empty;
    axis_pass pass[FS_LAYOUT_MAX_DIMS]; /* C2C under FFTW_ESTIMATE: axis by axis */
    int npass;
    int64_t slices, slice_elems;  /* the passes run slice by slice (each in cache) */
    int slice_axes;               /* the axes the slices run over (before the first transformed) */
    int64_t live[FS_LAYOUT_MAX_DIMS]; /* limit: the box's indices below it along each axis */
    fs_window_op *window;         /* WINDOW's tables */
};

#define SLICE_BYTES ((int64_t)4 * 1024 * 1024) /* stays in cache while its axes are done */

typedef struct guru {
    int rank, howmany;
    fftw_iodim64 dims[FS_LAYOUT_MAX_DIMS], loops[FS_LAYOUT_MAX_DIMS];
    int loop_axis[FS_LAYOUT_MAX_DIMS];  /* the box axis of each loop */
} guru;

/* Transform dims (axes set in `axes`) and loop dims of a box. For the
 * padded real layout (real_axis >= 0: the last storage axis), `real_side`
 * selects the real array's strides (2x the complex ones, 1 along the axis)
 * for is (real_side == 1) or os (real_side == 2). Length-1 axes are left out
 * (a transform of length 1 is the identity) except the real axis. */
static void make_guru(const fs_box *box, const int *axes, int real_axis, int64_t real_len,
                      int real_side, guru *g)
{
    int64_t cs[FS_LAYOUT_MAX_DIMS];
    fs_box_strides(box, cs);
    g->rank = g->howmany = 0;
    for (int k = 0; k < box->ndim; k++) {
        int is_real_axis = k == real_axis;
        if (box->count[k] <= 1 && !is_real_axis)
            continue;
        int64_t rs = is_real_axis ? 1 : 2 * cs[k];
        int64_t in = real_side == 1 ? rs : cs[k], out = real_side == 2 ? rs : cs[k];
        if (real_axis < 0)
            in = out = cs[k];
        if (!(axes[k] || is_real_axis))
            g->loop_axis[g->howmany] = k;
        fftw_iodim64 *d = axes[k] || is_real_axis ? &g->dims[g->rank++] : &g->loops[g->howmany++];
        d->n = is_real_axis ? real_len : box->count[k];
        d->is = in;
        d->os = out;
    }
}

/* The loops of g cut to the lines that hold data (fs_op.live). */
static void prune_loops(const int64_t *live, guru *g)
{
    for (int i = 0; i < g->howmany; i++)
        g->loops[i].n = live[g->loop_axis[i]];
}

static double nlogn(const guru *g)
{
    double n = 1, m = 1;
    for (int i = 0; i < g->rank; i++)
        n *= (double)g->dims[i].n;
    for (int i = 0; i < g->howmany; i++)
        m *= (double)g->loops[i].n;
    return n > 1 ? 5.0 * n * m * log2(n) : 0;
}

/* r2r: an R2R operation's, r2r.c's (its passes are never pruned: no limit). */
static void destroy_plan(fs_precision p, int r2r, void *plan)
{
    fs_r2r_plan *rp = plan;
    if (r2r)
        fs_r2r_plan_free(&rp);
    else if (plan)
        p == FS_SINGLE ? fftwf_destroy_plan(plan) : fftw_destroy_plan(plan);
}

/* howmany lines of n values, dist apart, as op transforms them along box
 * axis k: FFTW's r2r kind of R2R, else a complex transform of sign. */
static void *plan_op_lines(const fs_op *op, int k, int n, int howmany, int dist, void *data,
                           int sign, unsigned flags)
{
    if (op->spec.kind == FS_OP_R2R)
        return fs_r2r_plan_lines(op->prec, &op->spec, k, n, howmany, dist, data, flags);
    if (op->prec == FS_SINGLE)
        return fftwf_plan_many_dft(1, &n, howmany, data, NULL, 1, dist, data, NULL, 1, dist, sign,
                                   flags);
    return fftw_plan_many_dft(1, &n, howmany, data, NULL, 1, dist, data, NULL, 1, dist, sign, flags);
}

/* Lines per trip of a strided pass: a row's GATHER_ROW_BYTES, fewer when
 * the buffer would outgrow GATHER_BUF_BYTES, at least 2. */
static int64_t gather_lines(int64_t n, size_t cb)
{
    int64_t g = GATHER_ROW_BYTES / (int64_t)cb;
    while (g > 2 && g * (n + GATHER_PAD) * (int64_t)cb > GATHER_BUF_BYTES)
        g /= 2;
    return g;
}

static void *plan_c2c(fs_precision p, const guru *g, void *data, int sign, unsigned flags);

/* Which lines of pass ap hold data (fs_op_spec.limit): the axes before
 * its own from lo on, not transformed yet (done), cut to op->live. */
static void restrict_pass(const fs_op *op, axis_pass *ap, const int *done)
{
    const fs_box *b = &op->box;
    ap->lo = op->slice_axes;
    for (int j = 0; j < b->ndim; j++) {
        ap->count[j] = b->count[j];
        ap->live[j] = j < ap->axis && j >= ap->lo && !done[j] ? op->live[j] : b->count[j];
        ap->restricted |= ap->live[j] < ap->count[j];
        ap->idle |= ap->live[j] == 0;
    }
}

/* Whether line block o (the axes before the pass's, from lo) holds data. */
static int outer_live(const axis_pass *ap, int64_t o)
{
    for (int j = ap->axis - 1; j >= ap->lo; j--) {
        if (o % ap->count[j] >= ap->live[j])
            return 0;
        o /= ap->count[j];
    }
    return 1;
}

/* A contiguous pass on the lines that hold data alone: one plan of their
 * loops (the axes before the pass's, from lo). */
static void *plan_pruned(fs_op *op, const axis_pass *ap, const int64_t *stride, int sign,
                         unsigned flags)
{
    guru g = {1, 0, {{ap->n, 1, 1}}, {{0, 0, 0}}, {0}};
    for (int j = ap->lo; j < ap->axis; j++)
        if (ap->count[j] > 1)
            g.loops[g.howmany++] = (fftw_iodim64){ap->live[j], stride[j], stride[j]};
    return plan_c2c(op->prec, &g, op->data, sign, flags);
}

/* Plan the C2C of `axes` axis by axis (see axis_pass), done_axis (-1:
 * none) transformed before them. Returns 0 on success. */
static int plan_axis_passes(fs_op *op, const int *axes, int done_axis, int sign, unsigned flags)
{
    const fs_box *b = &op->box;
    int64_t stride[FS_LAYOUT_MAX_DIMS];
    fs_box_strides(b, stride);
    size_t cb = fs_r2r_value_bytes(&op->spec, op->prec);
    int64_t total = fs_box_elems(b);
    int r2r = op->spec.kind == FS_OP_R2R;
    int64_t trivial = fs_op_identity_length(&op->spec);
    int done[FS_LAYOUT_MAX_DIMS] = {0};
    if (done_axis >= 0)
        done[done_axis] = 1;
    /* When the transformed axes are trailing ones whose slice fits in cache,
     * all of them run on one slice before the next: one trip through memory. */
    int first = -1;
    for (int k = 0; k < b->ndim && first < 0; k++)
        if (axes[k] && b->count[k] > trivial)
            first = k;
    op->slices = 1;
    op->slice_elems = total;
    op->slice_axes = 0;
    if (first > 0 && stride[first] * b->count[first] * (int64_t)cb <= SLICE_BYTES) {
        op->slice_elems = stride[first] * b->count[first];
        op->slices = total / op->slice_elems;
        op->slice_axes = first;
        total = op->slice_elems;
    }
    for (int k = b->ndim - 1; k >= 0; k--) {
        if (!axes[k] || b->count[k] <= trivial)
            continue;
        axis_pass *ap = &op->pass[op->npass++];
        ap->axis = k;
        ap->n = b->count[k];
        ap->stride = stride[k];
        ap->outer = total / (ap->n * ap->stride);
        restrict_pass(op, ap, done);
        done[k] = 1;
        if (ap->n > INT32_MAX - GATHER_PAD)
            return -1;
        if (ap->stride == 1 && ap->restricted) {
            ap->pruned = 1;
            ap->plan = ap->idle ? NULL : plan_pruned(op, ap, stride, sign, flags);
            if (!ap->plan && !ap->idle)
                return -1;
        } else if (ap->stride == 1) {
            /* FFTW counts lines in ints: more go in several executions. */
            ap->lines = total / ap->n;
            ap->per_plan = ap->lines < (1 << 28) ? ap->lines : (1 << 28);
            ap->plan = plan_op_lines(op, k, (int)ap->n, (int)ap->per_plan, (int)ap->n, op->data,
                                     sign, flags);
        } else {
            ap->gather = gather_lines(ap->n, cb);
            ap->dist = ap->n + GATHER_PAD;
            ap->buf = fs_sharedbuf_take(&shared_gather, (size_t)(ap->gather * ap->dist) * cb,
                                        GATHER_BUF_BYTES + 8192); /* pads of the longest */
            if (!ap->buf)
                return -1;
            ap->plan = plan_op_lines(op, k, (int)ap->n, (int)ap->gather, (int)ap->dist, ap->buf,
                                     sign, flags);
        }
        if (!ap->plan && !ap->idle)
            return -1;
        /* a cosine or sine costs about a real transform, per part */
        double per = r2r ? (op->spec.reals ? 2.5 : 5.0) : 5.0;
        op->flops += per * (double)total * (double)op->slices * log2((double)ap->n);
    }
    return 0;
}

/* A strided pass run with another between its transform and the copy back
 * (fs_op_execute_fused): fn on the lines, then `plan` on the same buffer. */
typedef struct fused {
    const fs_box *box;
    void *plan;
    fs_lines_fn fn;
    void *ctx;
} fused;

/* T is one value (a complex one a struct of two reals: whole-value copies).
 * Rows are taken two at a time: each buffer line then gets two neighbouring
 * elements per visit. With fz, fz's work runs on the lines in the buffer.
 * The plan runs on all lines: a short trip's zeroes the rest (dctfft pairs them). */
#define DEFINE_GATHER_PASS(NAME, T, EXEC_ON, PLAN_T)                                            \
    static void NAME(axis_pass *ap, T *data, const fused *fz)                                   \
    {                                                                                           \
        int64_t n = ap->n, s = ap->stride, g = ap->gather, d = ap->dist;                        \
        T *buf = ap->buf;                                                                       \
        for (int64_t o = 0; o < ap->outer; o++) {                                               \
            if (ap->restricted && !outer_live(ap, o))                                           \
                continue;                                                                       \
            T *base = data + o * n * s;                                                         \
            for (int64_t b = 0; b < s; b += g) {                                                \
                int64_t v = s - b < g ? s - b : g, i = 0;                                       \
                for (; i + 1 < n; i += 2) {                                                     \
                    const T *r0 = base + i * s + b, *r1 = r0 + s;                               \
                    for (int64_t j = 0; j < v; j++) {                                           \
                        buf[j * d + i] = r0[j];                                                 \
                        buf[j * d + i + 1] = r1[j];                                             \
                    }                                                                           \
                }                                                                               \
                for (; i < n; i++)                                                              \
                    for (int64_t j = 0; j < v; j++)                                             \
                        buf[j * d + i] = base[i * s + b + j];                                   \
                for (int64_t j = v; j < g; j++)                                                 \
                    memset(&buf[j * d], 0, (size_t)n * sizeof(T));                              \
                EXEC_ON((PLAN_T)ap->plan, (void *)buf, (void *)buf);                            \
                if (fz) {                                                                       \
                    fs_lines l = {fz->box, ap->axis, o, b, v, n, d, buf};                       \
                    fz->fn(fz->ctx, &l);                                                        \
                    EXEC_ON((PLAN_T)fz->plan, (void *)buf, (void *)buf);                        \
                }                                                                               \
                for (i = 0; i + 1 < n; i += 2) {                                                \
                    T *r0 = base + i * s + b, *r1 = r0 + s;                                     \
                    for (int64_t j = 0; j < v; j++) {                                           \
                        r0[j] = buf[j * d + i];                                                 \
                        r1[j] = buf[j * d + i + 1];                                             \
                    }                                                                           \
                }                                                                               \
                for (; i < n; i++)                                                              \
                    for (int64_t j = 0; j < v; j++)                                             \
                        base[i * s + b + j] = buf[j * d + i];                                   \
            }                                                                                   \
        }                                                                                       \
    }
typedef struct { double re, im; } cplx_double;
typedef struct { float re, im; } cplx_single;
DEFINE_GATHER_PASS(gather_pass_double, cplx_double, fftw_execute_dft, fftw_plan)
DEFINE_GATHER_PASS(gather_pass_single, cplx_single, fftwf_execute_dft, fftwf_plan)
/* R2R (never fused) on a real working array, and on a complex one */
DEFINE_GATHER_PASS(gather_reals_double, double, fs_r2r_execute, fs_r2r_plan *)
DEFINE_GATHER_PASS(gather_reals_single, float, fs_r2r_execute, fs_r2r_plan *)
DEFINE_GATHER_PASS(gather_r2r_double, cplx_double, fs_r2r_execute, fs_r2r_plan *)
DEFINE_GATHER_PASS(gather_r2r_single, cplx_single, fs_r2r_execute, fs_r2r_plan *)

/* The strided pass ap on slice, by the type of op's values. */
static void gather_pass(const fs_op *op, axis_pass *ap, void *slice)
{
    int single = op->prec == FS_SINGLE;
    if (op->spec.reals)
        single ? gather_reals_single(ap, slice, NULL) : gather_reals_double(ap, slice, NULL);
    else if (op->spec.kind == FS_OP_R2R)
        single ? gather_r2r_single(ap, slice, NULL) : gather_r2r_double(ap, slice, NULL);
    else
        single ? gather_pass_single(ap, slice, NULL) : gather_pass_double(ap, slice, NULL);
}

/* A plan of lines (plan_op_lines) run in place at `at`. */
static void run_lines_at(const fs_op *op, void *plan, void *at)
{
    op->spec.kind == FS_OP_R2R ? fs_r2r_execute(plan, at, at)
    : op->prec == FS_SINGLE    ? fftwf_execute_dft(plan, at, at)
                               : fftw_execute_dft(plan, at, at);
}

/* Whether slice sl (its indices on the axes before the first transformed)
 * holds data: none of those axes is transformed here, so their live
 * counts hold for every pass. */
static int slice_live(const fs_op *op, int64_t sl)
{
    for (int j = op->slice_axes - 1; j >= 0; j--) {
        if (sl % op->box.count[j] >= op->live[j])
            return 0;
        sl /= op->box.count[j];
    }
    return 1;
}

static fs_status run_axis_passes(fs_op *op)
{
    size_t cb = fs_r2r_value_bytes(&op->spec, op->prec);
    for (int64_t sl = 0; sl < (op->npass ? op->slices : 0); sl++) {
        void *slice = (char *)op->data + (size_t)(sl * op->slice_elems) * cb;
        if (!slice_live(op, sl))
            continue;
        for (int i = 0; i < op->npass; i++) {
            axis_pass *ap = &op->pass[i];
            if (ap->pruned) {
                if (ap->idle)
                    continue;
                if (op->prec == FS_SINGLE)
                    fftwf_execute_dft(ap->plan, slice, slice);
                else
                    fftw_execute_dft(ap->plan, slice, slice);
            } else if (ap->stride == 1) {
                for (int64_t l = 0; l + ap->per_plan <= ap->lines; l += ap->per_plan)
                    run_lines_at(op, ap->plan, (char *)slice + (size_t)(l * ap->n) * cb);
                /* the lines left over, with a plan of their own on first use */
                int64_t rest = ap->lines % ap->per_plan;
                if (rest) {
                    void *at = (char *)slice + (size_t)((ap->lines - rest) * ap->n) * cb;
                    void *pl = plan_op_lines(op, ap->axis, (int)ap->n, (int)rest, (int)ap->n, at,
                                             op->spec.sign, FFTW_ESTIMATE);
                    if (!pl)
                        return fs_error_set(FS_ERR_RUNTIME,
                                            "FFTW could not plan %lld transforms of length %lld",
                                            (long long)rest, (long long)ap->n);
                    run_lines_at(op, pl, at);
                    destroy_plan(op->prec, op->spec.kind == FS_OP_R2R, pl);
                }
            } else {
                gather_pass(op, ap, slice);
            }
        }
    }
    return FS_OK;
}

static void *plan_c2c(fs_precision p, const guru *g, void *data, int sign, unsigned flags)
{
    if (p == FS_SINGLE)
        return fftwf_plan_guru64_dft(g->rank, g->dims, g->howmany, g->loops, data, data, sign, flags);
    return fftw_plan_guru64_dft(g->rank, g->dims, g->howmany, g->loops, data, data, sign, flags);
}

static int64_t plans_made, plans_from_wisdom; /* this process's FFTW plans (fs_fft_plan_counts) */

/* Plan op into a new object; 0 on success, -1 when FFTW gave no plan or
 * memory ran out (nothing said: fs_op_new decides). */
static int op_make(const fs_op_spec *spec, const fs_box *box, fs_precision prec, void *data,
                   unsigned flags, fs_op **out)
{
    *out = NULL;
    fs_op *op = calloc(1, sizeof *op);
    if (!op)
        return -1;
    op->spec = *spec;
    op->box = *box;
    op->prec = prec;
    op->data = data;
    op->empty = fs_box_elems(box) == 0;
    if (op->empty) {
        *out = op;
        return 0;
    }
    int pruned = fs_domain_live_counts(spec, box, op->live);
    guru g;
    int axes1[FS_LAYOUT_MAX_DIMS] = {0};
    switch (spec->kind) {
    case FS_OP_C2C:
    case FS_OP_R2R: /* axis by axis under FFTW_ESTIMATE, all axes in one plan else */
        if (!(flags & (FFTW_MEASURE | FFTW_PATIENT | FFTW_EXHAUSTIVE)) || fs_r2r_fast_axes(spec, box)) {
            if (plan_axis_passes(op, spec->axes, -1, spec->sign, flags) != 0)
                goto fail;
            break;
        }
        if (spec->kind == FS_OP_R2R && !(op->plan = fs_r2r_plan_box(prec, spec, box, data, flags,
                                                                      &op->flops)))
            goto fail;
        if (spec->kind == FS_OP_R2R)
            break;
        make_guru(box, spec->axes, -1, 0, 0, &g);
        if (g.rank > 0)
            op->plan = plan_c2c(prec, &g, data, spec->sign, flags);
        op->flops = nlogn(&g);
        if (g.rank > 0 && !op->plan)
            goto fail;
        break;
    case FS_OP_R2C:
    case FS_OP_C2R: {
        int r2c = spec->kind == FS_OP_R2C;
        /* Under FFTW_ESTIMATE only the real axis goes to FFTW's real plan
         * (contiguous rows, which it plans well), the others to the axis
         * passes on the half spectrum, after it (r2c) or before (c2r):
         * FFTW's estimated 3-D r2c of 256^3 ran 4 times slower. */
        int split = !(flags & (FFTW_MEASURE | FFTW_PATIENT | FFTW_EXHAUSTIVE)), rest = 0;
        int others[FS_LAYOUT_MAX_DIMS] = {0};
        for (int k = 0; split && k < box->ndim; k++)
            if (spec->axes[k] && k != spec->real_axis && box->count[k] > 1)
                others[k] = rest = 1;
        make_guru(box, rest ? axes1 : spec->axes, spec->real_axis, spec->real_len, r2c ? 1 : 2, &g);
        /* The real axis alone: the rows of zeros are left as they are. */
        int idle = 0;
        if (g.rank == 1 && pruned)
            prune_loops(op->live, &g);
        for (int i = 0; i < g.howmany; i++)
            idle |= g.loops[i].n == 0;
        /* Reals in the padded rows, complex in place. */
        if (!idle && prec == FS_SINGLE)
            op->plan = r2c ? (void *)fftwf_plan_guru64_dft_r2c(g.rank, g.dims, g.howmany, g.loops,
                                                                data, data, flags)
                           : (void *)fftwf_plan_guru64_dft_c2r(g.rank, g.dims, g.howmany, g.loops,
                                                                data, data, flags);
        else if (!idle)
            op->plan = r2c ? (void *)fftw_plan_guru64_dft_r2c(g.rank, g.dims, g.howmany, g.loops,
                                                               data, data, flags)
                           : (void *)fftw_plan_guru64_dft_c2r(g.rank, g.dims, g.howmany, g.loops,
                                                               data, data, flags);
        op->flops = nlogn(&g) / 2;
        if ((!op->plan && !idle) ||
            (rest && plan_axis_passes(op, others, r2c ? spec->real_axis : -1,
                                      r2c ? FFTW_FORWARD : FFTW_BACKWARD, flags) != 0))
            goto fail;
        break;
    }
    case FS_OP_WINDOW:
        if (!(op->window = fs_window_op_new(spec, box)))
            goto fail;
        break;
    case FS_OP_C2R_VIA_C2C:
    case FS_OP_R2C_VIA_C2C:
        axes1[spec->real_axis] = 1;
        make_guru(box, axes1, -1, 0, 0, &g);
        if (g.rank > 0)
            op->plan = plan_c2c(prec, &g, data,
                                spec->kind == FS_OP_C2R_VIA_C2C ? FFTW_BACKWARD : FFTW_FORWARD, flags);
        op->flops = nlogn(&g);
        if (g.rank > 0 && !op->plan)
            goto fail;
        break;
    case FS_OP_TRANSPOSE: {
        /* A rank-0 transform with transposed strides is FFTW's in-place transpose. */
        fftw_iodim64 h[2] = {{box->count[0], box->count[1], 1}, {box->count[1], 1, box->count[0]}};
        if (box->count[0] > 1 && box->count[1] > 1) {
            op->plan = prec == FS_SINGLE
                           ? (void *)fftwf_plan_guru64_dft(0, NULL, 2, h, data, data, FFTW_FORWARD, flags)
                           : (void *)fftw_plan_guru64_dft(0, NULL, 2, h, data, data, FFTW_FORWARD, flags);
            if (!op->plan)
                goto fail;
        }
        break;
    }
    default: /* TWIDDLE, SCALE: loops of our own */
        break;
    }
    *out = op;
    return 0;
fail:
    fs_op_free(&op);
    return -1;
}

/* Operations that FFTW plans (the others are loops of our own). */
static int uses_fftw(const fs_op_spec *spec, const fs_box *box)
{
    return fs_box_elems(box) > 0 && spec->kind != FS_OP_TWIDDLE && spec->kind != FS_OP_SCALE &&
           spec->kind != FS_OP_WINDOW;
}

fs_status fs_op_new(const fs_op_spec *spec, const fs_box *box, fs_precision prec, void *data,
                    unsigned flags, fs_op **out)
{
    *out = NULL;
    int fftw = uses_fftw(spec, box);
    /* A measuring planner first asks the wisdom alone: it never touches
     * the data, and the count says whether --wisdom saved the measuring. */
    if (fftw && !(flags & FFTW_ESTIMATE) &&
        op_make(spec, box, prec, data, flags | FFTW_WISDOM_ONLY, out) == 0) {
        plans_made++;
        plans_from_wisdom++;
        return FS_OK;
    }
    if (op_make(spec, box, prec, data, flags, out) != 0)
        return fs_error_set(FS_ERR_RUNTIME, "FFTW could not plan a transform of a %d-D box",
                            box->ndim);
    plans_made += fftw;
    return FS_OK;
}

void fs_fft_plan_counts(int64_t *made, int64_t *from_wisdom)
{
    *made = plans_made;
    *from_wisdom = plans_from_wisdom;
}

/* FFTW's new-array execution on op->data: an op may run on either buffer of
 * an exchange that swaps its result into a second array (fs_op_execute_on).
 * fs_buffer_alloc gives both the same alignment, and both are in place, as
 * FFTW asks of a plan run on other arrays. */
static void run_plan(fs_op *op)
{
    if (!op->plan)
        return;
    void *d = op->data;
    int single = op->prec == FS_SINGLE;
    switch (op->spec.kind) {
    case FS_OP_R2C:
        if (single)
            fftwf_execute_dft_r2c(op->plan, d, d);
        else
            fftw_execute_dft_r2c(op->plan, d, d);
        break;
    case FS_OP_C2R:
        if (single)
            fftwf_execute_dft_c2r(op->plan, d, d);
        else
            fftw_execute_dft_c2r(op->plan, d, d);
        break;
    case FS_OP_R2R:
        fs_r2r_execute(op->plan, d, d);
        break;
    default:
        if (single)
            fftwf_execute_dft(op->plan, d, d);
        else
            fftw_execute_dft(op->plan, d, d);
        break;
    }
}

fs_status fs_op_execute(fs_op *op)
{
    if (op->empty)
        return FS_OK;
    switch (op->spec.kind) {
    case FS_OP_C2R_VIA_C2C:
        fs_pointwise_hermitian(&op->spec, &op->box, op->prec, op->data);
        run_plan(op);
        break;
    case FS_OP_R2C_VIA_C2C:
        fs_pointwise_zero_imag(&op->box, op->prec, op->data);
        run_plan(op);
        break;
    case FS_OP_TWIDDLE:
        fs_pointwise_twiddle(&op->spec, &op->box, op->prec, op->data);
        break;
    case FS_OP_WINDOW:
        fs_window_op_apply(op->window, op->prec, op->data);
        break;
    case FS_OP_SCALE:
        if (op->spec.factor != 1.0)
            fs_pointwise_scale(op->spec.factor, op->spec.reals, &op->box, op->prec, op->data);
        break;
    case FS_OP_C2R: {
        /* the other axes' passes first, on the half spectrum */
        fs_status st = run_axis_passes(op);
        if (st == FS_OK)
            run_plan(op);
        return st;
    }
    case FS_OP_R2R: {
        fs_r2r_scale_edges(&op->spec, &op->box, op->prec, op->data, 1);
        run_plan(op);
        fs_status st = run_axis_passes(op);
        fs_r2r_scale_edges(&op->spec, &op->box, op->prec, op->data, 0);
        return st;
    }
    default:
        run_plan(op);
        return run_axis_passes(op);
    }
    return FS_OK;
}

fs_status fs_op_execute_on(fs_op *op, void *data)
{
    op->data = data;
    return fs_op_execute(op);
}

int fs_op_fusable(const fs_op *op, const fs_op *inv)
{
    if (!op || !inv || op->empty || op->spec.kind != FS_OP_C2C || inv->spec.kind != FS_OP_C2C ||
        op->plan || inv->plan || op->npass != 1 || inv->npass != 1 || op->slices != 1 ||
        inv->slices != 1)
        return 0;
    const axis_pass *a = &op->pass[0], *b = &inv->pass[0];
    return a->stride != 1 && a->axis == b->axis && a->n == b->n && a->stride == b->stride &&
           a->outer == b->outer && a->gather == b->gather && a->dist == b->dist;
}

fs_status fs_op_execute_fused(fs_op *op, fs_op *inv, void *data, fs_lines_fn fn, void *ctx)
{
    if (!fs_op_fusable(op, inv))
        return fs_error_set(FS_ERR_RUNTIME, "internal error: operations that cannot run fused");
    fused fz = {&op->box, inv->pass[0].plan, fn, ctx};
    op->data = inv->data = data;
    if (op->prec == FS_SINGLE)
        gather_pass_single(&op->pass[0], data, &fz);
    else
        gather_pass_double(&op->pass[0], data, &fz);
    return FS_OK;
}

fs_status fs_op_inverse(const fs_op *op, void *data, unsigned flags, fs_op **out)
{
    fs_op_spec inv = op->spec;
    fs_box box = op->box;
    memset(inv.limit, 0, sizeof inv.limit); /* the zeros of a padding are the forward's */
    switch (op->spec.kind) {
    case FS_OP_C2C: inv.sign = -op->spec.sign; break;
    case FS_OP_R2C: inv.kind = FS_OP_C2R; break;
    case FS_OP_C2R: inv.kind = FS_OP_R2C; break;
    case FS_OP_C2R_VIA_C2C: inv.kind = FS_OP_R2C_VIA_C2C; break;
    case FS_OP_R2C_VIA_C2C: inv.kind = FS_OP_C2R_VIA_C2C; break;
    case FS_OP_TWIDDLE: inv.sign = -op->spec.sign; break;
    case FS_OP_TRANSPOSE:
        box.count[0] = op->box.count[1];
        box.count[1] = op->box.count[0];
        box.start[0] = op->box.start[1];
        box.start[1] = op->box.start[0];
        break;
    case FS_OP_SCALE: inv.factor = op->spec.factor != 0 ? 1.0 / op->spec.factor : 0; break;
    case FS_OP_R2R:
        for (int k = 0; k < box.ndim; k++)
            inv.r2r[k] = fs_r2r_inverse(op->spec.r2r[k]);
        break;
    case FS_OP_WINDOW: /* not undone: the inverse gives the windowed field (--check's input) */
        memset(&inv, 0, sizeof inv);
        inv.kind = FS_OP_SCALE;
        inv.factor = 1.0;
        break;
    }
    return fs_op_new(&inv, &box, op->prec, data, flags, out);
}

double fs_op_flops(const fs_op *op)
{
    return op ? op->flops : 0;
}

int fs_op_plans_alike(const fs_op *op, const fs_op_spec *spec, const fs_box *box)
{
    const fs_op_spec *o = &op->spec;
    int alike = (spec->kind == FS_OP_C2C || spec->kind == FS_OP_R2R) && o->kind == spec->kind &&
                o->sign == spec->sign && o->ortho == spec->ortho && o->reals == spec->reals &&
                fs_box_equal(&op->box, box);
    for (int k = 0; alike && k < box->ndim; k++)
        alike = o->axes[k] == spec->axes[k] && !o->limit[k] && !spec->limit[k] &&
                (spec->kind != FS_OP_R2R || !spec->axes[k] || o->r2r[k] == spec->r2r[k]);
    return alike;
}

void fs_op_free(fs_op **pop)
{
    fs_op *op = *pop;
    if (!op)
        return;
    destroy_plan(op->prec, op->spec.kind == FS_OP_R2R, op->plan);
    fs_window_op_free(&op->window);
    for (int i = 0; i < op->npass; i++) {
        destroy_plan(op->prec, op->spec.kind == FS_OP_R2R, op->pass[i].plan);
        fs_sharedbuf_give(&shared_gather, op->pass[i].buf);
    }
    free(op);
    *pop = NULL;
}

/* ------------------------------------------------------------------ blockwise */

#define BLOCKWISE_MAX_PLANS 16

struct fs_fft_blockwise {
    int transform_axis[FS_LAYOUT_MAX_DIMS];
    int sign;
    fs_precision prec;
    int nplans;
    int64_t shape[BLOCKWISE_MAX_PLANS][FS_LAYOUT_MAX_DIMS];
    void *plan[BLOCKWISE_MAX_PLANS];
};

fs_status fs_fft_blockwise_new(const int *transform_axis, int sign, fs_precision prec,
                               fs_fft_blockwise **out)
{
    *out = NULL;
    fs_fft_blockwise *bw = calloc(1, sizeof *bw);
    if (!bw)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory planning an FFT");
    memcpy(bw->transform_axis, transform_axis, sizeof bw->transform_axis);
    bw->sign = sign;
    bw->prec = prec;
    *out = bw;
    return FS_OK;
}

fs_status fs_fft_blockwise_execute(fs_fft_blockwise *bw, const fs_box *box, void *data)
{
    guru g;
    if (fs_box_elems(box) == 0)
        return FS_OK;
    make_guru(box, bw->transform_axis, -1, 0, 0, &g);
    if (g.rank == 0)
        return FS_OK;
    int i = 0;
    while (i < bw->nplans &&
           memcmp(bw->shape[i], box->count, sizeof box->count[0] * (size_t)box->ndim) != 0)
        i++;
    if (i == bw->nplans) {
        if (i == BLOCKWISE_MAX_PLANS) {
            /* Block shapes beyond the cache: recycle the last entry. */
            i = BLOCKWISE_MAX_PLANS - 1;
            destroy_plan(bw->prec, 0, bw->plan[i]);
            bw->nplans--;
        }
        /* ESTIMATE never touches the array, so planning on live data is safe. */
        bw->plan[i] = plan_c2c(bw->prec, &g, data, bw->sign, FFTW_ESTIMATE | FFTW_UNALIGNED);
        if (!bw->plan[i])
            return fs_error_set(FS_ERR_RUNTIME, "FFTW could not plan a block transform of a %d-D box",
                                box->ndim);
        memset(bw->shape[i], 0, sizeof bw->shape[i]);
        memcpy(bw->shape[i], box->count, sizeof box->count[0] * (size_t)box->ndim);
        bw->nplans++;
    }
    if (bw->prec == FS_SINGLE)
        fftwf_execute_dft(bw->plan[i], data, data);
    else
        fftw_execute_dft(bw->plan[i], data, data);
    return FS_OK;
}

void fs_fft_blockwise_free(fs_fft_blockwise **pbw)
{
    fs_fft_blockwise *bw = *pbw;
    if (!bw)
        return;
    for (int i = 0; i < bw->nplans; i++)
        destroy_plan(bw->prec, 0, bw->plan[i]);
    free(bw);
    *pbw = NULL;
}
