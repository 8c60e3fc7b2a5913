/* SPDX-License-Identifier: GPL-3.0-or-later */
/* combine: see combine.h. */
#include "config.h"

#include "analysis/combine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/vector.h"
#include "core/collective.h"
#include "core/dtype.h"
#include "io/h5io.h"

struct fs_combine {
    fs_combine_op op;
    int n;                         /* INPUTs: 1 or 2 */
    const char *path;              /* the result's path in OUTPUT */
    double inv_points;             /* 1 / N, N the points of the transformed axes (the
                                      inverse that follows leaves the 1 / N to the caller) */
    void *kept;                    /* input a's forward result on this rank (two INPUTs) */
    int64_t kept_elems;
    /* --vector (vector.h): the grid, the kept spectra, the results' paths */
    fs_kgrid grid;
    int nslots, nresults;
    void *slot[FS_VECTOR_MAX_AXES];
    char paths[FS_VECTOR_MAX_RESULTS][FS_COMBINE_PATH_MAX];
    /* --phase-correlate: the peak, the same on every rank once found */
    int found;
    int ndim;
    double peak;
    int64_t index[FS_LAYOUT_MAX_DIMS];
    int64_t shape[FS_LAYOUT_MAX_DIMS];
    int transformed[FS_LAYOUT_MAX_DIMS];
};

static const char *const names[] = {NULL, "correlate", "convolve", "phase-correlate", "gradient",
                                    "curl", "divergence", "helmholtz"};
static const char *const paths[] = {NULL, "/correlation", "/convolution", "/phase_correlation"};

const char *fs_combine_name(fs_combine_op op)
{
    return op > FS_COMBINE_NONE && op <= FS_COMBINE_HELMHOLTZ ? names[op] : NULL;
}

/* The transformed axes of an ndim-D INPUT (0 when the axes do not fit it). */
static int transformed_axes(const fs_run_config *o, int ndim)
{
    int axes[FS_MAX_DIMS], D = 0;
    if (fs_run_config_axes(o, ndim, axes) != FS_OK)
        return 0;
    for (int a = 0; a < FS_MAX_DIMS; a++)
        D += axes[a] != 0;
    return D;
}

int fs_combine_results(const fs_run_config *o, int ndim)
{
    if (!fs_combine_name(o->combine))
        return 0;
    if (!fs_vector_is(o->combine))
        return 1;
    int D = transformed_axes(o, ndim);
    return fs_vector_results(o->combine, D < FS_VECTOR_MAX_AXES ? D : FS_VECTOR_MAX_AXES);
}

void fs_combine_result_path(const fs_run_config *o, int ndim, int k, char *buf, size_t size)
{
    const char *given = o->output_dataset;
    if (!fs_vector_is(o->combine)) {
        snprintf(buf, size, "%s", given ? given : paths[o->combine]);
        return;
    }
    int D = transformed_axes(o, ndim);
    char name[32];
    fs_vector_result_name(o->combine, D, k, name, sizeof name);
    size_t len = given ? strlen(given) : 0;
    while (len > 0 && given[len - 1] == '/') /* OUTPUT:/group/ */
        len--;
    snprintf(buf, size, "%.*s/%s", (int)len, given ? given : "", name);
}

