/* SPDX-License-Identifier: GPL-3.0-or-later */
/* exchange_alltoall: the baseline strategy, one MPI_Alltoallv.
 *
 * Pack every destination's box into a send buffer, exchange, then unpack.
 * When the boxes received land contiguously and in rank order in the `to`
 * layout (the slab transpose), MPI receives straight into the data buffer and
 * the unpack disappears; the own block then usually moves inside the data
 * buffer too (fs_exchange_own_moves_in_place), so the send buffer holds only
 * the other ranks' blocks: (P-1)/P of the local array.
 *
 * When the runs are long enough (fs_exchange_direct) there is no packing:
 * a second array, every block sent straight from the data buffer into its
 * place in the second array as point-to-point messages cut at the runs of
 * both sides (those of the split path, so ranks of either kind exchange
 * them), the own block copied there once, and the second array becomes the
 * data buffer. */
#include "config.h"

#include "exchange/exchange.h"
#include "core/collective.h"
#include "core/buffer.h"
#include "core/testhooks.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Messages of at most this many bytes when counts exceed MPI's ints. */
#define SPLIT_BYTES ((int64_t)1 << 30)

typedef struct alltoall_plan {
    int *send_counts, *send_displs, *recv_counts, *recv_displs;
    int64_t *send_off, *recv_off;   /* elements, 64-bit */
    int split;               /* counts above INT_MAX: point-to-point pieces instead */
    int own_in_place;        /* the own block moves inside the data buffer */
    int direct;              /* straight from data into x->second (no send buffer) */
    int64_t piece_bytes;
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
    free(p->send_off);
    free(p->recv_off);
    fs_buffer_free(p->send_buf);
    fs_buffer_free(p->recv_buf);
    free(p);
    x->impl = NULL;
}

/* FFTSHARD_MPI_INT_LIMIT lowers the limit so tests reach the split path
 * without 32 GiB blocks. */
/* FFTSHARD_MPI_INT_LIMIT lowers the limit so tests reach the split path
 * without 32 GiB blocks. */
static int64_t int_limit(void)
{
    return fs_testhooks_mpi_int_limit();
}

static int64_t split_piece_bytes(size_t elem_bytes, int64_t limit)
{
    return limit * (int64_t)elem_bytes < SPLIT_BYTES ? limit * (int64_t)elem_bytes : SPLIT_BYTES;
}

/* Nonzero when this rank's counts or displacements exceed MPI's ints. */
static int local_split(const fs_redist *rd, int own_in_place, int64_t limit)
{
    int64_t send_off = 0, recv_off = 0;
    for (int q = 0; q < rd->npeers; q++) {
        if (rd->send_elems[q] > limit || rd->recv_elems[q] > limit || send_off > limit ||
            recv_off > limit)
            return 1;
        if (!own_in_place || q != rd->self)
            send_off += rd->send_elems[q];
        recv_off += rd->recv_elems[q];
    }
    return 0;
}

/* Elements of the send buffer (the other ranks' blocks, and the own one
 * unless it moves in place) and of the receive buffer (0: in place). */
static void buffer_elems(const fs_exchange_args *args, int64_t *send, int64_t *recv)
{
    const fs_redist *rd = args->rd;
    if (fs_exchange_direct(args)) {
        *send = *recv = 0;
        return;
    }
    int own_in_place = fs_exchange_own_moves_in_place_bounded(rd);
    *send = rd->send_total - (own_in_place ? rd->send_elems[rd->self] : 0);
    *recv = fs_exchange_receives_in_place(rd) ? 0 : rd->recv_total;
}

