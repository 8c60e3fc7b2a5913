/* SPDX-License-Identifier: GPL-3.0-or-later */
/* correlation: see correlation.h. The product is made in place over the
 * rank's last-stage box (a run of complex numbers whatever the layout),
 * the inverse is the compute plan's undo, and the real-space values are
 * visited through the read map of the rank's first-stage box, which gives
 * each one's coordinates in the input (check.h). The sums are doubles
 * (cell counts stay exact below 2^53) reduced once over all ranks. */
#include "config.h"

#include "stages/correlation.h"

#include "core/collective.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compute/check.h"
#include "io/h5scales.h"
#include "stages/kgrid.h"
#include "stages/stage.h"

/* What each bin sums; then, with --multipoles, C L_l(mu) of each l. */
enum { Q_CELLS, Q_R, Q_XI, NQ };


#define MAX_SHELLS (1 << 22)

typedef struct fs_correlation {
    fs_kgrid g;                     /* the grid and its box lengths (kgrid.h) */
    double h[FS_LAYOUT_MAX_DIMS];   /* the cell L_a / n_a of each transformed axis */
    double hmax, rmax;              /* the largest cell, the largest separation */
    double scale;                   /* turns the forward result's product into C's */
    fs_bins bins;                   /* --bins (--r-bins): edges nbins + 1 */
    int los;                        /* --los: the axis (-1: none) */
    int npoles, ell[FS_MAX_POLES];  /* --multipoles */
    int nq;                         /* sums per bin: NQ + npoles */
    double *acc;                    /* [nbins][nq] */
    double seconds;
    int cross;                      /* of the two INPUTs (--cross) */
    char group[FS_PATH_MAX];        /* in OUTPUT */
} fs_correlation;

static fs_status take_bins(fs_correlation *c, const fs_bins_option *o)
{
    if (!o->nedges && !o->n && c->rmax / c->hmax > MAX_SHELLS)
        return fs_error_set(FS_ERR_USAGE, "--box-size: %.0f shells of r one cell (%g) wide "
                            "(more than %d); give --r-bins", c->rmax / c->hmax, c->hmax,
                            MAX_SHELLS);
    return fs_bins_make(&c->bins, o, c->rmax, c->hmax);
}

/* Everything but the sums, from the options and t, the first INPUT's
 * transform (the run's create and the footprint). */
static fs_status take_plan(fs_correlation *c, const fs_correlation_options *o,
                           const fs_stage_facts *f, const fs_transform *t)
{
    c->cross = f->shared->cross;
    fs_stage_group_path(f, "correlation_function", c->group, sizeof c->group);
    fs_status st = fs_kgrid_init(&c->g, t, &f->shared->box);
    if (st == FS_OK)
        st = fs_los_axis(&f->shared->los, t, &c->los);
    if (st != FS_OK)
        return st;
    c->npoles = c->los >= 0 ? f->shared->los.npoles : 0;
    memcpy(c->ell, f->shared->los.poles, sizeof c->ell);
    c->nq = NQ + c->npoles;
    double npts = 1, r2 = 0;
    for (int a = 0; a < c->g.ndim; a++) {
        if (!c->g.transformed[a])
            continue;
        npts *= (double)c->g.n[a];
        c->h[a] = c->g.L[a] / (double)c->g.n[a];
        c->hmax = c->h[a] > c->hmax ? c->h[a] : c->hmax;
        double d = c->h[a] * (double)(c->g.n[a] / 2);
        r2 += d * d;
    }
    c->rmax = sqrt(r2);
    /* The forward result is t->scale times numpy's, and the undo is the
     * unnormalised inverse divided by t->scale: C = U(|F|^2) / N^2. */
    c->scale = 1.0 / (t->scale * npts * npts);
    return take_bins(c, &o->bins);
}

