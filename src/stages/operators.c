/* SPDX-License-Identifier: GPL-3.0-or-later */
/* operators: see operators.h. Each rank walks its last-stage box row by
 * row, or the gathered lines of the last forward pass along any axis: each
 * axis's k_a^2 tabulated, k^2 summed by fs_kgrid_k2_line in the order of
 * the documented definition (numpy's kx**2 + ky**2 + ...) whatever the
 * path, so that a cut at exactly a mode's |k| keeps the same modes on any
 * number of ranks. Every factor is computed in a form that cannot
 * overflow; what the grid and the precision cannot hold is refused before
 * any work (check_grid). */
#include "config.h"

#include "stages/operators.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/collective.h"
#include "compute/green.h"
#include "io/table.h"
#include "plan/domain.h"
#include "stages/kgrid.h"
#include "stages/stage.h"

/* --boundary=free: the Green's function's transform on the doubled grid
 * (green.h), element [m_0, m_1, ...] at table[sum of stride[a] times
 * min(m_a, n[a] - m_a)]. */
typedef struct free_kernel {
    double *table;                       /* NULL: not free space */
    int64_t stride[FS_LAYOUT_MAX_DIMS];  /* of each input axis (0: a batch axis) */
    int64_t n[FS_LAYOUT_MAX_DIMS];       /* the doubled grid's lengths */
} free_kernel;

/* The run's state: the tables the list names, each INPUT's grid (and
 * Green's function in free space), the text its results record. */
typedef struct op_state {
    const fs_operators *ops;              /* the options' list */
    fs_table tables[FS_MAX_OPERATORS];    /* transfer: T(k), k increasing */
    int ngrids;
    fs_kgrid *grids;
    free_kernel *kernels;                 /* one per grid */
    char text[4096];
} op_state;



/* Collective: rank 0 reads every transfer table, every rank gets them.
 * FS_ERR_INPUT (status 3) for a table that cannot be read or is not two
 * columns of numbers with k increasing; agreed and printed once. */
static fs_status load(MPI_Comm comm, op_state *s)
{
    fs_status st = FS_OK;
    for (int i = 0; i < s->ops->n && st == FS_OK; i++)
        if (s->ops->op[i].kind == FS_OPER_TRANSFER) {
            s->tables[i].column = "T";
            st = fs_table_load(comm, s->ops->op[i].file, "--apply: transfer:", &s->tables[i]);
        }
    return st;
}

/* ------------------------------------------------------------ factors */

/* The top hat at x = |k| R: divided by x three times, not by x^3 (which
 * overflows from x = 5.6e102, where the factor is still 1e-205); x = inf
 * (k R beyond double) takes its limit 0, not sin(inf)'s NaN. Below
 * FS_TOPHAT_SERIES_X its series 3 sum_n (-1)^n (2n + 2) x^2n / (2n + 3)!
 * through x^10, nested (each term the one before times -x^2 / ((2n + 2)
 * (2n + 5))), as fftshard(1) writes it. */
static double tophat(double x)
{
    if (x < FS_TOPHAT_SERIES_X) {
        double x2 = x * x;
        return 1.0 - x2 / 10.0 * (1.0 - x2 / 28.0 * (1.0 - x2 / 54.0 * (1.0 - x2 / 88.0 *
                                                                      (1.0 - x2 / 130.0))));
    }
    if (isinf(x))
        return 0.0;
    return 3.0 * ((sin(x) - x * cos(x)) / x / x / x);
}

/* The Butterworth low pass 1 / (1 + (|k|/K)^(2N)) or high pass
 * (|k|/K)^(2N) / (1 + (|k|/K)^(2N)) from the ratio that is at most 1
 * (|k|/K up to the cut, K/|k| past it; p its 2N-th power): no power
 * overflows (q / (1 + q) was inf / inf), one that underflows gives the
 * limit 0 or 1, and neither is 1 minus the other. */
static double butterworth(const fs_operator *op, double k)
{
    int below = k <= op->param, low = op->kind == FS_OPER_LOWPASS;
    double p = pow(below ? k / op->param : op->param / k, 2.0 * op->order);
    return (below == low ? 1.0 : p) / (1.0 + p);
}

