/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pass: see pass.h. */
#include "config.h"

#include "exec/pass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compute/fft.h"
#include "core/collective.h"
#include "core/signals.h"
#include "io/rawio.h"

/* The shapes of a pass's blocks: block splits differ by one index along
 * each split axis, so a few. */
#define MAX_SHAPES 8

/* A stage's operations planned on one shape of block (its start aside). */
typedef struct shape_ops {
    fs_box shape;
    int nops;
    fs_op *fwd[FS_MAX_OPS], *inv[FS_MAX_OPS];
} shape_ops;

typedef struct pass_run {
    fs_exec_data *x;
    const fs_exec_args *a;
    const fs_ooc_pass *ps;
    fs_rawio *io;
    fs_h5_input *in;                   /* INPUT open through HDF5 (NULL: not read so) */
    int src_slot, dst_slot, out_slot;  /* the thread's files (-1: none) */
    int keep_slot;                     /* the kept file written (-1: none) */
    int kept_slot[FS_OOC_MAX_KEPT];    /* the kept files read beside (with_kept of them) */
    fs_tiles src, dst, kept;           /* the scratch read and written, the kept, in blocks */
    const void *kept_each[FS_OOC_MAX_KEPT]; /* the kept files' blocks beside the current one */
    fs_box in_box, out_box;            /* INPUT's and OUTPUT's datasets whole */
    shape_ops shapes[MAX_SHAPES];
    int nshapes;
    int64_t read_done[2], write_done[2]; /* per buffer: the thread's count when its read, and
                                            its writes, are done */
    double hdf5_read_bytes, hdf5_written_bytes;
    fs_exec_pass_stats *stats;
} pass_run;

static double seconds_since(double t0)
{
    return MPI_Wtime() - t0;
}

/* Block j of this rank in the pass (a box of the pass's stage). */
static fs_box block_box(const pass_run *r, int j)
{
    const fs_transform *vt = r->x->vt;
    int v = r->x->rank * r->x->k + j;
    return fs_transform_box(vt, r->ps->stage, v / vt->grid[1], v % vt->grid[1]);
}

static int same_shape(const fs_box *a, const fs_box *b)
{
    return memcmp(a->count, b->count, sizeof a->count) == 0;
}

static shape_ops *shape_of(pass_run *r, const fs_box *box)
{
    for (int i = 0; i < r->nshapes; i++)
        if (same_shape(&r->shapes[i].shape, box))
            return &r->shapes[i];
    return NULL;
}

/* Every shape's plans, made on the first buffer before anything is read
 * into it (FFTW_MEASURE overwrites what it plans on). */
static fs_status plan_shapes(pass_run *r)
{
    const fs_transform *vt = r->x->vt;
    int s = r->ps->stage;
    fs_status st = FS_OK;
    for (int j = 0; j < r->x->k && st == FS_OK; j++) {
        fs_box box = block_box(r, j);
        if (shape_of(r, &box) || fs_box_elems(&box) == 0)
            continue;
        if (r->nshapes == MAX_SHAPES)
            return fs_error_set(FS_ERR_RUNTIME, "out-of-core pass: too many block shapes");
        shape_ops *so = &r->shapes[r->nshapes++];
        so->shape = box;
        so->nops = vt->nops[s];
        for (int i = 0; i < so->nops && st == FS_OK; i++) {
            st = fs_op_new(&vt->ops[s][i], &box, vt->prec, r->a->buffers->buf[0],
                           r->a->fftw_flags, &so->fwd[i]);
            if (st == FS_OK && r->ps->inverse)
                st = fs_op_inverse(so->fwd[i], r->a->buffers->buf[0], r->a->fftw_flags,
                                   &so->inv[i]);
        }
    }
    return st;
}

static void free_shapes(pass_run *r)
{
    for (int i = 0; i < r->nshapes; i++)
        for (int o = 0; o < r->shapes[i].nops; o++) {
            fs_op_free(&r->shapes[i].fwd[o]);
            fs_op_free(&r->shapes[i].inv[o]);
        }
    r->nshapes = 0;
}

