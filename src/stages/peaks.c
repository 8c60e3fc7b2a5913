/* SPDX-License-Identifier: GPL-3.0-or-later */
/* peaks: see peaks.h. */
#include "config.h"

#include "stages/peaks.h"

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/collective.h"
#include "core/dtype.h"
#include "io/h5probe.h"
#include "io/h5scales.h"
#include "stages/kgrid.h"

struct fs_peaks {
    int ndim, naxes;                      /* the input's axes, the transformed ones */
    int64_t shape[FS_LAYOUT_MAX_DIMS];
    int transformed[FS_LAYOUT_MAX_DIMS];
    int64_t axes[FS_LAYOUT_MAX_DIMS];     /* the transformed axes, increasing */
    int64_t frames;
    int upsample;
    char group[FS_PATH_MAX];
    int found;
    double *value;                        /* [frames]: the integer peak's */
    double *height;                       /* [frames]: the refined peak's */
    double *at;                           /* [frames]: the integer peak's row-major position */
    double *shift;                        /* [frames][naxes] */
    void *kept;                           /* upsample > 1: this rank's cross-power spectrum, */
    int single;                           /* in the run's precision */
    int best;                             /* the frame of the largest integer peak */
};

fs_peaks *fs_peaks_new(const fs_transform *t, int upsample, const char *group)
{
    fs_peaks *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->ndim = t->in_ndim;
    p->frames = 1;
    for (int k = 0; k < t->in_ndim; k++) {
        p->shape[k] = t->in_shape[k];
        p->transformed[k] = t->transform_axis[k];
        if (t->transform_axis[k])
            p->axes[p->naxes++] = k;
        else
            p->frames *= t->in_shape[k];
    }
    p->upsample = upsample > 1 ? upsample : 1;
    snprintf(p->group, sizeof p->group, "%s", group);
    size_t f = (size_t)p->frames;
    p->height = malloc(sizeof(double) * f);
    p->value = malloc(sizeof(double) * f);
    p->at = malloc(sizeof(double) * f);
    p->shift = malloc(sizeof(double) * f * (size_t)(p->naxes ? p->naxes : 1));
    if (!p->height || !p->value || !p->at || !p->shift)
        fs_peaks_free(&p);
    return p;
}

void fs_peaks_free(fs_peaks **p)
{
    if (!*p)
        return;
    free((*p)->height);
    free((*p)->value);
    free((*p)->at);
    free((*p)->shift);
    free((*p)->kept);
    free(*p);
    *p = NULL;
}

fs_status fs_peaks_keep(fs_peaks *p, const fs_transform *t, const fs_box *last,
                        const void *fourier)
{
    if (p->upsample == 1)
        return FS_OK;
    int64_t n = fs_box_elems(last);
    size_t bytes = (size_t)(n > 0 ? n : 1) * 2 *
                   (t->prec == FS_SINGLE ? sizeof(float) : sizeof(double));
    free(p->kept);
    p->kept = malloc(bytes);
    if (!p->kept)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory for the cross-power spectrum");
    p->single = t->prec == FS_SINGLE;
    memcpy(p->kept, fourier, n > 0 ? bytes : 0);
    return FS_OK;
}

/* ------------------------------------------------------ integer peaks */

/* A frame's largest value and its row-major position (< 0: none yet). */
typedef struct peak {
    double value;
    double at;
} peak;

static int better(const peak *a, const peak *b)
{
    return a->at >= 0 && (b->at < 0 || a->value > b->value ||
                          (a->value == b->value && a->at < b->at));
}

/* MPI_Op: the better of each frame's two peaks, the earlier of equal ones. */
static void maxloc(void *in_, void *inout_, int *len, MPI_Datatype *type)
{
    const peak *in = in_;
    peak *io = inout_;
    (void)type;
    for (int i = 0; i < *len; i++)
        if (better(&in[i], &io[i]))
            io[i] = in[i];
}

static double real_at(const void *data, fs_dtype mt, int64_t off)
{
    int64_t o = fs_dtype_is_real(mt) ? off : 2 * off;
    return fs_dtype_is_single(mt) ? (double)((const float *)data)[o] : ((const double *)data)[o];
}

/* Every frame's largest real part of this rank's box, through the write
 * map m (its elements' file positions and where they lie in memory). */
