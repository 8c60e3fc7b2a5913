/* SPDX-License-Identifier: GPL-3.0-or-later */
/* table: a two-column text table of finite numbers, k increasing from
 * k >= 0 ('#' starts a comment line), read by rank 0 as io/textfile.h reads
 * a text file (never waited on) and shared with every rank: --apply's
 * transfer:FILE (k T), fftshard-mkdata's --power-table=FILE (k P). Owns the
 * rows it read. */
#ifndef FS_TABLE_H
#define FS_TABLE_H

#include <mpi.h>

#include "core/errors.h"

typedef struct fs_table {
    const char *column;  /* the second column's name in messages ("T", "P") */
    int nrows;
    double *k, *v;
} fs_table;

/* Collective: rank 0 reads the table in `file`, every rank gets it; what
 * + file names it in messages ("--apply: transfer:"). FS_ERR_INPUT
 * (status 3) for a table that is not a regular file, cannot be read or is
 * not two columns of finite numbers with k increasing; FS_ERR_RUNTIME for
 * one written to while it was read; agreed and printed once. */
fs_status fs_table_load(MPI_Comm comm, const char *file, const char *what, fs_table *t);
void fs_table_free(fs_table *t);

/* The table's value at k by linear interpolation between its rows (k at
 * or past the last row: the last value; the caller checks the range). */
double fs_table_at(const fs_table *t, double k);

#endif
