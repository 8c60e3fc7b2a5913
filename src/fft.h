/* fft: the local FFT passes, as FFTW guru plans on a rank's box.
 *
 * A pass transforms a set of axes of the local box in place; the other axes
 * are batch (howmany) dimensions. Plans are made before the data is read, so
 * planning never destroys input. An empty box gives a valid no-op pass. */
#ifndef FS_FFT_H
#define FS_FFT_H

#include <stdint.h>
#include "errors.h"
#include "layout.h"

typedef struct fs_fft_pass fs_fft_pass;

/* Plan an in-place complex-to-complex transform of the axes k with
 * transform_axis[k] != 0 of the row-major box `box`, on the buffer `data`
 * (complex double, at least fs_box_elems(box) elements). sign is FFTW_FORWARD
 * or FFTW_BACKWARD. *out is allocated here; free with fs_fft_pass_free. */
fs_status fs_fft_pass_new(const fs_box *box, const int *transform_axis, int sign,
                          void *data, fs_fft_pass **out);
void fs_fft_pass_execute(fs_fft_pass *pass);
/* Floating-point operations FFTW counts for this pass (0 for a no-op). */
double fs_fft_pass_flops(const fs_fft_pass *pass);
void fs_fft_pass_free(fs_fft_pass **pass);

/* The same transform on many blocks of varying shape and address: the work
 * an overlapping exchange hands back block by block. One plan per block
 * shape, made on first use (FFTW_ESTIMATE | FFTW_UNALIGNED, so any element
 * address works) and kept. */
typedef struct fs_fft_blockwise fs_fft_blockwise;
fs_status fs_fft_blockwise_new(const int *transform_axis, int sign, fs_fft_blockwise **out);
/* Transform block `box` stored row-major at data, in place. Returns nonzero
 * when FFTW cannot plan it (then the block is untouched). */
int fs_fft_blockwise_execute(fs_fft_blockwise *bw, const fs_box *box, void *data);
int fs_fft_blockwise_failed(const fs_fft_blockwise *bw);
void fs_fft_blockwise_free(fs_fft_blockwise **bw);

/* Multiply n complex doubles by factor. */
void fs_fft_scale(void *data, int64_t n, double factor);

#endif