/* The stage's operations on a block, forward or undone (in reverse). */
static fs_status run_ops(pass_run *r, const fs_box *box, void *data, int inverse)
{
    shape_ops *so = shape_of(r, box);
    fs_status st = FS_OK;
    double t0 = MPI_Wtime();
    for (int i = 0; so && i < so->nops && st == FS_OK; i++)
        st = inverse ? fs_op_execute_on(so->inv[so->nops - 1 - i], data)
                     : fs_op_execute_on(so->fwd[i], data);
    r->a->timers->t_s[FS_PHASE_FFT] += seconds_since(t0);
    return st;
}

/* One more file for the thread; its slot (-1 when path is NULL). */
static fs_status add_file(pass_run *r, const char *path, const char *name, int writing,
                          int64_t offset, const fs_box *whole, size_t eb, int *slot)
{
    *slot = -1;
    if (!path)
        return FS_OK;
    fs_rawio_args fa = {path, name, writing, offset, *whole, eb, 0, 1};
    return fs_rawio_add(r->io, &fa, slot);
}

/* The thread and its files: the source (INPUT raw or a scratch file), the
 * scratch written, OUTPUT raw. */
static fs_status open_io(pass_run *r)
{
    const fs_exec_data *x = r->x;
    const fs_ooc_pass *ps = r->ps;
    const fs_transform *vt = x->vt;
    fs_scratch *sc = r->a->scratch;
    r->in_box = fs_box_full(r->a->info->ndim, r->a->info->shape);
    r->out_box = fs_box_full(vt->out_ndim, vt->out_shape);
    fs_rawio_args none = {.max_pieces = 4 * (int64_t)vt->grid[0] * vt->grid[1] + 16};
    fs_status st = fs_rawio_new(&none, &r->io);
    const char *src = ps->from != FS_OOC_INPUT ? sc->path[ps->from]
                      : x->in_raw              ? r->a->input_file
                                               : NULL;
    int outputs = ps->write_output || ps->write_field;
    if (st == FS_OK)
        st = add_file(r, src, ps->from == FS_OOC_INPUT ? r->a->input_file : "the scratch", 0,
                      ps->from == FS_OOC_INPUT ? x->in_offset : 0, &r->in_box, x->cb,
                      &r->src_slot);
    if (st == FS_OK)
        st = add_file(r, ps->to != FS_OOC_NONE ? sc->path[ps->to] : NULL, "the scratch", 1, 0,
                      &r->out_box, x->cb, &r->dst_slot);
    if (st == FS_OK)
        st = add_file(r, outputs && x->out_raw ? x->out_path : NULL,
                      r->a->h5 ? fs_h5_output_name(r->a->h5) : "OUTPUT", 1, x->out_offset,
                      &r->out_box, fs_dtype_bytes(vt->out_type), &r->out_slot);
    /* INPUT through HDF5: read here, or compared with */
    if (st == FS_OK && ((ps->from == FS_OOC_INPUT && !x->in_raw) || ps->compare))
        st = fs_h5_input_open(r->a->comm, r->a->input_file, r->a->info, r->a->shards, &r->in);
    if (st == FS_OK && ps->from != FS_OOC_INPUT)
        st = fs_tiles_new(vt, ps->from_stage, x->cb, &r->src);
    if (st == FS_OK && ps->to != FS_OOC_NONE)
        st = fs_tiles_new(vt, ps->stage, x->cb, &r->dst);
    if (st == FS_OK && ps->keep_to != FS_OOC_NONE)
        st = add_file(r, sc->path[ps->keep_to], "a kept file", 1, 0, &r->out_box, x->cb,
                      &r->keep_slot);
    for (int f = 0; f < ps->with_kept && st == FS_OK; f++)
        st = add_file(r, sc->path[FS_OOC_KEPT_FILE + f], "a kept file", 0, 0, &r->out_box, x->cb,
                      &r->kept_slot[f]);
    if (st == FS_OK && (ps->keep_to != FS_OOC_NONE || ps->with_kept))
        st = fs_tiles_new(vt, ps->stage, x->cb, &r->kept);
    return st;
}

/* Block j moved between data and file `slot`, a kept file: one run, a kept
 * file laid out in the blocks of the pass. */
