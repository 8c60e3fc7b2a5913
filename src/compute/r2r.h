/* SPDX-License-Identifier: GPL-3.0-or-later */
/* r2r: FFTW's real-to-real plans for the cosine and sine axes of fft.c's
 * R2R operation (transform.h), and scipy's orthogonalizing factors around
 * them. A value is a real of the working array, or a complex value whose
 * two parts are transformed alike (comps 2), as scipy.fft transforms
 * complex input. Private to compute/: fft.c plans, runs and frees them
 * (fftw_destroy_plan, fftwf_destroy_plan). Owns nothing. */
#ifndef FS_R2R_H
#define FS_R2R_H

#include "core/dtype.h"
#include "core/layout.h"
#include "plan/transform.h"

/* howmany lines of n values each, dist values apart, transformed along
 * them as `kind` (FFTW's REDFT and RODFT kinds), in place on data. NULL
 * when FFTW gives no plan. */
void *fs_r2r_plan_lines(fs_precision prec, fs_r2r kind, int n, int howmany, int dist, int comps,
                        void *data, unsigned flags);

/* Every axis of spec on box in one plan (FFTW's guru interface: the
 * measuring planners), in place on data; *flops (out) 2.5 N log2 n per
 * axis and part. NULL when FFTW gives no plan. */
void *fs_r2r_plan_box(fs_precision prec, const fs_op_spec *spec, const fs_box *box, void *data,
                      unsigned flags, double *flops);

/* Run one of these plans in place on data (any array of the planned one's
 * alignment). */
void fs_r2r_execute(fs_precision prec, void *plan, void *data);

/* --norm=ortho: the values at the first and last index of each axis of
 * spec on box multiplied by fs_r2r_ortho_edges' factors: the input's
 * (pre), else the output's. Nothing without spec->ortho. */
void fs_r2r_scale_edges(const fs_op_spec *spec, const fs_box *box, fs_precision prec, void *data,
                        int pre);

/* The bytes of one value of an operation's box: a real (R2R and SCALE on
 * a real working array, spec->reals) or a complex value. */
size_t fs_r2r_value_bytes(const fs_op_spec *spec, fs_precision prec);

#endif
