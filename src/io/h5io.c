/* SPDX-License-Identifier: GPL-3.0-or-later */
/* h5io: see h5io.h. */
#include "config.h"

#include "io/h5io.h"

#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/collective.h"
#include "core/launcher.h"
#include "core/signals.h"
#include "core/atomic.h"
#include "io/h5common.h"
#include "core/testhooks.h"

/* ------------------------------------------------------------------ MPI-IO property lists */

/* File access through MPI-IO on comm. */
static fs_status mpio_fapl(MPI_Comm comm, hid_t *fapl)
{
    *fapl = H5Pcreate(H5P_FILE_ACCESS);
    /* Metadata read by one rank and broadcast, not by every rank. */
    if (*fapl < 0 || H5Pset_fapl_mpio(*fapl, comm, MPI_INFO_NULL) < 0 ||
        H5Pset_all_coll_metadata_ops(*fapl, 1) < 0 || H5Pset_coll_metadata_write(*fapl, 1) < 0) {
        fs_status ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot set up parallel HDF5 file access (MPI-IO)");
        ret = fs_h5_close_ids(ret, "the file access properties", 1, *fapl);
        *fapl = H5I_INVALID_HID;
        return ret;
    }
    return FS_OK;
}

/* Transfer properties: independent requests, or collective ones. */
static fs_status transfer_dxpl(int collective, hid_t *dxpl)
{
    *dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (*dxpl < 0 || (collective && H5Pset_dxpl_mpio(*dxpl, H5FD_MPIO_COLLECTIVE) < 0)) {
        fs_status ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot set up HDF5 data transfers");
        ret = fs_h5_close_ids(ret, "the transfer properties", 1, *dxpl);
        *dxpl = H5I_INVALID_HID;
        return ret;
    }
    return FS_OK;
}

/* ------------------------------------------------------------------ hyperslabs */

/* A map's pieces, one call each: the box cut along `axis` into runs of at
 * most per_piece indices, for every index of the axes before it, so that a
 * piece holds at most the bytes asked for (one index of the last axis at
 * least; a folded view is cut along its rows only). Every rank makes ncalls
 * calls, the most pieces of any rank; its calls past its own pieces select
 * nothing. */
typedef struct io_pieces {
    int axis;
    int64_t per_piece; /* indices of axis per piece */
    int64_t along;     /* pieces per line of axis */
    int64_t local;     /* this rank's pieces */
    int64_t max_elems; /* elements of the largest piece */
    int64_t ncalls;
} io_pieces;

/* This rank's pieces of at most piece_bytes of mem_type (no MPI). */
static io_pieces plan_pieces(const fs_io_map *map, int64_t piece_bytes)
{
    const fs_box *box = &map->file_box;
    int64_t eb = (int64_t)fs_dtype_bytes(map->mem_type), inner = 1;
    io_pieces pc;
    memset(&pc, 0, sizeof pc);
    int a = box->ndim - 1;
    if (map->fold_inner > 0) {
        a = 0;
        inner = box->count[1];
    } else {
        while (a > 0 && inner * box->count[a] * eb <= piece_bytes)
            inner *= box->count[a--];
    }
    pc.axis = a;
    int64_t n = fs_box_elems(box);
    if (n > 0) {
        int64_t per = piece_bytes / (inner * eb);
        pc.per_piece = per < 1 ? 1 : per > box->count[a] ? box->count[a] : per;
        pc.along = (box->count[a] + pc.per_piece - 1) / pc.per_piece;
        pc.local = n / (inner * box->count[a]) * pc.along;
        pc.max_elems = pc.per_piece * inner;
    }
    return pc;
}

/* Piece c (0 <= c < local) of the map's box, in file coordinates. */
static fs_box piece_box(const fs_io_map *map, const io_pieces *pc, int64_t c)
{
    const fs_box *box = &map->file_box;
    fs_box p = *box;
    int a = pc->axis;
    int64_t outer = c / pc->along, first = c % pc->along * pc->per_piece;
    for (int k = a - 1; k >= 0; k--) {
        p.start[k] = box->start[k] + outer % box->count[k];
        p.count[k] = 1;
        outer /= box->count[k];
    }
    p.start[a] += first;
    p.count[a] = box->count[a] - first < pc->per_piece ? box->count[a] - first : pc->per_piece;
    return p;
}

/* Select in fspace the box (start, count: ndim axes of the array read)
 * with operator op: the box itself, or, when the input is sliced
 * (slice->given), its elements in the dataset of the file (slice.h). */
static herr_t select_file_box(hid_t fspace, H5S_seloper_t op, const fs_input_slice *slice,
                              int ndim, const int64_t *start, const int64_t *count)
{
    hsize_t fstart[FS_LAYOUT_MAX_DIMS], fstride[FS_LAYOUT_MAX_DIMS], fcount[FS_LAYOUT_MAX_DIMS];
    int64_t s[FS_LAYOUT_MAX_DIMS], st[FS_LAYOUT_MAX_DIMS], c[FS_LAYOUT_MAX_DIMS];
    if (!slice || !slice->given) {
        for (int k = 0; k < ndim; k++) {
            fstart[k] = (hsize_t)start[k];
            fcount[k] = (hsize_t)count[k];
        }
        return H5Sselect_hyperslab(fspace, op, fstart, NULL, fcount, NULL);
    }
    fs_slice_file_box(slice, ndim, start, count, s, st, c);
    for (int k = 0; k < slice->file_ndim; k++) {
        fstart[k] = (hsize_t)s[k];
        fstride[k] = (hsize_t)st[k];
        fcount[k] = (hsize_t)c[k];
    }
    return H5Sselect_hyperslab(fspace, op, fstart, fstride, fcount, NULL);
}

/* Select a piece of a box of the dataset itself in the file (of its slice
 * when `slice` is given), and, when mspace is valid, where it goes in the
 * map's memory. Returns the elements selected, or -1. */
static int64_t select_box_piece(const fs_io_map *map, const fs_input_slice *slice,
                                const fs_box *piece, hid_t fspace, hid_t mspace)
{
    const fs_box *box = &map->file_box;
    int last = box->ndim - 1;
    hsize_t count[FS_LAYOUT_MAX_DIMS], mstart[FS_LAYOUT_MAX_DIMS], mstride[FS_LAYOUT_MAX_DIMS];
    for (int k = 0; k <= last; k++) {
        int64_t step = k == last ? map->mem_stride_last : 1;
        count[k] = (hsize_t)piece->count[k];
        mstart[k] = (hsize_t)(map->mem_start[k] + (piece->start[k] - box->start[k]) * step);
        mstride[k] = (hsize_t)step;
    }
    if (select_file_box(fspace, H5S_SELECT_SET, slice, box->ndim, piece->start, piece->count) < 0 ||
        (mspace >= 0 && H5Sselect_hyperslab(mspace, H5S_SELECT_SET, mstart, mstride, count, NULL) < 0))
        return -1;
    return fs_box_elems(piece);
}

/* The file side of a folded piece of a sliced 1-D array: `rows` rows of
 * `cols` positions from `first`, `inner` apart; one selection when the rows
 * are whole (their positions follow each other), else one per row. */
static herr_t select_folded_slice(hid_t fspace, const fs_input_slice *slice, int64_t first,
                                  int64_t rows, int64_t cols, int64_t inner)
{
    if (cols == inner) {
        int64_t n = rows * cols;
        return select_file_box(fspace, H5S_SELECT_OR, slice, 1, &first, &n);
    }
    for (int64_t r = 0; r < rows; r++) {
        int64_t at = first + r * inner;
        if (select_file_box(fspace, H5S_SELECT_OR, slice, 1, &at, &cols) < 0)
            return -1;
    }
    return 0;
}

/* Select a piece (rows of the view) of a box of a 1-D file seen as (rows,
 * inner): rows of `cols` elements `inner` apart, the positions from the
 * limit on left out; in memory too when mspace is valid. */
