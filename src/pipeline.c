/* pipeline: see pipeline.h. */
#include "config.h"

#include "pipeline.h"

#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic.h"
#include "exchange.h"
#include "fft.h"
#include "h5io.h"
#include "layout.h"
#include "prefix.h"
#include "progress.h"
#include "report.h"
#include "wisdom.h"

/* Everything that depends on the exchange strategy: `auto` plans, times and
 * frees one of these per candidate before keeping the fastest. */
typedef struct compute {
    const fs_exchange_ops *ops;   /* NULL: no exchange */
    fs_exchange *x;
    fs_fft_pass *pass_before, *pass_after;
    fs_fft_blockwise *bw_pre, *bw_post;  /* block work handed to the strategy */
    fs_block_hooks hooks;
} compute;

typedef struct run {
    MPI_Comm comm;
    int rank, nranks;
    const fs_options *opts;
    fs_input_info info;
    int transform_axis[FS_MAX_DIMS];
    int split_to;               /* axis split after the exchange; -1: gathered on rank 0 */
    int exchanges;              /* 0 or 1 */
    fs_box *from_all, *to_all;  /* every rank's box before / after the exchange */
    fs_box from, to;            /* this rank's */
    fs_redist *rd;
    fs_exchange_params params;
    compute c;
    const char *strategy;       /* the strategy used ("none" without exchange) */
    const char *auto_note;      /* how auto decided, for --verbose */
    fs_wisdom *wisdom;
    fftw_complex *data;
    int64_t data_elems;
    char *tmp_path;
    char *report_tmp;           /* the report's temporary, made before any work */
    fs_h5_output *out;
    fs_timers timers;
    fs_progress progress;
} run;

/* ------------------------------------------------------------------ helpers */

/* The axis split after the exchange: the first axis past 0 long enough to
 * give every rank a share, else the longest one. */
static int choose_split_axis(const fs_input_info *info, int nranks)
{
    int best = 1;
    for (int k = 1; k < info->ndim; k++) {
        if (info->shape[k] >= nranks)
            return k;
        if (info->shape[k] > info->shape[best])
            best = k;
    }
    return best;
}

static double scale_factor(const run *r)
{
    double n = 1;
    for (int k = 0; k < r->info.ndim; k++)
        if (r->transform_axis[k])
            n *= (double)r->info.shape[k];
    fs_norm scaled_direction = r->opts->inverse ? FS_NORM_BACKWARD : FS_NORM_FORWARD;
    if (r->opts->norm == FS_NORM_ORTHO)
        return 1.0 / sqrt(n);
    return r->opts->norm == scaled_direction ? 1.0 / n : 1.0;
}

/* The conventional count 5 N log2 N of a complex transform of N points,
 * times the number of batch transforms: comparable across FFT libraries. */
static double nominal_flops(const run *r)
{
    double total = 1, transformed = 1;
    for (int k = 0; k < r->info.ndim; k++) {
        total *= (double)r->info.shape[k];
        if (r->transform_axis[k])
            transformed *= (double)r->info.shape[k];
    }
    return transformed > 1 ? 5.0 * total * log2(transformed) : 0.0;
}

static void describe(const run *r, char *buf, size_t size)
{
    char shape[256], axes[64] = "";
    fs_format_shape(r->info.ndim, r->info.shape, shape, sizeof shape);
    size_t used = 0;
    for (int k = 0; k < r->info.ndim; k++)
        if (r->transform_axis[k])
            used += (size_t)snprintf(axes + used, sizeof axes - used, used ? ",%d" : "%d", k);
    char decomp[64];
    if (!r->exchanges)
        snprintf(decomp, sizeof decomp, "slab on axis 0, no exchange");
    else if (r->split_to < 0)
        snprintf(decomp, sizeof decomp, "gathered on rank 0 (1-D)");
    else
        snprintf(decomp, sizeof decomp, "slab, axis 0 -> axis %d", r->split_to);
    snprintf(buf, size, "%s %s, c2c %s axes %s, %d rank%s, %s, %s", shape, r->info.type_name,
             r->opts->inverse ? "inverse" : "forward", axes, r->nranks, r->nranks == 1 ? "" : "s",
             decomp, r->exchanges ? r->strategy : "no exchange");
}