/* The two INPUTs' results lie in the same boxes: the same transform. */
static fs_status check_alike(fs_combine_op op, const fs_transform *a, const fs_transform *b)
{
    const char *count = fs_vector_is(op) ? "" : "two ";
    char name[40];
    snprintf(name, sizeof name, "%s%s", fs_vector_is(op) ? "vector=" : "", names[op]);
    int same = a->in_ndim == b->in_ndim &&
               memcmp(a->in_shape, b->in_shape, sizeof a->in_shape) == 0 &&
               memcmp(a->transform_axis, b->transform_axis, sizeof a->transform_axis) == 0;
    if (!same)
        return fs_error_set(FS_ERR_USAGE, "--%s: the %sINPUTs must have one shape and the same "
                            "transformed axes", name, count);
    if (a->kind != b->kind || a->prec != b->prec || a->ndim != b->ndim ||
        a->padded != b->padded || a->out_type != b->out_type ||
        memcmp(a->shape, b->shape, sizeof a->shape) != 0 ||
        memcmp(a->split, b->split, sizeof a->split) != 0 || a->grid[0] != b->grid[0] ||
        a->grid[1] != b->grid[1])
        return fs_error_set(FS_ERR_USAGE, "--%s: the %sINPUTs must be transformed alike (all "
                            "real or all complex; give --precision= when one is single "
                            "precision)", name, count);
    return FS_OK;
}

/* --vector: the grid, and the INPUTs the operation takes on it. */
static fs_status check_vector(const fs_run_config *o, const fs_transform *t, int n, fs_kgrid *g)
{
    const char *name = names[o->combine];
    if (fs_kgrid_init(g, t, o->box, o->nbox) != FS_OK)
        return fs_error_status();
    int D = g->naxes;
    if (D > FS_VECTOR_MAX_AXES)
        return fs_error_set(FS_ERR_USAGE, "--vector=%s: takes one to three transformed axes (%d "
                            "here; choose them with --axes)", name, D);
    if (o->combine == FS_COMBINE_CURL && D != 3)
        return fs_error_set(FS_ERR_USAGE, "--vector=curl: needs a 3-D transform (%d transformed "
                            "axes here)", D);
    int need = fs_vector_inputs(o->combine, D);
    if (n != need)
        return fs_error_set(FS_ERR_USAGE, "--vector=%s: expected %d INPUT%s, the components along "
                            "the %d transformed axes (got %d)", name, need, need == 1 ? "" : "s",
                            D, n);
    return FS_OK;
}

fs_status fs_combine_new(const fs_run_config *o, const fs_transform *const *ts, int n,
                         fs_combine **out)
{
    *out = NULL;
    const char *name = fs_combine_name(o->combine);
    if (!name)
        return FS_OK;
    for (int i = 1; i < n; i++)
        if (check_alike(o->combine, ts[0], ts[i]) != FS_OK)
            return fs_error_status();
    fs_kgrid grid;
    if (fs_vector_is(o->combine) && check_vector(o, ts[0], n, &grid) != FS_OK)
        return fs_error_status();
    fs_combine *cb = calloc(1, sizeof *cb);
    if (!cb)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    const fs_transform *t = ts[0];
    double points = 1;
    for (int k = 0; k < t->in_ndim; k++)
        if (t->transform_axis[k])
            points *= (double)t->in_shape[k];
    cb->op = o->combine;
    cb->n = n;
    cb->nresults = fs_combine_results(o, t->in_ndim);
    for (int k = 0; k < cb->nresults; k++)
        fs_combine_result_path(o, t->in_ndim, k, cb->paths[k], sizeof cb->paths[k]);
    cb->path = cb->paths[0];
    if (fs_vector_is(o->combine)) {
        cb->grid = grid;
        cb->nslots = fs_vector_slots(o->combine, n);
    }
    cb->inv_points = 1.0 / points;
    cb->ndim = t->in_ndim;
    memcpy(cb->shape, t->in_shape, sizeof cb->shape);
    memcpy(cb->transformed, t->transform_axis, sizeof cb->transformed);
    *out = cb;
    return FS_OK;
}

void fs_combine_free(fs_combine **cb)
{
    if (!*cb)
        return;
    free((*cb)->kept);
    for (int s = 0; s < FS_VECTOR_MAX_AXES; s++)
        free((*cb)->slot[s]);
    free(*cb);
    *cb = NULL;
}

int fs_combine_writes(const fs_combine *cb, int i)
{
    return !cb || i == cb->n - 1;
}

int fs_combine_count(const fs_combine *cb, int i)
{
    return !cb ? 1 : i == cb->n - 1 ? cb->nresults : 0;
}

