/* dryrun: see dryrun.h. */
#include "config.h"

#include "dryrun.h"
#include "shards.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "exchange.h"
#include "h5io.h"
#include "planner.h"
#include "transform.h"

/* The parts of a run's peak resident memory (VmHWM, the report's peak
 * memory) besides the data buffer and the exchange plans, measured with
 * MPICH 4, HDF5 1.14 and FFTW 3.3 on 1 to 4 ranks:
 * - what MPI, HDF5 and FFTW hold in a run of a 1x1x1 array; */
#define LIBRARY_BYTES ((int64_t)27 * 1024 * 1024)
/* - and on top of that in a run of a real size: FFTW's plans of the stages
 *   and the buffers of their strided passes, and HDF5's for a dataset of
 *   that size (2 to 3 MiB from 64^3 to 256^3 elements, on slabs and
 *   pencils alike); */
#define PLANS_BYTES ((int64_t)3 * 1024 * 1024)
/* - reading a box that is not contiguous in the file (pencils): ROMIO's
 *   data sieving buffer, of which about this much is touched. */
#define SIEVE_BYTES ((int64_t)3 * 1024 * 1024 / 2)
/* fs_buffer_alloc rounds large buffers up to whole 2 MiB huge pages,
 * which are resident as a whole once touched. */
#define HUGE_PAGE_BYTES ((int64_t)2 * 1024 * 1024)
/* The strategies the dry run compares (the table's, for `auto`). */
#define MAX_STRATEGIES 32

static double mib(double bytes)
{
    return bytes / 1048576.0;
}

static int64_t resident(int64_t bytes)
{
    return bytes < HUGE_PAGE_BYTES ? bytes : (bytes + HUGE_PAGE_BYTES - 1) / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
}

static void box_text(const fs_box *b, char *buf, size_t size)
{
    fs_format_shape(b->ndim, b->count, buf, size);
}

/* Smallest and largest box of a stage over all ranks. */
static void stage_extent(const fs_transform *t, int s, fs_box *small, fs_box *large, int *empty)
{
    int64_t lo = INT64_MAX, hi = -1;
    *empty = 0;
    for (int c1 = 0; c1 < t->grid[0]; c1++)
        for (int c2 = 0; c2 < t->grid[1]; c2++) {
            fs_box b = fs_transform_box(t, s, c1, c2);
            int64_t n = fs_box_elems(&b);
            if (n == 0)
                (*empty)++;
            if (n < lo) {
                lo = n;
                *small = b;
            }
            if (n > hi) {
                hi = n;
                *large = b;
            }
        }
}

/* The largest block a rank sends in exchange e: the largest share of the
 * moving axis before times the largest share of the axis it moves to,
 * times the rest of the largest box. */
static int64_t largest_block(const fs_transform *t, int e, const fs_box *large_from)
{
    int g = fs_transform_exchange_dim(t, e);
    int b = t->split[e + 1][g];
    fs_box blk = *large_from;
    if (b >= 0) {
        int64_t cnt, off;
        fs_split_block(t->shape[b], t->grid[g], 0, &cnt, &off);
        blk.count[b] = cnt;
    }
    return fs_box_elems(&blk);
}

/* The coordinates along grid dimension g whose boxes can differ in size:
 * the ends, and both sides of every place where a stage's share of the
 * axis split over g changes (block splits have at most one). Returns how
 * many, at most 2 + 2 * FS_MAX_STAGES. */
static int candidate_coords(const fs_transform *t, int g, int *out)
{
    int n = 0, last = t->grid[g] - 1;
    int cand[2 + 2 * FS_MAX_STAGES] = {0, last};
    int ncand = 2;
    for (int s = 0; s < t->nstages; s++) {
        int a = t->split[s][g];
        if (a < 0)
            continue;
        /* fs_split_block: the first n % parts parts hold one more. */
        int extra = (int)(t->shape[a] % t->grid[g]);
        if (extra > 0) {
            cand[ncand++] = extra - 1;
            cand[ncand++] = extra < last ? extra : last;
        }
    }
    for (int i = 0; i < ncand; i++) {
        int seen = 0;
        for (int j = 0; j < n; j++)
            seen = seen || out[j] == cand[i];
        if (!seen)
            out[n++] = cand[i];
    }
    return n;
}

