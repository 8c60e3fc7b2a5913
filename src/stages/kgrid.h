/* SPDX-License-Identifier: GPL-3.0-or-later */
/* kgrid: the wave vector of every element of a forward transform's result.
 *
 * The one definition of k (fftshard(1), SPECTRA and OPERATORS): element
 * [j0, j1, ...] of the forward result has k_a = 2 pi f_a / L_a over the
 * transformed axes a, f_a = numpy.fft.fftfreq(n_a, 1/n_a)[j_a] (so the
 * Nyquist index n_a/2 of an even axis has f_a = -n_a/2), L_a the box length
 * (--box-size or the inputs' box_size attribute, fs_box_lengths_resolve;
 * default n_a; a zero-padded axis keeps the input's spacing); batch axes
 * have k_a = 0. A rank's part of the
 * result is its last-stage box in the working array, whose axes are the
 * input's (the half spectrum of --real holds j = 0 .. n/2 along its real
 * axis), except the 1-D four-step's, where a rank holds k1 = 0 .. n1-1 by
 * its k2 range and element [k1, i2] is frequency index k1 n2 + start + i2
 * (transform.h): fs_kgrid_fold_index says which. Pure arithmetic; owns
 * nothing. */
#ifndef FS_KGRID_H
#define FS_KGRID_H

#include <stdint.h>

#include "core/errors.h"
#include "core/optable.h"
#include "core/layout.h"
#include "io/h5probe.h"
#include "plan/transform.h"

/* --box-size: the box length of each transformed axis in increasing axis
 * order (n 0: each axis's length; 1: the same for all; FS_BOX_GRID:
 * --box-size=grid, each axis's length whatever the inputs record). */
typedef struct fs_box_lengths {
    int n;
    double L[FS_LAYOUT_MAX_DIMS];
} fs_box_lengths;

#define FS_BOX_GRID (-1)

/* --box-size's handler (optable.h): a positive length, or one per
 * transformed axis, or "grid", into the fs_box_lengths field. */
fs_status fs_box_lengths_option(const fs_opt *o, const char *arg, void *section);

/* The box lengths of a run, the one place every stage's grid takes them
 * from (fftshard(1), --box-size): --box-size's when given; none with
 * --box-size=grid; else the "box_size" attribute of the INPUTs' datasets
 * (fs_input_info's box_n: one length, one per axis of the dataset in its
 * file, a slice keeping the length of a cell, or one per transformed
 * axis); else none. *out (n 0 for none) has one length per transformed
 * axis of the n INPUTs' transforms ts; from (out, size bytes) says whence:
 * "--box-size", "the box_size attribute of FILE:DATASET" or "". Lengths
 * agree within a relative 1e-6 (a float32 attribute's rounding).
 * FS_ERR_USAGE naming both when --box-size disagrees with an attribute, or
 * gives a count of lengths that is neither one nor the transformed axes';
 * FS_ERR_INPUT when two INPUTs' attributes disagree, or when one holds no
 * lengths for its dataset and --box-size is not given. */
fs_status fs_box_lengths_resolve(const fs_box_lengths *given, int n, const fs_location *inputs,
                                 const fs_input_info *infos, const fs_transform *const *ts,
                                 fs_box_lengths *out, char *from, size_t size);

typedef struct fs_kgrid {
    int ndim;                              /* the input's */
    int64_t n[FS_LAYOUT_MAX_DIMS];         /* its shape */
    int transformed[FS_LAYOUT_MAX_DIMS];
    fs_r2r kind[FS_LAYOUT_MAX_DIMS];       /* --boundary's forward kind of each axis:
                                              FS_AXIS_FFT, FS_DST2 or FS_DCT2 */
    double L[FS_LAYOUT_MAX_DIMS];          /* box length of each transformed axis (zero
                                              padded: the input's at its spacing) */
    int64_t m[FS_LAYOUT_MAX_DIMS];         /* the points of each axis read from the input (n
                                              but for --pad: transform.h's read_shape) */
    int box_given;                         /* a box: --box-size or the inputs' box_size */
    int naxes;                             /* transformed axes */
} fs_kgrid;

/* The grid of t's result with the box lengths box. FS_ERR_USAGE naming
 * --box-size for a count that is neither 0, 1 nor the transformed axes'. */
fs_status fs_kgrid_init(fs_kgrid *g, const fs_transform *t, const fs_box_lengths *box);

/* The box length L_a of each transformed axis, in increasing axis order,
 * into box (FS_LAYOUT_MAX_DIMS of room): returns their count. */
int fs_kgrid_lengths(const fs_kgrid *g, double *box);

/* numpy.fft.fftfreq(n, 1/n)[j]. */
int64_t fs_kgrid_freq(int64_t j, int64_t n);

/* k_a of index j along input axis a (0 for a batch axis): 2 pi f / L_a;
 * along a wall (--boundary) pi (j + 1) / L_a (Dirichlet, DST-II) or
 * pi j / L_a (Neumann, DCT-II), L_a the distance between the walls. */
double fs_kgrid_k(const fs_kgrid *g, int a, int64_t j);

/* k_a as a derivative sees it (--apply's deriv, --vector): fs_kgrid_k,
 * but 0 on the Nyquist plane j = n_a / 2 of an even axis. */
double fs_kgrid_deriv_k(const fs_kgrid *g, int a, int64_t j);

/* k^2 of the n elements of a line along input axis `axis` of an ndim-D
 * grid: k2[j] the sum of the k_a^2 in increasing axis order, as the
 * documented definition sums them (numpy's kx**2 + ky**2 + ...), from
 * q[a], the k_a^2 of every other axis a (q[axis] unused), and ql[j], the
 * line's own. The one place k^2 is summed: rounding depends on the order,
 * and a cut at exactly a mode's |k| (--apply=sharpk) keeps the mode only
 * if every path (a rank's rows, gathered lines along any axis, the
 * four-step) gets the same bits as the definition. */
void fs_kgrid_k2_line(const double *q, int ndim, int axis, const double *ql, int64_t n,
                      double *k2);

/* The largest k^2 of the grid: the sum of k_a(n_a / 2)^2, along a wall
 * k_a(n_a - 1)^2 (inf when it overflows). */
double fs_kgrid_k2max(const fs_kgrid *g);

/* The smallest k^2 of the grid but k = 0's: the least k_a(1)^2 over the
 * transformed axes longer than 1, k_a(0)^2 along a Dirichlet wall
 * (INFINITY when there is none; 0 when it underflows). */
double fs_kgrid_k2min(const fs_kgrid *g);

/* The largest |k| of the grid: sqrt(fs_kgrid_k2max). */
double fs_kgrid_kmax(const fs_kgrid *g);

/* The fundamental 2 pi / max L_a. */
double fs_kgrid_kf(const fs_kgrid *g);

/* The 1-D four-step result (t->fold): the frequency index of element
 * [k1, i2] of a rank's box `last` (its k2 range). */
int64_t fs_kgrid_fold_index(const fs_transform *t, const fs_box *last, int64_t k1, int64_t i2);

#endif
