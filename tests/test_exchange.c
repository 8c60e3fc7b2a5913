/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_exchange: every exchange strategy moves every element where it belongs.
 *
 * Run under mpiexec on any number of ranks (unit.bats uses 1 to 8). For each
 * strategy of fs_exchange_strategies (new ones are picked up by themselves),
 * on random shapes of 1 to 4 axes (deterministic: every rank draws the same)
 * with lengths that do not divide the rank count and first axes shorter than
 * it (ranks owning nothing), it redistributes axis 0 -> axis 1, axis 0 ->
 * axis 2, axis 0 -> gathered on rank 0 and back, with 16- and 8-byte
 * elements (6 shapes per number of axes on up to 4 ranks, 3 beyond:
 * oversubscribed ranks pay for every message). Each element carries a value
 * computed from its global index; after the exchange every element of the
 * destination box is checked, and so are the byte counts of the statistics.
 *
 * Besides:
 *  - packets of 1 byte, 7 bytes and 1 GiB (more than any block, the most
 *    --packet allows), with 1, 2 and P+3 output queues, for every strategy
 *    (every combination for random), on 3-D, 2-D and 1-D arrays;
 *  - block hooks (fs_block_hooks) on almost every case. A strategy that
 *    declares uses_hooks must call pre on every element of its `from` box
 *    exactly once, before sending it, and post on every element of its `to`
 *    box exactly once, after it arrived; each call gets a piece of one block
 *    (whole in every axis but the hooks' split axis) in global coordinates,
 *    packed row-major. pre checks it sees the original values and changes
 *    them, post checks it sees them changed by pre exactly once and changes
 *    them again; per-element counters prove "exactly once" after the
 *    exchange. Hooks set to NULL, pre or post alone, and split axis -1 are
 *    covered. A strategy without uses_hooks must never call them;
 *  - slab redistributions move the own block inside the buffer
 *    (fs_exchange_own_moves_in_place), and alltoall's send buffer then holds
 *    only the other ranks' blocks;
 *  - direct exchanges (fs_exchange_direct: a second array, messages cut at
 *    runs sent from and received into their places) forced on every rank,
 *    on none, with a 48-byte threshold (some pairs cut at runs and others
 *    not, ranks that pack exchanging with ranks that send directly), and by
 *    default; alltoall and random must then have a second array and leave
 *    the result there, the others never;
 *  - in-place strategies (ops->in_place): work_elems at most P times the
 *    largest block, and on a 64x64x64 array (exchanged and checked with
 *    every strategy) scratch_bytes below half the working array;
 *  - the round schedule fs_exchange_rounds / fs_exchange_round_partner for
 *    1 to 17 ranks: every round a perfect matching, every pair once.
 *
 * Exit 0 when all passed, 1 otherwise (each failure printed with its rank and
 * case). */
#include "config.h"

#include <inttypes.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exchange/exchange.h"
#include "core/buffer.h"
#include "core/layout.h"

static int rank, nranks;
static long failures, shown;

static void failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void failf(const char *fmt, ...)
{
    failures++;
    if (++shown > 20)
        return;
    /* One write per line: the ranks' lines must not interleave. */
    char line[1024];
    int n = snprintf(line, sizeof line, "rank %d of %d: FAIL: ", rank, nranks);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    strcat(line, "\n");
    fputs(line, stderr);
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 99);
    }
    return p;
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

/* What the hooks do to the first double of an element: exact in double
 * precision for every value used here, and telling apart "pre once" from
 * "pre twice", "post once" from "post twice" and from "no pre". */
#define PRE_ADD 1048576.0
#define POST_MUL 4.0

/* The value of the element at global row-major index g, tagged by case, after
 * `pre` and `post` hook calls. The two halves differ so a swapped or shifted
 * half shows. */
