/* SPDX-License-Identifier: GPL-3.0-or-later */
/* operators: --apply's operations in Fourier space, on the distributed
 * result of the forward transform.
 *
 * The list OP[,OP...] is parsed into plain data (fs_operators), the
 * transfer tables it names are read by rank 0 and shared, the list is
 * checked against the grid of a transform (a derivative's axis is a
 * transformed one, a table covers every |k| of the grid) before any work,
 * and each rank multiplies its own part of the spectrum (its last-stage
 * box) by the product of the operators' factors, in the order given, times
 * 1/N so that the inverse transform that follows (compute.h's undo, which
 * returns N times its input) gives the filtered field. The wave vector is
 * kgrid.h's. fs_operators_prepare does all of that before any work for
 * every dataset of a run. Owns the transfer tables, each dataset's grid
 * and the recorded text. */
#ifndef FS_OPERATORS_H
#define FS_OPERATORS_H

#include <mpi.h>
#include <stddef.h>

#include "analysis/kgrid.h"
#include "compute/compute.h"
#include "core/errors.h"
#include "core/layout.h"
#include "plan/transform.h"

#define FS_MAX_OPERATORS 16
/* --apply's lowpass and highpass order without :N. */
#define FS_BUTTERWORTH_ORDER 2
/* The top hat's series below this x = kR (the direct formula cancels). */
#define FS_TOPHAT_SERIES_X 1e-2

typedef enum fs_operator_kind {
    FS_OPER_GAUSSIAN,   /* exp(-k^2 R^2 / 2) */
    FS_OPER_TOPHAT,     /* 3 (sin x - x cos x) / x^3, x = k R */
    FS_OPER_SHARPK,     /* |k| <= K */
    FS_OPER_LOWPASS,    /* 1 / (1 + (|k| / K)^(2N)) */
    FS_OPER_HIGHPASS,   /* (|k| / K)^(2N) / (1 + (|k| / K)^(2N)) */
    FS_OPER_DERIV,      /* i k_axis, the Nyquist plane of an even axis 0 */
    FS_OPER_LAPLACIAN,  /* -k^2 */
    FS_OPER_POISSON,    /* -1 / k^2, k = 0: 0 */
    FS_OPER_TRANSFER,   /* T(|k|) from a table, linearly interpolated */
} fs_operator_kind;

/* A two-column table of numbers, k increasing from k >= 0, read by rank 0
 * and shared ('#' starts a comment line): --apply's transfer:FILE (k T),
 * fftshard-mkdata's --power-table=FILE (k P). */
typedef struct fs_table {
    const char *column;  /* the second column's name in messages ("T", "P") */
    int nrows;
    double *k, *v;
} fs_table;

/* Collective: rank 0 reads the table in `file`, every rank gets it; what
 * + file names it in messages ("--apply: transfer:"). FS_ERR_INPUT
 * (status 3) for a table that cannot be read or is not two columns of
 * numbers with k increasing; agreed and printed once. */
fs_status fs_table_load(MPI_Comm comm, const char *file, const char *what, fs_table *t);
void fs_table_free(fs_table *t);

/* The table's value at k by linear interpolation between its rows (k at
 * or past the last row: the last value; the caller checks the range). */
double fs_table_at(const fs_table *t, double k);

typedef struct fs_operator {
    fs_operator_kind kind;
    double param;       /* R or K */
    int order;          /* N of lowpass and highpass */
    int axis;           /* deriv: as given (negative counts from the end) */
    char *file;         /* transfer: the table's file */
    fs_table table;     /* transfer: T(k), k increasing */
} fs_operator;

typedef struct fs_operators {
    int n;
    fs_operator op[FS_MAX_OPERATORS];
    int ngrids;         /* fs_operators_prepare: each dataset's grid */
    fs_kgrid *grids;
    char text[4096];    /* the list as the result records it */
} fs_operators;

/* Parse --apply's value (pure: no I/O). FS_ERR_USAGE naming the operator
 * that is not understood. Free with fs_operators_free (also on failure). */
fs_status fs_operators_parse(const char *text, fs_operators *out);
void fs_operators_free(fs_operators *ops);

/* Collective: rank 0 reads every transfer table, every rank gets them.
 * FS_ERR_INPUT (status 3) for a table that cannot be read or is not two
 * columns of numbers with k increasing; agreed and printed once. */
fs_status fs_operators_load(MPI_Comm comm, fs_operators *ops);

/* Whether the operators fit the grid g (not collective; the same answer
 * everywhere): FS_ERR_USAGE for a derivative along an axis that is not
 * transformed, FS_ERR_INPUT for a table that does not cover 0 .. the
 * grid's largest |k|. */
fs_status fs_operators_check(const fs_operators *ops, const fs_kgrid *g);

/* Collective, before any work: parse the list, load its tables (rank 0
 * reads), the grid of each of the n transforms ts with box lengths
 * box[0..nbox) (fs_kgrid_init), the check of the operators against each
 * (rank 0 speaks) and the recorded text. The status is agreed. */
fs_status fs_operators_prepare(MPI_Comm comm, const char *list, const double *box, int nbox,
                               const fs_transform *const *ts, int n, fs_operators *ops);

/* The grid of dataset i (fs_operators_prepare's). */
const fs_kgrid *fs_operators_grid(const fs_operators *ops, int i);

/* Collective, after the forward transform t of that dataset (c's run):
 * this rank's part of its result (its last-stage box `last`, in data)
 * times the operators' product / N, then the inverse transform
 * (fs_compute_round_trip: inside the last forward pass where it can), the
 * filtered field in data. The status is agreed. */
fs_status fs_operators_round_trip(const fs_operators *ops, int dataset, const fs_transform *t,
                                  const fs_box *last, fs_compute *c, void *data,
                                  fs_timers *timers, fs_progress *progress);

/* The list as the result's "operation" attribute records it, every
 * parameter written out (lowpass:K:N): into buf. */
void fs_operators_text(const fs_operators *ops, char *buf, size_t size);

#endif
