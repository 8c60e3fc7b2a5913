/* SPDX-License-Identifier: GPL-3.0-or-later */
/* bins: the three ways a spectrum bins |k| and the correlation function
 * bins r, and which bin a value falls in: shells one unit wide centred on
 * the multiples of the unit (k_f, or the largest cell), N equal bins from 0
 * to the largest value (the last one closed above), or the half-open
 * [e_i, e_i+1) of explicit edges (fftshard(1), --bins and --r-bins). The
 * spectra decide the lattice's exact points by their own integer rule
 * before they come here. Owns nothing. */
#ifndef FS_BINS_H
#define FS_BINS_H

typedef enum fs_bin_rule { FS_BINS_SHELLS, FS_BINS_LINEAR, FS_BINS_EDGES } fs_bin_rule;

/* The bin of x >= 0 (-1: outside every bin): FS_BINS_SHELLS by x / unit
 * rounded to the nearest, FS_BINS_LINEAR by x / width (at most nbins - 1),
 * FS_BINS_EDGES by the edges (nbins + 1 of them, increasing). */
int fs_bin_index(fs_bin_rule rule, double x, double unit, double width, int nbins,
                 const double *edges);

#endif