static void local_peaks(const fs_peaks *p, const fs_transform *t, const fs_io_map *m,
                        const void *data, peak *mine)
{
    for (int64_t f = 0; f < p->frames; f++)
        mine[f] = (peak){-INFINITY, -1};
    const fs_box *fb = &m->file_box;
    int64_t n = fs_box_elems(fb);
    int nd = fb->ndim, last = nd - 1;
    int64_t step = m->mem_stride_last > 1 ? m->mem_stride_last : 1;
    int64_t j[FS_LAYOUT_MAX_DIMS] = {0};
    for (int64_t e = 0; e < n; e++) {
        int64_t off = 0, pos = 0, frame = 0;
        for (int k = 0; k < nd; k++) {
            off = off * m->mem_dims[k] + m->mem_start[k] + j[k] * (k == last ? step : 1);
            pos = m->fold_inner > 0 ? (fb->start[0] + j[0]) * m->fold_inner + fb->start[1] + j[1]
                                    : pos * t->in_shape[k] + fb->start[k] + j[k];
            if (m->fold_inner == 0 && !p->transformed[k])
                frame = frame * p->shape[k] + fb->start[k] + j[k];
        }
        peak v = {real_at(data, m->mem_type, off), (double)pos};
        if (better(&v, &mine[frame]))
            mine[frame] = v;
        for (int k = last; k >= 0 && ++j[k] == fb->count[k]; k--)
            j[k] = 0;
    }
}

/* numpy's signed shift of index i on an axis of n points. */
static int64_t signed_shift(int64_t i, int64_t n)
{
    return i > n / 2 ? i - n : i;
}

/* The frames' integer peaks reduced over the ranks: heights, positions,
 * shifts. */
static fs_status integer_peaks(fs_peaks *p, MPI_Comm comm, const fs_transform *t,
                               const fs_box *first, const void *field, peak *mine)
{
    fs_io_map m = fs_transform_write_map(t, first);
    local_peaks(p, t, &m, field, mine);
    MPI_Datatype pair = MPI_DATATYPE_NULL;
    MPI_Op op = MPI_OP_NULL;
    int ok = MPI_Type_contiguous(2, MPI_DOUBLE, &pair) == MPI_SUCCESS &&
             MPI_Type_commit(&pair) == MPI_SUCCESS && MPI_Op_create(maxloc, 1, &op) == MPI_SUCCESS &&
             MPI_Allreduce(MPI_IN_PLACE, mine, (int)p->frames, pair, op, comm) == MPI_SUCCESS;
    if (op != MPI_OP_NULL)
        MPI_Op_free(&op);
    if (pair != MPI_DATATYPE_NULL)
        MPI_Type_free(&pair);
    p->best = 0;
    for (int64_t f = 0; ok && f < p->frames; f++) {
        p->height[f] = p->value[f] = mine[f].value;
        p->at[f] = mine[f].at;
        int64_t pos = mine[f].at >= 0 ? (int64_t)mine[f].at : 0;
        for (int k = p->ndim - 1, a = p->naxes - 1; k >= 0; k--) {
            if (p->transformed[k])
                p->shift[f * p->naxes + a--] = (double)signed_shift(pos % p->shape[k], p->shape[k]);
            pos /= p->shape[k];
        }
        if (better(&mine[f], &mine[p->best]))
            p->best = (int)f;
    }
    return ok ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "MPI_Allreduce of the phase correlation's "
                                     "peaks failed");
}

/* ------------------------------------------------------- the upsampling */

/* The upsampled region: M points per axis, the integer shift at j = c. */
typedef struct region {
    int U, M, c;
    int64_t points; /* M^naxes */
} region;

/* exp(2 pi i nu (s U + j - c) / (n U)): r's kernel at the region's point j
 * of an axis of n points, the exponent reduced exactly. */
static double complex kernel(int64_t nu, int64_t s, int j, const region *g, int64_t n)
{
    int64_t nU = n * g->U, num = ((s * g->U + j - g->c) % nU + nU) % nU;
    int64_t e = (int64_t)(((__int128)nu * num) % nU);
    return cexp(2.0 * M_PI * I * (double)e / (double)nU);
}

/* a b in real arithmetic: C's complex product checks for infinities
 * (__muldc3) and is several times slower in these loops. */
