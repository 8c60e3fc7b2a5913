/* SPDX-License-Identifier: GPL-3.0-or-later */
/* check: see check.h. */
#include "config.h"

#include "compute/check.h"
#include "core/collective.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void fs_map_element(fs_precision prec, const fs_io_map *m, const void *base, int64_t offset,
                    double *re, double *im)
{
    int single = prec == FS_SINGLE;
    int complex_mem = m->mem_type == FS_DTYPE_COMPLEX64 || m->mem_type == FS_DTYPE_COMPLEX128;
    if (complex_mem) {
        *re = single ? ((const float *)base)[2 * offset] : ((const double *)base)[2 * offset];
        *im = single ? ((const float *)base)[2 * offset + 1] : ((const double *)base)[2 * offset + 1];
    } else {
        *re = single ? ((const float *)base)[offset] : ((const double *)base)[offset];
        *im = 0;
    }
}

/* The memory array is walked as a box in file coordinates, in steps of
 * mem_stride_last along the last axis (layout.h explains the mapping). */
void fs_map_visit(const fs_io_map *m, int64_t first_row, int64_t rows, fs_map_visit_fn fn,
                  void *ctx)
{
    if (fs_box_elems(&m->file_box) == 0 || rows <= 0)
        return;
    fs_box inner = m->file_box, outer = m->file_box;
    int nd = inner.ndim, last = nd - 1;
    int64_t step = m->mem_stride_last;
    inner.start[0] += first_row;
    inner.count[0] = rows;
    for (int k = 0; k < nd; k++) {
        int64_t sk = k == last ? step : 1;
        outer.start[k] = m->file_box.start[k] - m->mem_start[k] / sk;
        outer.count[k] = m->mem_dims[k] / sk;
    }
    fs_box_runs w;
    fs_box_runs_begin(&w, &inner, &outer, NULL, FS_BOX_RUNS_ROWS);
    int64_t at[FS_LAYOUT_MAX_DIMS];
    while (fs_box_runs_next(&w)) {
        memcpy(at, w.at, sizeof at);
        for (int64_t j = 0; j < w.run_elems; j++) {
            at[last] = w.at[last] + j;
            if (m->fold_inner > 0 && m->fold_limit > 0 &&
                at[0] * m->fold_inner + at[1] >= m->fold_limit)
                continue;
            fn(ctx, step * (w.offset + j), at);
        }
    }
}

/* The weight of an element in Parseval's sum: a half spectrum counts its
 * interior bins twice. */
static double half_weight(const fs_transform *t, const int64_t *at, int folded)
{
    int64_t k, n = t->real_len;
    if (folded)
        k = at[0] * t->n2 + at[1];
    else
        k = at[t->real_axis];
    return k > 0 && 2 * k < n ? 2.0 : 1.0;
}

/* The weight of an element at `at` (input coordinates, or the result's)
 * in Parseval's sum along the cosine and sine axes: without --norm=ortho
 * the transform leaves out scipy's orthogonalizing factors (pre on the
 * input, post on the result), which make it orthonormal; they weigh here
 * (sum post^2 |result|^2 = N sum |input|^2 / pre^2). */
static double r2r_weight(const fs_transform *t, const int64_t *at, int result)
{
    double w = 1;
    for (int k = 0; k < t->in_ndim && t->norm != FS_NORM_ORTHO; k++) {
        if (!t->transform_axis[k] || t->r2r[k] == FS_AXIS_FFT)
            continue;
        fs_r2r_edges e = fs_r2r_ortho_edges(fs_transform_computed(t, k), 1);
        int64_t last = t->in_shape[k] - 1;
        double f = (at[k] == 0 ? (result ? e.post_first : e.pre_first) : 1) *
                   (at[k] == last ? (result ? e.post_last : e.pre_last) : 1);
        w *= result ? f * f : 1 / (f * f);
    }
    return w;
}

typedef struct sum_ctx {
    const fs_transform *t;
    const fs_io_map *m;
    const void *base;
    int weighted, folded;
    double sum;
} sum_ctx;

static void add_square(void *ctx, int64_t off, const int64_t *at)
{
    sum_ctx *s = ctx;
    double re, im;
    fs_map_element(s->t->prec, s->m, s->base, off, &re, &im);
    s->sum += (re * re + im * im) * (s->weighted ? half_weight(s->t, at, s->folded) : 1.0) *
              r2r_weight(s->t, at, 1);
}

typedef struct cmp_ctx {
    const fs_transform *t;
    const fs_io_map *m;
    const void *expect, *got;  /* expect: the piece buffer, rows from 0 */
    int64_t shift;             /* the piece's first element is this far into `got` */
    int weighted, folded;
    double factor;             /* the round trip multiplies by the point count */
    double max_err, max_ref, sum;
} cmp_ctx;

