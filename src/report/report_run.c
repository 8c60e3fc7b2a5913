/* SPDX-License-Identifier: GPL-3.0-or-later */
/* report_run: see report_run.h. */
#include "config.h"

#include "report/report_run.h"
#include "core/collective.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compute/fft.h"

/* How the blocks (out of core) or the ranks hold the array of t. */
static void decomposition_text(const fs_transform *t, char *decomp, size_t size)
{
    if (t->pencil)
        snprintf(decomp, size, "pencil %dx%d", t->grid[0], t->grid[1]);
    else if (t->fold)
        snprintf(decomp, size, "1-D four-step %lldx%lld", (long long)t->n2, (long long)t->n1);
    else if (!t->exchanges)
        snprintf(decomp, size, "slab on axis %d", t->from_axis);
    else if (t->to_axis < 0)
        snprintf(decomp, size, "gathered on rank 0 (1-D)");
    else
        snprintf(decomp, size, "slab, axis %d -> axis %d", t->from_axis, t->to_axis);
}

/* The summary's first line: shape, type, kind, axes, ranks, decomposition
 * (out of core: the passes and the blocks' decomposition). */
static void describe_run(const fs_run_view *v, char *buf, size_t size)
{
    const fs_transform *t = v->t;
    char shape[256], axes[64] = "";
    fs_format_shape(v->info->ndim, v->info->shape, shape, sizeof shape);
    size_t used = 0;
    for (int k = 0; k < v->info->ndim; k++)
        if (t->transform_axis[k])
            used += (size_t)snprintf(axes + used, sizeof axes - used, used ? ",%d" : "%d", k);
    char decomp[96];
    if (v->ooc) {
        snprintf(decomp, sizeof decomp, "out of core: %d pass%s over %d blocks",
                 v->ooc->npasses, v->ooc->npasses == 1 ? "" : "es", v->ooc->blocks);
    } else {
        decomposition_text(t, decomp, sizeof decomp);
    }
    char sliced[FS_SLICE_TEXT + 300] = ""; /* the slice, and the dataset's own shape */
    if (v->info->slice.given) {
        int64_t whole[FS_LAYOUT_MAX_DIMS];
        char of[256];
        fs_format_shape(fs_input_file_shape(v->info, whole), whole, of, sizeof of);
        snprintf(sliced, sizeof sliced, " (slice %s of %s)", v->info->slice.text, of);
    }
    snprintf(buf, size, "%s %s%s, %s %s %s axes %s, %d rank%s, %s, %s", shape, v->info->type_name,
             sliced, fs_kind_name(t->kind), fs_precision_name(t->prec),
             v->asked->inverse ? "inverse" : "forward", axes, v->nranks, v->nranks == 1 ? "" : "s",
             decomp, t->exchanges && !v->ooc ? v->strategy : "no exchange");
}

/* The values a map moves: its box, less a folded view's positions from
 * its limit on (the half spectrum of a 1-D real transform). */
static int64_t map_elems(const fs_io_map *m)
{
    const fs_box *b = &m->file_box;
    if (m->fold_inner <= 0 || m->fold_limit <= 0)
        return fs_box_elems(b);
    int64_t n = 0;
    for (int64_t r = b->start[0]; r < b->start[0] + b->count[0]; r++) {
        int64_t left = m->fold_limit - (r * m->fold_inner + b->start[1]);
        n += left <= 0 ? 0 : left < b->count[1] ? left : b->count[1];
    }
    return n;
}

/* "6x10x6 at [0,0,0]" */
static void format_box(const fs_box *b, char *buf, size_t size)
{
    char at[192] = "";
    size_t used = 0;
    fs_format_shape(b->ndim, b->count, buf, size);
    for (int k = 0; k < b->ndim && used < sizeof at; k++)
        used += (size_t)snprintf(at + used, sizeof at - used, k ? ",%lld" : "%lld",
                                 (long long)b->start[k]);
    size_t n = strlen(buf);
    snprintf(buf + n, size - n, " at [%s]", at);
}

