/* SPDX-License-Identifier: GPL-3.0-or-later */
/* exchange_random: all-to-all in random order through output queues, after
 * the Blue Gene/L multidimensional FFT patent (FIG. 9 and FIG. 10).
 *
 * Each rank draws a random order of the other ranks from --seed and its own
 * rank. Every destination block is cut into packets of --packet bytes. In d
 * iterations (d = the largest packet count of any block; b = 1 packet per
 * destination per iteration) the rank walks the destinations in its random
 * order and puts the next packet of each into an output queue, the queue
 * chosen round-robin (so a destination always uses the same queue and its
 * packets leave in order). The drain loop takes packets from the heads of
 * the --queues queues in round-robin order into a bounded window of
 * outstanding MPI_Isend per queue, refilled as sends complete, as the
 * patent's injection FIFOs are. Every receive is posted before the first
 * send; the rank's own block is copied locally while the packets fly, or,
 * when the layouts allow it (fs_exchange_own_moves_in_place), moved inside
 * the data buffer before the receives are posted.
 *
 * Memory: when the runs are long enough (fs_exchange_direct), a second
 * array: every packet, cut at the runs of both sides, goes straight from the
 * data buffer into its place in the second array, the own block is copied
 * there once, and the second array becomes the data buffer (no packing: the
 * copies of a packed MPI_Alltoall). Otherwise a packed send buffer of the
 * other ranks' blocks (of the whole local array when the own block goes
 * through it), plus a receive buffer when the received blocks do not land
 * contiguously in the result. Either way the messages are the same byte
 * ranges of the packed blocks (fs_exchange_cut_bytes), so ranks of either
 * kind exchange them. */
#include "config.h"

#include "exchange/exchange.h"
#include "core/buffer.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Outstanding sends per output queue. */
#define WINDOW_PER_QUEUE 2
/* Beyond this many packets the request tables themselves become the memory
 * problem: the packet size is then too small for the array. */
#define MAX_PACKETS (INT64_C(1) << 24)

typedef struct packet {
    int peer;
    int tag;
    size_t offset;   /* bytes into the peer's block */
    size_t bytes;
} packet;

typedef struct queue {
    packet *items;
    int64_t head, count, cap;
    int outstanding;
} queue;

typedef struct random_plan {
    int *order;              /* the other ranks, in random order */
    int64_t *send_displs, *recv_displs; /* elements */
    void *send_buf, *recv_buf;          /* recv_buf NULL: receive in place */
    queue *queues;
    int nqueues;
    int64_t send_packets, recv_packets;
    MPI_Request *recv_reqs;
    MPI_Request *send_reqs;  /* nqueues * WINDOW_PER_QUEUE slots */
    int *send_req_queue;     /* which queue a slot belongs to */
    int tag_ub;
    int own_in_place;        /* the own block moves inside the data buffer */
    int direct;              /* straight from data into x->second (no send buffer) */
} random_plan;

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void random_destroy(fs_exchange *x)
{
    random_plan *p = x->impl;
    if (!p)
        return;
    free(p->order);
    free(p->send_displs);
    free(p->recv_displs);
    fs_buffer_free(p->send_buf);
    fs_buffer_free(p->recv_buf);
    if (p->queues)
        for (int i = 0; i < p->nqueues; i++)
            free(p->queues[i].items);
    free(p->queues);
    free(p->recv_reqs);
    free(p->send_reqs);
    free(p->send_req_queue);
    free(p);
    x->impl = NULL;
}

static int queue_push(queue *q, packet pk)
{
    if (q->count == q->cap) {
        int64_t cap = q->cap ? 2 * q->cap : 16;
        packet *items = realloc(q->items, (size_t)cap * sizeof *items);
        if (!items)
            return -1;
        q->items = items;
        q->cap = cap;
    }
    q->items[q->count++] = pk;
    return 0;
}

static int64_t packets_of(size_t bytes, size_t packet_bytes)
{
    return (int64_t)((bytes + packet_bytes - 1) / packet_bytes);
}

/* What the buffers hold: the send buffer's elements (the own block too
 * unless it moves in place), the receive buffer's (0: in place), and the
 * packets to and from the other ranks. */
typedef struct random_sizes {
    int direct;
    int64_t send_elems, recv_elems, second_elems;
    int64_t send_packets, recv_packets;
} random_sizes;