static void alltoall_estimate(const fs_exchange_args *args, fs_exchange_estimate *est)
{
    const fs_redist *rd = args->rd;
    int64_t send, recv;
    buffer_elems(args, &send, &recv);
    int direct = fs_exchange_direct(args);
    est->work_elems = fs_exchange_layout_elems(rd);
    est->second_elems = direct ? est->work_elems : 0;
    /* the packing buffers resident in whole huge pages (the second array
     * is the footprint's to round, as the data buffer it takes turns with) */
    est->scratch_bytes = fs_buffer_resident((size_t)send * args->elem_bytes) +
                         fs_buffer_resident((size_t)recv * args->elem_bytes) +
                         (size_t)est->second_elems * args->elem_bytes;
    /* One collective call, or, split or direct (judged on this rank alone;
     * the plan goes point to point when any rank must), point-to-point
     * pieces. */
    int64_t limit = int_limit();
    int own_in_place = !direct && fs_exchange_own_moves_in_place_bounded(rd);
    est->messages = 1;
    if (direct || local_split(rd, own_in_place, limit)) {
        int64_t piece = split_piece_bytes(args->elem_bytes, limit);
        est->messages = 0;
        for (int q = 0; q < rd->npeers; q++)
            if ((!own_in_place && !direct) || q != rd->self)
                est->messages += (uint64_t)fs_exchange_pieces(rd->send_elems[q] * (int64_t)args->elem_bytes,
                                                              piece, fs_exchange_cut_bytes(args, q, 1));
    }
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
    p->send_off = calloc((size_t)n, sizeof(int64_t));
    p->recv_off = calloc((size_t)n, sizeof(int64_t));
    if (!p->send_counts || !p->send_displs || !p->recv_counts || !p->recv_displs || !p->send_off ||
        !p->recv_off)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory planning the alltoall exchange");
    int64_t send_off = 0, recv_off = 0;
    int64_t limit = int_limit();
    p->piece_bytes = split_piece_bytes(x->args.elem_bytes, limit);
    p->direct = fs_exchange_direct(&x->args);
    p->own_in_place = !p->direct && fs_exchange_own_moves_in_place(rd);
    /* MPI_Alltoallv's counts and displacements are ints: beyond them the
     * same exchange goes as point-to-point messages of at most 1 GiB, as it
     * does when any rank sends its blocks straight from its data. */
    p->split = p->direct || local_split(rd, p->own_in_place, limit);
    for (int q = 0; q < n; q++) {
        int moved = p->own_in_place && q == rd->self;
        p->send_counts[q] = moved ? 0 : (int)(rd->send_elems[q] & INT_MAX);
        p->send_displs[q] = (int)(send_off & INT_MAX);
        p->recv_counts[q] = moved ? 0 : (int)(rd->recv_elems[q] & INT_MAX);
        p->recv_displs[q] = (int)(recv_off & INT_MAX);
        p->send_off[q] = send_off;
        p->recv_off[q] = recv_off;
        if (!moved)
            send_off += rd->send_elems[q];
        recv_off += rd->recv_elems[q];
    }
    int any_split = 0;
    fs_status st = fs_allreduce(x->args.comm, &p->split, &any_split, 1, MPI_INT, MPI_MAX);
    if (st != FS_OK)
        return st;
    p->split = any_split;
    size_t eb = x->args.elem_bytes;
    /* The sizes of the estimate (x->scratch_bytes); malloc(0) may return
     * NULL: ask for at least one element. */
    int64_t send, recv;
    buffer_elems(&x->args, &send, &recv);
    if (!p->direct)
        p->send_buf = fs_buffer_alloc((size_t)(send ? send : 1) * eb);
    if (!p->direct && !p->send_buf)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory: alltoall send buffer of %lld bytes",
                            (long long)send * (long long)eb);
    if (recv) {
        p->recv_buf = fs_buffer_alloc((size_t)recv * eb);
        if (!p->recv_buf)
            return fs_error_set(FS_ERR_RUNTIME,
                                "out of memory: alltoall receive buffer of %lld bytes",
                                (long long)recv * (long long)eb);
    }
    return FS_OK;
}

/* Where piece `off` of the block to or from q goes: straight from or into
 * its place (direct), or the send buffer or `recv` at the block's place. */
static char *piece_at(fs_exchange *x, alltoall_plan *p, int sending, void *data, void *recv, int q,
                      int64_t off)
{
    const fs_redist *rd = x->args.rd;
    size_t eb = x->args.elem_bytes;
    if (p->direct)
        return sending ? fs_exchange_piece_at(x, data, &rd->send[q], &rd->from, off)
                       : fs_exchange_piece_at(x, x->second, &rd->recv[q], &rd->to, off);
    return sending ? (char *)p->send_buf + (size_t)p->send_off[q] * eb + off
                   : (char *)recv + (size_t)p->recv_off[q] * eb + off;
}

/* The exchange as messages of at most SPLIT_BYTES, every receive posted
 * first, the own block copied while they fly (direct); *sent counts the
 * messages sent. */
