/* SPDX-License-Identifier: GPL-3.0-or-later */
/* spectrum: see spectrum.h. Every rank walks its own last-stage box once
 * per input: the squared wave numbers of each axis are tabulated for the
 * box's range, a row's sum is carried along the outer axes, and each
 * element adds its weight, |k| and |X|^2 to its bin. The sums are doubles
 * (mode counts stay exact below 2^53) reduced once over all ranks. */
#include "config.h"

#include "stages/spectrum.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/collective.h"
#include "core/dtype.h"

#define DEFAULT_MU_BINS 5
#define MAX_SHELLS (1 << 22)
#define MAX_LUT (1 << 22)      /* norms up to this are binned by a table, beyond by a search */
#define EDGE_SNAP 1e-9         /* an edge this close (relative) to a lattice norm is that norm */
#define MAX_SUMS_BYTES (1024.0 * 1024 * 1024) /* the sums per bin of every slice, per rank */

/* The integer lattice of the grid: m = (|k| / k_f)^2 = sum_a (f_a L_max /
 * L_a)^2 is an integer when every L_max / L_a is (always without
 * --box-size); its largest value mmax. */
static void take_lattice(fs_spectrum *s)
{
    const fs_kgrid *g = &s->g;
    double Lmax = 0;
    for (int a = 0; a < g->ndim; a++)
        if (g->transformed[a] && g->L[a] > Lmax)
            Lmax = g->L[a];
    s->lattice = 1;
    s->mmax = 0;
    for (int a = 0; a < g->ndim; a++)
        if (g->transformed[a]) {
            double r = Lmax / g->L[a];
            s->ratio[a] = llround(r);
            s->lattice &= fabs(r - (double)s->ratio[a]) <= 1e-12 * r && r < 1e6;
            int64_t f = g->n[a] / 2 * s->ratio[a];
            s->mmax += f * f;
        }
}

static fs_status take_box(fs_spectrum *s, const fs_box_lengths *box, const fs_transform *t)
{
    fs_kgrid *g = &s->g;
    fs_status st = fs_kgrid_init(g, t, box);
    if (st != FS_OK)
        return st;
    /* V / N^2 of the points read and the box they span (zero padding adds
     * neither), over the windows' power mean(w^2) (the periodogram's
     * "density" of scipy.signal) */
    double V = 1, N = 1, M = 1;
    for (int a = 0; a < g->ndim; a++)
        if (g->transformed[a]) {
            V *= g->L[a];
            N *= (double)g->n[a];
            M *= (double)g->m[a];
        }
    s->kf = fs_kgrid_kf(g);
    s->factor = (g->box_given ? V / (N * M) : 1.0) / fs_domain_window_power(t);
    s->kmax = fs_kgrid_kmax(g);
    take_lattice(s);
    return FS_OK;
}

/* The lattice's threshold of an edge E: the least m = (|k| / k_f)^2 at or
 * above it. (E / k_f)^2 within EDGE_SNAP of an integer M is M itself. */
static int64_t edge_norm(const fs_spectrum *s, double e)
{
    double t = (e / s->kf) * (e / s->kf);
    if (!(t <= (double)s->mmax))
        return s->mmax + 1;
    double M = nearbyint(t);
    return (int64_t)(fabs(t - M) <= EDGE_SNAP * (t > 1 ? t : 1) ? M : ceil(t));
}

/* --bins=N's threshold of bin i: the least m with i^2 mmax / N^2 <= m,
 * ceil(i^2 mmax / N^2) in integers. i^2 mmax passes 64 bits on a long
 * axis (a 1-D series of 2^24 points has mmax = 2^46), so mmax = q N^2 + r
 * is split: i^2 q + ceil(i^2 r / N^2), each term well inside. */
static int64_t linear_norm(int64_t i, int64_t nb, int64_t mmax)
{
    int64_t NN = nb * nb, q = mmax / NN, r = mmax % NN;
    return i * i * q + (i * i * r + NN - 1) / NN;
}