static inline double complex cmul(double complex a, double complex b)
{
    double ar = creal(a), ai = cimag(a), br = creal(b), bi = cimag(b);
    return CMPLX(ar * br - ai * bi, ar * bi + ai * br);
}

/* out[p, j, q] = sum_i in[p, i, q] K[j, i]: in (pre, len, post), K (M,
 * len), out (pre, M, post). */
static void contract(const double complex *in, int64_t pre, int64_t len, int64_t post,
                     const double complex *K, int M, double complex *out)
{
    for (int64_t p = 0; p < pre; p++)
        for (int j = 0; j < M; j++) {
            double *o = (double *)(out + (p * M + j) * post);
            const double *k = (const double *)(K + (int64_t)j * len);
            if (post == 1) { /* a dot product along the axis */
                const double *x = (const double *)(in + p * len);
                double sr = 0, si = 0;
                for (int64_t i = 0; i < len; i++) {
                    sr += k[2 * i] * x[2 * i] - k[2 * i + 1] * x[2 * i + 1];
                    si += k[2 * i] * x[2 * i + 1] + k[2 * i + 1] * x[2 * i];
                }
                o[0] = sr;
                o[1] = si;
                continue;
            }
            for (int64_t q = 0; q < 2 * post; q++)
                o[q] = 0;
            for (int64_t i = 0; i < len; i++) {
                double kr = k[2 * i], ki = k[2 * i + 1];
                const double *x = (const double *)(in + (p * len + i) * post);
                for (int64_t q = 0; q < post; q++) {
                    o[2 * q] += kr * x[2 * q] - ki * x[2 * q + 1];
                    o[2 * q + 1] += kr * x[2 * q + 1] + ki * x[2 * q];
                }
            }
        }
}

/* One frame's part of the region on this rank: the sum over x of the
 * kernels' product, the transformed axes contracted from the last one
 * (x: cnt[a] points along transformed axis a, row-major; K[a]: M x cnt[a];
 * w0, w1: scratch of `room` elements), added to sums. */
static void frame_sums(const fs_peaks *p, const region *g, const int64_t *cnt,
                       double complex *const *K, const double complex *x, double complex *w0,
                       double complex *w1, double complex *sums)
{
    const double complex *in = x;
    double complex *out = w0;
    int64_t pre = 1, post = 1;
    for (int a = 0; a < p->naxes; a++)
        pre *= cnt[a];
    for (int a = p->naxes - 1; a >= 0; a--) {
        pre /= cnt[a];
        contract(in, pre, cnt[a], post, K[a], g->M, out);
        post *= g->M;
        in = out;
        out = out == w0 ? w1 : w0;
    }
    for (int64_t q = 0; q < g->points; q++)
        sums[q] += in[q];
}

/* The kernels of frame f over this rank's box b, K[a] (M x count of
 * transformed axis a): of the frequencies stored, or (mirror) of their
 * mirror images -nu, which a halved axis does not store, zero on its own
 * mirror planes (index 0 and n / 2, whose mirrors it holds). */
static void kernels(const fs_peaks *p, const fs_transform *t, const fs_box *b, const region *g,
                    int64_t f, int mirror, double complex *const *K)
{
    for (int a = 0; a < p->naxes; a++) {
        int k = (int)p->axes[a];
        int64_t n = p->shape[k], cnt = b->count[k];
        int halved = t->kind == FS_R2C && t->padded && k == t->real_axis;
        int64_t s = (int64_t)p->shift[f * p->naxes + a];
        for (int64_t i = 0; i < cnt; i++) {
            int64_t idx = b->start[k] + i, own = halved && (idx == 0 || 2 * idx == n);
            int64_t nu = fs_kgrid_freq(mirror ? (n - idx) % n : idx, n);
            for (int j = 0; j < g->M; j++)
                K[a][j * cnt + i] = mirror && own ? 0 : kernel(nu, s, j, g, n);
        }
    }
}

/* Element e of the kept spectrum. */
static double complex kept_at(const fs_peaks *p, const void *kept, int64_t e)
{
    return p->single ? CMPLX(((const float *)kept)[2 * e], ((const float *)kept)[2 * e + 1])
                     : CMPLX(((const double *)kept)[2 * e], ((const double *)kept)[2 * e + 1]);
}