/* ------------------------------------------------------------------ stages */

static fs_status stage_probe(run *r)
{
    fs_status st = FS_OK;
    if (r->rank == 0)
        st = fs_h5_probe(r->opts->input_file, r->opts->input_dataset, &r->info);
    st = fs_error_agree(r->comm, st);
    if (st != FS_OK)
        return st;
    if (MPI_Bcast(&r->info, (int)sizeof r->info, MPI_BYTE, 0, r->comm) != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Bcast failed");
    /* Every rank resolves the same axes the same way: rank 0 speaks. */
    st = fs_options_resolve_axes(r->opts, r->info.ndim, r->transform_axis);
    return fs_error_agree(r->comm, r->rank == 0 ? st : FS_OK);
}

/* The same path, by name (the file may not exist yet). */
static int same_path(const char *a, const char *b)
{
    char *ra = realpath(a, NULL), *rb = realpath(b, NULL);
    int same = ra && rb && strcmp(ra, rb) == 0;
    free(ra);
    free(rb);
    if (same)
        return 1;
    /* Not both existing: compare the directories and the names. */
    char *da = strdup(a), *db = strdup(b);
    const char *na = strrchr(a, '/') ? strrchr(a, '/') + 1 : a;
    const char *nb = strrchr(b, '/') ? strrchr(b, '/') + 1 : b;
    if (da && db) {
        char *sa = strrchr(da, '/'), *sb = strrchr(db, '/');
        if (sa)
            *sa = '\0';
        if (sb)
            *sb = '\0';
        char *rda = realpath(sa ? (da[0] ? da : "/") : ".", NULL);
        char *rdb = realpath(sb ? (db[0] ? db : "/") : ".", NULL);
        same = rda && rdb && strcmp(rda, rdb) == 0 && strcmp(na, nb) == 0;
        free(rda);
        free(rdb);
    }
    free(da);
    free(db);
    return same;
}

static fs_status stage_output(run *r)
{
    const fs_options *o = r->opts;
    if (o->report_file) {
        /* Every rank judges the same names the same way: rank 0 speaks. */
        fs_status st = FS_OK;
        if (same_path(o->report_file, o->output_file) || same_path(o->report_file, o->input_file))
            st = fs_error_set(FS_ERR_USAGE, "--report=%s: is the %s file", o->report_file,
                              same_path(o->report_file, o->output_file) ? "output" : "input");
        if ((st = fs_error_agree(r->comm, r->rank == 0 ? st : FS_OK)) != FS_OK)
            return st;
    }
    fs_status st = fs_atomic_begin(r->comm, o->output_file, o->input_file, o->force, &r->tmp_path);
    /* A report is a log: it replaces an earlier one without --force. Its
     * temporary exists from now on, so an unwritable report path fails the
     * run before any work. */
    if (st == FS_OK && o->report_file)
        st = fs_atomic_begin(r->comm, o->report_file, o->input_file, 1, &r->report_tmp);
    return st;
}

/* The block hooks of an overlapping strategy: FFTs of the axes that are
 * whole both before and after the exchange, on one block at a time. */
static void hook_pre(void *ctx, const fs_box *block, void *data)
{
    compute *c = ctx;
    fs_fft_blockwise_execute(c->bw_pre, block, data);
}

static void hook_post(void *ctx, const fs_box *block, void *data)
{
    compute *c = ctx;
    fs_fft_blockwise_execute(c->bw_post, block, data);
}

static void compute_free(compute *c)
{
    fs_fft_pass_free(&c->pass_before);
    fs_fft_pass_free(&c->pass_after);
    fs_fft_blockwise_free(&c->bw_pre);
    fs_fft_blockwise_free(&c->bw_post);
    fs_exchange_free(&c->x);
    memset(c, 0, sizeof *c);
}

/* Make sure the data buffer holds n elements (its contents may be lost). */
static fs_status reserve(run *r, int64_t n)
{
    if (n <= r->data_elems && r->data)
        return FS_OK;
    fftw_free(r->data);
    r->data_elems = n > 0 ? n : 1;
    r->data = fftw_malloc((size_t)r->data_elems * sizeof(fftw_complex));
    if (!r->data)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory: %lld bytes for the local array",
                            (long long)r->data_elems * (long long)sizeof(fftw_complex));
    return FS_OK;
}