/* What the rank at grid coordinates c needs with strategy ops: every plan
 * is made before the run and keeps its buffers, so the exchanges' scratch
 * adds up (with --check, the inverse exchanges' too). */
typedef struct rank_need {
    const fs_exchange_ops *ops;
    int64_t array_elems;               /* the data buffer */
    int64_t scratch_bytes;             /* the exchange plans */
    uint64_t messages[FS_MAX_STAGES];  /* per exchange */
} rank_need;

static fs_status need_of(const fs_transform *t, const fs_exchange_ops *ops,
                         const fs_exchange_params *params, int check, const int c[2],
                         rank_need *need)
{
    memset(need, 0, sizeof *need);
    size_t cb = fs_complex_bytes(t->prec);
    for (int s = 0; s < t->nstages; s++) {
        fs_box b = fs_transform_box(t, s, c[0], c[1]);
        if (fs_box_elems(&b) > need->array_elems)
            need->array_elems = fs_box_elems(&b);
    }
    for (int e = 0; e + 1 < t->nstages; e++) {
        int g = fs_transform_exchange_dim(t, e), n = t->grid[g];
        fs_box *from = calloc((size_t)n, sizeof *from), *to = calloc((size_t)n, sizeof *to);
        fs_redist *rd[2] = {NULL, NULL};
        if (from && to) {
            for (int m = 0; m < n; m++) {
                int cm[2] = {c[0], c[1]};
                cm[g] = m;
                from[m] = fs_transform_box(t, e, cm[0], cm[1]);
                to[m] = fs_transform_box(t, e + 1, cm[0], cm[1]);
            }
            rd[0] = fs_redist_new(n, c[g], from, to);
            if (check)
                rd[1] = fs_redist_new(n, c[g], to, from);
        }
        free(from);
        free(to);
        if (!rd[0] || (check && !rd[1])) {
            fs_redist_free(&rd[0]);
            fs_redist_free(&rd[1]);
            return fs_error_set(FS_ERR_RUNTIME, "out of memory planning the dry run");
        }
        for (int k = 0; k < 2 && rd[k]; k++) {
            fs_exchange_args args = {
                .comm = MPI_COMM_NULL,
                .rd = rd[k],
                .elem_bytes = cb,
                .elem_type = MPI_DATATYPE_NULL,
                .params = params,
                .hooks = NULL,
            };
            fs_exchange_estimate est;
            ops->estimate(&args, &est);
            if (est.work_elems > need->array_elems)
                need->array_elems = est.work_elems;
            need->scratch_bytes += (int64_t)est.scratch_bytes;
            if (k == 0)
                need->messages[e] = est.messages;
        }
        fs_redist_free(&rd[0]);
        fs_redist_free(&rd[1]);
    }
    return FS_OK;
}

/* The largest need over the ranks whose boxes differ in size (the memory
 * of one rank: its array and scratch together), and the most messages any
 * of them sends in each exchange. */