/* Rank 0's hyperslabs, in the values of the files. */
static void verbose_hyperslabs(const fs_run_view *v)
{
    const fs_transform *t = v->t;
    fs_io_map rm = fs_transform_read_map(t, v->first);
    fs_io_map wm = fs_transform_write_map(t, v->last);
    char in[256], out[256];
    format_box(&rm.file_box, in, sizeof in);
    format_box(&wm.file_box, out, sizeof out);
    fs_note("rank 0 reads %s (%lld %s values)%s and writes %s (%lld %s values)", in,
            (long long)map_elems(&rm), v->info->type_name,
            t->fold ? " of the 1-D input seen as 2-D" : "", out, (long long)map_elems(&wm),
            fs_dtype_name(t->out_type));
}

void fs_report_verbose_plan(const fs_run_view *v)
{
    const fs_transform *t = v->t;
    const fs_run_asked *o = v->asked;
    char title[512];
    describe_run(v, title, sizeof title);
    fs_note("plan: %s", title);
    if (v->info->dtype == FS_DTYPE_INTEGER)
        fs_note("input: %s integers converted to %s", v->info->type_name,
                fs_dtype_name(fs_real_dtype(t->prec)));
    fs_note("precision: %s (%s); output %s", fs_precision_name(t->prec),
            o->precision_given ? "--precision" : "from the input type",
            fs_dtype_name(t->out_type));
    if (t->kind != FS_C2C)
        fs_note("real axis %d of length %lld (%lld complex values), %s", t->real_axis,
                (long long)t->real_len, (long long)t->half_len,
                t->padded ? "FFTW's padded real layout" : "computed as a complex transform");
    fs_note("output: %s:%s via temporary %s", o->output_file, v->written, v->tmp_path);
    if (v->strategy_note && strcmp(v->strategy_note, "default") == 0)
        fs_note("strategy: %s (default: %s)", v->strategy, v->strategy_reason);
    else if (v->strategy_note)
        fs_note("%s: %s", v->strategy_note, v->strategy);
    if (v->params->crowded)
        fs_note("waits: more ranks than cores on a node, so a rank waiting for messages gives its core "
                "up between polls");
    verbose_hyperslabs(v);
    fs_note("memory: rank 0 holds %lld complex elements (%.1f MiB) plus %.1f MiB of exchange buffers",
            (long long)v->data_elems,
            (double)v->data_elems * (double)fs_complex_bytes(t->prec) / 1048576.0,
            (double)fs_compute_scratch_bytes(v->c) / 1048576.0);
}

/* This rank's figures. The hyperslabs are those of the files, in the units
 * of the values read and written (n reals, or n/2+1 complex values, along
 * the real axis), not those of the complex array computed in between. */
static void rank_record(const fs_run_view *v, fs_rank_record *rec)
{
    memset(rec, 0, sizeof *rec);
    fs_io_map rm = fs_transform_read_map(v->t, v->first);
    fs_io_map wm = fs_transform_write_map(v->t, v->last);
    rec->in = rm.file_box;
    rec->out = wm.file_box;
    rec->in_elems = map_elems(&rm);
    rec->out_elems = map_elems(&wm);
    memcpy(rec->t_s, v->timers->t_s, sizeof rec->t_s);
    rec->io = v->timers->io;
    if (fs_compute_exchanges(v->c)) {
        fs_exchange_stats xs = fs_compute_exchange_totals(v->c), zero;
        memset(&zero, 0, sizeof zero);
        const fs_exchange_stats *b = v->exchange_before ? v->exchange_before : &zero;
        rec->bytes_sent = (int64_t)(xs.bytes_sent - b->bytes_sent);
        rec->bytes_received = (int64_t)(xs.bytes_received - b->bytes_received);
        rec->messages_sent = (int64_t)(xs.messages_sent - b->messages_sent);
        rec->wire_bytes_sent = (int64_t)(xs.wire_bytes_sent - b->wire_bytes_sent);
        rec->t_pack_s = xs.t_pack_s - b->t_pack_s;
        rec->t_comm_s = xs.t_comm_s - b->t_comm_s;
        rec->t_unpack_s = xs.t_unpack_s - b->t_unpack_s;
        rec->t_hooks_s = xs.t_hooks_s - b->t_hooks_s;
        rec->t_hooks_overlapped_s = xs.t_hooks_overlapped_s - b->t_hooks_overlapped_s;
        rec->exchanges = (int64_t)(xs.runs - b->runs);
    }
    if (v->ooc && v->passes)
        rec->passes = *v->passes;
    rec->peak_memory_bytes = fs_peak_memory_bytes();
    fs_fft_plan_counts(&rec->fftw_plans, &rec->fftw_plans_from_wisdom);
    if (v->plans_before) {
        rec->fftw_plans -= v->plans_before[0];
        rec->fftw_plans_from_wisdom -= v->plans_before[1];
    }
}

