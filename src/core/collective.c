/* SPDX-License-Identifier: GPL-3.0-or-later */
/* collective: see collective.h. */
#include "config.h"

#include "core/collective.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/nodemem.h"
#include "core/testhooks.h"

/* ----------------------------------------------------------------- waits */

static int yields_now;

void fs_collective_yield(int yields)
{
    yields_now = yields;
}

int fs_wait_all(int yields, int n, MPI_Request *reqs)
{
    if (!yields)
        return MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    for (;;) {
        int done = 0, err = MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
        if (err != MPI_SUCCESS || done)
            return err;
        sched_yield();
    }
}

int fs_wait_any(int yields, int n, MPI_Request *reqs, int *index)
{
    if (!yields)
        return MPI_Waitany(n, reqs, index, MPI_STATUS_IGNORE);
    for (;;) {
        /* done is true with MPI_UNDEFINED when no request is active. */
        int done = 0, err = MPI_Testany(n, reqs, index, &done, MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS || done)
            return err;
        sched_yield();
    }
}

int fs_wait_some(int yields, int n, MPI_Request *reqs, int *outcount, int *indices)
{
    if (!yields)
        return MPI_Waitsome(n, reqs, outcount, indices, MPI_STATUSES_IGNORE);
    for (;;) {
        /* MPI_UNDEFINED when no request is active, as MPI_Waitsome. */
        int err = MPI_Testsome(n, reqs, outcount, indices, MPI_STATUSES_IGNORE);
        if (err != MPI_SUCCESS || *outcount != 0)
            return err;
        sched_yield();
    }
}

/* ------------------------------------------------------------ reductions */

/* MPI_Allreduce; once the node is crowded started as MPI_Iallreduce and
 * waited for with the core given up between polls. The MPI error code. */
static int allreduce(MPI_Comm comm, const void *in, void *out, int count, MPI_Datatype type,
                     MPI_Op op)
{
    if (!yields_now)
        return MPI_Allreduce(in, out, count, type, op, comm);
    MPI_Request req;
    int err = MPI_Iallreduce(in, out, count, type, op, comm, &req);
    return err == MPI_SUCCESS ? fs_wait_all(1, 1, &req) : err;
}

fs_status fs_allreduce(MPI_Comm comm, const void *in, void *out, int count, MPI_Datatype type,
                       MPI_Op op)
{
    int err = allreduce(comm, in, out, count, type, op);
    return err == MPI_SUCCESS ? FS_OK
                              : fs_error_set(FS_ERR_RUNTIME, "MPI_Allreduce failed: %s",
                                             fs_mpi_strerror(err));
}

#define SUM_PIECE ((int64_t)1 << 20)

fs_status fs_allreduce_sum(MPI_Comm comm, double *a, int64_t n)
{
    fs_status st = FS_OK;
    for (int64_t at = 0; at < n && st == FS_OK; at += SUM_PIECE) {
        int count = (int)(n - at < SUM_PIECE ? n - at : SUM_PIECE);
        st = fs_allreduce(comm, MPI_IN_PLACE, a + at, count, MPI_DOUBLE, MPI_SUM);
    }
    return st;
}

int64_t fs_allreduce_sum_bytes(int64_t n, int nranks)
{
    int64_t bytes = (n < SUM_PIECE ? n : SUM_PIECE) * (int64_t)sizeof(double);
    return nranks < 2 ? 0 : (nranks & (nranks - 1)) == 0 ? bytes / 2 : bytes;
}

/* MPI's user operation for fs_allreduce_sum_min: pairs (sum, min). */
static void sum_min(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const int64_t *a = in;
    int64_t *b = inout;
    for (int i = 0; i + 1 < *len; i += 2) {
        b[i] += a[i];
        if (a[i + 1] < b[i + 1])
            b[i + 1] = a[i + 1];
    }
}

