/* SPDX-License-Identifier: GPL-3.0-or-later */
/* collective: see collective.h. */
#include "config.h"

#include "core/collective.h"

#include <stdlib.h>
#include <string.h>

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
