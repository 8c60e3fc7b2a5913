/* SPDX-License-Identifier: GPL-3.0-or-later */
/* exchange: the strategy table and the calls every strategy shares. */
#include "config.h"

#include "exchange/exchange.h"
#include "core/buffer.h"
#include "core/collective.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The table: one line per strategy, which both declares the ops its file
 * defines and lists them, so a new strategy touches no header. The order
 * is the order of expected speed, the one place it is written: the
 * default strategy takes the first that fits, --help and the man page list
 * them so (tests/help.bats compares), auto tries them so. Measured as fft +
 * exchange of 256^3 complex128 on 2 ranks of a 2-core machine shared with
 * other work (load average 12 to 23), the report's phases, medians of 15
 * runs in turns: alltoall 0.69 s (the fastest in 14 of 15 turns), xorswap
 * 1.18, pairwise 1.28, random 1.39 (these three within the noise: each
 * beats the next in 8 to 10 of 15 turns). */
#define STRATEGIES(X) \
    X(fs_exchange_alltoall) \
    X(fs_exchange_xorswap) \
    X(fs_exchange_pairwise) \
    X(fs_exchange_random)

#define DECLARE(ops) extern const fs_exchange_ops ops;
STRATEGIES(DECLARE)
#undef DECLARE

#define LIST(ops) &ops,
const fs_exchange_ops *const fs_exchange_strategies[] = {STRATEGIES(LIST) NULL};
#undef LIST
_Static_assert(sizeof fs_exchange_strategies / sizeof fs_exchange_strategies[0] <=
                   FS_EXCHANGE_MAX_STRATEGIES + 1, "the table fits FS_EXCHANGE_MAX_STRATEGIES");

const fs_exchange_ops *fs_exchange_find(const char *name)
{
    for (int i = 0; fs_exchange_strategies[i]; i++)
        if (strcmp(fs_exchange_strategies[i]->name, name) == 0)
            return fs_exchange_strategies[i];
    return NULL;
}

static fs_status make_second(fs_exchange *x, int64_t elems);
static fs_status grow_spare(fs_spare *s, int64_t elems, const char *name);

fs_status fs_exchange_new(const fs_exchange_ops *ops, const fs_exchange_args *args,
                          fs_exchange **out)
{
    *out = NULL;
    fs_exchange *x = calloc(1, sizeof *x);
    if (!x)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory planning the %s exchange", ops->name);
    x->ops = ops;
    x->args = *args;
    /* The sizes come from the estimate alone, so the dry run's figures
     * are the plan's. */
    fs_exchange_estimate est;
    memset(&est, 0, sizeof est);
    ops->estimate(args, &est);
    x->work_elems = est.work_elems;
    /* The second array's part comes back as it is made (not at all when
     * shared: the spare's owner counts it). */
    x->scratch_bytes = est.scratch_bytes - (size_t)est.second_elems * args->elem_bytes;
    x->shares_spare = est.second_elems > 0 && args->spare;
    fs_status ret = FS_OK;
    if (x->shares_spare)
        ret = grow_spare(args->spare, est.second_elems, ops->name);
    else if (est.second_elems > 0)
        ret = make_second(x, est.second_elems);
    if (ret == FS_OK)
        ret = ops->plan(x);
    if (ret != FS_OK) {
        fs_exchange_free(&x);
        return ret;
    }
    *out = x;
    return FS_OK;
}

fs_status fs_exchange_execute(fs_exchange *x, void **data, int64_t *elems)
{
    fs_spare *s = x->shares_spare ? x->args.spare : NULL;
    if (s) {
        x->second = s->data;
        x->second_elems = s->elems;
    }
    fs_status st = x->ops->execute(x, *data);
    x->stats.runs++;
    if (st == FS_OK && x->second) {
        void *result = x->second;
        int64_t result_elems = x->second_elems;
        x->second = *data;
        x->second_elems = *elems;
        *data = result;
        *elems = result_elems;
    }
    if (s) {
        s->data = x->second;
        s->elems = x->second_elems;
        x->second = NULL;
        x->second_elems = 0;
    }
    return st;
}

