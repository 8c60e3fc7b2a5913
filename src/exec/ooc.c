/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ooc: see ooc.h. The passes themselves are pass.c's. */
#include "config.h"

#include "exec/ooc.h"

#include <string.h>

#include "core/buffer.h"
#include "core/collective.h"
#include "exec/pass.h"

/* Whether every block of this rank in stage s has a plain map (read: the
 * input's; else the write's): moved as they are, no conversion or
 * strides. */
static int plain_blocks(const fs_exec_data *x, int s, int read)
{
    const fs_transform *vt = x->vt;
    for (int j = 0; j < x->k; j++) {
        int v = x->rank * x->k + j;
        fs_box box = fs_transform_box(vt, s, v / vt->grid[1], v % vt->grid[1]);
        fs_io_map m = read ? fs_transform_read_map(vt, &box) : fs_transform_write_map(vt, &box);
        if (fs_box_elems(&box) && !fs_io_map_is_plain(&m, &box))
            return 0;
    }
    return 1;
}

/* The stage whose blocks OUTPUT's result is written from (-1: none). */
static int output_stage(const fs_ooc_plan *p)
{
    for (int i = 0; i < p->npasses; i++)
        if (p->pass[i].write_output || p->pass[i].write_field)
            return p->pass[i].stage;
    return -1;
}

/* Collective: which of INPUT's read and OUTPUT's write go raw through the
 * I/O thread, the same on every rank: where HDF5 says the bytes lie as
 * they are in memory and every block's map is plain. */
static fs_status choose_raw(fs_exec_data *x)
{
    const fs_exec_args *a = x->a;
    fs_dtype mem = fs_complex_dtype(x->vt->prec);
    int all = 0;
    fs_h5_raw raw = {0, -1};
    fs_status st = fs_every_rank(a->comm, plain_blocks(x, a->plan->pass[0].stage, 1), &all);
    if (st == FS_OK && all)
        st = fs_h5_raw_input(a->comm, a->input_file, a->info, a->shards, mem, &raw);
    x->in_raw = st == FS_OK && all && raw.usable;
    x->in_offset = raw.offset;
    int s = output_stage(a->plan);
    if (st != FS_OK || s < 0 || !a->h5)
        return st;
    st = fs_every_rank(a->comm, plain_blocks(x, s, 0), &all);
    raw = (fs_h5_raw){0, -1};
    if (st == FS_OK && all)
        st = fs_error_agree(a->comm, fs_h5_output_raw(a->h5, x->vt->out_type, &raw, &x->out_path));
    x->out_raw = st == FS_OK && all && raw.usable;
    x->out_offset = raw.offset;
    return st;
}

/* The kept files read beside the blocks by the passes from `from` on. */
static int kept_read(const fs_ooc_plan *p, int from)
{
    int most = 0;
    for (int i = from; i < p->npasses; i++)
        most = p->pass[i].with_kept > most ? p->pass[i].with_kept : most;
    return most;
}

/* The two block buffers (the largest block of any pass each), and two for
 * each kept file read beside them: the dataset's, made by its first run. */
static fs_status alloc_buffers(fs_exec_data *x, int kept)
{
    fs_exec_buffers *b = x->a->buffers;
    size_t bytes = (size_t)x->a->plan->buffer_bytes;
    for (int i = 0; i < 2 + 2 * kept; i++) {
        void **p = i < 2 ? &b->buf[i] : &b->kbuf[(i - 2) / 2][i % 2];
        if (!*p && !(*p = fs_buffer_alloc(bytes ? bytes : 1)))
            return fs_error_set(FS_ERR_RUNTIME, "out of memory: %zu bytes for a block of the "
                                "out-of-core passes", bytes);
    }
    return FS_OK;
}

void fs_exec_buffers_free(fs_exec_buffers *b)
{
    for (int i = 0; i < 2; i++) {
        fs_buffer_free(b->buf[i]);
        for (int f = 0; f < FS_OOC_MAX_KEPT; f++)
            fs_buffer_free(b->kbuf[f][i]);
    }
    memset(b, 0, sizeof *b);
}

