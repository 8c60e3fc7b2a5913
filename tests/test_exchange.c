/* test_exchange: every exchange strategy moves every element where it belongs.
 *
 * Run under mpiexec on any number of ranks (unit.bats uses 1 to 8). For each
 * strategy of fs_exchange_strategies (new ones are picked up by themselves),
 * on random shapes of 1 to 4 axes (deterministic: every rank draws the same)
 * with lengths that do not divide the rank count and first axes shorter than
 * it (ranks owning nothing), it redistributes axis 0 -> axis 1, axis 0 ->
 * axis 2, axis 0 -> gathered on rank 0 and back, with 16- and 8-byte
 * elements. Each element carries a value computed from its global index;
 * after the exchange every element of the destination box is checked, and so
 * are the byte counts of the statistics. Exit 0 when all passed, 1 otherwise
 * (each failure printed with its rank and case). */
#include "config.h"

#include <inttypes.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exchange.h"
#include "layout.h"

static int rank, nranks;
static long failures, shown;

static void failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void failf(const char *fmt, ...)
{
    failures++;
    if (++shown > 20)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rank %d of %d: FAIL: ", rank, nranks);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* Same sequence on every rank. */
static uint64_t rng_state = 20240601;

static int64_t rng_range(int64_t lo, int64_t hi)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return lo + (int64_t)(z % (uint64_t)(hi - lo + 1));
}

/* The value of the element at global row-major index g, tagged by case. The
 * two halves differ so a swapped or shifted half shows. */
static void element_value(int64_t g, int tag, size_t eb, void *out)
{
    if (eb == 16) {
        double v[2] = {(double)g + 0.25, -(double)tag - (double)g * 1e-3};
        memcpy(out, v, sizeof v);
    } else {
        double v = (double)g * 7.0 + (double)tag * 1e6 + 0.5;
        memcpy(out, &v, sizeof v);
    }
}

static int64_t global_index(const int64_t *at, int ndim, const int64_t *shape)
{
    int64_t g = 0;
    for (int k = 0; k < ndim; k++)
        g = g * shape[k] + at[k];
    return g;
}

static int next_index(int64_t *at, const fs_box *box)
{
    for (int k = box->ndim - 1; k >= 0; k--) {
        if (++at[k] < box->start[k] + box->count[k])
            return 1;
        at[k] = box->start[k];
    }
    return 0;
}

static const char *shape_str(int ndim, const int64_t *shape)
{
    static char buf[128];
    fs_format_shape(ndim, shape, buf, sizeof buf);
    return buf;
}

/* ---- block hooks: pre must see the original values of exactly the block's
 * elements, post the pre-transformed ones; both must touch every element of
 * the array exactly once over all ranks. */
typedef struct hook_state {
    int ndim, tag;
    const int64_t *shape;
    size_t eb;
    int *pre_count, *post_count;   /* per global index, this rank's calls */
    long calls;                    /* for strategies that must not call hooks */
    const char *what;
} hook_state;

static void transform1(void *e, size_t eb)
{
    double v;
    memcpy(&v, e, 8);
    v += 1073741824.0; /* 2^30: exact on these values */
    memcpy(e, &v, 8);
}

static void transform2(void *e, size_t eb)
{
    double v;
    memcpy(&v, (char *)e + eb - 8, 8);
    v -= 1099511627776.0; /* 2^40 on the last double */
    memcpy((char *)e + eb - 8, &v, 8);
}

static void hook_walk(hook_state *h, const fs_box *block, unsigned char *data, int post)
{
    h->calls++;
    if (fs_box_elems(block) == 0)
        return;
    int64_t at[FS_LAYOUT_MAX_DIMS];
    memcpy(at, block->start, sizeof at);
    int64_t i = 0;
    unsigned char expect[16];
    do {
        int64_t g = global_index(at, h->ndim, h->shape);
        unsigned char *e = data + (size_t)i++ * h->eb;
        element_value(g, h->tag, h->eb, expect);
        if (post)
            transform1(expect, h->eb);
        if (memcmp(expect, e, h->eb) != 0) {
            failf("%s: %s hook found a wrong value at global index %" PRId64, h->what,
                  post ? "post" : "pre", g);
            return;
        }
        if (post) {
            transform2(e, h->eb);
            h->post_count[g]++;
        } else {
            transform1(e, h->eb);
            h->pre_count[g]++;
        }
    } while (next_index(at, block));
}