/* A new array of elems elements of elem_bytes, every page touched now,
 * while planning: the first exchange would otherwise pay for the kernel's
 * zeroing of the pages it receives into. NULL when memory ran out. */
static void *touched_array(int64_t elems, size_t elem_bytes)
{
    size_t bytes = (size_t)elems * elem_bytes;
    void *a = fs_buffer_alloc(bytes);
    for (size_t i = 0; a && i < bytes; i += 4096)
        ((volatile char *)a)[i] = 0;
    return a;
}

/* Make the second array hold elems (or grow it to). */
static fs_status make_second(fs_exchange *x, int64_t elems)
{
    void *a = touched_array(elems, x->args.elem_bytes);
    if (!a)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory: %s exchange second array of %zu bytes",
                            x->ops->name, (size_t)elems * x->args.elem_bytes);
    fs_buffer_free(x->second);
    x->scratch_bytes += (size_t)(elems - x->second_elems) * x->args.elem_bytes;
    x->second = a;
    x->second_elems = elems;
    return FS_OK;
}

/* Make the shared second array hold elems (or grow it to). */
static fs_status grow_spare(fs_spare *s, int64_t elems, const char *name)
{
    if (s->data && elems <= s->elems)
        return FS_OK;
    /* Freed first: the old contents are not needed, and both at once
     * would raise the peak. */
    fs_buffer_free(s->data);
    s->data = touched_array(elems, s->elem_bytes);
    s->elems = s->data ? elems : 0;
    if (!s->data)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory: %s exchange second array of %zu bytes",
                            name, (size_t)elems * s->elem_bytes);
    return FS_OK;
}

fs_status fs_exchange_reserve_second(fs_exchange *x, int64_t elems)
{
    if (x->shares_spare)
        return grow_spare(x->args.spare, elems, x->ops->name);
    return x->second && elems > x->second_elems ? make_second(x, elems) : FS_OK;
}

void fs_exchange_spare_free(fs_spare *s)
{
    fs_buffer_free(s->data);
    s->data = NULL;
    s->elems = 0;
}

void fs_exchange_free(fs_exchange **x)
{
    if (!*x)
        return;
    if ((*x)->ops->destroy)
        (*x)->ops->destroy(*x);
    fs_buffer_free((*x)->second);
    free(*x);
    *x = NULL;
}

static int crowded(const fs_exchange *x)
{
    return x->args.params && x->args.params->crowded;
}

int fs_exchange_waitall(const fs_exchange *x, int n, MPI_Request *reqs)
{
    return fs_wait_all(crowded(x), n, reqs);
}

int fs_exchange_waitany(const fs_exchange *x, int n, MPI_Request *reqs, int *index)
{
    return fs_wait_any(crowded(x), n, reqs, index);
}

int fs_exchange_waitsome(const fs_exchange *x, int n, MPI_Request *reqs, int *outcount, int *indices)
{
    return fs_wait_some(crowded(x), n, reqs, outcount, indices);
}

int64_t fs_exchange_layout_elems(const fs_redist *rd)
{
    int64_t from = fs_box_elems(&rd->from), to = fs_box_elems(&rd->to);
    return from > to ? from : to;
}

int fs_exchange_receives_in_place(const fs_redist *rd)
{
    int64_t expected = 0;
    for (int q = 0; q < rd->npeers; q++) {
        if (rd->recv_elems[q] == 0)
            continue;
        if (!fs_box_is_contiguous_in(&rd->recv[q], &rd->to) ||
            fs_box_offset_in(&rd->recv[q], &rd->to) != expected)
            return 0;
        expected += rd->recv_elems[q];
    }
    return 1;
}

/* The own block as runs contiguous in both layouts: offset in `from`,
 * other_offset in `to`. */
static void own_runs_begin(fs_box_runs *w, const fs_redist *rd)
{
    fs_box_runs_begin(w, &rd->send[rd->self], &rd->from, &rd->to, 0);
}