fs_status fs_allreduce_sum_min(MPI_Comm comm, const int64_t mine[2], int64_t all[2])
{
    MPI_Op op;
    int err = MPI_Op_create(sum_min, 1, &op);
    if (err != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Op_create failed: %s", fs_mpi_strerror(err));
    fs_status st = fs_allreduce(comm, mine, all, 2, MPI_INT64_T, op);
    if ((err = MPI_Op_free(&op)) != MPI_SUCCESS && st == FS_OK)
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Op_free failed: %s", fs_mpi_strerror(err));
    return st;
}

fs_status fs_every_rank(MPI_Comm comm, int mine, int *all)
{
    *all = 0;
    return fs_error_agree(comm, fs_allreduce(comm, &mine, all, 1, MPI_INT, MPI_MIN));
}

/* ---------------------------------------------------------------- status */

/* The agreed status, and the rank that is to speak for it. */
static fs_status agree(MPI_Comm comm, fs_status local, int *reporter, int *rank)
{
    int size;
    if (MPI_Comm_size(comm, &size) != MPI_SUCCESS || MPI_Comm_rank(comm, rank) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, FS_ERR_RUNTIME);
    /* Pack (status, -rank) so that one MAXLOC-like max picks the highest
     * status and, among equals, the lowest rank. */
    long long mine = (long long)local * (size + 1) + (size - *rank);
    long long worst;
    if (allreduce(comm, &mine, &worst, 1, MPI_LONG_LONG, MPI_MAX) != MPI_SUCCESS) {
        /* Agreement itself is broken: nothing safe is left but ending the job. */
        fprintf(stderr, "%s: error: MPI failed while ranks compared their status\n",
                fs_error_program());
        MPI_Abort(MPI_COMM_WORLD, FS_ERR_RUNTIME);
    }
    *reporter = size - (int)(worst % (size + 1));
    return (fs_status)(worst / (size + 1));
}

fs_status fs_error_agree(MPI_Comm comm, fs_status local)
{
    int reporter, rank;
    fs_status agreed = agree(comm, local, &reporter, &rank);
    if (agreed != FS_OK && reporter == rank)
        fs_error_print();
    return agreed;
}

fs_status fs_error_agree_quiet(MPI_Comm comm, fs_status local)
{
    int reporter, rank;
    return agree(comm, local, &reporter, &rank);
}

/* The broadcast itself, not agreed: the callers agree once for all of it. */
static fs_status bcast_pieces(MPI_Comm comm, int root, void *buf, int64_t bytes)
{
    const int64_t piece = (int64_t)1 << 30;
    for (int64_t off = 0; off < bytes; off += piece) {
        int n = (int)(bytes - off < piece ? bytes - off : piece);
        int err = MPI_Bcast((char *)buf + off, n, MPI_BYTE, root, comm);
        if (err != MPI_SUCCESS)
            return fs_error_set(FS_ERR_RUNTIME, "MPI_Bcast failed: %s", fs_mpi_strerror(err));
    }
    return FS_OK;
}

fs_status fs_error_agree_shared(MPI_Comm comm, fs_status local)
{
    int reporter, rank;
    fs_status agreed = agree(comm, local, &reporter, &rank);
    if (agreed == FS_OK)
        return FS_OK;
    char message[1024] = "";
    if (rank == reporter)
        snprintf(message, sizeof message, "%s", fs_error_message());
    fs_status st = bcast_pieces(comm, reporter, message, (int64_t)sizeof message);
    if (st != FS_OK)
        return st;
    if (rank != reporter) {
        fs_error_clear();
        fs_error_set(agreed, "%s", message);
    }
    return agreed;
}

/* ------------------------------------------------------ rank 0 decides */

static fs_status root_decides(MPI_Comm comm, fs_status (*decide)(void *), void *arg, int quietly)
{
    int rank;
    fs_status st = MPI_Comm_rank(comm, &rank) == MPI_SUCCESS
                       ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed");
    if (st == FS_OK && rank == 0)
        st = decide(arg);
    return quietly ? fs_error_agree_quiet(comm, st) : fs_error_agree(comm, st);
}

fs_status fs_root_decides(MPI_Comm comm, fs_status (*decide)(void *), void *arg)
{
    return root_decides(comm, decide, arg, 0);
}

fs_status fs_root_decides_quietly(MPI_Comm comm, fs_status (*decide)(void *), void *arg)
{
    return root_decides(comm, decide, arg, 1);
}

fs_status fs_bcast_bytes(MPI_Comm comm, int root, void *buf, int64_t bytes)
{
    return fs_error_agree(comm, bcast_pieces(comm, root, buf, bytes));
}

fs_status fs_bcast_string(MPI_Comm comm, int root, char **s)
{
    int rank;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed"));
    int is_root = rank == root;
    /* The length first, -1 for NULL, so the others can allocate. */
    int64_t len = is_root && *s ? (int64_t)strlen(*s) : -1;
    fs_status st = bcast_pieces(comm, root, &len, sizeof len);
    if (!is_root) {
        *s = NULL;
        if (st == FS_OK && len >= 0 && !(*s = malloc((size_t)len + 1)))
            st = fs_error_set(FS_ERR_RUNTIME, "out of memory receiving %lld bytes of text",
                              (long long)len);
    }
    if ((st = fs_error_agree(comm, st)) == FS_OK && len >= 0)
        st = fs_error_agree(comm, bcast_pieces(comm, root, *s, len));
    if (st == FS_OK && !is_root && *s)
        (*s)[len] = '\0';
    if (st != FS_OK && !is_root) {
        free(*s);
        *s = NULL;
    }
    return st;
}

/* ------------------------------------------------------------------ node */

/* This rank's place on its node: the ranks there (*local_rank, *local_size)
 * and the CPUs they may run on (the union of their affinity masks), from
 * one split of comm. Not agreed. */
static fs_status node_split(MPI_Comm comm, int *local_rank, int *local_size, int *cpus)
{
    MPI_Comm node = MPI_COMM_NULL;
    cpu_set_t mine, all;
    fs_nodemem_own_cpus(&mine);
    CPU_ZERO(&all);
    fs_status st = FS_OK;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS ||
        MPI_Comm_rank(node, local_rank) != MPI_SUCCESS ||
        MPI_Comm_size(node, local_size) != MPI_SUCCESS)
        st = fs_error_set(FS_ERR_RUNTIME, "cannot count the ranks of this node: "
                          "MPI_Comm_split_type failed");
    /* Every rank of a node in the reduction or none: the hook stands for
     * the count on every rank alike. */
    if (st == FS_OK && !*cpus)
        st = fs_allreduce(node, &mine, &all, (int)sizeof mine, MPI_BYTE, MPI_BOR);
    if (st == FS_OK && !*cpus)
        *cpus = CPU_COUNT(&all) > 0 ? CPU_COUNT(&all) : 1;
    if (node != MPI_COMM_NULL && MPI_Comm_free(&node) != MPI_SUCCESS && st == FS_OK)
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_free failed");
    return st;
}

