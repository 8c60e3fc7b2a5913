/* SPDX-License-Identifier: GPL-3.0-or-later */
/* operators: see operators.h. Each rank walks its last-stage box row by
 * row, as spectrum.c does: the outer axes' k^2 summed in axis order and
 * carried along, the last axis's tabulated, so that k^2 is summed in the
 * order of the documented definition (numpy's kx**2 + ky**2 + ...). */
#include "config.h"

#include "analysis/operators.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/collective.h"

/* A table's rows at most (a text file of that many lines is read by rank 0). */
#define MAX_TABLE_ROWS (1 << 24)

static const char *const kind_names[] = {
    "gaussian", "tophat", "sharpk", "lowpass", "highpass", "deriv", "laplacian", "poisson", "transfer",
};

/* A positive finite number that is the whole of text. */
static int positive(const char *text, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(text, &end);
    return end != text && *end == '\0' && errno == 0 && isfinite(*v) && *v > 0 ? 0 : -1;
}

static int integer(const char *text, long lo, long hi, int *v)
{
    char *end;
    errno = 0;
    long x = strtol(text, &end, 10);
    if (end == text || *end != '\0' || errno || x < lo || x > hi)
        return -1;
    *v = (int)x;
    return 0;
}

/* The parameters of one operator: "R", "K[:N]", "AXIS", "FILE" or none. */
static fs_status parse_params(fs_operator *op, char *args, const char *item)
{
    fs_operator_kind k = op->kind;
    int none = k == FS_OPER_LAPLACIAN || k == FS_OPER_POISSON;
    if (none)
        return args ? fs_error_set(FS_ERR_USAGE, "--apply: '%s': %s takes no parameter", item,
                                   kind_names[k])
                    : FS_OK;
    if (!args || !*args)
        return fs_error_set(FS_ERR_USAGE, "--apply: '%s': %s needs a parameter (%s)", item,
                            kind_names[k],
                            k == FS_OPER_DERIV      ? "deriv:AXIS"
                            : k == FS_OPER_TRANSFER ? "transfer:FILE"
                            : k == FS_OPER_GAUSSIAN || k == FS_OPER_TOPHAT ? "a radius R"
                                                                           : "a wave number K");
    if (k == FS_OPER_TRANSFER) {
        op->file = strdup(args);
        return op->file ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    if (k == FS_OPER_DERIV)
        return integer(args, -FS_LAYOUT_MAX_DIMS, FS_LAYOUT_MAX_DIMS - 1, &op->axis) == 0
                   ? FS_OK
                   : fs_error_set(FS_ERR_USAGE, "--apply: '%s': expected an axis from %d to %d",
                                  item, -FS_LAYOUT_MAX_DIMS, FS_LAYOUT_MAX_DIMS - 1);
    op->order = FS_BUTTERWORTH_ORDER;
    char *order = strchr(args, ':');
    int filter = k == FS_OPER_LOWPASS || k == FS_OPER_HIGHPASS;
    if (order && filter) {
        *order++ = '\0';
        if (integer(order, 1, 64, &op->order) != 0)
            return fs_error_set(FS_ERR_USAGE, "--apply: '%s': expected an order N from 1 to 64",
                                item);
    }
    if (positive(args, &op->param) != 0)
        return fs_error_set(FS_ERR_USAGE, "--apply: '%s': expected a positive number", item);
    return FS_OK;
}

static fs_status parse_one(fs_operator *op, char *item)
{
    char copy[256];
    snprintf(copy, sizeof copy, "%s", item);
    char *args = strchr(item, ':');
    if (args)
        *args++ = '\0';
    size_t nk = sizeof kind_names / sizeof kind_names[0];
    size_t i = 0;
    while (i < nk && strcmp(item, kind_names[i]) != 0)
        i++;
    if (i == nk)
        return fs_error_set(FS_ERR_USAGE, "--apply: '%s': unknown operator (expected gaussian:R, "
                            "tophat:R, sharpk:K, lowpass:K[:N], highpass:K[:N], deriv:AXIS, "
                            "laplacian, poisson or transfer:FILE)", copy);
    op->kind = (fs_operator_kind)i;
    return parse_params(op, args, copy);
}

fs_status fs_operators_parse(const char *text, fs_operators *out)
{
    memset(out, 0, sizeof *out);
    char *all = strdup(text ? text : "");
    if (!all)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    fs_status st = FS_OK;
    char *rest = all;
    while (st == FS_OK) {
        char *comma = strchr(rest, ',');
        if (comma)
            *comma = '\0';
        if (!*rest)
            st = fs_error_set(FS_ERR_USAGE, "--apply=%s: expected OP[,OP...] with no empty "
                              "operator", text);
        else if (out->n == FS_MAX_OPERATORS)
            st = fs_error_set(FS_ERR_USAGE, "--apply: at most %d operators", FS_MAX_OPERATORS);
        else
            st = parse_one(&out->op[out->n++], rest);
        if (!comma)
            break;
        rest = comma + 1;
    }
    free(all);
    return st;
}

void fs_operators_free(fs_operators *ops)
{
    for (int i = 0; i < ops->n; i++) {
        free(ops->op[i].file);
        fs_table_free(&ops->op[i].table);
    }
    free(ops->grids);
    memset(ops, 0, sizeof *ops);
}

/* ------------------------------------------------------------ tables */

/* Rank 0: the table t from `file`; what + file names it in messages. */
static fs_status read_table(fs_table *t, const char *file, const char *what)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return fs_error_set(FS_ERR_INPUT, "%s%s: %s", what, file, strerror(errno));
    fs_status st = FS_OK;
    char line[4096];
    int cap = 0, lineno = 0;
    while (st == FS_OK && fgets(line, sizeof line, f)) {
        lineno++;
        char *p = line + strspn(line, " \t");
        if (*p == '#' || *p == '\n' || *p == '\r' || *p == '\0')
            continue;
        double k, v;
        char extra;
        if (sscanf(p, "%lf %lf %c", &k, &v, &extra) != 2 || !isfinite(k) || !isfinite(v) || k < 0)
            st = fs_error_set(FS_ERR_INPUT, "%s%s: line %d: expected two numbers k %s (k >= 0)",
                              what, file, lineno, t->column);
        else if (t->nrows > 0 && !(k > t->k[t->nrows - 1]))
            st = fs_error_set(FS_ERR_INPUT, "%s%s: line %d: k must increase", what, file, lineno);
        else if (t->nrows == MAX_TABLE_ROWS)
            st = fs_error_set(FS_ERR_INPUT, "%s%s: more than %d rows", what, file, MAX_TABLE_ROWS);
        if (st == FS_OK && t->nrows == cap) {
            cap = cap ? 2 * cap : 256;
            double *grown = realloc(t->k, sizeof(double) * 2 * (size_t)cap);
            if (!grown) {
                st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
                break;
            }
            /* k in the first half, the values in the second: move them up. */
            if (t->nrows)
                memmove(grown + cap, grown + cap / 2, sizeof(double) * (size_t)t->nrows);
            t->k = grown;
            t->v = grown + cap;
        }
        if (st == FS_OK) {
            t->k[t->nrows] = k;
            t->v[t->nrows++] = v;
        }
    }
    if (st == FS_OK && ferror(f))
        st = fs_error_set(FS_ERR_INPUT, "%s%s: %s", what, file, strerror(errno));
    if (st == FS_OK && t->nrows < 2)
        st = fs_error_set(FS_ERR_INPUT, "%s%s: expected at least two rows k %s", what, file,
                          t->column);
    fclose(f);
    return st;
}