static void element_value(int64_t g, int tag, size_t eb, int pre, int post, void *out)
{
    double v[2];
    if (eb == 16) {
        v[0] = (double)g + 0.25;
        v[1] = -(double)tag - (double)g * 1e-3;
    } else {
        v[0] = (double)g * 7.0 + (double)tag * 1e6 + 0.5;
    }
    for (int i = 0; i < pre; i++)
        v[0] += PRE_ADD;
    for (int i = 0; i < post; i++)
        v[0] *= POST_MUL;
    memcpy(out, v, eb);
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

static const char *box_str(const fs_box *b)
{
    static char buf[2][256];
    static int which;
    char *s = buf[which ^= 1];
    size_t used = 0;
    s[0] = '\0';
    for (int k = 0; k < b->ndim && used < 200; k++)
        used += (size_t)snprintf(s + used, 256 - used, "%s%" PRId64 "+%" PRId64, k ? "," : "[",
                                 b->start[k], b->count[k]);
    snprintf(s + used, 256 - used, "]");
    return s;
}

static int box_inside(const fs_box *inner, const fs_box *outer)
{
    if (inner->ndim != outer->ndim)
        return 0;
    for (int k = 0; k < inner->ndim; k++)
        if (inner->start[k] < outer->start[k] ||
            inner->start[k] + inner->count[k] > outer->start[k] + outer->count[k])
            return 0;
    return 1;
}

/* ------------------------------------------------------------------ hooks */

enum hook_mode { HOOKS_NULL, HOOKS_BOTH, HOOKS_PRE, HOOKS_POST, NHOOK_MODES };
static const char *const hook_mode_names[] = {"no hooks", "pre and post", "pre only", "post only"};

typedef struct hook_ctx {
    const char *what;
    const fs_redist *rd;
    int ndim;
    const int64_t *shape;
    int tag;
    size_t eb;
    int split_axis;
    int post_after_pre;      /* values post sees went through pre */
    int64_t pre_calls, post_calls;
    unsigned char *pre_count, *post_count;   /* per global element (saturating) */
    int64_t bad_values, bad_boxes;
} hook_ctx;

/* A hook got `block`: it must be a piece of one of `blocks` (the send or
 * receive boxes), whole in every axis but the split axis, inside `mine`.
 * Returns 0 when the box cannot even be visited (not inside `mine`). */
static int check_hook_block(hook_ctx *c, const char *hook, const fs_box *block,
                             const fs_box *mine, const fs_box *blocks)
{
    if (block->ndim != c->ndim) {
        if (c->bad_boxes++ == 0)
            failf("%s: %s got a box of %d axes, the array has %d", c->what, hook, block->ndim,
                  c->ndim);
        return 0;
    }
    if (!box_inside(block, mine)) {
        if (c->bad_boxes++ == 0)
            failf("%s: %s got box %s, outside this rank's box %s", c->what, hook, box_str(block),
                  box_str(mine));
        return 0;
    }
    for (int q = 0; q < c->rd->npeers; q++) {
        if (fs_box_elems(&blocks[q]) == 0 || !box_inside(block, &blocks[q]))
            continue;
        int ok = 1;
        for (int k = 0; k < c->ndim; k++)
            if (k != c->split_axis && (block->start[k] != blocks[q].start[k] ||
                                       block->count[k] != blocks[q].count[k]))
                ok = 0;
        if (ok)
            return 1;
        if (c->bad_boxes++ == 0)
            failf("%s: %s got box %s, a piece of block %s (peer %d) not cut along the split "
                  "axis %d only",
                  c->what, hook, box_str(block), box_str(&blocks[q]), q, c->split_axis);
        return 1;
    }
    if (c->bad_boxes++ == 0)
        failf("%s: %s got box %s, inside no single block", c->what, hook, box_str(block));
    return 1;
}

/* Check the values of the block (after `pre` and `post` calls), then apply
 * one more call of the hook and count it. */
static void hook_visit(hook_ctx *c, int is_pre, const fs_box *block, unsigned char *data)
{
    const char *hook = is_pre ? "pre" : "post";
    if (!check_hook_block(c, hook, block, is_pre ? &c->rd->from : &c->rd->to,
                          is_pre ? c->rd->send : c->rd->recv) ||
        fs_box_elems(block) == 0)
        return;
    int64_t at[FS_LAYOUT_MAX_DIMS];
    memcpy(at, block->start, sizeof at);
    int64_t i = 0;
    unsigned char expect[16];
    int pre_seen = is_pre ? 0 : c->post_after_pre;
    do {
        int64_t g = global_index(at, c->ndim, c->shape);
        unsigned char *e = data + (size_t)i++ * c->eb;
        element_value(g, c->tag, c->eb, pre_seen, 0, expect);
        if (memcmp(expect, e, c->eb) != 0 && c->bad_values++ == 0) {
            double got, want;
            memcpy(&got, e, sizeof got);
            memcpy(&want, expect, sizeof want);
            failf("%s: %s on box %s: element at global index %" PRId64 " holds %.17g, expected "
                  "%.17g (%s)",
                  c->what, hook, box_str(block), g, got, want,
                  is_pre ? "the original value" : pre_seen ? "the value after pre, once"
                                                           : "the original value: no pre hook");
        }
        double v;
        memcpy(&v, e, sizeof v);
        v = is_pre ? v + PRE_ADD : v * POST_MUL;
        memcpy(e, &v, sizeof v);
        unsigned char *count = is_pre ? c->pre_count : c->post_count;
        if (count[g] < 255)
            count[g]++;
    } while (next_index(at, block));
}

static fs_status hook_pre(void *ctx, const fs_box *block, void *data)
{
    hook_ctx *c = ctx;
    c->pre_calls++;
    hook_visit(c, 1, block, data);
    return FS_OK;
}

static fs_status hook_post(void *ctx, const fs_box *block, void *data)
{
    hook_ctx *c = ctx;
    c->post_calls++;
    hook_visit(c, 0, block, data);
    return FS_OK;
}

/* Hooks that fail on one rank, at its n-th call of one of them. */
typedef struct failing_ctx {
    int fail_rank, fail_pre, fail_at;
    int calls;
} failing_ctx;

static fs_status failing_hook(failing_ctx *c, int is_pre)
{
    if (rank == c->fail_rank && is_pre == c->fail_pre && ++c->calls == c->fail_at)
        return fs_error_set(FS_ERR_RUNTIME, "test: %s failed on rank %d", is_pre ? "pre" : "post",
                            rank);
    return FS_OK;
}

static fs_status failing_pre(void *ctx, const fs_box *block, void *data)
{
    return failing_hook(ctx, 1);
}

static fs_status failing_post(void *ctx, const fs_box *block, void *data)
{
    return failing_hook(ctx, 0);
}

/* A hook failing on one rank fails the exchange on every rank with that
 * rank's message, and nobody waits for ever (unit.bats runs this under a
 * timeout). */
static void run_failing_hooks(const fs_exchange_ops *ops)
{
    int64_t shape[3] = {2 * nranks + 1, 3 * nranks + 2, 3};
    fs_box *from_all = xcalloc((size_t)nranks, sizeof *from_all);
    fs_box *to_all = xcalloc((size_t)nranks, sizeof *to_all);
    for (int p = 0; p < nranks; p++) {
        from_all[p] = fs_box_split(3, shape, 0, nranks, p);
        to_all[p] = fs_box_split(3, shape, 1, nranks, p);
    }
    fs_redist *rd = fs_redist_new(nranks, rank, from_all, to_all);
    if (!rd) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 99);
    }
    fs_exchange_params params = {.seed = 1, .packet_bytes = 64, .queues = 2};
    for (int variant = 0; variant < 4; variant++) {
        failing_ctx fc = {.fail_rank = nranks - 1 - variant % nranks, .fail_pre = variant % 2 == 0,
                          .fail_at = 1 + variant / 2};
        fs_block_hooks hooks = {failing_pre, failing_post, &fc, 0};
        fs_exchange_args args = {MPI_COMM_WORLD, rd, 16, MPI_C_DOUBLE_COMPLEX, &params, &hooks, 0, NULL};
        fs_exchange *x = NULL;
        fs_status st = fs_exchange_new(ops, &args, &x);
        if (st != FS_OK) {
            failf("%s, failing hooks: plan failed: %s", ops->name, fs_error_message());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        int64_t elems = x->work_elems + 1;
        void *data = xcalloc((size_t)elems, 16);
        st = fs_exchange_execute(x, &data, &elems);
        char want[128];
        snprintf(want, sizeof want, "test: %s failed on rank %d", fc.fail_pre ? "pre" : "post",
                 fc.fail_rank);
        /* A failure at a later call than the rank makes passes for nothing. */
        int failed_somewhere = 0, failed_here = fc.calls >= fc.fail_at && rank == fc.fail_rank;
        MPI_Allreduce(&failed_here, &failed_somewhere, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (failed_somewhere && (st != FS_ERR_RUNTIME || strcmp(fs_error_message(), want) != 0))
            failf("%s, failing hooks (variant %d): execute returned status %d, message '%s'; "
                  "expected %d, '%s'",
                  ops->name, variant, (int)st, fs_error_message(), (int)FS_ERR_RUNTIME, want);
        if (!failed_somewhere && st != FS_OK)
            failf("%s, failing hooks (variant %d): no hook failed, yet status %d: %s", ops->name,
                  variant, (int)st, fs_error_message());
        fs_error_clear();
        free(data);
        fs_exchange_free(&x);
    }
    fs_redist_free(&rd);
    free(from_all);
    free(to_all);
}

/* Two plans sharing one second array (fs_exchange_args.spare), the way a
 * compute plan runs a forward exchange and its reverse: the round trip gives
 * back the data, neither plan holds an array of its own, the spare is made
 * once (direct strategies) or never (in place), and the arrays trade places
 * each time. */
static void run_shared_spare(const fs_exchange_ops *ops)
{
    int64_t shape[3] = {2 * nranks + 1, 3 * nranks + 2, 3};
    fs_box *a = xcalloc((size_t)nranks, sizeof *a), *b = xcalloc((size_t)nranks, sizeof *b);
    for (int p = 0; p < nranks; p++) {
        a[p] = fs_box_split(3, shape, 0, nranks, p);
        b[p] = fs_box_split(3, shape, 1, nranks, p);
    }
    fs_redist *there = fs_redist_new(nranks, rank, a, b), *back = fs_redist_new(nranks, rank, b, a);
    if (!there || !back) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 99);
    }
    fs_exchange_params params = {.seed = 3, .packet_bytes = 64, .queues = 2};
    fs_spare spare = {.elem_bytes = 16};
    fs_exchange_args args = {.comm = MPI_COMM_WORLD, .rd = there, .elem_bytes = 16,
                             .elem_type = MPI_C_DOUBLE_COMPLEX, .params = &params,
                             .direct_min_run_bytes = 1, .spare = &spare};
    fs_exchange *x = NULL, *y = NULL;
    fs_status st = fs_exchange_new(ops, &args, &x);
    args.rd = back;
    if (st == FS_OK)
        st = fs_exchange_new(ops, &args, &y);
    if (st != FS_OK) {
        failf("%s, shared spare: plan failed: %s", ops->name, fs_error_message());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int64_t elems = x->work_elems > y->work_elems ? x->work_elems : y->work_elems;
    if (x->second || y->second || x->shares_spare != y->shares_spare ||
        (x->shares_spare && (!spare.data || spare.elems < elems / 2)) ||
        (!x->shares_spare && spare.data))
        failf("%s, shared spare: after planning second %p/%p, sharing %d/%d, spare %p of %" PRId64,
              ops->name, x->second, y->second, x->shares_spare, y->shares_spare, spare.data,
              spare.elems);
    if (x->shares_spare && fs_exchange_reserve_second(x, elems) != FS_OK)
        failf("%s, shared spare: reserve failed", ops->name);
    double *data = fs_buffer_alloc((size_t)elems * 16);
    int64_t n = fs_box_elems(&a[rank]);
    for (int64_t i = 0; data && i < 2 * n; i++)
        data[i] = (double)(rank * 100000 + i);
    void *first = data, *spare_was = spare.data;
    st = fs_exchange_execute(x, (void **)&data, &elems);
    if (st == FS_OK && x->shares_spare && (data != spare_was || spare.data != first))
        failf("%s, shared spare: the forward exchange did not trade the arrays", ops->name);
    if (st == FS_OK)
        st = fs_exchange_execute(y, (void **)&data, &elems);
    if (st != FS_OK)
        failf("%s, shared spare: execute failed: %s", ops->name, fs_error_message());
    if (x->shares_spare && (data != first || spare.data != spare_was))
        failf("%s, shared spare: the round trip did not give the arrays back", ops->name);
    for (int64_t i = 0; st == FS_OK && i < 2 * n; i++)
        if (data[i] != (double)(rank * 100000 + i)) {
            failf("%s, shared spare: element %" PRId64 " is %g after the round trip", ops->name,
                  i / 2, data[i]);
            break;
        }
    fs_buffer_free(data);
    fs_exchange_free(&x);
    fs_exchange_free(&y);
    fs_exchange_spare_free(&spare);
    fs_redist_free(&there);
    fs_redist_free(&back);
    free(a);
    free(b);
}