static fs_status queue_kept(pass_run *r, int j, int slot, void *data)
{
    fs_box box = block_box(r, j);
    int v = r->x->rank * r->x->k + j;
    if (fs_box_elems(&box) == 0)
        return FS_OK;
    return fs_rawio_submit_to(r->io, slot, r->kept.offset[v], &r->kept.box[v], &box, &box, data);
}

/* Block j of each kept file read beside queued into its kept buffers. */
static fs_status queue_kept_reads(pass_run *r, int j)
{
    fs_status st = FS_OK;
    for (int f = 0; f < r->ps->with_kept && st == FS_OK; f++)
        st = queue_kept(r, j, r->kept_slot[f], r->a->buffers->kbuf[f][j % 2]);
    return st;
}

/* Block j's read queued into its buffer (a raw source). */
static fs_status queue_read(pass_run *r, int j)
{
    fs_box box = block_box(r, j);
    void *buf = r->a->buffers->buf[j % 2];
    fs_status st = FS_OK;
    if (fs_box_elems(&box) == 0) {
        /* nothing */
    } else if (r->ps->from != FS_OOC_INPUT) {
        /* its part of every block of the pass that wrote the scratch */
        for (int w = 0; w < r->src.n && st == FS_OK; w++) {
            fs_box part = fs_box_intersect(&box, &r->src.box[w]);
            if (fs_box_elems(&part))
                st = fs_rawio_submit_to(r->io, r->src_slot, r->src.offset[w], &r->src.box[w],
                                        &part, &box, buf);
        }
    } else {
        fs_io_map rm = fs_transform_read_map(r->x->vt, &box);
        st = fs_rawio_submit_to(r->io, r->src_slot, r->x->in_offset, &r->in_box, &rm.file_box,
                                &rm.file_box, buf);
    }
    if (st == FS_OK)
        st = queue_kept_reads(r, j);
    r->read_done[j % 2] = fs_rawio_submitted(r->io);
    return st;
}

/* Whether every rank is still fine (a quiet agreement before the next
 * collective step); *st stays this rank's own. */
static int together(const pass_run *r, fs_status st)
{
    return fs_error_agree_quiet(r->a->comm, st) == FS_OK;
}

/* Block j in its buffer: the read queued waited for, or (INPUT not raw)
 * read now through HDF5, collectively, once the buffer's writes are done;
 * NaN and Inf counted in the first pass. */
static fs_status source(pass_run *r, int j)
{
    fs_exec_data *x = r->x;
    fs_box box = block_box(r, j);
    void *buf = x->a->buffers->buf[j % 2];
    double t0 = MPI_Wtime();
    fs_status st = FS_OK;
    fs_io_map rm = fs_transform_read_map(x->vt, &box);
    if (r->src_slot >= 0) {
        st = fs_rawio_wait(r->io, r->read_done[j % 2]);
        if (st == FS_OK && x->counting && fs_box_elems(&box))
            fs_finite_box(&x->finite, &rm.file_box, &rm.file_box, buf, fs_complex_dtype(x->vt->prec));
    } else {
        st = fs_rawio_wait(r->io, r->write_done[j % 2]);
        /* the slots the read leaves alone (imaginary parts, padding) are zeros */
        memset(buf, 0, (size_t)fs_box_elems(&box) * x->cb);
        if (together(r, st)) /* every rank in the collective read, or none */
            st = fs_h5_input_read(r->in, &rm, buf, NULL, NULL, x->counting ? &x->finite : NULL);
        r->hdf5_read_bytes += (double)fs_box_elems(&rm.file_box) * (double)fs_dtype_bytes(r->a->info->dtype);
        if (st == FS_OK && r->ps->with_kept && (st = queue_kept_reads(r, j)) == FS_OK)
            st = fs_rawio_wait(r->io, fs_rawio_submitted(r->io));
    }
    r->a->timers->t_s[FS_PHASE_READ] += seconds_since(t0);
    return st;
}

/* A block of the result into OUTPUT: queued raw (waited for when the
 * buffer changes next: keep), else through HDF5, collectively. */
