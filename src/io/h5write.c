/* SPDX-License-Identifier: GPL-3.0-or-later */
/* h5write: the writes of h5io.h: the output file (through MPI-IO, or
 * alone for a --shard-output master), its datasets, groups, tables and
 * attributes, padded rows packed for the write, and the end of the job
 * when a collective call fails part way. */
#include "config.h"

#include "io/h5io.h"

#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/atomic.h"
#include "core/collective.h"
#include "core/launcher.h"
#include "core/signals.h"
#include "io/h5common.h"
#include "io/h5xfer.h"
#include "io/mpio_guard.h"

/* Objects of FS_H5_ALIGN_ABOVE bytes or more start at a multiple of
 * FS_H5_ALIGNMENT in OUTPUT (the page size; fs_h5_output_open). */
#define FS_H5_ALIGN_ABOVE (64 * 1024)
#define FS_H5_ALIGNMENT 4096

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
        fs_mpio_guard_watch(o);
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
    fs_status ret = fs_h5_mpio_fapl(comm, &fapl);
    /* A large dataset's elements start on a page: a rank writing a run
     * that ends on a page boundary never shares that page with the next
     * run, which the page cache would otherwise read back from the disk
     * once it was dropped (out of core in a memory cgroup: a synchronous
     * read for every run of OUTPUT). */
    if (ret == FS_OK && H5Pset_alignment(fapl, FS_H5_ALIGN_ABOVE, FS_H5_ALIGNMENT) < 0)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot set the file's alignment");
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
        ret = fs_h5_transfer_dxpl(collective, &o->dxpl);
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

/* Rank 0 of o's communicator (every process of a file opened alone). */
static int writes_tables(const fs_h5_output *o)
{
    int r = 0;
    if (o->mpio)
        MPI_Comm_rank(o->comm, &r);
    return r == 0;
}

/* Collective: the contiguous dataset of a table created, its space in *space. */
static fs_status table_create(fs_h5_output *o, const char *path, int rank, const int64_t *dims,
                              fs_dtype type, hid_t *did, hid_t *space)
{
    hsize_t hdims[FS_LAYOUT_MAX_DIMS];
    for (int k = 0; k < rank; k++)
        hdims[k] = (hsize_t)dims[k];
    *did = H5I_INVALID_HID;
    *space = H5Screate_simple(rank, hdims, NULL);
    if (*space < 0)
        return fs_h5_fail(FS_ERR_RUNTIME, "cannot describe the dataset %s", path);
    hid_t ftype = type == FS_DTYPE_INTEGER ? H5T_STD_I64LE : H5T_IEEE_F64LE;
    if ((*did = H5Dcreate2(o->fid, path, ftype, *space, H5P_DEFAULT, H5P_DEFAULT,
                           H5P_DEFAULT)) < 0)
        return collective_failed(o, fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot create dataset %s",
                                               output_name(o), path));
    return FS_OK;
}

fs_status fs_h5_output_table(fs_h5_output *o, const char *path, int rank, const int64_t *dims,
                             fs_dtype type, const void *values)
{
    hid_t mtype = type == FS_DTYPE_INTEGER ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
    hid_t space, did, fspace = H5I_INVALID_HID, mspace = H5I_INVALID_HID;
    fs_status ret = table_create(o, path, rank, dims, type, &did, &space);
    /* The values are every rank's: rank 0 writes them, the others nothing. */
    int rank0 = writes_tables(o);
    if (ret == FS_OK && ((fspace = H5Scopy(space)) < 0 || (mspace = H5Scopy(space)) < 0 ||
                         (!rank0 && (H5Sselect_none(fspace) < 0 || H5Sselect_none(mspace) < 0))))
        ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot select the dataset %s", path);
    if (ret == FS_OK && H5Dwrite(did, mtype, mspace, fspace, H5P_DEFAULT, values) < 0)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot write dataset %s", output_name(o), path);
    ret = o->mpio ? fs_error_agree_shared(o->comm, ret) : ret;
    return fs_h5_close_ids(ret, o->path, 4, did, mspace, fspace, space);
}

