/* SPDX-License-Identifier: GPL-3.0-or-later */
/* domain: see domain.h. The windows follow scipy.signal.windows (scipy
 * 1.10) operation for operation, so that the values agree to the last few
 * bits: numpy.linspace's points for the cosine windows, its index
 * arithmetic for tukey, the Kaiser window's modified Bessel function I0. */
#include "config.h"

#include "plan/domain.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/transform.h"

#define MAX_KAISER_BETA 500.0       /* I0(beta) stays finite well beyond */
#define MAX_PAD_LENGTH ((long)1 << 48)
#define MAX_PAD_FACTOR 1024

/* One whole number in [lo, hi]: 0, or -1 when text is not one. */
static int parse_int(const char *text, long lo, long hi, long *v)
{
    char *end;
    errno = 0;
    long x = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || x < lo || x > hi)
        return -1;
    *v = x;
    return 0;
}

static const struct {
    const char *name;
    fs_window_kind kind;
} kinds[] = {
    {"none", FS_WINDOW_NONE},         {"hann", FS_WINDOW_HANN},   {"hamming", FS_WINDOW_HAMMING},
    {"blackman", FS_WINDOW_BLACKMAN}, {"tukey", FS_WINDOW_TUKEY}, {"kaiser", FS_WINDOW_KAISER},
};

/* One item NAME[:PARAM] of text [item, item + len). */
static fs_status parse_window(const char *option, const char *item, size_t len, fs_window *w)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return fs_error_set(FS_ERR_USAGE, "%s: expected NAME[:PARAM][,...] with NAME none, hann, "
                            "hamming, blackman, tukey or kaiser", option);
    memcpy(buf, item, len);
    buf[len] = '\0';
    char *colon = strchr(buf, ':');
    if (colon)
        *colon++ = '\0';
    size_t k = 0;
    while (k < sizeof kinds / sizeof kinds[0] && strcmp(kinds[k].name, buf) != 0)
        k++;
    if (k == sizeof kinds / sizeof kinds[0])
        return fs_error_set(FS_ERR_USAGE, "%s: unknown window '%s' (known: none, hann, hamming, "
                            "blackman, tukey[:ALPHA], kaiser:BETA)", option, buf);
    w->kind = kinds[k].kind;
    w->param = w->kind == FS_WINDOW_TUKEY ? 0.5 : 0.0; /* scipy's default alpha */
    int takes = w->kind == FS_WINDOW_TUKEY || w->kind == FS_WINDOW_KAISER;
    if (colon && !takes)
        return fs_error_set(FS_ERR_USAGE, "%s: the %s window takes no parameter ('%s:%s')", option,
                            buf, buf, colon);
    if (!colon && w->kind == FS_WINDOW_KAISER)
        return fs_error_set(FS_ERR_USAGE, "%s: kaiser needs its shape: kaiser:BETA (e.g. "
                            "kaiser:8.6)", option);
    if (!colon)
        return FS_OK;
    char *end;
    double v = strtod(colon, &end);
    double hi = w->kind == FS_WINDOW_TUKEY ? 1.0 : MAX_KAISER_BETA;
    if (end == colon || *end != '\0' || !(v >= 0 && v <= hi))
        return fs_error_set(FS_ERR_USAGE, "%s: %s:%s: expected %s from 0 to %g", option, buf,
                            colon, w->kind == FS_WINDOW_TUKEY ? "ALPHA" : "BETA", hi);
    w->param = v;
    return FS_OK;
}

fs_status fs_window_parse(const char *option, const char *text, fs_window_list *out)
{
    memset(out, 0, sizeof *out);
    for (const char *p = text;; ) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (out->n == FS_LAYOUT_MAX_DIMS)
            return fs_error_set(FS_ERR_USAGE, "%s: more than %d windows", option,
                                FS_LAYOUT_MAX_DIMS);
        fs_status st = parse_window(option, p, len, &out->w[out->n]);
        if (st != FS_OK)
            return st;
        out->n++;
        if (!comma)
            return FS_OK;
        p = comma + 1;
    }
}