static fs_status write_out(pass_run *r, const fs_box *box, void *data, int keep)
{
    fs_io_map wm = fs_transform_write_map(r->x->vt, box);
    double t0 = MPI_Wtime();
    fs_status st = FS_OK;
    if (r->out_slot >= 0) {
        if (fs_box_elems(box))
            st = fs_rawio_submit_to(r->io, r->out_slot, r->x->out_offset, &r->out_box,
                                    &wm.file_box, &wm.file_box, data);
        if (st == FS_OK && keep)
            st = fs_rawio_wait(r->io, fs_rawio_submitted(r->io));
    } else {
        st = fs_h5_output_write(r->a->h5, &wm, data, keep, NULL, NULL);
        r->hdf5_written_bytes += (double)fs_box_elems(&wm.file_box) *
                                 (double)fs_dtype_bytes(r->x->vt->out_type);
    }
    r->a->timers->t_s[FS_PHASE_WRITE] += seconds_since(t0);
    return st;
}

/* Block j's part of the scratch written: its intersection with every
 * block of the next pass. */
static fs_status write_scratch(pass_run *r, const fs_box *box, void *data)
{
    fs_status st = FS_OK;
    for (int w = 0; w < r->dst.n && st == FS_OK; w++) {
        fs_box part = fs_box_intersect(box, &r->dst.box[w]);
        if (fs_box_elems(&part))
            st = fs_rawio_submit_to(r->io, r->dst_slot, r->dst.offset[w], &r->dst.box[w], &part,
                                    box, data);
    }
    return st;
}

/* --check's comparison of a block transformed back with INPUT (collective). */
static fs_status compare(pass_run *r, const fs_box *box, void *data)
{
    const fs_exec_args *a = r->a;
    fs_check_args ca = {.comm = a->comm, .t = r->x->vt, .data = data, .first = box,
                        .input_file = a->input_file, .info = a->info, .shards = a->shards,
                        .opened = r->in, .tolerance = a->tolerance};
    double t0 = MPI_Wtime();
    fs_status st = fs_check_add_input(&ca, &r->x->sums);
    a->timers->t_s[FS_PHASE_CHECK] += seconds_since(t0);
    return st;
}

/* Block j after its read: the pass's steps (ooc.h), each rank in step
 * before the collective ones. */
static fs_status process(pass_run *r, int j, fs_status st)
{
    fs_exec_data *x = r->x;
    const fs_ooc_pass *ps = r->ps;
    fs_box box = block_box(r, j);
    void *data = x->a->buffers->buf[j % 2];
    x->turn.data = data;
    int changes = ps->operate || ps->inverse;
    if (st == FS_OK && ps->forward)
        st = run_ops(r, &box, data, 0);
    if (st == FS_OK && ps->forward && ps->inverse && r->a->check)
        fs_check_add_result(x->vt, &box, data, &x->sums);
    /* the kept block on the disk before the buffer changes (HDF5's write
     * of OUTPUT packs its rows in place) */
    if (st == FS_OK && ps->keep_to != FS_OOC_NONE &&
        (st = queue_kept(r, j, r->keep_slot, data)) == FS_OK &&
        (changes || (ps->write_output && r->out_slot < 0)))
        st = fs_rawio_wait(r->io, fs_rawio_submitted(r->io));
    for (int f = 0; f < ps->with_kept; f++)
        r->kept_each[f] = x->a->buffers->kbuf[f][j % 2];
    x->turn.kept = ps->with_kept ? r->kept_each[0] : NULL;
    x->turn.kept_each = ps->with_kept ? r->kept_each : NULL;
    if (st == FS_OK && ps->bin)
        st = fs_stages_forward_block(r->a->stages, &x->turn, &box, data);
    if (!together(r, st))
        return st;
    if (ps->write_output)
        st = write_out(r, &box, data, changes);
    double t0 = MPI_Wtime();
    if (st == FS_OK && ps->operate)
        st = fs_stages_operate_block(r->a->stages, &x->turn, r->a->result, &box, data);
    r->a->timers->t_s[FS_PHASE_OPERATE] += seconds_since(t0);
    if (st == FS_OK && ps->inverse)
        st = run_ops(r, &box, data, 1);
    if (st == FS_OK && ps->to != FS_OOC_NONE)
        st = write_scratch(r, &box, data);
    if (!together(r, st))
        return st;
    if (ps->write_field)
        st = write_out(r, &box, data, 0);
    if (st == FS_OK && ps->compare)
        st = compare(r, &box, data);
    r->write_done[j % 2] = fs_rawio_submitted(r->io);
    return st;
}

