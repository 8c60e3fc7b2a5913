/* SPDX-License-Identifier: GPL-3.0-or-later */
/* prefix: see prefix.h. */
#include "config.h"

#include "core/prefix.h"
#include "core/collective.h"

#include <float.h>
#include <stdlib.h>

static MPI_Op mpi_op(fs_prefix_op op)
{
    return op == FS_PREFIX_SUM ? MPI_SUM : op == FS_PREFIX_MAX ? MPI_MAX : MPI_MIN;
}

/* This process's rank in comm and the number of ranks. */
static fs_status rank_and_size(MPI_Comm comm, int *rank, int *size)
{
    int err = MPI_Comm_rank(comm, rank);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_size(comm, size);
    if (err != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "prefix broadcast: cannot learn the ranks: %s",
                            fs_mpi_strerror(err));
    return FS_OK;
}

fs_status fs_prefix_broadcast_int64(MPI_Comm comm, const int64_t *contrib, int n, fs_prefix_op op,
                                    int64_t *out)
{
    int rank, size;
    if (rank_and_size(comm, &rank, &size) != FS_OK)
        return FS_ERR_RUNTIME;
    int64_t identity = op == FS_PREFIX_SUM ? 0 : op == FS_PREFIX_MAX ? INT64_MIN : INT64_MAX;
    int64_t *buf = malloc((size_t)size * (size_t)(n > 0 ? n : 1) * sizeof *buf);
    if (!buf)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory for the prefix broadcast");
    /* Position p includes this rank's contribution when p >= rank. */
    for (int p = 0; p < size; p++)
        for (int i = 0; i < n; i++)
            buf[(size_t)p * (size_t)n + (size_t)i] = p >= rank ? contrib[i] : identity;
    fs_status st = fs_allreduce(comm, buf, out, size * n, MPI_INT64_T, mpi_op(op));
    free(buf);
    return st;
}

fs_status fs_prefix_broadcast_double(MPI_Comm comm, const double *contrib, int n, fs_prefix_op op,
                                     double *out)
{
    int rank, size;
    if (rank_and_size(comm, &rank, &size) != FS_OK)
        return FS_ERR_RUNTIME;
    double identity = op == FS_PREFIX_SUM ? 0.0 : op == FS_PREFIX_MAX ? -DBL_MAX : DBL_MAX;
    double *buf = malloc((size_t)size * (size_t)(n > 0 ? n : 1) * sizeof *buf);
    if (!buf)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory for the prefix broadcast");
    for (int p = 0; p < size; p++)
        for (int i = 0; i < n; i++)
            buf[(size_t)p * (size_t)n + (size_t)i] = p >= rank ? contrib[i] : identity;
    fs_status st = fs_allreduce(comm, buf, out, size * n, MPI_DOUBLE, mpi_op(op));
    free(buf);
    return st;
}

int64_t fs_prefix_exclusive(const int64_t *inclusive, int n, int p, int i)
{
    return p == 0 ? 0 : inclusive[(size_t)(p - 1) * (size_t)n + (size_t)i];
}