/* The transformed axes of the frame at `base` in the kept box (row-major
 * strides), conjugated or not, into x. */
static void gather(const fs_peaks *p, const void *kept, const int64_t *stride,
                   int64_t base, const int64_t *cnt, int conjugate, double complex *x)
{
    int64_t ti[FS_LAYOUT_MAX_DIMS] = {0}, n = 1;
    for (int a = 0; a < p->naxes; a++)
        n *= cnt[a];
    for (int64_t e = 0; e < n; e++) {
        int64_t off = base;
        for (int a = 0; a < p->naxes; a++)
            off += ti[a] * stride[p->axes[a]];
        x[e] = kept_at(p, kept, off);
        x[e] = conjugate ? conj(x[e]) : x[e];
        for (int a = p->naxes - 1; a >= 0 && ++ti[a] == cnt[a]; a--)
            ti[a] = 0;
    }
}

/* Every frame's part of the region on this rank's box b, added to sums
 * (frames x points): the frequencies stored, and with a halved axis their
 * mirror images, X(-nu) = conj X(nu), so that the sum is the full
 * spectrum's. */
static fs_status box_sums(const fs_peaks *p, const fs_transform *t, const fs_box *b,
                          const region *g, double complex *sums)
{
    int64_t n = fs_box_elems(b);
    if (n == 0)
        return FS_OK;
    int halved = t->kind == FS_R2C && t->padded && t->real_axis >= 0;
    int64_t stride[FS_LAYOUT_MAX_DIMS], cnt[FS_LAYOUT_MAX_DIMS], sub = 1, room = 1;
    int64_t s = 1, pre, post = 1;
    for (int k = b->ndim - 1; k >= 0; s *= b->count[k], k--)
        stride[k] = s;
    for (int a = 0; a < p->naxes; a++)
        sub *= cnt[a] = b->count[p->axes[a]];
    pre = sub;
    for (int a = p->naxes - 1; a >= 0; post *= g->M, a--) {
        pre /= cnt[a];
        room = pre * g->M * post > room ? pre * g->M * post : room;
    }
    double complex *x = malloc(sizeof *x * (size_t)(sub + 2 * room)), *K[FS_LAYOUT_MAX_DIMS] = {0};
    int ok = x != NULL;
    for (int a = 0; a < p->naxes; a++)
        ok &= (K[a] = malloc(sizeof **K * (size_t)(g->M * cnt[a]))) != NULL;
    int64_t bidx[FS_LAYOUT_MAX_DIMS] = {0};
    for (int64_t fl = 0; ok && fl < n / sub; fl++) {
        int64_t base = 0, frame = 0;
        for (int k = 0; k < b->ndim; k++)
            if (!p->transformed[k]) {
                base += bidx[k] * stride[k];
                frame = frame * p->shape[k] + b->start[k] + bidx[k];
            }
        for (int mirror = 0; mirror <= halved; mirror++) {
            gather(p, p->kept, stride, base, cnt, mirror, x);
            kernels(p, t, b, g, frame, mirror, K);
            frame_sums(p, g, cnt, K, x, x + sub, x + sub + room, sums + frame * g->points);
        }
        for (int k = b->ndim - 1; k >= 0; k--)
            if (!p->transformed[k] && (++bidx[k] < b->count[k] || (bidx[k] = 0)))
                break;
    }
    free(x);
    for (int a = 0; a < p->naxes; a++)
        free(K[a]);
    return ok ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory for --upsample");
}

/* The 1-D four-step's box (one frame, the whole spectrum): element [k1,
 * i2] is frequency index fs_kgrid_fold_index; the region's points by
 * recurrence. */
static void fold_sums(const fs_peaks *p, const fs_transform *t, const fs_box *b, const region *g,
                      double complex *sums)
{
    int64_t cnt = fs_box_elems(b) ? b->count[0] : 0, n = p->shape[0], s = (int64_t)p->shift[0];
    for (int64_t k1 = 0; cnt && k1 < t->n1; k1++)
        for (int64_t i2 = 0; i2 < cnt; i2++) {
            int64_t nu = fs_kgrid_freq(fs_kgrid_fold_index(t, b, k1, i2), n);
            double complex w = kernel(nu, 0, g->c + 1, g, n);
            double complex z = cmul(kernel(nu, s, 0, g, n), kept_at(p, p->kept, k1 * cnt + i2));
            for (int j = 0; j < g->M; j++, z = cmul(z, w))
                sums[j] += z;
        }
}