/* Every element of `box` was counted exactly once, and no other: the sum of
 * the counters equals the box's size. */
static void check_counts(const hook_ctx *c, const char *hook, const unsigned char *count,
                         const fs_box *box, int64_t total)
{
    int64_t n = fs_box_elems(box), sum = 0, wrong = 0, first = -1;
    for (int64_t g = 0; g < total; g++)
        sum += count[g];
    if (n > 0) {
        int64_t at[FS_LAYOUT_MAX_DIMS];
        memcpy(at, box->start, sizeof at);
        do {
            int64_t g = global_index(at, c->ndim, c->shape);
            if (count[g] != 1 && wrong++ == 0)
                first = g;
        } while (next_index(at, box));
    }
    if (wrong)
        failf("%s: %s ran %s on %" PRId64 " of the %" PRId64 " elements of box %s (first at global "
              "index %" PRId64 ": %d times)",
              c->what, hook, "not exactly once", wrong, n, box_str(box), first, count[first]);
    else if (sum != n)
        failf("%s: %s ran on %" PRId64 " elements outside box %s", c->what, hook, sum - n,
              box_str(box));
}

/* ------------------------------------------------------------------ one case */

typedef struct case_opts {
    int hooks;          /* enum hook_mode */
    int split_axis;     /* the hooks' split axis */
    int check_scratch;  /* in-place strategies: scratch below half the working array */
    int direct;         /* enum direct_mode */
} case_opts;

