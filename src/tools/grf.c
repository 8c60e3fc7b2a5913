/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grf: see grf.h. */
#include "config.h"

#include "tools/grf.h"
#include "core/collective.h"

#include <complex.h>
#include <fftw3.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exchange/exchange.h"
#include "core/buffer.h"
#include "tools/synth.h"

/* Lines gathered per pass of a strided axis: whole cache lines of each row. */
#define GRF_TILE_LINES 16

/* The half spectrum: every axis whole but the last, n/2+1 along it. */
static void half_shape(const fs_grf *g, int64_t h[FS_LAYOUT_MAX_DIMS])
{
    memcpy(h, g->shape, (size_t)g->ndim * sizeof *h);
    h[g->ndim - 1] = g->shape[g->ndim - 1] / 2 + 1;
}

/* A standard normal pair (Box-Muller) from draws 2c and 2c+1 of the seed. */
static void normal_pair(uint64_t seed, uint64_t c, double *z1, double *z2)
{
    double u1 = 1.0 - (fs_synth_uniform(seed, 2 * c) + 1.0) / 2.0; /* (0, 1] */
    double u2 = (fs_synth_uniform(seed, 2 * c + 1) + 1.0) / 2.0;
    double r = sqrt(-2.0 * log(u1));
    *z1 = r * cos(2 * M_PI * u2);
    *z2 = r * sin(2 * M_PI * u2);
}

/* The coefficient of half-spectrum mode j: sqrt(A / V) |k|^(n/2) g with g a
 * complex Gaussian of <|g|^2> = 1. Within the planes of the last axis that
 * hold both j and -j (frequency 0 and Nyquist), the two share the draw of
 * the lower index, conjugated for the other, so the field is real; a mode
 * that is its own mirror is real with variance 1. The inverse transform
 * (unnormalised) then gives X = N x this, i.e. <|X|^2> V / N^2 = A |k|^n. */
static double complex mode_value(const fs_grf *g, const int64_t *h, const int64_t *j,
                                 double scale)
{
    int d = g->ndim, last = d - 1;
    double k2 = 0;
    uint64_t index = 0, mirror = 0;
    for (int a = 0; a < d; a++) {
        int64_t n = g->shape[a];
        int64_t f = j[a] < (n + 1) / 2 ? j[a] : j[a] - n;
        double k = 2 * M_PI * (double)f / g->box_size[a];
        k2 += k * k;
        int64_t jm = a == last ? j[a] : (n - j[a]) % n;
        index = index * (uint64_t)h[a] + (uint64_t)j[a];
        mirror = mirror * (uint64_t)h[a] + (uint64_t)jm;
    }
    if (k2 == 0)
        return 0;
    int64_t n_last = g->shape[last];
    int paired = j[last] == 0 || (n_last % 2 == 0 && j[last] == n_last / 2);
    double amp = g->table ? scale * sqrt(fs_table_at(g->table, sqrt(k2)))
                          : scale * pow(k2, g->index / 4);
    double z1, z2;
    if (paired && mirror == index) {
        normal_pair(g->seed, index, &z1, &z2);
        return amp * z1;
    }
    uint64_t draw = paired && mirror < index ? mirror : index;
    normal_pair(g->seed, draw, &z1, &z2);
    double sign = draw == index ? 1.0 : -1.0;
    return amp * M_SQRT1_2 * (z1 + sign * z2 * I);
}

void fs_grf_k_range(int ndim, const int64_t *shape, const double *box, double *kmin,
                    double *kmax)
{
    double k2 = 0;
    *kmin = 0;
    for (int a = 0; a < ndim; a++) {
        double k = 2 * M_PI * (double)(shape[a] / 2) / box[a], kf = 2 * M_PI / box[a];
        k2 += k * k;
        if (shape[a] > 1 && (*kmin == 0 || kf < *kmin))
            *kmin = kf;
    }
    *kmax = sqrt(k2);
}

/* The coefficients of this rank's box of the half spectrum, row-major. */
static void fill_modes(const fs_grf *g, const int64_t *h, const fs_box *box, double complex *data)
{
    double volume = 1;
    for (int a = 0; a < g->ndim; a++)
        volume *= g->box_size[a];
    double scale = sqrt((g->table ? 1.0 : g->amplitude) / volume);
    int64_t n = fs_box_elems(box), at[FS_LAYOUT_MAX_DIMS];
    for (int a = 0; a < g->ndim; a++)
        at[a] = box->start[a];
    for (int64_t i = 0; i < n; i++) {
        data[i] = mode_value(g, h, at, scale);
        for (int a = g->ndim - 1; a >= 0 && ++at[a] == box->start[a] + box->count[a]; a--)
            at[a] = box->start[a];
    }
}

/* The inverse 1-D transform of every line along `axis` of the row-major
 * box `count`, each through the same plan on a copy in `scratch`
 * (GRF_TILE_LINES x count[axis]): a few lines at a time are gathered, so a
 * strided axis is read a cache line at a time. */