/* Collective: every frame's region summed over the ranks, its largest
 * real part the frame's shift and height. The status is agreed. */
static fs_status refine(fs_peaks *p, MPI_Comm comm, const fs_transform *t, const fs_box *last)
{
    region g = {p->upsample, (int)ceil(1.5 * p->upsample), 0, 1};
    g.c = g.M / 2;
    for (int a = 0; a < p->naxes; a++)
        g.points *= g.M;
    double total = 2.0 * (double)g.points * (double)p->frames;
    double complex *sums = total < 2147483647.0 ? calloc((size_t)total / 2, sizeof *sums) : NULL;
    fs_status st = sums ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory for --upsample's "
                                               "%.0f points", total / 2);
    if (st == FS_OK && t->fold)
        fold_sums(p, t, last, &g, sums);
    else if (st == FS_OK)
        st = box_sums(p, t, last, &g, sums);
    st = fs_error_agree(comm, st);
    if (st == FS_OK && MPI_Allreduce(MPI_IN_PLACE, sums, (int)total, MPI_DOUBLE, MPI_SUM, comm) !=
                           MPI_SUCCESS)
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Allreduce of --upsample's points failed");
    st = fs_error_agree(comm, st);
    for (int64_t f = 0; st == FS_OK && f < p->frames; f++) {
        const double complex *r = sums + f * g.points;
        int64_t top = 0;
        for (int64_t q = 1; q < g.points; q++)
            top = creal(r[q]) > creal(r[top]) ? q : top;
        p->height[f] = creal(r[top]);
        for (int a = p->naxes - 1, q = (int)top; a >= 0; a--, q /= g.M)
            p->shift[f * p->naxes + a] += (double)(q % g.M - g.c) / g.U;
    }
    free(sums);
    return st;
}

fs_status fs_peaks_find(fs_peaks *p, MPI_Comm comm, const fs_transform *t, const fs_box *first,
                        const fs_box *last, const void *field)
{
    peak *mine = malloc(sizeof *mine * (size_t)p->frames);
    fs_status st = fs_error_agree(comm, mine ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of "
                                                                    "memory for the peaks"));
    if (st == FS_OK)
        st = fs_error_agree(comm, integer_peaks(p, comm, t, first, field, mine));
    free(mine);
    if (st == FS_OK && p->upsample > 1)
        st = refine(p, comm, t, last);
    free(p->kept);
    p->kept = NULL;
    p->found = st == FS_OK;
    return st;
}

/* ------------------------------------------------ the group, the report */

/* The tables shift (frame, axis), peak_height (frame) and their
 * coordinates: frame, the row-major index over the batch axes, and axis,
 * the transformed axes' numbers. */
static fs_status write_tables(const fs_peaks *p, fs_h5_output *o)
{
    char path[4][FS_PATH_MAX + 16];
    static const char *const names[4] = {"frame", "axis", "shift", "peak_height"};
    for (int i = 0; i < 4; i++)
        snprintf(path[i], sizeof path[i], "%s/%s", p->group, names[i]);
    int64_t *frames = malloc(sizeof *frames * (size_t)p->frames);
    fs_status st = frames ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory");
    for (int64_t f = 0; frames && f < p->frames; f++)
        frames[f] = f;
    int64_t dims[2] = {p->frames, p->naxes};
    if (st == FS_OK)
        st = fs_h5_output_table(o, path[0], 1, dims, FS_DTYPE_INTEGER, frames);
    if (st == FS_OK)
        st = fs_h5_output_table(o, path[1], 1, dims + 1, FS_DTYPE_INTEGER, p->axes);
    if (st == FS_OK)
        st = fs_h5_output_table(o, path[2], 2, dims, FS_DTYPE_FLOAT64, p->shift);
    if (st == FS_OK)
        st = fs_h5_output_table(o, path[3], 1, dims, FS_DTYPE_FLOAT64, p->height);
    free(frames);
    for (int i = 0; i < 2 && st == FS_OK; i++)
        st = fs_h5_scale_set(o, path[i]);
    const char *const both[2] = {path[0], path[1]};
    if (st == FS_OK)
        st = fs_h5_scales_attach(o, path[2], 2, both);
    if (st == FS_OK)
        st = fs_h5_scales_attach(o, path[3], 1, both);
    static const char *const text[4][2] = {
        {"1", "frame: the row-major index over the batch axes"},
        {"1", "the transformed axis"},
        {"grid_spacing", "shift of the first INPUT against the second (numpy's signed convention)"},
        {"1", "peak height: the phase correlation at the shift"},
    };
    for (int i = 0; i < 4 && st == FS_OK; i++) {
        st = fs_h5_text_attr(o, path[i], "units", text[i][0]);
        if (st == FS_OK)
            st = fs_h5_text_attr(o, path[i], "long_name", text[i][1]);
    }
    return st;
}