/* The lattice's thresholds of the bins and, when the norms are few, the
 * table of each norm's bin. Shells: (i - 1/2)^2 <= m < (i + 1/2)^2, i.e.
 * from i^2 - i + 1. --bins=N: i^2 mmax / N^2 <= m, in integers; the last
 * bin holds mmax. Edges: edge_norm, half-open. */
static fs_status take_thresholds(fs_spectrum *s)
{
    int nb = s->bins.nbins;
    s->thr = malloc(sizeof *s->thr * (size_t)(nb + 1));
    if (!s->thr)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    for (int64_t i = 0; i <= nb; i++)
        s->thr[i] = s->bins.rule == FS_BINS_SHELLS  ? (i == 0 ? 0 : i * i - i + 1)
                    : s->bins.rule == FS_BINS_LINEAR ? linear_norm(i, nb, s->mmax)
                                             : edge_norm(s, s->bins.edges[i]);
    if (s->bins.rule == FS_BINS_LINEAR)
        s->thr[nb] = s->mmax + 1;
    if (s->mmax >= MAX_LUT)
        return FS_OK;
    s->lut = malloc(sizeof *s->lut * (size_t)(s->mmax + 1));
    if (!s->lut)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    for (int64_t m = 0, b = -1; m <= s->mmax; m++) {
        while (b < nb && s->thr[b + 1] <= m)
            b++;
        s->lut[m] = b < nb ? (int)b : -1;
    }
    return FS_OK;
}

static fs_status take_bins(fs_spectrum *s, const fs_spectrum_options *o, const char *what)
{
    /* A long axis (a long 1-D series), or box lengths far apart, make the
     * shells of k_f too many: the bins are what the user can change. */
    if (!o->bins.nedges && !o->bins.n && s->kmax / s->kf > MAX_SHELLS)
        return fs_error_set(FS_ERR_USAGE, "%s: %.0f shells of k_f = 2 pi / %g up to |k| = %g "
                            "(more than %d); give --bins=N or --bins=KMIN:KMAX:DK (at most %d "
                            "bins)", what, s->kmax / s->kf,
                            2 * M_PI / s->kf, s->kmax, MAX_SHELLS, FS_MAX_EDGES - 1);
    fs_status st = fs_bins_make(&s->bins, &o->bins, s->kmax, s->kf);
    return st == FS_OK && s->lattice ? take_thresholds(s) : st;
}

/* --spectrum-per: batch axes, each index of which is a spectrum of its
 * own; the slice of an element is its index over them in row-major order. */
static fs_status take_slices(fs_spectrum *s, const fs_spectrum_options *o)
{
    s->nslices = 1;
    int mark[FS_LAYOUT_MAX_DIMS] = {0};
    for (int i = 0; i < o->nper; i++) {
        int a = o->per[i] < 0 ? o->per[i] + s->g.ndim : o->per[i];
        if (a < 0 || a >= s->g.ndim || s->g.transformed[a] || mark[a])
            return fs_error_set(FS_ERR_USAGE, "--spectrum-per=%d: not %s batch axis of the %d-D "
                                "input (see --axes)", o->per[i],
                                a >= 0 && a < s->g.ndim && mark[a] ? "another" : "a", s->g.ndim);
        mark[a] = 1;
    }
    for (int a = s->g.ndim - 1; a >= 0; a--)
        if (mark[a]) {
            s->stride[a] = s->nslices;
            s->nslices *= s->g.n[a];
        }
    for (int a = 0; a < s->g.ndim; a++)
        if (mark[a])
            s->per[s->nper++] = a;
    return FS_OK;
}

/* The bin of |k| (-1: outside every bin). */
static int bin_of(const fs_spectrum *s, double k)
{
    return fs_bins_of(&s->bins, k);
}

/* One input's part in the sums. */
typedef struct contribution {
    int role;            /* 0: a power spectrum input; 1, 2: --cross's first, second */
    int count_modes;     /* the first input counts the modes and their |k| */
    double gain;         /* |X|^2 times gain (a field stage's result: its scale^2) */
    double *acc, *acc_mu; /* the family's sums */
} contribution;

/* A row of elements contiguous in memory: k^2 = q + ql[j], the line of
 * sight's component klos or kl[j] (kl NULL), the weight w * wl[j]. */
