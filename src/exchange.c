/* exchange: the strategy table and the calls every strategy shares. */
#include "config.h"

#include "exchange.h"

#include <stdlib.h>
#include <string.h>

const fs_exchange_ops *const fs_exchange_strategies[] = {
    &fs_exchange_alltoall,
    &fs_exchange_random,
    &fs_exchange_xorswap,
    &fs_exchange_pairwise,
    NULL,
};

const fs_exchange_ops *fs_exchange_find(const char *name)
{
    for (int i = 0; fs_exchange_strategies[i]; i++)
        if (strcmp(fs_exchange_strategies[i]->name, name) == 0)
            return fs_exchange_strategies[i];
    return NULL;
}

fs_status fs_exchange_new(const fs_exchange_ops *ops, const fs_exchange_args *args,
                          fs_exchange **out)
{
    *out = NULL;
    fs_exchange *x = calloc(1, sizeof *x);
    if (!x)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory planning the %s exchange", ops->name);
    x->ops = ops;
    x->args = *args;
    fs_status ret = ops->plan(x);
    if (ret != FS_OK) {
        fs_exchange_free(&x);
        return ret;
    }
    *out = x;
    return FS_OK;
}

fs_status fs_exchange_execute(fs_exchange *x, void *data)
{
    return x->ops->execute(x, data);
}

void fs_exchange_free(fs_exchange **x)
{
    if (!*x)
        return;
    if ((*x)->ops->destroy)
        (*x)->ops->destroy(*x);
    free(*x);
    *x = NULL;
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

void fs_exchange_pack_all(const fs_exchange *x, const void *data, void *sendbuf,
                          const int64_t *displs)
{
    const fs_redist *rd = x->args.rd;
    size_t eb = x->args.elem_bytes;
    for (int q = 0; q < rd->npeers; q++)
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
    size_t p = x->args.params && x->args.params->packet_bytes ? x->args.params->packet_bytes
                                                                : FS_DEFAULT_PACKET_BYTES;
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