/* Whether an operator's factor is a product of one factor per axis
 * (gaussian: exp(-(k_a R)^2 / 2) each; deriv: k_a of its axis, 1 on the
 * others): those are tabulated per axis, the others evaluated at each k^2. */
static int separable(const fs_operator *op)
{
    return op->kind == FS_OPER_GAUSSIAN || op->kind == FS_OPER_DERIV;
}

/* The factor of an operator that is not separable, at k^2 (table: a
 * transfer's). */
static double radial(const fs_operator *op, const fs_table *table, double k2)
{
    double k = sqrt(k2);
    switch (op->kind) {
    case FS_OPER_TOPHAT: return tophat(k * op->param);
    case FS_OPER_SHARPK: return k <= op->param ? 1.0 : 0.0;
    case FS_OPER_LOWPASS:
    case FS_OPER_HIGHPASS: return butterworth(op, k);
    case FS_OPER_LAPLACIAN: return -k2;
    case FS_OPER_POISSON: return k2 > 0 ? -1.0 / k2 : 0.0;
    case FS_OPER_TRANSFER: return fs_table_at(table, k);
    case FS_OPER_GAUSSIAN:
    case FS_OPER_DERIV: break;
    }
    return 1.0;
}

/* ------------------------------------------------------ the grid's range */

/* The largest |factor| of op on grid g (a: deriv's axis, t: a transfer's
 * table): the filters' lie in [-1, 1]; a table's between its rows' values
 * up to the first row at or past the grid's largest |k|. */
static double factor_max(const fs_operator *op, const fs_table *t, const fs_kgrid *g, int a)
{
    double m = 0.0, kmax = fs_kgrid_kmax(g);
    switch (op->kind) {
    case FS_OPER_DERIV: return fabs(fs_kgrid_deriv_k(g, a, (g->n[a] - 1) / 2));
    case FS_OPER_LAPLACIAN: return fs_kgrid_k2max(g);
    case FS_OPER_POISSON: return 1.0 / fs_kgrid_k2min(g);
    case FS_OPER_TRANSFER:
        for (int i = 0; i < t->nrows && (i == 0 || t->k[i - 1] < kmax); i++)
            m = fabs(t->v[i]) > m ? fabs(t->v[i]) : m;
        return m;
    default: return 1.0;
    }
}

/* Whether the k^2 of the grid g suits the operators that read it (those
 * that are not separable): every one but k = 0's a normal double, so that
 * |k| is its square root to the last bits and -1/k^2 is finite.
 * FS_ERR_USAGE naming --box-size otherwise. */
static fs_status check_k2(const op_state *s, const fs_kgrid *g)
{
    int radial_ops = 0;
    for (int i = 0; i < s->ops->n; i++)
        radial_ops += !separable(&s->ops->op[i]);
    double big = fs_kgrid_k2max(g), small = fs_kgrid_k2min(g);
    if (radial_ops && !isfinite(big))
        return fs_error_set(FS_ERR_USAGE, "--apply: the grid's largest k^2 overflows double "
                            "precision: the box lengths (--box-size) are too small");
    if (radial_ops && small < DBL_MIN)
        return fs_error_set(FS_ERR_USAGE, "--apply: the grid's smallest nonzero k^2 falls "
                            "below double precision's normal range: the box lengths (--box-size) "
                            "are too large");
    return FS_OK;
}

/* Whether the operators fit the grid g computed in precision prec (not
 * collective; the same answer everywhere): FS_ERR_USAGE for a derivative
 * along an axis that is not transformed, for k^2 out of range
 * (check_k2), and for factors whose product could pass the precision's
 * largest number (the product of each one's largest magnitude on the
 * grid); FS_ERR_INPUT for a table that does not cover 0 .. the grid's
 * largest |k|. */
