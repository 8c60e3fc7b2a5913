/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fftwmem: FFTW's own memory for the plan of a 1-D series' line, measured.
 *
 * What FFTW holds for a line whose length has a large prime factor
 * (Rader's and Bluestein's algorithms, nested as its planner splits
 * p - 1) follows no table by that factor: 999983 complex points take 3.0
 * lines of tables, 1000003 4.25; a cosine transform's buffers while it
 * runs 2.6 to 5.0 lines of its reals. The footprint asks this module,
 * which plans the line as the run will, under FFTW_ESTIMATE (which reads
 * and writes no array), counts malloc's bytes before and after
 * (mallinfo2), and runs the plan once on zeros to see how far the
 * process's resident memory rises above what it was (the kernel's peak,
 * restarted for it: fs_peak_memory_restart). */
#ifndef FS_FFTWMEM_H
#define FS_FFTWMEM_H

#include <fftw3.h>
#include <stdint.h>
#include "core/dtype.h"

typedef enum { FS_LINE_C2C, FS_LINE_R2C, FS_LINE_R2R } fs_line_kind;

/* Lines longer than this many bytes are not measured (the measuring
 * would hold several of them): the caller's table applies. */
#define FS_FFTWMEM_MAX_LINE_BYTES ((int64_t)64 << 20)

typedef struct fs_fftwmem {
    int64_t forward; /* the forward plan's tables (0: not measured) */
    int64_t inverse; /* what an inverse planned beside it adds (they share tables) */
    int64_t exec;    /* how far running them raises the resident memory (-1: the
                        kernel's peak cannot be restarted, fs_peak_memory_restart) */
} fs_fftwmem;

/* The in-place plan of one line of n points of kind (R2C: n reals in
 * FFTW's padded layout, its inverse complex-to-real; R2R: n reals of the
 * cosine or sine transform r2r, its inverse that of fs_r2r_inverse) and
 * precision; the inverse's bytes only when `inverse`. Nothing measured
 * (forward 0) when the line is longer than FS_FFTWMEM_MAX_LINE_BYTES or
 * FFTW cannot plan it. Remembered per process: each line is measured
 * once. The measuring holds no more than the run will: the line, its
 * plans and the buffers of one running. */
fs_fftwmem fs_fftwmem_line(int64_t n, fs_line_kind kind, fs_r2r r2r, fs_precision prec,
                           int inverse);

/* scipy.fft's cosine and sine types as FFTW's kinds: the same
 * unnormalized sums (fftshard(1), COSINE AND SINE TRANSFORMS). */
fftw_r2r_kind fs_fftw_r2r_kind(fs_r2r k);

#endif
