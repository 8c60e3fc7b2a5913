/* SPDX-License-Identifier: GPL-3.0-or-later */
/* dtype: the element types and the vocabulary of a transform, shared by
 * every module: the types fftshard reads and writes, the precision of the
 * arithmetic, the kind of transform and its normalisation, with their names
 * and sizes. Plain enums and pure functions: no MPI, no HDF5, no FFTW. */
#ifndef FS_DTYPE_H
#define FS_DTYPE_H

#include <stddef.h>

/* Element types fftshard reads and writes. Integers are converted to
 * float64 (or float32 in single precision) as they are read. */
typedef enum fs_dtype {
    FS_DTYPE_FLOAT32,
    FS_DTYPE_FLOAT64,
    FS_DTYPE_COMPLEX64,
    FS_DTYPE_COMPLEX128,
    FS_DTYPE_INTEGER,
} fs_dtype;

/* The precision of the arithmetic (and of the working array). */
typedef enum fs_precision { FS_DOUBLE, FS_SINGLE } fs_precision;

/* What a run computes: complex, real-to-complex, complex-to-real (the
 * Fourier axes; cosine and sine axes may come with any of them), or
 * cosine and sine axes alone (FS_R2R). */
typedef enum fs_kind { FS_C2C, FS_R2C, FS_C2R, FS_R2R } fs_kind;

/* The transform of one axis: a Fourier axis (FS_AXIS_FFT), or a cosine or
 * sine transform of scipy.fft's type 1 to 4 (--dct, --dst, --r2r). The
 * forward run's kind names the axis in both directions: an inverse of
 * FS_DCT2 computes scipy.fft.idct(type=2). */
typedef enum fs_r2r {
    FS_AXIS_FFT,
    FS_DCT1, FS_DCT2, FS_DCT3, FS_DCT4,
    FS_DST1, FS_DST2, FS_DST3, FS_DST4,
} fs_r2r;

/* --norm, numpy's names: which direction is scaled by 1/n. */
typedef enum fs_norm { FS_NORM_BACKWARD, FS_NORM_ORTHO, FS_NORM_FORWARD } fs_norm;

/* "float32", "complex128", "integer", ... */
const char *fs_dtype_name(fs_dtype t);
/* Bytes of one element of t in memory (integers are held as float64). */
size_t fs_dtype_bytes(fs_dtype t);
int fs_dtype_is_real(fs_dtype t);   /* float32, float64 or integer */
int fs_dtype_is_single(fs_dtype t); /* float32 or complex64 */

/* The complex and the real element type of a precision, and their sizes. */
fs_dtype fs_complex_dtype(fs_precision p);
fs_dtype fs_real_dtype(fs_precision p);
size_t fs_complex_bytes(fs_precision p);
const char *fs_precision_name(fs_precision p); /* "single", "double" */

const char *fs_kind_name(fs_kind k); /* "c2c", "r2c", "c2r", "r2r" */
/* "fft", "dct1" ... "dst4"; fs_r2r_parse: the kind of such a name, -1
 * for any other text. */
const char *fs_r2r_name(fs_r2r k);
int fs_r2r_parse(const char *name);
const char *fs_norm_name(fs_norm norm); /* "backward", "ortho", "forward" */

#endif
