/* SPDX-License-Identifier: GPL-3.0-or-later */
/* kgrid: see kgrid.h. */
#include "config.h"

#include "stages/kgrid.h"

#include <math.h>
#include <string.h>

#define BOX_AGREE 1e-6 /* lengths this close (relative) are one length */

fs_status fs_box_lengths_option(const fs_opt *o, const char *arg, void *section)
{
    fs_box_lengths *b = fs_opt_field(o, section);
    if (strcmp(arg, "grid") == 0) {
        b->n = FS_BOX_GRID;
        return FS_OK;
    }
    int n = fs_opt_parse_numbers(arg, b->L, FS_LAYOUT_MAX_DIMS, 0);
    if (n < 1)
        return fs_error_set(FS_ERR_USAGE, "--box-size=%s: expected a positive length, or one per "
                            "transformed axis (e.g. 1000 or 1000,1000,500), or grid", arg);
    b->n = n;
    return FS_OK;
}

static int transformed_axes(const fs_transform *t)
{
    int n = 0;
    for (int a = 0; a < t->in_ndim; a++)
        n += t->transform_axis[a] != 0;
    return n;
}

static fs_status count_refused(int nbox, int naxes)
{
    return fs_error_set(FS_ERR_USAGE, "--box-size: %d lengths given for %d transformed axes "
                        "(give one, or one per transformed axis)", nbox, naxes);
}

/* "1000" when the n lengths are one, else "1000,1000,500". */
static const char *lengths_text(const double *L, int n, char *buf, size_t size)
{
    int alike = 1;
    for (int i = 1; i < n; i++)
        alike &= L[i] == L[0];
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < (alike ? 1 : n) && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%.10g", i ? "," : "", L[i]);
    return buf;
}

/* The lengths of INPUT in's box_size attribute on t's transformed axes,
 * into L: their count, 0 without one, -1 with the reason in why. */
static int attribute_lengths(const fs_input_info *in, const fs_transform *t, double *L, char *why,
                             size_t size)
{
    if (in->box_n <= 0) {
        snprintf(why, size, "%s", in->box_bad);
        return in->box_n;
    }
    const fs_input_slice *sl = &in->slice;
    int nfile = sl->given ? sl->file_ndim : in->ndim, c = in->box_n, naxes = transformed_axes(t);
    if (c == naxes && c != nfile && !sl->given) {
        memcpy(L, in->box_size, sizeof *L * (size_t)c); /* one per transformed axis */
        return c;
    }
    if (c != 1 && c != nfile) {
        snprintf(why, size, "the box_size attribute holds %d lengths for a %d-D dataset (give "
                 "one, or one per axis)", c, nfile);
        return -1;
    }
    double kept[FS_LAYOUT_MAX_DIMS]; /* each axis of the array as read */
    for (int a = 0, j = 0; a < nfile; a++) {
        double Lf = in->box_size[c == 1 ? 0 : a];
        if (sl->given && !sl->dropped[a]) /* the cells kept keep their length */
            kept[j++] = Lf * (double)(sl->step[a] * sl->count[a]) / (double)sl->file_shape[a];
        else if (!sl->given)
            kept[j++] = Lf;
    }
    for (int a = 0, i = 0; a < t->in_ndim; a++)
        if (t->transform_axis[a])
            L[i++] = kept[a];
    return naxes;
}

static int lengths_agree(const double *a, const double *b, int n)
{
    for (int i = 0; i < n; i++)
        if (fabs(a[i] - b[i]) > BOX_AGREE * fmax(a[i], b[i]))
            return 0;
    return 1;
}