int fs_exchange_own_moves_in_place_bounded(const fs_redist *rd)
{
    fs_box_runs w;
    own_runs_begin(&w, rd);
    return w.nruns <= FS_EXCHANGE_ESTIMATE_RUNS && fs_exchange_own_moves_in_place(rd);
}

int fs_exchange_own_moves_in_place(const fs_redist *rd)
{
    if (!fs_exchange_receives_in_place(rd))
        return 0;
    /* Runs keep their order in both layouts. When the shift dst - src never
     * grows from one run to the next, the runs that move down form a suffix
     * and those that move up a prefix: the suffix moved first, in ascending
     * order, then the prefix in descending order, each run lands only on
     * runs already moved or on other ranks' blocks, already packed. */
    fs_box_runs w;
    own_runs_begin(&w, rd);
    int64_t prev = INT64_MAX;
    while (fs_box_runs_next(&w)) {
        if (w.other_offset - w.offset > prev)
            return 0;
        prev = w.other_offset - w.offset;
    }
    return 1;
}

void fs_exchange_move_own(const fs_exchange *x, void *data)
{
    fs_box_runs w;
    own_runs_begin(&w, x->args.rd);
    size_t eb = x->args.elem_bytes, bytes = (size_t)w.run_elems * eb;
    char *base = data;
    int64_t first_down = w.nruns;
    while (fs_box_runs_next(&w)) {
        if (w.other_offset <= w.offset) {
            first_down = w.index;
            break;
        }
    }
    /* The walk stands on the first run that moves down: the suffix, on. */
    if (first_down < w.nruns)
        do {
            if (w.other_offset != w.offset)
                memmove(base + (size_t)w.other_offset * eb, base + (size_t)w.offset * eb, bytes);
        } while (fs_box_runs_next(&w));
    for (int64_t i = first_down - 1; i >= 0; i--) {
        fs_box_runs_seek(&w, i);
        memmove(base + (size_t)w.other_offset * eb, base + (size_t)w.offset * eb, bytes);
    }
}

void fs_exchange_pack_all(const fs_exchange *x, const void *data, void *sendbuf,
                          const int64_t *displs, int skip)
{
    const fs_redist *rd = x->args.rd;
    size_t eb = x->args.elem_bytes;
    for (int q = 0; q < rd->npeers; q++)
        if (q != skip)
            fs_box_pack(&rd->send[q], &rd->from, data, (char *)sendbuf + (size_t)displs[q] * eb, eb);
}

void fs_exchange_unpack_all(const fs_exchange *x, void *data, const void *recvbuf,
                            const int64_t *displs)
{
    const fs_redist *rd = x->args.rd;
    size_t eb = x->args.elem_bytes;
    for (int q = 0; q < rd->npeers; q++)
        fs_box_unpack(&rd->recv[q], &rd->to, data, (const char *)recvbuf + (size_t)displs[q] * eb,
                      eb);
}

/* The run length of box inside outer (0: box empty). */
static int64_t run_elems_in(const fs_box *box, const fs_box *outer)
{
    if (fs_box_elems(box) == 0)
        return 0;
    fs_box_runs w;
    fs_box_runs_begin(&w, box, outer, NULL, 0);
    return w.run_elems;
}

/* The shorter of the two ranks' runs of the block between this rank and
 * peer q, in elements: both are products of the block's trailing lengths,
 * so the shorter divides the longer, and a message cut at its multiples is
 * contiguous on both sides. */
static int64_t pair_run_elems(const fs_redist *rd, int q, int sending)
{
    const fs_box *b = sending ? &rd->send[q] : &rd->recv[q];
    int64_t mine = run_elems_in(b, sending ? &rd->from : &rd->to);
    int64_t theirs = run_elems_in(b, sending ? &rd->peer_to[q] : &rd->peer_from[q]);
    return mine < theirs ? mine : theirs;
}

int64_t fs_exchange_cut_bytes(const fs_exchange_args *args, int q, int sending)
{
    size_t min_bytes = args->direct_min_run_bytes ? args->direct_min_run_bytes
                                                  : FS_EXCHANGE_DIRECT_MIN_RUN_BYTES;
    int64_t run = pair_run_elems(args->rd, q, sending) * (int64_t)args->elem_bytes;
    return run > 0 && (size_t)run >= min_bytes ? run : 0;
}

