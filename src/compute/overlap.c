/* SPDX-License-Identifier: GPL-3.0-or-later */
/* overlap: see overlap.h. */
#include "config.h"

#include "compute/overlap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/collective.h"
#include "core/testhooks.h"
#include "io/finite.h"
#include "io/rawio.h"

struct fs_overlap {
    fs_overlap_args a;
    fs_compute_pieces *first, *last;   /* the read's, the write's (NULL: whole) */
    fs_h5_raw raw_in, raw_out;
    const char *raw_out_path;
};

/* Collective: *p kept when every rank has pieces, else freed on all. A
 * rank without data has maps and pieces unlike the others', and every rank
 * must take the same way through the collective calls that follow. */
static fs_status agree_pieces(MPI_Comm comm, fs_status made, fs_compute_pieces **p)
{
    int all = 0;
    fs_status st = fs_error_agree(comm, made);
    if (st == FS_OK)
        st = fs_every_rank(comm, *p != NULL, &all);
    if (st != FS_OK || !all)
        fs_compute_pieces_free(p);
    return st;
}

/* The read in pieces: when HDF5 says the input's bytes can be read as
 * they are (no conversion, chunks, filters, virtual datasets or shards). */
static fs_status plan_read(fs_overlap *o, const fs_io_map *rm, const fs_box *first)
{
    const fs_overlap_args *a = &o->a;
    int readable = 0;
    fs_status st = fs_every_rank(a->comm, fs_io_map_is_plain(rm, first), &readable);
    if (st == FS_OK && readable)
        st = fs_h5_raw_input(a->comm, a->input_file, a->info, a->shards, rm->mem_type, &o->raw_in);
    if (st != FS_OK || !o->raw_in.usable)
        return st;
    return agree_pieces(a->comm, fs_compute_pieces_new(a->c, FS_PIECES_FIRST, a->buf->data,
                                                       FS_OVERLAP_PIECE_BYTES, 0, &o->first),
                        &o->first);
}

/* The write in pieces: when the output's dataset is contiguous in its
 * temporary and the last stage's operations are left to run on the
 * pieces (one stage whose operations ran on the pieces read leaves none). */
static fs_status plan_write(fs_overlap *o, const fs_io_map *wm, const fs_box *last)
{
    const fs_overlap_args *a = &o->a;
    int writable = 0;
    fs_status st = fs_every_rank(a->comm, fs_io_map_is_plain(wm, last), &writable);
    if (st != FS_OK || !writable || !a->h5 || a->whole_result || (o->first && a->t->nstages == 1))
        return st;
    st = fs_error_agree(a->comm, fs_h5_output_raw(a->h5, wm->mem_type, &o->raw_out,
                                                  &o->raw_out_path));
    if (st != FS_OK || !o->raw_out.usable)
        return st;
    return agree_pieces(a->comm, fs_compute_pieces_new(a->c, FS_PIECES_LAST, a->buf->data,
                                                       FS_OVERLAP_PIECE_BYTES, a->keep, &o->last),
                        &o->last);
}