/* After the first pass: NaN and Inf in INPUT refused (status 3). */
static fs_status refuse_nonfinite(fs_exec_data *x, fs_status st)
{
    const fs_exec_args *a = x->a;
    x->counting = 0;
    if (fs_error_agree_quiet(a->comm, st) != FS_OK)
        return st;
    char name[FS_INPUT_NAME_MAX];
    fs_input_name(a->input_file, a->info, name, sizeof name);
    return fs_finite_agree(a->comm, &x->finite, name);
}

/* The kept files the passes from `from` on write, sized (each INPUT's
 * own, held until its last reader is done). */
static fs_status size_kept(const fs_exec_args *a, int from)
{
    const fs_ooc_plan *p = a->plan;
    fs_status st = FS_OK;
    for (int i = from; i < p->npasses && st == FS_OK; i++)
        if (p->pass[i].keep_to != FS_OOC_NONE)
            st = fs_scratch_size(a->comm, a->scratch, p->pass[i].keep_to, 1, p->scratch_bytes);
    return st;
}

/* Whether this run is the kept files' last reader: --cross's second
 * INPUT, --vector's last result. */
static int last_reader(const fs_exec_args *a)
{
    const fs_ooc_plan *p = a->plan;
    if (p->keeps == FS_OOC_KEEP_FIRST)
        return kept_read(p, 0) > 0;
    return p->keeps == FS_OOC_KEEP_EACH && p->first_result < p->npasses &&
           a->result + 1 >= a->results;
}

static void add_pass(fs_exec_pass_stats *to, const fs_exec_pass_stats *s)
{
    to->read_bytes += s->read_bytes;
    to->written_bytes += s->written_bytes;
    to->read_ranges += s->read_ranges;
    to->written_ranges += s->written_ranges;
    to->seconds += s->seconds;
    to->read_busy_s += s->read_busy_s;
    to->write_busy_s += s->write_busy_s;
}

fs_status fs_exec_run(const fs_exec_args *a, fs_exec_stats *stats)
{
    const fs_ooc_plan *p = a->plan;
    int from = a->result > 0 ? p->first_result : 0;
    fs_exec_data x = {.a = a, .vt = &p->vt, .k = p->per_rank, .cb = fs_complex_bytes(p->vt.prec)};
    if (from == 0)
        memset(stats, 0, sizeof *stats);
    stats->npasses = p->npasses;
    MPI_Comm_rank(a->comm, &x.rank);
    x.turn = (fs_stage_turn){.comm = a->comm, .i = a->input, .t = &p->vt, .timers = a->timers,
                             .progress = a->progress};
    x.counting = from == 0 && a->refuse_nonfinite && a->info->dtype != FS_DTYPE_INTEGER;
    if (x.counting)
        fs_finite_begin(&x.finite, a->info->ndim, a->info->shape, 0);
    double t0 = MPI_Wtime();
    fs_status st = fs_scratch_size(a->comm, a->scratch, 0, p->nscratch, p->scratch_bytes);
    if (st == FS_OK)
        st = size_kept(a, from);
    if (st == FS_OK)
        st = fs_error_agree(a->comm, alloc_buffers(&x, kept_read(p, from)));
    if (st == FS_OK)
        st = choose_raw(&x);
    a->timers->t_s[FS_PHASE_PLAN] += MPI_Wtime() - t0;
    for (int i = from; i < p->npasses && st == FS_OK; i++) {
        fs_exec_pass_stats one;
        st = fs_exec_pass(&x, i, &one);
        add_pass(&stats->pass[i], &one);
        if (i == 0 && x.counting)
            st = refuse_nonfinite(&x, st);
        st = fs_error_agree(a->comm, st);
    }
    if (st == FS_OK && a->check)
        st = fs_check_verdict(a->comm, &p->vt, a->tolerance, &x.sums, a->check);
    if (st != FS_OK || a->result + 1 >= a->results)
        fs_exec_buffers_free(a->buffers);
    /* the space back before the next dataset, or OUTPUT's commit */
    if (st == FS_OK)
        st = fs_scratch_size(a->comm, a->scratch, 0, p->nscratch, 0);
    if (st == FS_OK && last_reader(a))
        st = fs_scratch_size(a->comm, a->scratch, FS_OOC_KEPT_FILE, p->nkept, 0);
    return st;
}
