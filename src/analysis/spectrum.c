/* SPDX-License-Identifier: GPL-3.0-or-later */
/* spectrum: see spectrum.h. Every rank walks its own last-stage box once
 * per input: the squared wave numbers of each axis are tabulated for the
 * box's range, a row's sum is carried along the outer axes, and each
 * element adds its weight, |k| and |X|^2 to its bin. The sums are doubles
 * (mode counts stay exact below 2^53) reduced once over all ranks. */
#include "config.h"

#include "analysis/spectrum.h"
#include "core/collective.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/bins.h"
#include "analysis/kgrid.h"
#include "core/dtype.h"
#include "io/h5scales.h"

/* What each bin sums; then, with --multipoles, the sums of |X|^2 L_l(mu)
 * (from NQ) and of Re(X_a conj X_b) L_l(mu) (from NQ + npoles). */
enum { Q_MODES, Q_K, Q_POWER, Q_CROSS, Q_POWER_A, Q_POWER_B, Q_MU, NQ };


#define DEFAULT_MU_BINS 5
#define MAX_SHELLS (1 << 22)
#define MAX_LUT (1 << 22)      /* norms up to this are binned by a table, beyond by a search */
#define EDGE_SNAP 1e-9         /* an edge this close (relative) to a lattice norm is that norm */
#define MAX_SUMS_BYTES (1024.0 * 1024 * 1024) /* the sums per bin of every slice, per rank */
#define TABLE_PATH_MAX (FS_PATH_MAX + 64) /* a group's path and a table's name in it */

struct fs_spectrum {
    int power, cross;               /* which groups */
    fs_kgrid g;                     /* the wave vectors (kgrid.h) */
    double kf, kmax, factor;        /* fundamental, largest |k|, V / N^2 (1 without a box) */
    fs_bins bins;                   /* --bins (--r-bins): edges nbins + 1 */
    int lattice;                    /* every L_max / L_a an integer: bins decided on m */
    int64_t ratio[FS_LAYOUT_MAX_DIMS]; /* L_max / L_a of each transformed axis */
    int64_t mmax;                   /* the largest m = (|k| / k_f)^2 of the grid */
    int64_t *thr;                   /* lattice: bin i holds thr[i] <= m < thr[i + 1] */
    int *lut;                       /* lattice: the bin of each m up to mmax (NULL: search) */
    int los, nmu;                   /* los -1: none */
    int npoles, ell[FS_MAX_POLES];  /* --multipoles */
    int nq;                         /* sums per cell: NQ + 2 npoles */
    int nper, per[FS_LAYOUT_MAX_DIMS]; /* --spectrum-per: the batch axes, increasing */
    int64_t stride[FS_LAYOUT_MAX_DIMS]; /* each axis's step in the slice index (0: pooled) */
    int64_t nslices;                /* one spectrum per slice (1 without --spectrum-per) */
    int window;                     /* --compensate: the window's power p (0: none) */
    double shot;                    /* --shot-noise: subtracted from the power spectrum */
    int shot_given;
    double *acc, *acc_mu;           /* [slice][nbins][nq], [slice][nbins][nmu][nq] */
    void *keep;                     /* --cross: input 0's result on this rank */
    fs_correlation *xi;             /* --correlation-function (NULL: none) */
    size_t keep_bytes;
    double seconds;
    int ngroups;                    /* the spectra's groups, in fs_spectrum_group's order */
    char group[2][FS_PATH_MAX];
    int group_cross[2];             /* the group holds the cross spectrum */
    char xi_group[FS_PATH_MAX];     /* the correlation function's, after them */
};

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

