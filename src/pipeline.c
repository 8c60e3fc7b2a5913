/* pipeline: see pipeline.h. */
#include "config.h"

#include "pipeline.h"

#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "exchange.h"
#include "fft.h"
#include "h5io.h"
#include "layout.h"
#include "report.h"

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
    fs_exchange *x;
    fs_fft_pass *pass_before, *pass_after;
    fftw_complex *data;
    int64_t data_elems;
    char *tmp_path;
    fs_h5_output *out;
    fs_timers timers;
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
             decomp, r->exchanges ? r->opts->transpose : "no exchange");
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

static fs_status stage_output(run *r)
{
    return fs_atomic_begin(r->comm, r->opts->output_file, r->opts->input_file, r->opts->force,
                           &r->tmp_path);
}

static fs_status stage_plan(run *r)
{
    const fs_input_info *in = &r->info;
    int P = r->nranks;
    r->exchanges = P > 1 && r->transform_axis[0];
    r->split_to = !r->exchanges ? 0 : in->ndim == 1 ? -1 : choose_split_axis(in, P);

    r->from_all = calloc((size_t)P, sizeof *r->from_all);
    r->to_all = calloc((size_t)P, sizeof *r->to_all);
    if (!r->from_all || !r->to_all)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    for (int p = 0; p < P; p++) {
        r->from_all[p] = fs_box_split(in->ndim, in->shape, 0, P, p);
        r->to_all[p] = r->exchanges ? fs_box_split(in->ndim, in->shape, r->split_to, P, p)
                                    : r->from_all[p];
    }
    r->from = r->from_all[r->rank];
    r->to = r->to_all[r->rank];

    r->data_elems = fs_box_elems(&r->from);
    if (fs_box_elems(&r->to) > r->data_elems)
        r->data_elems = fs_box_elems(&r->to);
    if (r->exchanges) {
        if (!(r->rd = fs_redist_new(P, r->rank, r->from_all, r->to_all)))
            return fs_error_set(FS_ERR_RUNTIME, "out of memory");
        fs_exchange_params params = {.seed = 0, .packet_bytes = 0, .queues = 0};
        fs_exchange_args args = {
            .comm = r->comm,
            .rd = r->rd,
            .elem_bytes = sizeof(fftw_complex),
            .elem_type = MPI_C_DOUBLE_COMPLEX,
            .params = &params,
        };
        fs_status st = fs_exchange_new(fs_exchange_find(r->opts->transpose), &args, &r->x);
        if (st != FS_OK)
            return st;
        if (r->x->work_elems > r->data_elems)
            r->data_elems = r->x->work_elems;
    }
    r->data = fftw_malloc((size_t)(r->data_elems > 0 ? r->data_elems : 1) * sizeof(fftw_complex));
    if (!r->data)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory: %lld bytes for the local array",
                            (long long)r->data_elems * (long long)sizeof(fftw_complex));

    /* Before the exchange every axis but 0 is whole on each rank; after it
     * axis 0 is whole and gets its own pass. */
    int sign = r->opts->inverse ? FFTW_BACKWARD : FFTW_FORWARD;
    int before[FS_MAX_DIMS], after[FS_MAX_DIMS] = {0};
    memcpy(before, r->transform_axis, sizeof before);
    if (r->exchanges) {
        before[0] = 0;
        after[0] = 1;
    }
    fs_status st = fs_fft_pass_new(&r->from, before, sign, r->data, &r->pass_before);
    if (st == FS_OK && r->exchanges)
        st = fs_fft_pass_new(&r->to, after, sign, r->data, &r->pass_after);
    return st;
}

static fs_status stage_write(run *r)
{
    const fs_options *o = r->opts;
    const fs_input_info *in = &r->info;
    fs_status st = fs_h5_output_write(r->out, &r->to, FS_DTYPE_COMPLEX128, r->data);
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
        {"transpose", r->exchanges ? o->transpose : "none"},
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
    fs_note("memory: rank 0 holds %lld elements (%.1f MiB) plus %.1f MiB of exchange buffers",
            (long long)r->data_elems, r->data_elems * 16.0 / 1048576.0,
            r->x ? r->x->scratch_bytes / 1048576.0 : 0.0);
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

    fs_status st = stage_probe(&r);
    if (st == FS_OK)
        st = stage_output(&r);
    if (st == FS_OK) {
        fs_timer_start(&r.timers, FS_PHASE_PLAN);
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
        st = fs_error_agree(comm, fs_h5_read(comm, opts->input_file, &r.info, &r.from, r.data));
        fs_timer_stop(&r.timers, FS_PHASE_READ);
    }
    if (st == FS_OK) {
        fs_timer_start(&r.timers, FS_PHASE_FFT);
        fs_fft_pass_execute(r.pass_before);
        fs_timer_stop(&r.timers, FS_PHASE_FFT);
        fs_status xs = FS_OK;
        if (r.x) {
            fs_timer_start(&r.timers, FS_PHASE_EXCHANGE);
            xs = fs_exchange_execute(r.x, r.data);
            fs_timer_stop(&r.timers, FS_PHASE_EXCHANGE);
            fs_timer_start(&r.timers, FS_PHASE_FFT);
            if (xs == FS_OK)
                fs_fft_pass_execute(r.pass_after);
            fs_timer_stop(&r.timers, FS_PHASE_FFT);
        }
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
    fs_timer_stop(&r.timers, FS_PHASE_TOTAL);

    if (st == FS_OK && !opts->quiet) {
        char title[512];
        describe(&r, title, sizeof title);
        fs_run_figures fig = {
            .title = title,
            .flops = nominal_flops(&r),
            .bytes_sent = r.x ? r.x->stats.bytes_sent : 0,
            .array_bytes = 0,
        };
        int64_t n = 1;
        for (int k = 0; k < r.info.ndim; k++)
            n *= r.info.shape[k];
        fig.array_bytes = n * (int64_t)sizeof(fftw_complex);
        fs_report_summary(comm, &r.timers, &fig, stderr);
    }

    /* One cleanup path: every rank closes its handles; a failed run leaves
     * no temporary behind. */
    fs_h5_output_close(&r.out);
    if (st != FS_OK && r.tmp_path)
        fs_atomic_abort(r.tmp_path);
    fs_fft_pass_free(&r.pass_before);
    fs_fft_pass_free(&r.pass_after);
    fs_exchange_free(&r.x);
    fs_redist_free(&r.rd);
    fftw_free(r.data);
    free(r.from_all);
    free(r.to_all);
    free(r.tmp_path);
    return st;
}