typedef struct row {
    int64_t n, offset;   /* elements, the first one's index in data */
    double q, klos, w;
    const double *ql, *kl, *wl;
    int64_t m;           /* the lattice norm m = mq + ml[j] */
    const int64_t *ml;
    int64_t slice;       /* the slice: slice + sl[j] (sl NULL: slice) */
    const int64_t *sl;
    double c;            /* --compensate: |X|^2 times c * cl[j] */
    const double *cl;
} row;

/* Per-row work arrays, so that each step is a loop the compiler can
 * vectorise: |k|, weight, |X|^2, Re(X conj Y), |mu|, bin. */
typedef struct scratch {
    double *k, *w, *p, *x, *mu;
    int64_t *m;
    int *b;
} scratch;

static void scratch_free(scratch *sc)
{
    free(sc->k);
    free(sc->b);
    free(sc->m);
    sc->k = NULL;
    sc->b = NULL;
    sc->m = NULL;
}

static fs_status scratch_new(scratch *sc, int64_t n)
{
    size_t m = (size_t)(n > 0 ? n : 1);
    sc->k = malloc(sizeof(double) * m * 5);
    sc->b = malloc(sizeof(int) * m);
    sc->m = malloc(sizeof(int64_t) * m);
    if (!sc->k || !sc->b || !sc->m) {
        scratch_free(sc);
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    sc->w = sc->k + m;
    sc->p = sc->k + 2 * m;
    sc->x = sc->k + 3 * m;
    sc->mu = sc->k + 4 * m;
    return FS_OK;
}

/* |X|^2 and, with other, Re(X conj Y) of n elements from i0. */
static void powers(const void *data, const void *other, fs_precision p, int64_t i0, int64_t n,
                   double *pw, double *x)
{
    if (p == FS_SINGLE) {
        const float *d = (const float *)data + 2 * i0;
        const float *o = other ? (const float *)other + 2 * i0 : NULL;
        for (int64_t j = 0; j < n; j++)
            pw[j] = (double)d[2 * j] * d[2 * j] + (double)d[2 * j + 1] * d[2 * j + 1];
        for (int64_t j = 0; other && j < n; j++)
            x[j] = (double)d[2 * j] * o[2 * j] + (double)d[2 * j + 1] * o[2 * j + 1];
    } else {
        const double *d = (const double *)data + 2 * i0;
        const double *o = other ? (const double *)other + 2 * i0 : NULL;
        for (int64_t j = 0; j < n; j++)
            pw[j] = d[2 * j] * d[2 * j] + d[2 * j + 1] * d[2 * j + 1];
        for (int64_t j = 0; other && j < n; j++)
            x[j] = d[2 * j] * o[2 * j] + d[2 * j + 1] * o[2 * j + 1];
    }
}

/* The bin of a lattice norm m (-1: outside every bin): the last i with
 * thr[i] <= m, below thr[nbins]. */
static int bin_of_norm(const fs_spectrum *s, int64_t m)
{
    if (s->lut)
        return s->lut[m];
    if (m < s->thr[0] || m >= s->thr[s->bins.nbins])
        return -1;
    int lo = 0, hi = s->bins.nbins; /* thr[lo] <= m < thr[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (s->thr[mid] <= m)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The bins of n values of |k|, or of their norms m on a lattice (-1:
 * outside every bin). */
static void bins_of(const fs_spectrum *s, const double *k, const int64_t *m, int64_t n, int *b)
{
    if (s->lattice) {
        for (int64_t j = 0; j < n; j++)
            b[j] = bin_of_norm(s, m[j]);
        return;
    }
    if (s->bins.rule == FS_BINS_SHELLS) {
        /* k / k_f, not k * (1 / k_f): the documented arithmetic, to the bit */
        for (int64_t j = 0; j < n; j++)
            b[j] = (int)floor(k[j] / s->kf + 0.5);
        return;
    }
    for (int64_t j = 0; j < n; j++)
        b[j] = bin_of(s, k[j]);
}

/* The multipoles' sums of a cell: w p L_l(mu), and w x L_l(mu) for the
 * second input of --cross. */
static void add_poles(const fs_spectrum *s, double *cell, double w, double mu, double p, double x,
                      const contribution *c)
{
    double L[FS_MAX_POLES];
    fs_legendre(s->npoles, s->ell, mu, L);
    for (int i = 0; i < s->npoles; i++)
        cell[NQ + i] += w * p * L[i];
    for (int i = 0; c->role == 2 && i < s->npoles; i++)
        cell[NQ + s->npoles + i] += w * x * L[i];
}

static void add_to(double *cell, double w, double k, double mu, double p, double x,
                   const contribution *c)
{
    if (c->count_modes) {
        cell[Q_MODES] += w;
        cell[Q_K] += w * k;
        cell[Q_MU] += w * mu;
    }
    cell[Q_POWER] += w * p;
    if (c->role == 1)
        cell[Q_POWER_A] += w * p;
    if (c->role == 2) {
        cell[Q_POWER_B] += w * p;
        cell[Q_CROSS] += w * x;
    }
}

static void bin_row(fs_spectrum *s, const contribution *c, const row *r, const void *data,
                    const void *other, fs_precision p, scratch *sc)
{
    int64_t n = r->n;
    for (int64_t j = 0; j < n; j++)
        sc->k[j] = sqrt(r->q + r->ql[j]);
    for (int64_t j = 0; j < n; j++)
        sc->w[j] = r->w * r->wl[j];
    if (s->lattice)
        for (int64_t j = 0; j < n; j++)
            sc->m[j] = r->m + r->ml[j];
    bins_of(s, sc->k, sc->m, n, sc->b);
    powers(data, other, p, r->offset, n, sc->p, sc->x);
    if (c->gain != 1.0)
        for (int64_t j = 0; j < n; j++)
            sc->p[j] *= c->gain;
    if (r->cl)
        for (int64_t j = 0; j < n; j++) {
            sc->p[j] *= r->c * r->cl[j];
            sc->x[j] *= other ? r->c * r->cl[j] : 0.0;
        }
    if (s->acc_mu)
        for (int64_t j = 0; j < n; j++) {
            double kl = r->kl ? r->kl[j] : r->klos;
            sc->mu[j] = sc->k[j] > 0 ? fabs(kl) / sc->k[j] : 0.0;
        }
    for (int64_t j = 0; j < n; j++) {
        int b = sc->b[j];
        if (b < 0)
            continue;
        double mu = s->acc_mu ? sc->mu[j] : 0.0, x = other ? sc->x[j] : 0.0;
        size_t sb = (size_t)(r->slice + (r->sl ? r->sl[j] : 0)) * (size_t)s->bins.nbins + (size_t)b;
        double *cell = c->acc + sb * (size_t)s->nq;
        add_to(cell, sc->w[j], sc->k[j], mu, sc->p[j], x, c);
        if (s->npoles)
            add_poles(s, cell, sc->w[j], mu, sc->p[j], x, c);
        if (s->acc_mu) {
            int m = (int)floor(mu * s->nmu);
            m = m < s->nmu ? m : s->nmu - 1;
            add_to(c->acc_mu + (sb * (size_t)s->nmu + (size_t)m) * (size_t)s->nq, sc->w[j],
                   sc->k[j], mu, sc->p[j], x, c);
        }
    }
}

/* --compensate: 1 / W^2 of one axis at frequency f of n, W = sinc(pi f /
 * n)^p, sinc(x) = sin(x) / x; SCHEME-shotnoise: 1 / C, C = sum over the
 * aliases m of sinc(x + pi m)^2p, a polynomial in t = sin^2 x (Jing 2005,
 * eq. 20; nbodykit's Compensate*Shotnoise): the shot noise of a mesh
 * painted without interlacing is P0 C(k), so the compensated one is flat. */
static double compensation(const fs_spectrum *s, int64_t f, int64_t n)
{
    if (!s->window || f == 0)
        return 1.0;
    double x = M_PI * (double)f / (double)n, w = sin(x) / x, t = sin(x) * sin(x);
    if (!s->aliased)
        return 1.0 / pow(w, 2 * s->window);
    switch (s->window) {
    case 2:
        return 1.0 / (1 - 2.0 / 3 * t);
    case 3:
        return 1.0 / (1 - t + 2.0 / 15 * t * t);
    case 4:
        return 1.0 / (1 - 4.0 / 3 * t + 2.0 / 5 * t * t - 4.0 / 315 * t * t * t);
    default:
        return 1.0; /* ngp: sum of sinc^2 over the aliases is 1 */
    }
}

/* The tables of one axis over [start, start + count): k_a^2 (0 for a batch
 * axis), k_a, and the weight of the half spectrum's modes. */
typedef struct axis_table {
    double *q, *k, *w, *c; /* c: 1 / W_a^2, the window's compensation */
    int64_t *m;          /* (f_a L_max / L_a)^2 */
    int64_t *sl;         /* the index's part in the slice */
} axis_table;

static fs_status tables_new(const fs_spectrum *s, const fs_transform *t, const fs_box *b,
                            axis_table *tab)
{
    for (int a = 0; a < b->ndim; a++) {
        int64_t m = b->count[a] > 0 ? b->count[a] : 1;
        tab[a].q = malloc(sizeof(double) * (size_t)m * 4);
        tab[a].m = malloc(sizeof(int64_t) * (size_t)m * 2);
        if (!tab[a].q || !tab[a].m)
            return fs_error_set(FS_ERR_RUNTIME, "out of memory");
        tab[a].k = tab[a].q + m;
        tab[a].w = tab[a].q + 2 * m;
        tab[a].c = tab[a].q + 3 * m;
        tab[a].sl = tab[a].m + m;
        int halved = t->kind == FS_R2C && t->padded && a == t->real_axis;
        for (int64_t i = 0; i < b->count[a]; i++) {
            int64_t j = b->start[a] + i;
            int64_t f = s->g.transformed[a] ? fs_kgrid_freq(j, s->g.n[a]) * s->ratio[a] : 0;
            double k = fs_kgrid_k(&s->g, a, j);
            tab[a].m[i] = f * f;
            tab[a].sl[i] = j * s->stride[a];
            tab[a].c[i] = s->g.transformed[a] ? compensation(s, fs_kgrid_freq(j, s->g.n[a]), s->g.n[a]) : 1.0;
            tab[a].k[i] = k;
            tab[a].q[i] = k * k;
            tab[a].w[i] = halved && j != 0 && 2 * j != s->g.n[a] ? 2.0 : 1.0;
        }
    }
    return FS_OK;
}

static void tables_free(axis_table *tab, int ndim)
{
    for (int a = 0; a < ndim; a++) {
        free(tab[a].q);
        free(tab[a].m);
    }
}

/* The box row by row: the outer axes' sums carried in an odometer. The
 * sum runs over the axes in order, as the definition's does. */
static void bin_box(fs_spectrum *s, const contribution *c, const fs_box *b, const axis_table *tab,
                    const void *data, const void *other, fs_precision p, scratch *sc)
{
    int nd = b->ndim, last = nd - 1;
    if (fs_box_elems(b) == 0)
        return;
    int64_t idx[FS_LAYOUT_MAX_DIMS] = {0};
    int64_t rows = fs_box_elems(b) / b->count[last];
    for (int64_t r = 0; r < rows; r++) {
        row rw = {b->count[last], r * b->count[last], 0, 0, 1, tab[last].q,
                  last == s->los ? tab[last].k : NULL, tab[last].w, 0, tab[last].m, 0,
                  s->stride[last] ? tab[last].sl : NULL, 1, s->window ? tab[last].c : NULL};
        for (int a = 0; a < last; a++) {
            rw.c *= tab[a].c[idx[a]];
            rw.q += tab[a].q[idx[a]];
            rw.m += tab[a].m[idx[a]];
            rw.slice += tab[a].sl[idx[a]];
            rw.w *= tab[a].w[idx[a]];
            if (a == s->los)
                rw.klos = tab[a].k[idx[a]];
        }
        bin_row(s, c, &rw, data, other, p, sc);
        for (int a = last - 1; a >= 0 && ++idx[a] == b->count[a]; a--)
            idx[a] = 0;
    }
}

/* The 1-D four-step result: a rank holds k1 = 0 .. n1-1 by its k2 range,
 * output index k1 * n2 + k2 (transform.h); a row is one k1. */
static fs_status bin_fold(fs_spectrum *s, const contribution *c, const fs_transform *t,
                          const fs_box *b, const void *data, const void *other, scratch *sc)
{
    int64_t cnt = fs_box_elems(b) ? b->count[0] : 0;
    double *tab = malloc(sizeof(double) * (size_t)(cnt > 0 ? cnt : 1) * 4);
    int64_t *mt = malloc(sizeof(int64_t) * (size_t)(cnt > 0 ? cnt : 1));
    if (!tab || !mt) {
        free(tab);
        free(mt);
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    double *q = tab, *k = tab + cnt, *w = tab + 2 * cnt, *cw = tab + 3 * cnt;
    for (int64_t k1 = 0; k1 < (cnt ? t->n1 : 0); k1++) {
        for (int64_t i2 = 0; i2 < cnt; i2++) {
            int64_t j = fs_kgrid_fold_index(t, b, k1, i2), f = fs_kgrid_freq(j, s->g.n[0]);
            k[i2] = fs_kgrid_k(&s->g, 0, j);
            q[i2] = k[i2] * k[i2];
            w[i2] = 1.0;
            mt[i2] = f * f;
            cw[i2] = compensation(s, f, s->g.n[0]);
        }
        row rw = {cnt, k1 * cnt, 0, 0, 1, q, k, w, 0, mt, 0, NULL, 1, s->window ? cw : NULL};
        bin_row(s, c, &rw, data, other, t->prec, sc);
    }
    free(tab);
    free(mt);
    return FS_OK;
}

/* ------------------------------------------------------------ the stage */

size_t fs_spectrum_cells(const fs_spectrum *s)
{
    return (size_t)s->nslices * (size_t)s->bins.nbins * (size_t)s->nq;
}

/* The groups: the power spectrum's, one per family of the field stage's
 * results ("power_spectrum_solenoidal"), then the cross spectrum's. */
static void take_groups(fs_spectrum *s, const fs_stage_facts *f, const fs_stage_run *r)
{
    s->of_results = f->field != NULL;
    s->nfam = s->of_results && r->nfamilies > 0 ? r->nfamilies : 1;
    for (int g = 0; g < s->nfam; g++) {
        char name[64] = "power_spectrum";
        s->family[g] = s->of_results ? r->families[g] : NULL;
        if (s->family[g])
            snprintf(name, sizeof name, "power_spectrum_%s", s->family[g]);
        s->group_family[s->ngroups] = g;
        if (s->power)
            fs_stage_group_path(f, name, s->group[s->ngroups++], sizeof s->group[0]);
    }
    if (s->cross) {
        s->group_cross[s->ngroups] = 1;
        fs_stage_group_path(f, "cross_spectrum", s->group[s->ngroups++], sizeof s->group[0]);
    }
}

/* Everything but the sums themselves, from the options and t, the
 * transform of the first INPUT (the run's create and the footprint). */
static fs_status take_plan(fs_spectrum *s, const fs_spectrum_options *o, const fs_stage_run *r,
                           const fs_transform *t)
{
    const fs_stage_facts *f = r->facts;
    s->power = o->power;
    s->cross = f->shared->cross;
    s->los = -1;
    take_groups(s, f, r);
    fs_status st = take_box(s, &f->shared->box, t);
    if (st != FS_OK)
        return st;
    const fs_los_options *los = &f->shared->los;
    if ((st = fs_los_axis(los, t, &s->los)) != FS_OK)
        return st;
    s->nmu = s->los >= 0 ? (o->mu_bins ? o->mu_bins : DEFAULT_MU_BINS) : 0;
    s->npoles = los->npoles;
    memcpy(s->ell, los->poles, sizeof s->ell);
    fs_spectrum_take_scheme(s, o, &f->shared->particles); /* --compensate, --shot-noise */
    s->nq = NQ + 2 * s->npoles;
    st = take_slices(s, o);
    if (st == FS_OK)
        st = take_bins(s, o, s->power ? "--power-spectrum" : "--cross");
    if (st != FS_OK)
        return st;
    /* Every rank holds every slice's sums (one reduction): they must fit. */
    double bytes = (double)s->nslices * s->bins.nbins * s->nq * (1.0 + (s->los >= 0 ? s->nmu : 0)) * 8;
    if (bytes > MAX_SUMS_BYTES)
        return fs_error_set(FS_ERR_USAGE, "--spectrum-per: %lld spectra of %d bins need %.1f GiB "
                            "of sums on every rank (at most %.0f GiB); name fewer axes, or give "
                            "fewer bins", (long long)s->nslices, s->bins.nbins, bytes / (1 << 30),
                            MAX_SUMS_BYTES / (1 << 30));
    return FS_OK;
}

static fs_status create(const void *opts, const fs_stage_run *r, void **state)
{
    const fs_stage_facts *f = r->facts;
    fs_status st = f->shared->cross ? fs_stage_check_alike("--cross", r->ts, r->n, 1, 0,
                                                   "give --precision= when one is single "
                                                   "precision")
                            : fs_stage_check_alike("--power-spectrum", r->ts, r->n, 0, 0, "");
    if (st != FS_OK)
        return st;
    fs_spectrum *s = calloc(1, sizeof *s);
    if (!s)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    *state = s;
    if ((st = take_plan(s, opts, r, r->ts[0])) != FS_OK)
        return st;
    size_t cells = fs_spectrum_cells(s) * (size_t)s->nfam;
    s->acc = calloc(cells, sizeof *s->acc);
    if (s->los >= 0)
        s->acc_mu = calloc(cells * (size_t)s->nmu, sizeof *s->acc_mu);
    if (!s->acc || (s->los >= 0 && !s->acc_mu))
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    return FS_OK;
}

static void destroy(void *state)
{
    fs_spectrum *s = state;
    if (!s)
        return;
    fs_bins_free(&s->bins);
    free(s->thr);
    free(s->lut);
    free(s->acc);
    free(s->acc_mu);
    free(s);
}

/* What every rank holds for the stage (the footprint hook, stage.h): the
 * sums per cell (every slice's, every family's, per mu bin too), the
 * bins' edges, the lattice's thresholds and table of norms, the binning's
 * tables of the rank's box (small: counted with the end), and at the end the
 * larger of MPI's copy of the sums in the reduction (more than one rank)
 * and the tables written. The field stage's families are not known here:
 * one. Options the run will refuse: nothing. */
static fs_stage_bytes footprint(const void *opts, const fs_stage_facts *f, const fs_transform *t)
{
    fs_spectrum *s = calloc(1, sizeof *s);
    fs_stage_run r = {.facts = f};
    if (!s || take_plan(s, opts, &r, t) != FS_OK) {
        destroy(s);
        fs_error_clear();
        return (fs_stage_bytes){0, 0, 0};
    }
    int64_t nb = s->bins.nbins, mu = s->los >= 0 ? s->nmu : 0;
    int64_t sums = (int64_t)fs_spectrum_cells(s) * s->nfam, bytes = sums * (1 + mu) * 8;
    int64_t sums_bytes = bytes;
    bytes += (nb + 1) * 8 * (s->lattice ? 2 : 1) + (s->lut ? (s->mmax + 1) * (int64_t)sizeof *s->lut : 0);
    fs_box b = fs_transform_box(t, t->nstages - 1, 0, 0);
    /* a row's scratch (scratch_new): the parts binning touches, k, w, the
     * powers and the bins; the lattice's squares, the cross powers and mu
     * where they are used (malloc's pages untouched are not resident) */
    int64_t row_bytes = 28 + 8 * ((s->lattice != 0) + (s->cross != 0) + (mu > 0));
    int64_t tables = row_bytes * (t->fold ? b.count[0] : b.count[b.ndim - 1]);
    for (int a = 0; a < b.ndim; a++)
        tables += (t->fold ? 40 : 48) * b.count[a];
    int64_t reduce = fs_allreduce_sum_bytes(mu ? sums * mu : sums, t->grid[0] * t->grid[1]);
    int64_t write = nb * (mu ? mu : 1) * (s->nslices + 1) * 8;
    destroy(s);
    return (fs_stage_bytes){bytes,
                            tables > reduce && tables > write ? tables
                            : reduce > write                  ? reduce
                                                              : write,
                            sums_bytes};
}

/* data (and other, --cross's first) binned by c: box b of the result
 * (in memory the rank's last-stage box; out of core a block). */
static fs_status bin(fs_spectrum *s, const contribution *cp, const fs_stage_turn *turn,
                     const fs_box *b, const void *data, const void *other)
{
    const fs_transform *t = turn->t;
    double t0 = MPI_Wtime();
    scratch sc;
    int64_t rowlen = fs_box_elems(b) ? b->count[t->fold ? 0 : b->ndim - 1] : 1;
    fs_status st = scratch_new(&sc, rowlen);
    if (st == FS_OK && t->fold) {
        st = bin_fold(s, cp, t, b, data, other, &sc);
    } else if (st == FS_OK) {
        axis_table tab[FS_LAYOUT_MAX_DIMS];
        memset(tab, 0, sizeof tab);
        st = tables_new(s, t, b, tab);
        if (st == FS_OK)
            bin_box(s, cp, b, tab, data, other, t->prec, &sc);
        tables_free(tab, b->ndim);
    }
    scratch_free(&sc);
    s->seconds += MPI_Wtime() - t0;
    return st;
}

/* Box b of input i's result binned (forward: the rank's last-stage box;
 * out of core a block); with --cross the second's beside the first's
 * (turn->kept, the same box of it). */
static fs_status forward_block(void *state, const fs_stage_turn *turn, const fs_box *b,
                               const void *data)
{
    fs_spectrum *s = state;
    int i = turn->i;
    fs_spectrum_painted(s, turn);
    if (s->of_results) /* binned as the field stage makes its results */
        return FS_OK;
    contribution c = {s->cross ? i + 1 : 0, i == 0, 1.0, s->acc, s->acc_mu};
    return bin(s, &c, turn, b, data, c.role == 2 ? turn->kept : NULL);
}

static fs_status forward(void *state, const fs_stage_turn *turn)
{
    return forward_block(state, turn, fs_decomposition_last(turn->d), turn->data);
}

/* A result of the field stage (--apply's, --vector's), in Fourier space:
 * binned into its family's sums as its forward transform, fourier *
 * scale. */
static fs_status result(void *state, const fs_stage_turn *turn, int k, const fs_stage_record *rec,
                        const void *fourier, double scale)
{
    fs_spectrum *s = state;
    int f = 0;
    while (f < s->nfam - 1 && !(s->family[f] == rec->family ||
           (s->family[f] && rec->family && strcmp(s->family[f], rec->family) == 0)))
        f++;
    size_t off = fs_spectrum_cells(s) * (size_t)f;
    contribution c = {0, !s->counted[f], scale * scale, s->acc + off,
                      s->acc_mu ? s->acc_mu + off * (size_t)s->nmu : NULL};
    s->counted[f] = 1;
    (void)k;
    return bin(s, &c, turn, fs_decomposition_last(turn->d), fourier, NULL);
}

static const char *group(const void *state, int g)
{
    const fs_spectrum *s = state;
    return g >= 0 && g < s->ngroups ? s->group[g] : NULL;
}

const fs_stage_ops fs_stage_spectrum = {
    .name = "spectrum",
    .report_member = "spectra",
    .options = fs_spectrum_lines,
    .options_bytes = sizeof(fs_spectrum_options),
    .help_heading = "Spectra (binned on the ranks; written into OUTPUT as /power_spectrum):\n",
    .grid_options = "--power-spectrum, --cross, --spectrum-only",
    .los_options = "--power-spectrum, --cross, --spectrum-only",
    .active = fs_spectrum_active,
    .option = fs_spectrum_option,
    .check = fs_spectrum_check,
    .needs = fs_spectrum_needs,
    .footprint = footprint,
    .create = create,
    .forward = forward,
    .forward_block = forward_block,
    .result = result,
    .group = group,
    .finish = fs_spectrum_finish,
    .json = fs_spectrum_json,
    .summary = fs_spectrum_summary,
    .destroy = destroy,
};
