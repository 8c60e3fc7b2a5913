/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_prefix: the parallel prefix broadcast against MPI_Scan and MPI_Exscan.
 *
 * Run under mpiexec on any number of ranks (unit.bats: 1 to 8). For sum, max
 * and min over int64 and double vectors, with zero contributions, negative
 * values and values near 2^62 (sums that stay exact in int64), every rank
 * checks every position of its result buffer: position p must equal what
 * MPI_Scan gives rank p (gathered from all ranks), and the exclusive prefix
 * must equal MPI_Exscan. Exit 0 when all passed. */
#include "config.h"

#include <inttypes.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/prefix.h"

static int rank, nranks;
static long failures;

#define N 5

static void contributions(int round, int r, int64_t *iv, double *dv)
{
    for (int i = 0; i < N; i++) {
        int64_t base = (int64_t)((r * 7919 + i * 104729 + round * 13) % 1000) - 300;
        switch (i) {
        case 0: iv[i] = 0; break;                                   /* zero contributions */
        case 1: iv[i] = base; break;                                /* negative and positive */
        case 2: iv[i] = (INT64_C(1) << 58) + base; break;           /* large: no overflow over 8 ranks */
        case 3: iv[i] = r % 2 ? 0 : (int64_t)r * 1000003; break;    /* some ranks contribute nothing */
        default: iv[i] = r == round % (nranks ? nranks : 1) ? INT64_C(1) << 61 : -base; break;
        }
        dv[i] = (double)iv[i] * 0.5 + (i == 4 ? 1e300 * (r == 0) : 0.25);
    }
}

static void check_int(fs_prefix_op op, MPI_Op mop, int round)
{
    int64_t mine[N], scan[N], *all_scan = malloc((size_t)nranks * N * sizeof(int64_t));
    int64_t *out = malloc((size_t)nranks * N * sizeof(int64_t));
    double dv[N];
    contributions(round, rank, mine, dv);
    if (fs_prefix_broadcast_int64(MPI_COMM_WORLD, mine, N, op, out) != FS_OK) {
        fprintf(stderr, "rank %d: FAIL: fs_prefix_broadcast_int64 returned an error\n", rank);
        failures++;
    }
    MPI_Scan(mine, scan, N, MPI_INT64_T, mop, MPI_COMM_WORLD);
    MPI_Allgather(scan, N, MPI_INT64_T, all_scan, N, MPI_INT64_T, MPI_COMM_WORLD);
    for (int p = 0; p < nranks; p++)
        for (int i = 0; i < N; i++)
            if (out[p * N + i] != all_scan[p * N + i]) {
                if (failures++ < 10)
                    fprintf(stderr, "rank %d: FAIL: int64 op %d round %d position %d value %d: %" PRId64
                            " != MPI_Scan %" PRId64 "\n", rank, (int)op, round, p, i,
                            out[p * N + i], all_scan[p * N + i]);
            }
    if (op == FS_PREFIX_SUM) {
        int64_t ex[N] = {0};
        MPI_Exscan(mine, ex, N, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < N; i++) {
            int64_t want = rank == 0 ? 0 : ex[i]; /* MPI_Exscan leaves rank 0 undefined */
            if (fs_prefix_exclusive(out, N, rank, i) != want && failures++ < 10)
                fprintf(stderr, "rank %d: FAIL: exclusive prefix %d: %" PRId64 " != MPI_Exscan %" PRId64 "\n",
                        rank, i, fs_prefix_exclusive(out, N, rank, i), want);
        }
    }
    free(all_scan);
    free(out);
}

static void check_double(fs_prefix_op op, MPI_Op mop, int round)
{
    int64_t iv[N];
    double mine[N], scan[N], *all_scan = malloc((size_t)nranks * N * sizeof(double));
    double *out = malloc((size_t)nranks * N * sizeof(double));
    contributions(round, rank, iv, mine);
    if (fs_prefix_broadcast_double(MPI_COMM_WORLD, mine, N, op, out) != FS_OK) {
        fprintf(stderr, "rank %d: FAIL: fs_prefix_broadcast_double returned an error\n", rank);
        failures++;
    }
    MPI_Scan(mine, scan, N, MPI_DOUBLE, mop, MPI_COMM_WORLD);
    MPI_Allgather(scan, N, MPI_DOUBLE, all_scan, N, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int p = 0; p < nranks; p++)
        for (int i = 0; i < N; i++) {
            /* Sums may be associated differently from MPI_Scan's: compare
             * within rounding, exactly for max and min. */
            double a = out[p * N + i], b = all_scan[p * N + i];
            double tol = op == FS_PREFIX_SUM ? 1e-12 * (a < 0 ? -a : a) + 1e-12 : 0;
            if ((a - b > tol || b - a > tol) && failures++ < 10)
                fprintf(stderr, "rank %d: FAIL: double op %d round %d position %d value %d: %.17g != MPI_Scan %.17g\n",
                        rank, (int)op, round, p, i, a, b);
        }
    free(all_scan);
    free(out);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int checks = 0;
    for (int round = 0; round < 4; round++) {
        check_int(FS_PREFIX_SUM, MPI_SUM, round);
        check_int(FS_PREFIX_MAX, MPI_MAX, round);
        check_int(FS_PREFIX_MIN, MPI_MIN, round);
        check_double(FS_PREFIX_SUM, MPI_SUM, round);
        check_double(FS_PREFIX_MAX, MPI_MAX, round);
        check_double(FS_PREFIX_MIN, MPI_MIN, round);
        checks += 6;
    }
    /* The slab split fftshard derives from it: 13 rows on 5 ranks. */
    if (nranks == 5) {
        int64_t rows = rank < 3 ? 3 : 2, out[5];
        fs_prefix_broadcast_int64(MPI_COMM_WORLD, &rows, 1, FS_PREFIX_SUM, out);
        int64_t want[5] = {0, 3, 6, 9, 11};
        for (int p = 0; p < 5; p++)
            if (fs_prefix_exclusive(out, 1, p, 0) != want[p] && failures++ < 10)
                fprintf(stderr, "rank %d: FAIL: slab start of rank %d\n", rank, p);
        checks++;
    }
    long total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_prefix: %d checks on %d ranks, %ld failures\n", checks, nranks, total);
    MPI_Finalize();
    return total ? 1 : 0;
}
