/* SPDX-License-Identifier: GPL-3.0-or-later */
/* transform: what a run computes, decided before any data moves.
 *
 * From the input's shape and type, the options and the rank count it
 * derives the transform kind (c2c, r2c, c2r), the precision, the working
 * shape (the complex array the ranks hold: the halved axis counts n/2+1
 * where FFTW's padded real layout is used), the decomposition, the
 * operations of each stage, the output's shape and type, and how each rank's
 * boxes map onto the input and output files.
 *
 * The ranks form a P1 x P2 grid (rank = c1 * P2 + c2). A stage splits up to
 * two axes, one over each grid dimension; between stages one exchange moves
 * the split of one grid dimension to another axis, inside the ranks that
 * share the other coordinate. A transformed axis must be whole in some
 * stage; a batch axis (not transformed) never needs to be, so it may stay
 * split in every stage. A slab is a grid P x 1: a batch axis split (no
 * exchange), or a transformed axis then another (one exchange over all
 * ranks; axis 0 then a later one where that fills every rank). A pencil is
 * a P1 x P2 grid: two batch axes (no exchange), a batch axis over the rows
 * in every stage while the columns move a transformed axis to another (one
 * exchange), or three stages {x, y}, {x, z}, {y, z} with x, y transformed
 * (two exchanges, in rows then columns; axes 0, 1, 2 where that fills every
 * rank). Each transformed axis is transformed in the first stage where it
 * is whole (c2r's halved axis last).
 * A 1-D transform on several ranks is the four-step factorisation
 * N = n1 x n2 of Gupta et al.: a 2-D transform with twiddle factors between
 * the passes, read and written through strided selections, transposed in
 * place at the end so the output is in natural order. Pure arithmetic: no
 * MPI, no HDF5 calls, no command line: the planner takes a small request
 * (planner.h builds it once per run from the options and the input). */
#ifndef FS_TRANSFORM_H
#define FS_TRANSFORM_H

#include <stdint.h>
#include "core/dtype.h"
#include "core/errors.h"
#include "core/layout.h"
#include "io/h5probe.h"
#include "io/iomap.h"
#include "plan/domain.h"

#define FS_MAX_OPS 6
#define FS_MAX_STAGES 3
#define FS_GATHER (-2)   /* a stage's "axis": everything on rank 0 */

/* One local operation of a stage (compute/fft.h plans it), in place on the
 * row-major storage of a box of complex elements (complex64 or complex128
 * by precision). Kinds:
 *   C2C           complex transform of a set of axes (the others are batches);
 *   R2C, C2R      real-to-complex along the last storage axis, in FFTW's
 *                 padded in-place layout (a row of n reals in the space of
 *                 n/2+1 complex), with complex transforms of other axes (R2C);
 *   C2R_VIA_C2C   c2r along any axis of a full-length complex box: the
 *                 Hermitian extension of the first n/2+1 values, a complex
 *                 inverse transform, the result in the real parts;
 *   R2C_VIA_C2C   its inverse: imaginary parts zeroed, a complex transform;
 *   TWIDDLE       the four-step factor exp(sign 2 pi i j1 k2 / N) of a 1-D
 *                 transform viewed as 2-D (axis 0 holds k2, axis 1 j1);
 *   TRANSPOSE     the 2-D storage transposed in place (FFTW's rank-0 plan);
 *   SCALE         every element multiplied by a factor;
 *   WINDOW        every element multiplied by the windows of its indices
 *                 (--window), as the data is read. */
typedef enum fs_op_kind {
    FS_OP_C2C,
    FS_OP_R2C,
    FS_OP_C2R,
    FS_OP_C2R_VIA_C2C,
    FS_OP_R2C_VIA_C2C,
    FS_OP_TWIDDLE,
    FS_OP_TRANSPOSE,
    FS_OP_SCALE,
    FS_OP_WINDOW,
} fs_op_kind;

typedef struct fs_op_spec {
    fs_op_kind kind;
    int axes[FS_LAYOUT_MAX_DIMS]; /* C2C, R2C: the axes transformed */
    int sign;                     /* -1 forward, +1 backward (C2C, TWIDDLE) */
    int real_axis;                /* R2C, C2R, *_VIA_C2C: the halved axis */
    int64_t real_len;             /* its length n as reals */
    int64_t twiddle_n;            /* TWIDDLE: N of the 1-D transform */
    double factor;                /* SCALE */
    /* C2C, R2C in the first stage of a zero-padded transform: the elements
     * at index limit[k] or beyond along axis k (global) are zeros when it
     * starts, so lines through them are left alone until an axis of the
     * operation transforms them (0: no limit) */
    int64_t limit[FS_LAYOUT_MAX_DIMS];
    /* WINDOW: every element times the product over the axes of window[k]
     * of length wlen[k] at its global index (the read's values) */
    fs_window window[FS_LAYOUT_MAX_DIMS];
    int64_t wlen[FS_LAYOUT_MAX_DIMS];
    int window_sym;
    int64_t fold_inner;           /* WINDOW of the four-step: the box is of the view
                                     (n / n1, n1), element [j0, j1] index j0 n1 + j1 */
    int padded_rows;              /* WINDOW on FFTW's padded real rows (R2C): along real_axis
                                     the reals 0 .. real_len - 1 */
} fs_op_spec;