static int64_t select_folded_piece(const fs_io_map *map, const fs_input_slice *slice,
                                   const fs_box *piece, hid_t fspace, hid_t mspace)
{
    int64_t inner = map->fold_inner, r0 = piece->start[0], c0 = piece->start[1],
            cols = piece->count[1], rows = piece->count[0];
    int64_t limit = map->fold_limit > 0 ? map->fold_limit : INT64_MAX;
    int64_t full = 0; /* rows entirely below the limit */
    while (full < rows && (r0 + full) * inner + c0 + cols <= limit)
        full++;
    int64_t partial = 0; /* elements of the next row below the limit */
    if (full < rows && (r0 + full) * inner + c0 < limit)
        partial = limit - ((r0 + full) * inner + c0);
    hsize_t ms[2] = {(hsize_t)(map->mem_start[0] + r0 - map->file_box.start[0]),
                     (hsize_t)map->mem_start[1]};
    hsize_t mstride[2] = {1, (hsize_t)map->mem_stride_last};
    if (H5Sselect_none(fspace) < 0 || (mspace >= 0 && H5Sselect_none(mspace) < 0))
        return -1;
    if (full > 0) {
        hsize_t fs = (hsize_t)(r0 * inner + c0), fst = (hsize_t)inner, fc = (hsize_t)full,
                fb = (hsize_t)cols;
        hsize_t mc[2] = {(hsize_t)full, (hsize_t)cols};
        herr_t sel = slice && slice->given
                         ? select_folded_slice(fspace, slice, r0 * inner + c0, full, cols, inner)
                         : H5Sselect_hyperslab(fspace, H5S_SELECT_OR, &fs, &fst, &fc, &fb);
        if (sel < 0 ||
            (mspace >= 0 && H5Sselect_hyperslab(mspace, H5S_SELECT_OR, ms, mstride, mc, NULL) < 0))
            return -1;
    }
    if (partial > 0) {
        int64_t at = (r0 + full) * inner + c0;
        hsize_t mps[2] = {ms[0] + (hsize_t)full, ms[1]}, mc[2] = {1, (hsize_t)partial};
        if (select_file_box(fspace, H5S_SELECT_OR, slice, 1, &at, &partial) < 0 ||
            (mspace >= 0 && H5Sselect_hyperslab(mspace, H5S_SELECT_OR, mps, mstride, mc, NULL) < 0))
            return -1;
    }
    return full * cols + partial;
}

/* Select piece c of the map (nothing past this rank's pieces) in the file
 * space and in mspace: the map's memory, or with `staged` the first
 * elements of a 1-D staging space. Returns the elements selected, or -1. */
static int64_t select_piece(const fs_io_map *map, const fs_input_slice *slice, const io_pieces *pc,
                            int64_t c, hid_t fspace, hid_t mspace, int staged, fs_box *piece)
{
    if (c >= pc->local)
        return H5Sselect_none(fspace) < 0 || H5Sselect_none(mspace) < 0 ? -1 : 0;
    *piece = piece_box(map, pc, c);
    hid_t ms = staged ? H5I_INVALID_HID : mspace;
    int64_t n = map->fold_inner > 0 ? select_folded_piece(map, slice, piece, fspace, ms)
                                    : select_box_piece(map, slice, piece, fspace, ms);
    if (n >= 0 && staged) {
        hsize_t zero = 0, count = (hsize_t)n;
        if ((n > 0 ? H5Sselect_hyperslab(mspace, H5S_SELECT_SET, &zero, NULL, &count, NULL)
                   : H5Sselect_none(mspace)) < 0)
            return -1;
    }
    return n;
}

/* The memory side of the calls: the map's memory array, or a staging
 * buffer of `elems` elements. */
static hid_t memory_space(const fs_io_map *map, int staged, int64_t elems)
{
    hsize_t dims[FS_LAYOUT_MAX_DIMS];
    if (staged) {
        dims[0] = elems > 0 ? (hsize_t)elems : 1;
        return H5Screate_simple(1, dims, NULL);
    }
    int nd = map->file_box.ndim;
    for (int k = 0; k < nd; k++)
        dims[k] = map->mem_dims[k] > 0 ? (hsize_t)map->mem_dims[k] : 1;
    return H5Screate_simple(nd, dims, NULL);
}

/* ------------------------------------------------------------------ staging */

/* n elements of eb bytes between memory `step` elements apart and packed
 * ones, in the direction to_memory (a read) or back (a write). */
static void copy_strided(char *mem, int64_t step, char *packed, int64_t n, size_t eb, int to_memory)
{
    if (step == 1) {
        memcpy(to_memory ? mem : packed, to_memory ? packed : mem, (size_t)n * eb);
        return;
    }
    /* Fixed sizes let the compiler turn each memcpy into one move. */
    size_t mem_step = (size_t)step * eb;
    if (eb == 8)
        for (int64_t i = 0; i < n; i++, mem += mem_step, packed += 8)
            to_memory ? memcpy(mem, packed, 8) : memcpy(packed, mem, 8);
    else if (eb == 4)
        for (int64_t i = 0; i < n; i++, mem += mem_step, packed += 4)
            to_memory ? memcpy(mem, packed, 4) : memcpy(packed, mem, 4);
    else
        for (int64_t i = 0; i < n; i++, mem += mem_step, packed += eb)
            to_memory ? memcpy(mem, packed, eb) : memcpy(packed, mem, eb);
}

/* Copy a piece's elements between the map's memory (data) and the staging
 * buffer, where they lie packed in the order of the file selection: the
 * piece's rows in row-major order, a folded view's cut at its limit. The
 * memory array is walked as a box in file coordinates in steps of
 * mem_stride_last (layout.h). */
static void stage_copy(const fs_io_map *map, const fs_box *piece, void *data, void *stage,
                       int to_memory)
{
    const fs_box *box = &map->file_box;
    int last = box->ndim - 1;
    int64_t step = map->mem_stride_last;
    size_t eb = fs_dtype_bytes(map->mem_type);
    fs_box outer = *box;
    for (int k = 0; k <= last; k++) {
        int64_t sk = k == last ? step : 1;
        outer.start[k] = box->start[k] - map->mem_start[k] / sk;
        outer.count[k] = map->mem_dims[k] / sk;
    }
    fs_box_runs w;
    fs_box_runs_begin(&w, piece, &outer, NULL, FS_BOX_RUNS_ROWS);
    char *packed = stage;
    while (fs_box_runs_next(&w)) {
        int64_t n = w.run_elems;
        if (map->fold_inner > 0 && map->fold_limit > 0) {
            int64_t left = map->fold_limit - (w.at[0] * map->fold_inner + w.at[1]);
            n = left < 0 ? 0 : left < n ? left : n;
        }
        copy_strided((char *)data + (size_t)(step * w.offset) * eb, step, packed, n, eb, to_memory);
        packed += (size_t)n * eb;
    }
}

/* ------------------------------------------------------------------ transfers */

/* How a read or a write goes: the dataset, the memory type and transfer
 * properties, the bytes per call, and what messages name. */
typedef struct io_transfer {
    MPI_Comm comm;
    hid_t did, dxpl;
    int writing;
    int skip_empty;      /* a rank with nothing selected makes no call */
    int64_t piece_bytes; /* per call and rank */
    double pause_s;      /* after every call (FFTSHARD_SLOW_READ) */
    const char *name;    /* FILE or FILE:DATASET */
    const char *disk;    /* writes: the file on disk (is its file system full?) */
    int abandon_on_failure; /* collective writes: a failure ends the job (fs_h5_abandon) */
    fs_finite *finite;   /* reads: NaN and Inf counted here (NULL: not counted) */
    const fs_input_slice *slice; /* reads: the input's slice (NULL or not given: none) */
} io_transfer;

static void pause_seconds(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        continue;
}

/* Allocate the staging buffer (when the memory side is strided) and agree
 * on the number of calls: every rank learns of another's failure here,
 * before any call that the others would wait in. */