static fs_status largest_need(const fs_transform *t, const fs_exchange_ops *ops,
                              const fs_exchange_params *params, int check, rank_need *worst)
{
    int coords[2][2 + 2 * FS_MAX_STAGES], n[2];
    for (int g = 0; g < 2; g++)
        n[g] = candidate_coords(t, g, coords[g]);
    size_t cb = fs_complex_bytes(t->prec);
    int64_t worst_bytes = -1;
    uint64_t messages[FS_MAX_STAGES] = {0};
    for (int i = 0; i < n[0]; i++)
        for (int j = 0; j < n[1]; j++) {
            int c[2] = {coords[0][i], coords[1][j]};
            rank_need need;
            fs_status st = need_of(t, ops, params, check, c, &need);
            if (st != FS_OK)
                return st;
            int64_t bytes = resident(need.array_elems * (int64_t)cb) + need.scratch_bytes;
            if (bytes > worst_bytes) {
                worst_bytes = bytes;
                *worst = need;
            }
            for (int e = 0; e < FS_MAX_STAGES; e++)
                messages[e] = need.messages[e] > messages[e] ? need.messages[e] : messages[e];
        }
    memcpy(worst->messages, messages, sizeof messages);
    return FS_OK;
}

/* Whether the ranks read boxes that are not contiguous in the file (ROMIO
 * then sieves): pencils, and slabs of an axis after a longer batch axis. */
static int sieved_read(const fs_transform *t)
{
    fs_box full = fs_box_full(t->ndim, t->shape);
    for (int c1 = 0; c1 < t->grid[0] && c1 < 2; c1++)
        for (int c2 = 0; c2 < t->grid[1] && c2 < 2; c2++) {
            fs_box b = fs_transform_box(t, 0, c1, c2);
            if (fs_box_elems(&b) && !fs_box_is_contiguous_in(&b, &full))
                return 1;
        }
    return 0;
}

/* The memory of a run besides the data buffer and the exchanges. */
static int64_t other_bytes(const fs_transform *t)
{
    return LIBRARY_BYTES + PLANS_BYTES + (sieved_read(t) ? SIEVE_BYTES : 0);
}

/* Each strategy's largest need (ops: the one named; NULL: all of them, as
 * `auto` may pick any). *nneeds of them in table order, and *worst the
 * index of the largest. */
static fs_status strategy_needs(const fs_options *opts, const fs_transform_request *rq,
                                const fs_exchange_ops *ops, rank_need *needs, int *nneeds,
                                int *worst)
{
    fs_exchange_params params = {opts->seed, opts->packet_bytes, opts->queues};
    int64_t worst_bytes = -1;
    *nneeds = 0;
    *worst = -1;
    for (int i = 0; fs_exchange_strategies[i] && *nneeds < MAX_STRATEGIES; i++) {
        const fs_exchange_ops *o = fs_exchange_strategies[i];
        if (ops && o != ops)
            continue;
        /* The strategy changes the plan (block work for those with hooks). */
        fs_transform t;
        fs_transform_request with = *rq;
        with.hooks = o->uses_hooks;
        fs_status st = fs_transform_plan(&with, &t);
        if (st != FS_OK)
            return st;
        if (!t.exchanges)
            return FS_OK;
        rank_need *n = &needs[*nneeds];
        if ((st = largest_need(&t, o, &params, opts->check, n)) != FS_OK)
            return st;
        int64_t bytes = resident(n->array_elems * (int64_t)fs_complex_bytes(t.prec)) + n->scratch_bytes;
        if (bytes > worst_bytes) {
            worst_bytes = bytes;
            *worst = *nneeds;
        }
        n->ops = o;
        (*nneeds)++;
    }
    return FS_OK;
}

/* The input: described by --shape/--dtype, or probed by rank 0; every rank
 * gets it. */
static fs_status dry_input(MPI_Comm comm, int rank, const fs_options *opts, fs_input_info *info)
{
    memset(info, 0, sizeof *info);
    fs_status st = FS_OK;
    if (opts->shape_ndim) {
        info->ndim = opts->shape_ndim;
        memcpy(info->shape, opts->shape, sizeof info->shape);
        const char *d = opts->dtype ? opts->dtype : "complex128";
        snprintf(info->type_name, sizeof info->type_name, "%s", d);
        snprintf(info->dataset, sizeof info->dataset, "(--shape)");
        info->dtype = strcmp(d, "float32") == 0     ? FS_DTYPE_FLOAT32
                      : strcmp(d, "float64") == 0   ? FS_DTYPE_FLOAT64
                      : strcmp(d, "complex64") == 0 ? FS_DTYPE_COMPLEX64
                                                    : FS_DTYPE_COMPLEX128;
    } else if (rank == 0) {
        fs_shard_set shards;
        st = fs_input_probe(opts->shards, opts->input_file, opts->input_dataset, info, &shards);
        fs_shard_set_free(&shards);
    }
    if ((st = fs_error_agree(comm, st)) != FS_OK)
        return st;
    return fs_bcast_bytes(comm, 0, info, (int64_t)sizeof *info);
}

