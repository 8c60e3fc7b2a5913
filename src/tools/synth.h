/* SPDX-License-Identifier: GPL-3.0-or-later */
/* synth: synthetic inputs for demos, tests and benchmarks.
 *
 * Values depend only on the seed and the global index of an element, never
 * on how the array is split, so fftshard-mkdata writes the same file on any
 * number of ranks. Two kinds: uniform noise in [-1, 1), and a sum of plane
 * waves whose spectrum is known exactly. */
#ifndef FS_SYNTH_H
#define FS_SYNTH_H

#include <stdint.h>
#include "io/h5probe.h"
#include "core/layout.h"

#define FS_SYNTH_MAX_WAVES 64

typedef struct fs_synth {
    uint64_t seed;
    int nwaves;                                   /* 0: noise */
    int ndim;
    int64_t shape[FS_LAYOUT_MAX_DIMS];
    int64_t k[FS_SYNTH_MAX_WAVES][FS_LAYOUT_MAX_DIMS]; /* wave vectors, 0 <= k < shape */
    double amp_re[FS_SYNTH_MAX_WAVES], amp_im[FS_SYNTH_MAX_WAVES];
} fs_synth;

/* Set up s for the given shape: draws the waves from the seed when nwaves > 0. */
void fs_synth_init(fs_synth *s, int ndim, const int64_t *shape, uint64_t seed, int nwaves);

/* Fill `box` (row-major) with elements of type t (float32, float64,
 * complex64 or complex128). Real types get the real part of the waves. */
void fs_synth_fill(const fs_synth *s, const fs_box *box, fs_dtype t, void *out);

/* Element i of `out` (type t) set to re (+ im i for complex types; the
 * integer type is stored as float64, as fftshard reads it). */
void fs_synth_store(fs_dtype t, void *out, int64_t i, double re, double im);

/* A unit Gaussian charge rho = exp(-r^2 / (2 sigma^2)) / ((2 pi)^(d/2)
 * sigma^d) centred in the box of lengths L (d = ndim, 1 or 3; points at
 * (j + 1/2) L_a / n_a), or (potential) its free-space potential phi,
 * laplacian(phi) = rho: -erf(r / (sqrt 2 sigma)) / (4 pi r) in 3-D, its
 * limit -1 / (4 pi) sqrt(2 / pi) / sigma at r = 0; in 1-D (|x| / 2) erf(|x| /
 * (sqrt 2 sigma)) + sigma exp(-x^2 / (2 sigma^2)) / sqrt(2 pi). Into `box`
 * (row-major) of type t. */
void fs_synth_gaussian(int ndim, const int64_t *shape, const double *L, double sigma,
                       int potential, const fs_box *box, fs_dtype t, void *out);

/* The generator: a 64-bit mix of (seed, counter), uniform in [-1, 1). */
double fs_synth_uniform(uint64_t seed, uint64_t counter);

#endif
