/* SPDX-License-Identifier: GPL-3.0-or-later */
/* combine: the stage of the combined spectra, the forward results of one or
 * two INPUTs multiplied element by element in the layout the forward
 * transform ends in (no exchange, no gather), then brought back by the
 * inverse of the round trip (transform.h) and written as one result
 * (fs_stage_combine, stage.h):
 *   --correlate        ifftn(X_a conj X_b) / N  (one INPUT: X_a conj X_a)
 *   --convolve         ifftn(X_a X_b)
 *   --phase-correlate  ifftn(R / |R|), R = X_a conj X_b (|R| = 0: 0), and
 *                      the position of the largest real part, as the shift
 *                      of a against b (numpy's signed convention)
 * with X = fftn over the transformed axes, N their number of points.
 * --mode=full, same or valid makes --convolve and --correlate linear, as
 * scipy.signal.fftconvolve and scipy.signal.correlate(method='fft'): both
 * INPUTs zero padded to one FFT-friendly length of at least n_a + n_b - 1
 * per transformed axis (the stage's domain), the product shifted in phase
 * so that the part the mode keeps starts the field, which is written from
 * there. The first INPUT's result is the one the run keeps while the
 * second is transformed. The stage owns the result's path in OUTPUT and the
 * phase correlation's peak. */
#ifndef FS_COMBINE_H
#define FS_COMBINE_H

typedef enum fs_combine_op {
    FS_COMBINE_NONE,
    FS_COMBINE_CORRELATE,
    FS_COMBINE_CONVOLVE,
    FS_COMBINE_PHASE,
} fs_combine_op;

/* --mode: circular (the default), or scipy's linear modes. */
typedef enum fs_combine_mode {
    FS_COMBINE_CIRCULAR,
    FS_COMBINE_FULL,
    FS_COMBINE_SAME,
    FS_COMBINE_VALID,
} fs_combine_mode;

/* The stage's options: the operation asked for, and how. */
typedef struct fs_combine_options {
    fs_combine_op op;
    fs_combine_mode mode;
    int mode_given;
} fs_combine_options;

#endif