/* The first lines: what is computed and how the ranks split it. */
static void print_decomposition(const fs_options *opts, const fs_input_info *info,
                                const fs_transform *t, int P)
{
    char shape[256];
    fs_format_shape(info->ndim, info->shape, shape, sizeof shape);
    printf("fftshard dry run: %s %s on %d ranks: %s, %s precision, %s\n", shape, info->type_name, P,
           fs_kind_name(t->kind), fs_precision_name(t->prec),
           opts->inverse ? "inverse" : "forward");
    if (t->pencil)
        printf("decomposition: pencil, grid %d x %d%s (%s)\n", t->grid[0], t->grid[1],
               t->exchanges ? "" : ", no exchange",
               opts->grid[0] ? "--grid" : opts->decomp == FS_DECOMP_PENCIL ? "--decomp=pencil"
                                                                          : "slabs would leave ranks without data");
    else if (t->fold)
        printf("decomposition: 1-D four-step, %lld x %lld\n", (long long)t->n2, (long long)t->n1);
    else if (!t->exchanges)
        printf("decomposition: slab on axis %d, no exchange\n", t->from_axis);
    else if (t->split[1][0] == FS_GATHER)
        printf("decomposition: slab on axis %d, gathered on rank 0 for the last pass\n", t->split[0][0]);
    else
        printf("decomposition: slab, axis %d -> axis %d\n", t->split[0][0], t->split[1][0]);
}

/* One line per stage; large[s] gets the largest box of stage s. */
static void print_stages(const fs_transform *t, int P, fs_box *large)
{
    size_t cb = fs_complex_bytes(t->prec);
    for (int s = 0; s < t->nstages; s++) {
        fs_box small;
        int empty;
        stage_extent(t, s, &small, &large[s], &empty);
        char a[128], b[128], split[128] = "";
        box_text(&small, a, sizeof a);
        box_text(&large[s], b, sizeof b);
        for (int g = 0; g < 2; g++) {
            int ax = t->split[s][g];
            size_t u = strlen(split);
            if (ax >= 0)
                snprintf(split + u, sizeof split - u, "%saxis %d over %d%s", u ? ", " : "", ax,
                         t->grid[g], t->fold || t->transform_axis[ax] ? "" : " (batch)");
            else if (ax == FS_GATHER)
                snprintf(split + u, sizeof split - u, "%sall on rank 0", u ? ", " : "");
        }
        int64_t n = fs_box_elems(&large[s]);
        printf("stage %d: %s; local blocks %s to %s (up to %" PRId64 " elements, %.1f MiB)\n", s,
               split[0] ? split : "not split", a, b, n, mib((double)n * (double)cb));
        if (empty)
            printf("  %d of %d ranks hold nothing in this stage\n", empty, P);
    }
}

