/* SPDX-License-Identifier: GPL-3.0-or-later */
/* exchange_xorswap: all-to-all by XOR swaps, in place, after the patent on
 * all-to-all exchange of n buffers without a second set of buffers.
 *
 * The local array is rearranged in place into one slot per rank (blocked.h),
 * slot q holding the block for rank q. Block q of rank p and block p of rank
 * q are then exchanged by the three XOR steps a ^= b, b ^= a, a ^= b, carried
 * out between the two ranks: each step ships one side's piece to the other,
 * which XORs it into its own. The patent performs each step as a global XOR
 * reduction; between two MPI ranks the same step is a message. Blocks go in
 * packet-sized pieces, alternately led by either rank, so every step sends
 * and receives at once; a few pairs of pieces are in flight together, and
 * the scratch is those few packets (never more than a slot). The pairs meet in
 * contention-free rounds (XOR pairing for a power of two, the circle method
 * otherwise) so every rank is busy in every round. After the swaps slot q
 * holds the block from rank q, and the slots are unpacked in place.
 *
 * Memory: the local array padded to equal slots, up to four pieces (16 MiB
 * at most, and no more than the largest block's pairs of pieces), a bitmap. */
#include "config.h"

#include "exchange/exchange.h"

#include <stdlib.h>
#include <string.h>

#include "exchange/blocked.h"

#define XOR_TAG 17
/* Pairs of pieces in flight at once, and the scratch they may take. */
#define XOR_MAX_WINDOW 4
#define XOR_WINDOW_BYTES ((size_t)16 * 1024 * 1024)

typedef struct xorswap_plan {
    fs_blocked *blocked;
    unsigned char *scratch;   /* `window` pieces */
    size_t piece;             /* bytes per scratch piece: the packet, at most a slot */
    int window;
} xorswap_plan;

static void xorswap_destroy(fs_exchange *x)
{
    xorswap_plan *p = x->impl;
    if (!p)
        return;
    fs_blocked_free(&p->blocked);
    free(p->scratch);
    free(p);
    x->impl = NULL;
}

/* The scratch pieces for slots of slot_bytes: their size (a packet, never
 * longer than a slot) and how many pairs of them are in flight at once. */
static void pieces_of(size_t slot_bytes, size_t pk, size_t *piece, int *window)
{
    size_t pc = pk < slot_bytes ? pk : slot_bytes;
    *piece = pc ? pc : 1;
    int w = (int)(XOR_WINDOW_BYTES / *piece);
    w = w < 1 ? 1 : w > XOR_MAX_WINDOW ? XOR_MAX_WINDOW : w;
    /* No more than the largest block's pairs of pieces ever use. */
    size_t pairs = ((slot_bytes + pk - 1) / pk + 1) / 2;
    if (pairs >= 1 && (size_t)w > pairs)
        w = (int)pairs;
    *window = w;
}

static void xorswap_estimate(const fs_exchange_args *args, fs_exchange_estimate *est)
{
    const fs_redist *rd = args->rd;
    size_t eb = args->elem_bytes, pk = fs_exchange_params_packet_bytes(args->params), piece;
    int P = rd->npeers, me = rd->self, window;
    fs_blocked_estimate(rd, eb, &est->work_elems, &est->scratch_bytes);
    pieces_of((size_t)(est->work_elems / P) * eb, pk, &piece, &window);
    est->scratch_bytes += (size_t)window * piece;
    /* Of each pair of pieces the leader sends one step, the other two. */
    est->second_elems = 0;
    est->messages = 0;
    for (int r = 0; r < fs_exchange_rounds(P); r++) {
        int partner = fs_exchange_round_partner(P, me, r);
        if (partner < 0)
            continue;
        int64_t elems = rd->send_elems[partner] > rd->recv_elems[partner] ? rd->send_elems[partner]
                                                                          : rd->recv_elems[partner];
        uint64_t npieces = ((uint64_t)elems * eb + pk - 1) / pk;
        uint64_t even = (npieces + 1) / 2, odd = npieces / 2;
        est->messages += me < partner ? even + 2 * odd : 2 * even + odd;
    }
}

static fs_status xorswap_plan_new(fs_exchange *x)
{
    xorswap_plan *p = calloc(1, sizeof *p);
    if (!p)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory planning the xorswap exchange");
    x->impl = p;
    fs_status st = fs_blocked_new(x->args.rd, x->args.elem_bytes, NULL, &p->blocked);
    if (st != FS_OK)
        return st;
    size_t slot_bytes = (size_t)fs_blocked_slot_elems(p->blocked) * x->args.elem_bytes;
    pieces_of(slot_bytes, fs_exchange_packet_bytes(x), &p->piece, &p->window);
    size_t scratch = (size_t)p->window * p->piece;
    if (!(p->scratch = malloc(scratch)))
        return fs_error_set(FS_ERR_RUNTIME, "out of memory: xorswap scratch of %zu bytes", scratch);
    return FS_OK;
}

static void xor_into(unsigned char *dst, const unsigned char *src, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t a, b;
        memcpy(&a, dst + i, 8);
        memcpy(&b, src + i, 8);
        a ^= b;
        memcpy(dst + i, &a, 8);
    }
    for (; i < n; i++)
        dst[i] ^= src[i];
}