static fs_status check_grid(const op_state *s, const fs_kgrid *g, fs_precision prec)
{
    double kmax = fs_kgrid_kmax(g), bound = 1.0;
    double limit = prec == FS_SINGLE ? FLT_MAX : DBL_MAX;
    for (int i = 0; i < s->ops->n; i++) {
        const fs_operator *op = &s->ops->op[i];
        int a = op->axis < 0 ? op->axis + g->ndim : op->axis;
        if (op->kind == FS_OPER_DERIV && (a < 0 || a >= g->ndim || !g->transformed[a]))
            return fs_error_set(FS_ERR_USAGE, "--apply: deriv:%d: not a transformed axis of the "
                                "%d-D input", op->axis, g->ndim);
        /* the derivative of a sine series is a cosine series: no factor of one basis */
        if (op->kind == FS_OPER_DERIV && g->kind[a] != FS_AXIS_FFT)
            return fs_error_set(FS_ERR_USAGE, "--apply: deriv:%d: axis %d has walls "
                                "(--boundary=%s); a derivative is defined along a periodic "
                                "axis only", op->axis, a, fs_boundary_name_of_kind(g->kind[a]));
    }
    fs_status st = check_k2(s, g);
    for (int i = 0; i < s->ops->n && st == FS_OK; i++) {
        const fs_operator *op = &s->ops->op[i];
        const fs_table *t = &s->tables[i];
        if (op->kind == FS_OPER_TRANSFER && (t->k[0] > 0 || t->k[t->nrows - 1] < kmax))
            return fs_error_set(FS_ERR_INPUT, "--apply: transfer:%s: the table's k from %.17g to "
                                "%.17g does not cover the grid's |k| from 0 to %.17g", op->file,
                                t->k[0], t->k[t->nrows - 1], kmax);
        bound *= factor_max(op, t, g, op->axis < 0 ? op->axis + g->ndim : op->axis);
    }
    if (st == FS_OK && !(bound <= limit))
        st = fs_error_set(FS_ERR_USAGE, "--apply: the operators' factors could reach %.3g on "
                          "this grid (its box lengths, the tables' values), past %s precision's "
                          "largest number %.3g", bound, prec == FS_SINGLE ? "single" : "double",
                          limit);
    return st;
}

/* Per axis over the box's range: k_a^2, and the separable operators'
 * factor along the axis. */
typedef struct axis_table {
    double *q, *f;
} axis_table;

/* What the walk needs: the operators' axes resolved, the powers of i, and
 * whether any factor is not separable. */
typedef struct walk {
    const fs_operators *ops;
    const fs_table *tables;       /* the transfers' */
    int axis[FS_MAX_OPERATORS];   /* deriv: the input axis */
    int nderiv, nradial;
    double scale;                 /* 1 / N */
    fs_precision prec;
    int reals;                    /* a real working array (else complex) */
    double *row, *k2;             /* a row's factors and k^2 (the box's longest axis long) */
    const free_kernel *kernel;    /* free space: the factor is the Green's function's */
} walk;

/* The separable operators' factor along axis a at index j, where
 * k_a = k (kgrid.h). */
static double axis_factor(const walk *w, const fs_kgrid *g, int a, int64_t j, double k)
{
    double f = 1.0;
    for (int i = 0; i < w->ops->n; i++) {
        const fs_operator *op = &w->ops->op[i];
        double x = k * op->param; /* not k^2 R^2: 0 times inf at k = 0 past R = 1e154 */
        if (op->kind == FS_OPER_GAUSSIAN)
            f *= exp(-x * x / 2.0);
        else if (op->kind == FS_OPER_DERIV && w->axis[i] == a)
            f *= fs_kgrid_deriv_k(g, a, j);
    }
    return f;
}

/* The complex elements d[0 .. n) times f[j] and i^rot (rot 0 to 3), the
 * products in double: one loop per power of i, which the compiler
 * vectorizes. */