static int split_exchange(fs_exchange *x, alltoall_plan *p, void *data, void *recv, uint64_t *sent)
{
    const fs_redist *rd = x->args.rd;
    size_t eb = x->args.elem_bytes;
    int n = rd->npeers;
    int64_t nmsg = 0;
    for (int q = 0; q < n; q++)
        nmsg += fs_exchange_pieces(rd->send_elems[q] * (int64_t)eb, p->piece_bytes,
                                   fs_exchange_cut_bytes(&x->args, q, 1)) +
                fs_exchange_pieces(rd->recv_elems[q] * (int64_t)eb, p->piece_bytes,
                                   fs_exchange_cut_bytes(&x->args, q, 0));
    MPI_Request *req = malloc((size_t)(nmsg ? nmsg : 1) * sizeof *req);
    if (!req)
        return MPI_ERR_NO_MEM;
    int64_t k = 0;
    int err = MPI_SUCCESS;
    for (int pass = 0; pass < 2 && err == MPI_SUCCESS; pass++)
        for (int q = 0; q < n && err == MPI_SUCCESS; q++) {
            if ((p->own_in_place || p->direct) && q == rd->self)
                continue;
            int64_t bytes = (pass ? rd->send_elems[q] : rd->recv_elems[q]) * (int64_t)eb;
            int64_t cut = fs_exchange_cut_bytes(&x->args, q, pass);
            for (int64_t off = 0, end, piece = 0; off < bytes && err == MPI_SUCCESS; off = end, piece++) {
                end = fs_exchange_piece_end(off, bytes, p->piece_bytes, cut);
                char *at = piece_at(x, p, pass, data, recv, q, off);
                int len = (int)(end - off), tag = (int)(piece & 0x7fff);
                err = pass ? MPI_Isend(at, len, MPI_BYTE, q, tag, x->args.comm, &req[k++])
                           : MPI_Irecv(at, len, MPI_BYTE, q, tag, x->args.comm, &req[k++]);
                *sent += pass && err == MPI_SUCCESS;
            }
        }
    if (err == MPI_SUCCESS && p->direct)
        fs_exchange_copy_own(x, data, x->second);
    if (err == MPI_SUCCESS)
        err = fs_exchange_waitall(x, (int)k, req);
    free(req);
    return err;
}

/* One MPI_Alltoallv; on a crowded node started as MPI_Ialltoallv and
 * waited for by fs_exchange_waitall, which gives the core up between polls. */
static int alltoallv(fs_exchange *x, alltoall_plan *p, void *recv)
{
    MPI_Datatype t = x->args.elem_type;
    if (!x->args.params || !x->args.params->crowded)
        return MPI_Alltoallv(p->send_buf, p->send_counts, p->send_displs, t, recv, p->recv_counts,
                             p->recv_displs, t, x->args.comm);
    MPI_Request req;
    int err = MPI_Ialltoallv(p->send_buf, p->send_counts, p->send_displs, t, recv, p->recv_counts,
                             p->recv_displs, t, x->args.comm, &req);
    return err == MPI_SUCCESS ? fs_exchange_waitall(x, 1, &req) : err;
}

static fs_status alltoall_execute(fs_exchange *x, void *data)
{
    const fs_redist *rd = x->args.rd;
    alltoall_plan *p = x->impl;
    size_t eb = x->args.elem_bytes;

    double t0 = MPI_Wtime();
    if (!p->direct)
        fs_exchange_pack_all(x, data, p->send_buf, p->send_off, p->own_in_place ? rd->self : -1);
    /* Before anything is received over the places it leaves. */
    if (p->own_in_place)
        fs_exchange_move_own(x, data);
    double t1 = MPI_Wtime();
    void *recv = p->recv_buf ? p->recv_buf : data;
    uint64_t messages = p->split ? 0 : 1;
    int err = p->split ? split_exchange(x, p, data, recv, &messages) : alltoallv(x, p, recv);
    if (err != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Alltoallv failed: %s", fs_mpi_strerror(err));
    double t2 = MPI_Wtime();
    if (p->recv_buf)
        fs_exchange_unpack_all(x, data, p->recv_buf, p->recv_off);
    double t3 = MPI_Wtime();

    x->stats.t_pack_s += t1 - t0;
    x->stats.t_comm_s += t2 - t1;
    x->stats.t_unpack_s += t3 - t2;
    fs_exchange_count(x, messages, (uint64_t)(rd->send_total - rd->send_elems[rd->self]) * eb);
    return FS_OK;
}

const fs_exchange_ops fs_exchange_alltoall = {
    .name = "alltoall",
    .summary = "MPI_Alltoallv on packed blocks (baseline)",
    .uses_hooks = 0,
    .in_place = 0,
    .params = 0,
    .estimate = alltoall_estimate,
    .plan = alltoall_plan_new,
    .execute = alltoall_execute,
    .destroy = alltoall_destroy,
};