/* The table as one array (k then the values), packed for the broadcast. */
static fs_status share_table(MPI_Comm comm, int rank, fs_table *t)
{
    int64_t n = t->nrows;
    fs_status st = fs_bcast_bytes(comm, 0, &n, sizeof n);
    if (st != FS_OK)
        return st;
    double *both = malloc(sizeof(double) * 2 * (size_t)(n > 0 ? n : 1));
    if (both && rank == 0) {
        memcpy(both, t->k, sizeof(double) * (size_t)n);
        memcpy(both + n, t->v, sizeof(double) * (size_t)n);
    }
    st = fs_error_agree(comm, both ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory"));
    if (st == FS_OK)
        st = fs_bcast_bytes(comm, 0, both, (int64_t)sizeof(double) * 2 * n);
    free(t->k);
    t->k = both;
    t->v = both ? both + n : NULL;
    t->nrows = (int)n;
    return st;
}

typedef struct table_read {
    fs_table *t;
    const char *file, *what;
} table_read;

static fs_status read_one(void *arg)
{
    table_read *r = arg;
    return read_table(r->t, r->file, r->what);
}

fs_status fs_table_load(MPI_Comm comm, const char *file, const char *what, fs_table *t)
{
    int rank = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed"));
    table_read r = {t, file, what};
    fs_status st = fs_root_decides(comm, read_one, &r);
    return st == FS_OK ? share_table(comm, rank, t) : st;
}

void fs_table_free(fs_table *t)
{
    free(t->k);
    t->k = t->v = NULL;
    t->nrows = 0;
}

double fs_table_at(const fs_table *t, double k)
{
    int lo = 0, hi = t->nrows - 1;
    if (k >= t->k[hi])
        return t->v[hi];
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (t->k[mid] <= k)
            lo = mid;
        else
            hi = mid;
    }
    double w = (k - t->k[lo]) / (t->k[hi] - t->k[lo]);
    return t->v[lo] + w * (t->v[hi] - t->v[lo]);
}

