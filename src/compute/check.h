/* SPDX-License-Identifier: GPL-3.0-or-later */
/* check: --check, the numerical check of a result before it is kept.
 *
 * Parseval's identity between the input and the result (a half spectrum
 * counts its interior bins twice), and the result transformed back (the
 * compute plan's work undone) compared with the input read again, a piece
 * of rows at a time so the check needs little memory beyond the array. */
#ifndef FS_CHECK_H
#define FS_CHECK_H

#include <mpi.h>

#include "compute/compute.h"
#include "core/errors.h"
#include "io/h5io.h"
#include "core/optable.h"
#include "core/timers.h"
#include "plan/pieces.h"
#include "plan/transform.h"

/* The elements of a rank's part in the file's coordinates, for --check
 * and the correlation function. fs_map_visit calls fn(ctx, memory offset,
 * global coordinates) for every element map selects in rows [first_row,
 * first_row + rows) of its file box (a 1-D four-step map's coordinates are
 * folded: index at[0] * fold_inner + at[1]); fs_map_element reads the
 * element at a memory offset as a complex number (real maps: imag 0). */
typedef void (*fs_map_visit_fn)(void *ctx, int64_t mem_offset, const int64_t *at);
void fs_map_visit(const fs_io_map *m, int64_t first_row, int64_t rows, fs_map_visit_fn fn,
                  void *ctx);
void fs_map_element(fs_precision prec, const fs_io_map *m, const void *base, int64_t offset,
                    double *re, double *im);

/* What --check found. */
typedef struct fs_check_result {
    int done, passed;
    double tolerance;
    double roundtrip_error;   /* max |inverse(result) - input| / max |input| */
    double parseval_error;    /* relative difference of the two energies */
} fs_check_result;

/* --check and --check-tolerance (check.c's lines). */
typedef struct fs_check_options {
    int on;
    double tolerance;               /* 0: by precision */
} fs_check_options;
extern const fs_opt fs_check_option_lines[];

typedef struct fs_check_args {
    MPI_Comm comm;
    const fs_transform *t;
    fs_compute *c;                  /* planned with_inverse */
    const fs_box *first, *last;     /* this rank's boxes after the read, before the write */
    void *data;                     /* the result, in the last layout; destroyed */
    const char *input_file;
    const fs_input_info *info;
    const fs_shard_set *shards;     /* NULL: one file */
    fs_h5_input *opened;            /* the input open already (fs_h5_input_open; NULL: opened
                                       and closed for each piece) */
    double tolerance;               /* 0: by precision */
} fs_check_args;

/* Collective. FS_ERR_CHECK (agreed and printed) when an error is above the
 * tolerance; *res holds the figures either way. */
fs_status fs_check_run(const fs_check_args *a, fs_check_result *res);

/* The same in parts, for a result that passes through in blocks (exec/):
 * the sums of this rank's blocks, then the verdict. */
typedef struct fs_check_sums {
    double result, input;           /* Parseval's two energies */
    double max_err, max_ref;        /* the round trip's largest error and input value */
} fs_check_sums;
/* Block `last` (a last-stage box of t) of the result, at data, into s. */
void fs_check_add_result(const fs_transform *t, const fs_box *last, const void *data,
                         fs_check_sums *s);
/* Collective: block a->first transformed back (a->data: the input times
 * the number of points) against the input read again, into s. Agreed. */
fs_status fs_check_add_input(const fs_check_args *a, fs_check_sums *s);
/* Collective: every rank's sums, the verdict into *res; FS_ERR_CHECK
 * (agreed and printed) above the tolerance (0: by precision). */
fs_status fs_check_verdict(MPI_Comm comm, const fs_transform *t, double tolerance,
                           const fs_check_sums *s, fs_check_result *res);

#endif