static fs_status begin_transfer(const io_transfer *x, const fs_io_map *map, io_pieces *pc,
                                void **stage)
{
    int64_t mine[2] = {pc->local, 0}, all[2];
    *stage = NULL;
    if (map->mem_stride_last != 1 && pc->max_elems > 0) {
        *stage = malloc((size_t)pc->max_elems * fs_dtype_bytes(map->mem_type));
        mine[1] = *stage == NULL;
    }
    fs_status st = fs_allreduce(x->comm, mine, all, 2, MPI_INT64_T, MPI_MAX);
    if (st != FS_OK)
        return st;
    if (all[1])
        return fs_error_set(FS_ERR_RUNTIME, "out of memory for the staging buffer of %s", x->name);
    pc->ncalls = all[0];
    return FS_OK;
}

/* The values of a piece just read counted (finite.h): packed in the
 * staging buffer, or in place in the map's memory (never strided then). */
static void count_piece(fs_finite *f, const fs_io_map *map, const fs_box *piece, const void *buf,
                        int staged, int64_t n)
{
    if (staged) {
        fs_finite_packed(f, piece, buf, n, map->mem_type);
        return;
    }
    fs_box outer = map->file_box;
    for (int k = 0; k < outer.ndim; k++) {
        outer.start[k] = map->file_box.start[k] - map->mem_start[k];
        outer.count[k] = map->mem_dims[k];
    }
    fs_finite_box(f, piece, &outer, buf, map->mem_type);
}

/* Every call of a read or a write (begin_transfer first): the pieces of the
 * map, between the dataset and data, through the staging buffer when there
 * is one. Progress counts the bytes of mem_type done on this rank. */
static fs_status run_transfer(const io_transfer *x, const fs_io_map *map, const io_pieces *pc,
                              void *stage, void *data, fs_io_progress progress, void *ctx)
{
    hid_t fspace = H5I_INVALID_HID, mspace = H5I_INVALID_HID, mtype = H5I_INVALID_HID;
    const char *side = x->writing ? "output" : "input";
    int staged = stage != NULL;
    double done = 0, eb = (double)fs_dtype_bytes(map->mem_type);
    fs_status ret = fs_h5_element_type(map->mem_type, 1, &mtype);
    if (ret == FS_OK && ((fspace = H5Dget_space(x->did)) < 0 ||
                         (mspace = memory_space(map, staged, pc->max_elems)) < 0))
        ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot describe the %s hyperslab", x->name, side);
    for (int64_t c = 0; c < pc->ncalls && ret == FS_OK; c++) {
        fs_box piece;
        int64_t n = select_piece(map, x->slice, pc, c, fspace, mspace, staged, &piece);
        if (n < 0) {
            ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot select the %s hyperslab", x->name, side);
            break;
        }
        void *buf = staged ? stage : data;
        if (x->writing && staged && n > 0)
            stage_copy(map, &piece, data, stage, 0);
        if ((n > 0 || !x->skip_empty) &&
            (x->writing ? H5Dwrite(x->did, mtype, mspace, fspace, x->dxpl, buf)
                        : H5Dread(x->did, mtype, mspace, fspace, x->dxpl, buf)) < 0) {
            ret = fs_h5_fail_writing(x->disk, FS_ERR_RUNTIME, "%s: %s failed", x->name,
                                     x->writing ? "write" : "read");
            /* The other ranks may wait in this call or the next. */
            if (x->abandon_on_failure)
                fs_h5_abandon(ret, 1);
            break;
        }
        if (!x->writing && x->finite && n > 0)
            count_piece(x->finite, map, &piece, buf, staged, n);
        if (!x->writing && staged && n > 0)
            stage_copy(map, &piece, data, stage, 1);
        if (x->pause_s > 0)
            pause_seconds(x->pause_s);
        done += (double)n * eb;
        if (progress && n > 0)
            progress(ctx, done);
    }
    return fs_h5_close_ids(ret, x->name, 3, mspace, mtype, fspace);
}

/* ------------------------------------------------------------------ shards */

/* Map the box sets->boxes[i] of a virtual dataset of the given shape onto
 * the whole dataset `dataset` of sets->files[i], for every i. */
static fs_status set_mappings(hid_t dcpl, int ndim, const int64_t *shape, const fs_shard_set *set,
                              const char *dataset)
{
    hsize_t dims[FS_LAYOUT_MAX_DIMS];
    for (int k = 0; k < ndim; k++)
        dims[k] = (hsize_t)shape[k];
    hid_t space = H5Screate_simple(ndim, dims, NULL);
    fs_status ret = FS_OK;
    if (space < 0)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot describe the array the %lld shards make",
                         (long long)set->n);
    for (int64_t i = 0; i < set->n && ret == FS_OK; i++) {
        const fs_box *b = &set->boxes[i];
        hsize_t start[FS_LAYOUT_MAX_DIMS], count[FS_LAYOUT_MAX_DIMS];
        for (int k = 0; k < ndim; k++) {
            start[k] = (hsize_t)b->start[k];
            count[k] = (hsize_t)b->count[k];
        }
        hid_t src = H5Screate_simple(ndim, count, NULL);
        if (src < 0 || H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
            H5Pset_virtual(dcpl, space, set->files[i], dataset, src) < 0)
            ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot map the shard onto its place in the array",
                             set->files[i]);
        ret = fs_h5_close_ids(ret, set->files[i], 1, src);
    }
    return fs_h5_close_ids(ret, "the array of the shards", 1, space);
}

/* A new empty temporary file for the map of the shards, in *path. */
static fs_status shards_map_file(char *path, size_t size)
{
    const char *tmpdir = getenv("TMPDIR");
    snprintf(path, size, "%s/" FS_ATOMIC_TAG "shards-XXXXXX", tmpdir && tmpdir[0] ? tmpdir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return fs_error_set(FS_ERR_RUNTIME, "%s: cannot create the temporary file that maps the "
                            "shards: %s", path, strerror(errno));
    close(fd);
    fs_atomic_register(path);
    return FS_OK;
}

/* Write into path the virtual dataset "shards" that maps the shards. */
static fs_status write_shards_map(const char *path, const fs_input_info *info,
                                  const fs_shard_set *shards)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), space = H5I_INVALID_HID, type = H5I_INVALID_HID,
          fid = H5I_INVALID_HID, did = H5I_INVALID_HID;
    hsize_t dims[FS_LAYOUT_MAX_DIMS];
    int64_t shape[FS_LAYOUT_MAX_DIMS]; /* the whole array's, sliced or not */
    int ndim = fs_input_file_shape(info, shape);
    for (int k = 0; k < ndim; k++)
        dims[k] = (hsize_t)shape[k];
    fs_status ret = FS_OK;
    if (dcpl < 0 || (space = H5Screate_simple(ndim, dims, NULL)) < 0)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot describe the array the %lld shards make",
                         (long long)shards->n);
    if (ret == FS_OK)
        ret = fs_h5_element_type(info->dtype, 1, &type);
    if (ret == FS_OK)
        ret = set_mappings(dcpl, ndim, shape, shards, info->dataset);
    if (ret == FS_OK && ((fid = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
                         (did = H5Dcreate2(fid, "shards", type, space, H5P_DEFAULT, dcpl,
                                           H5P_DEFAULT)) < 0))
        ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot write the virtual dataset that maps the shards",
                         path);
    return fs_h5_close_ids(ret, path, 5, did, fid, space, type, dcpl);
}

/* The shards as one array: a virtual dataset mapping each shard's whole
 * dataset onto its box. It is written to a small temporary file and opened
 * read-only: HDF5 opens the sources with the virtual dataset's own access
 * mode, and a writable one would lock every shard exclusively (other ranks
 * would read fill values) and fail on read-only shards. The file is
 * unlinked as soon as it is open. *fid and *did are the caller's to close,
 * even after a failure. */
static fs_status open_shards(const char *spec, const fs_input_info *info, const fs_shard_set *shards,
                             hid_t *fid, hid_t *did)
{
    char path[FS_PATH_MAX];
    *fid = *did = H5I_INVALID_HID;
    fs_status ret = shards_map_file(path, sizeof path);
    if (ret != FS_OK)
        return ret;
    ret = write_shards_map(path, info, shards);
    if (ret == FS_OK && ((*fid = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0 ||
                         (*did = H5Dopen2(*fid, "shards", H5P_DEFAULT)) < 0))
        ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot map the %lld shards onto one array", spec,
                         (long long)shards->n);
    fs_atomic_abort(path);
    return ret;
}