static fs_status create(const void *opts, const fs_stage_run *r, void **state)
{
    const fs_stage_facts *f = r->facts;
    fs_status st = f->shared->cross
                       ? fs_stage_check_alike("--cross", r->ts, r->n, 1, 0,
                                              "give --precision= when one is single precision")
                       : fs_stage_check_alike("--correlation-function", r->ts, r->n, 0, 0, "");
    if (st != FS_OK)
        return st;
    fs_correlation *c = calloc(1, sizeof *c);
    if (!c)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    *state = c;
    if ((st = take_plan(c, opts, f, r->ts[0])) != FS_OK)
        return st;
    c->acc = calloc((size_t)c->bins.nbins * (size_t)c->nq, sizeof *c->acc);
    return c->acc ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory");
}

static void destroy(void *state)
{
    fs_correlation *c = state;
    if (!c)
        return;
    fs_bins_free(&c->bins);
    free(c->acc);
    free(c);
}

/* What every rank holds for the stage (the footprint hook, stage.h): the
 * sums per bin and the bins' edges, and at the end the larger of MPI's
 * copy of the sums in the reduction and the tables written (a table of
 * means and the cells). Options the run will refuse: nothing. */
static fs_stage_bytes footprint(const void *opts, const fs_stage_facts *f, const fs_transform *t)
{
    fs_correlation *c = calloc(1, sizeof *c);
    if (!c || take_plan(c, opts, f, t) != FS_OK) {
        destroy(c);
        fs_error_clear();
        return (fs_stage_bytes){0, 0, 0};
    }
    int64_t nb = c->bins.nbins, sums = nb * c->nq * 8;
    int64_t reduce = fs_allreduce_sum_bytes(nb * c->nq, t->grid[0] * t->grid[1]);
    int64_t write = nb * 16;
    destroy(c);
    return (fs_stage_bytes){sums + (nb + 1) * 8, reduce > write ? reduce : write, sums};
}

/* data[j] = (other ? other[j] conj data[j] : |data[j]|^2) * f, n complex. */
static void product(void *data, const void *other, fs_precision p, int64_t n, double f)
{
    for (int64_t j = 0; j < n; j++) {
        double a, b, x, y;
        if (p == FS_SINGLE) {
            x = ((float *)data)[2 * j];
            y = ((float *)data)[2 * j + 1];
            a = other ? ((const float *)other)[2 * j] : x;
            b = other ? ((const float *)other)[2 * j + 1] : y;
        } else {
            x = ((double *)data)[2 * j];
            y = ((double *)data)[2 * j + 1];
            a = other ? ((const double *)other)[2 * j] : x;
            b = other ? ((const double *)other)[2 * j + 1] : y;
        }
        /* (a + ib)(x - iy) */
        double re = (a * x + b * y) * f, im = (b * x - a * y) * f;
        if (p == FS_SINGLE) {
            ((float *)data)[2 * j] = (float)re;
            ((float *)data)[2 * j + 1] = (float)im;
        } else {
            ((double *)data)[2 * j] = re;
            ((double *)data)[2 * j + 1] = im;
        }
    }
}

/* The bin of r (-1: outside every bin). */
static int bin_of(const fs_correlation *c, double r)
{
    return fs_bins_of(&c->bins, r);
}

typedef struct visit {
    fs_correlation *c;
    const fs_transform *t;
    const fs_io_map *m;
    const void *data;
    int count_cells;
} visit;

/* C L_l(mu) of each multipole into cell, mu = |r_los| / r; at r = 0,
 * where mu has no value, L_l is its mean over directions (1 for l = 0,
 * else 0), so that the point counts alike in every xi_l. */
static void add_poles(const fs_correlation *c, double *cell, double re, double r, double rlos)
{
    double L[FS_MAX_POLES];
    if (r > 0)
        fs_legendre(c->npoles, c->ell, fabs(rlos) / r, L);
    for (int i = 0; i < c->npoles; i++)
        cell[NQ + i] += re * (r > 0 ? L[i] : c->ell[i] == 0);
}