const fs_kgrid *fs_combine_grid(const fs_combine *cb)
{
    return cb && fs_vector_is(cb->op) ? &cb->grid : NULL;
}

/* --vector: input i's spectrum kept in its slot, or (the last) result 0
 * made, the slots that are left allocated first. */
static fs_status vector_apply(fs_combine *cb, int i, const fs_transform *t, const fs_box *last,
                              void *data)
{
    size_t bytes = (size_t)fs_box_elems(last) * fs_complex_bytes(t->prec);
    for (int s = i; s < cb->nslots && (s == i || i == cb->n - 1); s++) {
        free(cb->slot[s]);
        cb->slot[s] = malloc(bytes ? bytes : 1);
        if (!cb->slot[s])
            return fs_error_set(FS_ERR_RUNTIME, "out of memory keeping the spectra for --vector=%s "
                                "(%zu bytes)", names[cb->op], bytes);
    }
    if (i < cb->n - 1) {
        memcpy(cb->slot[i], data, bytes);
        return FS_OK;
    }
    fs_status st = fs_vector_first(cb->op, &cb->grid, t, last, cb->slot, data, cb->inv_points);
    for (int s = 0; s < FS_VECTOR_MAX_AXES && cb->nresults == 1; s++) {
        free(cb->slot[s]); /* the only result made */
        cb->slot[s] = NULL;
    }
    return st;
}

fs_status fs_combine_next(fs_combine *cb, int k, const fs_transform *t, const fs_box *last,
                          void *data)
{
    fs_status st = fs_vector_next(cb->op, &cb->grid, t, last, cb->slot, data, k, cb->inv_points);
    for (int s = 0; s < FS_VECTOR_MAX_AXES && k == cb->nresults - 1; s++) {
        free(cb->slot[s]); /* the last result made */
        cb->slot[s] = NULL;
    }
    return st;
}

const char *fs_combine_path(const fs_combine *cb, int k)
{
    return cb->paths[k];
}

/* One element: b becomes op(a, b) (a == b for one INPUT) times scale (the
 * phase: times scale / |R|). */
static inline void combine_one(fs_combine_op op, double scale, double ar, double ai, double *br,
                               double *bi)
{
    double xr = *br, xi = *bi, rr, ri;
    if (op == FS_COMBINE_CONVOLVE) {
        rr = ar * xr - ai * xi;
        ri = ar * xi + ai * xr;
    } else { /* a conj b */
        rr = ar * xr + ai * xi;
        ri = ai * xr - ar * xi;
    }
    if (op == FS_COMBINE_PHASE) {
        double m = hypot(rr, ri);
        scale = m > 0 ? scale / m : 0.0;
    }
    *br = rr * scale;
    *bi = ri * scale;
}

/* b = op(a, b) over n complex elements of either precision. */
#define COMBINE_LOOP(type)                                                                     \
    do {                                                                                       \
        const type *a = a_;                                                                    \
        type *b = b_;                                                                          \
        for (int64_t e = 0; e < n; e++) {                                                      \
            double br = b[2 * e], bi = b[2 * e + 1];                                           \
            combine_one(op, scale, a[2 * e], a[2 * e + 1], &br, &bi);                          \
            b[2 * e] = (type)br;                                                               \
            b[2 * e + 1] = (type)bi;                                                           \
        }                                                                                      \
    } while (0)

static void combine_all(fs_combine_op op, double scale, fs_precision prec, const void *a_,
                        void *b_, int64_t n)
{
    if (prec == FS_SINGLE)
        COMBINE_LOOP(float);
    else
        COMBINE_LOOP(double);
}