/* ------------------------------------------------------------------ read */

/* The input dataset, open for reading: the shards' map, or file (through
 * MPI-IO unless independent). *fid and *did are the caller's to close. */
static fs_status open_input(MPI_Comm comm, const char *file, const fs_input_info *info,
                            const fs_shard_set *shards, int independent, hid_t *fid, hid_t *did)
{
    *fid = *did = H5I_INVALID_HID;
    if (shards)
        return open_shards(file, info, shards, fid, did);
    hid_t fapl = H5P_DEFAULT;
    fs_status ret = independent ? FS_OK : mpio_fapl(comm, &fapl);
    char *name = NULL;
    if (ret == FS_OK)
        ret = independent ? ((name = strdup(file)) ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory"))
                          : fs_h5_mpio_name(file, &name);
    if (ret != FS_OK)
        return independent ? ret : fs_h5_close_ids(ret, file, 1, fapl);
    if ((*fid = H5Fopen(name, H5F_ACC_RDONLY, fapl)) < 0)
        ret = fs_h5_fail(FS_ERR_INPUT, "%s: cannot open for %sreading", file,
                         independent ? "" : "parallel ");
    else if ((*did = H5Dopen2(*fid, info->dataset, H5P_DEFAULT)) < 0)
        ret = fs_h5_fail(FS_ERR_INPUT, "%s:%s: cannot open the dataset", file, info->dataset);
    free(name);
    return independent ? ret : fs_h5_close_ids(ret, file, 1, fapl);
}

/* What changed between two stamps of a file, for a message; "" none. */
static void stamp_change(const fs_file_stamp *was, const fs_file_stamp *now, char *what, size_t size)
{
    what[0] = '\0';
    if (was->dev != now->dev || was->ino != now->ino)
        snprintf(what, size, "another file is now at its name");
    else if (was->size != now->size)
        snprintf(what, size, "its size went from %lld to %lld bytes", (long long)was->size,
                 (long long)now->size);
    else if (was->mtime_s != now->mtime_s || was->mtime_ns != now->mtime_ns)
        snprintf(what, size, "it was modified");
}

fs_status fs_h5_input_unchanged(MPI_Comm comm, const char *file, const fs_input_info *info,
                                fs_status local)
{
    if (!info->stamp.known)
        return local;
    int rank = 0;
    char what[128] = "";
    /* The agreement waits for every rank's read to end (or fail). */
    fs_error_agree_quiet(comm, local);
    if (MPI_Comm_rank(comm, &rank) == MPI_SUCCESS && rank == 0) {
        struct stat st;
        fs_file_stamp now = {0};
        if (stat(file, &st) == 0)
            now = fs_file_stamp_of(&st);
        else
            snprintf(what, sizeof what, "%s", errno == ENOENT ? "it is gone" : strerror(errno));
        if (!what[0])
            stamp_change(&info->stamp, &now, what, sizeof what);
    }
    fs_status shared = fs_bcast_bytes(comm, 0, what, sizeof what);
    if (shared != FS_OK)
        return shared;
    if (!what[0])
        return local;
    /* Whatever else failed, this is why: every rank says so. */
    return fs_error_set(FS_ERR_RUNTIME, "%s: INPUT changed while it was read (%s); the result "
                        "was not kept", file, what);
}

fs_status fs_h5_read(MPI_Comm comm, const char *file, const fs_input_info *info,
                     const fs_shard_set *shards, const fs_io_map *map, void *data,
                     fs_io_progress progress, void *ctx, fs_finite *finite)
{
    hid_t fid = H5I_INVALID_HID, did = H5I_INVALID_HID, dxpl = H5I_INVALID_HID;
    char name[FS_INPUT_NAME_MAX];
    fs_input_name(file, info, name, sizeof name);
    int64_t slow_bytes = fs_testhooks_slow_read_bytes();
    io_transfer x = {
        .comm = comm,
        /* Virtual datasets are read by each rank alone, with the default
         * driver: a rank with nothing to read stays out. */
        .skip_empty = shards || info->is_virtual,
        .piece_bytes = slow_bytes > 0                ? slow_bytes
                       : map->mem_stride_last != 1 ? FS_IO_STAGE_BYTES
                                                   : FS_IO_CALL_BYTES,
        .pause_s = fs_testhooks_slow_read_seconds(),
        .name = name,
        .finite = finite,
        .slice = &info->slice,
    };
    io_pieces pc = plan_pieces(map, x.piece_bytes);
    void *stage = NULL;
    fs_status ret = begin_transfer(&x, map, &pc, &stage);
    if (ret != FS_OK)
        return ret;
    /* Independent reads: each rank's hyperslab at once. ROMIO's collective
     * (two-phase) read of this MPICH took 198 s for the 1 GiB per rank of a
     * 512^3 input, where independent reads take 3 s. */
    if ((ret = transfer_dxpl(0, &dxpl)) == FS_OK &&
        (ret = open_input(comm, file, info, shards, x.skip_empty, &fid, &did)) == FS_OK) {
        x.did = did;
        x.dxpl = dxpl;
        ret = run_transfer(&x, map, &pc, stage, data, progress, ctx);
    }
    free(stage);
    ret = fs_h5_close_ids(ret, file, 1, did);
    if (fid >= 0 && H5Fclose(fid) < 0 && ret == FS_OK)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: close failed", file);
    ret = fs_h5_close_ids(ret, file, 1, dxpl);
    return fs_h5_input_unchanged(comm, file, info, ret);
}

/* ------------------------------------------------------------------ raw bytes */

/* Whether the open dataset did is stored as fs_h5_raw describes, and
 * where; HDF5's refusals (an unallocated dataset has no offset) are no
 * error here. */
static fs_status raw_layout(hid_t did, fs_dtype mem_type, fs_h5_raw *raw)
{
    hid_t dcpl = H5I_INVALID_HID, ftype = H5I_INVALID_HID, mtype = H5I_INVALID_HID;
    raw->usable = 0;
    raw->offset = -1;
    fs_status ret = fs_h5_element_type(mem_type, 1, &mtype);
    if (ret == FS_OK && ((dcpl = H5Dget_create_plist(did)) < 0 || (ftype = H5Dget_type(did)) < 0))
        ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot look at a dataset's storage");
    if (ret == FS_OK && H5Pget_layout(dcpl) == H5D_CONTIGUOUS && H5Pget_nfilters(dcpl) == 0 &&
        H5Pget_external_count(dcpl) == 0 && H5Tequal(ftype, mtype) > 0) {
        /* The offset counts from the start of the file, user block included. */
        haddr_t at = H5Dget_offset(did);
        raw->usable = at != HADDR_UNDEF;
        raw->offset = raw->usable ? (int64_t)at : -1;
    }
    ret = fs_h5_clear_errors(ret);
    return fs_h5_close_ids(ret, "a dataset", 3, mtype, ftype, dcpl);
}

typedef struct raw_input_args {
    const char *file;
    const fs_input_info *info;
    fs_dtype mem_type;
    fs_h5_raw raw;
} raw_input_args;

/* Rank 0: the input's storage, opened alone with the default driver. */
static fs_status raw_input_on_root(void *arg)
{
    raw_input_args *a = arg;
    hid_t fid = H5Fopen(a->file, H5F_ACC_RDONLY, H5P_DEFAULT), did = H5I_INVALID_HID;
    fs_status ret = FS_OK;
    if (fid >= 0 && (did = H5Dopen2(fid, a->info->dataset, H5P_DEFAULT)) >= 0)
        ret = raw_layout(did, a->mem_type, &a->raw);
    ret = fs_h5_close_ids(ret, a->file, 2, did, fid);
    /* Not usable, whatever went wrong: the read proper says why. */
    if (ret != FS_OK)
        a->raw.usable = 0;
    return fs_h5_clear_errors(FS_OK);
}

fs_status fs_h5_raw_input(MPI_Comm comm, const char *file, const fs_input_info *info,
                          const fs_shard_set *shards, fs_dtype mem_type, fs_h5_raw *raw)
{
    raw_input_args a = {file, info, mem_type, {0, -1}};
    fs_status st = FS_OK;
    /* A slice is read through HDF5's hyperslabs (the raw path moves a
     * rank's box as runs of the whole dataset). */
    if (!shards && !info->is_virtual && !info->slice.given)
        st = fs_root_decides(comm, raw_input_on_root, &a);
    if (st == FS_OK)
        st = fs_error_agree(comm, fs_bcast_bytes(comm, 0, &a.raw, sizeof a.raw));
    *raw = a.raw;
    return st;
}

/* ------------------------------------------------------------------ write */

struct fs_h5_output {
    MPI_Comm comm;
    char *path;
    char *name;   /* what messages call it (the final path), NULL: path */
    hid_t fid, did, dxpl;
    int mpio;        /* opened through MPI-IO: its calls are collective */
    int collective;  /* data written by collective transfers (filters) */
};

void fs_h5_abandon(fs_status st, int speak)
{
    /* The job ends here: a signal (the launcher's, stopping the other
     * ranks) only waits, and the other ranks of the node stopped by it
     * keep quiet (the note of launcher.h). */
    fs_signals_hold();
    fs_launcher_claim_message();
    /* When the failure struck several ranks (a collective write fails
     * everywhere), the first to claim it speaks for the job; the others
     * only remove what is left and end. */
    if (speak && fs_atomic_claim_failure())
        fs_error_print();
    fs_atomic_remove_registered();
    fflush(stdout);
    fflush(stderr);
    /* MPICH's launcher tears the job down at MPI_Abort and drops what is
     * still in its pipes: the message printed just now (here or at the
     * agreement before) was lost in about one run in ten without a pause. */
    struct timespec forward_s = {0, 200000000L};
    while (nanosleep(&forward_s, &forward_s) != 0)
        ;
    /* The launcher ends the job with the status, without lines of its own
     * where it can (Open MPI's mpirun: launcher.h); else MPI_Abort, which
     * MPICH follows with one line saying so. HDF5 does not shut down at exit
     * under MPI (fs_h5_init), so nothing flushes the broken file after
     * this. */
    if (fs_launcher_reports_exits())
        fs_launcher_end((int)st, 0, 10);
    MPI_Abort(MPI_COMM_WORLD, (int)st);
    for (;;)
        pause();
}

/* What messages call the output. */
static const char *output_name(const fs_h5_output *o)
{
    return o->name ? o->name : o->path;
}

/* The MPI-IO output being written on this rank (one at a time), NULL when
 * none: its writes end the job when they fail (below). */
static const fs_h5_output *writing;

/* HDF5 1.10 does not always return a failed MPI-IO write: inside a
 * metadata cache sync point (chunk allocation, flushes) it can carry on
 * with some ranks one collective call ahead of the others, and the job
 * hangs before any error reaches us. MPI's profiling interface lets us see
 * every write HDF5 makes: while an output is open, the first one that fails
 * ends the job from the rank it failed on (fs_h5_abandon), before HDF5
 * enters another collective call. */
static int write_checked(int err, const char *call)
{
    if (err == MPI_SUCCESS || !writing)
        return err;
    char reason[MPI_MAX_ERROR_STRING + 1];
    snprintf(reason, sizeof reason, "%s", fs_mpi_strerror(err));
    /* MPI error strings run over lines; a message is one line. */
    for (char *c = reason; *c; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t')
            *c = ' ';
    char note[96];
    fs_h5_full_disk_note(writing->path, reason, note, sizeof note);
    fs_error_clear();
    fs_error_set(FS_ERR_RUNTIME, "%s: write failed%s (%s: %s)",
                 writing->name ? writing->name : writing->path, note, call, reason);
    fs_h5_abandon(FS_ERR_RUNTIME, 1);
}

int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                      MPI_Datatype type, MPI_Status *status)
{
    return write_checked(PMPI_File_write_at(fh, offset, buf, count, type, status), "MPI_File_write_at");
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                          MPI_Datatype type, MPI_Status *status)
{
    return write_checked(PMPI_File_write_at_all(fh, offset, buf, count, type, status),
                         "MPI_File_write_at_all");
}

int MPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    return write_checked(PMPI_File_set_size(fh, size), "MPI_File_set_size");
}

