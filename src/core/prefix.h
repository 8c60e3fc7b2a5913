/* SPDX-License-Identifier: GPL-3.0-or-later */
/* prefix: the parallel prefix broadcast (after the patent on a parallel-
 * prefix broadcast for a parallel-prefix operation).
 *
 * Every rank holds n contributions. The result buffer has one position per
 * rank; for position p every rank contributes its values if p >= its rank
 * and the operator's identity element otherwise, and one reduction fills the
 * position. The positions are reduced together (one MPI_Allreduce over a
 * P x n buffer, not P reductions), so every rank ends up with the inclusive
 * prefix of every rank: out[p * n + i] = op(value i of ranks 0..p).
 * fftshard uses it for each rank's offset into the array and the files, and
 * for the running sums of the report. */
#ifndef FS_PREFIX_H
#define FS_PREFIX_H

#include <mpi.h>
#include <stdint.h>
#include "core/errors.h"

typedef enum fs_prefix_op { FS_PREFIX_SUM, FS_PREFIX_MAX, FS_PREFIX_MIN } fs_prefix_op;

/* Collective over comm. contrib: n values of this rank (in); out: P * n
 * values (out, caller allocated). */
fs_status fs_prefix_broadcast_int64(MPI_Comm comm, const int64_t *contrib, int n, fs_prefix_op op,
                                    int64_t *out);
fs_status fs_prefix_broadcast_double(MPI_Comm comm, const double *contrib, int n, fs_prefix_op op,
                                     double *out);

/* The exclusive prefix of position p from an inclusive buffer of SUMs: the
 * offset of rank p's block (0 for rank 0). */
int64_t fs_prefix_exclusive(const int64_t *inclusive, int n, int p, int i);

#endif
