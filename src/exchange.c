/* exchange: the strategy table and the calls every strategy shares. */
#include "config.h"

#include "exchange.h"
#include "fft.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The table: one line per strategy, which both declares the ops its file
 * defines and lists them, so a new strategy touches no header. The order
 * is --help's and the order `auto` tries them in. */
#define STRATEGIES(X) \
    X(fs_exchange_alltoall) \
    X(fs_exchange_random) \
    X(fs_exchange_xorswap) \
    X(fs_exchange_pairwise)

#define DECLARE(ops) extern const fs_exchange_ops ops;
STRATEGIES(DECLARE)
#undef DECLARE

#define LIST(ops) &ops,
const fs_exchange_ops *const fs_exchange_strategies[] = {STRATEGIES(LIST) NULL};
#undef LIST

const fs_exchange_ops *fs_exchange_find(const char *name)
{
    for (int i = 0; fs_exchange_strategies[i]; i++)
        if (strcmp(fs_exchange_strategies[i]->name, name) == 0)
            return fs_exchange_strategies[i];
    return NULL;
}

static fs_status make_second(fs_exchange *x, int64_t elems);

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
    /* The second array's part comes back as it is made. */
    x->scratch_bytes = est.scratch_bytes - (size_t)est.second_elems * args->elem_bytes;
    fs_status ret = est.second_elems > 0 ? make_second(x, est.second_elems) : FS_OK;
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
    fs_status st = x->ops->execute(x, *data);
    if (st != FS_OK || !x->second)
        return st;
    void *result = x->second;
    int64_t result_elems = x->second_elems;
    x->second = *data;
    x->second_elems = *elems;
    *data = result;
    *elems = result_elems;
    return FS_OK;
}

/* Make the second array hold elems (or grow it to). */
static fs_status make_second(fs_exchange *x, int64_t elems)
{
    size_t bytes = (size_t)elems * x->args.elem_bytes;
    void *a = fs_buffer_alloc(bytes);
    if (!a)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory: %s exchange second array of %zu bytes",
                            x->ops->name, bytes);
    /* Touched now, while planning: the first exchange would otherwise pay
     * for the kernel's zeroing of every page it receives into. */
    memset(a, 0, bytes);
    fs_buffer_free(x->second);
    x->scratch_bytes += (size_t)(elems - x->second_elems) * x->args.elem_bytes;
    x->second = a;
    x->second_elems = elems;
    return FS_OK;
}