void fs_window_format(const fs_window *w, char *buf, size_t size)
{
    const char *name = "none";
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if (kinds[k].kind == w->kind)
            name = kinds[k].name;
    if (w->kind == FS_WINDOW_TUKEY || w->kind == FS_WINDOW_KAISER)
        snprintf(buf, size, "%s:%.17g", name, w->param);
    else
        snprintf(buf, size, "%s", name);
}

/* The modified Bessel function of the first kind of order 0: its power
 * series, whose terms are all positive (no cancellation). */
static double bessel_i0(double x)
{
    double q = 0.25 * x * x, term = 1, sum = 1;
    for (int k = 1; k < 2000 && term > 1e-17 * sum; k++) {
        term *= q / ((double)k * (double)k);
        sum += term;
    }
    return sum;
}

/* scipy's general_cosine: numpy.linspace(-pi, pi, M)'s point i, then the
 * sum of a[k] cos(k x) from k = 0. */
static double general_cosine(const double *a, int na, int64_t M, int64_t i)
{
    double step = 2.0 * M_PI / (double)(M - 1);
    double x = i == M - 1 ? M_PI : (double)i * step + -M_PI;
    double w = 0;
    for (int k = 0; k < na; k++)
        w += a[k] * cos((double)k * x);
    return w;
}

static double tukey(double alpha, int64_t M, int64_t n)
{
    int64_t width = (int64_t)floor(alpha * (double)(M - 1) / 2.0);
    double d = (double)n;
    if (n <= width)
        return 0.5 * (1 + cos(M_PI * (-1 + 2.0 * d / alpha / (double)(M - 1))));
    if (n >= M - width - 1)
        return 0.5 * (1 + cos(M_PI * (-2.0 / alpha + 1 + 2.0 * d / alpha / (double)(M - 1))));
    return 1.0;
}

double fs_window_value(const fs_window *w, int sym, int64_t m, int64_t i)
{
    if (w->kind == FS_WINDOW_NONE || m <= 1)
        return 1.0;
    int64_t M = sym ? m : m + 1; /* periodic: the symmetric window of m + 1, its last left out */
    const double hann[] = {0.5, 1. - 0.5}, hamming[] = {0.54, 1. - 0.54},
                 blackman[] = {0.42, 0.50, 0.08};
    switch (w->kind) {
    case FS_WINDOW_HANN:
        return general_cosine(hann, 2, M, i);
    case FS_WINDOW_HAMMING:
        return general_cosine(hamming, 2, M, i);
    case FS_WINDOW_BLACKMAN:
        return general_cosine(blackman, 3, M, i);
    case FS_WINDOW_TUKEY:
        if (w->param <= 0)
            return 1.0;
        if (w->param >= 1.0)
            return general_cosine(hann, 2, M, i);
        return tukey(w->param, M, i);
    case FS_WINDOW_KAISER: {
        double alpha = (double)(M - 1) / 2.0, r = ((double)i - alpha) / alpha;
        return bessel_i0(w->param * sqrt(1 - pow(r, 2.0))) / bessel_i0(w->param);
    }
    case FS_WINDOW_NONE:
        break;
    }
    return 1.0;
}

double fs_window_mean_square(const fs_window *w, int sym, int64_t m)
{
    if (w->kind == FS_WINDOW_NONE || m < 1)
        return 1.0;
    double s = 0;
    for (int64_t i = 0; i < m; i++) {
        double v = fs_window_value(w, sym, m, i);
        s += v * v;
    }
    return s / (double)m;
}