fs_status fs_operators_load(MPI_Comm comm, fs_operators *ops)
{
    fs_status st = FS_OK;
    for (int i = 0; i < ops->n && st == FS_OK; i++)
        if (ops->op[i].kind == FS_OPER_TRANSFER) {
            ops->op[i].table.column = "T";
            st = fs_table_load(comm, ops->op[i].file, "--apply: transfer:", &ops->op[i].table);
        }
    return st;
}

fs_status fs_operators_check(const fs_operators *ops, const fs_kgrid *g)
{
    double kmax = fs_kgrid_kmax(g);
    for (int i = 0; i < ops->n; i++) {
        const fs_operator *op = &ops->op[i];
        int a = op->axis < 0 ? op->axis + g->ndim : op->axis;
        if (op->kind == FS_OPER_DERIV && (a < 0 || a >= g->ndim || !g->transformed[a]))
            return fs_error_set(FS_ERR_USAGE, "--apply: deriv:%d: not a transformed axis of the "
                                "%d-D input", op->axis, g->ndim);
        const fs_table *t = &op->table;
        if (op->kind == FS_OPER_TRANSFER && (t->k[0] > 0 || t->k[t->nrows - 1] < kmax))
            return fs_error_set(FS_ERR_INPUT, "--apply: transfer:%s: the table's k from %.17g to "
                                "%.17g does not cover the grid's |k| from 0 to %.17g", op->file,
                                t->k[0], t->k[t->nrows - 1], kmax);
    }
    return FS_OK;
}

/* ------------------------------------------------------------ factors */

static double tophat(double x)
{
    if (x < FS_TOPHAT_SERIES_X) {
        double x2 = x * x;
        return 1.0 - x2 / 10.0 + x2 * x2 / 280.0;
    }
    return 3.0 * (sin(x) - x * cos(x)) / (x * x * x);
}

/* The factor of one operator that depends on k^2 alone (1 for deriv). */
static double radial(const fs_operator *op, double k2)
{
    double k = sqrt(k2), q;
    switch (op->kind) {
    case FS_OPER_GAUSSIAN: return exp(-k2 * op->param * op->param / 2.0);
    case FS_OPER_TOPHAT: return tophat(k * op->param);
    case FS_OPER_SHARPK: return k <= op->param ? 1.0 : 0.0;
    case FS_OPER_LOWPASS: return 1.0 / (1.0 + pow(k / op->param, 2.0 * op->order));
    case FS_OPER_HIGHPASS: q = pow(k / op->param, 2.0 * op->order); return q / (1.0 + q);
    case FS_OPER_LAPLACIAN: return -k2;
    case FS_OPER_POISSON: return k2 > 0 ? -1.0 / k2 : 0.0;
    case FS_OPER_TRANSFER: return fs_table_at(&op->table, k);
    case FS_OPER_DERIV: break;
    }
    return 1.0;
}

/* Per axis over the box's range: k_a^2, and k_a for a derivative (0 on the
 * Nyquist plane of an even axis). */
