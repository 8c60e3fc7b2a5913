/* SPDX-License-Identifier: GPL-3.0-or-later */
/* transform: what a run computes, decided before any data moves.
 *
 * From the input's shape and type, the options and the rank count it
 * derives the transform kind (c2c, r2c, c2r, r2r), the precision, the
 * working shape (the complex array the ranks hold: the halved axis counts
 * n/2+1 where FFTW's padded real layout is used; a real array for cosine
 * and sine axes alone on real input), the decomposition, the
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
 * (planner.h builds it once per run from the options and the input).
 *
 * Cosine and sine axes (r2r.c): each transformed axis has a kind
 * (fs_r2r: a Fourier axis, or scipy.fft's DCT or DST of type 1 to 4), in
 * the request and in fs_transform.r2r, which a stage reads to know its
 * axes (fs_r2r_angle: the frequency of each index). A cosine or sine axis
 * is transformed like a Fourier axis, in the first stage where it is
 * whole, by FFTW's r2r transforms (FS_OP_R2R) after the stage's complex
 * and real-to-complex transforms and before a complex-to-real one: on
 * complex values each part is transformed, as scipy.fft does. */
#ifndef FS_TRANSFORM_H
#define FS_TRANSFORM_H

#include <stddef.h>
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
 *   R2R           FFTW's real-to-real transforms of a set of axes (r2r[k]
 *                 the kind of axis k), on reals or on each part of complex
 *                 values; with ortho, scipy's orthogonalizing factors on the
 *                 first or last index of each axis (fs_r2r_ortho_edges);
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
    FS_OP_R2R,
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
    fs_r2r r2r[FS_LAYOUT_MAX_DIMS]; /* R2R: the kind computed along each axis of axes (an
                                     inverse computes the inverse kind: fs_r2r_inverse) */
    int ortho;                    /* R2R: --norm=ortho's orthogonalizing factors */
    int reals;                    /* R2R, SCALE, WINDOW: the box holds reals, not complex
                                     values */
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

/* Whether op is a transform of the axes set in op->axes alone (C2C, R2R):
 * the operations the I/O overlap cuts into pieces (pieces.h). */
int fs_op_transforms_axes(const fs_op_spec *op);
/* The longest axis along which op's transform is the identity, which may
 * be left out: 1 for a complex transform, 0 for a cosine or sine (DCT-II of
 * one point doubles it). */
int64_t fs_op_identity_length(const fs_op_spec *op);

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
    int free_space;                      /* --boundary=free: shape is twice data_shape along
                                            every transformed axis (domain.h) */
    fs_dtype in_dtype;
    char in_name[FS_INPUT_NAME_MAX];     /* the input (FILE:/DATASET[SLICE]), for messages */
    const char *in_type_name;            /* its type as stored, for messages */
    int transform_axis[FS_LAYOUT_MAX_DIMS]; /* nonzero: axis k is transformed */
    int naxes;                           /* the transformed axes in the order asked (numpy's */
    int axes[FS_LAYOUT_MAX_DIMS];        /* axes argument); naxes 0: increasing */
    int real_axis;                       /* --real: the halved axis (numpy: the last one given;
                                            with cosine or sine axes the last Fourier one) */
    fs_r2r r2r[FS_LAYOUT_MAX_DIMS];      /* per axis: a transformed axis's kind (FS_AXIS_FFT
                                            for Fourier and batch axes) */
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
    int planes_last;                     /* a slab with an exchange ends split along axis 0 */
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
    int free_space;                  /* --boundary=free (the request's) */
    int transform_axis[FS_LAYOUT_MAX_DIMS]; /* in input axes */
    int naxes;                       /* the transformed axes in the order asked */
    int axes[FS_LAYOUT_MAX_DIMS];
    fs_r2r r2r[FS_LAYOUT_MAX_DIMS];  /* in input axes: the kind of each (FS_AXIS_FFT: a
                                        Fourier or batch axis); the forward's in both
                                        directions */
    fs_norm norm;
    int real_axis;                   /* r2c / c2r: the halved axis; -1 for c2c */
    int64_t real_len, half_len;      /* n and n/2+1 along it */
    int padded;                      /* FFTW's padded real layout (else via complex) */
    /* the working complex array */
    int ndim;
    int64_t shape[FS_LAYOUT_MAX_DIMS];
    fs_dtype work_type;              /* its elements: complex, or real (FS_R2R on real input) */
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

/* ----------------------------------------------------- cosine and sine axes
 * (r2r.c). Definitions: fftshard(1), COSINE AND SINE TRANSFORMS. */

/* Whether any of the first ndim kinds is a cosine or sine. */
int fs_r2r_any(const fs_r2r *r2r, int ndim);
/* The kind whose transform undoes k's up to a factor: DCT-II and DCT-III
 * (DST-II and DST-III) each other's, the others their own. */