/* Plan the FFT passes and the exchange with strategy ops (NULL: no
 * exchange) into c, growing the data buffer as the strategy needs. */
static fs_status compute_plan(run *r, const fs_exchange_ops *ops, compute *c)
{
    memset(c, 0, sizeof *c);
    c->ops = ops;
    int sign = r->opts->inverse ? FFTW_BACKWARD : FFTW_FORWARD;
    /* Before the exchange every axis but 0 is whole on each rank; after it
     * axis 0 is whole and gets its own pass. An overlapping strategy takes
     * the axes whole on both sides (all but 0 and the split axis) and runs
     * them block by block while its messages fly: the first ones before a
     * block is sent, the last one after a block arrived. */
    int before[FS_MAX_DIMS], after[FS_MAX_DIMS] = {0}, pre[FS_MAX_DIMS] = {0},
        post[FS_MAX_DIMS] = {0};
    memcpy(before, r->transform_axis, sizeof before);
    if (ops) {
        before[0] = 0;
        after[0] = r->transform_axis[0];
    }
    if (ops && ops->uses_hooks) {
        int last_free = -1;
        for (int k = 1; k < r->info.ndim; k++) {
            if (k == r->split_to || !r->transform_axis[k])
                continue;
            before[k] = 0;
            pre[k] = 1;
            last_free = k;
        }
        if (last_free >= 0) {
            pre[last_free] = 0;
            post[last_free] = 1;
        }
    }
    int64_t need = fs_box_elems(&r->from) > fs_box_elems(&r->to) ? fs_box_elems(&r->from)
                                                                : fs_box_elems(&r->to);
    fs_status st = FS_OK;
    if (ops) {
        if (ops->uses_hooks) {
            st = fs_fft_blockwise_new(pre, sign, &c->bw_pre);
            if (st == FS_OK)
                st = fs_fft_blockwise_new(post, sign, &c->bw_post);
            c->hooks = (fs_block_hooks){hook_pre, hook_post, c, 0};
        }
        fs_exchange_args args = {
            .comm = r->comm,
            .rd = r->rd,
            .elem_bytes = sizeof(fftw_complex),
            .elem_type = MPI_C_DOUBLE_COMPLEX,
            .params = &r->params,
            .hooks = ops->uses_hooks ? &c->hooks : NULL,
        };
        if (st == FS_OK)
            st = fs_exchange_new(ops, &args, &c->x);
        if (st == FS_OK && c->x->work_elems > need)
            need = c->x->work_elems;
    }
    if (st == FS_OK)
        st = reserve(r, need);
    if (st == FS_OK)
        st = fs_fft_pass_new(&r->from, before, sign, r->data, &c->pass_before);
    if (st == FS_OK && ops)
        st = fs_fft_pass_new(&r->to, after, sign, r->data, &c->pass_after);
    if (st != FS_OK)
        compute_free(c);
    return st;
}

/* The transform itself, on the data buffer: from the `from` layout after the
 * read to the `to` layout before the write. */
