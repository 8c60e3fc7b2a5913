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

#include "decomp.h"
#include "errors.h"
#include "exchange.h"
#include "fft.h"
#include "progress.h"
#include "report.h"
#include "transform.h"

/* The working array of a rank: complex elements of one precision. */
typedef struct fs_workbuf {
    void *data;
    int64_t elems;
    fs_precision prec;
} fs_workbuf;

/* Make sure b holds at least n elements (old contents may be lost). */
fs_status fs_workbuf_reserve(fs_workbuf *b, int64_t n);
void fs_workbuf_release(fs_workbuf *b);

typedef struct fs_compute_args {
    MPI_Comm comm;                    /* the job: agrees before each exchange */
    const fs_transform *t;            /* planned for this strategy's hooks */
    const fs_decomposition *d;
    const fs_exchange_ops *ops;       /* NULL: no exchange */
    const fs_exchange_params *params;
    unsigned fftw_flags;              /* FFTW_ESTIMATE, FFTW_MEASURE, ... */
    int with_inverse;                 /* --check: plan the work undone too */
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

/* Collective: the transform on data (buf->data of fs_compute_new), from the
 * first stage's layout to the last's, the result in buf->data. FFT time and exchange time go to `timers` (block FFTs run inside
 * an exchange count as FFT time); progress (may be NULL) follows them. A
 * rank that fails goes on to the next agreement before an exchange, as the
 * others do, so none waits in an exchange for it; the returned status is
 * this rank's own (the caller agrees it, so the rank that failed speaks). */
fs_status fs_compute_run(fs_compute *c, void *data, fs_timers *timers, fs_progress *progress);

/* Collective: the run undone (with_inverse) on data (buf->data), from the
 * last layout back to the first; the result, in buf->data, is the input
 * times the number of points. */
fs_status fs_compute_undo(fs_compute *c, void *data);

/* The exchange figures, summed over the exchanges (zeros without). */
fs_exchange_stats fs_compute_exchange_totals(const fs_compute *c);
/* Memory the exchange plans hold besides the working buffer. */
size_t fs_compute_scratch_bytes(const fs_compute *c);
/* Where the data is now: the working buffer's data. */
void *fs_compute_data(const fs_compute *c);
/* Nonzero when the plan has an exchange. */
int fs_compute_exchanges(const fs_compute *c);

#endif
