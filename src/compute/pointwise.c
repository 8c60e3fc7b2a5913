/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pointwise: see pointwise.h. */
#include "config.h"

#include "compute/pointwise.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct fs_window_op {
    fs_op_spec spec;
    fs_box box;
    double *tab[FS_LAYOUT_MAX_DIMS]; /* each windowed axis's values over the box */
};

/* The values of each windowed axis over the box (along a padded real row,
 * over its reals); past the window's length (the zeros of the padding) 1.
 * The four-step's index spans two axes: computed per element instead. */
fs_window_op *fs_window_op_new(const fs_op_spec *spec, const fs_box *box)
{
    fs_window_op *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->spec = *spec;
    w->box = *box;
    for (int k = 0; k < box->ndim && !spec->fold_inner; k++) {
        if (spec->window[k].kind == FS_WINDOW_NONE)
            continue;
        int reals = spec->padded_rows && k == spec->real_axis;
        int64_t n = reals ? spec->real_len : box->count[k], first = reals ? 0 : box->start[k];
        w->tab[k] = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
        if (!w->tab[k]) {
            fs_window_op_free(&w);
            return NULL;
        }
        for (int64_t j = 0; j < n; j++)
            w->tab[k][j] = first + j < spec->wlen[k] ? fs_window_value(&spec->window[k],
                                                                      spec->window_sym,
                                                                      spec->wlen[k], first + j)
                                                    : 1.0;
    }
    return w;
}

/* Element i < n of x (of `step` reals: 2 for complex) times f tab[i] (tab
 * NULL: f). */
static void times(fs_precision p, void *x, int64_t n, int step, double f, const double *tab)
{
    for (int64_t i = 0; i < n; i++) {
        double g = tab ? f * tab[i] : f;
        for (int64_t c = i * step; c < (i + 1) * step; c++)
            if (p == FS_SINGLE)
                ((float *)x)[c] = (float)((double)((float *)x)[c] * g);
            else
                ((double *)x)[c] *= g;
    }
}

void fs_window_op_apply(const fs_window_op *w, fs_precision prec, void *data)
{
    const fs_op_spec *s = &w->spec;
    const fs_box *b = &w->box;
    size_t rb = fs_complex_bytes(prec) / 2;
    if (fs_box_elems(b) == 0)
        return;
    if (s->fold_inner) {
        for (int64_t i = 0, e = 0; i < b->count[0]; i++)
            for (int64_t c = 0; c < b->count[1]; c++, e++) {
                int64_t j = (b->start[0] + i) * s->fold_inner + b->start[1] + c;
                double f = j < s->wlen[0]
                               ? fs_window_value(&s->window[0], s->window_sym, s->wlen[0], j) : 1;
                times(prec, (char *)data + (size_t)(2 * e) * rb, 1, 2, f, NULL);
            }
        return;
    }
    int last = b->ndim - 1, reals = s->padded_rows;
    int64_t row = reals ? 2 * b->count[last] : b->count[last];
    int64_t len = reals ? s->real_len : row, rows = fs_box_elems(b) / b->count[last];
    int64_t at[FS_LAYOUT_MAX_DIMS] = {0};
    for (int64_t r = 0; r < rows; r++) {
        double f = 1;
        for (int k = 0; k < last; k++)
            f *= w->tab[k] ? w->tab[k][at[k]] : 1.0;
        char *x = (char *)data + (size_t)(r * row * (reals ? 1 : 2)) * rb;
        times(prec, x, len, reals ? 1 : 2, f, w->tab[last]);
        for (int k = last - 1; k >= 0 && ++at[k] == b->count[k]; k--)
            at[k] = 0;
    }
}

void fs_window_op_free(fs_window_op **pw)
{
    if (!*pw)
        return;
    for (int k = 0; k < FS_LAYOUT_MAX_DIMS; k++)
        free((*pw)->tab[k]);
    free(*pw);
    *pw = NULL;
}

/* ------------------------------------------------------------------ the others */

/* Along the real axis of every line: X[m] = conj(X[n - m]) for m past n/2. */
void fs_pointwise_hermitian(const fs_op_spec *spec, const fs_box *b, fs_precision prec, void *data)
{
    int a = spec->real_axis;
    int64_t n = spec->real_len, h = n / 2 + 1;
    int64_t stride[FS_LAYOUT_MAX_DIMS];
    fs_box_strides(b, stride);
    int64_t lines = fs_box_elems(b) / b->count[a], inner = stride[a];
    for (int64_t l = 0; l < lines; l++) {
        int64_t base = (l / inner) * inner * b->count[a] + l % inner;
        for (int64_t m = h; m < n; m++) {
            int64_t dst = base + m * inner, src = base + (n - m) * inner;
            if (prec == FS_SINGLE) {
                float *d = data;
                d[2 * dst] = d[2 * src];
                d[2 * dst + 1] = -d[2 * src + 1];
            } else {
                double *d = data;
                d[2 * dst] = d[2 * src];
                d[2 * dst + 1] = -d[2 * src + 1];
            }
        }
    }
}

void fs_pointwise_zero_imag(const fs_box *b, fs_precision prec, void *data)
{
    int64_t n = fs_box_elems(b);
    if (prec == FS_SINGLE)
        for (int64_t i = 0; i < n; i++)
            ((float *)data)[2 * i + 1] = 0;
    else
        for (int64_t i = 0; i < n; i++)
            ((double *)data)[2 * i + 1] = 0;
}

void fs_pointwise_twiddle(const fs_op_spec *spec, const fs_box *b, fs_precision prec, void *data)
{
    int64_t N = spec->twiddle_n;
    double s = spec->sign < 0 ? -1.0 : 1.0;
    for (int64_t i = 0; i < b->count[0]; i++) {
        int64_t k2 = b->start[0] + i;
        for (int64_t j = 0; j < b->count[1]; j++) {
            int64_t j1 = b->start[1] + j;
            /* The exponent reduced exactly, so large N keeps full accuracy. */
            int64_t e = (int64_t)(((__int128)j1 * k2) % N);
            double ang = s * 2.0 * M_PI * (double)e / (double)N;
            double c = cos(ang), sn = sin(ang);
            int64_t idx = i * b->count[1] + j;
            if (prec == FS_SINGLE) {
                float *d = (float *)data + 2 * idx;
                float re = d[0], im = d[1];
                d[0] = (float)(re * c - im * sn);
                d[1] = (float)(re * sn + im * c);
            } else {
                double *d = (double *)data + 2 * idx;
                double re = d[0], im = d[1];
                d[0] = re * c - im * sn;
                d[1] = re * sn + im * c;
            }
        }
    }
}

void fs_pointwise_scale(double f, const fs_box *b, fs_precision prec, void *data)
{
    int64_t n = 2 * fs_box_elems(b);
    if (prec == FS_SINGLE)
        for (int64_t i = 0; i < n; i++)
            ((float *)data)[i] *= (float)f;
    else
        for (int64_t i = 0; i < n; i++)
            ((double *)data)[i] *= f;
}
