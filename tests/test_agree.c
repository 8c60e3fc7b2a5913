/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_agree: "rank 0 decides, every rank agrees" (src/core/collective.h).
 *
 * Run under mpiexec on any number of ranks (unit.bats: 1 to 4). Strings
 * (NULL, empty, short, 100 kB) go from the first and the last rank to every
 * rank; bytes likewise; a decision runs on rank 0 alone and every rank gets
 * its status, success or failure; fs_error_agree_quiet gives every rank the
 * highest status, spinning or yielding; fs_error_agree_shared its message
 * too. Exit 0 when all passed. */
#include "config.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/collective.h"

static int rank, nranks, checks;
static long failures;

static void check(int ok, const char *what)
{
    checks++;
    if (!ok && failures++ < 20)
        fprintf(stderr, "rank %d: FAIL: %s\n", rank, what);
}

/* The text of a string of `len` characters, the same on every rank. */
static char *make_text(size_t len)
{
    char *s = malloc(len + 1);
    if (!s) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < len; i++)
        s[i] = (char)('a' + (i * 7 + len) % 26);
    s[len] = '\0';
    return s;
}

static void check_string(int root, const char *text)
{
    char *mine = rank == root && text ? strdup(text) : NULL, *before = mine;
    /* The receivers' pointer is output only: garbage in it must not matter. */
    char *s = rank == root ? mine : (char *)&before;
    fs_status st = fs_bcast_string(MPI_COMM_WORLD, root, &s);
    check(st == FS_OK, "fs_bcast_string returns FS_OK");
    if (rank == root)
        check(s == before, "the root keeps its own string");
    else if (!text)
        check(s == NULL, "NULL on the root is NULL everywhere");
    else
        check(s && s != text && strcmp(s, text) == 0, "the root's string arrives whole");
    free(s);
}

static void check_bytes(int root)
{
    int64_t v[5];
    for (int i = 0; i < 5; i++)
        v[i] = rank == root ? (INT64_C(1) << 40) + i * 3 - root : -1;
    check(fs_bcast_bytes(MPI_COMM_WORLD, root, v, (int64_t)sizeof v) == FS_OK,
          "fs_bcast_bytes returns FS_OK");
    int same = 1;
    for (int i = 0; i < 5; i++)
        same &= v[i] == (INT64_C(1) << 40) + i * 3 - root;
    check(same, "the root's bytes arrive whole");
}

static int calls;

static fs_status decide(void *arg)
{
    calls++;
    return *(fs_status *)arg;
}

static void check_decision(fs_status verdict, int quietly)
{
    calls = 0;
    fs_status st = quietly ? fs_root_decides_quietly(MPI_COMM_WORLD, decide, &verdict)
                           : fs_root_decides(MPI_COMM_WORLD, decide, &verdict);
    check(st == verdict, "every rank gets rank 0's verdict");
    check(calls == (rank == 0), "only rank 0 decides");
    fs_error_clear();
}

/* fs_error_agree_quiet: the highest status of any rank on every rank, with
 * the agreement spinning in MPI_Allreduce or yielding (a crowded node). */
static void check_status_agreement(int yields)
{
    fs_collective_yield(yields);
    check(fs_error_agree_quiet(MPI_COMM_WORLD, FS_OK) == FS_OK, "every rank OK: OK");
    fs_status last = rank == nranks - 1 ? FS_ERR_OUTPUT : rank == 0 ? FS_ERR_INPUT : FS_OK;
    fs_status want = nranks == 1 ? FS_ERR_OUTPUT : FS_ERR_INPUT > FS_ERR_OUTPUT ? FS_ERR_INPUT : FS_ERR_OUTPUT;
    check(fs_error_agree_quiet(MPI_COMM_WORLD, last) == want, "the highest status of any rank");
    fs_collective_yield(0);
    fs_error_clear();
}

/* fs_error_agree_shared: every rank takes the status and message of the
 * rank that speaks (the highest status, the lowest rank holding it), its
 * own failure of a lower status included. */
static void check_shared(int yields)
{
    fs_collective_yield(yields);
    fs_error_clear();
    check(fs_error_agree_shared(MPI_COMM_WORLD, FS_OK) == FS_OK, "shared: every rank OK: OK");
    check(fs_error_status() == FS_OK, "shared: no message when every rank is OK");
    fs_status mine = FS_OK;
    if (rank == nranks - 1)
        mine = fs_error_set(FS_ERR_OUTPUT, "the last rank's output (rank %d)", rank);
    else if (rank == 0)
        mine = fs_error_set(FS_ERR_RUNTIME, "rank 0's runtime failure");
    char want[64];
    snprintf(want, sizeof want, "the last rank's output (rank %d)", nranks - 1);
    check(fs_error_agree_shared(MPI_COMM_WORLD, mine) == FS_ERR_OUTPUT, "shared: the highest status");
    check(fs_error_status() == FS_ERR_OUTPUT, "shared: every rank holds the status");
    check(strcmp(fs_error_message(), want) == 0, "shared: every rank holds the message");
    fs_collective_yield(0);
    fs_error_clear();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    fs_error_set_program("test_agree");
    char *big = make_text(100000), *small = make_text(17);
    int roots[2] = {0, nranks - 1};
    for (int r = 0; r < 2; r++) {
        check_string(roots[r], NULL);
        check_string(roots[r], "");
        check_string(roots[r], small);
        check_string(roots[r], big);
        check_bytes(roots[r]);
    }
    check_decision(FS_OK, 0);
    check_decision(FS_OK, 1);
    /* A failure prints its message once ("test_agree: error: ..."). */
    fs_error_set(rank == 0 ? FS_ERR_OUTPUT : FS_OK, "the expected refusal (not a failure of the test)");
    check_decision(FS_ERR_OUTPUT, 0);
    check_decision(FS_ERR_RUNTIME, 1);
    check_status_agreement(0);
    check_status_agreement(1);
    check_shared(0);
    check_shared(1);
    free(big);
    free(small);
    long total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_agree: %d checks on %d ranks, %ld failures\n", checks, nranks, total);
    MPI_Finalize();
    return total != 0;
}
