/* SPDX-License-Identifier: GPL-3.0-or-later */
/* iomap: where a rank's part of a file's dataset lives in its memory (the
 * hyperslab of the file, the array in memory, the stride of real values in
 * complex slots, a 1-D dataset seen as 2-D): plain data that the transform
 * plans (transform.h) and the reads and writes follow (h5io.h, rawio.h).
 * Pure arithmetic: no HDF5, no MPI. Owns nothing. */
#ifndef FS_IOMAP_H
#define FS_IOMAP_H

#include <stdint.h>

#include "core/dtype.h"
#include "core/layout.h"

/* Where a hyperslab of the file lives in memory. The file side is a box of
 * the dataset, or, for a 1-D dataset seen as 2-D (fold_inner > 0: shape
 * (n / fold_inner, fold_inner), row-major), a box of that view, the
 * positions from fold_limit on left out (0: none). The memory side is an
 * array of mem_type with dims mem_dims (as many as the box has), the box's
 * first element at mem_start, every element of the last axis or every
 * other (mem_stride_last 2: the real parts of complex elements).
 * mem_padding says what the memory rows hold past the box's last axis
 * when they are longer: nonzero, padding nobody reads (FFTW's padded real
 * rows), which a write may overwrite; zero, values the array still holds
 * (the half kept of a full complex row) or nothing. */
typedef struct fs_io_map {
    fs_box file_box;
    int64_t fold_inner, fold_limit;
    fs_dtype mem_type;
    int64_t mem_dims[FS_LAYOUT_MAX_DIMS];
    int64_t mem_start[FS_LAYOUT_MAX_DIMS];
    int mem_stride_last;
    int mem_padding;
} fs_io_map;

/* The map of a box stored alone, row-major, as mem_type elements. */
fs_io_map fs_io_map_plain(const fs_box *box, fs_dtype mem_type);

/* Whether m moves the elements of box stored alone as they are in the
 * file (no conversion, no strides, no folded view). */
int fs_io_map_is_plain(const fs_io_map *m, const fs_box *box);

#endif