static random_sizes sizes_of(const fs_exchange_args *args, size_t pk)
{
    const fs_redist *rd = args->rd;
    size_t eb = args->elem_bytes;
    random_sizes z = {fs_exchange_direct(args), 0, 0, 0, 0, 0};
    int own_in_place = fs_exchange_own_moves_in_place_bounded(rd);
    for (int q = 0; q < rd->npeers; q++) {
        if (!z.direct && (!own_in_place || q != rd->self))
            z.send_elems += rd->send_elems[q];
        if (q != rd->self) {
            z.send_packets += fs_exchange_pieces(rd->send_elems[q] * (int64_t)eb, (int64_t)pk,
                                                 fs_exchange_cut_bytes(args, q, 1));
            z.recv_packets += fs_exchange_pieces(rd->recv_elems[q] * (int64_t)eb, (int64_t)pk,
                                                 fs_exchange_cut_bytes(args, q, 0));
        }
    }
    if (z.direct)
        z.second_elems = fs_exchange_layout_elems(rd);
    else
        z.recv_elems = fs_exchange_receives_in_place(rd) ? 0 : rd->recv_total;
    return z;
}

static void random_estimate(const fs_exchange_args *args, fs_exchange_estimate *est)
{
    size_t eb = args->elem_bytes;
    random_sizes z = sizes_of(args, fs_exchange_params_packet_bytes(args->params));
    est->work_elems = fs_exchange_layout_elems(args->rd);
    /* The buffers, and per packet its queue entry and request. */
    est->second_elems = z.second_elems;
    est->scratch_bytes = fs_buffer_resident((size_t)z.send_elems * eb) +
                         fs_buffer_resident((size_t)z.recv_elems * eb) + (size_t)z.second_elems * eb +
                         (size_t)(z.send_packets + z.recv_packets) * (sizeof(packet) + sizeof(MPI_Request));
    est->messages = (uint64_t)z.send_packets;
}

/* The random map of the patent: the other ranks of P shuffled
 * (Fisher-Yates) into order by a generator keyed by the seed and this rank
 * me. Returns how many (P - 1). */
