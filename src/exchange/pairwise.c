/* SPDX-License-Identifier: GPL-3.0-or-later */
/* exchange_pairwise: pairwise exchange overlapped with the FFT work on the
 * blocks, after Gupta, Huang, Sadayappan and Johnson (1998), Figure 4.
 *
 * The local array is rearranged in place into one slot per rank (blocked.h).
 * In step i = 1 .. P-1 the rank sends the slot for rank XOR i to that rank
 * and receives that rank's block (P a power of two), or sends to rank + i and
 * receives from rank - i (any other P). The received block lands in the
 * memory of the block just sent, so no second array exists; it travels in
 * packet-sized pieces through two packets of scratch, each piece copied into
 * place once the same piece of the outgoing block has left. While step i's
 * messages are in flight the rank runs the pre-computation of the block it
 * sends in step i+1 and the post-computation of the block it received in
 * step i-1 (the own block's post-computation overlaps step 1), cut into
 * pieces with MPI_Test between them: MPICH moves data only inside MPI calls.
 * The time spent in that work, and the part of it during which a message of
 * the step was still in flight, are recorded in the statistics.
 *
 * Memory: the local array padded to equal slots, two packets, a bitmap. */
#include "config.h"

#include "exchange/exchange.h"
#include "core/collective.h"

#include <stdlib.h>
#include <string.h>

#include "exchange/blocked.h"

#define WINDOW 2
#define PAIR_TAG 23

typedef struct pairwise_plan {
    fs_blocked *blocked;
    int *send_to, *recv_from;   /* per step 1..P-1 */
    int *slot_of_source;
    unsigned char *scratch[WINDOW];
    unsigned char *send_done;   /* per piece of the current step */
    size_t max_pieces;
} pairwise_plan;

/* One step's traffic: a block out of `slot`, the partner's block into it. */
typedef struct transfer {
    unsigned char *slot;
    int to, from;
    size_t send_bytes, recv_bytes, pk;
    size_t nsend, nrecv;             /* pieces */
    size_t next_send, next_recv;     /* next piece to post */
    size_t sends_done, recvs_done;
    MPI_Request req[2 * WINDOW];     /* [0, WINDOW): sends, [WINDOW, 2W): receives */
    size_t piece[2 * WINDOW];
    int ready[WINDOW];               /* scratch slot holds a received piece not yet copied */
    unsigned char *const *scratch;
    unsigned char *send_done;
    MPI_Comm comm;
    const fs_exchange *x;            /* how to wait (fs_exchange_waitsome) */
    uint64_t messages, wire;
} transfer;

static void pairwise_destroy(fs_exchange *x)
{
    pairwise_plan *p = x->impl;
    if (!p)
        return;
    fs_blocked_free(&p->blocked);
    free(p->send_to);
    free(p->recv_from);
    free(p->slot_of_source);
    for (int w = 0; w < WINDOW; w++)
        free(p->scratch[w]);
    free(p->send_done);
    free(p);
    x->impl = NULL;
}