typedef struct axis_table {
    double *q, *kd;
} axis_table;

/* What the walk needs: the operators' axes resolved, the powers of i. */
typedef struct walk {
    const fs_operators *ops;
    int axis[FS_MAX_OPERATORS];   /* deriv: the input axis */
    int nderiv;
    double scale;                 /* 1 / N */
    fs_precision prec;
} walk;

static double deriv_k(const fs_kgrid *g, int a, int64_t j)
{
    int nyquist = g->n[a] % 2 == 0 && 2 * j == g->n[a];
    return nyquist ? 0.0 : fs_kgrid_k(g, a, j);
}

/* n elements at data from element i0 times f * i^nderiv; k^2 = q + ql[j];
 * kd0[a] the outer axes' derivative components, kdl the row axis's. */
static void apply_row(const walk *w, int row_axis, double q, const double *kd0, const double *ql,
                      const double *kdl, int64_t n, void *data, int64_t i0)
{
    for (int64_t j = 0; j < n; j++) {
        double k2 = q + ql[j], f = w->scale;
        for (int i = 0; i < w->ops->n; i++) {
            const fs_operator *op = &w->ops->op[i];
            f *= op->kind == FS_OPER_DERIV ? (w->axis[i] == row_axis ? kdl[j] : kd0[w->axis[i]])
                                           : radial(op, k2);
        }
        int64_t e = 2 * (i0 + j);
        double re, im;
        if (w->prec == FS_SINGLE) {
            re = ((float *)data)[e];
            im = ((float *)data)[e + 1];
        } else {
            re = ((double *)data)[e];
            im = ((double *)data)[e + 1];
        }
        double r2 = re * f, i2 = im * f;
        switch (w->nderiv % 4) {
        case 1: re = -i2; im = r2; break;
        case 2: re = -r2; im = -i2; break;
        case 3: re = i2; im = -r2; break;
        default: re = r2; im = i2; break;
        }
        if (w->prec == FS_SINGLE) {
            ((float *)data)[e] = (float)re;
            ((float *)data)[e + 1] = (float)im;
        } else {
            ((double *)data)[e] = re;
            ((double *)data)[e + 1] = im;
        }
    }
}

/* The box row by row, the outer axes' sums carried in an odometer. */
static void apply_box(const walk *w, const fs_box *b, const axis_table *tab, void *data)
{
    int last = b->ndim - 1;
    int64_t idx[FS_LAYOUT_MAX_DIMS] = {0};
    int64_t rows = fs_box_elems(b) / b->count[last];
    double kd0[FS_LAYOUT_MAX_DIMS] = {0};
    for (int64_t r = 0; r < rows; r++) {
        double q = 0;
        for (int a = 0; a < last; a++) {
            q += tab[a].q[idx[a]];
            kd0[a] = tab[a].kd[idx[a]];
        }
        apply_row(w, last, q, kd0, tab[last].q, tab[last].kd, b->count[last], data,
                  r * b->count[last]);
        for (int a = last - 1; a >= 0 && ++idx[a] == b->count[a]; a--)
            idx[a] = 0;
    }
}

static fs_status tables_new(const fs_kgrid *g, const fs_box *b, axis_table *tab)
{
    for (int a = 0; a < b->ndim; a++) {
        int64_t m = b->count[a] > 0 ? b->count[a] : 1;
        tab[a].q = malloc(sizeof(double) * 2 * (size_t)m);
        if (!tab[a].q)
            return fs_error_set(FS_ERR_RUNTIME, "out of memory");
        tab[a].kd = tab[a].q + m;
        for (int64_t i = 0; i < b->count[a]; i++) {
            double k = fs_kgrid_k(g, a, b->start[a] + i);
            tab[a].q[i] = k * k;
            tab[a].kd[i] = deriv_k(g, a, b->start[a] + i);
        }
    }
    return FS_OK;
}