/* One real-space value into its bin: r from its coordinates in the input. */
static void add_cell(void *ctx, int64_t off, const int64_t *at)
{
    visit *v = ctx;
    const fs_correlation *c = v->c;
    double r2 = 0, rlos = 0;
    if (v->m->fold_inner > 0) { /* the 1-D four-step's folded coordinates */
        double d = c->h[0] * (double)fs_kgrid_freq(at[0] * v->m->fold_inner + at[1], c->g.n[0]);
        r2 = d * d;
        rlos = d;
    } else {
        for (int a = 0; a < c->g.ndim; a++)
            if (c->g.transformed[a]) {
                double d = c->h[a] * (double)fs_kgrid_freq(at[a], c->g.n[a]);
                r2 = r2 + d * d;
                rlos = a == c->los ? d : rlos;
            }
    }
    double r = sqrt(r2), re, im;
    int b = bin_of(c, r);
    if (b < 0)
        return;
    fs_map_element(v->t->prec, v->m, v->data, off, &re, &im);
    double *cell = v->c->acc + (size_t)b * (size_t)c->nq;
    if (v->count_cells) {
        cell[Q_CELLS] += 1;
        cell[Q_R] += r;
    }
    cell[Q_XI] += re;
    if (c->npoles)
        add_poles(c, cell, re, r, rlos);
}

/* Collective, after input i's write: its part in C (with --cross the
 * second's, with the first's the run kept), the inverse, the binning of
 * this rank's part; the first input counts the cells and their r. */
static fs_status written(void *state, const fs_stage_turn *a)
{
    fs_correlation *c = state;
    if (c->cross && a->i == 0) /* kept by the run for the second's turn */
        return FS_OK;
    double t0 = MPI_Wtime();
    const void *other = c->cross ? a->kept : NULL;
    int count_cells = c->cross || a->i == 0;
    product(a->data, other, a->t->prec, fs_box_elems(fs_decomposition_last(a->d)), c->scale);
    fs_status st = fs_error_agree(a->comm, fs_compute_undo_timed(a->c, a->data, a->timers,
                                                                  a->progress));
    if (st != FS_OK)
        return st;
    /* The undo may leave the values in the exchange's second array. */
    fs_io_map rm = fs_transform_read_map(a->t, fs_decomposition_first(a->d));
    visit v = {c, a->t, &rm, fs_compute_data(a->c), count_cells};
    fs_map_visit(&rm, 0, rm.file_box.count[0], add_cell, &v);
    c->seconds += MPI_Wtime() - t0;
    return FS_OK;
}

static fs_status reduce(fs_correlation *c, MPI_Comm comm)
{
    double t0 = MPI_Wtime();
    fs_status st = fs_allreduce_sum(comm, c->acc, (int64_t)c->bins.nbins * c->nq);
    c->seconds += MPI_Wtime() - t0;
    return st;
}

static const char *rule_name(const fs_correlation *c)
{
    return c->bins.rule == FS_BINS_SHELLS ? "shells of one cell" : c->bins.rule == FS_BINS_LINEAR ? "linear" : "edges";
}

/* The mean of quantity q over each bin's cells times factor (NaN: no
 * cell). */
static double mean(const fs_correlation *c, int bin, int q, double factor)
{
    const double *cell = c->acc + (size_t)bin * (size_t)c->nq;
    return cell[Q_CELLS] > 0 ? cell[q] / cell[Q_CELLS] * factor : NAN;
}

static void means(const fs_correlation *c, int q, double factor, double *out)
{
    for (int i = 0; i < c->bins.nbins; i++)
        out[i] = mean(c, i, q, factor);
}

/* xi_l: the column of multipole i, its name and factor 2l + 1. */
static int pole(const fs_correlation *c, int i, char *name, size_t size, double *factor)
{
    snprintf(name, size, "xi_%d", c->ell[i]);
    *factor = 2 * c->ell[i] + 1;
    return NQ + i;
}

