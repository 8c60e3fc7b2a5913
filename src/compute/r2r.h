/* SPDX-License-Identifier: GPL-3.0-or-later */
/* r2r: the plans of the cosine and sine axes of fft.c's R2R operation
 * (transform.h), and scipy's orthogonalizing factors around them: FFTW's
 * real-to-real kinds, or dctfft's complex FFTs for the kinds and lengths
 * of fs_r2r_fast. A value is a real of the working array, or a complex
 * value whose two parts are transformed alike (comps 2), as scipy.fft
 * transforms complex input. Private to compute/: fft.c plans, runs and
 * frees them (fs_r2r_plan_free). Owns nothing else. */
#ifndef FS_R2R_H
#define FS_R2R_H

#include "core/dtype.h"
#include "core/layout.h"
#include "plan/transform.h"

typedef struct fs_r2r_plan fs_r2r_plan;

/* howmany lines of n values each, dist values apart, transformed along
 * them as spec's kind of box axis `axis`, in place on data. NULL when
 * FFTW gives no plan. */
fs_r2r_plan *fs_r2r_plan_lines(fs_precision prec, const fs_op_spec *spec, int axis, int n,
                               int howmany, int dist, void *data, unsigned flags);

/* Every axis of spec on box in one plan (FFTW's guru interface: the
 * measuring planners), in place on data; *flops (out) 2.5 N log2 n per
 * axis and part. NULL when FFTW gives no plan. */
fs_r2r_plan *fs_r2r_plan_box(fs_precision prec, const fs_op_spec *spec, const fs_box *box,
                             void *data, unsigned flags, double *flops);

/* Whether spec on box runs axis by axis (fft.c's passes of
 * fs_r2r_plan_lines) under the measuring planners too: when an axis goes
 * to dctfft's complex FFTs, which FFTW's one plan of all axes
 * (fs_r2r_plan_box) would run on its scalar r2r codelets. */
int fs_r2r_fast_axes(const fs_op_spec *spec, const fs_box *box);

/* Run one of these plans in place on data (any array of the planned one's
 * alignment); out is data (FFTW's new-array execute's arguments). */
void fs_r2r_execute(fs_r2r_plan *p, void *data, void *out);

void fs_r2r_plan_free(fs_r2r_plan **pp);

/* --norm=ortho: the values at the first and last index of each axis of
 * spec on box multiplied by fs_r2r_ortho_edges' factors: the input's
 * (pre), else the output's. Nothing without spec->ortho. */
void fs_r2r_scale_edges(const fs_op_spec *spec, const fs_box *box, fs_precision prec, void *data,
                        int pre);

/* The bytes of one value of an operation's box: a real (R2R and SCALE on
 * a real working array, spec->reals) or a complex value. */
size_t fs_r2r_value_bytes(const fs_op_spec *spec, fs_precision prec);

#endif