fs_status fs_box_lengths_resolve(const fs_box_lengths *given, int n, const fs_location *inputs,
                                 const fs_input_info *infos, const fs_transform *const *ts,
                                 fs_box_lengths *out, char *from, size_t size)
{
    memset(out, 0, sizeof *out);
    snprintf(from, size, "%s", given->n > 0 ? "--box-size" : "");
    if (given->n == FS_BOX_GRID || n < 1)
        return FS_OK;
    int naxes = transformed_axes(ts[0]), have = given->n > 0;
    if (given->n > 1 && given->n != naxes)
        return count_refused(given->n, naxes);
    for (int i = 0; i < naxes && have; i++)
        out->L[i] = given->L[given->n == 1 ? 0 : i];
    char name[FS_INPUT_NAME_MAX], first[FS_INPUT_NAME_MAX] = "", a[256], b[256],
        why[FS_RECORDED_WHY];
    for (int i = 0; i < n; i++) {
        double L[FS_LAYOUT_MAX_DIMS];
        int c = attribute_lengths(&infos[i], ts[i], L, why, sizeof why);
        if (c == 0 || (c < 0 && given->n > 0))
            continue;
        fs_input_name(inputs[i].file, &infos[i], name, sizeof name);
        if (c < 0)
            return fs_error_set(FS_ERR_INPUT, "%s: %s; give --box-size (or --box-size=grid)",
                                name, why);
        if (have && !lengths_agree(L, out->L, naxes))
            return given->n > 0
                       ? fs_error_set(FS_ERR_USAGE, "--box-size=%s disagrees with the box_size "
                                      "attribute %s of %s", lengths_text(out->L, naxes, a,
                                      sizeof a), lengths_text(L, naxes, b, sizeof b), name)
                       : fs_error_set(FS_ERR_INPUT, "%s: the box_size attribute %s disagrees "
                                      "with %s of %s (give --box-size=grid to take neither)",
                                      name, lengths_text(L, naxes, b, sizeof b),
                                      lengths_text(out->L, naxes, a, sizeof a), first);
        if (!have)
            memcpy(out->L, L, sizeof L);
        if (!have && given->n <= 0)
            snprintf(first, sizeof first, "%s", name);
        have = 1;
    }
    out->n = have ? naxes : 0;
    if (first[0])
        snprintf(from, size, "the box_size attribute of %s", first);
    return FS_OK;
}

fs_status fs_kgrid_init(fs_kgrid *g, const fs_transform *t, const fs_box_lengths *box)
{
    int nbox = box && box->n > 0 ? box->n : 0;
    memset(g, 0, sizeof *g);
    g->ndim = t->in_ndim;
    for (int a = 0; a < g->ndim; a++) {
        g->n[a] = t->in_shape[a];
        g->transformed[a] = t->transform_axis[a];
        g->kind[a] = t->transform_axis[a] ? t->r2r[a] : FS_AXIS_FFT;
        g->naxes += g->transformed[a];
    }
    if (nbox > 1 && nbox != g->naxes)
        return count_refused(nbox, g->naxes);
    g->box_given = nbox > 0;
    for (int a = 0, i = 0; a < g->ndim; a++) {
        if (!g->transformed[a])
            continue;
        /* --box-size is the input's: a zero-padded (or cut) axis keeps its
         * spacing, L_a n_a / (the input's n_a) */
        double own = (double)t->data_shape[a];
        g->L[a] = nbox == 0 ? (double)g->n[a]
                  : t->data_shape[a] == g->n[a] ? box->L[nbox == 1 ? 0 : i]
                                               : box->L[nbox == 1 ? 0 : i] * (double)g->n[a] / own;
        g->m[a] = t->read_shape[a];
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
    if (!g->transformed[a])
        return 0.0;
    switch (g->kind[a]) {
    case FS_DST2: return M_PI * (double)(j + 1) / g->L[a];
    case FS_DCT2: return M_PI * (double)j / g->L[a];
    default: return 2.0 * M_PI * (double)fs_kgrid_freq(j, g->n[a]) / g->L[a];
    }
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
        double k = fs_kgrid_k(g, a, g->kind[a] == FS_AXIS_FFT ? g->n[a] / 2 : g->n[a] - 1);
        q[a] = k * k;
    }
    fs_kgrid_k2_line(q, g->ndim, 0, q, 1, &k2);
    return k2;
}

double fs_kgrid_k2min(const fs_kgrid *g)
{
    double least = INFINITY;
    for (int a = 0; a < g->ndim; a++)
        if (g->transformed[a] && (g->n[a] > 1 || g->kind[a] == FS_DST2)) {
            double k = fs_kgrid_k(g, a, g->kind[a] == FS_DST2 ? 0 : 1);
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
