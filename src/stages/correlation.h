/* SPDX-License-Identifier: GPL-3.0-or-later */
/* correlation: the stage of --correlation-function, the two-point
 * correlation function xi(r) binned on the distributed result
 * (fs_stage_correlation, stage.h).
 *
 * The definition (fftshard(1), CORRELATION FUNCTION): C = ifftn(|fftn(x)|^2)
 * / N over the transformed axes (N their points; numpy's norms whatever
 * --norm says), the circular autocorrelation of the input as given (no mean
 * is subtracted: the user passes the overdensity); with --cross
 * C = ifftn(fftn(a) conj(fftn(b))) / N of the two inputs. Element d of C is
 * the separation d_a = fftfreq(n_a, 1/n_a)[j_a] (the minimum image, d_a in
 * [-n_a/2, n_a/2)), r = sqrt(sum_a (h_a d_a)^2) with the cell h_a = L_a /
 * n_a (1 without --box-size). xi of a bin is the mean of Re C over its
 * cells; batch axes add cells (each batch index is one more sample), and
 * several inputs without --cross add their C (the pair of their summed
 * power spectrum). Bins (--r-bins): shells one largest cell h wide (bin i
 * holds floor(r / h + 1/2) = i), N equal bins up to the largest r, or
 * edges, each [E_i, E_i+1).
 *
 * The work: after the forward transform and the write, the result in its
 * last layout is made the product |X|^2 (or X_a conj X_b, X_a the first
 * INPUT's result the run keeps for --cross) times the scale that gives C,
 * the compute plan's inverse takes it back to the first layout, and every
 * rank bins the real-space values it holds; one reduction sums the bins.
 * The stage owns the bins and their sums; the kept copy and the buffers
 * are the run's. */
#ifndef FS_CORRELATION_H
#define FS_CORRELATION_H

#include "stages/bins.h"

/* The options of the stage. */
typedef struct fs_correlation_options {
    int on;                 /* --correlation-function */
    fs_bins_option bins;    /* --r-bins */
} fs_correlation_options;

#endif