#define DEFINE_MULTIPLY(NAME, T)                                                                \
    static void NAME(T *d, const double *f, int64_t n, int rot)                                 \
    {                                                                                           \
        switch (rot) {                                                                          \
        case 0:                                                                                 \
            for (int64_t j = 0; j < n; j++) {                                                   \
                d[2 * j] = (T)(d[2 * j] * f[j]);                                                \
                d[2 * j + 1] = (T)(d[2 * j + 1] * f[j]);                                        \
            }                                                                                   \
            break;                                                                              \
        case 1:                                                                                 \
            for (int64_t j = 0; j < n; j++) {                                                   \
                double r = d[2 * j] * f[j];                                                     \
                d[2 * j] = (T)(-(d[2 * j + 1] * f[j]));                                         \
                d[2 * j + 1] = (T)r;                                                            \
            }                                                                                   \
            break;                                                                              \
        case 2:                                                                                 \
            for (int64_t j = 0; j < n; j++) {                                                   \
                d[2 * j] = (T)(-(d[2 * j] * f[j]));                                             \
                d[2 * j + 1] = (T)(-(d[2 * j + 1] * f[j]));                                     \
            }                                                                                   \
            break;                                                                              \
        default:                                                                                \
            for (int64_t j = 0; j < n; j++) {                                                   \
                double r = d[2 * j] * f[j];                                                     \
                d[2 * j] = (T)(d[2 * j + 1] * f[j]);                                            \
                d[2 * j + 1] = (T)(-r);                                                         \
            }                                                                                   \
            break;                                                                              \
        }                                                                                       \
    }
DEFINE_MULTIPLY(multiply_double, double)
DEFINE_MULTIPLY(multiply_single, float)

/* The real elements [i0, i0 + n) of data times f[j] (a real working
 * array: --boundary's walls on every transformed axis of real input). */
static void multiply_reals(fs_precision prec, void *data, int64_t i0, const double *f, int64_t n)
{
    if (prec == FS_SINGLE)
        for (int64_t j = 0; j < n; j++)
            ((float *)data)[i0 + j] = (float)(((float *)data)[i0 + j] * f[j]);
    else
        for (int64_t j = 0; j < n; j++)
            ((double *)data)[i0 + j] *= f[j];
}

static int64_t fold_index(int64_t m, int64_t n)
{
    return m <= n / 2 ? m : n - m;
}

/* Free space: f[j] = rowf times the Green's function's transform at the
 * line along `axis` from the element of global indices at. */
static void kernel_row(const free_kernel *k, double rowf, const int64_t *at, int ndim, int axis,
                       int64_t n, double *f)
{
    int64_t off = 0;
    for (int a = 0; a < ndim; a++)
        if (a != axis)
            off += k->stride[a] * fold_index(at[a], k->n[a]);
    for (int64_t j = 0; j < n; j++)
        f[j] = rowf * k->table[off + k->stride[axis] * fold_index(at[axis] + j, k->n[axis])];
}

/* n elements at data from element i0 (global indices at, the line's
 * first) times rowf fl[j], times the other operators' factors at k^2 of
 * the line along `axis` whose other axes have k_a^2 = q[a]
 * (fs_kgrid_k2_line, ql[j] the line's own), times i^nderiv: the factors
 * made first, in w->row, then multiplied in. Free space: rowf times the
 * Green's function's transform (the list is poisson alone). */
static void apply_row(const walk *w, double rowf, const double *fl, const double *q, int ndim,
                      int axis, const double *ql, const int64_t *at, int64_t n, void *data,
                      int64_t i0)
{
    double *f = w->row;
    if (w->kernel) {
        kernel_row(w->kernel, rowf, at, ndim, axis, n, f);
        w->prec == FS_SINGLE ? multiply_single((float *)data + 2 * i0, f, n, 0)
                             : multiply_double((double *)data + 2 * i0, f, n, 0);
        return;
    }
    for (int64_t j = 0; j < n; j++)
        f[j] = rowf * fl[j];
    if (w->nradial)
        fs_kgrid_k2_line(q, ndim, axis, ql, n, w->k2);
    for (int i = 0; i < w->ops->n && w->nradial; i++)
        if (!separable(&w->ops->op[i]))
            for (int64_t j = 0; j < n; j++)
                f[j] *= radial(&w->ops->op[i], &w->tables[i], w->k2[j]);
    if (w->reals) /* walls on every axis of real input: no derivative */
        multiply_reals(w->prec, data, i0, f, n);
    else if (w->prec == FS_SINGLE)
        multiply_single((float *)data + 2 * i0, f, n, w->nderiv % 4);
    else
        multiply_double((double *)data + 2 * i0, f, n, w->nderiv % 4);
}

