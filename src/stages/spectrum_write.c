/* SPDX-License-Identifier: GPL-3.0-or-later */
/* spectrum_write: the spectrum stage's results (spectrum.h): the sums over
 * the ranks, the groups written into OUTPUT with their tables, coordinates
 * (h5scales.h) and attributes, the report's part and the summary's line. */
#include "config.h"

#include "stages/spectrum.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/collective.h"
#include "io/h5scales.h"

#define TABLE_PATH_MAX (FS_PATH_MAX + 64) /* a group's path and a table's name in it */

/* The mean of quantity q over each of the cells' modes (NaN: no mode),
 * times factor, less shot. */
static void means(const fs_spectrum *s, const double *acc, int cells, int q, double factor,
                  double shot, double *out)
{
    for (int i = 0; i < cells; i++) {
        double w = acc[(size_t)i * (size_t)s->nq + Q_MODES];
        out[i] = w > 0 ? acc[(size_t)i * (size_t)s->nq + q] / w * factor - shot : NAN;
    }
}

/* --shot-noise: what column q of a group loses: the power spectrum's
 * power (and monopole) the inputs' sum, power_a and power_b their own
 * input's, a cross spectrum nothing. */
static double shot_of(const fs_spectrum *s, int cross, int q)
{
    if (q == Q_POWER_A || q == Q_POWER_B)
        return s->nshot == 2 ? s->shot[q == Q_POWER_B] : 0.0;
    return cross ? 0.0 : s->shot_power;
}

static void modes(const fs_spectrum *s, const double *acc, int cells, int64_t *out)
{
    for (int i = 0; i < cells; i++)
        out[i] = (int64_t)llround(acc[(size_t)i * (size_t)s->nq + Q_MODES]);
}

/* Column i of the multipoles of the group (cross: of Re(X_a conj X_b))
 * and its factor (2l + 1) times the power's. */
static int pole_column(const fs_spectrum *s, int i, int cross, double *factor)
{
    *factor = (2 * s->ell[i] + 1) * s->factor;
    return NQ + (cross ? s->npoles : 0) + i;
}

static const char *rule_name(const fs_spectrum *s)
{
    return s->bins.rule == FS_BINS_SHELLS ? "shells of k_f" : s->bins.rule == FS_BINS_LINEAR ? "linear" : "edges";
}

