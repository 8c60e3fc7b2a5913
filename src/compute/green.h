/* SPDX-License-Identifier: GPL-3.0-or-later */
/* green: the free-space Green's function of the Laplacian for --apply's
 * poisson with --boundary=free (fftshard(1), OPERATORS, Free space):
 * G(r) = |x| / 2 in 1-D, ln(r) / (2 pi) in 2-D, -1 / (4 pi r) in 3-D
 * (laplacian(G) = delta), sampled on the grid doubled along every axis as
 * Hockney and Eastwood do, G(0) its mean over the cell around 0, and its
 * discrete Fourier transform on that grid, times the cell volume. G is even
 * along every axis of the doubled grid, so that transform is the DCT-I of
 * its first n_a + 1 points along each axis (FFTW's REDFT00), real and even:
 * element [m_0, m_1, ...] of the doubled grid's transform is the table's
 * [min(m_a, 2 n_a - m_a)]. Every rank computes the whole table; on a cube
 * of one spacing G's symmetry in its axes leaves a third of the DCT work
 * and half the filling out. */
#ifndef FS_GREEN_H
#define FS_GREEN_H

#include <stdint.h>

#include "core/errors.h"

/* The table of d (1 to 3) axes of n[a] points each, spacing h[a], into a
 * new array (C order, prod (n[a] + 1) doubles; free() it). FS_ERR_RUNTIME
 * when out of memory or FFTW gives no plan. */
fs_status fs_green_table(int d, const int64_t *n, const double *h, double **out);

/* G's mean over the cell of sides h[0 .. d) centred on 0 (closed forms). */
double fs_green_cell_mean(int d, const double *h);

/* G at distance r > 0 in d dimensions. */
double fs_green_at(int d, double r);

#endif