/* The box row by row, the outer axes' indices carried in an odometer. */
static void apply_box(const walk *w, const fs_box *b, const axis_table *tab, void *data)
{
    int last = b->ndim - 1;
    int64_t idx[FS_LAYOUT_MAX_DIMS] = {0};
    int64_t rows = fs_box_elems(b) / b->count[last];
    for (int64_t r = 0; r < rows; r++) {
        double q[FS_LAYOUT_MAX_DIMS], rowf = w->scale;
        int64_t at[FS_LAYOUT_MAX_DIMS];
        for (int a = 0; a < last; a++) {
            q[a] = tab[a].q[idx[a]];
            rowf *= tab[a].f[idx[a]];
            at[a] = b->start[a] + idx[a];
        }
        at[last] = b->start[last];
        apply_row(w, rowf, tab[last].f, q, b->ndim, last, tab[last].q, at, b->count[last], data,
                  r * b->count[last]);
        for (int a = last - 1; a >= 0 && ++idx[a] == b->count[a]; a--)
            idx[a] = 0;
    }
}

static fs_status tables_new(const walk *w, const fs_kgrid *g, const fs_box *b, axis_table *tab)
{
    for (int a = 0; a < b->ndim; a++) {
        int64_t m = b->count[a] > 0 ? b->count[a] : 1;
        tab[a].q = malloc(sizeof(double) * 2 * (size_t)m);
        if (!tab[a].q)
            return fs_error_set(FS_ERR_RUNTIME, "out of memory");
        tab[a].f = tab[a].q + m;
        for (int64_t i = 0; i < b->count[a]; i++) {
            double k = fs_kgrid_k(g, a, b->start[a] + i);
            tab[a].q[i] = k * k;
            tab[a].f[i] = axis_factor(w, g, a, b->start[a] + i, k);
        }
    }
    return FS_OK;
}

/* The 1-D four-step's table (two rows of count[0]: k^2, the factor), in
 * tab[0].q, filled row by row by apply_fold. */
static fs_status fold_table_new(const fs_box *b, axis_table *tab)
{
    int64_t cnt = b->count[0] > 0 ? b->count[0] : 1;
    tab[0].q = malloc(sizeof(double) * 2 * (size_t)cnt);
    return tab[0].q ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory");
}

/* The 1-D four-step result: a row is one k1 (kgrid.h); tab: fold_table_new's. */
static void apply_fold(const walk *w, const fs_transform *t, const fs_kgrid *g, const fs_box *b,
                       double *tab, void *data)
{
    int64_t cnt = b->count[0];
    for (int64_t k1 = 0; k1 < t->n1; k1++) {
        for (int64_t i2 = 0; i2 < cnt; i2++) {
            int64_t j = fs_kgrid_fold_index(t, b, k1, i2);
            double k = fs_kgrid_k(g, 0, j);
            tab[i2] = k * k;
            tab[cnt + i2] = axis_factor(w, g, 0, j, k);
        }
        int64_t at = fs_kgrid_fold_index(t, b, k1, 0);
        apply_row(w, w->scale, tab + cnt, NULL, 1, 0, tab, &at, cnt, data, k1 * cnt);
    }
}

/* --boundary=free: the list must be poisson alone (FS_ERR_USAGE else). */
static fs_status check_free(const op_state *s)
{
    return s->ops->n == 1 && s->ops->op[0].kind == FS_OPER_POISSON
               ? FS_OK
               : fs_error_set(FS_ERR_USAGE, "--boundary=free: --apply=poisson alone (free space "
                              "is a boundary of the Poisson equation)");
}

/* k: the Green's function's transform on t's doubled grid g (green.h),
 * its strides over the transformed axes in increasing order. */
