/* SPDX-License-Identifier: GPL-3.0-or-later */
/* decomp: how the ranks hold the array, stage by stage.
 *
 * From a planned transform (transform.h, read only) it makes the grid
 * communicators (the ranks along each dimension of the P1 x P2 grid), this
 * rank's box in every stage, and the redistribution of every exchange. Each
 * rank computes only its own shares; the starts of all come from one
 * parallel prefix broadcast per grid dimension (prefix.h), inside the ranks
 * along it: the hyperslab offsets of the read, the exchanges and the write.
 * The decomposition owns its redistributions; the exchange plans that
 * borrow them must be freed first. */
#ifndef FS_DECOMP_H
#define FS_DECOMP_H

#include <mpi.h>
#include <stdint.h>

#include "core/errors.h"
#include "core/layout.h"
#include "plan/transform.h"

#define FS_MAX_EXCH (FS_MAX_STAGES - 1)

typedef struct fs_decomposition {
    int nstages;
    int coord[2];                     /* this rank in the P1 x P2 grid */
    MPI_Comm dim_comm[2];             /* the ranks varying along each grid dimension */
    fs_box box[FS_MAX_STAGES];        /* this rank's box in every stage */
    fs_redist *rd[FS_MAX_EXCH];       /* exchange e: stage e to stage e + 1 */
    fs_redist *rd_back[FS_MAX_EXCH];  /* with_back: the same undone (--check) */
} fs_decomposition;

/* Collective over comm (MPI_ERRORS_RETURN). *out allocated here; free with
 * fs_decomposition_free, which sets it to NULL. */
fs_status fs_decomposition_new(MPI_Comm comm, const fs_transform *t, int with_back,
                               fs_decomposition **out);
void fs_decomposition_free(fs_decomposition **d);

/* This rank's box after the read and before the write. */
const fs_box *fs_decomposition_first(const fs_decomposition *d);
const fs_box *fs_decomposition_last(const fs_decomposition *d);
/* The most elements this rank holds in any stage (at least 1). */
int64_t fs_decomposition_max_elems(const fs_decomposition *d);

#endif