/* fs_exchange_args.direct_min_run_bytes (the same on every rank, as the
 * message cuts of a pair must agree): the default, direct wherever a
 * strategy can, never, or runs of 48 bytes and more. */
enum direct_mode { DIRECT_DEFAULT, DIRECT_ALWAYS, DIRECT_NEVER, DIRECT_MID };
static const char *const direct_mode_names[] = {"direct by default", "direct always",
                                                "direct never", "direct from 48-byte runs"};

static size_t direct_min_run_bytes(int mode)
{
    switch (mode) {
    case DIRECT_ALWAYS: return 1;
    case DIRECT_NEVER: return SIZE_MAX;
    case DIRECT_MID: return 48;
    default: return 0;
    }
}

/* The largest block any rank sends to any rank. */
static int64_t largest_block(const fs_box *from_all, const fs_box *to_all)
{
    int64_t best = 0;
    for (int p = 0; p < nranks; p++)
        for (int q = 0; q < nranks; q++) {
            fs_box b = fs_box_intersect(&from_all[p], &to_all[q]);
            int64_t n = fs_box_elems(&b);
            if (n > best)
                best = n;
        }
    return best;
}

/* One exchange with one strategy. */
static void run_case(const fs_exchange_ops *ops, int tag, int ndim, const int64_t *shape,
                     int axis_from, int axis_to, size_t eb, const fs_exchange_params *params,
                     const case_opts *opts)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    fs_box *from_all = xcalloc((size_t)nranks, sizeof *from_all);
    fs_box *to_all = xcalloc((size_t)nranks, sizeof *to_all);
    for (int p = 0; p < nranks; p++) {
        from_all[p] = fs_box_split(ndim, shape, axis_from, nranks, p);
        to_all[p] = fs_box_split(ndim, shape, axis_to, nranks, p);
    }
    char what[320];
    snprintf(what, sizeof what,
             "%s, case %d: shape %s, axis %d -> %d, %zu-byte elements, packet %zu, %d queues, %s"
             " (split axis %d), %s",
             ops->name, tag, shape_str(ndim, shape), axis_from, axis_to, eb,
             params->packet_bytes, params->queues, hook_mode_names[opts->hooks],
             opts->split_axis, direct_mode_names[opts->direct]);

    fs_redist *rd = fs_redist_new(nranks, rank, from_all, to_all);
    if (!rd) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(comm, 99);
    }
    int64_t total = 1;
    for (int k = 0; k < ndim; k++)
        total *= shape[k];
    hook_ctx hc = {
        .what = what,
        .rd = rd,
        .ndim = ndim,
        .shape = shape,
        .tag = tag,
        .eb = eb,
        .split_axis = opts->split_axis,
        .post_after_pre = opts->hooks == HOOKS_BOTH,
        .pre_count = xcalloc((size_t)total, 1),
        .post_count = xcalloc((size_t)total, 1),
    };
    fs_block_hooks hooks = {
        .pre = opts->hooks == HOOKS_BOTH || opts->hooks == HOOKS_PRE ? hook_pre : NULL,
        .post = opts->hooks == HOOKS_BOTH || opts->hooks == HOOKS_POST ? hook_post : NULL,
        .ctx = &hc,
        .split_axis = opts->split_axis,
    };
    fs_exchange_args args = {
        .comm = comm,
        .rd = rd,
        .elem_bytes = eb,
        .elem_type = eb == 16 ? MPI_C_DOUBLE_COMPLEX : MPI_DOUBLE,
        .params = params,
        .hooks = opts->hooks == HOOKS_NULL ? NULL : &hooks,
        .direct_min_run_bytes = direct_min_run_bytes(opts->direct),
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
    if (ops->in_place) {
        /* No second array: the buffer is at most one slot per rank, each
         * the size of the largest block. */
        int64_t largest = largest_block(from_all, to_all);
        if (x->work_elems > (int64_t)nranks * largest)
            failf("%s: in-place strategy needs work_elems %" PRId64 ", more than %d ranks x the "
                  "largest block (%" PRId64 " elements)",
                  what, x->work_elems, nranks, largest);
        if (opts->check_scratch && x->scratch_bytes >= (size_t)x->work_elems * eb / 2)
            failf("%s: in-place strategy holds %zu bytes of scratch, not below half the %" PRId64
                  "-byte working array",
                  what, x->scratch_bytes, x->work_elems * (int64_t)eb);
    }
    /* Slabs (axis 0 -> a later axis): the own block moves inside the data
     * buffer, so alltoall's send buffer holds only the other ranks' blocks. */
    if (axis_from == 0 && axis_to > 0) {
        if (!fs_exchange_own_moves_in_place(rd))
            failf("%s: the own block of a slab redistribution does not move in place", what);
        size_t others = (size_t)(rd->send_total - rd->send_elems[rank]) * eb;
        if (strcmp(ops->name, "alltoall") == 0 && !x->second && x->scratch_bytes != others)
            failf("%s: alltoall holds %zu bytes of scratch, not the other ranks' %zu", what,
                  x->scratch_bytes, others);
    }
    /* Direct, the strategies that can (all but the in-place ones) receive
     * into a second array, as large as the working array, and count it;
     * not direct, none has one. Never direct refuses any run to or from
     * another rank; forced, none. */
    int can_direct = !ops->in_place && fs_exchange_direct(&args);
    if ((can_direct && x->work_elems > 0) != (x->second != NULL))
        failf("%s: %s second array, direct %d", what, x->second ? "a" : "no", can_direct);
    int others = rd->send_total - rd->send_elems[rank] + rd->recv_total - rd->recv_elems[rank] > 0;
    if (others && (opts->direct == DIRECT_ALWAYS || opts->direct == DIRECT_NEVER) &&
        fs_exchange_direct(&args) != (opts->direct == DIRECT_ALWAYS))
        failf("%s: fs_exchange_direct says %d", what, fs_exchange_direct(&args));
    if (x->second && (x->second_elems < x->work_elems ||
                      x->scratch_bytes < (size_t)x->second_elems * eb))
        failf("%s: second array of %" PRId64 " elements (work %" PRId64 ", scratch %zu bytes)",
              what, x->second_elems, x->work_elems, x->scratch_bytes);
    int64_t cap = x->work_elems > from_n ? x->work_elems : from_n;
    cap = cap > to_n ? cap : to_n;
    unsigned char *data = xcalloc((size_t)(cap > 0 ? cap : 1), eb);
    /* Garbage everywhere, then the from box. */
    memset(data, 0xEE, (size_t)(cap > 0 ? cap : 1) * eb);
    int64_t at[FS_LAYOUT_MAX_DIMS];
    if (from_n > 0) {
        memcpy(at, rd->from.start, sizeof at);
        int64_t i = 0;
        do
            element_value(global_index(at, ndim, shape), tag, eb, 0, 0, data + (size_t)i++ * eb);
        while (next_index(at, &rd->from));
    }

    /* With a second array the result is there, and data becomes it. */
    int64_t elems = cap > 0 ? cap : 1;
    void *swapped = data;
    st = fs_exchange_execute(x, &swapped, &elems);
    data = swapped;
    if (st != FS_OK)
        failf("%s: execute failed (status %d): %s", what, (int)st, fs_error_message());

    /* What the destination must hold: the values after the hooks that ran
     * (none for a strategy that leaves the block work to its caller). */
    int runs_hooks = ops->uses_hooks && opts->hooks != HOOKS_NULL;
    int want_pre = runs_hooks && hooks.pre, want_post = runs_hooks && hooks.post;
    int64_t wrong = 0, first_wrong = -1;
    if (st == FS_OK && to_n > 0) {
        memcpy(at, rd->to.start, sizeof at);
        int64_t i = 0;
        unsigned char expect[16];
        do {
            int64_t g = global_index(at, ndim, shape);
            element_value(g, tag, eb, want_pre, want_post, expect);
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

    if (!ops->uses_hooks && (hc.pre_calls || hc.post_calls))
        failf("%s: the strategy does not declare uses_hooks but called pre %" PRId64 " and post %"
              PRId64 " times", what, hc.pre_calls, hc.post_calls);
    if (st == FS_OK && want_pre)
        check_counts(&hc, "pre", hc.pre_count, &rd->from, total);
    if (st == FS_OK && want_post)
        check_counts(&hc, "post", hc.post_count, &rd->to, total);
    if (x->stats.t_hooks_s < 0 || x->stats.t_hooks_overlapped_s < 0 ||
        x->stats.t_hooks_overlapped_s > x->stats.t_hooks_s * (1 + 1e-9) + 1e-12)
        failf("%s: hook times in the stats: %g s overlapped of %g s", what,
              x->stats.t_hooks_overlapped_s, x->stats.t_hooks_s);

    uint64_t want_sent = (uint64_t)(rd->send_total - rd->send_elems[rank]) * eb;
    uint64_t want_received = (uint64_t)(rd->recv_total - rd->recv_elems[rank]) * eb;
    if (st == FS_OK && (x->stats.bytes_sent != want_sent || x->stats.bytes_received != want_received))
        failf("%s: stats say %" PRIu64 " bytes sent and %" PRIu64 " received, expected %" PRIu64
              " and %" PRIu64, what, x->stats.bytes_sent, x->stats.bytes_received, want_sent,
              want_received);
    if (st == FS_OK && (x->stats.t_pack_s < 0 || x->stats.t_comm_s < 0 || x->stats.t_unpack_s < 0))
        failf("%s: negative times in the stats", what);

    fs_exchange_free(&x);
    if (x)
        failf("%s: fs_exchange_free did not set the pointer to NULL", what);
    fs_redist_free(&rd);
    free(hc.pre_count);
    free(hc.post_count);
    free(data);
    free(from_all);
    free(to_all);
    fs_error_clear();
}

/* ------------------------------------------------------------------ the round schedule */

/* Rounds for n ranks: each a perfect matching (the partner's partner is the
 * rank itself; -1, idle, only for odd n and for one rank per round), every
 * pair meeting in exactly one round, in n - 1 rounds (n even) or n (odd). */
static void check_schedule(void)
{
    for (int n = 1; n <= 17; n++) {
        int rounds = fs_exchange_rounds(n);
        int want = n == 1 ? 0 : n % 2 ? n : n - 1;
        if (rounds != want)
            failf("schedule, %d ranks: %d rounds, expected %d", n, rounds, want);
        if (rounds < 0 || rounds > 64)
            continue;
        int *met = xcalloc((size_t)n * n, sizeof *met);
        for (int r = 0; r < rounds; r++) {
            int idle = 0;
            for (int p = 0; p < n; p++) {
                int q = fs_exchange_round_partner(n, p, r);
                if (q == -1) {
                    idle++;
                    continue;
                }
                if (q < 0 || q >= n || q == p) {
                    failf("schedule, %d ranks, round %d: rank %d gets partner %d", n, r, p, q);
                    continue;
                }
                int back = fs_exchange_round_partner(n, q, r);
                if (back != p)
                    failf("schedule, %d ranks, round %d: rank %d pairs with %d, which pairs with %d",
                          n, r, p, q, back);
                met[p * n + q]++;
            }
            if (idle > (n % 2))
                failf("schedule, %d ranks, round %d: %d idle ranks (at most %d)", n, r, idle, n % 2);
        }
        for (int p = 0; p < n; p++)
            for (int q = 0; q < n; q++)
                if (p != q && met[p * n + q] != 1)
                    failf("schedule, %d ranks: rank %d meets rank %d in %d rounds, expected 1", n,
                          p, q, met[p * n + q]);
        free(met);
    }
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    if (rank == 0)
        check_schedule();

    int strategies = 0, cases = 0;
    for (int s = 0; fs_exchange_strategies[s]; s++) {
        const fs_exchange_ops *ops = fs_exchange_strategies[s];
        strategies++;
        if (fs_exchange_find(ops->name) != ops)
            failf("fs_exchange_find(\"%s\") does not return the table entry", ops->name);
        if (!ops->summary || !ops->estimate || !ops->plan || !ops->execute)
            failf("strategy %s lacks a summary, estimate, plan or execute", ops->name);
        if (ops->uses_hooks)
            run_failing_hooks(ops);
        run_shared_spare(ops);
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
                    /* Half the cases wait as on a crowded node. */
                    .crowded = rep % 2,
                };
                int moves[5][2] = {{0, -1}, {-1, 0}, {0, 1}, {1, 0}, {0, 2}};
                int nmoves = ndim == 1 ? 2 : ndim == 2 ? 4 : 5;
                for (int m = 0; m < nmoves; m++) {
                    size_t eb = (tag % 3 == 2) ? 8 : 16;
                    /* Hooks on most cases: both (split along the from
                     * axis, or not split), one alone, or none. */
                    int variant = tag % 5;
                    case_opts opts = {
                        .hooks = variant == 0 || variant == 1 ? HOOKS_BOTH
                                 : variant == 2              ? HOOKS_PRE
                                 : variant == 3              ? HOOKS_POST
                                                             : HOOKS_NULL,
                        .split_axis = variant == 1 ? -1 : moves[m][0],
                        .direct = tag % 4,
                    };
                    run_case(ops, tag++, ndim, shape, moves[m][0], moves[m][1], eb, &params,
                             &opts);
                    cases++;
                }
            }
        }

        /* Packets of 1 byte, 7 bytes and larger than any block, with 1, 2
         * and P+3 queues (every combination for the strategy that has
         * queues). The arrays are small (blocks of a few elements: the
         * lockstep strategies pay a round trip per piece, milliseconds on
         * oversubscribed cores): some ranks own nothing before (3-D),
         * uneven blocks (2-D), a gather and a scatter (1-D). */
        int64_t small3[3] = {nranks > 1 ? nranks - 1 : 1, nranks + 1, 2};
        int64_t small2[2] = {2 * nranks + 1, 2};
        int64_t small1[1] = {nranks + 2};
        /* 1G: more than any block, and the largest --packet allows. */
        size_t packets[3] = {1, 7, (size_t)1 << 30};
        int queues[3] = {1, 2, nranks + 3};
        for (int pi = 0; pi < 3; pi++) {
            for (int qi = 0; qi < 3; qi++) {
                if (!(qi == pi || strcmp(ops->name, "random") == 0))
                    continue;
                fs_exchange_params params = {
                    .seed = (uint64_t)(7 * pi + qi),
                    .packet_bytes = packets[pi],
                    .queues = queues[qi],
                    .crowded = (pi + qi) % 2,
                };
                /* 1-byte packets on 8-byte elements and blocks of one or two
                 * of them keep the piece count low. */
                size_t eb = pi == 0 ? 8 : 16;
                small3[2] = small2[1] = pi == 0 ? 1 : 2;
                case_opts split0 = {.hooks = HOOKS_BOTH, .split_axis = 0, .direct = (pi + qi) % 4};
                case_opts unsplit = {.hooks = HOOKS_BOTH, .split_axis = -1, .direct = (pi + qi + 1) % 4};
                run_case(ops, tag++, 3, small3, 0, 1, eb, &params, &split0);
                run_case(ops, tag++, 2, small2, 0, 1, 8, &params, &unsplit);
                run_case(ops, tag++, 1, small1, 0, -1, eb, &params, &split0);
                run_case(ops, tag++, 1, small1, -1, 0, 8, &params, &unsplit);
                cases += 4;
            }
        }

        /* A 64x64x64 array: in-place strategies hold little scratch; the
         * others go direct or not. */
        for (int d = DIRECT_DEFAULT; d <= DIRECT_MID; d++) {
            int64_t cube[3] = {64, 64, 64};
            fs_exchange_params params = {.seed = 3, .packet_bytes = 8192, .queues = 4, .crowded = d % 2};
            case_opts opts = {.hooks = HOOKS_BOTH, .split_axis = 0, .check_scratch = 1, .direct = d};
            run_case(ops, tag++, 3, cube, 0, 1, 16, &params, &opts);
            run_case(ops, tag++, 3, cube, 1, 2, 16, &params, &opts);
            cases += 2;
        }
    }
    if (strategies == 0)
        failf("no exchange strategy in fs_exchange_strategies");

    long total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_exchange: %d strategies, %d cases on %d ranks, %ld failures\n", strategies,
               cases, nranks, total);
    MPI_Finalize();
    return total ? 1 : 0;
}