static fs_status compute_run(run *r, compute *c)
{
    fs_timer_start(&r->timers, FS_PHASE_FFT);
    fs_progress_begin(&r->progress, "fft", fs_fft_pass_flops(c->pass_before), "flop");
    fs_fft_pass_execute(c->pass_before);
    fs_progress_end(&r->progress);
    fs_timer_stop(&r->timers, FS_PHASE_FFT);
    fs_status st = FS_OK;
    if (c->x) {
        fs_timer_start(&r->timers, FS_PHASE_EXCHANGE);
        fs_progress_begin(&r->progress, "exchange",
                          (double)(r->rd->send_total - r->rd->send_elems[r->rank]) * 16.0, "B");
        double hooks_before = c->x->stats.t_hooks_s;
        st = fs_exchange_execute(c->x, r->data);
        fs_progress_end(&r->progress);
        fs_timer_stop(&r->timers, FS_PHASE_EXCHANGE);
        /* Block FFTs run inside the exchange count as fft time. */
        double hooks = c->x->stats.t_hooks_s - hooks_before;
        r->timers.t_s[FS_PHASE_EXCHANGE] -= hooks;
        r->timers.t_s[FS_PHASE_FFT] += hooks;
        if ((c->bw_pre && fs_fft_blockwise_failed(c->bw_pre)) ||
            (c->bw_post && fs_fft_blockwise_failed(c->bw_post)))
            st = fs_error_set(FS_ERR_RUNTIME, "FFTW could not plan a block transform");
        fs_timer_start(&r->timers, FS_PHASE_FFT);
        fs_progress_begin(&r->progress, "fft", fs_fft_pass_flops(c->pass_after), "flop");
        if (st == FS_OK)
            fs_fft_pass_execute(c->pass_after);
        fs_progress_end(&r->progress);
        fs_timer_stop(&r->timers, FS_PHASE_FFT);
    }
    return st;
}

/* The key under which `auto` remembers its choice in the wisdom file. */
static void auto_key(const run *r, char *key, size_t size)
{
    char shape[256], axes[64] = "";
    fs_format_shape(r->info.ndim, r->info.shape, shape, sizeof shape);
    size_t used = 0;
    for (int k = 0; k < r->info.ndim; k++)
        if (r->transform_axis[k])
            used += (size_t)snprintf(axes + used, sizeof axes - used, used ? ",%d" : "%d", k);
    snprintf(key, size, "c2c/complex128/%s/axes=%s/ranks=%d/slab:0->%d/packet=%zu/queues=%d",
             shape, axes, r->nranks, r->split_to, r->params.packet_bytes, r->params.queues);
}

/* --transpose=auto: run the transform once with each strategy on the real
 * sizes (on a zeroed buffer, before the input is read), and keep the
 * strategy whose slowest rank was fastest. The wisdom file remembers it. */
static fs_status choose_strategy(run *r, const fs_exchange_ops **chosen)
{
    char key[512];
    auto_key(r, key, sizeof key);
    const char *known = fs_wisdom_lookup(r->wisdom, key);
    if (known && fs_exchange_find(known)) {
        *chosen = fs_exchange_find(known);
        r->auto_note = "auto: taken from the wisdom file";
        return FS_OK;
    }
    double best = 0;
    *chosen = NULL;
    fs_timers saved = r->timers;
    fs_progress quiet = r->progress;
    r->progress.enabled = 0;
    for (int i = 0; fs_exchange_strategies[i]; i++) {
        compute c;
        fs_status st = fs_error_agree(r->comm, compute_plan(r, fs_exchange_strategies[i], &c));
        if (st != FS_OK)
            return st;
        memset(r->data, 0, (size_t)r->data_elems * sizeof(fftw_complex));
        MPI_Barrier(r->comm);
        double t0 = MPI_Wtime();
        st = compute_run(r, &c);
        double t = MPI_Wtime() - t0, slowest = t;
        compute_free(&c);
        if ((st = fs_error_agree(r->comm, st)) != FS_OK)
            return st;
        MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, r->comm);
        if (r->opts->verbose && r->rank == 0)
            fs_note("auto: %s takes %.4f s", fs_exchange_strategies[i]->name, slowest);
        if (!*chosen || slowest < best) {
            best = slowest;
            *chosen = fs_exchange_strategies[i];
        }
    }
    /* The trial is planning, not the run's fft and exchange time. */
    r->timers = saved;
    r->progress = quiet;
    r->auto_note = "auto: timed every strategy on these sizes";
    return fs_wisdom_set(r->wisdom, key, (*chosen)->name, best);
}