static void compare(void *ctx, int64_t off, const int64_t *at)
{
    cmp_ctx *c = ctx;
    double a, ai, b, bi;
    fs_map_element(c->t->prec, c->m, c->expect, off - c->shift, &a, &ai);
    fs_map_element(c->t->prec, c->m, c->got, off, &b, &bi);
    /* --window: the round trip gives the windowed input */
    double w = fs_domain_window_at(c->t, at);
    a *= w;
    ai *= w;
    b *= c->factor;
    bi *= c->factor;
    double err = hypot(a - b, ai - bi), ref = hypot(a, ai);
    c->max_err = err > c->max_err ? err : c->max_err;
    c->max_ref = ref > c->max_ref ? ref : c->max_ref;
    c->sum += ref * ref * (c->weighted ? half_weight(c->t, at, c->folded) : 1.0) *
              r2r_weight(c->t, at, 0);
}

/* Memory elements per index of a map's first axis: the later axes' memory,
 * or for a 1-D map (its first axis is its last) the step along it. */
static int64_t row_mem_elems(const fs_io_map *m)
{
    int64_t n = m->file_box.ndim == 1 ? m->mem_stride_last : 1;
    for (int k = 1; k < m->file_box.ndim; k++)
        n *= m->mem_dims[k];
    return n;
}

/* Rows [first, first + n) of rm's file box, read alone into a buffer of
 * those rows (its first element at memory offset 0 along the first axis). */
static fs_io_map piece_map(const fs_io_map *rm, int64_t first, int64_t n)
{
    fs_io_map piece = *rm;
    piece.file_box.start[0] += first;
    piece.file_box.count[0] = n;
    if (n == 0)
        for (int k = 0; k < piece.file_box.ndim; k++)
            piece.file_box.count[k] = 0;
    piece.mem_dims[0] = (n > 0 ? n : 1) * (rm->file_box.ndim == 1 ? rm->mem_stride_last : 1);
    piece.mem_start[0] = 0;
    return piece;
}

/* How far into rm's memory row `first` of its file box starts. */
static int64_t piece_shift(const fs_io_map *rm, int64_t first)
{
    int64_t row = row_mem_elems(rm);
    return (rm->file_box.ndim == 1 ? rm->mem_start[0] : rm->mem_start[0] * row) + first * row;
}

/* The input again, a piece of rows at a time, against the round trip in
 * a->data: cmp gathers the errors and the input's energy. */
static fs_status compare_with_input(const fs_check_args *a, cmp_ctx *cmp)
{
    const fs_transform *t = a->t;
    fs_io_map rm = fs_transform_read_map(t, a->first);
    /* a rank whose box is empty (fewer columns than ranks) reads no rows */
    int64_t row_elems = row_mem_elems(&rm);
    int64_t rows = fs_box_elems(&rm.file_box) > 0 ? rm.file_box.count[0] : 0;
    size_t eb = fs_dtype_bytes(rm.mem_type);
    int64_t per_piece = row_elems > 0 ? FS_CHECK_PIECE_BYTES / (row_elems * (int64_t)eb) : 1;
    per_piece = per_piece > rows ? rows : per_piece;
    per_piece = per_piece < 1 ? 1 : per_piece;
    int64_t local_pieces = rows > 0 ? (rows + per_piece - 1) / per_piece : 0, pieces = 0;
    fs_status st = fs_allreduce(a->comm, &local_pieces, &pieces, 1, MPI_INT64_T, MPI_MAX);
    void *buf = malloc((size_t)(per_piece * row_elems > 0 ? per_piece * row_elems : 1) * eb);
    /* the round trip multiplies by the points (cosine and sine axes: their logical sizes) */
    *cmp = (cmp_ctx){t, &rm, buf, a->data, 0, t->kind == FS_C2R, 0, 1.0 / fs_transform_points(t),
                     0, 0, 0};
    if (!buf && st == FS_OK)
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory for --check");
    if ((st = fs_error_agree(a->comm, st)) != FS_OK) {
        free(buf);
        return st;
    }
    for (int64_t p = 0; p < pieces && st == FS_OK; p++) {
        int64_t first = p * per_piece;
        int64_t n = first < rows ? (rows - first < per_piece ? rows - first : per_piece) : 0;
        fs_io_map piece = piece_map(&rm, first, n);
        st = a->opened ? fs_h5_input_read(a->opened, &piece, buf, NULL, NULL, NULL)
                       : fs_h5_read(a->comm, a->input_file, a->info, a->shards, &piece, buf, NULL,
                                    NULL, NULL);
        if (st == FS_OK && n > 0) {
            cmp->shift = piece_shift(&rm, first);
            /* visit the piece's elements as they sit in the whole buffer */
            fs_map_visit(&rm, first, n, compare, cmp);
        }
        st = fs_error_agree(a->comm, st);
    }
    free(buf);
    cmp->m = NULL;
    return st;
}

