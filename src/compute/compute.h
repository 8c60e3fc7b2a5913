/* SPDX-License-Identifier: GPL-3.0-or-later */
/* compute: the planned work of one transform with one exchange strategy,
 * and its execution.
 *
 * A compute plan holds the FFTW plans of every stage on this rank's boxes,
 * the exchange plans between the stages (exchange.h), the block work handed
 * to a strategy that overlaps it with its messages, and with --check the
 * same work undone. It borrows the transform and the decomposition (which
 * must outlive it) and plans its FFTs on a working buffer that it grows to
 * what the strategy needs; planning never touches data already in it beyond
 * what FFTW's planner does (plans are made before the input is read). */
#ifndef FS_COMPUTE_H
#define FS_COMPUTE_H

#include <mpi.h>
#include <stdint.h>

#include "plan/decomp.h"
#include "core/errors.h"
#include "exchange/exchange.h"
#include "compute/fft.h"
#include "core/progress.h"
#include "core/timers.h"
#include "plan/pieces.h"
#include "plan/planner.h"
#include "plan/transform.h"

/* The working array of a rank: elements of one type (the transform's
 * work_type: complex, or real for cosine and sine axes alone). */
typedef struct fs_workbuf {
    void *data;
    int64_t elems;
    fs_dtype type;
} fs_workbuf;

void fs_workbuf_release(fs_workbuf *b);

typedef struct fs_compute_args {
    MPI_Comm comm;                    /* the job: agrees before each exchange */
    const fs_transform *t;            /* planned for this strategy's hooks */
    const fs_decomposition *d;
    const fs_exchange_ops *ops;       /* NULL: no exchange */
    const fs_exchange_params *params;
    unsigned fftw_flags;              /* FFTW_ESTIMATE, FFTW_MEASURE, ... */
    int with_inverse;                 /* --check: plan the work undone too */
    int operate_between;              /* with_inverse: fs_compute_round_trip's middle runs
                                         inside the last operation where it can (never
                                         with fs_compute_run_part's last_left) */
} fs_compute_args;

typedef struct fs_compute fs_compute;

/* Plan; grows buf as the strategy needs. Not collective, but every rank of
 * the job must plan with the same arguments. Free with fs_compute_free. The
 * plan keeps buf (which must outlive it): an exchange with a second array
 * trades it for buf->data, so after a run or an undo the result is in
 * buf->data (fs_compute_data), which may be the other array; both are freed
 * by whoever holds them then (buf: fs_workbuf_release). */
fs_status fs_compute_new(const fs_compute_args *a, fs_workbuf *buf, fs_compute **out);
void fs_compute_free(fs_compute **c);

/* --transpose=auto's trial of strategy ops (planner.h's fs_trial_time_fn,
 * ctx an fs_compute_trial): collective, a compute plan of the transform
 * planned for ops made on buf (grown, its contents lost), run once on
 * zeros before any input is read, and freed; *slowest (out) the seconds of
 * the slowest rank. The status is agreed. */
typedef struct fs_compute_trial {
    MPI_Comm comm;
    const fs_planned *planned;
    const fs_decomposition *d;
    const fs_exchange_params *params;
    unsigned fftw_flags;
    fs_workbuf *buf;
} fs_compute_trial;
fs_status fs_compute_time(void *ctx, const fs_exchange_ops *ops, double *slowest);

/* Collective: the transform on data (buf->data of fs_compute_new), from the
 * first stage's layout to the last's, the result in buf->data. FFT time and exchange time go to `timers` (block FFTs run inside
 * an exchange count as FFT time); progress (may be NULL) follows them. A
 * rank that fails goes on to the next agreement before an exchange, as the
 * others do, so none waits in an exchange for it; the returned status is
 * this rank's own (the caller agrees it, so the rank that failed speaks). */
fs_status fs_compute_run(fs_compute *c, void *data, fs_timers *timers, fs_progress *progress);

/* fs_compute_run without the operations of the first stage (first_done:
 * they ran on pieces as the input was read) or of the last (last_left: they
 * run on pieces as the output is written); the exchanges always run. */
fs_status fs_compute_run_part(fs_compute *c, void *data, int first_done, int last_left,
                              fs_timers *timers, fs_progress *progress);

/* Collective: the run undone (with_inverse) on data (buf->data), from the
 * last layout back to the first; the result, in buf->data, is the input
 * times the number of points. */
fs_status fs_compute_undo(fs_compute *c, void *data);
/* The same, its FFT and exchange time into `timers` and its exchanges'
 * progress (may be NULL) shown: --apply's inverse. */