/* What to compute, independent of how it was asked for. */
typedef struct fs_transform_request {
    int ndim;
    int64_t shape[FS_LAYOUT_MAX_DIMS];   /* the array transformed: the input's, or zero padded
                                            or cut to --pad's (or a stage's) lengths */
    int64_t data_shape[FS_LAYOUT_MAX_DIMS]; /* the input's own: its part of shape is read, the
                                            rest is zeros (numpy.fft.fftn's s) */
    int64_t keep_shape[FS_LAYOUT_MAX_DIMS]; /* round_trip: the part of the field written, from
                                            index 0 (0: the part read) */
    fs_window window[FS_LAYOUT_MAX_DIMS]; /* --window of each axis (forward: applied as the
                                            input is read; inverse: the record of it) */
    int window_sym;                      /* the symmetric form (else periodic) */
    fs_dtype in_dtype;
    char in_name[FS_INPUT_NAME_MAX];     /* the input (FILE:/DATASET[SLICE]), for messages */
    const char *in_type_name;            /* its type as stored, for messages */
    int transform_axis[FS_LAYOUT_MAX_DIMS]; /* nonzero: axis k is transformed */
    int naxes;                           /* the transformed axes in the order asked (numpy's */
    int axes[FS_LAYOUT_MAX_DIMS];        /* axes argument); naxes 0: increasing */
    int real_axis;                       /* --real: the halved axis (numpy: the last one given) */
    int real, inverse;
    fs_precision prec;
    fs_norm norm;
    int64_t last_size;                   /* c2r: the real length (0: 2 (m - 1)) */
    int last_size_given;                 /* last_size came from --last-size, not the input */
    fs_decomp decomp;
    int grid[2];                         /* --grid (0 0: choose) */
    int nranks;
    int hooks;                           /* the strategy overlaps block work (fs_block_hooks) */
    int round_trip;                      /* --apply: forward, operate, inverse; the result is
                                            real space, of the input's shape */
} fs_transform_request;

typedef struct fs_transform {
    fs_kind kind;
    fs_precision prec;
    int sign;                        /* FFTW_FORWARD (-1) or FFTW_BACKWARD (+1) */
    fs_dtype in_dtype;               /* the input's element type */
    int in_ndim;
    int64_t in_shape[FS_LAYOUT_MAX_DIMS];   /* the array transformed (zero padded or cut) */
    int64_t data_shape[FS_LAYOUT_MAX_DIMS]; /* the input's own */
    int64_t read_shape[FS_LAYOUT_MAX_DIMS]; /* the part of in_shape read, from index 0: the
                                               least of the two; the rest starts as zeros */
    int resized;                     /* in_shape is not the input's own (--pad) */
    fs_window window[FS_LAYOUT_MAX_DIMS]; /* of each input axis (FS_WINDOW_NONE: none) */
    int window_sym;
    int windowed;                    /* some window is applied: the first operation (WINDOW) */
    int transform_axis[FS_LAYOUT_MAX_DIMS]; /* in input axes */
    int naxes;                       /* the transformed axes in the order asked */
    int axes[FS_LAYOUT_MAX_DIMS];
    fs_norm norm;
    int real_axis;                   /* r2c / c2r: the halved axis; -1 for c2c */
    int64_t real_len, half_len;      /* n and n/2+1 along it */
    int padded;                      /* FFTW's padded real layout (else via complex) */
    /* the working complex array */
    int ndim;
    int64_t shape[FS_LAYOUT_MAX_DIMS];
    int fold;                        /* 1-D four-step: shape is (n2, n1) */
    int64_t n1, n2;
    /* the decomposition */
    int pencil;                      /* 0: slab (or no exchange) */
    int grid[2];                     /* P1 x P2 */
    int nstages;                     /* 1, 2 or 3: exchanges = nstages - 1 */
    int split[FS_MAX_STAGES][2];     /* axis split over each grid dimension, -1 none */
    int exchanges;                   /* nstages > 1 */
    int from_axis, to_axis;          /* slab: split axes; to_axis -1: gathered on rank 0 */
    /* the operations of every stage (specs; boxes come later) */
    fs_op_spec ops[FS_MAX_STAGES][FS_MAX_OPS];
    int nops[FS_MAX_STAGES];
    int hook_axes_pre[FS_LAYOUT_MAX_DIMS], hook_axes_post[FS_LAYOUT_MAX_DIMS];
    int hooks;                       /* overlapping strategies get block work */
    int hook_twiddle;                /* the four-step's twiddle as the block work */
    /* the output: the spectrum, or with round_trip the field again, written
     * from the first stage's boxes through the read map */
    int round_trip;
    int out_ndim;
    int64_t out_shape[FS_LAYOUT_MAX_DIMS];
    fs_dtype out_type;
    double scale;
    double nominal_flops;            /* 5 N log2 N (2.5 for real transforms) */
} fs_transform;

/* Decide everything for rq->nranks ranks. FS_ERR_USAGE / FS_ERR_INPUT with
 * a message when the request does not fit the input. */
fs_status fs_transform_plan(const fs_transform_request *rq, fs_transform *t);

/* The grid dimension an exchange (from stage s to s+1) moves: the ranks
 * taking part share the other grid coordinate. */
int fs_transform_exchange_dim(const fs_transform *t, int s);

/* The box of the rank at grid coordinates (c1, c2) in stage s, from the
 * arithmetic block split (fs_split_block). pipeline computes the same
 * starts with the parallel prefix broadcast (decomp.h); the dry run and the
 * tests use this. */
fs_box fs_transform_box(const fs_transform *t, int s, int c1, int c2);

/* The file maps of a rank's boxes (from: the read, of read_shape's part;
 * to: the write, which with round_trip is a first-stage box written as the
 * read map reads it, of out_shape's part). */
fs_io_map fs_transform_read_map(const fs_transform *t, const fs_box *from);
fs_io_map fs_transform_write_map(const fs_transform *t, const fs_box *to);

#endif