/* One line per exchange, with every strategy's messages. */
static void print_exchanges(const fs_transform *t, const fs_box *large, const rank_need *needs,
                            int nneeds)
{
    size_t cb = fs_complex_bytes(t->prec);
    for (int e = 0; e + 1 < t->nstages; e++) {
        int g = fs_transform_exchange_dim(t, e);
        int64_t blk = largest_block(t, e, &large[e]);
        char msgs[512] = "";
        for (int k = 0; k < nneeds; k++) {
            size_t u = strlen(msgs);
            snprintf(msgs + u, sizeof msgs - u, "%s%s %" PRIu64, k ? ", " : "",
                     needs[k].ops->name, needs[k].messages[e]);
        }
        printf("exchange %d: among %d ranks (%s), blocks of up to %" PRId64
               " elements (%.2f MiB); messages per rank: %s\n",
               e + 1, t->grid[g], t->pencil ? (g == 1 ? "a row of the grid" : "a column of the grid")
                                            : "all ranks",
               blk, mib((double)blk * (double)cb), msgs);
    }
}

/* The memory per rank of the strategy (or the largest, for auto). */
static void print_memory(const fs_options *opts, const fs_transform *t, const fs_box *large,
                         const fs_exchange_ops *ops, const rank_need *chosen)
{
    size_t cb = fs_complex_bytes(t->prec);
    int64_t array_only = 0;
    for (int s = 0; s < t->nstages; s++)
        array_only = fs_box_elems(&large[s]) > array_only ? fs_box_elems(&large[s]) : array_only;
    int64_t array_bytes = resident((chosen ? chosen->array_elems : array_only) * (int64_t)cb);
    int64_t scratch = chosen ? chosen->scratch_bytes : 0;
    int64_t total = array_bytes + scratch + other_bytes(t);
    char who[128];
    if (!chosen)
        snprintf(who, sizeof who, "no exchange");
    else if (ops)
        snprintf(who, sizeof who, "%s", ops->name);
    else
        snprintf(who, sizeof who, "auto: %s's, the largest of the strategies", chosen->ops->name);
    printf("memory per rank (%s): array %.1f MiB + exchange %.1f MiB + plans and I/O ~%.1f MiB + "
           "libraries ~%.0f MiB = about %.1f MiB\n",
           who, mib((double)array_bytes), mib((double)scratch),
           mib((double)(other_bytes(t) - LIBRARY_BYTES)), mib((double)LIBRARY_BYTES),
           mib((double)total));
    if (opts->mem_per_rank)
        printf("--mem-per-rank %.1f MiB: %s\n", mib((double)opts->mem_per_rank),
               (uint64_t)total <= opts->mem_per_rank ? "fits" : "does NOT fit");
}

fs_status fs_dry_run(MPI_Comm comm, const fs_options *opts)
{
    int rank, nranks;
    int err = MPI_Comm_rank(comm, &rank);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_size(comm, &nranks);
    if (err != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed: %s", fs_mpi_strerror(err));
    fs_input_info info;
    fs_status st = dry_input(comm, rank, opts, &info);
    if (st != FS_OK)
        return st;

    int P = opts->ranks ? opts->ranks : nranks;
    const char *name = strcmp(opts->transpose, "auto") == 0 ? NULL : opts->transpose;
    const fs_exchange_ops *ops = name ? fs_exchange_find(name) : NULL;
    fs_transform_request rq;
    fs_transform t;
    st = fs_planner_request(opts, &info, P, &rq);
    rq.hooks = ops && ops->uses_hooks;
    if (st == FS_OK)
        st = fs_transform_plan(&rq, &t);
    rank_need needs[MAX_STRATEGIES];
    int nneeds = 0, worst = -1;
    if (st == FS_OK)
        st = strategy_needs(opts, &rq, ops, needs, &nneeds, &worst);
    /* Every rank plans the same way: rank 0 speaks, and prints. */
    if ((st = fs_error_agree(comm, rank == 0 ? st : FS_OK)) != FS_OK || rank != 0)
        return st;

    fs_box large[FS_MAX_STAGES];
    print_decomposition(opts, &info, &t, P);
    print_stages(&t, P, large);
    print_exchanges(&t, large, needs, nneeds);
    print_memory(opts, &t, large, ops, worst >= 0 ? &needs[worst] : NULL);
    printf("nothing was read, computed or written\n");
    fflush(stdout);
    return FS_OK;
}
