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

#include "core/errors.h"
#include "io/h5io.h"
#include "stages/kgrid.h"

#define FS_MAX_EDGES 1025

/* What --bins (of |k|) or --r-bins (of r) asks for: n equal bins, or
 * nedges explicit edges (both 0: shells of one unit). */
typedef struct fs_bins_option {
    int n;
    int nedges;
    double edges[FS_MAX_EDGES];
} fs_bins_option;

/* NAME=N, NAME=E0,E1,... (increasing edges) or NAME=LO:HI:STEP into *b;
 * FS_ERR_USAGE naming the option. what: the value binned ("|k|", "r");
 * var: its letter in messages ("K", "R"). */
fs_status fs_bins_parse(const char *name, const char *arg, const char *what, const char *var,
                        fs_bins_option *b);

typedef enum fs_bin_rule { FS_BINS_SHELLS, FS_BINS_LINEAR, FS_BINS_EDGES } fs_bin_rule;

typedef struct fs_bins {
    fs_bin_rule rule;
    int nbins;
    double unit;   /* FS_BINS_SHELLS: the shells' width */
    double width;  /* FS_BINS_LINEAR: the bins' width */
    double *edges; /* nbins + 1, increasing */
} fs_bins;

/* The bins the option asks for: its explicit edges when it has some, else
 * its n equal bins from 0 to max when n > 0, else shells of `unit` up to
 * max (the caller bounds how many). FS_ERR_RUNTIME when out of memory. */
fs_status fs_bins_make(fs_bins *b, const fs_bins_option *opt, double max, double unit);
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