static int random_order(int *order, int P, int me, uint64_t seed)
{
    int n = 0;
    for (int q = 0; q < P; q++)
        if (q != me)
            order[n++] = q;
    uint64_t state = mix64(seed ^ mix64((uint64_t)me + 0x51ed2701ULL));
    for (int i = n - 1; i > 0; i--) {
        state = mix64(state);
        int j = (int)(state % (uint64_t)(i + 1));
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    return n;
}

static fs_status random_plan_new(fs_exchange *x)
{
    const fs_redist *rd = x->args.rd;
    const fs_exchange_params *params = x->args.params;
    int P = rd->npeers, me = rd->self;
    size_t eb = x->args.elem_bytes, pk = fs_exchange_packet_bytes(x);
    random_plan *p = calloc(1, sizeof *p);
    if (!p)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory planning the random exchange");
    x->impl = p;
    p->nqueues = params && params->queues > 0 ? params->queues : FS_DEFAULT_QUEUES;
    p->order = malloc((size_t)P * sizeof *p->order);
    p->send_displs = malloc((size_t)P * sizeof *p->send_displs);
    p->recv_displs = malloc((size_t)P * sizeof *p->recv_displs);
    p->queues = calloc((size_t)p->nqueues, sizeof *p->queues);
    if (!p->order || !p->send_displs || !p->recv_displs || !p->queues)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory planning the random exchange");

    int64_t s = 0, r = 0;
    random_sizes z = sizes_of(&x->args, pk);
    p->direct = z.direct;
    p->own_in_place = !p->direct && fs_exchange_own_moves_in_place(rd);
    for (int q = 0; q < P; q++) {
        p->send_displs[q] = s;
        p->recv_displs[q] = r;
        if (!p->own_in_place || q != me)
            s += rd->send_elems[q];
        r += rd->recv_elems[q];
    }
    p->send_packets = z.send_packets;
    p->recv_packets = z.recv_packets;
    if (p->send_packets > MAX_PACKETS || p->recv_packets > MAX_PACKETS)
        return fs_error_set(FS_ERR_USAGE,
                            "--packet=%zu: cuts the blocks into %lld packets, more than %lld; "
                            "use a larger packet",
                            pk, (long long)(p->send_packets > p->recv_packets ? p->send_packets
                                                                              : p->recv_packets),
                            (long long)MAX_PACKETS);

    int n = random_order(p->order, P, me, params ? params->seed : FS_DEFAULT_SEED);

    int *tag_ub = NULL, has_tag_ub = 0;
    int err = MPI_Comm_get_attr(x->args.comm, MPI_TAG_UB, &tag_ub, &has_tag_ub);
    if (err != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "random exchange: MPI_Comm_get_attr failed: %s",
                            fs_mpi_strerror(err));
    p->tag_ub = has_tag_ub && tag_ub ? *tag_ub : 32767;

    /* FIG. 9: fill the queues. Iteration id posts packet id of every
     * destination that still has one, destinations in random order, the
     * queue counter restarting at zero each iteration. A packet cut at runs
     * (fs_exchange_cut_bytes) goes as its pieces, one after the other. */
    int64_t iterations = 0;
    for (int q = 0; q < P; q++) {
        int64_t k = q == me ? 0 : packets_of((size_t)rd->send_elems[q] * eb, pk);
        if (k > iterations)
            iterations = k;
    }
    int64_t *pieces = calloc((size_t)P, sizeof *pieces);
    if (!pieces)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory planning the random exchange");
    for (int64_t id = 0; id < iterations; id++) {
        for (int i = 0; i < n; i++) {
            int q = p->order[i];
            int64_t bytes = rd->send_elems[q] * (int64_t)eb, cut = fs_exchange_cut_bytes(&x->args, q, 1);
            int64_t off = id * (int64_t)pk, packet_end = off + (int64_t)pk < bytes ? off + (int64_t)pk : bytes;
            for (int64_t end; off < packet_end; off = end) {
                end = fs_exchange_piece_end(off, bytes, (int64_t)pk, cut);
                packet pkt = {q, (int)(pieces[q]++ % ((int64_t)p->tag_ub + 1)), (size_t)off,
                              (size_t)(end - off)};
                if (queue_push(&p->queues[i % p->nqueues], pkt)) {
                    free(pieces);
                    return fs_error_set(FS_ERR_RUNTIME, "out of memory planning the random exchange");
                }
            }
        }
    }
    free(pieces);

    int window = p->nqueues * WINDOW_PER_QUEUE;
    p->recv_reqs = malloc((size_t)(p->recv_packets ? p->recv_packets : 1) * sizeof *p->recv_reqs);
    p->send_reqs = malloc((size_t)window * sizeof *p->send_reqs);
    p->send_req_queue = malloc((size_t)window * sizeof *p->send_req_queue);
    /* The sizes of the estimate (x->scratch_bytes; the second array is x's). */
    if (!p->direct)
        p->send_buf = fs_buffer_alloc((size_t)(z.send_elems ? z.send_elems : 1) * eb);
    if (!p->recv_reqs || !p->send_reqs || !p->send_req_queue || (!p->direct && !p->send_buf))
        return fs_error_set(FS_ERR_RUNTIME, "out of memory: random exchange send buffer of %lld bytes",
                            (long long)z.send_elems * (long long)eb);
    if (z.recv_elems) {
        p->recv_buf = fs_buffer_alloc((size_t)z.recv_elems * eb);
        if (!p->recv_buf)
            return fs_error_set(FS_ERR_RUNTIME,
                                "out of memory: random exchange receive buffer of %lld bytes",
                                (long long)z.recv_elems * (long long)eb);
    }
    return FS_OK;
}

static fs_status mpi_fail(const char *what, int err)
{
    return fs_error_set(FS_ERR_RUNTIME, "random exchange: %s failed: %s", what, fs_mpi_strerror(err));
}

/* Every receive, before the first send: into the second array (direct),
 * into the result in place, or into the receive buffer. *n counts them. */
static fs_status post_receives(fs_exchange *x, random_plan *p, char *recv_base, int64_t *n)
{
    const fs_redist *rd = x->args.rd;
    size_t eb = x->args.elem_bytes, pk = fs_exchange_packet_bytes(x);
    *n = 0;
    for (int q = 0; q < rd->npeers; q++) {
        if (q == rd->self)
            continue;
        int64_t bytes = rd->recv_elems[q] * (int64_t)eb, cut = fs_exchange_cut_bytes(&x->args, q, 0);
        char *dst = recv_base + (size_t)p->recv_displs[q] * eb;
        int64_t id = 0;
        for (int64_t off = 0, end; off < bytes; off = end, id++) {
            end = fs_exchange_piece_end(off, bytes, (int64_t)pk, cut);
            char *at = p->direct ? fs_exchange_piece_at(x, recv_base, &rd->recv[q], &rd->to, off)
                                 : dst + off;
            int err = MPI_Irecv(at, (int)(end - off), MPI_BYTE, q,
                                (int)(id % ((int64_t)p->tag_ub + 1)), x->args.comm,
                                &p->recv_reqs[(*n)++]);
            if (err != MPI_SUCCESS)
                return mpi_fail("MPI_Irecv", err);
        }
    }
    return FS_OK;
}

static int send_packet(fs_exchange *x, random_plan *p, void *data, const packet *pkt,
                       MPI_Request *req)
{
    const fs_redist *rd = x->args.rd;
    const char *src = p->direct ? fs_exchange_piece_at(x, data, &rd->send[pkt->peer], &rd->from,
                                                       (int64_t)pkt->offset)
                                : (const char *)p->send_buf +
                                      (size_t)p->send_displs[pkt->peer] * x->args.elem_bytes +
                                      pkt->offset;
    return MPI_Isend(src, (int)pkt->bytes, MPI_BYTE, pkt->peer, pkt->tag, x->args.comm, req);
}

/* The own block to its place in the result, unless it moved in place. */
static void copy_own(fs_exchange *x, random_plan *p, const void *data, char *recv_base)
{
    const fs_redist *rd = x->args.rd;
    size_t eb = x->args.elem_bytes;
    if (p->direct)
        fs_exchange_copy_own(x, data, recv_base);
    else if (!p->own_in_place)
        memcpy(recv_base + (size_t)p->recv_displs[rd->self] * eb,
               (char *)p->send_buf + (size_t)p->send_displs[rd->self] * eb,
               (size_t)rd->send_elems[rd->self] * eb);
}

/* FIG. 10: drain the queues round-robin into the send windows; the own
 * block is copied while the first packets fly. */
static fs_status drain(fs_exchange *x, random_plan *p, void *data, char *recv_base)
{
    int window = p->nqueues * WINDOW_PER_QUEUE;
    for (int i = 0; i < window; i++) {
        p->send_reqs[i] = MPI_REQUEST_NULL;
        p->send_req_queue[i] = -1;
    }
    for (int i = 0; i < p->nqueues; i++) {
        p->queues[i].head = 0;
        p->queues[i].outstanding = 0;
    }
    int own_copied = 0;
    int64_t left = p->send_packets;
    while (left > 0) {
        for (int i = 0; i < p->nqueues; i++) {
            queue *qu = &p->queues[i];
            while (qu->head < qu->count && qu->outstanding < WINDOW_PER_QUEUE) {
                int slot = 0;
                while (p->send_reqs[slot] != MPI_REQUEST_NULL)
                    slot++;
                int err = send_packet(x, p, data, &qu->items[qu->head++], &p->send_reqs[slot]);
                if (err != MPI_SUCCESS)
                    return mpi_fail("MPI_Isend", err);
                p->send_req_queue[slot] = i;
                qu->outstanding++;
            }
        }
        if (!own_copied) {
            copy_own(x, p, data, recv_base);
            own_copied = 1;
        }
        int done;
        int err = fs_exchange_waitany(x, window, p->send_reqs, &done);
        if (err != MPI_SUCCESS)
            return mpi_fail("MPI_Waitany", err);
        if (done != MPI_UNDEFINED) {
            p->queues[p->send_req_queue[done]].outstanding--;
            p->send_req_queue[done] = -1;
            left--;
        }
    }
    if (!own_copied)
        copy_own(x, p, data, recv_base);
    return FS_OK;
}

static fs_status random_execute(fs_exchange *x, void *data)
{
    const fs_redist *rd = x->args.rd;
    random_plan *p = x->impl;
    size_t eb = x->args.elem_bytes;
    int me = rd->self;

    double t0 = MPI_Wtime();
    if (!p->direct)
        fs_exchange_pack_all(x, data, p->send_buf, p->send_displs, p->own_in_place ? me : -1);
    /* Before any receive is posted over the places it leaves. */
    if (p->own_in_place)
        fs_exchange_move_own(x, data);
    double t1 = MPI_Wtime();

    /* Receives first, into their final place when the layout allows. */
    char *recv_base = p->direct ? x->second : p->recv_buf ? p->recv_buf : data;
    int64_t nrecv = 0;
    fs_status st = post_receives(x, p, recv_base, &nrecv);
    if (st == FS_OK)
        st = drain(x, p, data, recv_base);
    if (st != FS_OK)
        return st;
    int err = fs_exchange_waitall(x, (int)nrecv, p->recv_reqs);
    if (err != MPI_SUCCESS)
        return mpi_fail("MPI_Waitall", err);
    double t2 = MPI_Wtime();
    if (p->recv_buf)
        fs_exchange_unpack_all(x, data, p->recv_buf, p->recv_displs);
    double t3 = MPI_Wtime();

    x->stats.t_pack_s += t1 - t0;
    x->stats.t_comm_s += t2 - t1;
    x->stats.t_unpack_s += t3 - t2;
    fs_exchange_count(x, (uint64_t)p->send_packets, (uint64_t)(rd->send_total - rd->send_elems[me]) * eb);
    return FS_OK;
}

const fs_exchange_ops fs_exchange_random = {
    .name = "random",
    .summary = "packets to the other ranks in random order, via output queues",
    .uses_hooks = 0,
    .in_place = 0,
    .params = FS_EXCHANGE_USES_PACKET | FS_EXCHANGE_USES_QUEUES | FS_EXCHANGE_USES_SEED,
    .estimate = random_estimate,
    .plan = random_plan_new,
    .execute = random_execute,
    .destroy = random_destroy,
};
