/* SPDX-License-Identifier: GPL-3.0-or-later */
/* finite: NaN and Inf in the values a read of the input put in memory.
 *
 * An input holding NaN or Inf is refused (fftshard(1), --allow-nonfinite):
 * FFTW and numpy's pocketfft spread such values over different elements of
 * the result. The reads count them as the values arrive (fs_finite_packed
 * for values packed in a piece's order, fs_finite_box for a piece inside a
 * rank's box), in one pass over the bits that the compiler vectorises;
 * only when a pass finds one does it look for where, as a flat index in
 * numpy's order (row-major over the dataset's shape). fs_finite_agree adds
 * the ranks' counts and takes the least index in one reduction, and turns
 * a count above zero into the refusal. Owns nothing: the tally is the
 * caller's, plain data. */
#ifndef FS_FINITE_H
#define FS_FINITE_H

#include <mpi.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/errors.h"
#include "core/layout.h"

/* One rank's tally of one dataset's read. */
typedef struct fs_finite {
    int ndim;
    int64_t shape[FS_LAYOUT_MAX_DIMS]; /* the dataset's */
    int64_t fold_inner; /* > 0: coordinates (row, column) of the 1-D dataset
                         * seen as rows of fold_inner (fs_io_map) */
    int64_t count;      /* values not finite (a complex one counts once) */
    int64_t first;      /* the flat index of the first, INT64_MAX: none */
} fs_finite;

/* A tally of nothing yet for a dataset of this shape, read through
 * coordinates folded as fold_inner says (0: the dataset's own). */
void fs_finite_begin(fs_finite *f, int ndim, const int64_t *shape, int64_t fold_inner);

/* n values of type t (not integers) packed at `values`: the first n
 * elements of `piece` (file coordinates) in row-major order. */
void fs_finite_packed(fs_finite *f, const fs_box *piece, const void *values, int64_t n,
                      fs_dtype t);

/* The elements of `piece` (file coordinates) inside the row-major storage
 * of the box `outer` at data, of type t (not integers). */
void fs_finite_box(fs_finite *f, const fs_box *piece, const fs_box *outer, const void *data,
                   fs_dtype t);

/* Collective: every rank's tally of the dataset `name` (FILE:DATASET, for
 * the message) added up in one reduction. FS_OK when every value was
 * finite; else FS_ERR_INPUT on every rank with the one message giving the
 * count and the first index. Not agreed (a failed reduction is this
 * rank's FS_ERR_RUNTIME); the caller agrees. */
fs_status fs_finite_agree(MPI_Comm comm, const fs_finite *f, const char *name);

#endif
