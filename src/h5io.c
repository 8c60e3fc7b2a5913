/* h5io: see h5io.h. */
#include "config.h"

#include "h5io.h"

#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agree.h"
#include "atomic.h"
#include "h5common.h"

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

fs_io_map fs_io_map_plain(const fs_box *box, fs_dtype mem_type)
{
    fs_io_map m;
    memset(&m, 0, sizeof m);
    m.file_box = *box;
    m.mem_type = mem_type;
    m.mem_stride_last = 1;
    for (int k = 0; k < box->ndim; k++)
        m.mem_dims[k] = box->count[k];
    return m;
}

/* The pieces of a map for one collective call each: rows of the box's first
 * axis. Every rank makes the same number of calls (the largest count). */
typedef struct io_pieces {
    int64_t rows_per_call;
    int ncalls;
} io_pieces;

static fs_status plan_pieces(MPI_Comm comm, const fs_io_map *map, io_pieces *pc)
{
    const fs_box *box = &map->file_box;
    int64_t n = fs_box_elems(box);
    int64_t row_bytes = n > 0 ? n / box->count[0] * (int64_t)fs_dtype_bytes(map->mem_type) : 0;
    pc->rows_per_call = row_bytes > 0 ? FS_IO_CALL_BYTES / row_bytes : 1;
    if (pc->rows_per_call < 1)
        pc->rows_per_call = 1;
    int local = n > 0 ? (int)((box->count[0] + pc->rows_per_call - 1) / pc->rows_per_call) : 0;
    int err = MPI_Allreduce(&local, &pc->ncalls, 1, MPI_INT, MPI_MAX, comm);
    if (err != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Allreduce failed: %s", fs_mpi_strerror(err));
    return FS_OK;
}

/* The memory side of rows [first, first + rows) of a map's box. */
typedef struct mem_rows {
    hsize_t start[FS_LAYOUT_MAX_DIMS], stride[FS_LAYOUT_MAX_DIMS], count[FS_LAYOUT_MAX_DIMS];
} mem_rows;

static mem_rows memory_rows(const fs_io_map *map, int64_t first, int64_t rows)
{
    const fs_box *box = &map->file_box;
    mem_rows m;
    for (int k = 0; k < box->ndim; k++) {
        m.start[k] = (hsize_t)map->mem_start[k];
        m.stride[k] = 1;
        m.count[k] = (hsize_t)box->count[k];
    }
    m.start[0] += (hsize_t)first;
    m.count[0] = (hsize_t)rows;
    m.stride[box->ndim - 1] = (hsize_t)map->mem_stride_last;
    return m;
}

/* Rows [first, first + rows) of a box of the dataset itself. */
static int64_t select_box_rows(const fs_io_map *map, int64_t first, int64_t rows, hid_t fspace,
                               hid_t mspace)
{
    const fs_box *box = &map->file_box;
    mem_rows m = memory_rows(map, first, rows);
    hsize_t fstart[FS_LAYOUT_MAX_DIMS], fcount[FS_LAYOUT_MAX_DIMS];
    for (int k = 0; k < box->ndim; k++) {
        fstart[k] = (hsize_t)box->start[k];
        fcount[k] = (hsize_t)box->count[k];
    }
    fstart[0] += (hsize_t)first;
    fcount[0] = (hsize_t)rows;
    if (H5Sselect_hyperslab(fspace, H5S_SELECT_SET, fstart, NULL, fcount, NULL) < 0 ||
        H5Sselect_hyperslab(mspace, H5S_SELECT_SET, m.start, m.stride, m.count, NULL) < 0)
        return -1;
    return rows * (fs_box_elems(box) / box->count[0]);
}

/* Rows [first, first + rows) of a box of a 1-D file seen as (rows, inner):
 * rows of `cols` elements `inner` apart, the positions from the limit on
 * left out. */
static int64_t select_folded_rows(const fs_io_map *map, int64_t first, int64_t rows, hid_t fspace,
                                  hid_t mspace)
{
    const fs_box *box = &map->file_box;
    mem_rows m = memory_rows(map, first, rows);
    int64_t inner = map->fold_inner, r0 = box->start[0] + first, c0 = box->start[1],
            cols = box->count[1];
    int64_t limit = map->fold_limit > 0 ? map->fold_limit : INT64_MAX;
    int64_t full = 0; /* rows entirely below the limit */
    while (full < rows && (r0 + full) * inner + c0 + cols <= limit)
        full++;
    int64_t partial = 0; /* elements of the next row below the limit */
    if (full < rows && (r0 + full) * inner + c0 < limit)
        partial = limit - ((r0 + full) * inner + c0);
    if (H5Sselect_none(fspace) < 0 || H5Sselect_none(mspace) < 0)
        return -1;
    if (full > 0) {
        hsize_t fs = (hsize_t)(r0 * inner + c0), fst = (hsize_t)inner, fc = (hsize_t)full,
                fb = (hsize_t)cols;
        hsize_t mc[2] = {(hsize_t)full, m.count[1]};
        if (H5Sselect_hyperslab(fspace, H5S_SELECT_OR, &fs, &fst, &fc, &fb) < 0 ||
            H5Sselect_hyperslab(mspace, H5S_SELECT_OR, m.start, m.stride, mc, NULL) < 0)
            return -1;
    }
    if (partial > 0) {
        hsize_t fs = (hsize_t)((r0 + full) * inner + c0), fc = (hsize_t)partial;
        hsize_t ms[2] = {m.start[0] + (hsize_t)full, m.start[1]}, mc[2] = {1, (hsize_t)partial};
        if (H5Sselect_hyperslab(fspace, H5S_SELECT_OR, &fs, NULL, &fc, NULL) < 0 ||
            H5Sselect_hyperslab(mspace, H5S_SELECT_OR, ms, m.stride, mc, NULL) < 0)
            return -1;
    }
    return full * cols + partial;
}

/* Select piece c of the map in the file space and the memory space (both
 * `none` past this rank's end). Returns the elements selected, or -1. */
static int64_t select_piece(const fs_io_map *map, const io_pieces *pc, int c, hid_t fspace,
                            hid_t mspace)
{
    const fs_box *box = &map->file_box;
    int64_t first = (int64_t)c * pc->rows_per_call;
    if (fs_box_elems(box) == 0 || first >= box->count[0])
        return H5Sselect_none(fspace) < 0 || H5Sselect_none(mspace) < 0 ? -1 : 0;
    int64_t rows = box->count[0] - first < pc->rows_per_call ? box->count[0] - first : pc->rows_per_call;
    return map->fold_inner > 0 ? select_folded_rows(map, first, rows, fspace, mspace)
                               : select_box_rows(map, first, rows, fspace, mspace);
}

static hid_t memory_space(const fs_io_map *map)
{
    hsize_t dims[FS_LAYOUT_MAX_DIMS];
    int nd = map->file_box.ndim;
    for (int k = 0; k < nd; k++)
        dims[k] = map->mem_dims[k] > 0 ? (hsize_t)map->mem_dims[k] : 1;
    return H5Screate_simple(nd, dims, NULL);
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
    for (int k = 0; k < info->ndim; k++)
        dims[k] = (hsize_t)info->shape[k];
    fs_status ret = FS_OK;
    if (dcpl < 0 || (space = H5Screate_simple(info->ndim, dims, NULL)) < 0)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot describe the array the %lld shards make",
                         (long long)shards->n);
    if (ret == FS_OK)
        ret = fs_h5_element_type(info->dtype, 1, &type);
    if (ret == FS_OK)
        ret = set_mappings(dcpl, info->ndim, info->shape, shards, info->dataset);
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

fs_status fs_h5_read(MPI_Comm comm, const char *file, const fs_input_info *info,
                     const fs_shard_set *shards, const fs_io_map *map, void *data,
                     fs_io_progress progress, void *ctx)
{
    hid_t fid = H5I_INVALID_HID, did = H5I_INVALID_HID, fspace = H5I_INVALID_HID,
          mspace = H5I_INVALID_HID, mtype = H5I_INVALID_HID, dxpl = H5I_INVALID_HID;
    io_pieces pc;
    double done = 0, eb = (double)fs_dtype_bytes(map->mem_type);
    /* Virtual datasets are read by each rank alone, with the default driver. */
    int independent = shards || info->is_virtual;

    fs_status ret = plan_pieces(comm, map, &pc);
    if (ret != FS_OK)
        return ret;
    /* Independent reads: each rank's hyperslab at once. ROMIO's collective
     * (two-phase) read of this MPICH took 198 s for the 1 GiB per rank of a
     * 512^3 input, where independent reads take 3 s. */
    if ((ret = transfer_dxpl(0, &dxpl)) != FS_OK ||
        (ret = open_input(comm, file, info, shards, independent, &fid, &did)) != FS_OK)
        goto done;
    if ((fspace = H5Dget_space(did)) < 0) {
        ret = fs_h5_fail(FS_ERR_INPUT, "%s:%s: cannot open the dataset", file, info->dataset);
        goto done;
    }
    if ((ret = fs_h5_element_type(map->mem_type, 1, &mtype)) != FS_OK)
        goto done;
    if ((mspace = memory_space(map)) < 0) {
        ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot describe the input in memory");
        goto done;
    }
    for (int c = 0; c < pc.ncalls && ret == FS_OK; c++) {
        int64_t n = select_piece(map, &pc, c, fspace, mspace);
        if (n < 0)
            ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot select the input hyperslab");
        else if ((!independent || n > 0) && H5Dread(did, mtype, mspace, fspace, dxpl, data) < 0)
            ret = fs_h5_fail(FS_ERR_RUNTIME, "%s:%s: read failed", file, info->dataset);
        done += (double)(n > 0 ? n : 0) * eb;
        if (progress && n > 0)
            progress(ctx, done);
    }
done:
    ret = fs_h5_close_ids(ret, file, 4, mspace, mtype, fspace, did);
    if (fid >= 0 && H5Fclose(fid) < 0 && ret == FS_OK)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: close failed", file);
    return fs_h5_close_ids(ret, file, 1, dxpl);
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
    /* MPI_Abort gives the job the status (MPICH adds one line saying so).
     * HDF5 does not shut down at exit under MPI (fs_h5_init), so nothing
     * flushes the broken file after this. */
    MPI_Abort(MPI_COMM_WORLD, (int)st);
    for (;;)
        pause();
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
    fs_error_clear();
    fs_error_set(FS_ERR_RUNTIME, "%s: write failed (%s: %s)", writing->name ? writing->name : writing->path,
                 call, reason);
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

/* After independent writes, which involve no other rank: whether any rank
 * of the output failed. The lowest failing rank's status and message
 * become every rank's, so that no rank goes on alone into the collective
 * calls that follow (attributes, close), and the one message printed is
 * the failing rank's. */
static fs_status agree_writes(MPI_Comm comm, fs_status local)
{
    int rank, size, first;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed");
    int mine = local != FS_OK ? rank : size;
    int err = MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    if (err != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Allreduce failed: %s", fs_mpi_strerror(err));
    if (first == size)
        return FS_OK;
    struct {
        int status;
        char message[1024];
    } failure;
    memset(&failure, 0, sizeof failure);
    failure.status = (int)local;
    snprintf(failure.message, sizeof failure.message, "%s", fs_error_message());
    fs_status st = fs_bcast_bytes(comm, first, &failure, sizeof failure);
    if (st != FS_OK || rank == first)
        return st != FS_OK ? st : local;
    fs_error_clear();
    return fs_error_set((fs_status)failure.status, "%s", failure.message);
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

/* Create the file tmp_path through fapl and in it the dataset `dataset`
 * (groups on its path too) with the creation properties dcpl; *out is the
 * new output, or NULL after a failure. The output takes dxpl over, even
 * when it fails. */
static fs_status output_create(MPI_Comm comm, const char *tmp_path, hid_t fapl, hid_t dxpl,
                               const char *dataset, int ndim, const int64_t *shape,
                               fs_dtype file_type, hid_t dcpl, fs_h5_output **out)
{
    hid_t space = H5I_INVALID_HID, ftype = H5I_INVALID_HID, lcpl = H5I_INVALID_HID;
    *out = NULL;
    fs_h5_output *o = calloc(1, sizeof *o);
    if (!o || !(o->path = strdup(tmp_path))) {
        free(o);
        return fs_h5_close_ids(fs_error_set(FS_ERR_RUNTIME, "out of memory"), tmp_path, 1, dxpl);
    }
    o->fid = o->did = H5I_INVALID_HID;
    o->dxpl = dxpl;
    o->comm = comm;
    o->mpio = fapl != H5P_DEFAULT;
    hsize_t dims[FS_LAYOUT_MAX_DIMS];
    for (int k = 0; k < ndim; k++)
        dims[k] = (hsize_t)shape[k];
    fs_status ret = FS_OK;
    if ((space = H5Screate_simple(ndim, dims, NULL)) < 0 || (lcpl = H5Pcreate(H5P_LINK_CREATE)) < 0 ||
        H5Pset_create_intermediate_group(lcpl, 1) < 0)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot describe the output dataset");
    if (ret == FS_OK)
        ret = fs_h5_element_type(file_type, 0, &ftype);
    /* The temporary was created empty and exclusively by rank 0; HDF5 now
     * takes it over. */
    char *name = NULL;
    if (ret == FS_OK && fapl != H5P_DEFAULT)
        ret = fs_h5_mpio_name(tmp_path, &name);
    if (o->mpio)
        writing = o;
    if (ret == FS_OK && (o->fid = H5Fcreate(name ? name : tmp_path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot create the HDF5 file", tmp_path);
    free(name);
    /* Creating a chunked dataset allocates its chunks: collective metadata
     * writes, which a full disk fails on some ranks only. */
    if (ret == FS_OK && (o->did = H5Dcreate2(o->fid, dataset, ftype, space, lcpl, dcpl, H5P_DEFAULT)) < 0)
        ret = collective_failed(o, fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot create dataset %s", tmp_path,
                                              dataset));
    ret = fs_h5_close_ids(ret, tmp_path, 3, lcpl, ftype, space);
    if (ret != FS_OK) {
        /* The first error stands; closing frees what was made. */
        fs_status closed = fs_h5_output_close(&o);
        return ret != FS_OK ? ret : closed;
    }
    *out = o;
    return FS_OK;
}

fs_status fs_h5_output_new(MPI_Comm comm, const char *tmp_path, const char *dataset, int ndim,
                           const int64_t *shape, fs_dtype file_type, const fs_h5_storage *storage,
                           fs_h5_output **out)
{
    hid_t fapl = H5I_INVALID_HID, dcpl = H5I_INVALID_HID, dxpl = H5I_INVALID_HID;
    *out = NULL;
    fs_status ret = mpio_fapl(comm, &fapl);
    /* Every element is written; filling first would write the file twice. */
    if (ret == FS_OK && ((dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 ||
                         H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0 ||
                         set_storage(dcpl, ndim, shape, storage) < 0))
        ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot describe the output dataset");
    /* Filtered datasets can only be written collectively; otherwise each
     * rank writes its hyperslab independently (see fs_h5_read). */
    if (ret == FS_OK)
        ret = transfer_dxpl(storage && storage->deflate > 0, &dxpl);
    if (ret == FS_OK)
        ret = output_create(comm, tmp_path, fapl, dxpl, dataset, ndim, shape, file_type, dcpl, out);
    if (*out)
        (*out)->collective = storage && storage->deflate > 0;
    return fs_h5_close_ids(ret, tmp_path, 2, dcpl, fapl);
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
        ret = output_create(MPI_COMM_SELF, tmp_path, H5P_DEFAULT, H5I_INVALID_HID, dataset, ndim,
                            shape, file_type, dcpl, out);
    return fs_h5_close_ids(ret, tmp_path, 1, dcpl);
}

/* What messages call the output. */
static const char *output_name(const fs_h5_output *o)
{
    return o->name ? o->name : o->path;
}

void fs_h5_output_set_name(fs_h5_output *o, const char *name)
{
    char *copy = strdup(name);
    if (!copy)
        return; /* messages keep naming the temporary (see h5io.h) */
    free(o->name);
    o->name = copy;
}

fs_status fs_h5_output_write(fs_h5_output *o, const fs_io_map *map, const void *data,
                             fs_io_progress progress, void *ctx)
{
    const char *name = o->name ? o->name : o->path;
    hid_t fspace = H5I_INVALID_HID, mtype = H5I_INVALID_HID, mspace = H5I_INVALID_HID;
    double done = 0, eb = (double)fs_dtype_bytes(map->mem_type);
    io_pieces pc;
    fs_status ret = plan_pieces(o->comm, map, &pc);
    if (ret == FS_OK)
        ret = fs_h5_element_type(map->mem_type, 1, &mtype);
    if (ret == FS_OK && ((fspace = H5Dget_space(o->did)) < 0 || (mspace = memory_space(map)) < 0))
        ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot describe the output hyperslab");
    for (int c = 0; c < pc.ncalls && ret == FS_OK; c++) {
        int64_t n = select_piece(map, &pc, c, fspace, mspace);
        if (n < 0)
            ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot select the output hyperslab");
        else if (H5Dwrite(o->did, mtype, mspace, fspace, o->dxpl, data) < 0)
            ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: write failed", name);
        if (o->collective)
            collective_failed(o, ret);
        done += (double)(n > 0 ? n : 0) * eb;
        if (progress && n > 0)
            progress(ctx, done);
    }
    ret = fs_h5_close_ids(ret, name, 3, mspace, mtype, fspace);
    return o->mpio ? agree_writes(o->comm, ret) : ret;
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

fs_status fs_h5_output_close(fs_h5_output **o)
{
    fs_status ret = FS_OK;
    fs_h5_output *p = *o;
    if (!p)
        return FS_OK;
    /* Closing flushes everything still cached, collectively through MPI-IO:
     * a full disk shows up here, and ends the job (collective_failed). */
    if (p->did >= 0 && H5Dclose(p->did) < 0)
        ret = collective_failed(p, fs_h5_fail(FS_ERR_RUNTIME, "%s: closing the dataset failed",
                                              output_name(p)));
    ret = fs_h5_close_ids(ret, p->path, 1, p->dxpl);
    if (p->fid >= 0 && H5Fclose(p->fid) < 0 && ret == FS_OK)
        ret = collective_failed(p, fs_h5_fail(FS_ERR_RUNTIME, "%s: closing the file failed (disk "
                                              "full?)", output_name(p)));
    if (writing == p)
        writing = NULL;
    free(p->path);
    free(p->name);
    free(p);
    *o = NULL;
    return ret;
}