static fs_status stage_plan(run *r)
{
    const fs_input_info *in = &r->info;
    int P = r->nranks;
    r->exchanges = P > 1 && r->transform_axis[0];
    r->split_to = !r->exchanges ? 0 : in->ndim == 1 ? -1 : choose_split_axis(in, P);
    r->params = (fs_exchange_params){
        .seed = r->opts->seed,
        .packet_bytes = r->opts->packet_bytes,
        .queues = r->opts->queues,
    };

    r->from_all = calloc((size_t)P, sizeof *r->from_all);
    r->to_all = calloc((size_t)P, sizeof *r->to_all);
    int64_t *prefix = malloc((size_t)P * 2 * sizeof *prefix);
    if (!r->from_all || !r->to_all || !prefix) {
        free(prefix);
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    /* Each rank knows its own share along the split axes; one parallel prefix
     * broadcast of the shares gives every rank every rank's start: the
     * hyperslab offsets for the read, the exchange and the write. */
    int to_axis = r->split_to >= 0 ? r->split_to : 0;
    int64_t share[2], ignored;
    fs_split_block(in->shape[0], P, r->rank, &share[0], &ignored);
    if (r->split_to >= 0)
        fs_split_block(in->shape[to_axis], P, r->rank, &share[1], &ignored);
    else
        share[1] = r->rank == 0 ? in->shape[0] : 0; /* gathered on rank 0 */
    fs_status st = fs_prefix_broadcast_int64(r->comm, share, 2, FS_PREFIX_SUM, prefix);
    if (st != FS_OK) {
        free(prefix);
        return st;
    }
    for (int p = 0; p < P; p++) {
        fs_box *from = &r->from_all[p], *to = &r->to_all[p];
        *from = fs_box_full(in->ndim, in->shape);
        from->start[0] = fs_prefix_exclusive(prefix, 2, p, 0);
        from->count[0] = prefix[2 * p] - from->start[0];
        *to = fs_box_full(in->ndim, in->shape);
        to->start[to_axis] = fs_prefix_exclusive(prefix, 2, p, 1);
        to->count[to_axis] = prefix[2 * p + 1] - to->start[to_axis];
        if (!r->exchanges)
            *to = *from;
    }
    free(prefix);
    r->from = r->from_all[r->rank];
    r->to = r->to_all[r->rank];

    const fs_exchange_ops *ops = NULL;
    r->strategy = "none";
    if (r->exchanges) {
        if (!(r->rd = fs_redist_new(P, r->rank, r->from_all, r->to_all)))
            return fs_error_set(FS_ERR_RUNTIME, "out of memory");
        if (strcmp(r->opts->transpose, "auto") == 0) {
            if ((st = choose_strategy(r, &ops)) != FS_OK)
                return st;
        } else {
            ops = fs_exchange_find(r->opts->transpose);
        }
        r->strategy = ops->name;
    }
    return compute_plan(r, ops, &r->c);
}

static fs_status stage_write(run *r)
{
    const fs_options *o = r->opts;
    const fs_input_info *in = &r->info;
    fs_progress_begin(&r->progress, "write", (double)fs_box_elems(&r->to) * 16.0, "B");
    fs_status st = fs_h5_output_write(r->out, &r->to, FS_DTYPE_COMPLEX128, r->data,
                                      fs_progress_callback, &r->progress);
    if (st != FS_OK)
        return st;

    /* Attributes: collective, identical on every rank. */
    char input[2 * FS_PATH_MAX + 2];
    snprintf(input, sizeof input, "%s:%s", o->input_file, in->dataset);
    int64_t axes[FS_MAX_DIMS], ranks = r->nranks, last_size = 0;
    int naxes = 0;
    for (int k = 0; k < in->ndim; k++)
        if (r->transform_axis[k]) {
            axes[naxes++] = k;
            last_size = in->shape[k];
        }
    struct { const char *name, *value; } strings[] = {
        {"fftshard_version", PACKAGE_VERSION},
        {"transform", "c2c"},
        {"direction", o->inverse ? "inverse" : "forward"},
        {"norm", fs_norm_name(o->norm)},
        {"input", input},
        {"transpose", r->strategy},
    };
    for (size_t i = 0; i < sizeof strings / sizeof strings[0] && st == FS_OK; i++)
        st = fs_h5_output_attr_string(r->out, strings[i].name, strings[i].value);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(r->out, "axes", naxes, axes);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(r->out, "input_shape", in->ndim, in->shape);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(r->out, "last_size", -1, &last_size);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(r->out, "ranks", -1, &ranks);
    fs_status closed = fs_h5_output_close(&r->out);
    fs_progress_end(&r->progress);
    return st != FS_OK ? st : closed;
}

static void verbose_plan(const run *r)
{
    if (!r->opts->verbose || r->rank != 0)
        return;
    char title[512];
    describe(r, title, sizeof title);
    fs_note("plan: %s", title);
    if (r->info.dtype == FS_DTYPE_INTEGER)
        fs_note("input: %s integers converted to float64", r->info.type_name);
    else if (r->info.dtype != FS_DTYPE_COMPLEX128)
        fs_note("input: %s computed and written in double precision (complex128)",
                r->info.type_name);
    fs_note("output: %s:%s via temporary %s", r->opts->output_file,
            r->opts->output_dataset ? r->opts->output_dataset : r->info.dataset, r->tmp_path);
    if (r->auto_note)
        fs_note("%s: %s", r->auto_note, r->strategy);
    fs_note("memory: rank 0 holds %lld elements (%.1f MiB) plus %.1f MiB of exchange buffers",
            (long long)r->data_elems, r->data_elems * 16.0 / 1048576.0,
            r->c.x ? r->c.x->scratch_bytes / 1048576.0 : 0.0);
}

/* The summary on stderr and the JSON report, from every rank's figures. */
static fs_status finish_report(run *r)
{
    const fs_options *o = r->opts;
    char title[512], input[2 * FS_PATH_MAX + 2], output[2 * FS_PATH_MAX + 2];
    describe(r, title, sizeof title);
    snprintf(input, sizeof input, "%s:%s", o->input_file, r->info.dataset);
    snprintf(output, sizeof output, "%s:%s", o->output_file,
             o->output_dataset ? o->output_dataset : r->info.dataset);
    int64_t n = 1;
    for (int k = 0; k < r->info.ndim; k++)
        n *= r->info.shape[k];
    fs_report_info info = {
        .command_line = o->argv_joined,
        .input = input,
        .output = output,
        .dtype = r->info.type_name,
        .precision = "double",
        .transform = "c2c",
        .direction = o->inverse ? "inverse" : "forward",
        .norm = fs_norm_name(o->norm),
        .ndim = r->info.ndim,
        .shape = r->info.shape,
        .transform_axis = r->transform_axis,
        .decomposition = "slab",
        .split_from = 0,
        .split_to = r->exchanges ? r->split_to : 0,
        .strategy = r->strategy,
        .strategy_requested = o->transpose,
        .seed = r->params.seed,
        .packet_bytes = r->params.packet_bytes,
        .queues = r->params.queues,
        .title = title,
        .flops = nominal_flops(r),
        .array_bytes = n * (int64_t)sizeof(fftw_complex),
    };
    fs_rank_record rec;
    memset(&rec, 0, sizeof rec);
    rec.in = r->from;
    rec.out = r->to;
    memcpy(rec.t_s, r->timers.t_s, sizeof rec.t_s);
    if (r->c.x) {
        const fs_exchange_stats *xs = &r->c.x->stats;
        rec.bytes_sent = (int64_t)xs->bytes_sent;
        rec.bytes_received = (int64_t)xs->bytes_received;
        rec.messages_sent = (int64_t)xs->messages_sent;
        rec.wire_bytes_sent = (int64_t)xs->wire_bytes_sent;
        rec.t_pack_s = xs->t_pack_s;
        rec.t_comm_s = xs->t_comm_s;
        rec.t_unpack_s = xs->t_unpack_s;
        rec.t_hooks_s = xs->t_hooks_s;
        rec.t_hooks_overlapped_s = xs->t_hooks_overlapped_s;
    }
    rec.peak_memory_bytes = fs_peak_memory_bytes();
    return fs_report_finish(r->comm, &info, &rec, o->quiet ? NULL : stderr, o->report_file,
                            r->report_tmp);
}

/* ------------------------------------------------------------------ run */

fs_status fs_pipeline_run(MPI_Comm comm, const fs_options *opts)
{
    run r;
    memset(&r, 0, sizeof r);
    r.comm = comm;
    r.opts = opts;
    MPI_Comm_rank(comm, &r.rank);
    MPI_Comm_size(comm, &r.nranks);
    fs_timer_start(&r.timers, FS_PHASE_TOTAL);
    fs_progress_init(&r.progress, r.rank == 0 && !opts->quiet && (opts->progress || isatty(2)),
                     opts->progress);

    fs_status st = stage_probe(&r);
    if (st == FS_OK)
        st = stage_output(&r);
    if (st == FS_OK) {
        fs_timer_start(&r.timers, FS_PHASE_PLAN);
        st = fs_wisdom_load(comm, opts->wisdom_file, &r.wisdom);
        if (st == FS_OK)
            st = fs_error_agree(comm, stage_plan(&r));
        fs_timer_stop(&r.timers, FS_PHASE_PLAN);
    }
    if (st == FS_OK) {
        verbose_plan(&r);
        fs_timer_start(&r.timers, FS_PHASE_WRITE);
        const char *dataset = opts->output_dataset ? opts->output_dataset : r.info.dataset;
        st = fs_error_agree(comm, fs_h5_output_new(comm, r.tmp_path, dataset, r.info.ndim,
                                                   r.info.shape, FS_DTYPE_COMPLEX128, &r.out));
        fs_timer_stop(&r.timers, FS_PHASE_WRITE);
    }
    if (st == FS_OK) {
        fs_timer_start(&r.timers, FS_PHASE_READ);
        fs_progress_begin(&r.progress, "read", (double)fs_box_elems(&r.from) * 16.0, "B");
        st = fs_error_agree(comm, fs_h5_read(comm, opts->input_file, &r.info, &r.from, r.data,
                                             fs_progress_callback, &r.progress));
        fs_progress_end(&r.progress);
        fs_timer_stop(&r.timers, FS_PHASE_READ);
    }
    if (st == FS_OK) {
        fs_status xs = compute_run(&r, &r.c);
        double factor = scale_factor(&r);
        if (factor != 1.0)
            fs_fft_scale(r.data, fs_box_elems(&r.to), factor);
        st = fs_error_agree(comm, xs);
    }
    if (st == FS_OK) {
        fs_timer_start(&r.timers, FS_PHASE_WRITE);
        st = fs_error_agree(comm, stage_write(&r));
        fs_timer_stop(&r.timers, FS_PHASE_WRITE);
    }
    if (st == FS_OK) {
        fs_status cs = FS_OK;
        if (r.rank == 0)
            cs = fs_atomic_commit(r.tmp_path, opts->output_file);
        st = fs_error_agree(comm, cs);
    }
    /* The result is in place: a wisdom file that cannot be written costs
     * the next run its head start, not this run its result. */
    if (st == FS_OK && fs_wisdom_save(comm, r.wisdom) != FS_OK) {
        if (r.rank == 0)
            fprintf(stderr, "fftshard: warning: %s (the result was written)\n", fs_error_message());
        fs_error_clear();
    }
    fs_timer_stop(&r.timers, FS_PHASE_TOTAL);

    if (st == FS_OK)
        st = finish_report(&r);

    /* One cleanup path: every rank closes its handles; a failed run leaves
     * no temporary behind. */
    fs_h5_output_close(&r.out);
    if (st != FS_OK && r.tmp_path)
        fs_atomic_abort(r.tmp_path);
    if (r.report_tmp)
        fs_atomic_abort(r.report_tmp); /* gone already when the report was written */
    compute_free(&r.c);
    fs_redist_free(&r.rd);
    fs_wisdom_free(&r.wisdom);
    fftw_free(r.data);
    free(r.from_all);
    free(r.to_all);
    free(r.tmp_path);
    free(r.report_tmp);
    return st;
}