static void lines_c2c(fftw_plan plan, double complex *data, int ndim, const int64_t *count,
                      int axis, double complex *scratch)
{
    int64_t outer = 1, len = count[axis], inner = 1;
    for (int a = 0; a < axis; a++)
        outer *= count[a];
    for (int a = axis + 1; a < ndim; a++)
        inner *= count[a];
    for (int64_t o = 0; o < outer; o++) {
        double complex *base = data + o * len * inner;
        for (int64_t i0 = 0; i0 < inner; i0 += GRF_TILE_LINES) {
            int64_t lines = inner - i0 < GRF_TILE_LINES ? inner - i0 : GRF_TILE_LINES;
            for (int64_t t = 0; t < len; t++)
                for (int64_t q = 0; q < lines; q++)
                    scratch[q * len + t] = base[t * inner + i0 + q];
            for (int64_t q = 0; q < lines; q++)
                fftw_execute_dft(plan, (fftw_complex *)(scratch + q * len),
                                 (fftw_complex *)(scratch + q * len));
            for (int64_t t = 0; t < len; t++)
                for (int64_t q = 0; q < lines; q++)
                    base[t * inner + i0 + q] = scratch[q * len + t];
        }
    }
}

/* The working state of one fill: the plans and buffers, freed in one place. */
typedef struct grf_work {
    fftw_plan c2c[FS_LAYOUT_MAX_DIMS]; /* per axis but the last */
    fftw_plan c2r;
    double complex *spectrum;          /* this rank's box of the half spectrum */
    int64_t spectrum_elems;
    double complex *line;              /* GRF_TILE_LINES lines of the longest axis */
    double *row;                       /* one real row */
    fs_redist *rd;
    fs_exchange *x;
} grf_work;

static void work_free(grf_work *w)
{
    for (int a = 0; a < FS_LAYOUT_MAX_DIMS; a++)
        if (w->c2c[a])
            fftw_destroy_plan(w->c2c[a]);
    if (w->c2r)
        fftw_destroy_plan(w->c2r);
    fs_exchange_free(&w->x);
    fs_redist_free(&w->rd);
    fs_buffer_free(w->spectrum);
    fftw_free(w->line);
    fftw_free(w->row);
    memset(w, 0, sizeof *w);
}

/* The 1-D plans and line buffers. FFTW_UNALIGNED: the plan runs the same
 * code on every line wherever it lies, so the bits do not depend on it. */
static fs_status work_plan(const fs_grf *g, grf_work *w)
{
    int last = g->ndim - 1;
    int64_t longest = g->shape[last] / 2 + 1;
    for (int a = 0; a < last; a++)
        longest = g->shape[a] > longest ? g->shape[a] : longest;
    w->line = fftw_malloc((size_t)(GRF_TILE_LINES * longest) * sizeof *w->line);
    w->row = fftw_malloc((size_t)g->shape[last] * sizeof *w->row);
    if (!w->line || !w->row)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory for the field's line buffers");
    for (int a = 0; a <= last; a++)
        if (g->shape[a] > INT_MAX)
            return fs_error_set(FS_ERR_USAGE, "axis %d: FFTW transforms at most %d points", a,
                                INT_MAX);
    unsigned flags = FFTW_ESTIMATE | FFTW_UNALIGNED;
    for (int a = 0; a < last; a++) {
        w->c2c[a] = fftw_plan_dft_1d((int)g->shape[a], (fftw_complex *)w->line,
                                     (fftw_complex *)w->line, FFTW_BACKWARD, flags);
        if (!w->c2c[a])
            return fs_error_set(FS_ERR_RUNTIME, "FFTW cannot plan a transform of length %" PRId64,
                                g->shape[a]);
    }
    w->c2r = fftw_plan_dft_c2r_1d((int)g->shape[last], (fftw_complex *)w->line, w->row, flags);
    if (!w->c2r)
        return fs_error_set(FS_ERR_RUNTIME, "FFTW cannot plan a real transform of length %" PRId64,
                            g->shape[last]);
    return FS_OK;
}

/* The slab of the half spectrum split along axis 1 (all of axis 0 on each
 * rank, for its transform) moved to the slab split along axis 0 (the
 * output's rows). Plans the exchange and sizes the spectrum buffer. */