int MPI_File_sync(MPI_File fh)
{
    return write_checked(PMPI_File_sync(fh), "MPI_File_sync");
}

/* A collective call on the output failed on this rank. The others may wait
 * in that call, or have passed it and wait in the next; no agreement can
 * reach them. The job ends from here (see fs_h5_abandon). An output written
 * by one process without MPI-IO (a --shard-output master) fails as usual. */
static fs_status collective_failed(const fs_h5_output *o, fs_status st)
{
    if (st != FS_OK && o->mpio)
        fs_h5_abandon(st, 1);
    return st;
}

/* Chunks and filters of the output dataset. */
static herr_t set_storage(hid_t dcpl, int ndim, const int64_t *shape, const fs_h5_storage *storage)
{
    if (!storage || storage->chunk_ndim == 0)
        return 0;
    hsize_t chunk[FS_LAYOUT_MAX_DIMS];
    for (int k = 0; k < ndim; k++) {
        int64_t c = k < storage->chunk_ndim ? storage->chunk[k] : shape[k];
        chunk[k] = (hsize_t)(c < shape[k] ? c : shape[k]);
        if (chunk[k] == 0)
            chunk[k] = 1;
    }
    if (H5Pset_chunk(dcpl, ndim, chunk) < 0)
        return -1;
    if (storage->deflate > 0 &&
        (H5Pset_shuffle(dcpl) < 0 || H5Pset_deflate(dcpl, (unsigned)storage->deflate) < 0))
        return -1;
    return 0;
}

/* A new output on tmp_path, no file open yet; dxpl taken over, even when
 * it fails. */
static fs_status output_alloc(MPI_Comm comm, const char *tmp_path, int mpio, hid_t dxpl,
                              fs_h5_output **out)
{
    *out = NULL;
    fs_h5_output *o = calloc(1, sizeof *o);
    if (!o || !(o->path = strdup(tmp_path))) {
        free(o);
        return fs_h5_close_ids(fs_error_set(FS_ERR_RUNTIME, "out of memory"), tmp_path, 1, dxpl);
    }
    o->fid = o->did = H5I_INVALID_HID;
    o->dxpl = dxpl;
    o->comm = comm;
    o->mpio = mpio;
    *out = o;
    return FS_OK;
}