static fs_status take_box(fs_spectrum *s, const fs_run_config *o, const fs_transform *t)
{
    fs_kgrid *g = &s->g;
    fs_status st = fs_kgrid_init(g, t, o->box, o->nbox);
    if (st != FS_OK)
        return st;
    double V = 1, N = 1;
    for (int a = 0; a < g->ndim; a++)
        if (g->transformed[a]) {
            V *= g->L[a];
            N *= (double)g->n[a];
        }
    s->kf = fs_kgrid_kf(g);
    s->factor = g->box_given ? V / (N * N) : 1.0;
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
    int64_t NN = (int64_t)nb * nb;
    for (int64_t i = 0; i <= nb; i++)
        s->thr[i] = s->bins.rule == FS_BINS_SHELLS  ? (i == 0 ? 0 : i * i - i + 1)
                    : s->bins.rule == FS_BINS_LINEAR ? (i * i * s->mmax + NN - 1) / NN
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

static fs_status take_bins(fs_spectrum *s, const fs_run_config *o)
{
    /* Box lengths far apart make a shell of the longest's k_f a sliver. */
    if (!o->nedges && !o->bins && s->kmax / s->kf > MAX_SHELLS)
        return fs_error_set(FS_ERR_USAGE, "--box-size: %.0f shells of k_f = 2 pi / %g (more "
                            "than %d); give --bins", s->kmax / s->kf, 2 * M_PI / s->kf,
                            MAX_SHELLS);
    fs_status st = fs_bins_make(&s->bins, o->nedges, o->edges, o->bins, s->kmax, s->kf);
    return st == FS_OK && s->lattice ? take_thresholds(s) : st;
}

/* --spectrum-per: batch axes, each index of which is a spectrum of its
 * own; the slice of an element is its index over them in row-major order. */
static fs_status take_slices(fs_spectrum *s, const fs_run_config *o)
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

/* The transforms' arrays must be alike: one grid of modes for all. */
static fs_status check_alike(const fs_transform *a, const fs_transform *b, int cross)
{
    int same = a->in_ndim == b->in_ndim &&
               memcmp(a->in_shape, b->in_shape, sizeof a->in_shape) == 0 &&
               memcmp(a->transform_axis, b->transform_axis, sizeof a->transform_axis) == 0 &&
               a->kind == b->kind;
    if (!same)
        return fs_error_set(FS_ERR_USAGE, "%s: the INPUTs must have one shape and the same "
                            "transformed axes", cross ? "--cross" : "--power-spectrum");
    /* --cross holds input 0's result beside input 1's: the same boxes. */
    if (cross && (a->prec != b->prec || a->ndim != b->ndim || a->padded != b->padded ||
                  memcmp(a->shape, b->shape, sizeof a->shape) != 0 ||
                  memcmp(a->split, b->split, sizeof a->split) != 0 || a->grid[0] != b->grid[0]))
        return fs_error_set(FS_ERR_USAGE, "--cross: the two INPUTs must be transformed alike "
                            "(give --precision= when one is single precision)");
    return FS_OK;
}

fs_status fs_spectrum_new(const fs_run_config *o, const fs_transform *const *ts, int n,
                          fs_spectrum **out)
{
    *out = NULL;
    if (!o->power_spectrum && !o->cross && !o->correlation)
        return FS_OK;
    const fs_transform *t = ts[0];
    for (int i = 1; i < n; i++)
        if (check_alike(t, ts[i], o->cross) != FS_OK)
            return fs_error_status();
    fs_spectrum *s = calloc(1, sizeof *s);
    if (!s)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    *out = s;
    s->power = o->power_spectrum;
    s->cross = o->cross;
    s->los = -1;
    int nspectra = !!s->power + !!s->cross;
    for (; s->ngroups < nspectra; s->ngroups++) {
        fs_spectrum_group(o, s->ngroups, s->group[s->ngroups], sizeof s->group[0]);
        s->group_cross[s->ngroups] = !s->power || s->ngroups == 1;
    }
    if (o->correlation)
        fs_spectrum_group(o, nspectra, s->xi_group, sizeof s->xi_group);
    fs_status st = take_box(s, o, t);
    if (st != FS_OK)
        return st;
    if (o->los_given) {
        int a = o->los < 0 ? o->los + t->in_ndim : o->los;
        if (a < 0 || a >= t->in_ndim || !t->transform_axis[a])
            return fs_error_set(FS_ERR_USAGE, "--los=%d: not a transformed axis of the %d-D input",
                                o->los, t->in_ndim);
        s->los = a;
        s->nmu = o->mu_bins ? o->mu_bins : DEFAULT_MU_BINS;
    }
    s->npoles = o->npoles;
    memcpy(s->ell, o->poles, sizeof s->ell);
    s->window = o->compensate;
    s->shot = o->shot_noise;
    s->shot_given = o->shot_given;
    s->nq = NQ + 2 * s->npoles;
    st = take_slices(s, o);
    if (st == FS_OK)
        st = take_bins(s, o);
    if (st == FS_OK && o->correlation)
        st = fs_correlation_new(o, t, &s->xi);
    if (st != FS_OK)
        return st;
    /* Every rank holds every slice's sums (one reduction): they must fit. */
    double bytes = (double)s->nslices * s->bins.nbins * s->nq * (1.0 + (s->los >= 0 ? s->nmu : 0)) * 8;
    if (bytes > MAX_SUMS_BYTES)
        return fs_error_set(FS_ERR_USAGE, "--spectrum-per: %lld spectra of %d bins need %.1f GiB "
                            "of sums on every rank (at most %.0f GiB); name fewer axes, or give "
                            "fewer bins", (long long)s->nslices, s->bins.nbins, bytes / (1 << 30),
                            MAX_SUMS_BYTES / (1 << 30));
    size_t cells = (size_t)s->nslices * (size_t)s->bins.nbins * (size_t)s->nq;
    s->acc = calloc(cells, sizeof *s->acc);
    if (s->los >= 0)
        s->acc_mu = calloc(cells * (size_t)s->nmu, sizeof *s->acc_mu);
    if (!s->acc || (s->los >= 0 && !s->acc_mu))
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    return FS_OK;
}

void fs_spectrum_free(fs_spectrum **s)
{
    if (!*s)
        return;
    fs_bins_free(&(*s)->bins);
    free((*s)->thr);
    free((*s)->lut);
    free((*s)->acc);
    free((*s)->acc_mu);
    free((*s)->keep);
    fs_correlation_free(&(*s)->xi);
    free(*s);
    *s = NULL;
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

/* The Legendre polynomials L_l(mu) of the multipoles, by the recurrence
 * (l + 1) L_l+1 = (2l + 1) mu L_l - l L_l-1. */
static void legendre(const fs_spectrum *s, double mu, double *out)
{
    double prev = 1.0, cur = mu;
    int l = 1;
    for (int i = 0; i < s->npoles; i++) {
        if (s->ell[i] == 0) {
            out[i] = 1.0;
            continue;
        }
        for (; l < s->ell[i]; l++) {
            double next = ((2 * l + 1) * mu * cur - l * prev) / (l + 1);
            prev = cur;
            cur = next;
        }
        out[i] = cur;
    }
}

/* The multipoles' sums of a cell: w p L_l(mu), and w x L_l(mu) for the
 * second input of --cross. */
static void add_poles(const fs_spectrum *s, double *cell, double w, double mu, double p, double x,
                      const contribution *c)
{
    double L[FS_MAX_POLES];
    legendre(s, mu, L);
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
        double *cell = s->acc + sb * (size_t)s->nq;
        add_to(cell, sc->w[j], sc->k[j], mu, sc->p[j], x, c);
        if (s->npoles)
            add_poles(s, cell, sc->w[j], mu, sc->p[j], x, c);
        if (s->acc_mu) {
            int m = (int)floor(mu * s->nmu);
            m = m < s->nmu ? m : s->nmu - 1;
            add_to(s->acc_mu + (sb * (size_t)s->nmu + (size_t)m) * (size_t)s->nq, sc->w[j],
                   sc->k[j], mu, sc->p[j], x, c);
        }
    }
}

/* --compensate: 1 / W^2 of one axis at frequency f of n, W = sinc(pi f /
 * n)^p, sinc(x) = sin(x) / x. */
static double compensation(const fs_spectrum *s, int64_t f, int64_t n)
{
    if (!s->window || f == 0)
        return 1.0;
    double x = M_PI * (double)f / (double)n, w = sin(x) / x;
    return 1.0 / pow(w, 2 * s->window);
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

fs_status fs_spectrum_add(fs_spectrum *s, int i, const fs_transform *t, const fs_box *last,
                          const void *data)
{
    double t0 = MPI_Wtime();
    contribution c = {s->cross ? i + 1 : 0, i == 0};
    size_t bytes = (size_t)fs_box_elems(last) * fs_complex_bytes(t->prec);
    if (s->cross && i == 0 && bytes) {
        if (!(s->keep = malloc(bytes)))
            return fs_error_set(FS_ERR_RUNTIME, "out of memory for --cross (%zu bytes)", bytes);
        memcpy(s->keep, data, bytes);
        s->keep_bytes = bytes;
    }
    const void *other = c.role == 2 ? s->keep : NULL;
    if (!s->power && !s->cross) /* the correlation function alone */
        return FS_OK;
    scratch sc;
    int64_t rowlen = fs_box_elems(last) ? last->count[t->fold ? 0 : last->ndim - 1] : 1;
    fs_status st = scratch_new(&sc, rowlen);
    if (st == FS_OK && t->fold) {
        st = bin_fold(s, &c, t, last, data, other, &sc);
    } else if (st == FS_OK) {
        axis_table tab[FS_LAYOUT_MAX_DIMS];
        memset(tab, 0, sizeof tab);
        st = tables_new(s, t, last, tab);
        if (st == FS_OK)
            bin_box(s, &c, last, tab, data, other, t->prec, &sc);
        tables_free(tab, last->ndim);
    }
    scratch_free(&sc);
    if (c.role == 2 && !s->xi) { /* else the correlation function's turn frees it */
        free(s->keep);
        s->keep = NULL;
    }
    s->seconds += MPI_Wtime() - t0;
    return st;
}

fs_correlation *fs_spectrum_correlation(const fs_spectrum *s)
{
    return s ? s->xi : NULL;
}

fs_status fs_spectrum_correlate(fs_spectrum *s, int i, const fs_correlation_args *a)
{
    if (s->cross && i == 0) /* kept by fs_spectrum_add for the second's turn */
        return FS_OK;
    fs_status st = fs_correlation_add(s->xi, a, s->cross ? s->keep : NULL, s->cross || i == 0);
    free(s->keep);
    s->keep = NULL;
    return st;
}

fs_status fs_spectrum_reduce(fs_spectrum *s, MPI_Comm comm)
{
    double t0 = MPI_Wtime();
    int64_t n = s->nslices * s->bins.nbins * s->nq;
    fs_status st = FS_OK;
    /* In pieces below INT_MAX doubles (MPI's counts are int). */
    for (int pass = 0; pass < (s->acc_mu ? 2 : 1) && st == FS_OK; pass++) {
        double *a = pass ? s->acc_mu : s->acc;
        int64_t total = pass ? n * s->nmu : n;
        for (int64_t at = 0; at < total && st == FS_OK; at += 1 << 28) {
            int c = (int)(total - at < (1 << 28) ? total - at : 1 << 28);
            st = fs_allreduce(comm, MPI_IN_PLACE, a + at, c, MPI_DOUBLE, MPI_SUM);
        }
    }
    s->seconds += MPI_Wtime() - t0;
    return st == FS_OK && s->xi ? fs_correlation_reduce(s->xi, comm) : st;
}

int fs_spectrum_group(const fs_run_config *o, int i, char *path, size_t size)
{
    const char *groups[3];
    int n = 0;
    if (o->power_spectrum)
        groups[n++] = "power_spectrum";
    if (o->cross)
        groups[n++] = "cross_spectrum";
    if (o->correlation)
        groups[n++] = "correlation_function";
    if (i < 0 || i >= n)
        return 0;
    /* OUTPUT's path, resolved as HDF5 does (no trailing '/', never "/") */
    const char *under = o->spectrum_only && o->output_dataset ? o->output_dataset : "";
    snprintf(path, size, "%s/%s", under, groups[i]);
    return 1;
}

const char *fs_spectrum_path(const fs_spectrum *s, int i)
{
    return i >= 0 && i < s->ngroups ? s->group[i] : NULL;
}

/* --------------------------------------------------------------- results */

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

/* --shot-noise: what the power spectrum's power (and monopole) loses. */
static double shot_of(const fs_spectrum *s, int cross)
{
    return cross ? 0.0 : s->shot;
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

/* Every input, whole, however many and long: "FILE:DATASET, ..." in one
 * allocated string (NULL: out of memory). */
static char *inputs_text(const fs_location *inputs, const fs_input_info *infos, int n)
{
    size_t len = 1;
    for (int i = 0; i < n; i++)
        len += strlen(inputs[i].file) + 1 + strlen(infos[i].dataset) +
               strlen(infos[i].slice.text) + 2;
    char *fields = malloc(len);
    if (!fields)
        return NULL;
    fields[0] = '\0';
    for (int i = 0, used = 0; i < n; i++)
        used += snprintf(fields + used, len - (size_t)used, "%s%s:%s%s", i ? ", " : "",
                         inputs[i].file, infos[i].dataset, infos[i].slice.text);
    return fields;
}

/* The group's attributes: its convention. */
static fs_status write_attrs(const fs_spectrum *s, fs_h5_output *o, int cross,
                             const fs_location *inputs, const fs_input_info *infos, int n)
{
    char text[512], window[96] = "";
    if (s->window)
        snprintf(window, sizeof window, " / W(k)^2, W = prod_a sinc(pi f_a / n_a)^%d", s->window);
    snprintf(text, sizeof text,
             "%s per bin of |k|: k_a = 2 pi f_a / L_a, f_a = fftfreq(n_a, 1/n_a); mean |k| and "
             "mean %s%s of the modes%s%s; bins: %s",
             cross ? "cross spectrum Re(X_a conj X_b)" : "power spectrum |X|^2",
             cross ? "Re(X_a conj X_b)" : "|X|^2", window, s->g.box_given ? ", times V / N^2" : "",
             s->shot_given && !cross ? ", less shot_noise" : "", rule_name(s));
    char *fields = inputs_text(inputs, infos, n);
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
    if (st == FS_OK && s->window)
        st = fs_h5_output_attr_string(o, "compensate", windows[s->window]);
    double shot = shot_of(s, cross);
    if (st == FS_OK && s->shot_given && !cross)
        st = fs_h5_output_attr_numbers(o, "shot_noise", 0, NULL, FS_DTYPE_FLOAT64, &shot);
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
        {"power", cross ? Q_CROSS : Q_POWER, 1, s->factor, shot_of(s, cross)},
        {"power_a", Q_POWER_A, 1, s->factor, 0.0},
        {"power_b", Q_POWER_B, 1, s->factor, 0.0},
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
        means(s, acc, (int)all, q, f, s->ell[i] == 0 ? shot_of(s, cross) : 0.0, v);
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
    return st;
}

/* The group's coordinates: k (the bins' mean |k|) and edges are scales
 * themselves, the slices' axes and the mu bins get index and centre
 * coordinates. */
static fs_status group_coords(const fs_spectrum *s, fs_h5_output *o, const char *group,
                              const char *ku, group_dims *g)
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
        int64_t n = s->g.n[s->per[i]], *v = malloc(sizeof *v * (size_t)n);
        char name[32], text[96];
        snprintf(name, sizeof name, "axis%d", s->per[i]);
        snprintf(text, sizeof text, "index along axis %d of the input", s->per[i]);
        for (int64_t j = 0; v && j < n; j++)
            v[j] = j;
        fs_h5_coord c = {name, NULL, n, FS_DTYPE_INTEGER, v, NULL, text};
        st = v ? fs_h5_coord_make(o, group, &c, NULL, 0, g->per[i], sizeof g->per[i])
               : fs_error_set(FS_ERR_RUNTIME, "out of memory");
        free(v);
    }
    if (st == FS_OK && s->acc_mu) {
        double v[1000];
        for (int i = 0; i < s->nmu; i++)
            v[i] = (i + 0.5) / s->nmu;
        fs_h5_coord c = {"mu_bin", NULL, s->nmu, FS_DTYPE_FLOAT64, v, "1",
                         "centre of the |mu| bin"};
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
                                int cross)
{
    char ku[64], pu[64];
    snprintf(ku, sizeof ku, s->g.box_given ? "rad/box_length_unit" : "rad/grid_spacing");
    snprintf(pu, sizeof pu, s->g.box_given ? "box_length_unit^%d" : "1", s->g.naxes);
    group_dims g;
    fs_status st = group_coords(s, o, group, ku, &g);
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
    "power_factor", "los", "spectrum_per", "compensate", "shot_noise", "CLASS", "NAME", NULL,
};

/* shared: the inputs' attributes that go on the group (NULL: none). */
static fs_status write_group(const fs_spectrum *s, fs_h5_output *o, const char *group, int cross,
                             const fs_spectrum_inputs *in, const fs_input_attrs *shared,
                             int replace)
{
    fs_status st = fs_h5_output_group(o, group, replace);
    if (st == FS_OK)
        st = write_attrs(s, o, cross, in->inputs, in->infos, in->n);
    if (st == FS_OK && shared && shared->count)
        st = fs_h5_output_copy_attrs(o, shared);
    int64_t cell[2] = {s->bins.nbins, s->nmu};
    if (st == FS_OK)
        st = write_tables(s, o, group, s->acc, 1, cell, "", cross);
    int64_t nedges = s->bins.nbins + 1;
    if (st == FS_OK)
        st = table(o, group, "edges", 1, &nedges, FS_DTYPE_FLOAT64, s->bins.edges);
    if (st == FS_OK && s->acc_mu)
        st = write_tables(s, o, group, s->acc_mu, 2, cell, "_mu", cross);
    if (st == FS_OK && s->acc_mu) {
        double e[1001];
        int64_t n = s->nmu + 1;
        for (int i = 0; i <= s->nmu; i++)
            e[i] = (double)i / s->nmu;
        st = table(o, group, "mu_edges", 1, &n, FS_DTYPE_FLOAT64, e);
    }
    if (st == FS_OK)
        st = describe_group(s, o, group, cross);
    return st;
}

fs_status fs_spectrum_write(const fs_spectrum *s, fs_h5_output *o, const fs_spectrum_inputs *in,
                            int replace)
{
    fs_input_attrs shared = {0};
    fs_status st = in->attrs ? fs_input_attrs_shared(in->attrs, in->n, group_attrs, &shared)
                             : FS_OK;
    for (int i = 0; i < s->ngroups && st == FS_OK; i++)
        st = write_group(s, o, s->group[i], s->group_cross[i], in, &shared, replace);
    fs_input_attrs_free(&shared);
    if (st == FS_OK && s->xi) {
        char *fields = inputs_text(in->inputs, in->infos, in->n);
        st = fields ? fs_correlation_write(s->xi, o, s->xi_group, fields, replace)
                    : fs_error_set(FS_ERR_RUNTIME, "out of memory for the correlation function");
        free(fields);
    }
    return st;
}

/* ---------------------------------------------------------------- report */

/* A column of the report: over the bins, or with --spectrum-per an array
 * over the slices of arrays over the bins. */
static void json_column(fs_json *j, const char *key, const fs_spectrum *s, int q, double factor,
                        double shot, int per_slice)
{
    int64_t nsl = per_slice ? s->nslices : 1;
    fs_json_open(j, key, '[');
    for (int64_t sl = 0; sl < nsl; sl++) {
        if (per_slice && s->nper)
            fs_json_open(j, NULL, '[');
        for (int i = 0; i < s->bins.nbins; i++) {
            const double *cell = s->acc + ((size_t)sl * (size_t)s->bins.nbins + (size_t)i) * (size_t)s->nq;
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
    fs_json_open(j, cross ? "cross_spectrum" : "power_spectrum", '{');
    fs_json_str(j, "group", s->group[g]);
    fs_json_str(j, "bins", rule_name(s));
    fs_json_num(j, "k_fundamental", s->kf);
    fs_json_num(j, "power_factor", s->factor);
    int64_t *m = malloc(sizeof *m * (size_t)s->bins.nbins);
    if (m) {
        modes(s, s->acc, s->bins.nbins, m);
        fs_json_ints(j, "modes", s->bins.nbins, m);
        free(m);
    }
    json_column(j, "k", s, Q_K, 1.0, 0.0, 0);
    json_column(j, "power", s, cross ? Q_CROSS : Q_POWER, s->factor, shot_of(s, cross), 1);
    if (cross) {
        json_column(j, "power_a", s, Q_POWER_A, s->factor, 0.0, 1);
        json_column(j, "power_b", s, Q_POWER_B, s->factor, 0.0, 1);
    }
    for (int i = 0; i < s->npoles; i++) {
        char key[32];
        double f;
        int q = pole_column(s, i, cross, &f);
        snprintf(key, sizeof key, "power_%d", s->ell[i]);
        json_column(j, key, s, q, f, s->ell[i] == 0 ? shot_of(s, cross) : 0.0, 1);
    }
    fs_json_close(j, '}');
}

void fs_spectrum_json(fs_json *j, const void *arg)
{
    const fs_spectrum *s = arg;
    fs_json_open(j, "spectra", '{');
    fs_json_num(j, "seconds", s->seconds);
    for (int i = 0; i < s->ngroups; i++)
        json_group(j, s, i);
    if (s->xi)
        fs_correlation_json(j, s->xi, s->xi_group);
    fs_json_close(j, '}');
}

void fs_spectrum_summary(const fs_spectrum *s, const char *output, char *buf, size_t size)
{
    char slices[48] = "";
    if (s->nper)
        snprintf(slices, sizeof slices, " x %lld slices", (long long)s->nslices);
    int used = 0;
    if (s->ngroups)
        used = snprintf(buf, size, "  spectrum: %d bins%s (%s, k_f %.6g) in %s:%s%s%s, %.4f s\n",
                        s->bins.nbins, slices, rule_name(s), s->kf, output, s->group[0],
                        s->ngroups > 1 ? " and " : "", s->ngroups > 1 ? s->group[1] : "",
                        s->seconds);
    else if (size)
        buf[0] = '\0';
    if (s->xi && used >= 0 && (size_t)used < size)
        fs_correlation_summary(s->xi, output, s->xi_group, buf + used, size - (size_t)used);
}

fs_status fs_spectrum_finish(fs_spectrum *s, MPI_Comm comm, fs_h5_output *h5,
                             const fs_spectrum_inputs *in, int replace, fs_timers *timers)
{
    fs_status st = fs_error_agree(comm, fs_spectrum_reduce(s, comm));
    fs_timer_start(timers, FS_PHASE_WRITE);
    if (st == FS_OK)
        st = fs_error_agree(comm, fs_spectrum_write(s, h5, in, replace));
    fs_timer_stop(timers, FS_PHASE_WRITE);
    return st;
}