fs_r2r fs_r2r_inverse(fs_r2r k);
/* The "logical" size N of kind k on n points, by which --norm scales:
 * 2(n-1) for DCT-I, 2(n+1) for DST-I, 2n for the others, n for a Fourier
 * axis. */
double fs_r2r_points(fs_r2r k, int64_t n);
/* The angle theta_j (radians per index) of output index j of kind k on n
 * points: its basis function is cos(theta_j (i + s)) (DCT) or sin(theta_j
 * (i + s)) (DST) of the input index i, s = 0 for DCT-I and DCT-III, 1/2
 * for types II and IV, 1 for DST-I and DST-III; theta_j = pi j/(n-1)
 * (DCT-I), pi j/n (DCT-II), pi (j+1)/(n+1) (DST-I), pi (j+1)/n (DST-II),
 * pi (j+1/2)/n (types III and IV). The Laplacian's eigenvalue on a grid of
 * spacing h is -(theta_j/h)^2, that of the second difference
 * -4 sin^2(theta_j/2)/h^2 (Dirichlet walls for DST-I/II, Neumann for
 * DCT-I/II). */
double fs_r2r_angle(fs_r2r k, int64_t n, int64_t j);
/* scipy's orthogonalizing factors of kind `computed` (FFTW's transform as
 * run: an inverse runs the inverse kind) under --norm=ortho: the input's
 * first and last values are multiplied by pre_first and pre_last before
 * the transform, the output's by post_first and post_last after it (1
 * where none: DCT-I sqrt(2) in and 1/sqrt(2) out at both ends; DCT-II the
 * first out, DCT-III the first in; DST-II the last out, DST-III the last
 * in). ortho 0: all 1. */
typedef struct fs_r2r_edges {
    double pre_first, pre_last, post_first, post_last;
} fs_r2r_edges;
fs_r2r_edges fs_r2r_ortho_edges(fs_r2r computed, int ortho);
/* Whether compute/ runs kind k on `lines` real lines (a complex value's
 * line counts two) of n points through a complex FFT (Makhoul's
 * reordering: FFTW's SIMD codelets) rather than FFTW's r2r kinds, which
 * run scalar codelets at about half the speed: DCT and DST of types II and
 * III up to FS_R2R_FAST_MAX_N points, two lines or more (a line alone
 * would leave half of each complex FFT idle: FFTW's kind is faster).
 * Longer lines keep FFTW's kinds, whose memory the dry run measured
 * (footprint.c). */
#define FS_R2R_FAST_MAX_N ((int64_t)1 << 16)
int fs_r2r_fast(fs_r2r k, int64_t n, int64_t lines);
/* Such a plan's lines of n complex values of complex_bytes each per block
 * (a complex line is a complex value's line or two real lines), at most
 * `lines`: about FS_R2R_FAST_BLOCK_BYTES, which stays in cache. */
#define FS_R2R_FAST_BLOCK_BYTES ((int64_t)32 * 1024)
int64_t fs_r2r_fast_block(int64_t n, int64_t lines, size_t complex_bytes);
/* The most memory one such plan on lines of n points holds: its block,
 * its n twiddle factors, two spare lines, and FFTW's complex plan (its
 * twiddles and buffers, about a line). */
int64_t fs_r2r_fast_bytes(int64_t n, size_t complex_bytes);
/* The kind t computes along input axis k (an inverse: the inverse kind). */
fs_r2r fs_transform_computed(const fs_transform *t, int k);
/* The product of the transformed axes' sizes by which --norm scales
 * (fs_r2r_points; the halved axis counts its real length). */
double fs_transform_points(const fs_transform *t);
/* The request's cosine and sine axes into t: their kinds, t's kind
 * (FS_R2R for cosine and sine axes alone) and working type (reals for real
 * input on cosine and sine axes alone); checked against the input
 * (FS_ERR_USAGE): DCT-I needs 2 points or more, --real a Fourier axis to
 * halve. */
fs_status fs_r2r_take_request(const fs_transform_request *rq, fs_transform *t);
/* The flops per point and log2 of the points of t's nominal count: 5 on
 * complex values, 2.5 on reals (a real FFT, cosine and sine axes of reals). */
double fs_transform_flop_rate(const fs_transform *t);
/* The transformed axes of rq that are Fourier axes. */
int fs_r2r_fourier_axes(const fs_transform_request *rq);
/* The operation of FFTW's r2r transforms of t along axes (transform.c's
 * stages). */
fs_op_spec fs_transform_r2r_op(const fs_transform *t, const int *axes);
/* The kinds of t->axes in their order, comma-separated ("dct2,fft,dst1"),
 * into buf; "" without a cosine or sine axis. */
void fs_transform_kinds_text(const fs_transform *t, char *buf, size_t size);

#endif