/* The bytes this rank moves in one run of the pass, for its progress line. */
static double pass_bytes(const pass_run *r)
{
    const fs_ooc_pass *ps = r->ps;
    int P = r->a->plan->blocks / r->x->k;
    return (ps->read_bytes + ps->written_bytes) / (P > 0 ? P : 1) / (ps->runs > 1 ? ps->runs : 1);
}

/* The blocks one after the other, two reads ahead where the source is
 * raw: the thread writes block j - 1 and reads block j + 1 while block j
 * is computed. */
static fs_status stream(pass_run *r)
{
    int k = r->x->k;
    fs_status st = FS_OK;
    for (int j = 0; j < 2 && j < k && r->src_slot >= 0 && st == FS_OK; j++)
        st = queue_read(r, j);
    fs_progress_begin(r->a->progress, fs_ooc_pass_name((int)(r->ps - r->a->plan->pass)),
                      pass_bytes(r), "B");
    for (int j = 0; j < k && together(r, st); j++) {
        st = source(r, j);
        if (!together(r, st))
            break;
        st = process(r, j, st);
        if (st == FS_OK && r->src_slot >= 0 && j + 2 < k)
            st = queue_read(r, j + 2);
        fs_progress_callback(r->a->progress, pass_bytes(r) * (j + 1) / k);
    }
    fs_progress_end(r->a->progress);
    return st;
}

/* The thread's figures into the pass's and the dataset's. */
static void count_io(pass_run *r, const fs_rawio_times *t)
{
    fs_io_overlap *io = &r->a->timers->io;
    r->stats->read_bytes = (double)t->read_bytes + r->hdf5_read_bytes;
    r->stats->written_bytes = (double)t->written_bytes + r->hdf5_written_bytes;
    r->stats->read_ranges = (double)t->read_ranges;
    r->stats->written_ranges = (double)t->written_ranges;
    r->stats->read_busy_s = t->read_s;
    r->stats->write_busy_s = t->write_s;
    io->read_s += t->read_s;
    io->write_s += t->write_s;
    double hidden = t->busy_s - t->waited_s;
    io->read_hidden_s += hidden > 0 && t->busy_s > 0 ? hidden * t->read_s / t->busy_s : 0;
    io->write_hidden_s += hidden > 0 && t->busy_s > 0 ? hidden * t->write_s / t->busy_s : 0;
}

fs_status fs_exec_pass(fs_exec_data *x, int p, fs_exec_pass_stats *stats)
{
    const fs_exec_args *a = x->a;
    pass_run r = {.x = x, .a = a, .ps = &a->plan->pass[p], .stats = stats,
                  .src_slot = -1, .dst_slot = -1, .out_slot = -1, .keep_slot = -1};
    memset(stats, 0, sizeof *stats);
    fs_signals_set_phase(fs_ooc_pass_name(p));
    double t0 = MPI_Wtime();
    fs_status st = plan_shapes(&r);
    if (st == FS_OK)
        st = open_io(&r);
    if (together(&r, st))
        st = stream(&r);
    double tw = MPI_Wtime();
    if (r.io && st == FS_OK)
        st = fs_rawio_close(r.io); /* the last writes on the disk */
    a->timers->t_s[FS_PHASE_WRITE] += seconds_since(tw);
    fs_rawio_times times = {0};
    fs_rawio_free(&r.io, &times);
    count_io(&r, &times);
    if (r.out_slot >= 0)
        st = fs_h5_output_raw_done(a->h5, st);
    if (r.ps->from == FS_OOC_INPUT && x->in_raw)
        st = fs_h5_input_unchanged(a->comm, a->input_file, a->info, st);
    if (r.in)
        st = fs_h5_input_close(&r.in, st);
    fs_tiles_free(&r.src);
    fs_tiles_free(&r.dst);
    fs_tiles_free(&r.kept);
    free_shapes(&r);
    fs_error_agree_quiet(a->comm, st);
    stats->seconds = seconds_since(t0);
    return st;
}