fs_status fs_compute_undo_timed(fs_compute *c, void *data, fs_timers *timers,
                                fs_progress *progress);

/* The work between a round trip's transforms (--apply's operators), on
 * this rank's last-stage box: on all of it in memory (whole), or on lines
 * of it gathered (lines, fft.h): either gives the same result. */
typedef struct fs_compute_middle {
    void (*whole)(void *ctx, void *data);
    fs_lines_fn lines;
    void *ctx;
} fs_compute_middle;

/* Collective, after fs_compute_run (of a plan with operate_between): m,
 * then the run undone as by fs_compute_undo_timed, the result agreed. Where
 * the last operation is a pass of gathered lines (fs_op_fusable), it was
 * left out of the run and runs here with m->lines between it and its
 * inverse: one trip through memory for the three. m's time goes to the
 * operate phase either way. */
fs_status fs_compute_round_trip(fs_compute *c, void *data, const fs_compute_middle *m,
                                fs_timers *timers, fs_progress *progress);

/* The exchange figures, summed over the exchanges (zeros without); a
 * round trip's (transform.h) with its inverse's. */
fs_exchange_stats fs_compute_exchange_totals(const fs_compute *c);
/* Memory the exchange plans hold besides the working buffer. */
size_t fs_compute_scratch_bytes(const fs_compute *c);
/* Whether fs_compute_round_trip runs its middle inside the last forward
 * pass on this rank (a rank with nothing to transform: never). */
int fs_compute_operates_in_pass(const fs_compute *c);
/* The job the plan agrees in. */
MPI_Comm fs_compute_comm(const fs_compute *c);
/* Where the data is now: the working buffer's data. */
void *fs_compute_data(const fs_compute *c);
/* Nonzero when the plan has an exchange. */
int fs_compute_exchanges(const fs_compute *c);

/* A stage's operations on pieces of its box, for I/O to overlap them
 * (pipeline.c), cut along one axis into pieces of about piece_bytes:
 *   FS_PIECES_FIRST: stage 0 in place on data, cut along the box's first
 *     axis of more than one index, so that each piece is one run of memory,
 *     read straight into place. What the stage transforms along that axis
 *     runs on the whole box after the last piece (fs_compute_pieces_end).
 *   FS_PIECES_LAST: the last stage, each piece copied out of data into one
 *     of FS_PIECE_BUFFERS staging buffers and transformed there, to be
 *     written from there while the next pieces are computed. Cut along the
 *     first axis no operation of the stage transforms, else along the first
 *     of more than one index, which is transformed on the whole box first
 *     (fs_compute_pieces_begin). With keep, each piece goes back into data
 *     too (--check reads the result there).
 * Only complex, cosine and sine transforms and scaling are cut: for other
 * operations (the four-step's twiddle and transpose, real-to-complex
 * transforms) *out is NULL, FS_OK.
 * Every plan is made here, before data holds anything (FFTW_MEASURE
 * overwrites what it plans on). data must outlive the pieces. */

typedef struct fs_compute_pieces fs_compute_pieces;

/* The data buffer the pieces come from or go to: the working buffer as it
 * is when they run (an exchange may have traded it for its second array
 * since the pieces were planned). */
void fs_compute_pieces_rebase(fs_compute_pieces *p, void *data);

fs_status fs_compute_pieces_new(const fs_compute *c, fs_pieces_kind kind, void *data,
                                int64_t piece_bytes, int keep, fs_compute_pieces **out);
void fs_compute_pieces_free(fs_compute_pieces **p);
int64_t fs_compute_pieces_count(const fs_compute_pieces *p);
/* The stage's box, and piece i of it (global coordinates). */
fs_box fs_compute_pieces_box(const fs_compute_pieces *p);
fs_box fs_compute_pieces_piece(const fs_compute_pieces *p, int64_t i);
/* The whole-box work before the first piece (LAST), and after the last
 * (FIRST); the stage's one "fft" progress line (progress may be NULL). */
fs_status fs_compute_pieces_begin(fs_compute_pieces *p, fs_progress *progress);
fs_status fs_compute_pieces_end(fs_compute_pieces *p, fs_progress *progress);
/* Piece i's operations. FIRST: in place, *at and *at_box NULL. LAST: out
 * of data into staging buffer i % FS_PIECE_BUFFERS, which must no longer
 * be in use (piece i - FS_PIECE_BUFFERS written); *at (out) its memory,
 * *at_box the box stored there (the piece itself). */
fs_status fs_compute_pieces_run(fs_compute_pieces *p, int64_t i, void **at, fs_box *at_box);

#endif