fs_status fs_h5_output_table_fill(fs_h5_output *o, const char *path, int64_t n, fs_dtype type,
                                  fs_h5_fill_fn fill, const void *ctx)
{
    hid_t mtype = type == FS_DTYPE_INTEGER ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
    hid_t space, did, mspace = H5I_INVALID_HID;
    fs_status ret = table_create(o, path, 1, &n, type, &did, &space);
    int rank0 = writes_tables(o);
    int64_t piece = n < FS_H5_TABLE_PIECE ? n : FS_H5_TABLE_PIECE;
    void *buf = rank0 ? malloc((size_t)(piece > 0 ? piece : 1) * 8) : NULL;
    if (ret == FS_OK && rank0 && !buf)
        ret = fs_error_set(FS_ERR_RUNTIME, "out of memory");
    hsize_t one = 1;
    if (ret == FS_OK && (mspace = H5Screate_simple(1, &one, NULL)) < 0)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot select the dataset %s", path);
    /* The same calls on every rank; rank 0 alone selects the elements. */
    for (int64_t first = 0; ret == FS_OK && first < n; first += piece) {
        hsize_t at = (hsize_t)first, cnt = (hsize_t)(n - first < piece ? n - first : piece);
        if (rank0)
            fill(ctx, first, (int64_t)cnt, buf);
        herr_t sel = H5Sset_extent_simple(mspace, 1, &cnt, NULL);
        if (sel >= 0)
            sel = rank0 ? H5Sselect_hyperslab(space, H5S_SELECT_SET, &at, NULL, &cnt, NULL)
                        : H5Sselect_none(space) < 0 ? -1 : H5Sselect_none(mspace);
        if (sel < 0)
            ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot select the dataset %s", path);
        else if (H5Dwrite(did, mtype, mspace, space, H5P_DEFAULT, rank0 ? buf : &one) < 0)
            ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot write dataset %s", output_name(o), path);
    }
    free(buf);
    ret = o->mpio ? fs_error_agree_shared(o->comm, ret) : ret;
    return fs_h5_close_ids(ret, o->path, 3, did, mspace, space);
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
                             : fs_h5_set_mappings(dcpl, ndim, shape, sources, dataset);
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
    fs_h5_transfer x = {
        .comm = o->comm,
        .did = o->did,
        .dxpl = o->dxpl,
        .writing = 1,
        .piece_bytes = map->mem_stride_last != 1 ? FS_IO_STAGE_BYTES : FS_IO_CALL_BYTES,
        .name = o->name ? o->name : o->path,
        .disk = o->path,
        .abandon_on_failure = o->collective && o->mpio,
    };
    fs_h5_pieces pc = fs_h5_plan_pieces(map, x.piece_bytes);
    void *stage = NULL;
    fs_status ret = fs_h5_transfer_begin(&x, map, &pc, &stage);
    if (ret == FS_OK)
        ret = fs_h5_transfer_run(&x, map, &pc, stage, data, progress, ctx);
    free(stage);
    return o->mpio ? fs_error_agree_shared(o->comm, ret) : ret;
}

fs_status fs_h5_output_raw(fs_h5_output *o, fs_dtype mem_type, fs_h5_raw *raw, const char **path)
{
    *path = o->path;
    raw->usable = 0;
    raw->offset = -1;
    fs_status ret = o->mpio && !o->collective && o->did >= 0 ? fs_h5_raw_layout(o->did, mem_type, raw) : FS_OK;
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

const char *fs_h5_output_disk(const fs_h5_output *o)
{
    return o->path;
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
    fs_mpio_guard_forget(p);
    free(p->path);
    free(p->name);
    free(p);
    *o = NULL;
    return ret;
}

