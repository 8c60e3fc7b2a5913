/* SPDX-License-Identifier: GPL-3.0-or-later */
/* dctfft: DCT and DST of types II and III on lines of values, through
 * FFTW's complex FFT (Makhoul's reordering) instead of its r2r kinds,
 * which have no SIMD codelets (fs_r2r_fast says which lines). The same
 * unnormalized sums as scipy.fft's (fftshard(1), COSINE AND SINE
 * TRANSFORMS). Two real lines go as one complex line; a complex value's
 * line is one. Private to compute/: r2r.c makes, runs and frees these
 * (fs_dctfft_new, fs_dctfft_free); a plan owns its buffers and FFTW plan. */
#ifndef FS_DCTFFT_H
#define FS_DCTFFT_H

#include "core/dtype.h"
#include "plan/transform.h"

typedef struct fs_dctfft fs_dctfft;

/* howmany lines of n values (comps reals each: 1 reals, 2 complex), dist
 * values apart, transformed along them as `kind` (fs_r2r_fast's kinds)
 * with FFTW's planner flags (the planner touches only the plan's own
 * block). NULL when FFTW gives no plan or memory runs out. */
fs_dctfft *fs_dctfft_new(fs_precision prec, fs_r2r kind, int64_t n, int64_t howmany,
                         int64_t dist, int comps, unsigned flags);

/* The planned lines at data, in place. */
void fs_dctfft_execute(fs_dctfft *p, void *data);

void fs_dctfft_free(fs_dctfft **pp);

#endif
