/* SPDX-License-Identifier: GPL-3.0-or-later */
/* overlap: the read and the write of the first and last stages,
 * overlapped with the FFTs where they can be.
 *
 * The input is read in pieces by a helper thread (rawio), straight into
 * place, each piece's FFTs run as soon as it is there; the output's last
 * FFT pass runs piece by piece into staging buffers, each written by the
 * thread while the next is computed. fs_overlap_plan decides which of the
 * two a dataset gets and plans their pieces (fs_compute_pieces) before
 * the read, as every plan is; a read it leaves out goes through HDF5 as a
 * whole in fs_overlap_read, a write in output.h's fs_output_write. Owns
 * the pieces and the raw positions of the current dataset;
 * the data buffer, the compute plan and the output are the caller's.
 * The pieces' arithmetic is plan/pieces.h's. */
#ifndef FS_OVERLAP_H
#define FS_OVERLAP_H

#include <mpi.h>
#include <stdint.h>

#include "compute/compute.h"
#include "core/errors.h"
#include "io/h5io.h"
#include "io/shards.h"
#include "plan/decomp.h"
#include "plan/transform.h"
#include "sources/particles.h"
#include "core/progress.h"
#include "core/timers.h"

typedef struct fs_overlap fs_overlap;

/* What a dataset's overlap is planned from. */
typedef struct fs_overlap_args {
    MPI_Comm comm;
    const fs_transform *t;          /* the transform the strategy runs */
    const fs_decomposition *d;      /* this rank's boxes */
    const fs_compute *c;            /* the compute plan */
    const fs_workbuf *buf;          /* the data buffer the pieces are planned on */
    const char *input_file;
    const fs_input_info *info;
    const fs_shard_set *shards;     /* --shards (NULL: one file) */
    fs_h5_output *h5;               /* the output, NULL: not written through HDF5 */
    int whole_result;               /* the result is needed whole before the write
                                     * (shard output, spectra): no write in pieces */
    int keep;                       /* --check: the result stays in data too */
    int io_thread;                  /* every rank's thread has a core (fs_node.io_thread) */
    int refuse_nonfinite;           /* an input holding NaN or Inf is refused */
    fs_particles *particles;        /* the first stage painted instead of read (NULL: read): */
    int dataset;                    /* of INPUT dataset's particles */
} fs_overlap_args;

/* Collective: which I/O of the dataset overlaps its FFTs, the same on
 * every rank: the input when HDF5 says its bytes can be read as they are,
 * the output when its dataset is contiguous in OUTPUT's temporary. Not at
 * all without a core for the thread, without thread support from MPI, or
 * with the slow reads of the tests. *out (out): the dataset's plan, also
 * when neither overlaps (NULL when it could not be allocated). Agreed. */
fs_status fs_overlap_plan(const fs_overlap_args *a, fs_overlap **out);
void fs_overlap_free(fs_overlap **o);

/* Whether the read, or the write, goes in pieces (o may be NULL). */
int fs_overlap_reads(const fs_overlap *o);
int fs_overlap_writes(const fs_overlap *o);

/* The input into the data buffer, or with a->particles their mesh painted
 * there (fs_particles_fill: its refusals), else: in pieces with stage 0's FFTs when the
 * read overlaps (the FFT time counted in timers' FFT phase and taken out
 * of its read phase; the thread's time in timers->io), else through HDF5
 * as a whole, the slots the read leaves alone zeroed. Either way the input
 * read is checked to be the one probed (fs_h5_input_unchanged). With
 * refuse_nonfinite the NaN and Inf of the values read are counted (each
 * piece before its FFTs) and, once every rank's read succeeded, a count
 * above zero is the refusal (fs_finite_agree, status 3). This rank's
 * status. */
fs_status fs_overlap_read(fs_overlap *o, fs_timers *timers, fs_progress *progress);

/* The last stage's FFTs from the data buffer as it is now, written in
 * pieces; the FFT time as for the read, out of the write phase. Agreed
 * (the output's raw write ends collectively). */
fs_status fs_overlap_write(fs_overlap *o, fs_timers *timers, fs_progress *progress);

#endif
