/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grf: a Gaussian random field with a power-law spectrum, or one
 * tabulated, computed by the ranks together (fftshard-mkdata --power-law,
 * --power-table).
 *
 * The definition is fftshard's spectrum convention: the wave vector of
 * element [j0, j1, ...] is k_a = 2 pi f_a / L_a with f_a the integer
 * frequency of j_a (numpy.fft.fftfreq(n_a, 1/n_a)), |k| its norm, and the
 * field's expected power spectrum is
 *     P(k) = <|X(k)|^2> V / N^2 = A |k|^n      (P = 0 at k = 0),
 * or with a table P(k) interpolated linearly between its rows (k > 0),
 * X the unnormalised forward transform, V = prod L_a, N the number of points.
 *
 * Construction: the Fourier coefficients are drawn directly, each a complex
 * Gaussian from the seed and the global index of its mode (the pair k, -k
 * shares one draw, so the field is real), scaled by sqrt(P N^2 / V), and the
 * real field is their inverse transform. That is the same distribution as
 * white Gaussian noise filtered in Fourier space, for one inverse transform
 * instead of a forward and an inverse one.
 *
 * The inverse transform is a distributed slab transform of its own rather
 * than fftshard's transform modules, for one reason: the file must be the
 * same, bit for bit, on any rank count. FFTW's plans for boxes of different
 * shapes (one rank's whole array, three ranks' slabs) add in different
 * orders, so their results differ in the last bits. Here every line along
 * an axis goes through one 1-D plan (FFTW_UNALIGNED, so its address does not
 * change the code path) and the axes are done in one fixed order, so every
 * value gets the same arithmetic however the array is split. The slabs move
 * with the exchange module (FS_DEFAULT_STRATEGY), which only copies.
 *
 * Memory per rank: about twice this rank's part of the half spectrum
 * (n0 x ... x (n_last/2+1) complex128) for the transform and the exchange.
 * A 1-D field is computed whole on every rank (there is no axis to split). */
#ifndef FS_GRF_H
#define FS_GRF_H

#include <mpi.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/errors.h"
#include "io/table.h"
#include "core/layout.h"

typedef struct fs_grf {
    int ndim;
    int64_t shape[FS_LAYOUT_MAX_DIMS];
    double box_size[FS_LAYOUT_MAX_DIMS]; /* L_a, > 0 */
    double index;                        /* n */
    double amplitude;                    /* A, > 0 */
    uint64_t seed;
    const fs_table *table;               /* P(k) tabulated (NULL: A |k|^n); covers the grid */
} fs_grf;

/* The smallest nonzero and the largest |k| of the grid of shape and box
 * lengths (kmin 0 when every axis has length 1). */
void fs_grf_k_range(int ndim, const int64_t *shape, const double *box, double *kmin,
                    double *kmax);

/* Collective: fill `out` (row-major, fs_box_elems(box) elements of type t)
 * with this rank's slab of the field, where box must be
 * fs_box_split(ndim, shape, 0, nranks, rank). Real types get the field;
 * complex types the field in the real parts and zero imaginary parts.
 * Returns this rank's own status (message set); a rank that fails goes on to
 * the agreement before the exchange, as the others do, so no rank waits for
 * it there, and the caller must agree the status (fs_error_agree). */
fs_status fs_grf_fill(MPI_Comm comm, const fs_grf *g, const fs_box *box, fs_dtype t, void *out);

#endif