fs_status fs_node_facts(MPI_Comm comm, uint64_t given, int ranks_per_node, fs_node *out)
{
    memset(out, 0, sizeof *out);
    int local_rank = 0, local_size = 1, level = MPI_THREAD_SINGLE;
    out->cpus = fs_testhooks_node_cpus();
    fs_status st = node_split(comm, &local_rank, &local_size, &out->cpus);
    if (st == FS_OK && MPI_Query_thread(&level) != MPI_SUCCESS)
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Query_thread failed");
    if ((st = fs_error_agree(comm, st)) != FS_OK)
        return st;
    out->ranks = ranks_per_node > 0 ? ranks_per_node : local_size;
    const char *limited_by = "MemAvailable";
    /* One reader per node; the smallest share of any node counts. */
    int64_t mem = INT64_MAX;
    if (given)
        mem = given > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)given;
    else if (local_rank == 0) {
        uint64_t avail = fs_nodemem_available(&limited_by) / (uint64_t)out->ranks;
        /* The cgroup charges the ranks' memory since MPI_Init already: a
         * rank's share is what is left, and what it holds (as rank 0's). */
        if (avail && strcmp(limited_by, "MemAvailable") != 0)
            avail += fs_nodemem_own_anon();
        mem = avail > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)avail;
    }
    int hard = !given && strcmp(limited_by, "MemAvailable") != 0;
    int forced = fs_testhooks_io_thread();
    int io = level >= MPI_THREAD_FUNNELED &&
             (forced >= 0 ? forced : 2 * out->ranks <= out->cpus);
    /* One reduction for all: the least memory, any node crowded, every
     * rank's thread with a core (MIN as the MAX of the negated: MPICH
     * 4.0's MPI_MIN compares unsigned types as signed). */
    int64_t v[4] = {-mem, out->ranks > out->cpus, -(int64_t)io, hard}, all[4] = {0, 0, 0, 0};
    if ((st = fs_error_agree(comm, fs_allreduce(comm, v, all, 4, MPI_INT64_T, MPI_MAX))) != FS_OK)
        return st;
    out->mem_per_rank = (uint64_t)-all[0];
    out->crowded = (int)all[1];
    out->io_thread = (int)-all[2];
    out->mem_hard = (int)all[3];
    /* Rank 0's words: the ranks agree on the figure, which is what counts. */
    if (given)
        snprintf(out->mem_source, sizeof out->mem_source, "--mem-per-rank");
    else
        snprintf(out->mem_source, sizeof out->mem_source, "%s of the node over %d rank%s",
                 limited_by, out->ranks, out->ranks == 1 ? "" : "s");
    return FS_OK;
}