/* The group's attributes: its convention, inputs, axes, box and cell. */
static fs_status write_attrs(const fs_correlation *c, fs_h5_output *o, const char *fields)
{
    char text[768];
    snprintf(text, sizeof text,
             "two-point correlation function per bin of r: C = Re ifftn(fftn(a) conj(fftn(b))) / N "
             "over the transformed axes (a = b but with --cross; N their points), element d at "
             "separation r = sqrt(sum_a (h_a d_a)^2), d_a = fftfreq(n_a, 1/n_a)[j_a], h_a = L_a / "
             "n_a; xi: mean C, r: mean r of the bin's cells%s; bins: %s, [E_i, E_i+1)",
             c->npoles ? "; xi_l: (2l + 1) mean C L_l(mu), mu = |h_los d_los| / r (at r = 0: "
                         "L_l's mean over directions, 1 for l = 0, else 0)" : "",
             rule_name(c));
    double cell[FS_LAYOUT_MAX_DIMS];
    int64_t naxes = 0;
    for (int a = 0; a < c->g.ndim; a++)
        if (c->g.transformed[a])
            cell[naxes++] = c->h[a];
    fs_status st = fs_bins_group_attrs(o, &c->g, text, fields);
    if (st == FS_OK)
        st = fs_h5_output_attr_numbers(o, "cell_size", 1, &naxes, FS_DTYPE_FLOAT64, cell);
    if (st == FS_OK)
        st = fs_h5_output_attr_string(o, "bins", rule_name(c));
    int64_t los = c->los, ell[FS_MAX_POLES];
    for (int i = 0; i < c->npoles; i++)
        ell[i] = c->ell[i];
    if (st == FS_OK && c->los >= 0)
        st = fs_h5_output_attr_int64s(o, "los", -1, &los);
    if (st == FS_OK && c->npoles)
        st = fs_h5_output_attr_int64s(o, "multipoles", c->npoles, ell);
    return st;
}

/* The tables xi, r, cells and edges. */
static fs_status write_tables(const fs_correlation *c, fs_h5_output *o, const char *group)
{
    int64_t n = c->bins.nbins, ne = c->bins.nbins + 1;
    double *v = malloc(sizeof *v * (size_t)n);
    int64_t *cells = malloc(sizeof *cells * (size_t)n);
    fs_status st = v && cells ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory");
    char path[256];
    if (st == FS_OK) {
        means(c, Q_XI, 1.0, v);
        snprintf(path, sizeof path, "%s/xi", group);
        st = fs_h5_output_table(o, path, 1, &n, FS_DTYPE_FLOAT64, v);
    }
    for (int i = 0; i < c->npoles && st == FS_OK; i++) {
        char name[32];
        double f;
        int q = pole(c, i, name, sizeof name, &f);
        means(c, q, f, v);
        snprintf(path, sizeof path, "%s/%s", group, name);
        st = fs_h5_output_table(o, path, 1, &n, FS_DTYPE_FLOAT64, v);
    }
    if (st == FS_OK) {
        means(c, Q_R, 1.0, v);
        snprintf(path, sizeof path, "%s/r", group);
        st = fs_h5_output_table(o, path, 1, &n, FS_DTYPE_FLOAT64, v);
    }
    if (st == FS_OK) {
        for (int i = 0; i < c->bins.nbins; i++)
            cells[i] = (int64_t)c->acc[(size_t)i * (size_t)c->nq + Q_CELLS];
        snprintf(path, sizeof path, "%s/cells", group);
        st = fs_h5_output_table(o, path, 1, &n, FS_DTYPE_INTEGER, cells);
    }
    if (st == FS_OK) {
        snprintf(path, sizeof path, "%s/edges", group);
        st = fs_h5_output_table(o, path, 1, &ne, FS_DTYPE_FLOAT64, c->bins.edges);
    }
    free(v);
    free(cells);
    return st;
}