/* The strings a report's description points to. */
typedef struct info_text {
    char title[512], input[FS_INPUT_NAME_MAX], output[2 * FS_PATH_MAX + 2];
} info_text;

/* A dataset's description for the report (pointing into v and text). */
static void describe(const fs_run_view *v, info_text *text, fs_report_info *info)
{
    const fs_run_asked *o = v->asked;
    const fs_transform *t = v->t;
    /* out of core, the decomposition is the blocks' */
    const fs_transform *d = v->ooc ? &v->ooc->vt : t;
    describe_run(v, text->title, sizeof text->title);
    fs_input_name(v->input_file, v->info, text->input, sizeof text->input);
    snprintf(text->output, sizeof text->output, "%s:%s", o->output_file, v->written);
    int64_t n = 1;
    for (int k = 0; k < t->ndim; k++)
        n *= t->shape[k];
    *info = (fs_report_info){
        .command_line = o->command_line,
        .input = text->input,
        .output = text->output,
        .dtype = v->info->type_name,
        .precision = fs_precision_name(t->prec),
        .transform = fs_kind_name(t->kind),
        .direction = o->inverse ? "inverse" : "forward",
        .norm = fs_norm_name(t->norm),
        .ndim = v->info->ndim,
        .shape = v->info->shape,
        .naxes = t->naxes,
        .axes = t->axes,
        .decomposition = d->pencil ? "pencil" : d->fold ? "four-step" : "slab",
        .split_from = d->split[0][0],
        .split_to = d->split[d->nstages - 1][0] == FS_GATHER ? -1 : d->split[d->nstages - 1][0],
        .grid = {d->grid[0], d->grid[1]},
        .nstages = d->nstages,
        .strategy = v->strategy,
        .strategy_requested = o->strategy,
        .strategy_reason = v->strategy_reason,
        .seed = v->params->seed,
        .packet_bytes = v->params->packet_bytes,
        .queues = v->params->queues,
        .crowded = v->params->crowded,
        .title = text->title,
        .flops = t->nominal_flops,
        .array_bytes = n * (int64_t)fs_complex_bytes(t->prec),
        .check = v->check && v->check->done ? v->check : NULL,
        .operation = o->operation,
        .operation_in_pass = v->c && fs_compute_operates_in_pass(v->c),
        .ooc = v->ooc,
        .scratch_dir = v->scratch_dir,
    };
    memcpy(info->split, d->split, sizeof info->split);
}

/* The stages' parts of the report and of the summary. */
static void with_extras(const fs_run_asked *a, fs_report_info *info)
{
    info->nextras = a->nextras;
    info->extras = a->extras;
    info->extra_lines = a->extra_lines;
}

fs_status fs_report_run(MPI_Comm comm, const fs_run_view *v, const char *report_tmp, char **summary)
{
    info_text text;
    fs_report_info info;
    describe(v, &text, &info);
    fs_rank_record rec;
    rank_record(v, &rec);
    with_extras(v->asked, &info);
    return fs_report_finish(comm, &info, &rec, v->asked->quiet ? NULL : summary,
                            v->asked->report_file, report_tmp);
}

/* The run's figures from its datasets': sums and the largest peak (the
 * phase times are the run's own). */
static void add_record(fs_rank_record *total, const fs_rank_record *r)
{
    total->in_elems += r->in_elems;
    total->out_elems += r->out_elems;
    total->bytes_sent += r->bytes_sent;
    total->bytes_received += r->bytes_received;
    total->messages_sent += r->messages_sent;
    total->exchanges += r->exchanges;
    total->wire_bytes_sent += r->wire_bytes_sent;
    total->t_pack_s += r->t_pack_s;
    total->t_comm_s += r->t_comm_s;
    total->t_unpack_s += r->t_unpack_s;
    total->t_hooks_s += r->t_hooks_s;
    total->t_hooks_overlapped_s += r->t_hooks_overlapped_s;
    total->io.read_s += r->io.read_s;
    total->io.read_hidden_s += r->io.read_hidden_s;
    total->io.write_s += r->io.write_s;
    total->io.write_hidden_s += r->io.write_hidden_s;
    total->fftw_plans += r->fftw_plans;
    total->fftw_plans_from_wisdom += r->fftw_plans_from_wisdom;
    if (r->peak_memory_bytes > total->peak_memory_bytes)
        total->peak_memory_bytes = r->peak_memory_bytes;
}