fs_status fs_pad_parse(const char *option, const char *text, fs_pad_list *out)
{
    memset(out, 0, sizeof *out);
    for (const char *p = text;; ) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[32];
        long v;
        if (out->n == FS_LAYOUT_MAX_DIMS)
            return fs_error_set(FS_ERR_USAGE, "%s: more than %d lengths", option,
                                FS_LAYOUT_MAX_DIMS);
        if (len == 0 || len >= sizeof item)
            return fs_error_set(FS_ERR_USAGE, "%s: expected N or Kx per transformed axis (e.g. "
                                "256,256 or 2x)", option);
        memcpy(item, p, len);
        item[len] = '\0';
        fs_pad *pad = &out->p[out->n++];
        if (item[len - 1] == 'x') {
            item[len - 1] = '\0';
            if (parse_int(item, 1, MAX_PAD_FACTOR, &v) != 0)
                return fs_error_set(FS_ERR_USAGE, "%s: '%sx': expected a factor from 1x to %dx",
                                    option, item, MAX_PAD_FACTOR);
            pad->factor = (int)v;
        } else if (parse_int(item, 1, MAX_PAD_LENGTH, &v) != 0) {
            return fs_error_set(FS_ERR_USAGE, "%s: '%s': expected a length (a positive integer) "
                                "or a factor (2x)", option, item);
        } else {
            pad->len = v;
        }
        if (!comma)
            return FS_OK;
        p = comma + 1;
    }
}

int64_t fs_pad_length(const fs_pad *p, int64_t n)
{
    return p->len ? p->len : n * p->factor;
}

static const char *const boundary_names[] = {"periodic", "dirichlet", "neumann", "free"};

fs_status fs_boundary_parse(const char *option, const char *text, fs_boundary_list *out)
{
    memset(out, 0, sizeof *out);
    for (const char *p = text;; ) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        int k = 0;
        while (k < 4 && !(strlen(boundary_names[k]) == len && strncmp(p, boundary_names[k], len) == 0))
            k++;
        if (out->n == FS_LAYOUT_MAX_DIMS)
            return fs_error_set(FS_ERR_USAGE, "%s: more than %d boundaries", option,
                                FS_LAYOUT_MAX_DIMS);
        if (k == 4)
            return fs_error_set(FS_ERR_USAGE, "%s: '%.*s': expected periodic, dirichlet, neumann "
                                "or free, one for all or one per transformed axis", option,
                                (int)len, p);
        out->b[out->n++] = (fs_boundary)k;
        if (!comma)
            return FS_OK;
        p = comma + 1;
    }
}

fs_r2r fs_boundary_kind(fs_boundary b)
{
    return b == FS_BOUNDARY_DIRICHLET ? FS_DST2 : b == FS_BOUNDARY_NEUMANN ? FS_DCT2 : FS_AXIS_FFT;
}

const char *fs_boundary_name_of_kind(fs_r2r k)
{
    return boundary_names[k == FS_DST2 ? 1 : k == FS_DCT2 ? 2 : 0];
}

int64_t fs_fast_length(int64_t n)
{
    for (int64_t m = n > 1 ? n : 1;; m++) {
        int64_t r = m;
        const int primes[] = {2, 3, 5, 7};
        for (int i = 0; i < 4; i++)
            while (r % primes[i] == 0)
                r /= primes[i];
        if (r == 1)
            return m;
    }
}

/* ------------------------------------------------------------ the transform */

void fs_domain_plan(const fs_transform_request *rq, fs_transform *t)
{
    t->resized = 0;
    for (int k = 0; k < rq->ndim; k++) {
        int64_t own = rq->data_shape[k] ? rq->data_shape[k] : rq->shape[k];
        t->data_shape[k] = own;
        t->read_shape[k] = own < rq->shape[k] ? own : rq->shape[k];
        t->resized |= own != rq->shape[k];
    }
    memcpy(t->window, rq->window, sizeof t->window);
    t->window_sym = rq->window_sym;
    t->free_space = rq->free_space;
    t->windowed = 0;
    for (int k = 0; k < rq->ndim && !rq->inverse; k++)
        t->windowed |= rq->window[k].kind != FS_WINDOW_NONE;
}

