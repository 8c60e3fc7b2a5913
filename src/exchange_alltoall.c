/* exchange_alltoall: the baseline strategy, one MPI_Alltoallv.
 *
 * Pack every destination's box into a send buffer, exchange, then unpack.
 * When the boxes received land contiguously and in rank order in the `to`
 * layout (the slab transpose), MPI receives straight into the data buffer and
 * the unpack disappears; the cost is one send buffer the size of the array. */
#include "config.h"

#include "exchange.h"
#include "fft.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct alltoall_plan {
    int *send_counts, *send_displs, *recv_counts, *recv_displs;
    void *send_buf;
    void *recv_buf;          /* NULL when receiving in place */
} alltoall_plan;

static void alltoall_destroy(fs_exchange *x)
{
    alltoall_plan *p = x->impl;
    if (!p)
        return;
    free(p->send_counts);
    free(p->send_displs);
    free(p->recv_counts);
    free(p->recv_displs);
    fs_buffer_free(p->send_buf);
    fs_buffer_free(p->recv_buf);
    free(p);
    x->impl = NULL;
}

static fs_status alltoall_plan_new(fs_exchange *x)
{
    const fs_redist *rd = x->args.rd;
    int n = rd->npeers;
    alltoall_plan *p = calloc(1, sizeof *p);
    if (!p)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory planning the alltoall exchange");
    x->impl = p;
    p->send_counts = calloc((size_t)n, sizeof(int));
    p->send_displs = calloc((size_t)n, sizeof(int));
    p->recv_counts = calloc((size_t)n, sizeof(int));
    p->recv_displs = calloc((size_t)n, sizeof(int));
    if (!p->send_counts || !p->send_displs || !p->recv_counts || !p->recv_displs)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory planning the alltoall exchange");
    int64_t send_off = 0, recv_off = 0;
    for (int q = 0; q < n; q++) {
        if (rd->send_elems[q] > INT_MAX || rd->recv_elems[q] > INT_MAX || send_off > INT_MAX ||
            recv_off > INT_MAX)
            return fs_error_set(FS_ERR_RUNTIME,
                                "alltoall exchange: a block of more than %d elements per rank "
                                "exceeds MPI_Alltoallv's int counts",
                                INT_MAX);
        p->send_counts[q] = (int)rd->send_elems[q];
        p->send_displs[q] = (int)send_off;
        p->recv_counts[q] = (int)rd->recv_elems[q];
        p->recv_displs[q] = (int)recv_off;
        send_off += rd->send_elems[q];
        recv_off += rd->recv_elems[q];
    }
    size_t eb = x->args.elem_bytes;
    int64_t from_elems = fs_box_elems(&rd->from), to_elems = fs_box_elems(&rd->to);
    x->work_elems = from_elems > to_elems ? from_elems : to_elems;
    /* malloc(0) may return NULL; ask for at least one element. */
    p->send_buf = fs_buffer_alloc((size_t)(rd->send_total ? rd->send_total : 1) * eb);
    if (!p->send_buf)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory: alltoall send buffer of %lld bytes",
                            (long long)rd->send_total * (long long)eb);
    x->scratch_bytes = (size_t)rd->send_total * eb;
    if (!fs_exchange_receives_in_place(rd)) {
        p->recv_buf = fs_buffer_alloc((size_t)(rd->recv_total ? rd->recv_total : 1) * eb);
        if (!p->recv_buf)
            return fs_error_set(FS_ERR_RUNTIME,
                                "out of memory: alltoall receive buffer of %lld bytes",
                                (long long)rd->recv_total * (long long)eb);
        x->scratch_bytes += (size_t)rd->recv_total * eb;
    }
    return FS_OK;
}

static fs_status alltoall_execute(fs_exchange *x, void *data)
{
    const fs_redist *rd = x->args.rd;
    alltoall_plan *p = x->impl;
    size_t eb = x->args.elem_bytes;
    int n = rd->npeers;

    double t0 = MPI_Wtime();
    for (int q = 0; q < n; q++)
        fs_box_pack(&rd->send[q], &rd->from, data, (char *)p->send_buf + (size_t)p->send_displs[q] * eb,
                    eb);
    double t1 = MPI_Wtime();
    void *recv = p->recv_buf ? p->recv_buf : data;
    int err = MPI_Alltoallv(p->send_buf, p->send_counts, p->send_displs, x->args.elem_type, recv,
                            p->recv_counts, p->recv_displs, x->args.elem_type, x->args.comm);
    if (err != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Alltoallv failed: %s", fs_mpi_strerror(err));
    double t2 = MPI_Wtime();
    if (p->recv_buf)
        for (int q = 0; q < n; q++)
            fs_box_unpack(&rd->recv[q], &rd->to, data,
                          (char *)p->recv_buf + (size_t)p->recv_displs[q] * eb, eb);
    double t3 = MPI_Wtime();

    x->stats.t_pack_s += t1 - t0;
    x->stats.t_comm_s += t2 - t1;
    x->stats.t_unpack_s += t3 - t2;
    fs_exchange_count(x, 1, (uint64_t)(rd->send_total - rd->send_elems[rd->self]) * eb);
    return FS_OK;
}

const fs_exchange_ops fs_exchange_alltoall = {
    .name = "alltoall",
    .summary = "MPI_Alltoallv on packed blocks (baseline)",
    .uses_hooks = 0,
    .in_place = 0,
    .plan = alltoall_plan_new,
    .execute = alltoall_execute,
    .destroy = alltoall_destroy,
};