fs_status fs_combine_apply(fs_combine *cb, int i, const fs_transform *t, const fs_box *last,
                           void *data)
{
    if (fs_vector_is(cb->op))
        return vector_apply(cb, i, t, last, data);
    int64_t n = fs_box_elems(last);
    size_t bytes = (size_t)n * fs_complex_bytes(t->prec);
    if (cb->n > 1 && i == 0) { /* a, kept while b is transformed */
        free(cb->kept);
        cb->kept = bytes ? malloc(bytes) : NULL;
        cb->kept_elems = n;
        if (bytes && !cb->kept)
            return fs_error_set(FS_ERR_RUNTIME, "out of memory keeping the first INPUT's "
                                "transform for --%s (%zu bytes)", names[cb->op], bytes);
        if (bytes)
            memcpy(cb->kept, data, bytes);
        return FS_OK;
    }
    if (cb->n > 1 && cb->kept_elems != n)
        return fs_error_set(FS_ERR_RUNTIME, "--%s: the two INPUTs' transforms lie in different "
                            "boxes", names[cb->op]);
    /* the inverse is unscaled: ifftn is 1 / N of it */
    double scale = cb->op == FS_COMBINE_CORRELATE ? cb->inv_points * cb->inv_points
                                                  : cb->inv_points;
    combine_all(cb->op, scale, t->prec, cb->n > 1 ? cb->kept : data, data, n);
    free(cb->kept);
    cb->kept = NULL;
    return FS_OK;
}

/* ------------------------------------------------------------------ peak */

/* The largest value of a rank: its value and its position in numpy's
 * order (the row-major index in the input's shape). */
typedef struct peak {
    double value;
    double at;      /* < 0: none on this rank */
} peak;

/* The real part of element `off` of memory of type mt. */
static double real_at(const void *data, fs_dtype mt, int64_t off)
{
    int complex_ = !fs_dtype_is_real(mt);
    int64_t o = complex_ ? 2 * off : off;
    return fs_dtype_is_single(mt) ? (double)((const float *)data)[o] : ((const double *)data)[o];
}

/* The largest real part of this rank's box, through the write map m (its
 * elements' file positions and where they lie in memory). */
static peak local_peak(const fs_transform *t, const fs_io_map *m, const void *data)
{
    peak p = {-INFINITY, -1};
    const fs_box *fb = &m->file_box;
    int64_t n = fs_box_elems(fb);
    int nd = fb->ndim, last = nd - 1;
    int64_t step = m->mem_stride_last > 1 ? m->mem_stride_last : 1;
    int64_t j[FS_LAYOUT_MAX_DIMS] = {0};
    for (int64_t e = 0; e < n; e++) {
        int64_t off = 0, pos = 0;
        for (int k = 0; k < nd; k++) {
            off = off * m->mem_dims[k] + m->mem_start[k] + j[k] * (k == last ? step : 1);
            pos = m->fold_inner > 0 ? (fb->start[0] + j[0]) * m->fold_inner + fb->start[1] + j[1]
                                    : pos * t->in_shape[k] + fb->start[k] + j[k];
        }
        double v = real_at(data, m->mem_type, off);
        if (v > p.value || (v == p.value && (double)pos < p.at) || p.at < 0) {
            p.value = v;
            p.at = (double)pos;
        }
        for (int k = last; k >= 0 && ++j[k] == fb->count[k]; k--)
            j[k] = 0;
    }
    return p;
}