fs_op_spec fs_domain_window_op(const fs_transform *t)
{
    fs_op_spec s;
    memset(&s, 0, sizeof s);
    s.kind = FS_OP_WINDOW;
    s.window_sym = t->window_sym;
    memcpy(s.window, t->window, sizeof s.window);
    memcpy(s.wlen, t->read_shape, sizeof s.wlen);
    s.fold_inner = t->fold ? t->n1 : 0;
    s.padded_rows = t->kind == FS_R2C && t->padded;
    s.reals = fs_dtype_is_real(t->work_type);
    s.real_axis = t->real_axis;
    s.real_len = t->real_len;
    return s;
}

void fs_domain_limits(const fs_transform *t, fs_op_spec *op)
{
    for (int k = 0; k < t->in_ndim && t->resized && !t->fold; k++)
        if (t->read_shape[k] < t->in_shape[k] && !(op->kind == FS_OP_R2C && k == t->real_axis))
            op->limit[k] = t->read_shape[k];
}

int fs_domain_live_counts(const fs_op_spec *op, const fs_box *box, int64_t *live)
{
    int pruned = 0;
    for (int k = 0; k < box->ndim; k++) {
        int64_t l = op->limit[k] - box->start[k];
        live[k] = op->limit[k] <= 0 ? box->count[k] : l < 0 ? 0 : l < box->count[k] ? l
                                                                      : box->count[k];
        pruned |= live[k] < box->count[k];
    }
    return pruned;
}

/* The axis of t's first stage whose split fs_domain_split_length cuts to
 * the data's length (-1: none). */
static int live_split_axis(const struct fs_transform *t)
{
    if (!t->free_space || t->fold || t->nstages < 2)
        return -1;
    int a = t->split[0][fs_transform_exchange_dim(t, 0)];
    return a >= 0 && !(t->padded && a == t->real_axis) && t->read_shape[a] < t->shape[a] ? a
                                                                                          : -1;
}

int64_t fs_domain_split_length(const struct fs_transform *t, int s, int g)
{
    int a = t->split[s][g];
    return s == 0 && a == live_split_axis(t) ? t->read_shape[a] : t->shape[a];
}

fs_box fs_domain_exchange_zeros(const struct fs_transform *t, const fs_box *after)
{
    fs_box z = *after;
    int a = live_split_axis(t);
    int64_t start = 0, end = 0;
    if (a >= 0 && fs_box_elems(after) > 0) {
        start = t->read_shape[a] > after->start[a] ? t->read_shape[a] : after->start[a];
        end = after->start[a] + after->count[a];
    }
    if (end <= start) {
        memset(z.count, 0, sizeof z.count);
        return z;
    }
    z.start[a] = start;
    z.count[a] = end - start;
    return z;
}

double fs_domain_window_at(const fs_transform *t, const int64_t *at)
{
    if (!t->windowed)
        return 1.0;
    if (t->fold) {
        int64_t j = at[0] * t->n1 + at[1];
        return fs_window_value(&t->window[0], t->window_sym, t->read_shape[0], j);
    }
    double w = 1.0;
    for (int k = 0; k < t->in_ndim; k++)
        if (t->window[k].kind != FS_WINDOW_NONE)
            w *= fs_window_value(&t->window[k], t->window_sym, t->read_shape[k], at[k]);
    return w;
}

double fs_domain_window_power(const fs_transform *t)
{
    double p = 1.0;
    for (int k = 0; k < t->in_ndim && t->windowed; k++)
        p *= fs_window_mean_square(&t->window[k], t->window_sym, t->read_shape[k]);
    return p;
}

void fs_domain_window_text(const fs_transform *t, char *buf, size_t size)
{
    int any = 0;
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < t->naxes; i++)
        any |= t->window[t->axes[i]].kind != FS_WINDOW_NONE;
    for (int i = 0; i < t->naxes && any && used < size; i++) {
        char one[64];
        fs_window_format(&t->window[t->axes[i]], one, sizeof one);
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? "," : "", one);
    }
}
