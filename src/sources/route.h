/* SPDX-License-Identifier: GPL-3.0-or-later */
/* route: one INPUT's particles read and sent to the ranks that paint them,
 * private to sources/.
 *
 * Rank r reads rows [N r / P, N (r + 1) / P) of the positions (and the
 * weights) in rounds of at most round_bytes of rows (every rank makes as
 * many reads as the largest share needs, an empty one when its share is
 * done), checks and wraps them, sorts them by the rank that paints them
 * (mesh.h's owner) and sends them in one MPI_Alltoallv per round, cut in
 * pieces of at most room / P rows per destination, room the least over
 * the ranks of the mesh's pending rows and a round, so that what a rank
 * receives fits there (the pieces' count agreed by a reduction): it is
 * received straight into them (mesh.h), painted when they are full.
 * Nothing else is kept between rounds: the memory is two rounds' buffers
 * (read and sorted) and the pending rows whatever N. */
#ifndef FS_PAINT_ROUTE_H
#define FS_PAINT_ROUTE_H

#include <mpi.h>
#include <stdint.h>

#include "core/errors.h"
#include "core/progress.h"
#include "io/h5probe.h"
#include "io/shards.h"
#include "sources/mesh.h"

/* Bytes of particle rows per buffer and round (FFTSHARD_PAINT_ROUND_BYTES
 * for tests). */
#define FS_PAINT_ROUND_BYTES ((int64_t)16 * 1024 * 1024)

/* One INPUT's particle table: where its rows are. */
typedef struct fs_paint_table {
    const char *file;                 /* INPUT's file (the pattern or list with --shards) */
    const fs_input_info *pos;         /* the positions (N x ndim, or N with one axis) */
    const fs_shard_set *pos_shards;   /* their files with --shards (NULL: one file) */
    const fs_input_info *wts;         /* the weights (N, or N x 1; NULL: none) */
    const fs_shard_set *wts_shards;
    int ndim;
    int64_t rows;                     /* N */
    const double *box;                /* L of each axis */
} fs_paint_table;

typedef struct fs_paint_route_stats {
    int64_t kept;                     /* this rank's rows sent to be painted */
    int64_t skipped;                  /* NaN or Inf positions not painted (allow_nonfinite) */
    int64_t received;                 /* particles painted here */
    int64_t rounds, bytes_sent;
    double sum_w, sum_w2;             /* of the rows kept */
    double read_s, paint_s;
} fs_paint_route_stats;

/* Collective: the table's particles painted on mesh. NaN and Inf refused
 * (FS_ERR_INPUT, the count and the first index) unless allow_nonfinite
 * (positions then skipped, weights painted as they are), positions more
 * than a period outside the box too; the read stops at the round that
 * found them. The seconds of the reads and of the rest in out. Every rank returns the same status and message (agreed
 * with fs_error_agree_shared, not printed). */
fs_status fs_paint_route(MPI_Comm comm, const fs_paint_table *tab, fs_paint_mesh *mesh,
                         int allow_nonfinite, fs_progress *progress, fs_paint_route_stats *out);

/* The rows of `stride` doubles of a round (FS_PAINT_ROUND_BYTES of them). */
int64_t fs_paint_route_rows(int stride);

/* The bytes of one rank's buffers, resident, for a table of `rows` rows
 * (negative: unknown, every round whole) of `stride` doubles on nranks
 * ranks: the read and sent rows of a round, which a rank's share of a
 * small table fills only in part; *received (out, or NULL): the most rows
 * a rank can receive in all (what the pending rows hold at most). */
int64_t fs_paint_route_bytes(int stride, int nranks, int64_t rows, int64_t *received);

#endif