fs_status fs_combine_peak(fs_combine *cb, MPI_Comm comm, const fs_transform *t,
                          const fs_box *first, const void *data)
{
    if (cb->op != FS_COMBINE_PHASE)
        return FS_OK;
    int nranks;
    if (MPI_Comm_size(comm, &nranks) != MPI_SUCCESS)
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_size failed"));
    fs_io_map m = fs_transform_write_map(t, first);
    peak mine = local_peak(t, &m, data);
    peak *all = malloc((size_t)nranks * sizeof *all);
    fs_status st = fs_error_agree(comm, all ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory"));
    if (st != FS_OK) {
        free(all);
        return st;
    }
    if (MPI_Allgather(&mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, comm) != MPI_SUCCESS)
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Allgather of the phase correlation's peak failed");
    st = fs_error_agree(comm, st);
    peak best = {-INFINITY, -1};
    for (int r = 0; r < nranks && st == FS_OK; r++)
        if (all[r].at >= 0 && (best.at < 0 || all[r].value > best.value ||
                               (all[r].value == best.value && all[r].at < best.at)))
            best = all[r];
    free(all);
    if (st != FS_OK || best.at < 0)
        return st;
    int64_t pos = (int64_t)best.at;
    for (int k = cb->ndim - 1; k >= 0; k--) {
        cb->index[k] = pos % cb->shape[k];
        pos /= cb->shape[k];
    }
    cb->peak = best.value;
    cb->found = 1;
    return FS_OK;
}

/* numpy's signed shift along a transformed axis: indices above n/2 are
 * negative. */
static int64_t shift_of(const fs_combine *cb, int k)
{
    return cb->index[k] > cb->shape[k] / 2 ? cb->index[k] - cb->shape[k] : cb->index[k];
}

/* --vector's results, comma separated, into buf. */
static void vector_results(const fs_combine *cb, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < cb->nresults && used < size; k++) {
        int w = snprintf(buf + used, size - used, "%s%s", k ? ", " : "", cb->paths[k]);
        used += w > 0 ? (size_t)w : 0;
    }
}

void fs_combine_json(fs_json *j, const void *arg)
{
    const fs_combine *cb = arg;
    fs_json_open(j, "combine", '{');
    fs_json_str(j, "operation", names[cb->op]);
    fs_json_int(j, "inputs", cb->n);
    if (fs_vector_is(cb->op)) {
        char results[FS_VECTOR_MAX_RESULTS * FS_COMBINE_PATH_MAX];
        vector_results(cb, results, sizeof results);
        fs_json_str(j, "results", results);
    }
    if (cb->found) {
        int64_t shift[FS_LAYOUT_MAX_DIMS], axes[FS_LAYOUT_MAX_DIMS];
        int na = 0;
        for (int k = 0; k < cb->ndim; k++)
            if (cb->transformed[k]) {
                axes[na] = k;
                shift[na++] = shift_of(cb, k);
            }
        fs_json_open(j, "peak", '{');
        fs_json_num(j, "value", cb->peak);
        fs_json_ints(j, "index", cb->ndim, cb->index);
        fs_json_ints(j, "axes", na, axes);
        fs_json_ints(j, "shift", na, shift);
        fs_json_close(j, '}');
    }
    fs_json_close(j, '}');
}

void fs_combine_summary(const fs_combine *cb, const char *output, char *buf, size_t size)
{
    if (fs_vector_is(cb->op)) {
        char results[FS_VECTOR_MAX_RESULTS * 64];
        vector_results(cb, results, sizeof results);
        snprintf(buf, size, "  %s of %d INPUT%s in %s: %s\n", names[cb->op], cb->n,
                 cb->n == 1 ? "" : "s", output, results);
        return;
    }
    int used = snprintf(buf, size, "  %s: %s of %d INPUT%s in %s:%s", names[cb->op],
                        cb->op == FS_COMBINE_CONVOLVE ? "the convolution" : "the correlation",
                        cb->n, cb->n == 1 ? "" : "s", output, cb->path);
    for (int k = 0, na = 0; cb->found && k < cb->ndim && used > 0 && (size_t)used < size; k++) {
        if (!cb->transformed[k])
            continue;
        used += snprintf(buf + used, size - (size_t)used, "%s%lld", na++ ? ", " : "; shift (",
                         (long long)shift_of(cb, k));
    }
    if (used > 0 && (size_t)used < size && cb->found)
        used += snprintf(buf + used, size - (size_t)used, ") at peak %.6g", cb->peak);
    if (used > 0 && (size_t)used < size)
        snprintf(buf + used, size - (size_t)used, "\n");
}