/* r and edges are dimension scales; xi and cells lie along r. */
static fs_status describe(const fs_correlation *c, fs_h5_output *o, const char *group)
{
    const char *ru = c->g.box_given ? "box_length_unit" : "grid_spacing";
    char r[256], edges[256], path[256];
    snprintf(r, sizeof r, "%s/r", group);
    snprintf(edges, sizeof edges, "%s/edges", group);
    fs_status st = fs_h5_scale_set(o, r);
    if (st == FS_OK)
        st = fs_h5_scale_set(o, edges);
    const struct {
        const char *name, *units, *long_name;
    } t[] = {
        {"r", ru, "mean separation r of the bin's cells"},
        {"edges", ru, "edges of the r bins, [E_i, E_i+1)"},
        {"xi", "1", "two-point correlation function: mean C of the bin's cells"},
        {"cells", "1", "number of separations (times batch indices) in the bin"},
    };
    const char *dims[1] = {r};
    for (size_t i = 0; i < sizeof t / sizeof t[0] && st == FS_OK; i++) {
        snprintf(path, sizeof path, "%s/%s", group, t[i].name);
        if (i >= 2)
            st = fs_h5_scales_attach(o, path, 1, dims);
        if (st == FS_OK)
            st = fs_h5_text_attr(o, path, "units", t[i].units);
        if (st == FS_OK)
            st = fs_h5_text_attr(o, path, "long_name", t[i].long_name);
    }
    for (int i = 0; i < c->npoles && st == FS_OK; i++) {
        char name[32], text[96];
        double f;
        pole(c, i, name, sizeof name, &f);
        snprintf(path, sizeof path, "%s/%s", group, name);
        snprintf(text, sizeof text, "Legendre multipole l = %d: (2l + 1) <C L_l(mu)>", c->ell[i]);
        st = fs_h5_scales_attach(o, path, 1, dims);
        if (st == FS_OK)
            st = fs_h5_text_attr(o, path, "units", "1");
        if (st == FS_OK)
            st = fs_h5_text_attr(o, path, "long_name", text);
    }
    return st;
}

static const char *group(const void *state, int g)
{
    const fs_correlation *c = state;
    return g == 0 ? c->group : NULL;
}

/* Collective: the group (fields: the inputs, "FILE:DATASET, ..."). */
static fs_status write(const fs_correlation *c, fs_h5_output *o, const char *fields, int replace)
{
    fs_status st = fs_h5_output_group(o, c->group, replace);
    if (st == FS_OK)
        st = write_attrs(c, o, fields);
    if (st == FS_OK)
        st = write_tables(c, o, c->group);
    if (st == FS_OK)
        st = describe(c, o, c->group);
    return st;
}

/* Collective, once every input is added: the sums over the ranks, then the
 * group, timed as the write phase. */
static fs_status finish(void *state, MPI_Comm comm, const fs_stage_run *r, const fs_stage_out *out)
{
    fs_correlation *c = state;
    fs_status st = fs_error_agree(comm, reduce(c, comm));
    fs_timer_start(out->timers, FS_PHASE_WRITE);
    char *fields = st == FS_OK ? fs_stage_inputs_text(r->inputs, r->infos, r->n) : NULL;
    if (st == FS_OK)
        st = fs_error_agree(comm, fields ? write(c, out->h5, fields, out->replace)
                                         : fs_error_set(FS_ERR_RUNTIME, "out of memory for the "
                                                        "correlation function"));
    free(fields);
    fs_timer_stop(out->timers, FS_PHASE_WRITE);
    return st;
}