int fs_exchange_direct(const fs_exchange_args *args)
{
    const fs_redist *rd = args->rd;
    for (int q = 0; q < rd->npeers; q++) {
        if (q == rd->self)
            continue;
        if ((rd->send_elems[q] && !fs_exchange_cut_bytes(args, q, 1)) ||
            (rd->recv_elems[q] && !fs_exchange_cut_bytes(args, q, 0)))
            return 0;
    }
    return 1;
}

int64_t fs_exchange_piece_end(int64_t off, int64_t bytes, int64_t packet, int64_t cut)
{
    int64_t end = (off / packet + 1) * packet;
    if (cut && (off / cut + 1) * cut < end)
        end = (off / cut + 1) * cut;
    return end < bytes ? end : bytes;
}

int64_t fs_exchange_pieces(int64_t bytes, int64_t packet, int64_t cut)
{
    int64_t n = 0;
    for (int64_t off = 0; off < bytes; off = fs_exchange_piece_end(off, bytes, packet, cut))
        n++;
    return n;
}

char *fs_exchange_piece_at(const fs_exchange *x, void *base, const fs_box *box, const fs_box *outer,
                           int64_t off)
{
    int64_t eb = (int64_t)x->args.elem_bytes;
    fs_box_runs w;
    fs_box_runs_begin(&w, box, outer, NULL, 0);
    int64_t run = w.run_elems * eb;
    fs_box_runs_seek(&w, off / run);
    return (char *)base + (size_t)(w.offset * eb + off % run);
}

void fs_exchange_copy_own(const fs_exchange *x, const void *in, void *out)
{
    const fs_redist *rd = x->args.rd;
    if (rd->send_elems[rd->self] == 0)
        return;
    size_t eb = x->args.elem_bytes;
    fs_box_runs w;
    own_runs_begin(&w, rd);
    while (fs_box_runs_next(&w))
        memcpy((char *)out + (size_t)w.other_offset * eb, (const char *)in + (size_t)w.offset * eb,
               (size_t)w.run_elems * eb);
}

static int is_power_of_two(int n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

int fs_exchange_rounds(int n)
{
    if (n <= 1)
        return 0;
    if (is_power_of_two(n))
        return n - 1;
    return n % 2 ? n : n - 1;
}

int fs_exchange_round_partner(int n, int rank, int round)
{
    /* Powers of two pair by XOR, as on a hypercube; other counts use the
     * circle method: one rank fixed, the others rotating, a dummy rank
     * (an idle round) when n is odd. Either way every round is a perfect
     * matching and every pair meets exactly once. */
    if (is_power_of_two(n))
        return rank ^ (round + 1);
    int m = n % 2 ? n + 1 : n;
    int partner;
    if (rank == m - 1)
        partner = round;
    else if (rank == round)
        partner = m - 1;
    else
        partner = ((2 * round - rank) % (m - 1) + (m - 1)) % (m - 1);
    return partner >= n ? -1 : partner;
}

size_t fs_exchange_packet_bytes(const fs_exchange *x)
{
    return fs_exchange_params_packet_bytes(x->args.params);
}

size_t fs_exchange_params_packet_bytes(const fs_exchange_params *params)
{
    size_t p = params && params->packet_bytes ? params->packet_bytes : FS_DEFAULT_PACKET_BYTES;
    /* MPI counts are ints: keep every message below 1 GiB. */
    return p > ((size_t)1 << 30) ? (size_t)1 << 30 : p;
}

void fs_exchange_count(fs_exchange *x, uint64_t messages, uint64_t wire_bytes)
{
    const fs_redist *rd = x->args.rd;
    size_t eb = x->args.elem_bytes;
    x->stats.bytes_sent += (uint64_t)(rd->send_total - rd->send_elems[rd->self]) * eb;
    x->stats.bytes_received += (uint64_t)(rd->recv_total - rd->recv_elems[rd->self]) * eb;
    x->stats.messages_sent += messages;
    x->stats.wire_bytes_sent += wire_bytes;
}
