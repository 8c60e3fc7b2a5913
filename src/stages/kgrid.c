/* SPDX-License-Identifier: GPL-3.0-or-later */
/* kgrid: see kgrid.h. */
#include "config.h"

#include "stages/kgrid.h"

#include <math.h>
#include <string.h>

fs_status fs_box_lengths_option(const fs_opt *o, const char *arg, void *section)
{
    fs_box_lengths *b = fs_opt_field(o, section);
    int n = fs_opt_parse_numbers(arg, b->L, FS_LAYOUT_MAX_DIMS, 0);
    if (n < 1)
        return fs_error_set(FS_ERR_USAGE, "--box-size=%s: expected a positive length, or one per "
                            "transformed axis (e.g. 1000 or 1000,1000,500)", arg);
    b->n = n;
    return FS_OK;
}

fs_status fs_kgrid_init(fs_kgrid *g, const fs_transform *t, const fs_box_lengths *box)
{
    int nbox = box ? box->n : 0;
    memset(g, 0, sizeof *g);
    g->ndim = t->in_ndim;
    for (int a = 0; a < g->ndim; a++) {
        g->n[a] = t->in_shape[a];
        g->transformed[a] = t->transform_axis[a];
        g->naxes += g->transformed[a];
    }
    if (nbox > 1 && nbox != g->naxes)
        return fs_error_set(FS_ERR_USAGE, "--box-size: %d lengths given for %d transformed axes "
                            "(give one, or one per transformed axis)", nbox, g->naxes);
    g->box_given = nbox > 0;
    for (int a = 0, i = 0; a < g->ndim; a++) {
        if (!g->transformed[a])
            continue;
        g->L[a] = nbox == 0 ? (double)g->n[a] : box->L[nbox == 1 ? 0 : i];
        i++;
    }
    return FS_OK;
}

int64_t fs_kgrid_freq(int64_t j, int64_t n)
{
    return j < (n + 1) / 2 ? j : j - n;
}

/* The same arithmetic as the documented definition, so that a numpy
 * computation of it agrees to the last bit. */
double fs_kgrid_k(const fs_kgrid *g, int a, int64_t j)
{
    return g->transformed[a] ? 2.0 * M_PI * (double)fs_kgrid_freq(j, g->n[a]) / g->L[a] : 0.0;
}

double fs_kgrid_deriv_k(const fs_kgrid *g, int a, int64_t j)
{
    int nyquist = g->n[a] % 2 == 0 && 2 * j == g->n[a];
    return nyquist ? 0.0 : fs_kgrid_k(g, a, j);
}

void fs_kgrid_k2_line(const double *q, int ndim, int axis, const double *ql, int64_t n,
                      double *k2)
{
    double before = 0.0;
    for (int a = 0; a < axis; a++)
        before += q[a];
    for (int64_t j = 0; j < n; j++)
        k2[j] = before + ql[j];
    for (int a = axis + 1; a < ndim; a++)
        for (int64_t j = 0; j < n; j++)
            k2[j] += q[a];
}

double fs_kgrid_k2max(const fs_kgrid *g)
{
    double q[FS_LAYOUT_MAX_DIMS] = {0}, k2;
    for (int a = 0; a < g->ndim; a++) {
        double k = fs_kgrid_k(g, a, g->n[a] / 2);
        q[a] = k * k;
    }
    fs_kgrid_k2_line(q, g->ndim, 0, q, 1, &k2);
    return k2;
}

double fs_kgrid_k2min(const fs_kgrid *g)
{
    double least = INFINITY;
    for (int a = 0; a < g->ndim; a++)
        if (g->transformed[a] && g->n[a] > 1) {
            double k = fs_kgrid_k(g, a, 1);
            least = k * k < least ? k * k : least;
        }
    return least;
}

double fs_kgrid_kmax(const fs_kgrid *g)
{
    return sqrt(fs_kgrid_k2max(g));
}

int fs_kgrid_lengths(const fs_kgrid *g, double *box)
{
    int n = 0;
    for (int a = 0; a < g->ndim; a++)
        if (g->transformed[a])
            box[n++] = g->L[a];
    return n;
}

double fs_kgrid_kf(const fs_kgrid *g)
{
    double Lmax = 0;
    for (int a = 0; a < g->ndim; a++)
        if (g->transformed[a] && g->L[a] > Lmax)
            Lmax = g->L[a];
    return Lmax > 0 ? 2.0 * M_PI / Lmax : 0;
}

int64_t fs_kgrid_fold_index(const fs_transform *t, const fs_box *last, int64_t k1, int64_t i2)
{
    return k1 * t->n2 + last->start[0] + i2;
}
