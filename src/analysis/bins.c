/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include "analysis/bins.h"

#include <math.h>
#include <stdlib.h>

fs_status fs_bins_make(fs_bins *b, int nedges, const double *edges, int n, double max,
                       double unit)
{
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