static void json(fs_json *j, const void *state)
{
    const fs_correlation *c = state;
    fs_json_open(j, "correlation_function", '{');
    fs_json_str(j, "group", c->group);
    fs_json_str(j, "bins", rule_name(c));
    fs_json_num(j, "seconds", c->seconds);
    char keys[NQ + FS_MAX_POLES][32] = {"cells", "r", "xi"};
    double factor[NQ + FS_MAX_POLES] = {1, 1, 1};
    for (int i = 0; i < c->npoles; i++)
        pole(c, i, keys[NQ + i], sizeof keys[0], &factor[NQ + i]);
    for (int q = 0; q < c->nq; q++) {
        fs_json_open(j, keys[q], '[');
        for (int i = 0; i < c->bins.nbins; i++) {
            double cells = c->acc[(size_t)i * (size_t)c->nq + Q_CELLS];
            if (q == Q_CELLS)
                fs_json_int(j, NULL, (int64_t)cells);
            else if (cells > 0)
                fs_json_num(j, NULL, mean(c, i, q, factor[q]));
            else
                fs_json_null(j, NULL);
        }
        fs_json_close(j, ']');
    }
    fs_json_close(j, '}');
}

static void summary(const void *state, const char *output, char *buf, size_t size)
{
    const fs_correlation *c = state;
    snprintf(buf, size, "  correlation function: %d bins (%s, cell %.6g) in %s:%s, %.4f s\n",
             c->bins.nbins, rule_name(c), c->hmax, output, c->group, c->seconds);
}

/* ---------------------------------------------------------- the options */

static int active(const void *opts, const fs_stage_shared *shared)
{
    (void)shared;
    return ((const fs_correlation_options *)opts)->on;
}

static const char *option(const void *opts)
{
    (void)opts;
    return "--correlation-function";
}

/* Its bins asked for with it; --check would undo the transform it has
 * made its own product of. */
static fs_status check(void *opts, const fs_stage_facts *f, int on)
{
    const fs_correlation_options *o = opts;
    if ((o->bins.n || o->bins.nedges) && !on)
        return fs_error_set(FS_ERR_USAGE, "--r-bins: only with --correlation-function");
    if (on && f->check)
        return fs_error_set(FS_ERR_USAGE, "--check, --correlation-function: the correlation "
                            "function takes the transformed array's place in memory; check the "
                            "transform in a run of its own");
    return FS_OK;
}

static void needs(const void *opts, const fs_stage_facts *f, int naxes, fs_stage_needs *n)
{
    (void)opts, (void)naxes;
    n->forward = 1;
    n->whole = 1;
    n->undo = 1;
    n->reread = 1;
    n->keep_first = f->shared->cross;
    n->kept = "--cross's copy";
    n->groups = 1;
    n->longest_group = "correlation_function";
}

static fs_status set_r_bins(const fs_opt *opt, const char *arg, void *section)
{
    return fs_bins_parse("--r-bins", arg, "r", "R", fs_opt_field(opt, section));
}

static const fs_opt lines[] = {
    {FS_OPT("correlation-function", 0, FS_OPT_NO_ARG, fs_opt_flag, fs_correlation_options, on),
     .help = "      --correlation-function  xi(r): the mean of C = ifftn(|fftn(x)|^2) / N in\n"
             "                          shells of the minimum-image separation r, one cell\n"
             "                          wide (/correlation_function); x as given (pass the\n"
             "                          overdensity); with --cross, of the two INPUTs\n"},
    {FS_OPT("r-bins", 0, FS_OPT_ARG, set_r_bins, fs_correlation_options, bins),
     .help = "      --r-bins=N|E0,E1,..  N equal bins of r up to the largest, these edges,\n"
             "                          or RMIN:RMAX:DR; each [E_i, E_i+1); r in cells, or\n"
             "                          in box units with --box-size\n"},
    {.long_name = NULL},
};

const fs_stage_ops fs_stage_correlation = {
    .name = "correlation",
    .report_member = "spectra",
    .options = lines,
    .options_bytes = sizeof(fs_correlation_options),
    .grid_options = "--correlation-function",
    .los_options = "--correlation-function",
    .active = active,
    .option = option,
    .check = check,
    .needs = needs,
    .footprint = footprint,
    .create = create,
    .written = written,
    .group = group,
    .finish = finish,
    .json = json,
    .summary = summary,
    .destroy = destroy,
};