fs_status fs_overlap_plan(const fs_overlap_args *a, fs_overlap **out)
{
    fs_overlap *o = *out = calloc(1, sizeof *o);
    fs_status st = fs_error_agree(a->comm, o ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory"));
    if (st != FS_OK)
        return st;
    o->a = *a;
    o->raw_in = o->raw_out = (fs_h5_raw){0, -1};
    /* From the page cache a read or write is the CPU copying, so on a node
     * whose ranks use every core the thread only takes turns with the
     * FFTs: 256^3 complex128 on 2 ranks of 2 cores ran 10% slower
     * overlapped, where 1 rank ran 15% faster (fs_node.io_thread). */
    int mine = a->io_thread && fs_testhooks_slow_read_bytes() <= 0, pays = 0;
    st = fs_every_rank(a->comm, mine, &pays);
    if (st != FS_OK || !pays)
        return st;
    const fs_box *first = fs_decomposition_first(a->d), *last = fs_decomposition_last(a->d);
    fs_io_map rm = fs_transform_read_map(a->t, first), wm = fs_transform_write_map(a->t, last);
    st = plan_read(o, &rm, first);
    if (st == FS_OK)
        st = plan_write(o, &wm, last);
    return st;
}

void fs_overlap_free(fs_overlap **o)
{
    if (!*o)
        return;
    fs_compute_pieces_free(&(*o)->first);
    fs_compute_pieces_free(&(*o)->last);
    free(*o);
    *o = NULL;
}

int fs_overlap_reads(const fs_overlap *o)
{
    return o && o->first;
}

int fs_overlap_writes(const fs_overlap *o)
{
    return o && o->last;
}

/* The thread's time, and the part of it the FFTs hid (what it was busy
 * beyond what the ranks waited for it). */
static void count_io(double *total, double *hidden, const fs_rawio_times *times)
{
    *total += times->busy_s;
    *hidden += times->busy_s > times->waited_s ? times->busy_s - times->waited_s : 0;
}

/* fn's status with fn's FFT time counted as FFT time and not in phase p. */
static fs_status fft_step(fs_timers *timers, fs_status st, fs_status (*fn)(fs_compute_pieces *, void *),
                          fs_compute_pieces *p, void *arg)
{
    fs_timer_start(timers, FS_PHASE_FFT);
    if (st == FS_OK)
        st = fn(p, arg);
    fs_timer_stop(timers, FS_PHASE_FFT);
    return st;
}

static fs_status run_read_piece(fs_compute_pieces *p, void *i)
{
    return fs_compute_pieces_run(p, *(int64_t *)i, NULL, NULL);
}

static fs_status end_pieces(fs_compute_pieces *p, void *progress)
{
    return fs_compute_pieces_end(p, progress);
}

static fs_status begin_pieces(fs_compute_pieces *p, void *progress)
{
    return fs_compute_pieces_begin(p, progress);
}

/* The read's pieces queued, then each one's FFTs as soon as it is there. */
static fs_status read_pieces(fs_overlap *o, fs_timers *timers, fs_progress *progress,
                             fs_finite *finite, fs_rawio_times *times)
{
    const fs_overlap_args *a = &o->a;
    fs_compute_pieces *p = o->first;
    fs_box box = fs_compute_pieces_box(p);
    size_t eb = fs_complex_bytes(a->t->prec);
    int64_t n = fs_compute_pieces_count(p), box_elems = fs_box_elems(&box);
    char name[FS_INPUT_NAME_MAX];
    fs_input_name(a->input_file, a->info, name, sizeof name);
    /* The read fills the box; what lies past it starts as zeros, as ever. */
    memset((char *)a->buf->data + (size_t)box_elems * eb, 0,
           (size_t)(a->buf->elems - box_elems) * eb);
    fs_rawio_args ra = {a->input_file, name, 0, o->raw_in.offset,
                        fs_box_full(a->info->ndim, a->info->shape), eb, n, 0};
    fs_rawio *io = NULL;
    fs_status st = fs_rawio_new(&ra, &io);
    for (int64_t i = 0; i < n && st == FS_OK; i++) {
        fs_box piece = fs_compute_pieces_piece(p, i);
        st = fs_rawio_submit(io, &piece, &box, a->buf->data);
    }
    fs_progress_begin(progress, "read", (double)box_elems * (double)eb, "B");
    for (int64_t i = 0; i < n && st == FS_OK; i++) {
        fs_box piece = fs_compute_pieces_piece(p, i);
        st = fs_rawio_wait(io, i + 1);
        /* its values as read, before its FFTs */
        if (st == FS_OK && finite)
            fs_finite_box(finite, &piece, &box, a->buf->data, fs_complex_dtype(a->t->prec));
        st = fft_step(timers, st, run_read_piece, p, &i);
        fs_progress_callback(progress,
                             (double)(fs_box_offset_in(&piece, &box) + fs_box_elems(&piece)) * (double)eb);
    }
    fs_progress_end(progress);
    if (io && st == FS_OK)
        st = fs_rawio_close(io);
    fs_rawio_free(&io, times);
    return fft_step(timers, st, end_pieces, p, progress);
}

/* The read through HDF5 as a whole (fs_h5_read checks the input it read
 * is the one probed). */
static fs_status read_whole(const fs_overlap_args *a, fs_progress *progress, fs_finite *finite)
{
    fs_io_map m = fs_transform_read_map(a->t, fs_decomposition_first(a->d));
    if (finite)
        fs_finite_begin(finite, a->info->ndim, a->info->shape, m.fold_inner);
    /* Slots the read leaves alone (the imaginary parts of real input, the
     * padding, the missing half of a c2r) start as zeros. */
    memset(a->buf->data, 0, (size_t)a->buf->elems * fs_complex_bytes(a->t->prec));
    /* Progress in the bytes read into memory, as h5io counts them. */
    fs_progress_begin(progress, "read",
                      (double)fs_box_elems(&m.file_box) * (double)fs_dtype_bytes(m.mem_type), "B");
    fs_status st = fs_h5_read(a->comm, a->input_file, a->info, a->shards, &m, a->buf->data,
                              fs_progress_callback, progress, finite);
    fs_progress_end(progress);
    return st;
}

/* The read as planned, NaN and Inf counted into finite (NULL: not). */
static fs_status read_any(fs_overlap *o, fs_timers *timers, fs_progress *progress,
                          fs_finite *finite)
{
    if (!o->first)
        return read_whole(&o->a, progress, finite);
    if (finite)
        fs_finite_begin(finite, o->a.info->ndim, o->a.info->shape, 0);
    double fft_before = timers->t_s[FS_PHASE_FFT];
    fs_rawio_times times = {0};
    fs_status st = read_pieces(o, timers, progress, finite, &times);
    count_io(&timers->io.read_s, &timers->io.read_hidden_s, &times);
    timers->t_s[FS_PHASE_READ] -= timers->t_s[FS_PHASE_FFT] - fft_before;
    /* As fs_h5_read does: the input read is the one probed. */
    return fs_h5_input_unchanged(o->a.comm, o->a.input_file, o->a.info, st);
}

fs_status fs_overlap_read(fs_overlap *o, fs_timers *timers, fs_progress *progress)
{
    const fs_overlap_args *a = &o->a;
    fs_finite finite, *counts = a->refuse_nonfinite ? &finite : NULL;
    fs_status st = read_any(o, timers, progress, counts);
    /* every rank's count added up once every read is done */
    if (!counts || fs_error_agree_quiet(a->comm, st) != FS_OK)
        return st;
    char name[FS_INPUT_NAME_MAX];
    fs_input_name(a->input_file, a->info, name, sizeof name);
    return fs_finite_agree(a->comm, &finite, name);
}

/* This rank's part of the output: the last FFT pass piece by piece into
 * staging buffers, each written by the helper thread while the next is
 * computed. The status is this rank's. */
static fs_status write_pieces(fs_overlap *o, fs_timers *timers, fs_progress *progress,
                              fs_rawio_times *times)
{
    const fs_transform *t = o->a.t;
    fs_compute_pieces *p = o->last;
    int64_t n = fs_compute_pieces_count(p);
    size_t eb = fs_complex_bytes(t->prec);
    fs_rawio_args ra = {o->raw_out_path, fs_h5_output_name(o->a.h5), 1, o->raw_out.offset,
                        fs_box_full(t->out_ndim, t->out_shape), eb, n, 0};
    fs_rawio *io = NULL;
    fs_status st = n > 0 ? fs_rawio_new(&ra, &io) : FS_OK;
    fs_compute_pieces_rebase(p, o->a.buf->data);
    st = fft_step(timers, st, begin_pieces, p, progress);
    fs_box box = fs_compute_pieces_box(p);
    fs_progress_begin(progress, "write", (double)fs_box_elems(&box) * (double)eb, "B");
    double done = 0;
    for (int64_t i = 0; i < n && st == FS_OK; i++) {
        /* The staging buffer of piece i held piece i - FS_PIECE_BUFFERS. */
        if (i >= FS_PIECE_BUFFERS)
            st = fs_rawio_wait(io, i - FS_PIECE_BUFFERS + 1);
        void *at = NULL;
        fs_box piece;
        fs_timer_start(timers, FS_PHASE_FFT);
        if (st == FS_OK)
            st = fs_compute_pieces_run(p, i, &at, &piece);
        fs_timer_stop(timers, FS_PHASE_FFT);
        if (st == FS_OK)
            st = fs_rawio_submit(io, &piece, &piece, at);
        done += (double)fs_box_elems(&piece) * (double)eb;
        fs_progress_callback(progress, done);
    }
    if (io && st == FS_OK)
        st = fs_rawio_close(io);
    fs_progress_end(progress);
    fs_rawio_free(&io, times);
    return st;
}

fs_status fs_overlap_write(fs_overlap *o, fs_timers *timers, fs_progress *progress)
{
    double fft_before = timers->t_s[FS_PHASE_FFT];
    fs_rawio_times times = {0};
    fs_status st = fs_h5_output_raw_done(o->a.h5, write_pieces(o, timers, progress, &times));
    count_io(&timers->io.write_s, &timers->io.write_hidden_s, &times);
    timers->t_s[FS_PHASE_WRITE] -= timers->t_s[FS_PHASE_FFT] - fft_before;
    return st; /* agreed */
}
