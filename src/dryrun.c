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

/* What MPI, HDF5 (with ROMIO's 16 MiB collective buffer) and FFTW take
 * besides the array, measured as the peak of a 1x1x1 run plus ROMIO's buffer. */
#define LIBRARY_BYTES ((int64_t)50 * 1024 * 1024)

static double mib(double bytes)
{
    return bytes / 1048576.0;
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
    int a = t->split[e][g], b = t->split[e + 1][g];
    fs_box blk = *large_from;
    if (b >= 0) {
        int64_t cnt, off;
        fs_split_block(t->shape[b], t->grid[g], 0, &cnt, &off);
        blk.count[b] = cnt;
    }
    (void)a;
    return fs_box_elems(&blk);
}

fs_status fs_dry_run(MPI_Comm comm, const fs_options *opts)
{
    int rank, nranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    fs_input_info info;
    memset(&info, 0, sizeof info);
    fs_status st = FS_OK;
    if (opts->shape_ndim) {
        info.ndim = opts->shape_ndim;
        memcpy(info.shape, opts->shape, sizeof info.shape);
        const char *d = opts->dtype ? opts->dtype : "complex128";
        snprintf(info.type_name, sizeof info.type_name, "%s", d);
        snprintf(info.dataset, sizeof info.dataset, "(--shape)");
        info.dtype = strcmp(d, "float32") == 0   ? FS_DTYPE_FLOAT32
                     : strcmp(d, "float64") == 0 ? FS_DTYPE_FLOAT64
                     : strcmp(d, "complex64") == 0 ? FS_DTYPE_COMPLEX64
                                                   : FS_DTYPE_COMPLEX128;
    } else if (rank == 0) {
        fs_shard_set shards;
        st = fs_input_probe(opts->shards, opts->input_file, opts->input_dataset, &info, &shards);
        fs_shard_set_free(&shards);
    }
    if ((st = fs_error_agree(comm, st)) != FS_OK ||
        (st = fs_bcast_bytes(comm, 0, &info, (int64_t)sizeof info)) != FS_OK)
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
    /* Every rank plans the same way: rank 0 speaks, and prints. */
    if ((st = fs_error_agree(comm, rank == 0 ? st : FS_OK)) != FS_OK || rank != 0)
        return st;

    size_t cb = fs_complex_bytes(t.prec);
    char shape[256];
    fs_format_shape(info.ndim, info.shape, shape, sizeof shape);
    printf("fftshard dry run: %s %s on %d ranks: %s, %s precision, %s\n", shape, info.type_name, P,
           fs_kind_name(t.kind), fs_precision_name(t.prec),
           opts->inverse ? "inverse" : "forward");
    if (t.pencil)
        printf("decomposition: pencil, grid %d x %d (%s)\n", t.grid[0], t.grid[1],
               opts->grid[0] ? "--grid" : opts->decomp == FS_DECOMP_PENCIL ? "--decomp=pencil"
                                                                          : "slabs would leave ranks without data");
    else if (t.fold)
        printf("decomposition: 1-D four-step, %lld x %lld\n", (long long)t.n2, (long long)t.n1);
    else if (!t.exchanges)
        printf("decomposition: slab on axis 0, no exchange\n");
    else if (t.split[1][0] == FS_GATHER)
        printf("decomposition: slab on axis %d, gathered on rank 0 for the last pass\n", t.split[0][0]);
    else
        printf("decomposition: slab, axis %d -> axis %d\n", t.split[0][0], t.split[1][0]);

    int64_t peak_array = 0, peak_scratch = 0;
    fs_box large[FS_MAX_STAGES];
    for (int s = 0; s < t.nstages; s++) {
        fs_box small;
        int empty;
        stage_extent(&t, s, &small, &large[s], &empty);
        char a[128], b[128], split[96] = "";
        box_text(&small, a, sizeof a);
        box_text(&large[s], b, sizeof b);
        for (int g = 0; g < 2; g++) {
            int ax = t.split[s][g];
            size_t u = strlen(split);
            if (ax >= 0)
                snprintf(split + u, sizeof split - u, "%saxis %d over %d", u ? ", " : "", ax, t.grid[g]);
            else if (ax == FS_GATHER)
                snprintf(split + u, sizeof split - u, "%sall on rank 0", u ? ", " : "");
        }
        int64_t n = fs_box_elems(&large[s]);
        printf("stage %d: %s; local blocks %s to %s (up to %" PRId64 " elements, %.1f MiB)\n", s,
               split[0] ? split : "not split", a, b, n, mib((double)n * (double)cb));
        if (empty)
            printf("  %d of %d ranks hold nothing in this stage\n", empty, P);
        peak_array = n > peak_array ? n : peak_array;
    }
    for (int e = 0; e + 1 < t.nstages; e++) {
        int g = fs_transform_exchange_dim(&t, e);
        int64_t blk = largest_block(&t, e, &large[e]);
        printf("exchange %d: among %d ranks (%s), up to %d messages per rank of up to %" PRId64
               " elements (%.2f MiB)\n",
               e + 1, t.grid[g], t.pencil ? (g == 1 ? "a row of the grid" : "a column of the grid")
                                          : "all ranks",
               t.grid[g] - 1, blk, mib((double)blk * (double)cb));
        /* In-place strategies pad to equal slots; the others hold a send
         * buffer as large as the local box, and a receive buffer when the
         * blocks do not land contiguously (pencils). */
        int64_t slots = (int64_t)t.grid[g] * blk;
        if (ops && ops->in_place) {
            peak_array = slots > peak_array ? slots : peak_array;
            int64_t sc = 4 * (int64_t)(opts->packet_bytes ? opts->packet_bytes : FS_DEFAULT_PACKET_BYTES);
            peak_scratch = sc > peak_scratch ? sc : peak_scratch;
        } else {
            int64_t sc = fs_box_elems(&large[e]) * (int64_t)cb * (t.pencil ? 2 : 1);
            peak_scratch = sc > peak_scratch ? sc : peak_scratch;
        }
    }
    int64_t total = peak_array * (int64_t)cb + peak_scratch + LIBRARY_BYTES;
    printf("memory per rank (%s): array %.1f MiB + exchange %.1f MiB + libraries ~%.0f MiB = "
           "about %.1f MiB\n",
           name ? name : "auto: the largest of the strategies", mib((double)peak_array * (double)cb),
           mib((double)peak_scratch), mib((double)LIBRARY_BYTES), mib((double)total));
    if (!ops && t.exchanges) {
        /* auto: the strategies with a second array set the bound */
        printf("  (with alltoall or random add up to %.1f MiB for their send buffer)\n",
               mib((double)peak_array * (double)cb));
    }
    if (opts->mem_per_rank)
        printf("--mem-per-rank %.1f MiB: %s\n", mib((double)opts->mem_per_rank),
               (uint64_t)total <= opts->mem_per_rank ? "fits" : "does NOT fit");
    printf("nothing was read, computed or written\n");
    fflush(stdout);
    return FS_OK;
}