const char *fs_peaks_group(const fs_peaks *p)
{
    return p->group;
}

fs_status fs_peaks_write(const fs_peaks *p, fs_h5_output *o, int replace)
{
    fs_status st = fs_h5_output_group(o, p->group, replace);
    int64_t up = p->upsample;
    if (st == FS_OK)
        st = fs_h5_output_attr_string(o, "description",
                                      "phase correlation r = ifftn(R / |R|), R = fftn(a) "
                                      "conj(fftn(b)), per frame: the shift of its largest real "
                                      "part (upsample > 1: on a grid of 1 / upsample around the "
                                      "integer peak, Guizar-Sicairos et al. 2008) and its height");
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(o, "upsample", -1, &up);
    return st == FS_OK ? write_tables(p, o) : st;
}

void fs_peaks_json(fs_json *j, const fs_peaks *p)
{
    if (!p || !p->found)
        return;
    int64_t index[FS_LAYOUT_MAX_DIMS], shift[FS_LAYOUT_MAX_DIMS];
    int64_t pos = (int64_t)p->at[p->best];
    for (int k = p->ndim - 1; k >= 0; k--) {
        index[k] = pos % p->shape[k];
        pos /= p->shape[k];
    }
    for (int a = 0; a < p->naxes; a++)
        shift[a] = signed_shift(index[p->axes[a]], p->shape[p->axes[a]]);
    fs_json_open(j, "peak", '{');
    fs_json_num(j, "value", p->value[p->best]);
    fs_json_ints(j, "index", p->ndim, index);
    fs_json_ints(j, "axes", p->naxes, p->axes);
    fs_json_ints(j, "shift", p->naxes, shift);
    fs_json_close(j, '}');
    fs_json_open(j, "frames", '{');
    fs_json_int(j, "count", p->frames);
    fs_json_int(j, "upsample", p->upsample);
    fs_json_str(j, "group", p->group);
    fs_json_open(j, "shift", '[');
    for (int64_t f = 0; f < p->frames; f++) {
        fs_json_open(j, NULL, '[');
        for (int a = 0; a < p->naxes; a++)
            fs_json_num(j, NULL, p->shift[f * p->naxes + a]);
        fs_json_close(j, ']');
    }
    fs_json_close(j, ']');
    fs_json_open(j, "height", '[');
    for (int64_t f = 0; f < p->frames; f++)
        fs_json_num(j, NULL, p->height[f]);
    fs_json_close(j, ']');
    fs_json_close(j, '}');
}

void fs_peaks_summary(const fs_peaks *p, const char *output, char *buf, size_t size)
{
    if (!p || !p->found || size == 0) {
        if (size)
            buf[0] = '\0';
        return;
    }
    if (p->frames > 1) {
        double lo = p->height[0], hi = p->height[0];
        for (int64_t f = 1; f < p->frames; f++) {
            lo = p->height[f] < lo ? p->height[f] : lo;
            hi = p->height[f] > hi ? p->height[f] : hi;
        }
        snprintf(buf, size, "; the shifts of %lld frames in %s:%s, peaks %.6g to %.6g",
                 (long long)p->frames, output, p->group, lo, hi);
        return;
    }
    int used = snprintf(buf, size, "; shift (");
    for (int a = 0; a < p->naxes && used > 0 && (size_t)used < size; a++)
        used += snprintf(buf + used, size - (size_t)used, "%s%.6g", a ? ", " : "", p->shift[a]);
    if (used > 0 && (size_t)used < size)
        snprintf(buf + used, size - (size_t)used, ") at peak %.6g", p->height[0]);
}