/* Create (or with `existing`, open) the file of o through fapl. */
static fs_status output_open_file(fs_h5_output *o, hid_t fapl, int existing)
{
    /* The temporary was created by rank 0, empty or as a copy of OUTPUT;
     * HDF5 now takes it over. */
    char *name = NULL;
    fs_status ret = FS_OK;
    if (fapl != H5P_DEFAULT)
        ret = fs_h5_mpio_name(o->path, &name);
    if (o->mpio)
        writing = o;
    const char *file = name ? name : o->path;
    if (ret == FS_OK && existing && (o->fid = H5Fopen(file, H5F_ACC_RDWR, fapl)) < 0)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot open the copy of the HDF5 file", output_name(o));
    else if (ret == FS_OK && !existing &&
             (o->fid = H5Fcreate(file, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot create the HDF5 file", o->path);
    free(name);
    return ret;
}

/* netCDF-4 reads a compound element type only as a named (committed)
 * datatype. Complex elements get the one of the name nc-complex (and
 * netCDF4-python after it) gives them, at the root of the file, committed
 * by the first result that needs it; where that name holds something else
 * (--add), the type stays unnamed (h5py reads it alike). *ftype (in, out):
 * the transient type, replaced by the named one. */
static fs_status named_complex(const fs_h5_output *o, fs_dtype t, hid_t *ftype)
{
    if (t != FS_DTYPE_COMPLEX64 && t != FS_DTYPE_COMPLEX128)
        return FS_OK;
    const char *name = t == FS_DTYPE_COMPLEX64 ? "/_PFNC_FLOAT_COMPLEX_TYPE"
                                               : "/_PFNC_DOUBLE_COMPLEX_TYPE";
    htri_t exists = H5Lexists(o->fid, name, H5P_DEFAULT);
    if (exists == 0) {
        if (H5Tcommit2(o->fid, name, *ftype, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) < 0)
            return collective_failed(o, fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot name the complex "
                                                   "type", output_name(o)));
        return FS_OK;
    }
    hid_t obj = exists > 0 ? H5Oopen(o->fid, name, H5P_DEFAULT) : H5I_INVALID_HID;
    if (obj >= 0 && H5Iget_type(obj) == H5I_DATATYPE && H5Tequal(obj, *ftype) > 0) {
        hid_t transient = *ftype;
        *ftype = obj;
        return fs_h5_close_ids(FS_OK, o->path, 1, transient);
    }
    return fs_h5_close_ids(FS_OK, o->path, 1, obj);
}

/* The dataset `dataset` of o's file (groups on its path too) with the
 * creation properties dcpl; the previous one is closed first. */
static fs_status output_create_dataset(fs_h5_output *o, const char *dataset, int ndim,
                                       const int64_t *shape, fs_dtype file_type, hid_t dcpl)
{
    hid_t space = H5I_INVALID_HID, ftype = H5I_INVALID_HID, lcpl = H5I_INVALID_HID;
    fs_status ret = FS_OK;
    if (o->did >= 0) {
        /* Closing flushes collectively: a failure ends the job. */
        herr_t closed = H5Oclose(o->did); /* a dataset, or a group (fs_h5_output_group) */
        o->did = H5I_INVALID_HID;
        if (closed < 0)
            return collective_failed(o, fs_h5_fail_writing(o->path, FS_ERR_RUNTIME,
                                                           "%s: closing a dataset failed",
                                                           output_name(o)));
    }
    hsize_t dims[FS_LAYOUT_MAX_DIMS];
    for (int k = 0; k < ndim; k++)
        dims[k] = (hsize_t)shape[k];
    if ((space = H5Screate_simple(ndim, dims, NULL)) < 0 || (lcpl = H5Pcreate(H5P_LINK_CREATE)) < 0 ||
        H5Pset_create_intermediate_group(lcpl, 1) < 0)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot describe the output dataset");
    if (ret == FS_OK)
        ret = fs_h5_element_type(file_type, 0, &ftype);
    if (ret == FS_OK)
        ret = named_complex(o, file_type, &ftype);
    /* Creating a chunked dataset allocates its chunks: collective metadata
     * writes, which a full disk fails on some ranks only. */
    if (ret == FS_OK && (o->did = H5Dcreate2(o->fid, dataset, ftype, space, lcpl, dcpl, H5P_DEFAULT)) < 0)
        ret = collective_failed(o, fs_h5_fail_writing(o->path, FS_ERR_RUNTIME,
                                                      "%s: cannot create dataset %s", o->path, dataset));
    return fs_h5_close_ids(ret, o->path, 3, lcpl, ftype, space);
}

fs_status fs_h5_output_open(MPI_Comm comm, const char *tmp_path, int existing, fs_h5_output **out)
{
    hid_t fapl = H5I_INVALID_HID;
    *out = NULL;
    fs_status ret = mpio_fapl(comm, &fapl);
    if (ret == FS_OK)
        ret = output_alloc(comm, tmp_path, 1, H5I_INVALID_HID, out);
    if (ret == FS_OK)
        ret = output_open_file(*out, fapl, existing);
    if (ret != FS_OK && *out) {
        fs_status closed = fs_h5_output_close(out);
        (void)closed; /* the first error stands; closing frees what was made */
    }
    return fs_h5_close_ids(ret, tmp_path, 1, fapl);
}

/* With `replace`, an object at `dataset` is unlinked (collective over an
 * MPI-IO file, like every metadata change). */
static fs_status unlink_old(fs_h5_output *o, const char *dataset)
{
    /* Each group on the way first: H5Lexists fails where one is missing. */
    char prefix[FS_PATH_MAX];
    size_t len = strlen(dataset);
    htri_t exists = len < sizeof prefix ? 1 : -1;
    for (size_t end = 1; end <= len && exists > 0; end++) {
        if (end < len && dataset[end] != '/')
            continue;
        memcpy(prefix, dataset, end);
        prefix[end] = '\0';
        exists = H5Lexists(o->fid, prefix, H5P_DEFAULT);
    }
    if (exists < 0)
        return collective_failed(o, fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot look up %s",
                                               output_name(o), dataset));
    if (exists > 0 && H5Ldelete(o->fid, dataset, H5P_DEFAULT) < 0)
        return collective_failed(o, fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot replace dataset %s",
                                               output_name(o), dataset));
    return FS_OK;
}

fs_status fs_h5_output_add(fs_h5_output *o, const char *dataset, int ndim, const int64_t *shape,
                           fs_dtype file_type, const fs_h5_storage *storage, int replace)
{
    hid_t dcpl = H5I_INVALID_HID;
    fs_status ret = FS_OK;
    /* Every element is written; filling first would write the file twice. */
    if ((dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 || H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0 ||
        set_storage(dcpl, ndim, shape, storage) < 0)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot describe the output dataset");
    /* Filtered datasets can only be written collectively; otherwise each
     * rank writes its hyperslab independently (see fs_h5_read). */
    int collective = storage && storage->deflate > 0;
    if (ret == FS_OK && o->dxpl >= 0 && H5Pclose(o->dxpl) < 0)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot set up the output transfer");
    o->dxpl = H5I_INVALID_HID;
    if (ret == FS_OK)
        ret = transfer_dxpl(collective, &o->dxpl);
    o->collective = collective;
    if (ret == FS_OK && replace)
        ret = unlink_old(o, dataset);
    if (ret == FS_OK)
        ret = output_create_dataset(o, dataset, ndim, shape, file_type, dcpl);
    return fs_h5_close_ids(ret, o->path, 1, dcpl);
}

fs_status fs_h5_output_group(fs_h5_output *o, const char *path, int replace)
{
    fs_status ret = FS_OK;
    if (o->did >= 0) {
        herr_t closed = H5Oclose(o->did);
        o->did = H5I_INVALID_HID;
        if (closed < 0)
            return collective_failed(o, fs_h5_fail_writing(o->path, FS_ERR_RUNTIME,
                                                           "%s: closing a dataset failed",
                                                           output_name(o)));
    }
    if (replace && (ret = unlink_old(o, path)) != FS_OK)
        return ret;
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    if (lcpl < 0 || H5Pset_create_intermediate_group(lcpl, 1) < 0)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot describe the group %s", path);
    if (ret == FS_OK && (o->did = H5Gcreate2(o->fid, path, lcpl, H5P_DEFAULT, H5P_DEFAULT)) < 0)
        ret = collective_failed(o, fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot create group %s",
                                              output_name(o), path));
    return fs_h5_close_ids(ret, o->path, 1, lcpl);
}

fs_status fs_h5_output_table(fs_h5_output *o, const char *path, int rank, const int64_t *dims,
                             fs_dtype type, const void *values)
{
    int is_int = type == FS_DTYPE_INTEGER;
    hid_t ftype = is_int ? H5T_STD_I64LE : H5T_IEEE_F64LE;
    hid_t mtype = is_int ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
    hsize_t hdims[FS_LAYOUT_MAX_DIMS];
    for (int k = 0; k < rank; k++)
        hdims[k] = (hsize_t)dims[k];
    fs_status ret = FS_OK;
    hid_t space = H5Screate_simple(rank, hdims, NULL), fspace = H5I_INVALID_HID;
    hid_t mspace = H5I_INVALID_HID, did = H5I_INVALID_HID;
    if (space < 0)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot describe the dataset %s", path);
    if (ret == FS_OK && (did = H5Dcreate2(o->fid, path, ftype, space, H5P_DEFAULT, H5P_DEFAULT,
                                          H5P_DEFAULT)) < 0)
        ret = collective_failed(o, fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot create dataset %s",
                                              output_name(o), path));
    /* The values are every rank's: rank 0 writes them, the others nothing. */
    int rank0 = 1;
    if (o->mpio) {
        int r = 0;
        MPI_Comm_rank(o->comm, &r);
        rank0 = r == 0;
    }
    if (ret == FS_OK && ((fspace = H5Scopy(space)) < 0 || (mspace = H5Scopy(space)) < 0 ||
                         (!rank0 && (H5Sselect_none(fspace) < 0 || H5Sselect_none(mspace) < 0))))
        ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot select the dataset %s", path);
    if (ret == FS_OK && H5Dwrite(did, mtype, mspace, fspace, H5P_DEFAULT, values) < 0)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot write dataset %s", output_name(o), path);
    ret = o->mpio ? fs_error_agree_shared(o->comm, ret) : ret;
    return fs_h5_close_ids(ret, o->path, 4, did, mspace, fspace, space);
}