static void hook_pre(void *ctx, const fs_box *block, void *data)
{
    hook_walk(ctx, block, data, 0);
}

static void hook_post(void *ctx, const fs_box *block, void *data)
{
    hook_walk(ctx, block, data, 1);
}

/* One exchange with one strategy; returns the number of failures seen here. */
static void run_case(const fs_exchange_ops *ops, int tag, int ndim, const int64_t *shape,
                     int axis_from, int axis_to, size_t eb, const fs_exchange_params *params,
                     int with_hooks)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    fs_box *from_all = calloc((size_t)nranks, sizeof *from_all);
    fs_box *to_all = calloc((size_t)nranks, sizeof *to_all);
    if (!from_all || !to_all) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(comm, 99);
    }
    for (int p = 0; p < nranks; p++) {
        from_all[p] = fs_box_split(ndim, shape, axis_from, nranks, p);
        to_all[p] = fs_box_split(ndim, shape, axis_to, nranks, p);
    }
    char what[256];
    snprintf(what, sizeof what, "%s, case %d: shape %s, axis %d -> %d, %zu-byte elements",
             ops->name, tag, shape_str(ndim, shape), axis_from, axis_to, eb);

    fs_redist *rd = fs_redist_new(nranks, rank, from_all, to_all);
    if (!rd) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(comm, 99);
    }
    int64_t nglobal = 1;
    for (int k = 0; k < ndim; k++)
        nglobal *= shape[k];
    hook_state hs = {ndim, tag, shape, eb, calloc((size_t)nglobal, sizeof(int)),
                     calloc((size_t)nglobal, sizeof(int)), 0, what};
    /* Cut pieces along the split axis before the exchange, or never. */
    fs_block_hooks hooks = {hook_pre, hook_post, &hs, tag % 2 ? axis_from : -1};
    fs_exchange_args args = {
        .comm = comm,
        .rd = rd,
        .elem_bytes = eb,
        .elem_type = eb == 16 ? MPI_C_DOUBLE_COMPLEX : MPI_DOUBLE,
        .params = params,
        .hooks = with_hooks ? &hooks : NULL,
    };
    fs_exchange *x = NULL;
    fs_status st = fs_exchange_new(ops, &args, &x);
    if (st != FS_OK || !x) {
        failf("%s: plan failed (status %d): %s", what, (int)st, fs_error_message());
        /* The others go on to execute: this rank cannot take part, so stop. */
        MPI_Abort(comm, 1);
    }
    int64_t from_n = fs_box_elems(&rd->from), to_n = fs_box_elems(&rd->to);
    if (x->work_elems < from_n || x->work_elems < to_n)
        failf("%s: work_elems %" PRId64 " smaller than the from (%" PRId64 ") or to (%" PRId64 ") box",
              what, x->work_elems, from_n, to_n);
    int64_t cap = x->work_elems > from_n ? x->work_elems : from_n;
    cap = cap > to_n ? cap : to_n;
    unsigned char *data = malloc((size_t)(cap > 0 ? cap : 1) * eb);
    if (!data) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(comm, 99);
    }
    /* Garbage everywhere, then the from box. */
    memset(data, 0xEE, (size_t)(cap > 0 ? cap : 1) * eb);
    int64_t at[FS_LAYOUT_MAX_DIMS];
    if (from_n > 0) {
        memcpy(at, rd->from.start, sizeof at);
        int64_t i = 0;
        do
            element_value(global_index(at, ndim, shape), tag, eb, data + (size_t)i++ * eb);
        while (next_index(at, &rd->from));
    }

    st = fs_exchange_execute(x, data);
    if (st != FS_OK)
        failf("%s: execute failed (status %d): %s", what, (int)st, fs_error_message());

    int64_t wrong = 0, first_wrong = -1;
    if (st == FS_OK && to_n > 0) {
        memcpy(at, rd->to.start, sizeof at);
        int64_t i = 0;
        unsigned char expect[16];
        int hooked = with_hooks && ops->uses_hooks;
        do {
            int64_t g = global_index(at, ndim, shape);
            element_value(g, tag, eb, expect);
            if (hooked) {
                transform1(expect, eb);
                transform2(expect, eb);
            }
            if (memcmp(expect, data + (size_t)i * eb, eb) != 0) {
                if (first_wrong < 0)
                    first_wrong = g;
                wrong++;
            }
            i++;
        } while (next_index(at, &rd->to));
    }
    if (wrong)
        failf("%s: %" PRId64 " of %" PRId64 " elements of the destination box wrong (first at "
              "global index %" PRId64 ")", what, wrong, to_n, first_wrong);

    uint64_t want_sent = (uint64_t)(rd->send_total - rd->send_elems[rank]) * eb;
    uint64_t want_received = (uint64_t)(rd->recv_total - rd->recv_elems[rank]) * eb;
    if (st == FS_OK && (x->stats.bytes_sent != want_sent || x->stats.bytes_received != want_received))
        failf("%s: stats say %" PRIu64 " bytes sent and %" PRIu64 " received, expected %" PRIu64
              " and %" PRIu64, what, x->stats.bytes_sent, x->stats.bytes_received, want_sent,
              want_received);
    if (st == FS_OK && (x->stats.t_pack_s < 0 || x->stats.t_comm_s < 0 || x->stats.t_unpack_s < 0))
        failf("%s: negative times in the stats", what);

    if (with_hooks) {
        if (!ops->uses_hooks && hs.calls)
            failf("%s: a strategy without uses_hooks called the hooks %ld times", what, hs.calls);
        if (ops->uses_hooks) {
            MPI_Allreduce(MPI_IN_PLACE, hs.pre_count, (int)nglobal, MPI_INT, MPI_SUM, comm);
            MPI_Allreduce(MPI_IN_PLACE, hs.post_count, (int)nglobal, MPI_INT, MPI_SUM, comm);
            for (int64_t g = 0; g < nglobal; g++)
                if (hs.pre_count[g] != 1 || hs.post_count[g] != 1) {
                    failf("%s: element %" PRId64 " went through pre %d and post %d times", what, g,
                          hs.pre_count[g], hs.post_count[g]);
                    break;
                }
        }
    }
    free(hs.pre_count);
    free(hs.post_count);
    fs_exchange_free(&x);
    if (x)
        failf("%s: fs_exchange_free did not set the pointer to NULL", what);
    fs_redist_free(&rd);
    free(data);
    free(from_all);
    free(to_all);
    fs_error_clear();
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    int strategies = 0, cases = 0;
    for (int s = 0; fs_exchange_strategies[s]; s++) {
        const fs_exchange_ops *ops = fs_exchange_strategies[s];
        strategies++;
        if (fs_exchange_find(ops->name) != ops)
            failf("fs_exchange_find(\"%s\") does not return the table entry", ops->name);
        if (!ops->summary || !ops->plan || !ops->execute)
            failf("strategy %s lacks a summary, plan or execute", ops->name);
        rng_state = 20240601; /* every strategy sees the same cases */
        int tag = 0;
        for (int ndim = 1; ndim <= 4; ndim++) {
            /* Oversubscribed rank counts pay for every collective: fewer cases. */
            for (int rep = 0; rep < (nranks <= 4 ? 6 : 3); rep++) {
                int64_t shape[FS_LAYOUT_MAX_DIMS];
                /* Lengths from 1 to about 2P+3: uneven splits, and a first
                 * axis shorter than the rank count in some cases. */
                int64_t max_len = ndim >= 4 ? nranks + 3 : 2 * nranks + 3;
                for (int k = 0; k < ndim; k++)
                    shape[k] = rng_range(1, max_len);
                if (rep == 0 && nranks > 1)
                    shape[0] = rng_range(1, nranks - 1); /* some ranks own nothing */
                /* Small packets and several queues make chunking strategies
                 * cut blocks into many uneven pieces; large ones do not. */
                fs_exchange_params params = {
                    .seed = (uint64_t)rng_range(0, 1000),
                    .packet_bytes = rep == 1 ? 40 : 4096,
                    .queues = (int)rng_range(1, 3),
                };
                int moves[5][2] = {{0, -1}, {-1, 0}, {0, 1}, {1, 0}, {0, 2}};
                int nmoves = ndim == 1 ? 2 : ndim == 2 ? 4 : 5;
                for (int m = 0; m < nmoves; m++) {
                    size_t eb = (tag % 3 == 2) ? 8 : 16;
                    run_case(ops, tag, ndim, shape, moves[m][0], moves[m][1], eb, &params,
                             tag % 3 != 0);
                    tag++;
                    cases++;
                }
            }
        }
    }
    if (strategies == 0)
        failf("no exchange strategy in fs_exchange_strategies");

    /* Extreme packets (1 byte, 7 bytes, more than any block) and queue
     * counts (1, 2, more than the ranks), on small arrays. */
    size_t packets[3] = {1, 7, (size_t)1 << 30};
    int queues[3] = {1, 2, nranks + 3};
    for (int s = 0; fs_exchange_strategies[s]; s++) {
        rng_state = 777;
        int tag = 1000;
        for (int e = 0; e < 3; e++) {
            fs_exchange_params params = {.seed = (uint64_t)e, .packet_bytes = packets[e],
                                         .queues = queues[e]};
            int64_t shape2[2] = {rng_range(1, nranks + 2), rng_range(1, 5)};
            int64_t shape3[3] = {rng_range(2, nranks + 1), rng_range(1, 4), rng_range(1, 3)};
            run_case(fs_exchange_strategies[s], tag, 2, shape2, 0, 1, 16, &params, 1);
            tag++;
            run_case(fs_exchange_strategies[s], tag, 3, shape3, 0, 2, 8, &params, 1);
            tag++;
            cases += 2;
        }
    }

    /* In-place strategies keep no second array. */
    for (int s = 0; fs_exchange_strategies[s]; s++) {
        const fs_exchange_ops *ops = fs_exchange_strategies[s];
        if (!ops->in_place)
            continue;
        int64_t shape[3] = {64, 64, 64};
        fs_box *from_all = calloc((size_t)nranks, sizeof *from_all), *to_all = calloc((size_t)nranks, sizeof *to_all);
        for (int p = 0; p < nranks; p++) {
            from_all[p] = fs_box_split(3, shape, 0, nranks, p);
            to_all[p] = fs_box_split(3, shape, 1, nranks, p);
        }
        fs_redist *rd = fs_redist_new(nranks, rank, from_all, to_all);
        fs_exchange_params params = {.seed = 1, .packet_bytes = 4096, .queues = 2};
        fs_exchange_args args = {MPI_COMM_WORLD, rd, 16, MPI_C_DOUBLE_COMPLEX, &params, NULL};
        fs_exchange *x = NULL;
        if (fs_exchange_new(ops, &args, &x) == FS_OK) {
            int64_t largest = 0;
            for (int q = 0; q < nranks; q++) {
                largest = rd->send_elems[q] > largest ? rd->send_elems[q] : largest;
                largest = rd->recv_elems[q] > largest ? rd->recv_elems[q] : largest;
            }
            if (x->work_elems > (int64_t)nranks * largest)
                failf("%s: work_elems %" PRId64 " exceeds P x the largest block", ops->name, x->work_elems);
            if ((double)x->scratch_bytes >= (double)x->work_elems * 16 / 2)
                failf("%s: in place but holds %zu bytes of scratch for a %" PRId64 "-byte array",
                      ops->name, x->scratch_bytes, x->work_elems * 16);
        } else {
            failf("%s: plan failed on 64^3", ops->name);
        }
        fs_exchange_free(&x);
        fs_redist_free(&rd);
        free(from_all);
        free(to_all);
    }

    /* The contention-free rounds: perfect matchings, every pair once. */
    if (rank == 0) {
        for (int n = 1; n <= 17; n++) {
            int rounds = fs_exchange_rounds(n);
            int *met = calloc((size_t)(n * n), sizeof(int));
            for (int r = 0; r < rounds; r++) {
                int idle = 0;
                for (int p = 0; p < n; p++) {
                    int q = fs_exchange_round_partner(n, p, r);
                    if (q < 0) {
                        idle++;
                        continue;
                    }
                    if (q >= n || q == p || fs_exchange_round_partner(n, q, r) != p)
                        failf("rounds: n=%d round %d: partner of %d is %d, not symmetric", n, r, p, q);
                    else
                        met[p * n + q]++;
                }
                if (idle > (n % 2))
                    failf("rounds: n=%d round %d: %d idle ranks", n, r, idle);
            }
            for (int p = 0; p < n; p++)
                for (int q = 0; q < n; q++)
                    if (p != q && met[p * n + q] != 1)
                        failf("rounds: n=%d: %d and %d meet %d times", n, p, q, met[p * n + q]);
            free(met);
        }
    }

    long total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_exchange: %d strategies x %d cases on %d ranks, %ld failures\n", strategies,
               strategies ? cases / strategies : 0, nranks, total);
    MPI_Finalize();
    return total ? 1 : 0;
}