static fs_status kernel_new(const fs_transform *t, const fs_kgrid *g, free_kernel *k)
{
    int64_t n[FS_LAYOUT_MAX_DIMS];
    double h[FS_LAYOUT_MAX_DIMS];
    int d = 0;
    for (int a = 0; a < g->ndim; a++)
        if (g->transformed[a]) {
            n[d] = t->data_shape[a];
            h[d++] = g->L[a] / (double)g->n[a];
        }
    int64_t stride = 1;
    for (int a = g->ndim - 1; a >= 0; a--) {
        k->n[a] = g->n[a];
        k->stride[a] = g->transformed[a] ? stride : 0;
        stride *= g->transformed[a] ? t->data_shape[a] + 1 : 1;
    }
    return fs_green_table(d, n, h, &k->table);
}

/* Collective, before any work: the tables read (rank 0) and shared, the
 * grid of each INPUT's transform with --box-size's lengths, the check of
 * the operators against each (rank 0 speaks), the recorded text. */
static fs_status create(const void *opts, const fs_stage_run *r, void **state)
{
    int rank = 0;
    if (MPI_Comm_rank(r->comm, &rank) != MPI_SUCCESS)
        return fs_error_agree(r->comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed"));
    op_state *s = calloc(1, sizeof *s);
    fs_status st = fs_error_agree(r->comm, s ? FS_OK
                                             : fs_error_set(FS_ERR_RUNTIME, "out of memory"));
    if (st != FS_OK)
        return st;
    *state = s;
    s->ops = opts;
    st = load(r->comm, s); /* agreed */
    if (st == FS_OK) {
        s->grids = calloc((size_t)(r->n > 0 ? r->n : 1), sizeof *s->grids);
        s->kernels = calloc((size_t)(r->n > 0 ? r->n : 1), sizeof *s->kernels);
        st = fs_error_agree(r->comm, s->grids && s->kernels
                                         ? FS_OK
                                         : fs_error_set(FS_ERR_RUNTIME, "out of memory"));
    }
    if (st != FS_OK)
        return st;
    s->ngrids = r->n;
    for (int i = 0; i < r->n && st == FS_OK; i++) {
        st = fs_kgrid_init(&s->grids[i], r->ts[i], &r->facts->shared->box);
        if (st == FS_OK && r->ts[i]->free_space)
            st = check_free(s);
        else if (st == FS_OK)
            st = check_grid(s, &s->grids[i], r->ts[i]->prec);
    }
    fs_operators_text(s->ops, s->text, sizeof s->text);
    /* the checks say the same everywhere; a table out of memory is one rank's */
    return fs_error_agree(r->comm, rank == 0 || st == FS_ERR_RUNTIME ? st : FS_OK);
}

static void destroy(void *state)
{
    op_state *s = state;
    if (!s)
        return;
    for (int i = 0; i < FS_MAX_OPERATORS; i++)
        fs_table_free(&s->tables[i]);
    for (int i = 0; i < s->ngrids && s->kernels; i++)
        free(s->kernels[i].table);
    free(s->kernels);
    free(s->grids);
    free(s);
}

/* One dataset's operators on this rank's box: the walk and its tables. */
typedef struct op_run {
    walk w;
    const fs_transform *t;
    const fs_kgrid *g;
    fs_box box;
    axis_table tab[FS_LAYOUT_MAX_DIMS];
} op_run;

/* The whole box in data (compute.h's middle). */
static void run_whole(void *ctx, void *data)
{
    op_run *r = ctx;
    if (fs_box_elems(&r->box) == 0)
        return;
    if (r->t->fold)
        apply_fold(&r->w, r->t, r->g, &r->box, r->tab[0].q, data);
    else
        apply_box(&r->w, &r->box, r->tab, data);
}

/* Gathered lines of the box (fft.h): each line is a row along l->axis,
 * the other axes' indices taken from its column and block. */
static void run_lines(void *ctx, const fs_lines *l)
{
    op_run *r = ctx;
    const fs_box *b = l->box;
    for (int64_t j = 0; j < l->count; j++) {
        double q[FS_LAYOUT_MAX_DIMS], rowf = r->w.scale;
        int64_t col = l->first + j, out = l->outer, at[FS_LAYOUT_MAX_DIMS];
        for (int a = b->ndim - 1; a >= 0; a--) {
            if (a == l->axis)
                continue;
            int64_t *from = a > l->axis ? &col : &out, i = *from % b->count[a];
            *from /= b->count[a];
            q[a] = r->tab[a].q[i];
            rowf *= r->tab[a].f[i];
            at[a] = b->start[a] + i;
        }
        at[l->axis] = b->start[l->axis];
        apply_row(&r->w, rowf, r->tab[l->axis].f, q, b->ndim, l->axis, r->tab[l->axis].q, at,
                  l->n, l->buf, j * l->dist);
    }
}

/* Collective: the operation on the whole box, the result handed to the
 * stages that bin it (its forward transform: the product without the
 * inverse's 1 / N), then the inverse unless nothing is written. */
static fs_status handed(op_run *r, const fs_stage_turn *turn, int k)
{
    fs_timer_start(turn->timers, FS_PHASE_OPERATE);
    run_whole(r, turn->data);
    fs_status st = fs_stage_made(turn, k, turn->data, 1.0 / r->w.scale);
    fs_timer_stop(turn->timers, FS_PHASE_OPERATE);
    st = fs_error_agree(turn->comm, st);
    if (st == FS_OK && !turn->no_inverse)
        st = fs_error_agree(turn->comm, fs_compute_undo_timed(turn->c, turn->data, turn->timers,
                                                              turn->progress));
    return st;
}

/* The operation on box (of input i's forward result) ready to run: its
 * scale, the operators' axes and the tables of the box's wave numbers. */
static fs_status run_begin(const op_state *s, const fs_stage_turn *turn, const fs_box *box,
                           op_run *r)
{
    const fs_operators *ops = s->ops;
    const fs_transform *t = turn->t;
    *r = (op_run){.w = {.ops = ops, .tables = s->tables, .scale = 1.0, .prec = t->prec}, .t = t,
                  .g = &s->grids[turn->i], .box = *box};
    if (s->kernels[turn->i].table)
        r->w.kernel = &s->kernels[turn->i];
    const fs_kgrid *g = r->g;
    for (int a = 0; a < g->ndim; a++)
        if (g->transformed[a])
            r->w.scale /= fs_r2r_points(g->kind[a], a == t->real_axis ? t->real_len : g->n[a]);
    r->w.reals = fs_dtype_is_real(t->work_type);
    for (int i = 0; i < ops->n; i++) {
        int a = ops->op[i].axis;
        r->w.axis[i] = a < 0 ? a + g->ndim : a;
        r->w.nderiv += ops->op[i].kind == FS_OPER_DERIV;
        r->w.nradial += !separable(&ops->op[i]);
    }
    int64_t longest = 1;
    for (int a = 0; a < box->ndim; a++)
        longest = box->count[a] > longest ? box->count[a] : longest;
    r->w.row = malloc(sizeof(double) * 2 * (size_t)longest);
    r->w.k2 = r->w.row ? r->w.row + longest : NULL;
    return !r->w.row ? fs_error_set(FS_ERR_RUNTIME, "out of memory")
           : t->fold ? fold_table_new(box, r->tab)
                     : tables_new(&r->w, g, box, r->tab);
}

static void run_end(op_run *r)
{
    for (int a = 0; a < r->box.ndim; a++)
        free(r->tab[a].q);
    free(r->w.row);
}

/* Free space: input i's Green's function table made at its first turn (in
 * the operate phase; the grids of all INPUTs are alike but for their
 * shapes, each has its own). This rank's status. */
static fs_status kernel_ready(op_state *s, const fs_stage_turn *turn)
{
    free_kernel *k = &s->kernels[turn->i];
    if (!turn->t->free_space || k->table)
        return FS_OK;
    fs_timer_start(turn->timers, FS_PHASE_OPERATE);
    fs_status st = kernel_new(turn->t, &s->grids[turn->i], k);
    fs_timer_stop(turn->timers, FS_PHASE_OPERATE);
    return st;
}

/* Collective, after the forward transform of input i (turn->c's run): this
 * rank's part of its result (its last-stage box) times the operators'
 * product / N, then the inverse (fs_compute_round_trip: inside the last
 * forward pass where it can), the filtered field in the working array. The
 * status is agreed. */
static fs_status operate(void *state, const fs_stage_turn *turn, int k)
{
    fs_compute *c = turn->c;
    op_run r;
    fs_status made = kernel_ready(state, turn);
    fs_status st = run_begin(state, turn, fs_decomposition_last(turn->d), &r);
    st = fs_error_agree(fs_compute_comm(c), made != FS_OK ? made : st);
    if (st == FS_OK && turn->made) {
        st = handed(&r, turn, k);
    } else if (st == FS_OK) {
        fs_compute_middle m = {run_whole, run_lines, &r};
        st = fs_compute_round_trip(c, turn->data, &m, turn->timers, turn->progress);
    }
    run_end(&r);
    return st;
}

/* Out of core: the operators on one block of the forward result (the
 * executor runs the inverse). */
static fs_status operate_block(void *state, const fs_stage_turn *turn, int k, const fs_box *box,
                               void *data)
{
    (void)k;
    op_run r;
    fs_status st = kernel_ready(state, turn);
    if (st != FS_OK)
        return st;
    st = run_begin(state, turn, box, &r);
    if (st == FS_OK)
        run_whole(&r, data);
    run_end(&r);
    return st;
}

/* As the weights of another field's product: the factors alone, without
 * the 1 / N of a field's own inverse. */
static fs_status weigh(void *state, const fs_stage_turn *turn, const fs_box *box, void *data)
{
    op_run r;
    fs_status st = run_begin(state, turn, box, &r);
    r.w.scale = 1.0;
    if (st == FS_OK)
        run_whole(&r, data);
    run_end(&r);
    return st;
}

static void record(const void *state, int i, int k, fs_stage_record *rec)
{
    const op_state *s = state;
    (void)k;
    rec->operation = s->text;
    rec->asked = s->ops->given;
    rec->nbox = fs_kgrid_lengths(&s->grids[i], rec->box);
    rec->input = i;
}

/* ---------------------------------------------------------- the options */

/* With a field stage that takes weights (--phase-correlate) the
 * operators are its weights, not a field of their own. */
static void needs(const void *opts, const fs_stage_facts *f, int naxes, fs_stage_needs *n)
{
    (void)opts, (void)naxes;
    if (f->weighed) {
        n->pads = n->windows = 1; /* the field stage's own say */
        return;
    }
    n->forward = 1;
    n->field = 1;
    n->in_pass = 1;
    n->hands_results = 1;
    n->pads = 1; /* the field of the padded domain, its part of the input written */
    n->walls = 1; /* --boundary: sine and cosine axes, k = pi j / L (kgrid.h) */
}

/* What a rank holds for the stage (the footprint hook, stage.h): while it
 * operates, beside the inverse transform, a row and the tables of k^2 and
 * of the factors along each axis of the rank's box (two doubles per index
 * each; the four-step's along its first axis): a 1-D series' are two lines
 * of its complex values. */
static fs_stage_bytes footprint(const void *opts, const fs_stage_facts *f, const fs_transform *t)
{
    (void)opts, (void)f;
    fs_box b = fs_transform_box(t, t->nstages - 1, 0, 0);
    int64_t indices = 0, longest = 1;
    for (int a = 0; a < b.ndim; a++) {
        indices += !t->fold || a == 0 ? b.count[a] : 0;
        longest = b.count[a] > longest ? b.count[a] : longest;
    }
    return (fs_stage_bytes){2 * (int64_t)sizeof(double) * (indices + longest), 0, 0};
}

const fs_stage_ops fs_stage_operators = {
    .name = "operators",
    .report_member = NULL,
    .options = fs_operators_lines,
    .options_bytes = sizeof(fs_operators),
    .help_heading = "Operators (forward, multiply on the ranks, inverse: the field is written):\n",
    .grid_options = "--apply",
    .release = fs_operators_release,
    .active = fs_operators_active,
    .option = fs_operators_option,
    .check = fs_operators_check,
    .needs = needs,
    .footprint = footprint,
    .create = create,
    .create_collective = 1,
    .record = record,
    .operate = operate,
    .operate_block = operate_block,
    .weigh = weigh,
    .destroy = destroy,
};
