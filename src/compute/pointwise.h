/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pointwise: the operations of a transform (transform.h's fs_op_spec) that
 * are loops of our own over a box's elements rather than FFTW plans: the
 * WINDOW of the first stage (--window: every element multiplied by the
 * product of the windows of its indices as the data is read, their values
 * tabulated per windowed axis when it is planned on its box, as domain.h
 * computes them), the four-step's TWIDDLE, SCALE, and the two halves of
 * the complex routes of real transforms (the Hermitian extension, the
 * imaginary parts zeroed). Each works in place on the row-major storage of
 * its box (complex elements of prec; FFTW's padded real rows for a WINDOW
 * with padded_rows). fft.h runs them as it runs its plans. Owns the
 * windows' tables. */
#ifndef FS_POINTWISE_H
#define FS_POINTWISE_H

#include "core/dtype.h"
#include "core/layout.h"
#include "plan/transform.h"

typedef struct fs_window_op fs_window_op;

/* The tables of `spec` (FS_OP_WINDOW) on `box` (global coordinates of
 * the working array). NULL when out of memory. */
fs_window_op *fs_window_op_new(const fs_op_spec *spec, const fs_box *box);
/* data, the box's storage, multiplied in place. */
void fs_window_op_apply(const fs_window_op *w, fs_precision prec, void *data);
void fs_window_op_free(fs_window_op **w);

/* C2R_VIA_C2C: along the real axis of every line, X[m] = conj(X[n - m]) for
 * m past n/2 (n spec->real_len). */
void fs_pointwise_hermitian(const fs_op_spec *spec, const fs_box *b, fs_precision prec, void *data);
/* R2C_VIA_C2C: the imaginary parts zeroed. */
void fs_pointwise_zero_imag(const fs_box *b, fs_precision prec, void *data);
/* TWIDDLE: the four-step factor exp(sign 2 pi i j1 k2 / N) (transform.h). */
void fs_pointwise_twiddle(const fs_op_spec *spec, const fs_box *b, fs_precision prec, void *data);
/* SCALE: every element times f. */
void fs_pointwise_scale(double f, const fs_box *b, fs_precision prec, void *data);

#endif
