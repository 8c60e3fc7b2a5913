/* SPDX-License-Identifier: GPL-3.0-or-later */
/* h5xfer: see h5xfer.h. */
#include "config.h"

#include "io/h5xfer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/collective.h"
#include "io/h5common.h"

/* File access through MPI-IO on comm. */
fs_status fs_h5_mpio_fapl(MPI_Comm comm, hid_t *fapl)
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
fs_status fs_h5_transfer_dxpl(int collective, hid_t *dxpl)
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


/* This rank's pieces of at most piece_bytes of mem_type (no MPI). */
fs_h5_pieces fs_h5_plan_pieces(const fs_io_map *map, int64_t piece_bytes)
{
    const fs_box *box = &map->file_box;
    int64_t eb = (int64_t)fs_dtype_bytes(map->mem_type), inner = 1;
    fs_h5_pieces pc;
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
static fs_box piece_box(const fs_io_map *map, const fs_h5_pieces *pc, int64_t c)
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
static int64_t select_piece(const fs_io_map *map, const fs_input_slice *slice, const fs_h5_pieces *pc,
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


static void pause_seconds(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        continue;
}

/* Allocate the staging buffer (when the memory side is strided) and agree
 * on the number of calls: every rank learns of another's failure here,
 * before any call that the others would wait in. */
fs_status fs_h5_transfer_begin(const fs_h5_transfer *x, const fs_io_map *map, fs_h5_pieces *pc,
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
fs_status fs_h5_transfer_run(const fs_h5_transfer *x, const fs_io_map *map, const fs_h5_pieces *pc,
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

fs_status fs_h5_set_mappings(hid_t dcpl, int ndim, const int64_t *shape, const fs_shard_set *set,
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

fs_status fs_h5_raw_layout(hid_t did, fs_dtype mem_type, fs_h5_raw *raw)
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