static fs_status work_exchange(MPI_Comm comm, const fs_grf *g, const int64_t *h, int nranks,
                               int rank, grf_work *w)
{
    fs_box *from = malloc((size_t)nranks * sizeof *from);
    fs_box *to = malloc((size_t)nranks * sizeof *to);
    fs_status st = FS_OK;
    if (!from || !to) {
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory for %d ranks' boxes", nranks);
        goto done;
    }
    for (int p = 0; p < nranks; p++) {
        from[p] = fs_box_split(g->ndim, h, 1, nranks, p);
        to[p] = fs_box_split(g->ndim, h, 0, nranks, p);
    }
    w->rd = fs_redist_new(nranks, rank, from, to);
    if (!w->rd) {
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory for the field's exchange");
        goto done;
    }
    static const fs_exchange_params params = {FS_DEFAULT_SEED, FS_DEFAULT_PACKET_BYTES,
                                              FS_DEFAULT_QUEUES, 0};
    fs_exchange_args args = {
        .comm = comm,
        .rd = w->rd,
        .elem_bytes = sizeof(double complex),
        .elem_type = MPI_C_DOUBLE_COMPLEX,
        .params = &params,
        .hooks = NULL,
    };
    /* In place: no second array, nothing to size beyond the work. */
    st = fs_exchange_new(fs_exchange_find("pairwise"), &args, &w->x);
    if (st != FS_OK)
        goto done;
    int64_t elems = w->x->work_elems;
    elems = fs_box_elems(&from[rank]) > elems ? fs_box_elems(&from[rank]) : elems;
    elems = fs_box_elems(&to[rank]) > elems ? fs_box_elems(&to[rank]) : elems;
    w->spectrum = fs_buffer_alloc((size_t)(elems > 0 ? elems : 1) * sizeof *w->spectrum);
    w->spectrum_elems = elems;
    if (!w->spectrum)
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory for %" PRId64 " complex values", elems);
done:
    free(from);
    free(to);
    return st;
}

/* Nonzero when v is finite in type t. */
static int fits(double v, fs_dtype t)
{
    int single = t == FS_DTYPE_FLOAT32 || t == FS_DTYPE_COMPLEX64;
    return isfinite(v) && (!single || fabs(v) <= FLT_MAX);
}

/* A field too large for its type (an amplitude or box size at the extremes). */
static fs_status not_finite(void)
{
    return fs_error_set(FS_ERR_USAGE, "the field's values overflow: choose a smaller --amplitude "
                                      "or a milder --power-law for this --box-size");
}

/* The axes after 0 but the last (complex), then the last (complex to real)
 * row by row, of the half-spectrum box `box` into `out`: its real rows. */
static fs_status finish_rows(const fs_grf *g, grf_work *w, const fs_box *box, fs_dtype t,
                             void *out)
{
    int last = g->ndim - 1;
    for (int a = 1; a < last; a++)
        lines_c2c(w->c2c[a], w->spectrum, g->ndim, box->count, a, w->line);
    int64_t m = box->count[last], n = g->shape[last], rows = fs_box_elems(box) / m;
    for (int64_t r = 0; r < rows; r++) {
        memcpy(w->line, w->spectrum + r * m, (size_t)m * sizeof *w->line);
        fftw_execute_dft_c2r(w->c2r, (fftw_complex *)w->line, w->row);
        for (int64_t i = 0; i < n; i++) {
            if (!fits(w->row[i], t))
                return not_finite();
            fs_synth_store(t, out, r * n + i, w->row[i], 0.0);
        }
    }
    return FS_OK;
}

fs_status fs_grf_fill(MPI_Comm comm, const fs_grf *g, const fs_box *box, fs_dtype t, void *out)
{
    int rank = 0, nranks = 1;
    int err = MPI_Comm_rank(comm, &rank);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_size(comm, &nranks);
    if (err != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "cannot learn the ranks: %s", fs_mpi_strerror(err));
    int64_t h[FS_LAYOUT_MAX_DIMS];
    half_shape(g, h);
    grf_work w;
    memset(&w, 0, sizeof w);
    fs_status st = work_plan(g, &w);
    if (g->ndim == 1) {
        /* One line: every rank computes it whole and keeps its part. */
        fs_box whole = fs_box_full(1, h);
        if (st == FS_OK && !(w.spectrum = fs_buffer_alloc((size_t)h[0] * sizeof *w.spectrum)))
            st = fs_error_set(FS_ERR_RUNTIME, "out of memory for %" PRId64 " complex values", h[0]);
        if (st == FS_OK) {
            fill_modes(g, h, &whole, w.spectrum);
            fftw_execute_dft_c2r(w.c2r, (fftw_complex *)w.spectrum, w.row);
            for (int64_t i = 0; i < box->count[0] && st == FS_OK; i++) {
                if (!fits(w.row[box->start[0] + i], t))
                    st = not_finite();
                fs_synth_store(t, out, i, w.row[box->start[0] + i], 0.0);
            }
        }
        work_free(&w);
        return st;
    }
    if (st == FS_OK)
        st = work_exchange(comm, g, h, nranks, rank, &w);
    if (st == FS_OK) {
        fs_box a = fs_box_split(g->ndim, h, 1, nranks, rank);
        fill_modes(g, h, &a, w.spectrum);
        lines_c2c(w.c2c[0], w.spectrum, g->ndim, a.count, 0, w.line);
    }
    /* Nobody waits in the exchange for a rank that failed. */
    if (fs_error_agree_quiet(comm, st) == FS_OK) {
        void *data = w.spectrum;
        st = fs_exchange_execute(w.x, &data, &w.spectrum_elems);
        w.spectrum = data;
        if (st == FS_OK) {
            fs_box b = fs_box_split(g->ndim, h, 0, nranks, rank);
            st = finish_rows(g, &w, &b, t, out);
        }
    }
    work_free(&w);
    return st;
}