/* The 1-D four-step result: a row is one k1 (kgrid.h). */
static fs_status apply_fold(const walk *w, const fs_transform *t, const fs_kgrid *g,
                            const fs_box *b, void *data)
{
    int64_t cnt = b->count[0];
    double *tab = malloc(sizeof(double) * 2 * (size_t)(cnt > 0 ? cnt : 1));
    if (!tab)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    double zero[FS_LAYOUT_MAX_DIMS] = {0};
    for (int64_t k1 = 0; k1 < t->n1; k1++) {
        for (int64_t i2 = 0; i2 < cnt; i2++) {
            int64_t j = fs_kgrid_fold_index(t, b, k1, i2);
            double k = fs_kgrid_k(g, 0, j);
            tab[i2] = k * k;
            tab[cnt + i2] = deriv_k(g, 0, j);
        }
        apply_row(w, 0, 0.0, zero, tab, tab + cnt, cnt, data, k1 * cnt);
    }
    free(tab);
    return FS_OK;
}

fs_status fs_operators_prepare(MPI_Comm comm, const char *list, const double *box, int nbox,
                               const fs_transform *const *ts, int n, fs_operators *ops)
{
    int rank = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed"));
    fs_status st = fs_operators_parse(list, ops); /* checked with the options */
    st = fs_error_agree(comm, st);
    if (st == FS_OK)
        st = fs_operators_load(comm, ops); /* agreed */
    if (st == FS_OK) {
        ops->grids = calloc((size_t)(n > 0 ? n : 1), sizeof *ops->grids);
        st = fs_error_agree(comm, ops->grids ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory"));
    }
    if (st != FS_OK)
        return st;
    ops->ngrids = n;
    for (int i = 0; i < n && st == FS_OK; i++) {
        st = fs_kgrid_init(&ops->grids[i], ts[i], box, nbox);
        if (st == FS_OK)
            st = fs_operators_check(ops, &ops->grids[i]);
    }
    fs_operators_text(ops, ops->text, sizeof ops->text);
    return fs_error_agree(comm, rank == 0 ? st : FS_OK);
}

const fs_kgrid *fs_operators_grid(const fs_operators *ops, int i)
{
    return &ops->grids[i];
}

fs_status fs_operators_apply(const fs_operators *ops, int dataset, const fs_transform *t,
                             const fs_box *last, void *data)
{
    const fs_kgrid *g = &ops->grids[dataset];
    walk w = {.ops = ops, .scale = 1.0, .prec = t->prec};
    for (int a = 0; a < g->ndim; a++)
        if (g->transformed[a])
            w.scale /= (double)(a == t->real_axis ? t->real_len : g->n[a]);
    for (int i = 0; i < ops->n; i++) {
        int a = ops->op[i].axis;
        w.axis[i] = a < 0 ? a + g->ndim : a;
        w.nderiv += ops->op[i].kind == FS_OPER_DERIV;
    }
    if (fs_box_elems(last) == 0)
        return FS_OK;
    if (t->fold)
        return apply_fold(&w, t, g, last, data);
    axis_table tab[FS_LAYOUT_MAX_DIMS];
    memset(tab, 0, sizeof tab);
    fs_status st = tables_new(g, last, tab);
    if (st == FS_OK)
        apply_box(&w, last, tab, data);
    for (int a = 0; a < last->ndim; a++)
        free(tab[a].q);
    return st;
}

void fs_operators_text(const fs_operators *ops, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < ops->n && used < size; i++) {
        const fs_operator *op = &ops->op[i];
        const char *sep = i ? "," : "";
        const char *name = kind_names[op->kind];
        int n;
        if (op->kind == FS_OPER_LOWPASS || op->kind == FS_OPER_HIGHPASS)
            n = snprintf(buf + used, size - used, "%s%s:%.17g:%d", sep, name, op->param, op->order);
        else if (op->kind == FS_OPER_DERIV)
            n = snprintf(buf + used, size - used, "%s%s:%d", sep, name, op->axis);
        else if (op->kind == FS_OPER_TRANSFER)
            n = snprintf(buf + used, size - used, "%s%s:%s", sep, name, op->file);
        else if (op->kind == FS_OPER_LAPLACIAN || op->kind == FS_OPER_POISSON)
            n = snprintf(buf + used, size - used, "%s%s", sep, name);
        else
            n = snprintf(buf + used, size - used, "%s%s:%.17g", sep, name, op->param);
        used += n > 0 ? (size_t)n : 0;
    }
}