static int is_power_of_two(int n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

/* The pieces for slots of slot_bytes: the scratch piece (a packet, never
 * longer than a slot) and the most pieces a step's block has. */
static void pieces_of(size_t slot_bytes, size_t pk, size_t *piece, size_t *max_pieces)
{
    size_t pc = pk < slot_bytes ? pk : slot_bytes;
    *piece = pc ? pc : 1;
    *max_pieces = (slot_bytes + pk - 1) / pk + 1;
}

static void pairwise_estimate(const fs_exchange_args *args, fs_exchange_estimate *est)
{
    const fs_redist *rd = args->rd;
    size_t eb = args->elem_bytes, pk = fs_exchange_params_packet_bytes(args->params), piece,
           max_pieces;
    fs_blocked_estimate(rd, eb, &est->work_elems, &est->scratch_bytes);
    pieces_of((size_t)(est->work_elems / rd->npeers) * eb, pk, &piece, &max_pieces);
    est->scratch_bytes += WINDOW * piece + max_pieces;
    /* Every other rank gets its block once, in packet-sized pieces. */
    est->second_elems = 0;
    est->messages = 0;
    for (int q = 0; q < rd->npeers; q++)
        if (q != rd->self)
            est->messages += ((uint64_t)rd->send_elems[q] * eb + pk - 1) / pk;
}

static fs_status pairwise_plan_new(fs_exchange *x)
{
    const fs_redist *rd = x->args.rd;
    int P = rd->npeers, me = rd->self;
    size_t eb = x->args.elem_bytes, pk = fs_exchange_packet_bytes(x);
    pairwise_plan *p = calloc(1, sizeof *p);
    if (!p)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory planning the pairwise exchange");
    x->impl = p;
    p->send_to = malloc((size_t)P * sizeof(int));
    p->recv_from = malloc((size_t)P * sizeof(int));
    p->slot_of_source = malloc((size_t)P * sizeof(int));
    if (!p->send_to || !p->recv_from || !p->slot_of_source)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory planning the pairwise exchange");
    p->slot_of_source[me] = me;
    for (int i = 1; i < P; i++) {
        if (is_power_of_two(P)) {
            p->send_to[i] = p->recv_from[i] = me ^ i;
        } else {
            p->send_to[i] = (me + i) % P;
            p->recv_from[i] = (me - i + P) % P;
        }
        /* The block received in step i lands where the one sent went out. */
        p->slot_of_source[p->recv_from[i]] = p->send_to[i];
    }
    fs_status st = fs_blocked_new(rd, eb, p->slot_of_source, &p->blocked);
    if (st != FS_OK)
        return st;
    size_t slot_bytes = (size_t)fs_blocked_slot_elems(p->blocked) * eb, piece;
    pieces_of(slot_bytes, pk, &piece, &p->max_pieces);
    p->send_done = malloc(p->max_pieces);
    for (int w = 0; w < WINDOW; w++)
        p->scratch[w] = malloc(piece);
    if (!p->send_done || !p->scratch[0] || !p->scratch[WINDOW - 1])
        return fs_error_set(FS_ERR_RUNTIME, "out of memory: pairwise packets of %zu bytes", pk);
    return FS_OK;
}

static size_t piece_len(size_t total, size_t pk, size_t j)
{
    size_t off = j * pk;
    return total - off < pk ? total - off : pk;
}

/* Post what the windows allow, complete what has arrived, copy received
 * pieces whose place has been sent. With `block`, until the step is over. */
static fs_status transfer_progress(transfer *t, int block)
{
    for (;;) {
        for (int w = 0; w < WINDOW; w++) {
            if (t->req[w] == MPI_REQUEST_NULL && t->next_send < t->nsend) {
                size_t j = t->next_send++;
                int err = MPI_Isend(t->slot + j * t->pk, (int)piece_len(t->send_bytes, t->pk, j),
                                    MPI_BYTE, t->to, PAIR_TAG, t->comm, &t->req[w]);
                if (err != MPI_SUCCESS)
                    return fs_error_set(FS_ERR_RUNTIME, "pairwise exchange: MPI_Isend failed: %s",
                                        fs_mpi_strerror(err));
                t->piece[w] = j;
                t->messages++;
                t->wire += piece_len(t->send_bytes, t->pk, j);
            }
            if (t->req[WINDOW + w] == MPI_REQUEST_NULL && !t->ready[w] && t->next_recv < t->nrecv) {
                size_t j = t->next_recv++;
                int err = MPI_Irecv(t->scratch[w], (int)piece_len(t->recv_bytes, t->pk, j), MPI_BYTE,
                                    t->from, PAIR_TAG, t->comm, &t->req[WINDOW + w]);
                if (err != MPI_SUCCESS)
                    return fs_error_set(FS_ERR_RUNTIME, "pairwise exchange: MPI_Irecv failed: %s",
                                        fs_mpi_strerror(err));
                t->piece[WINDOW + w] = j;
            }
        }
        if (t->sends_done == t->nsend && t->recvs_done == t->nrecv)
            return FS_OK;
        int idx[2 * WINDOW], n = 0;
        int err = block ? fs_exchange_waitsome(t->x, 2 * WINDOW, t->req, &n, idx)
                        : MPI_Testsome(2 * WINDOW, t->req, &n, idx, MPI_STATUSES_IGNORE);
        if (err != MPI_SUCCESS)
            return fs_error_set(FS_ERR_RUNTIME, "pairwise exchange: waiting for messages failed: %s",
                                fs_mpi_strerror(err));
        for (int i = 0; i < n && n != MPI_UNDEFINED; i++) {
            if (idx[i] < WINDOW) {
                t->send_done[t->piece[idx[i]]] = 1;
                t->sends_done++;
            } else {
                t->ready[idx[i] - WINDOW] = 1;
            }
        }
        /* A received piece may take its place once the outgoing piece that
         * lived there has left (pieces past the outgoing block are free). */
        for (int w = 0; w < WINDOW; w++) {
            size_t j = t->piece[WINDOW + w];
            if (t->ready[w] && (j >= t->nsend || t->send_done[j])) {
                memcpy(t->slot + j * t->pk, t->scratch[w], piece_len(t->recv_bytes, t->pk, j));
                t->ready[w] = 0;
                t->recvs_done++;
            }
        }
        if (!block && (n == 0 || n == MPI_UNDEFINED))
            return FS_OK;
    }
}

static int transfer_busy(const transfer *t)
{
    return t && (t->sends_done < t->nsend || t->recvs_done < t->nrecv);
}

typedef fs_status (*hook_fn)(void *, const fs_box *, void *);

/* Run a hook on `box` stored at `data`, in pieces cut along the hooks'
 * split axis when the pieces are contiguous, polling `t` between pieces.
 * A failing hook leaves its status in *work, and no more hook runs once
 * *work holds one: the messages go on, so the peers finish their steps.
 * The status returned is the messages'. */
static fs_status run_hook(fs_exchange *x, hook_fn hook, const fs_box *box, unsigned char *data,
                          transfer *t, fs_status *work)
{
    const fs_block_hooks *h = x->args.hooks;
    if (!hook || *work != FS_OK || fs_box_elems(box) == 0)
        return FS_OK;
    int a = h->split_axis;
    int64_t pieces = 1, per_piece = 1, row_elems = 1;
    if (a >= 0 && a < box->ndim) {
        int contiguous = 1;
        for (int k = 0; k < a; k++)
            contiguous = contiguous && box->count[k] == 1;
        for (int k = a + 1; k < box->ndim; k++)
            row_elems *= box->count[k];
        if (contiguous && box->count[a] > 1) {
            /* Pieces of about a packet, so polling keeps up with the messages. */
            size_t row_bytes = (size_t)row_elems * x->args.elem_bytes;
            per_piece = (int64_t)(fs_exchange_packet_bytes(x) / (row_bytes ? row_bytes : 1));
            if (per_piece < 1)
                per_piece = 1;
            pieces = (box->count[a] + per_piece - 1) / per_piece;
        }
    }
    for (int64_t i = 0; i < pieces; i++) {
        fs_box sub = *box;
        if (pieces > 1) {
            sub.start[a] = box->start[a] + i * per_piece;
            sub.count[a] = box->count[a] - i * per_piece < per_piece ? box->count[a] - i * per_piece
                                                                     : per_piece;
        }
        int in_flight = transfer_busy(t);
        double t0 = MPI_Wtime();
        *work = hook(h->ctx, &sub, data + (size_t)(i * per_piece * row_elems) * x->args.elem_bytes);
        double dt = MPI_Wtime() - t0;
        x->stats.t_hooks_s += dt;
        if (in_flight)
            x->stats.t_hooks_overlapped_s += dt;
        if (t) {
            fs_status st = transfer_progress(t, 0);
            if (st != FS_OK)
                return st;
        }
        if (*work != FS_OK)
            break;
    }
    return FS_OK;
}

static fs_status pairwise_execute(fs_exchange *x, void *data)
{
    const fs_redist *rd = x->args.rd;
    pairwise_plan *p = x->impl;
    const fs_block_hooks *h = x->args.hooks;
    hook_fn pre = h ? h->pre : NULL, post = h ? h->post : NULL;
    size_t eb = x->args.elem_bytes, pk = fs_exchange_packet_bytes(x);
    int P = rd->npeers, me = rd->self;
    unsigned char *base = data;
    size_t slot_bytes = (size_t)fs_blocked_slot_elems(p->blocked) * eb;
    uint64_t messages = 0, wire = 0;
    fs_status st = FS_OK, work = FS_OK;   /* the messages', the hooks' */
#define SLOT(q) (base + (size_t)(q) * slot_bytes)

    double t0 = MPI_Wtime();
    fs_blocked_pack(p->blocked, data);
    double t1 = MPI_Wtime();
    double t_hooks_before = x->stats.t_hooks_s;

    /* Figure 4: pre-compute the own block and the first block to go. */
    st = run_hook(x, pre, &rd->send[me], SLOT(me), NULL, &work);
    if (st == FS_OK && P > 1)
        st = run_hook(x, pre, &rd->send[p->send_to[1]], SLOT(p->send_to[1]), NULL, &work);
    for (int i = 1; i < P && st == FS_OK; i++) {
        int to = p->send_to[i], from = p->recv_from[i];
        transfer t = {
            .slot = SLOT(to),
            .to = to,
            .from = from,
            .send_bytes = (size_t)rd->send_elems[to] * eb,
            .recv_bytes = (size_t)rd->recv_elems[from] * eb,
            .pk = pk,
            .scratch = p->scratch,
            .send_done = p->send_done,
            .comm = x->args.comm,
            .x = x,
        };
        t.nsend = (t.send_bytes + pk - 1) / pk;
        t.nrecv = (t.recv_bytes + pk - 1) / pk;
        for (int w = 0; w < 2 * WINDOW; w++)
            t.req[w] = MPI_REQUEST_NULL;
        memset(p->send_done, 0, p->max_pieces);
        st = transfer_progress(&t, 0);
        /* While step i is in flight: pre-compute the block of step i+1 and
         * post-compute the block of step i-1 (the own block in step 1). */
        if (st == FS_OK && i + 1 < P)
            st = run_hook(x, pre, &rd->send[p->send_to[i + 1]], SLOT(p->send_to[i + 1]), &t, &work);
        if (st == FS_OK) {
            int prev_from = i == 1 ? me : p->recv_from[i - 1];
            st = run_hook(x, post, &rd->recv[prev_from], SLOT(p->slot_of_source[prev_from]), &t,
                          &work);
        }
        if (st == FS_OK)
            st = transfer_progress(&t, 1);
        messages += t.messages;
        wire += t.wire;
    }
    /* The last block received (or, on one rank, the own block). */
    if (st == FS_OK) {
        int last = P > 1 ? p->recv_from[P - 1] : me;
        st = run_hook(x, post, &rd->recv[last], SLOT(p->slot_of_source[last]), NULL, &work);
    }
    if (st != FS_OK)
        return st;
    /* Every rank finished its steps: a block-work failure on any of them
     * fails the exchange on all (hooks are set alike on every rank). */
    if (h && (st = fs_error_agree_shared(x->args.comm, work)) != FS_OK)
        return st;
    double t2 = MPI_Wtime();
    fs_blocked_unpack(p->blocked, data);
    double t3 = MPI_Wtime();
#undef SLOT

    x->stats.t_pack_s += t1 - t0;
    /* Communication time is the steps' wall time without the hook work. */
    x->stats.t_comm_s += (t2 - t1) - (x->stats.t_hooks_s - t_hooks_before);
    x->stats.t_unpack_s += t3 - t2;
    fs_exchange_count(x, messages, wire);
    return FS_OK;
}

const fs_exchange_ops fs_exchange_pairwise = {
    .name = "pairwise",
    .summary = "P-1 pairwise steps overlapped with the FFTs of the blocks, in place",
    .uses_hooks = 1,
    .in_place = 1,
    .params = FS_EXCHANGE_USES_PACKET,
    .estimate = pairwise_estimate,
    .plan = pairwise_plan_new,
    .execute = pairwise_execute,
    .destroy = pairwise_destroy,
};
