/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sim_shm: see sim_shm.h. */
#include "config.h"

#include "sim_shm.h"

#include <simgrid/actor.h>
#include <smpi/smpi.h>
#include <stdlib.h>
#include <string.h>

static double copy_rate;   /* bytes/s; 0: off */
static double wake_s;      /* after a wait that blocked; 0: none */

/* The receives in flight: request and bytes. A handful per peer on the
 * few ranks of one node, so a list does. */
typedef struct pending {
    MPI_Request req;
    double bytes;
} pending;

static pending *list;
static size_t count, capacity;

void sim_shm_set_copy_rate(double bytes_per_s)
{
    copy_rate = bytes_per_s;
}

void sim_shm_set_wake(double seconds)
{
    wake_s = seconds;
}

static void track(MPI_Request req, double bytes)
{
    if (count == capacity) {
        size_t n = capacity ? 2 * capacity : 256;
        pending *p = realloc(list, n * sizeof *p);
        if (!p)
            abort();
        list = p;
        capacity = n;
    }
    list[count].req = req;
    list[count].bytes = bytes;
    count++;
}

/* The bytes of a tracked receive, forgotten; -1 when not tracked. */
static double untrack(MPI_Request req)
{
    for (size_t i = 0; i < count; i++)
        if (list[i].req == req) {
            double b = list[i].bytes;
            list[i] = list[--count];
            return b;
        }
    return -1;
}

static void charge(double bytes)
{
    if (bytes > 0)
        smpi_execute_flops(bytes / copy_rate * SIM_REF_SPEED);
}

/* After a wait or test: every request of `before` that the call completed
 * (now MPI_REQUEST_NULL) and that was a tracked receive costs its copy. */
static void settle(int n, const MPI_Request *before, const MPI_Request *after)
{
    double bytes = 0;
    for (int i = 0; i < n; i++)
        if (before[i] != MPI_REQUEST_NULL && after[i] == MPI_REQUEST_NULL) {
            double b = untrack(before[i]);
            if (b > 0)
                bytes += b;
        }
    charge(bytes);
}

/* The request array before a call (on the stack when small). */
#define SNAP_SMALL 64
typedef struct snapshot {
    MPI_Request small[SNAP_SMALL];
    MPI_Request *reqs;
} snapshot;

static const MPI_Request *snap(snapshot *s, int n, const MPI_Request *reqs)
{
    s->reqs = n <= SNAP_SMALL ? s->small : malloc((size_t)n * sizeof *reqs);
    if (!s->reqs)
        abort();
    memcpy(s->reqs, reqs, (size_t)n * sizeof *reqs);
    return s->reqs;
}

static void done(snapshot *s)
{
    if (s->reqs != s->small)
        free(s->reqs);
}

int MPI_Irecv(void *buf, int n, MPI_Datatype type, int src, int tag, MPI_Comm comm, MPI_Request *req)
{
    int err = PMPI_Irecv(buf, n, type, src, tag, comm, req);
    int size = 0;
    if (copy_rate > 0 && err == MPI_SUCCESS && n > 0 && PMPI_Type_size(type, &size) == MPI_SUCCESS)
        track(*req, (double)n * size);
    return err;
}

/* Each wait and test as MPI's, then the copies of the receives it completed. */
#define SETTLED(n, reqs, call)                              \
    do {                                                    \
        if (copy_rate <= 0 || (n) <= 0)                     \
            return call;                                    \
        snapshot s;                                         \
        const MPI_Request *before = snap(&s, (n), (reqs));  \
        int err = call;                                     \
        settle((n), before, (reqs));                        \
        done(&s);                                           \
        return err;                                         \
    } while (0)

/* A blocking wait as MPI's; when it had to wait (simulated time passed),
 * the rank then waits wake_s more for its turn on a core. */
#define WOKEN(call)                                  \
    do {                                             \
        if (wake_s <= 0)                             \
            return call;                             \
        double t0 = MPI_Wtime();                     \
        int err_ = call;                             \
        if (MPI_Wtime() > t0)                        \
            sg_actor_sleep_for(wake_s);              \
        return err_;                                 \
    } while (0)

static int wait1(MPI_Request *req, MPI_Status *status)
{
    WOKEN(PMPI_Wait(req, status));
}

static int waitall(int n, MPI_Request *reqs, MPI_Status *statuses)
{
    WOKEN(PMPI_Waitall(n, reqs, statuses));
}

static int waitany(int n, MPI_Request *reqs, int *index, MPI_Status *status)
{
    WOKEN(PMPI_Waitany(n, reqs, index, status));
}

static int waitsome(int n, MPI_Request *reqs, int *outcount, int *indices, MPI_Status *statuses)
{
    WOKEN(PMPI_Waitsome(n, reqs, outcount, indices, statuses));
}

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    SETTLED(1, req, wait1(req, status));
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    SETTLED(1, req, PMPI_Test(req, flag, status));
}

int MPI_Waitall(int n, MPI_Request *reqs, MPI_Status *statuses)
{
    SETTLED(n, reqs, waitall(n, reqs, statuses));
}

int MPI_Testall(int n, MPI_Request *reqs, int *flag, MPI_Status *statuses)
{
    SETTLED(n, reqs, PMPI_Testall(n, reqs, flag, statuses));
}

int MPI_Waitany(int n, MPI_Request *reqs, int *index, MPI_Status *status)
{
    SETTLED(n, reqs, waitany(n, reqs, index, status));
}

int MPI_Testany(int n, MPI_Request *reqs, int *index, int *flag, MPI_Status *status)
{
    SETTLED(n, reqs, PMPI_Testany(n, reqs, index, flag, status));
}

int MPI_Waitsome(int n, MPI_Request *reqs, int *outcount, int *indices, MPI_Status *statuses)
{
    SETTLED(n, reqs, waitsome(n, reqs, outcount, indices, statuses));
}

int MPI_Testsome(int n, MPI_Request *reqs, int *outcount, int *indices, MPI_Status *statuses)
{
    SETTLED(n, reqs, PMPI_Testsome(n, reqs, outcount, indices, statuses));
}

/* alltoall's one call: a blocking wait, and the other ranks' blocks. */
int MPI_Alltoallv(const void *sendbuf, const int *sendcounts, const int *sdispls, MPI_Datatype sendtype,
                  void *recvbuf, const int *recvcounts, const int *rdispls, MPI_Datatype recvtype,
                  MPI_Comm comm)
{
    double t0 = wake_s > 0 ? MPI_Wtime() : 0;
    int err = PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                             recvtype, comm);
    if (wake_s > 0 && MPI_Wtime() > t0)
        sg_actor_sleep_for(wake_s);
    int me = 0, n = 0, size = 0;
    if (copy_rate > 0 && err == MPI_SUCCESS && PMPI_Comm_rank(comm, &me) == MPI_SUCCESS &&
        PMPI_Comm_size(comm, &n) == MPI_SUCCESS && PMPI_Type_size(recvtype, &size) == MPI_SUCCESS) {
        double bytes = 0;
        for (int q = 0; q < n; q++)
            if (q != me)
                bytes += (double)recvcounts[q] * size;
        charge(bytes);
    }
    return err;
}