void fs_check_add_result(const fs_transform *t, const fs_box *last, const void *data,
                         fs_check_sums *s)
{
    fs_io_map wm = fs_transform_write_map(t, last);
    sum_ctx out = {t, &wm, data, t->kind == FS_R2C, t->fold, 0};
    fs_map_visit(&wm, 0, wm.file_box.count[0], add_square, &out);
    s->result += out.sum;
}

fs_status fs_check_add_input(const fs_check_args *a, fs_check_sums *s)
{
    cmp_ctx cmp;
    fs_status st = compare_with_input(a, &cmp);
    if (st != FS_OK)
        return st;
    s->input += cmp.sum;
    s->max_err = cmp.max_err > s->max_err ? cmp.max_err : s->max_err;
    s->max_ref = cmp.max_ref > s->max_ref ? cmp.max_ref : s->max_ref;
    return FS_OK;
}

fs_status fs_check_verdict(MPI_Comm comm, const fs_transform *t, double tolerance,
                           const fs_check_sums *s, fs_check_result *res)
{
    res->done = 1;
    res->tolerance = tolerance > 0 ? tolerance : t->prec == FS_SINGLE ? 1e-3 : 1e-9;
    double local[2] = {s->result, s->input}, sums[2], maxes[2], lm[2] = {s->max_err, s->max_ref};
    fs_status st = fs_allreduce(comm, local, sums, 2, MPI_DOUBLE, MPI_SUM);
    if (st == FS_OK)
        st = fs_allreduce(comm, lm, maxes, 2, MPI_DOUBLE, MPI_MAX);
    if (st != FS_OK)
        return fs_error_agree(comm, st);
    /* |result|^2 = scale^2 * points * |input|^2 */
    double expect = t->scale * t->scale * fs_transform_points(t) * sums[1];
    res->parseval_error = expect > 0 ? fabs(sums[0] - expect) / expect : fabs(sums[0]);
    res->roundtrip_error = maxes[1] > 0 ? maxes[0] / maxes[1] : maxes[0];
    res->passed = res->parseval_error <= res->tolerance && res->roundtrip_error <= res->tolerance;
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (!res->passed)
        return fs_error_agree(comm, rank == 0 ? fs_error_set(FS_ERR_CHECK,
            "--check: round trip error %.3g, Parseval error %.3g, above the tolerance %.3g; the "
            "result was not kept", res->roundtrip_error, res->parseval_error, res->tolerance)
            : FS_OK);
    return FS_OK;
}

fs_status fs_check_run(const fs_check_args *a, fs_check_result *res)
{
    fs_check_sums sums = {0, 0, 0, 0};
    /* Parseval on the result, while it is still there. */
    fs_check_add_result(a->t, a->last, a->data, &sums);
    fs_status st = fs_error_agree(a->comm, fs_compute_undo(a->c, a->data));
    /* The undo may leave the data in the exchange's second array. */
    fs_check_args undone = *a;
    undone.data = fs_compute_data(a->c);
    if (st == FS_OK)
        st = fs_check_add_input(&undone, &sums);
    if (st != FS_OK)
        return st;
    return fs_check_verdict(a->comm, a->t, a->tolerance, &sums, res);
}

/* --check-tolerance implies --check. */
static fs_status set_tolerance(const fs_opt *opt, const char *arg, void *section)
{
    fs_check_options *o = section;
    (void)opt;
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (errno || end == arg || *end != '\0' || !(v > 0) || v >= 1e300)
        return fs_error_set(FS_ERR_USAGE, "--check-tolerance=%s: expected a positive number", arg);
    o->tolerance = v;
    o->on = 1;
    return FS_OK;
}

const fs_opt fs_check_option_lines[] = {
    {FS_OPT("check", 0, FS_OPT_NO_ARG, fs_opt_flag, fs_check_options, on),
     .help = "      --check             verify the result (inverse round trip, Parseval);\n"
             "                          exit 5 and keep nothing above the tolerance\n"},
    {FS_OPT("check-tolerance", 0, FS_OPT_ARG, set_tolerance, fs_check_options, tolerance),
     .help = "      --check-tolerance=X relative error allowed (default 1e-9 double,\n"
             "                          1e-3 single)\n"},
    {.long_name = NULL},
};