/* The group's attributes: its convention. */
static fs_status write_attrs(const fs_spectrum *s, fs_h5_output *o, int cross,
                             const fs_stage_run *r)
{
    char text[640], window[128] = "";
    if (s->window && s->aliased)
        snprintf(window, sizeof window, " / C(k), C = prod_a sum over m of sinc(pi (f_a / n_a "
                 "+ m))^%d", 2 * s->window);
    else if (s->window)
        snprintf(window, sizeof window, " / W(k)^2, W = prod_a sinc(pi f_a / n_a)^%d", s->window);
    snprintf(text, sizeof text,
             "%s per bin of |k|: k_a = 2 pi f_a / L_a, f_a = fftfreq(n_a, 1/n_a); mean |k| and "
             "mean %s%s of the modes%s%s; bins: %s",
             cross ? "cross spectrum Re(X_a conj X_b)" : "power spectrum |X|^2",
             cross ? "Re(X_a conj X_b)" : "|X|^2", window, s->g.box_given ? ", times V / N^2" : "",
             !s->nshot ? "" : cross ? ", power_a and power_b less shot_noise_a and shot_noise_b"
                                    : ", less shot_noise", rule_name(s));
    char *fields = fs_stage_inputs_text(r->inputs, r->infos, r->n);
    if (!fields)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory for the spectrum's attributes");
    fs_status st = fs_bins_group_attrs(o, &s->g, text, fields);
    free(fields);
    if (st == FS_OK)
        st = fs_h5_output_attr_numbers(o, "k_fundamental", 0, NULL, FS_DTYPE_FLOAT64, &s->kf);
    if (st == FS_OK)
        st = fs_h5_output_attr_numbers(o, "power_factor", 0, NULL, FS_DTYPE_FLOAT64, &s->factor);
    int64_t los = s->los, per[FS_LAYOUT_MAX_DIMS];
    if (st == FS_OK && s->los >= 0)
        st = fs_h5_output_attr_int64s(o, "los", -1, &los);
    for (int i = 0; i < s->nper; i++)
        per[i] = s->per[i];
    if (st == FS_OK && s->nper)
        st = fs_h5_output_attr_int64s(o, "spectrum_per", s->nper, per);
    static const char *const windows[] = {"none", "ngp", "cic", "tsc", "pcs"};
    char scheme[32];
    snprintf(scheme, sizeof scheme, "%s%s", windows[s->window], s->aliased ? "-shotnoise" : "");
    if (st == FS_OK && s->window)
        st = fs_h5_output_attr_string(o, "compensate", scheme);
    int64_t n = s->nshot;
    if (st == FS_OK && s->nshot && !cross)
        st = fs_h5_output_attr_numbers(o, "shot_noise", 0, NULL, FS_DTYPE_FLOAT64, &s->shot_power);
    if (st == FS_OK && s->nshot > 1 && !cross)
        st = fs_h5_output_attr_numbers(o, "shot_noise_inputs", 1, &n, FS_DTYPE_FLOAT64, s->shot);
    if (st == FS_OK && s->nshot && cross)
        st = fs_h5_output_attr_numbers(o, "shot_noise_a", 0, NULL, FS_DTYPE_FLOAT64, &s->shot[0]);
    if (st == FS_OK && s->nshot && cross)
        st = fs_h5_output_attr_numbers(o, "shot_noise_b", 0, NULL, FS_DTYPE_FLOAT64, &s->shot[1]);
    if (st == FS_OK && s->paint_window) /* painted particles: how (sources/particles.h) */
        st = fs_h5_output_attr_string(o, "paint", windows[s->paint_window]);
    int64_t interlaced = s->interlaced;
    if (st == FS_OK && s->paint_window)
        st = fs_h5_output_attr_int64s(o, "interlaced", -1, &interlaced);
    if (st == FS_OK && s->paint_window)
        st = fs_h5_output_attr_int64s(o, "particles", -1, &s->particles);
    return st;
}

