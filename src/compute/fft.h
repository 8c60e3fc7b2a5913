/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fft: the local operations of a transform on a rank's box, as FFTW plans.
 *
 * An operation (fs_op_spec, planned by transform.h: its kinds are listed
 * there) works in place on the row-major storage of a box of complex
 * elements (complex64 or complex128 by precision). Plans are made before the data is read, so planning (even FFTW_MEASURE)
 * never destroys input. An empty box gives a valid no-op. */
#ifndef FS_FFT_H
#define FS_FFT_H

#include <stddef.h>
#include <stdint.h>
#include "core/dtype.h"
#include "core/errors.h"
#include "core/layout.h"
#include "plan/transform.h"

typedef struct fs_op fs_op;

/* Plan `spec` on `box` (complex coordinates: the halved axis counts n/2+1
 * for R2C/C2R) over `data`. flags: FFTW planner flags (FFTW_ESTIMATE, ...).
 * *out is allocated; free with fs_op_free. */
fs_status fs_op_new(const fs_op_spec *spec, const fs_box *box, fs_precision prec, void *data,
                    unsigned flags, fs_op **out);
/* FFTW plans this process made so far, and how many of them FFTW's wisdom
 * gave without measuring (always 0 with FFTW_ESTIMATE). */
void fs_fft_plan_counts(int64_t *made, int64_t *from_wisdom);
/* Run op on its data. FS_ERR_RUNTIME (message set) when FFTW cannot plan
 * the lines left over from the planned batches. */
fs_status fs_op_execute(fs_op *op);
/* Run op on `data` instead of the buffer it was planned on (kept for the
 * next run): a buffer that holds op's box, from fs_buffer_alloc as the
 * planned one (so of the same alignment, as FFTW's new-array execution
 * asks). */
fs_status fs_op_execute_on(fs_op *op, void *data);
/* The same operation's inverse (for --check's round trip). */
fs_status fs_op_inverse(const fs_op *op, void *data, unsigned flags, fs_op **out);
/* Lines of a box gathered from memory: `count` lines of n elements along
 * the box's axis `axis`, line j at buf + j * dist elements. Line j is
 * column first + j (the axes after `axis`, row-major) of block `outer` (the
 * axes before it, row-major). */
typedef struct fs_lines {
    const fs_box *box;
    int axis;
    int64_t outer, first, count, n, dist;
    void *buf;
} fs_lines;
typedef void (*fs_lines_fn)(void *ctx, const fs_lines *lines);

/* Whether op and inv (fs_op_inverse of it) are each one pass of lines
 * along the same strided axis, which fs_op_execute_fused runs together. */
int fs_op_fusable(const fs_op *op, const fs_op *inv);
/* op, fn on its lines, then inv, on data in one trip through memory: each
 * group of lines is gathered once, transformed, given to fn, transformed
 * back and put back (a round trip's operation between its transforms,
 * without two more passes over the array). */
fs_status fs_op_execute_fused(fs_op *op, fs_op *inv, void *data, fs_lines_fn fn, void *ctx);
/* 5 N log2 N of the transforms in it, for progress rates (0 for others). */
double fs_op_flops(const fs_op *op);
/* Whether op transforms the axes of spec (a C2C or R2R of no padding
 * limit) on box in the same way: an operation planned alike, which the I/O
 * overlap's whole-box operations borrow (a 1-D series' FFT is one plan, not
 * two: a prime length's holds 3 to 4.3 lines). */
int fs_op_plans_alike(const fs_op *op, const fs_op_spec *spec, const fs_box *box);
void fs_op_free(fs_op **op);

/* The same C2C transform on many blocks of varying shape and address: the
 * work an overlapping exchange hands back block by block. One plan per block
 * shape, made on first use (FFTW_ESTIMATE | FFTW_UNALIGNED, so any element
 * address works) and kept. */
typedef struct fs_fft_blockwise fs_fft_blockwise;
fs_status fs_fft_blockwise_new(const int *transform_axis, int sign, fs_precision prec,
                               fs_fft_blockwise **out);
/* Transform the block `box` stored at `data`. FS_ERR_RUNTIME (message set)
 * when FFTW cannot plan its shape. */
fs_status fs_fft_blockwise_execute(fs_fft_blockwise *bw, const fs_box *box, void *data);
void fs_fft_blockwise_free(fs_fft_blockwise **bw);

#endif
