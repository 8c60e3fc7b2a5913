/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include "analysis/bins.h"

#include <math.h>

int fs_bin_index(fs_bin_rule rule, double x, double unit, double width, int nbins,
                 const double *edges)
{
    if (rule == FS_BINS_SHELLS)
        return (int)floor(x / unit + 0.5);
    if (rule == FS_BINS_LINEAR) {
        int b = width > 0 ? (int)floor(x / width) : 0;
        return b < nbins ? b : nbins - 1;
    }
    if (x < edges[0] || x >= edges[nbins])
        return -1;
    int lo = 0, hi = nbins; /* edges[lo] <= x < edges[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (edges[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}