/* One table of the group: path/name, dims (1 or 2 of them). */
static fs_status table(fs_h5_output *o, const char *group, const char *name, int rank,
                       const int64_t *dims, fs_dtype type, const void *values)
{
    char path[TABLE_PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", group, name);
    return fs_h5_output_table(o, path, rank, dims, type, values);
}

/* The shape of a table: the slices' axes (per_slice), then the cells'. */
static int table_dims(const fs_spectrum *s, int per_slice, int ncell, const int64_t *cell,
                      int64_t *dims)
{
    int rank = 0;
    for (int i = 0; per_slice && i < s->nper; i++)
        dims[rank++] = s->g.n[s->per[i]];
    for (int i = 0; i < ncell; i++)
        dims[rank++] = cell[i];
    return rank;
}

/* The tables of one accumulator over its cells of shape cell (ncell
 * axes): k, mu and modes of the first slice (every slice has the same
 * modes), the power quantities and multipoles of every slice. */
static fs_status write_tables(const fs_spectrum *s, fs_h5_output *o, const char *group,
                              const double *acc, int ncell, const int64_t *cell, const char *suffix,
                              int cross)
{
    int64_t cells = cell[0] * (ncell > 1 ? cell[1] : 1), all = cells * s->nslices;
    double *v = malloc(sizeof *v * (size_t)all);
    int64_t *m = malloc(sizeof *m * (size_t)cells);
    if (!v || !m) {
        free(v);
        free(m);
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    const struct {
        const char *name;
        int q, per_slice;
        double factor, shot;
    } cols[] = {
        {"k", Q_K, 0, 1.0, 0.0},
        {"power", cross ? Q_CROSS : Q_POWER, 1, s->factor, shot_of(s, cross, Q_POWER)},
        {"power_a", Q_POWER_A, 1, s->factor, shot_of(s, cross, Q_POWER_A)},
        {"power_b", Q_POWER_B, 1, s->factor, shot_of(s, cross, Q_POWER_B)},
        {"mu", Q_MU, 0, 1.0, 0.0},
    };
    int ncols = cross ? 4 : 2;
    fs_status st = FS_OK;
    char name[32];
    int64_t dims[FS_LAYOUT_MAX_DIMS + 2];
    for (int i = 0; i < ncols + (ncell > 1) && st == FS_OK; i++) {
        int c = i < ncols ? i : 4;
        means(s, acc, (int)(cols[c].per_slice ? all : cells), cols[c].q, cols[c].factor,
              cols[c].shot, v);
        snprintf(name, sizeof name, "%s%s", cols[c].name, c == 4 ? "" : suffix);
        int rank = table_dims(s, cols[c].per_slice, ncell, cell, dims);
        st = table(o, group, name, rank, dims, FS_DTYPE_FLOAT64, v);
    }
    for (int i = 0; ncell == 1 && i < s->npoles && st == FS_OK; i++) {
        double f;
        int q = pole_column(s, i, cross, &f);
        means(s, acc, (int)all, q, f, s->ell[i] == 0 ? shot_of(s, cross, Q_POWER) : 0.0, v);
        snprintf(name, sizeof name, "power_%d", s->ell[i]);
        st = table(o, group, name, table_dims(s, 1, ncell, cell, dims), dims, FS_DTYPE_FLOAT64, v);
    }
    modes(s, acc, (int)cells, m);
    snprintf(name, sizeof name, "modes%s", suffix);
    if (st == FS_OK)
        st = table(o, group, name, ncell, cell, FS_DTYPE_INTEGER, m);
    free(v);
    free(m);
    return st;
}

/* What a table's dimensions are: the coordinates of its axes. */
typedef struct group_dims {
    char per[FS_LAYOUT_MAX_DIMS][TABLE_PATH_MAX]; /* the slices' axes */
    char k[TABLE_PATH_MAX], mu[TABLE_PATH_MAX], edges[TABLE_PATH_MAX], mu_edges[TABLE_PATH_MAX];
    int time;  /* a scalar coordinate time: the per-slice tables name it */
} group_dims;

/* One table's dimensions, units and long name. */
static fs_status label(const fs_spectrum *s, fs_h5_output *o, const char *group,
                       const group_dims *g, const char *name, int per_slice, int mu,
                       const char *units, const char *long_name)
{
    char path[TABLE_PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", group, name);
    const char *dims[FS_LAYOUT_MAX_DIMS + 2];
    int n = 0;
    for (int i = 0; per_slice && i < s->nper; i++)
        dims[n++] = g->per[i];
    dims[n++] = g->k;
    if (mu)
        dims[n++] = g->mu;
    fs_status st = strcmp(name, "k") == 0 ? FS_OK : fs_h5_scales_attach(o, path, n, dims);
    if (st == FS_OK && units)
        st = fs_h5_text_attr(o, path, "units", units);
    if (st == FS_OK)
        st = fs_h5_text_attr(o, path, "long_name", long_name);
    /* CF's auxiliary coordinates: xarray makes the scalar time a coordinate */
    if (st == FS_OK && per_slice && g->time)
        st = fs_h5_text_attr(o, path, "coordinates", "time");
    return st;
}

/* What the group is made of: its INPUTs, their coordinates (NULL: none)
 * and the attributes they share (NULL: none). */
typedef struct group_from {
    const fs_stage_run *r;
    const fs_input_coords *coords;
    const fs_input_attrs *shared;
} group_from;

/* The INPUTs' coordinates along batch axis a (n points) when every INPUT
 * has the same one there (NULL: the indices stand for it). */
static const fs_input_coords *slice_coords(const group_from *from, int a, int64_t n)
{
    const fs_input_coords *c = from->coords;
    const fs_stage_run *r = from->r;
    if (!c || r->n < 1 || a >= r->infos[0].ndim || r->infos[0].shape[a] != n)
        return NULL;
    for (int i = 1; i < r->n; i++) {
        const fs_h5_found_coord *x = &c[0].axis[a], *y = &c[i].axis[a];
        if (a >= c[0].ndim || a >= c[i].ndim || x->found != y->found)
            return NULL;
        if (x->found && (strcmp(x->name, y->name) || x->has_values != y->has_values ||
                         x->is_int != y->is_int ||
                         (x->has_values && memcmp(c[0].values[a], c[i].values[a], (size_t)n * 8))))
            return NULL;
    }
    return c;
}

/* The INPUTs' time attribute (one number they share) as the group's
 * scalar coordinate time, what xarray.concat(..., dim="time") puts the
 * groups of a series in order by; none when an axis of the group is
 * called time already. */
static fs_status time_coord(const fs_spectrum *s, fs_h5_output *o, const char *group,
                            const group_from *from, group_dims *g)
{
    double t;
    g->time = 0;
    if (!from->shared || !fs_input_attrs_number(from->shared, "time", &t))
        return FS_OK;
    char path[TABLE_PATH_MAX];
    snprintf(path, sizeof path, "%s/time", group);
    for (int i = 0; i < s->nper; i++)
        if (strcmp(g->per[i], path) == 0)
            return FS_OK;
    fs_status st = fs_h5_output_table(o, path, 0, NULL, FS_DTYPE_FLOAT64, &t);
    if (st == FS_OK)
        st = fs_h5_text_attr(o, path, "long_name", "the inputs' time attribute");
    g->time = st == FS_OK;
    return st;
}

/* The group's coordinates: k (the bins' mean |k|) and edges are scales
 * themselves, the slices' axes get the INPUTs' coordinates (or indices),
 * the mu bins centre coordinates, and a time attribute a scalar time. */
static fs_status group_coords(const fs_spectrum *s, fs_h5_output *o, const char *group,
                              const char *ku, const group_from *from, group_dims *g)
{
    snprintf(g->k, sizeof g->k, "%s/k", group);
    snprintf(g->edges, sizeof g->edges, "%s/edges", group);
    snprintf(g->mu_edges, sizeof g->mu_edges, "%s/mu_edges", group);
    fs_status st = fs_h5_scale_set(o, g->k);
    if (st == FS_OK)
        st = fs_h5_scale_set(o, g->edges);
    if (st == FS_OK)
        st = fs_h5_text_attr(o, g->edges, "units", ku);
    if (st == FS_OK)
        st = fs_h5_text_attr(o, g->edges, "long_name", "edges of the |k| bins, [E_i, E_i+1)");
    for (int i = 0; i < s->nper && st == FS_OK; i++) {
        int a = s->per[i];
        fs_h5_batch_coord b;
        fs_h5_batch_coord_of(slice_coords(from, a, s->g.n[a]), a, s->g.n[a], &b);
        st = fs_h5_coord_make(o, group, &b.c, NULL, 0, g->per[i], sizeof g->per[i]);
    }
    if (st == FS_OK)
        st = time_coord(s, o, group, from, g);
    if (st == FS_OK && s->acc_mu) {
        double v[1000];
        for (int i = 0; i < s->nmu; i++)
            v[i] = (i + 0.5) / s->nmu;
        fs_h5_coord c = {.name = "mu_bin", .n = s->nmu, .type = FS_DTYPE_FLOAT64, .values = v,
                         .units = "1", .long_name = "centre of the |mu| bin"};
        st = fs_h5_coord_make(o, group, &c, NULL, 0, g->mu, sizeof g->mu);
        if (st == FS_OK)
            st = fs_h5_scale_set(o, g->mu_edges);
        if (st == FS_OK)
            st = fs_h5_text_attr(o, g->mu_edges, "long_name", "edges of the |mu| bins");
    }
    return st;
}

/* Every table's dimensions, units and long name: netCDF-4 and xarray read
 * the group with named dimensions and coordinates. */
static fs_status describe_group(const fs_spectrum *s, fs_h5_output *o, const char *group,
                                int cross, const group_from *from)
{
    char ku[64], pu[64];
    snprintf(ku, sizeof ku, s->g.box_given ? "rad/box_length_unit" : "rad/grid_spacing");
    snprintf(pu, sizeof pu, s->g.box_given ? "box_length_unit^%d" : "1", s->g.naxes);
    group_dims g;
    fs_status st = group_coords(s, o, group, ku, from, &g);
    const char *what = cross ? "mean Re(X_a conj X_b) of the bin's modes"
                             : "mean |X|^2 of the bin's modes";
    const struct {
        const char *name;
        int per_slice, on, mu;
        const char *units, *long_name;
    } t[] = {
        {"k", 0, 1, 0, ku, "mean |k| of the bin's modes"},
        {"modes", 0, 1, 0, "1", "number of modes in the bin"},
        {"power", 1, 1, 0, pu, what},
        {"power_a", 1, cross, 0, pu, "mean |X_a|^2 of the bin's modes"},
        {"power_b", 1, cross, 0, pu, "mean |X_b|^2 of the bin's modes"},
        {"k_mu", 0, s->acc_mu != NULL, 1, ku, "mean |k| of the cell's modes"},
        {"modes_mu", 0, s->acc_mu != NULL, 1, "1", "number of modes in the cell"},
        {"mu", 0, s->acc_mu != NULL, 1, "1", "mean |mu| of the cell's modes"},
        {"power_mu", 1, s->acc_mu != NULL, 1, pu, what},
        {"power_a_mu", 1, cross && s->acc_mu, 1, pu, "mean |X_a|^2 of the cell's modes"},
        {"power_b_mu", 1, cross && s->acc_mu, 1, pu, "mean |X_b|^2 of the cell's modes"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0] && st == FS_OK; i++)
        if (t[i].on)
            st = label(s, o, group, &g, t[i].name, t[i].per_slice, t[i].mu, t[i].units,
                       t[i].long_name);
    for (int i = 0; i < s->npoles && st == FS_OK; i++) {
        char name[32], text[96];
        snprintf(name, sizeof name, "power_%d", s->ell[i]);
        snprintf(text, sizeof text, "Legendre multipole l = %d: (2l + 1) <%s L_l(mu)>", s->ell[i],
                 cross ? "Re(X_a conj X_b)" : "|X|^2");
        st = label(s, o, group, &g, name, 1, 0, pu, text);
    }
    return st;
}

/* The group's own attribute names (write_attrs), and those of the
 * dimension scales', which mean something else on a group: an input's
 * attribute of one of these names is not copied onto the group. */
static const char *const group_attrs[] = {
    "convention", "inputs", "fftshard_version", "axes", "box_size", "k_fundamental",
    "power_factor", "los", "spectrum_per", "compensate", "shot_noise", "shot_noise_inputs",
    "shot_noise_a", "shot_noise_b", "paint", "interlaced", "particles", "CLASS", "NAME",
    /* what describes the field's values, not its spectrum's (CF) */
    "_FillValue", "missing_value", "valid_min", "valid_max", "valid_range", "scale_factor",
    "add_offset", "units", "long_name", "standard_name", NULL,
};

/* Group g's sums: its family's. */
static const double *sums_of(const fs_spectrum *s, int g, int mu)
{
    size_t off = fs_spectrum_cells(s) * (size_t)s->group_family[g];
    return mu ? s->acc_mu + off * (size_t)s->nmu : s->acc + off;
}

/* shared: the inputs' attributes that go on the group (NULL: none). */
static fs_status write_group(const fs_spectrum *s, fs_h5_output *o, int g, const fs_stage_run *r,
                             const fs_input_attrs *shared, const fs_stage_out *out)
{
    int replace = out->replace;
    const char *group = s->group[g];
    int cross = s->group_cross[g];
    fs_status st = fs_h5_output_group(o, group, replace);
    if (st == FS_OK)
        st = write_attrs(s, o, cross, r);
    if (st == FS_OK && shared && shared->count)
        st = fs_h5_output_copy_attrs(o, shared);
    int64_t cell[2] = {s->bins.nbins, s->nmu};
    if (st == FS_OK)
        st = write_tables(s, o, group, sums_of(s, g, 0), 1, cell, "", cross);
    int64_t nedges = s->bins.nbins + 1;
    if (st == FS_OK)
        st = table(o, group, "edges", 1, &nedges, FS_DTYPE_FLOAT64, s->bins.edges);
    if (st == FS_OK && s->acc_mu)
        st = write_tables(s, o, group, sums_of(s, g, 1), 2, cell, "_mu", cross);
    if (st == FS_OK && s->acc_mu) {
        double e[1001];
        int64_t n = s->nmu + 1;
        for (int i = 0; i <= s->nmu; i++)
            e[i] = (double)i / s->nmu;
        st = table(o, group, "mu_edges", 1, &n, FS_DTYPE_FLOAT64, e);
    }
    if (st == FS_OK)
        st = describe_group(s, o, group, cross, &(group_from){r, out->coords, shared});
    return st;
}

/* Collective: the sums over the ranks. */
static fs_status reduce(fs_spectrum *s, MPI_Comm comm)
{
    double t0 = MPI_Wtime();
    int64_t n = (int64_t)fs_spectrum_cells(s) * s->nfam;
    fs_status st = FS_OK;
    for (int pass = 0; pass < (s->acc_mu ? 2 : 1) && st == FS_OK; pass++)
        st = fs_allreduce_sum(comm, pass ? s->acc_mu : s->acc, pass ? n * s->nmu : n);
    s->seconds += MPI_Wtime() - t0;
    return st;
}

/* Collective: the groups, each with its convention as attributes, the
 * inputs' names ("FILE:DATASET" of each, as probed), then the attributes
 * every input's dataset holds alike (a time, a viscosity, units), but for
 * the group's own names. */
static fs_status write(const fs_spectrum *s, const fs_stage_run *r, const fs_stage_out *out)
{
    fs_input_attrs shared = {0};
    fs_status st = out->attrs ? fs_input_attrs_shared(out->attrs, r->n, group_attrs, &shared)
                              : FS_OK;
    for (int i = 0; i < s->ngroups && st == FS_OK; i++)
        st = write_group(s, out->h5, i, r, &shared, out);
    fs_input_attrs_free(&shared);
    return st;
}

fs_status fs_spectrum_finish(void *state, MPI_Comm comm, const fs_stage_run *r,
                             const fs_stage_out *out)
{
    fs_spectrum *s = state;
    fs_status st = fs_error_agree(comm, reduce(s, comm));
    fs_timer_start(out->timers, FS_PHASE_WRITE);
    if (st == FS_OK)
        st = fs_error_agree(comm, write(s, r, out));
    fs_timer_stop(out->timers, FS_PHASE_WRITE);
    return st;
}

/* ---------------------------------------------------------------- report */

/* A column of the report: over the bins, or with --spectrum-per an array
 * over the slices of arrays over the bins. */
static void json_column(fs_json *j, const char *key, const fs_spectrum *s, const double *acc,
                        int q, double factor, double shot, int per_slice)
{
    int64_t nsl = per_slice ? s->nslices : 1;
    fs_json_open(j, key, '[');
    for (int64_t sl = 0; sl < nsl; sl++) {
        if (per_slice && s->nper)
            fs_json_open(j, NULL, '[');
        for (int i = 0; i < s->bins.nbins; i++) {
            const double *cell = acc + ((size_t)sl * (size_t)s->bins.nbins + (size_t)i) * (size_t)s->nq;
            if (cell[Q_MODES] > 0)
                fs_json_num(j, NULL, cell[q] / cell[Q_MODES] * factor - shot);
            else
                fs_json_null(j, NULL);
        }
        if (per_slice && s->nper)
            fs_json_close(j, ']');
    }
    fs_json_close(j, ']');
}

static void json_group(fs_json *j, const fs_spectrum *s, int g)
{
    int cross = s->group_cross[g];
    const double *acc = sums_of(s, g, 0);
    const char *name = strrchr(s->group[g], '/'); /* "power_spectrum_solenoidal" */
    fs_json_open(j, name ? name + 1 : s->group[g], '{');
    fs_json_str(j, "group", s->group[g]);
    fs_json_str(j, "bins", rule_name(s));
    fs_json_num(j, "k_fundamental", s->kf);
    fs_json_num(j, "power_factor", s->factor);
    int64_t *m = malloc(sizeof *m * (size_t)s->bins.nbins);
    if (m) {
        modes(s, acc, s->bins.nbins, m);
        fs_json_ints(j, "modes", s->bins.nbins, m);
        free(m);
    }
    json_column(j, "k", s, acc, Q_K, 1.0, 0.0, 0);
    if (s->nshot && !cross)
        fs_json_num(j, "shot_noise", s->shot_power);
    if (s->nshot && cross) {
        fs_json_num(j, "shot_noise_a", s->shot[0]);
        fs_json_num(j, "shot_noise_b", s->shot[1]);
    }
    json_column(j, "power", s, acc, cross ? Q_CROSS : Q_POWER, s->factor,
                shot_of(s, cross, Q_POWER), 1);
    if (cross) {
        json_column(j, "power_a", s, acc, Q_POWER_A, s->factor, shot_of(s, cross, Q_POWER_A), 1);
        json_column(j, "power_b", s, acc, Q_POWER_B, s->factor, shot_of(s, cross, Q_POWER_B), 1);
    }
    for (int i = 0; i < s->npoles; i++) {
        char key[32];
        double f;
        int q = pole_column(s, i, cross, &f);
        snprintf(key, sizeof key, "power_%d", s->ell[i]);
        json_column(j, key, s, acc, q, f, s->ell[i] == 0 ? shot_of(s, cross, Q_POWER) : 0.0, 1);
    }
    fs_json_close(j, '}');
}

void fs_spectrum_json(fs_json *j, const void *state)
{
    const fs_spectrum *s = state;
    fs_json_num(j, "seconds", s->seconds);
    for (int i = 0; i < s->ngroups; i++)
        json_group(j, s, i);
}

void fs_spectrum_summary(const void *state, const char *output, char *buf, size_t size)
{
    const fs_spectrum *s = state;
    char slices[48] = "";
    if (s->nper)
        snprintf(slices, sizeof slices, " x %lld slices", (long long)s->nslices);
    snprintf(buf, size, "  spectrum: %d bins%s (%s, k_f %.6g) in %s:%s%s%s, %.4f s\n",
             s->bins.nbins, slices, rule_name(s), s->kf, output, s->group[0],
             s->ngroups > 1 ? " and " : "", s->ngroups > 1 ? s->group[1] : "", s->seconds);
}

/* ------------------------------------------------- what the run says */

void fs_spectrum_take_scheme(fs_spectrum *s, const fs_spectrum_options *o,
                             const fs_particles_options *pt)
{
    /* painted particles: their window compensated (by C(k) without
     * interlacing, as nbodykit's to_mesh does) and their shot noise
     * subtracted unless said otherwise (--compensate, --shot-noise) */
    int comp = o->compensate ? o->compensate
               : pt->window ? pt->window + (pt->interlace ? 0 : FS_WINDOW_ALIASED) : 0;
    comp = comp > 0 ? comp : 0; /* -1: none */
    s->window = comp % FS_WINDOW_ALIASED;
    s->aliased = comp >= FS_WINDOW_ALIASED;
    s->nshot = o->nshot;
    memcpy(s->shot, o->shot_noise, sizeof s->shot);
    for (int i = 0; i < s->nshot; i++)
        s->shot_power += s->shot[i];
    s->shot_painted = pt->window && !o->nshot;
    s->paint_window = pt->window;
    s->interlaced = pt->interlace;
}

void fs_spectrum_painted(fs_spectrum *s, const fs_stage_turn *turn)
{
    int i = turn->i;
    if (turn->source)
        s->particles = (i == 0 ? 0 : s->particles) + turn->source->particles;
    if (s->shot_painted && turn->source && i < FS_MAX_SHOT) { /* each INPUT's own noise */
        s->shot[i] = turn->source->shot_noise;
        s->nshot = i + 1;
        s->shot_power = 0;
        for (int j = 0; j < s->nshot; j++)
            s->shot_power += s->shot[j];
    }
}
