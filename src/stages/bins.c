/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include "stages/bins.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/optable.h"

/* NAME=LO:HI:STEP: the edges LO + i STEP up to HI. */
static fs_status parse_range(const char *name, const char *arg, const char *v, fs_bins_option *b)
{
    double r[3] = {0, 0, 0};
    char *end = NULL;
    const char *p = arg;
    int n = 0;
    for (; n < 3; n++, p = end + 1) {
        errno = 0;
        r[n] = strtod(p, &end);
        if (errno || end == p || *end != (n < 2 ? ':' : '\0') || !(r[n] >= 0 && r[n] < 1e300))
            break;
    }
    double count = n == 3 && r[2] > 0 ? floor((r[1] - r[0]) / r[2] + 1e-9) : 0;
    if (!(count >= 1 && count < FS_MAX_EDGES))
        return fs_error_set(FS_ERR_USAGE, "%s=%s: expected %sMIN:%sMAX:D%s with 0 <= %sMIN, "
                            "%sMIN + D%s <= %sMAX and at most %d bins", name, arg, v, v, v, v,
                            v, v, v, FS_MAX_EDGES - 1);
    for (int i = 0; i <= (int)count; i++)
        b->edges[i] = r[0] + i * r[2];
    b->nedges = (int)count + 1;
    b->n = 0;
    return FS_OK;
}

fs_status fs_bins_parse(const char *name, const char *arg, const char *what, const char *var,
                        fs_bins_option *b)
{
    long n;
    if (strchr(arg, ':'))
        return parse_range(name, arg, var, b);
    if (!strchr(arg, ',')) {
        if (fs_opt_parse_long(arg, 1, FS_MAX_EDGES - 1, &n) != 0)
            return fs_error_set(FS_ERR_USAGE, "%s=%s: expected a number of bins from 1 to %d, "
                                "or increasing edges E0,E1,...", name, arg, FS_MAX_EDGES - 1);
        b->n = (int)n;
        b->nedges = 0;
        return FS_OK;
    }
    int m = fs_opt_parse_numbers(arg, b->edges, FS_MAX_EDGES, 1);
    for (int i = 1; i < m; i++)
        if (!(b->edges[i] > b->edges[i - 1]))
            m = -1;
    if (m < 2)
        return fs_error_set(FS_ERR_USAGE, "%s=%s: expected at most %d increasing edges "
                            "E0,E1,... (%s from E0 up to E1 in the first bin)", name, arg,
                            FS_MAX_EDGES, what);
    b->nedges = m;
    b->n = 0;
    return FS_OK;
}

fs_status fs_bins_make(fs_bins *b, const fs_bins_option *opt, double max, double unit)
{
    int nedges = opt->nedges, n = opt->n;
    const double *edges = opt->edges;
    *b = (fs_bins){.unit = unit};
    if (nedges) {
        b->rule = FS_BINS_EDGES;
        b->nbins = nedges - 1;
    } else if (n) {
        b->rule = FS_BINS_LINEAR;
        b->nbins = n;
        b->width = max / n;
    } else {
        b->rule = FS_BINS_SHELLS;
        b->nbins = (int)floor(max / unit + 0.5) + 1;
    }
    b->edges = malloc(sizeof *b->edges * (size_t)(b->nbins + 1));
    if (!b->edges)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    for (int i = 0; i <= b->nbins; i++)
        b->edges[i] = b->rule == FS_BINS_EDGES    ? edges[i]
                      : b->rule == FS_BINS_LINEAR ? i * b->width
                                                  : (i == 0 ? 0.0 : (i - 0.5) * unit);
    if (b->rule == FS_BINS_LINEAR)
        b->edges[b->nbins] = max;
    return FS_OK;
}

void fs_bins_free(fs_bins *b)
{
    free(b->edges);
    b->edges = NULL;
}

int fs_bins_of(const fs_bins *b, double x)
{
    if (b->rule == FS_BINS_SHELLS)
        return (int)floor(x / b->unit + 0.5);
    if (b->rule == FS_BINS_LINEAR) {
        int i = b->width > 0 ? (int)floor(x / b->width) : 0;
        return i < b->nbins ? i : b->nbins - 1;
    }
    const double *e = b->edges;
    if (x < e[0] || x >= e[b->nbins])
        return -1;
    int lo = 0, hi = b->nbins; /* e[lo] <= x < e[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (e[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

fs_status fs_bins_group_attrs(fs_h5_output *o, const fs_kgrid *g, const char *convention,
                              const char *inputs)
{
    double box[FS_LAYOUT_MAX_DIMS];
    int64_t naxes = fs_kgrid_lengths(g, box), axes[FS_LAYOUT_MAX_DIMS], k = 0;
    for (int a = 0; a < g->ndim; a++)
        if (g->transformed[a])
            axes[k++] = a;
    fs_status st = fs_h5_output_attr_string(o, "convention", convention);
    if (st == FS_OK)
        st = fs_h5_output_attr_string(o, "inputs", inputs);
    if (st == FS_OK)
        st = fs_h5_output_attr_string(o, "fftshard_version", PACKAGE_VERSION);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(o, "axes", (int)naxes, axes);
    if (st == FS_OK)
        st = fs_h5_output_attr_numbers(o, "box_size", 1, &naxes, FS_DTYPE_FLOAT64, box);
    return st;
}
