/* SPDX-License-Identifier: GPL-3.0-or-later */
/* bins: the three ways a spectrum bins |k| and the correlation function
 * bins r, and which bin a value falls in: shells one unit wide centred on
 * the multiples of the unit (k_f, or the largest cell), N equal bins from 0
 * to the largest value (the last one closed above), or the half-open
 * [e_i, e_i+1) of explicit edges (fftshard(1), --bins and --r-bins). The
 * spectra decide the lattice's exact points by their own integer rule
 * before they come here, and the attributes every binned group carries.
 * Owns the edges. */
#ifndef FS_BINS_H
#define FS_BINS_H

#include "analysis/kgrid.h"
#include "core/errors.h"
#include "io/h5io.h"

typedef enum fs_bin_rule { FS_BINS_SHELLS, FS_BINS_LINEAR, FS_BINS_EDGES } fs_bin_rule;

typedef struct fs_bins {
    fs_bin_rule rule;
    int nbins;
    double unit;   /* FS_BINS_SHELLS: the shells' width */
    double width;  /* FS_BINS_LINEAR: the bins' width */
    double *edges; /* nbins + 1, increasing */
} fs_bins;

/* The bins the options ask for: the nedges explicit edges when nedges > 0,
 * else n equal bins from 0 to max when n > 0, else shells of `unit` up to
 * max (the caller bounds how many). FS_ERR_RUNTIME when out of memory. */
fs_status fs_bins_make(fs_bins *b, int nedges, const double *edges, int n, double max,
                       double unit);
void fs_bins_free(fs_bins *b);

/* The bin of x >= 0 (-1: outside every bin): shells by x / unit rounded to
 * the nearest, equal bins by x / width (at most nbins - 1), edges by the
 * edges. */
int fs_bins_of(const fs_bins *b, double x);

/* Collective: the attributes of a binned group (the spectra's, the
 * correlation function's) on o's current object: convention, inputs
 * ("FILE:DATASET, ..."), fftshard_version, and g's transformed axes with
 * their box lengths (axes, box_size). */
fs_status fs_bins_group_attrs(fs_h5_output *o, const fs_kgrid *g, const char *convention,
                              const char *inputs);

#endif