/* --check of several datasets: passed when every one passed, with the
 * largest errors. */
static void add_check(fs_check_result *all, const fs_check_result *c)
{
    if (!c || !c->done)
        return;
    if (!all->done)
        *all = *c;
    all->passed = all->passed && c->passed;
    all->roundtrip_error = c->roundtrip_error > all->roundtrip_error ? c->roundtrip_error
                                                                     : all->roundtrip_error;
    all->parseval_error = c->parseval_error > all->parseval_error ? c->parseval_error
                                                                  : all->parseval_error;
}

struct fs_report_sections {
    int n, added;
    char **inputs, **json, **lines;   /* rank 0: each dataset's (malloc'ed) */
    fs_rank_record total;             /* this rank's sums over the datasets */
    fs_check_result check;
    double flops;
    int64_t array_bytes;              /* the largest dataset's */
};

fs_status fs_report_sections_new(int n, fs_report_sections **out)
{
    fs_report_sections *s = calloc(1, sizeof *s);
    char **strings = calloc((size_t)n * 3, sizeof *strings);
    if (!s || !strings) {
        free(s);
        free(strings);
        *out = NULL;
        return fs_error_set(FS_ERR_RUNTIME, "out of memory for the report");
    }
    s->n = n;
    s->inputs = strings;
    s->json = strings + n;
    s->lines = strings + 2 * n;
    *out = s;
    return FS_OK;
}

void fs_report_sections_free(fs_report_sections **s)
{
    if (!*s)
        return;
    for (int i = 0; i < 3 * (*s)->n; i++)
        free((*s)->inputs[i]);
    free((*s)->inputs);
    free(*s);
    *s = NULL;
}

fs_status fs_report_add_section(MPI_Comm comm, const fs_run_view *v, fs_report_sections *s)
{
    info_text text;
    fs_report_info info;
    describe(v, &text, &info);
    fs_rank_record rec;
    rank_record(v, &rec);
    int i = s->added;
    fs_status st = FS_OK;
    if (i >= s->n || !(s->inputs[i] = strdup(text.input)))
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory for the report");
    st = fs_error_agree(comm, st);
    if (st == FS_OK)
        st = fs_report_section(comm, &info, &rec, &s->json[i], v->asked->quiet ? NULL : &s->lines[i]);
    if (st != FS_OK)
        return st;
    s->added++;
    add_record(&s->total, &rec);
    add_check(&s->check, v->check);
    s->flops += info.flops;
    s->array_bytes = info.array_bytes > s->array_bytes ? info.array_bytes : s->array_bytes;
    return FS_OK;
}

fs_status fs_report_run_many(MPI_Comm comm, const fs_run_asked *o, int nranks,
                             const fs_report_sections *s, const fs_timers *run_timers,
                             const char *report_tmp, char **summary)
{
    char title[FS_PATH_MAX + 64];
    snprintf(title, sizeof title, "%d datasets into %s, %d rank%s", s->added, o->output_file, nranks,
             nranks == 1 ? "" : "s");
    fs_report_info info = {
        .command_line = o->command_line,
        .output = o->output_file,
        .direction = o->inverse ? "inverse" : "forward",
        .norm = o->norm,
        .split_from = -1,
        .title = title,
        .flops = s->flops,
        .array_bytes = s->array_bytes,
        .check = s->check.done ? &s->check : NULL,
        .operation = o->operation,
        .operation_in_pass = -1, /* each dataset's section says */
        .ndatasets = s->added,
        .dataset_inputs = s->inputs,
        .dataset_json = s->json,
        .dataset_lines = s->lines,
    };
    with_extras(o, &info);
    fs_rank_record total = s->total;
    memcpy(total.t_s, run_timers->t_s, sizeof total.t_s);
    total.peak_memory_bytes = fs_peak_memory_bytes();
    return fs_report_finish(comm, &info, &total, o->quiet ? NULL : summary, o->report_file,
                            report_tmp);
}