/* Swap `bytes` at `region` with the partner's region of the same size. Piece
 * j is led by the lower rank when j is even, by the higher when odd: the
 * leader holds `a` and does a ^= b twice, the other b ^= a once. Taking the
 * pieces two by two, in each of the three steps either rank sends one piece
 * and receives the other. Up to `window` pairs of pieces go at once, each
 * step's messages in flight together, so latency is paid once per window. */
static fs_status xor_swap(fs_exchange *x, unsigned char *region, size_t bytes, int partner,
                          int lower, unsigned char *scratch, size_t stride, int window,
                          uint64_t *messages, uint64_t *wire)
{
    size_t pk = fs_exchange_packet_bytes(x);
    size_t npieces = (bytes + pk - 1) / pk;
    MPI_Request req[2 * XOR_MAX_WINDOW];
    for (size_t first = 0; first < npieces; first += 2 * (size_t)window) {
        int pairs = (int)((npieces - first + 1) / 2 < (size_t)window ? (npieces - first + 1) / 2
                                                                    : (size_t)window);
        for (int step = 1; step <= 3; step++) {
            /* Steps 1 and 3 ship b to the leader, step 2 ships a to the other.
             * The lower rank leads the even pieces, the higher the odd ones. */
            int lower_receives_even = step != 2;
            int receives_even = lower ? lower_receives_even : !lower_receives_even;
            size_t roff[XOR_MAX_WINDOW], rlen[XOR_MAX_WINDOW];
            for (int w = 0; w < pairs; w++) {
                size_t j = first + 2 * (size_t)w;
                size_t rj = receives_even ? j : j + 1, sj = receives_even ? j + 1 : j;
                size_t soff = sj * pk, slen = soff < bytes ? (bytes - soff < pk ? bytes - soff : pk) : 0;
                roff[w] = rj * pk;
                rlen[w] = roff[w] < bytes ? (bytes - roff[w] < pk ? bytes - roff[w] : pk) : 0;
                int err = MPI_Irecv(scratch + (size_t)w * stride, (int)rlen[w], MPI_BYTE, partner, XOR_TAG,
                                    x->args.comm, &req[2 * w]);
                if (err == MPI_SUCCESS)
                    err = MPI_Isend(region + (soff < bytes ? soff : 0), (int)slen, MPI_BYTE, partner,
                                    XOR_TAG, x->args.comm, &req[2 * w + 1]);
                if (err != MPI_SUCCESS)
                    return fs_error_set(FS_ERR_RUNTIME, "xorswap exchange: messages with rank %d failed: %s",
                                        partner, fs_mpi_strerror(err));
                if (slen) {
                    (*messages)++;
                    *wire += slen;
                }
            }
            int err = fs_exchange_waitall(x, 2 * pairs, req);
            if (err != MPI_SUCCESS)
                return fs_error_set(FS_ERR_RUNTIME, "xorswap exchange: waiting for rank %d failed: %s",
                                    partner, fs_mpi_strerror(err));
            for (int w = 0; w < pairs; w++)
                xor_into(region + roff[w], scratch + (size_t)w * stride, rlen[w]);
        }
    }
    return FS_OK;
}

static fs_status xorswap_execute(fs_exchange *x, void *data)
{
    const fs_redist *rd = x->args.rd;
    xorswap_plan *p = x->impl;
    size_t eb = x->args.elem_bytes;
    int P = rd->npeers, me = rd->self;
    size_t slot_bytes = (size_t)fs_blocked_slot_elems(p->blocked) * eb;
    uint64_t messages = 0, wire = 0;

    double t0 = MPI_Wtime();
    fs_blocked_pack(p->blocked, data);
    double t1 = MPI_Wtime();
    int rounds = fs_exchange_rounds(P);
    for (int r = 0; r < rounds; r++) {
        int partner = fs_exchange_round_partner(P, me, r);
        if (partner < 0)
            continue;
        /* Both sides agree on the size: what either of the two sends. */
        int64_t elems = rd->send_elems[partner] > rd->recv_elems[partner] ? rd->send_elems[partner]
                                                                          : rd->recv_elems[partner];
        if (elems == 0)
            continue;
        fs_status st = xor_swap(x, (unsigned char *)data + (size_t)partner * slot_bytes,
                                (size_t)elems * eb, partner, me < partner, p->scratch, p->piece, p->window, &messages,
                                &wire);
        if (st != FS_OK)
            return st;
    }
    double t2 = MPI_Wtime();
    fs_blocked_unpack(p->blocked, data);
    double t3 = MPI_Wtime();

    x->stats.t_pack_s += t1 - t0;
    x->stats.t_comm_s += t2 - t1;
    x->stats.t_unpack_s += t3 - t2;
    fs_exchange_count(x, messages, wire);
    return FS_OK;
}

const fs_exchange_ops fs_exchange_xorswap = {
    .name = "xorswap",
    .summary = "in place: blocks swapped by three XOR steps per pair, no second array",
    .uses_hooks = 0,
    .in_place = 1,
    .params = FS_EXCHANGE_USES_PACKET,
    .estimate = xorswap_estimate,
    .plan = xorswap_plan_new,
    .execute = xorswap_execute,
    .destroy = xorswap_destroy,
};