fs_status fs_h5_output_new(MPI_Comm comm, const char *tmp_path, const char *dataset, int ndim,
                           const int64_t *shape, fs_dtype file_type, const fs_h5_storage *storage,
                           fs_h5_output **out)
{
    fs_status ret = fs_h5_output_open(comm, tmp_path, 0, out);
    if (ret == FS_OK)
        ret = fs_h5_output_add(*out, dataset, ndim, shape, file_type, storage, 0);
    if (ret != FS_OK && *out) {
        fs_status closed = fs_h5_output_close(out);
        (void)closed; /* the first error stands */
    }
    return ret;
}

fs_status fs_h5_output_new_virtual(const char *tmp_path, const char *dataset, int ndim,
                                   const int64_t *shape, fs_dtype file_type,
                                   const fs_shard_set *sources, fs_h5_output **out)
{
    *out = NULL;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    fs_status ret = dcpl < 0 ? fs_h5_fail(FS_ERR_RUNTIME, "cannot describe the output dataset")
                             : set_mappings(dcpl, ndim, shape, sources, dataset);
    if (ret == FS_OK)
        ret = output_alloc(MPI_COMM_SELF, tmp_path, 0, H5I_INVALID_HID, out);
    if (ret == FS_OK)
        ret = output_open_file(*out, H5P_DEFAULT, 0);
    if (ret == FS_OK)
        ret = output_create_dataset(*out, dataset, ndim, shape, file_type, dcpl);
    if (ret != FS_OK && *out) {
        fs_status closed = fs_h5_output_close(out);
        (void)closed; /* the first error stands */
    }
    return fs_h5_close_ids(ret, tmp_path, 1, dcpl);
}

void fs_h5_output_set_name(fs_h5_output *o, const char *name)
{
    char *copy = strdup(name);
    if (!copy)
        return; /* messages keep naming the temporary (see h5io.h) */
    free(o->name);
    o->name = copy;
}

/* Rows of the map's memory longer than the box's (each axis but the last
 * whole, every element of the last: the padded rows of a real array in
 * complex storage): how many, else 0. */
static int64_t padded_rows(const fs_io_map *map)
{
    const fs_box *box = &map->file_box;
    int last = box->ndim - 1;
    if (map->mem_stride_last != 1 || map->fold_inner > 0 || fs_box_elems(box) == 0 ||
        map->mem_dims[last] == box->count[last])
        return 0;
    int64_t rows = 1;
    for (int k = 0; k < last; k++) {
        if (map->mem_dims[k] != box->count[k] || map->mem_start[k] != 0)
            return 0;
        rows *= box->count[k];
    }
    return rows;
}

/* The padded rows' elements moved in place to the front of data, one row
 * after the other (pack), or back to their rows (unpack). */
static void move_rows(const fs_io_map *map, int64_t rows, void *data, int pack)
{
    int last = map->file_box.ndim - 1;
    size_t eb = fs_dtype_bytes(map->mem_type), n = (size_t)map->file_box.count[last] * eb;
    size_t pitch = (size_t)map->mem_dims[last] * eb, first = (size_t)map->mem_start[last] * eb;
    char *base = data;
    for (int64_t i = 0; i < rows; i++) {
        int64_t r = pack ? i : rows - 1 - i; /* neither way overwrites a row still to move */
        char *row = base + (size_t)r * pitch + first, *packed = base + (size_t)r * n;
        memmove(pack ? packed : row, pack ? row : packed, n);
    }
}

fs_status fs_h5_output_write(fs_h5_output *o, const fs_io_map *map, void *data, int keep,
                             fs_io_progress progress, void *ctx)
{
    /* Packing overwrites what lies between the rows: padding, or values
     * nobody reads again; with keep, values are written where they lie. */
    int64_t rows = keep && !map->mem_padding ? 0 : padded_rows(map);
    if (rows > 0) {
        fs_io_map packed = *map;
        int last = map->file_box.ndim - 1;
        packed.mem_dims[last] = map->file_box.count[last];
        packed.mem_start[last] = 0;
        move_rows(map, rows, data, 1);
        fs_status ret = fs_h5_output_write(o, &packed, data, 0, progress, ctx);
        if (keep)
            move_rows(map, rows, data, 0);
        return ret;
    }
    io_transfer x = {
        .comm = o->comm,
        .did = o->did,
        .dxpl = o->dxpl,
        .writing = 1,
        .piece_bytes = map->mem_stride_last != 1 ? FS_IO_STAGE_BYTES : FS_IO_CALL_BYTES,
        .name = o->name ? o->name : o->path,
        .disk = o->path,
        .abandon_on_failure = o->collective && o->mpio,
    };
    io_pieces pc = plan_pieces(map, x.piece_bytes);
    void *stage = NULL;
    fs_status ret = begin_transfer(&x, map, &pc, &stage);
    if (ret == FS_OK)
        ret = run_transfer(&x, map, &pc, stage, data, progress, ctx);
    free(stage);
    return o->mpio ? fs_error_agree_shared(o->comm, ret) : ret;
}

fs_status fs_h5_output_raw(fs_h5_output *o, fs_dtype mem_type, fs_h5_raw *raw, const char **path)
{
    *path = o->path;
    raw->usable = 0;
    raw->offset = -1;
    fs_status ret = o->mpio && !o->collective && o->did >= 0 ? raw_layout(o->did, mem_type, raw) : FS_OK;
    /* The same metadata on every rank: the same verdict, unless one failed. */
    int mine[2] = {ret != FS_OK, !raw->usable}, all[2];
    fs_status st = fs_allreduce(o->comm, mine, all, 2, MPI_INT, MPI_MAX);
    if (st != FS_OK && ret == FS_OK)
        ret = st;
    if (all[0] || all[1])
        raw->usable = 0;
    return ret;
}

fs_status fs_h5_output_raw_done(fs_h5_output *o, fs_status local)
{
    return fs_error_agree_shared(o->comm, local);
}

const char *fs_h5_output_name(const fs_h5_output *o)
{
    return output_name(o);
}