fs_status fs_exchange_reserve_second(fs_exchange *x, int64_t elems)
{
    return x->second && elems > x->second_elems ? make_second(x, elems) : FS_OK;
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

fs_status fs_exchange_agree(const fs_exchange *x, fs_status local)
{
    MPI_Comm comm = x->args.comm;
    int size, rank, err = MPI_Comm_size(comm, &size);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_rank(comm, &rank);
    if (err != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "%s exchange: MPI_Comm_size failed: %s", x->ops->name,
                            fs_mpi_strerror(err));
    /* As fs_error_agree: the highest status, among equals the lowest rank. */
    long long mine = (long long)local * (size + 1) + (size - rank), worst = 0;
    err = MPI_Allreduce(&mine, &worst, 1, MPI_LONG_LONG, MPI_MAX, comm);
    if (err != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "%s exchange: agreeing on the status failed: %s",
                            x->ops->name, fs_mpi_strerror(err));
    fs_status agreed = (fs_status)(worst / (size + 1));
    int reporter = size - (int)(worst % (size + 1));
    if (agreed == FS_OK)
        return FS_OK;
    char message[1024] = "";
    if (rank == reporter)
        snprintf(message, sizeof message, "%s", fs_error_message());
    err = MPI_Bcast(message, (int)sizeof message, MPI_CHAR, reporter, comm);
    if (err != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "%s exchange: MPI_Bcast failed: %s", x->ops->name,
                            fs_mpi_strerror(err));
    if (local == FS_OK)
        fs_error_set(agreed, "%s", message);
    return agreed;
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

int fs_exchange_direct(const fs_exchange_args *args)
{
    const fs_redist *rd = args->rd;
    size_t eb = args->elem_bytes, min_bytes = FS_EXCHANGE_DIRECT_MIN_RUN_BYTES;
    if (args->direct_min_run_bytes)
        min_bytes = args->direct_min_run_bytes;
    for (int q = 0; q < rd->npeers; q++) {
        if (q == rd->self)
            continue;
        int64_t s = run_elems_in(&rd->send[q], &rd->from), r = run_elems_in(&rd->recv[q], &rd->to);
        if ((s && (size_t)s * eb < min_bytes) || (r && (size_t)r * eb < min_bytes))
            return 0;
    }
    return 1;
}

/* A piece spanning several runs: one hindexed type of its parts of them,
 * relative to the piece's first byte (at *origin, bytes into outer). */
static int piece_type(fs_box_runs *w, size_t eb, int64_t first, int64_t bytes, int64_t *origin,
                      MPI_Datatype *type)
{
    int64_t run = w->run_elems * (int64_t)eb, r0 = first / run, r1 = (first + bytes - 1) / run;
    int n = (int)(r1 - r0 + 1);
    int *lens = malloc((size_t)n * sizeof *lens);
    MPI_Aint *disps = malloc((size_t)n * sizeof *disps);
    int err = lens && disps ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    fs_box_runs_seek(w, r0);
    *origin = w->offset * (int64_t)eb + (first - r0 * run);
    for (int i = 0; i < n && err == MPI_SUCCESS; i++) {
        if (i > 0)
            fs_box_runs_next(w);
        int64_t lo = i == 0 ? first - r0 * run : 0;
        int64_t hi = i == n - 1 ? first + bytes - r1 * run : run;
        disps[i] = (MPI_Aint)(w->offset * (int64_t)eb + lo - *origin);
        lens[i] = (int)(hi - lo);
    }
    *type = MPI_DATATYPE_NULL;
    if (err == MPI_SUCCESS)
        err = MPI_Type_create_hindexed(n, lens, disps, MPI_BYTE, type);
    if (err == MPI_SUCCESS)
        err = MPI_Type_commit(type);
    if (err != MPI_SUCCESS && *type != MPI_DATATYPE_NULL)
        MPI_Type_free(type);
    free(lens);
    free(disps);
    return err;
}

int fs_exchange_post_piece(const fs_exchange *x, int sending, void *base, const fs_box *box,
                           const fs_box *outer, int64_t first, int64_t bytes, int peer, int tag,
                           MPI_Request *req)
{
    size_t eb = x->args.elem_bytes;
    MPI_Comm comm = x->args.comm;
    fs_box_runs w;
    fs_box_runs_begin(&w, box, outer, NULL, 0);
    int64_t run = w.run_elems * (int64_t)eb;
    if (first / run == (first + bytes - 1) / run) {
        fs_box_runs_seek(&w, first / run);
        char *at = (char *)base + (size_t)(w.offset * (int64_t)eb + first % run);
        return sending ? MPI_Isend(at, (int)bytes, MPI_BYTE, peer, tag, comm, req)
                       : MPI_Irecv(at, (int)bytes, MPI_BYTE, peer, tag, comm, req);
    }
    int64_t origin = 0;
    MPI_Datatype type;
    int err = piece_type(&w, eb, first, bytes, &origin, &type);
    if (err != MPI_SUCCESS)
        return err;
    char *at = (char *)base + (size_t)origin;
    err = sending ? MPI_Isend(at, 1, type, peer, tag, comm, req)
                  : MPI_Irecv(at, 1, type, peer, tag, comm, req);
    /* Freed now, kept by MPI until the message no longer needs it. */
    int err_free = MPI_Type_free(&type);
    return err != MPI_SUCCESS ? err : err_free;
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