fs_status fs_h5_output_attr_string(fs_h5_output *o, const char *name, const char *value)
{
    fs_status ret = FS_OK;
    hid_t type = H5Tcopy(H5T_C_S1), space = H5Screate(H5S_SCALAR), attr = H5I_INVALID_HID;
    /* Variable-length UTF-8: h5py returns it as str, not bytes. */
    if (type < 0 || space < 0 || H5Tset_size(type, H5T_VARIABLE) < 0 ||
        H5Tset_cset(type, H5T_CSET_UTF8) < 0 ||
        (attr = H5Acreate2(o->did, name, type, space, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
        H5Awrite(attr, type, &value) < 0)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot write attribute %s", output_name(o), name);
    return collective_failed(o, fs_h5_close_ids(ret, output_name(o), 3, attr, space, type));
}

fs_status fs_h5_output_attr_numbers(fs_h5_output *o, const char *name, int rank,
                                    const int64_t *dims, fs_dtype type, const void *values)
{
    fs_status ret = FS_OK;
    hsize_t hdims[FS_LAYOUT_MAX_DIMS];
    for (int k = 0; k < rank; k++)
        hdims[k] = (hsize_t)dims[k];
    hid_t space = rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, hdims, NULL);
    int is_int = type == FS_DTYPE_INTEGER;
    hid_t ftype = is_int ? H5T_STD_I64LE : H5T_IEEE_F64LE;
    hid_t mtype = is_int ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
    hid_t attr = H5I_INVALID_HID;
    if (space < 0 || (attr = H5Acreate2(o->did, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
        H5Awrite(attr, mtype, values) < 0)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot write attribute %s", output_name(o), name);
    return collective_failed(o, fs_h5_close_ids(ret, output_name(o), 2, attr, space));
}

fs_status fs_h5_output_attr_int64s(fs_h5_output *o, const char *name, int n, const int64_t *values)
{
    int64_t dim = n;
    return fs_h5_output_attr_numbers(o, name, n < 0 ? 0 : 1, &dim, FS_DTYPE_INTEGER, values);
}

fs_status fs_h5_output_copy_attrs(fs_h5_output *o, const fs_input_attrs *a)
{
    return collective_failed(o, fs_h5_attrs_write(o->did, a, output_name(o)));
}

int64_t fs_h5_output_file(const fs_h5_output *o)
{
    return o->fid;
}

fs_status fs_h5_output_failed(const fs_h5_output *o, fs_status st)
{
    return collective_failed(o, st);
}

fs_status fs_h5_output_close(fs_h5_output **o)
{
    fs_status ret = FS_OK;
    fs_h5_output *p = *o;
    if (!p)
        return FS_OK;
    /* Closing flushes everything still cached, collectively through MPI-IO:
     * a full disk shows up here, and ends the job (collective_failed). */
    if (p->did >= 0 && H5Oclose(p->did) < 0)
        ret = collective_failed(p, fs_h5_fail_writing(p->path, FS_ERR_RUNTIME,
                                                      "%s: closing the dataset failed", output_name(p)));
    ret = fs_h5_close_ids(ret, p->path, 1, p->dxpl);
    if (p->fid >= 0 && H5Fclose(p->fid) < 0 && ret == FS_OK)
        ret = collective_failed(p, fs_h5_fail_writing(p->path, FS_ERR_RUNTIME,
                                                      "%s: closing the file failed", output_name(p)));
    if (writing == p)
        writing = NULL;
    free(p->path);
    free(p->name);
    free(p);
    *o = NULL;
    return ret;
}

/* ------------------------------------------------------------------ adding to a file */

/* The kind of the link at `name` in fid (the last component not followed):
 * H5L_TYPE_HARD, _SOFT, _EXTERNAL or a user-defined kind; H5L_TYPE_ERROR
 * when it cannot be told. */
static H5L_type_t link_kind(hid_t fid, const char *name)
{
#if H5_VERSION_GE(1, 12, 0)
    H5L_info2_t info;
    return H5Lget_info2(fid, name, &info, H5P_DEFAULT) < 0 ? H5L_TYPE_ERROR : info.type;
#else
    H5L_info_t info;
    return H5Lget_info(fid, name, &info, H5P_DEFAULT) < 0 ? H5L_TYPE_ERROR : info.type;
#endif
}

/* What is at `path` in the open file fid: the prefixes of the path first
 * (a dataset on the way blocks it as much as one at it). A soft, external
 * or user-defined link at any of them is refused (FS_ERR_OUTPUT), before
 * anything behind it is opened: writing through it would write where it
 * leads, another file (the input) or another place, not the copy.
 * Messages call the file `file`. */
static fs_status path_state_in(hid_t fid, const char *file, const char *path, fs_h5_path_state *state)
{
    char prefix[FS_PATH_MAX];
    size_t len = strlen(path);
    if (len >= sizeof prefix)
        return fs_error_set(FS_ERR_OUTPUT, "%s:%s: dataset path too long", file, path);
    *state = FS_H5_PATH_FREE;
    for (size_t end = 1; end <= len; end++) {
        if (end < len && path[end] != '/')
            continue;
        memcpy(prefix, path, end);
        prefix[end] = '\0';
        htri_t exists = H5Lexists(fid, prefix, H5P_DEFAULT);
        if (exists < 0)
            return fs_h5_fail(FS_ERR_OUTPUT, "%s: cannot look up %s", file, prefix);
        if (exists == 0)
            return FS_OK;
        H5L_type_t kind = link_kind(fid, prefix);
        if (kind == H5L_TYPE_ERROR)
            return fs_h5_fail(FS_ERR_OUTPUT, "%s: cannot look up %s", file, prefix);
        if (kind != H5L_TYPE_HARD)
            return fs_error_set(FS_ERR_OUTPUT, "%s:%s: %s is %s link; --add follows no link on "
                                "the result's path (it would write where the link leads)", file,
                                path, prefix, kind == H5L_TYPE_SOFT       ? "a soft"
                                              : kind == H5L_TYPE_EXTERNAL ? "an external"
                                                                          : "a user-defined");
        hid_t obj = H5Oopen(fid, prefix, H5P_DEFAULT);
        H5I_type_t type = obj >= 0 ? H5Iget_type(obj) : H5I_BADID;
        if (obj >= 0 && H5Oclose(obj) < 0)
            return fs_h5_fail(FS_ERR_OUTPUT, "%s: cannot close %s", file, prefix);
        /* A link that leads nowhere (H5Oopen failed) is not free either. */
        fs_status st = fs_h5_clear_errors(FS_OK);
        if (st != FS_OK)
            return st;
        if (end == len) {
            *state = type == H5I_DATASET ? FS_H5_PATH_DATASET : FS_H5_PATH_OTHER;
            return FS_OK;
        }
        if (type != H5I_GROUP) {
            *state = FS_H5_PATH_BLOCKED;
            return FS_OK;
        }
    }
    return FS_OK;
}

fs_status fs_h5_output_path_state(const char *file, const char *name, const char *path,
                                  fs_h5_path_state *state)
{
    *state = FS_H5_PATH_FREE;
    htri_t is_hdf5 = H5Fis_hdf5(file);
    if (is_hdf5 <= 0)
        return fs_h5_clear_errors(fs_error_set(FS_ERR_OUTPUT, "%s: not an HDF5 file; --add adds "
                                               "datasets to an HDF5 file", name));
    hid_t fid = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (fid < 0)
        return fs_h5_fail(FS_ERR_OUTPUT, "%s: cannot open the HDF5 file", name);
    fs_status st = path_state_in(fid, name, path, state);
    return fs_h5_close_ids(st, name, 1, fid);
}

/* path (from its first '/') as HDF5 resolves it, in place: empty and "."
 * components dropped ("//u", "/./u" and "/u/" are all "/u"). -1 when a
 * component is "..", which HDF5 takes for a link of that name, not the
 * parent group. */
static int normalise_dataset_path(char *path)
{
    char *out = path;
    for (char *p = path; *p;) {
        while (*p == '/')
            p++;
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return -1;
        if (n > 0 && !(n == 1 && p[0] == '.')) {
            *out++ = '/';
            memmove(out, p, n);
            out += n;
        }
        p += n;
    }
    if (out == path)
        *out++ = '/';
    *out = '\0';
    return 0;
}

fs_status fs_split_location(const char *arg, char **file, char **dataset)
{
    *file = NULL;
    *dataset = NULL;
    const char *sep = strstr(arg, ":/");
    size_t file_len = sep ? (size_t)(sep - arg) : strlen(arg);
    if (file_len == 0)
        return fs_error_set(FS_ERR_USAGE, "'%s': no file name", arg);
    *file = strndup(arg, file_len);
    if (sep)
        *dataset = strdup(sep + 1);
    if (!*file || (sep && !*dataset)) {
        free(*file);
        free(*dataset);
        *file = *dataset = NULL;
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    const char *why = NULL;
    if (*dataset && normalise_dataset_path(*dataset) != 0)
        why = "'..' in the dataset path (HDF5 reads it as a link named '..', not the parent group)";
    else if (*dataset && strcmp(*dataset, "/") == 0)
        why = "dataset path is the root group";
    if (why) {
        free(*file);
        free(*dataset);
        *file = *dataset = NULL;
        return fs_error_set(FS_ERR_USAGE, "'%s': %s", arg, why);
    }
    return FS_OK;
}
