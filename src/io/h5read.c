/* SPDX-License-Identifier: GPL-3.0-or-later */
/* h5read: the reads of h5io.h: an input (one file through MPI-IO, a
 * virtual dataset or --shards through a map file each rank opens alone),
 * the check that it did not change while it was read, and whether its
 * bytes can be read raw. */
#include "config.h"

#include "io/h5io.h"

#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic.h"
#include "core/collective.h"
#include "core/testhooks.h"
#include "io/h5common.h"
#include "io/h5xfer.h"

/* ------------------------------------------------------------------ shards */

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
        ret = fs_h5_set_mappings(dcpl, ndim, shape, shards, info->dataset);
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
    fs_status ret = independent ? FS_OK : fs_h5_mpio_fapl(comm, &fapl);
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

/* An input open for reading, as many times as needed. */
struct fs_h5_input {
    MPI_Comm comm;
    const char *file;
    const fs_input_info *info;
    int independent;          /* virtual datasets and shards: each rank alone */
    hid_t fid, did, dxpl;
    char name[FS_INPUT_NAME_MAX];
};

fs_status fs_h5_input_open(MPI_Comm comm, const char *file, const fs_input_info *info,
                           const fs_shard_set *shards, fs_h5_input **out)
{
    fs_h5_input *in = *out = calloc(1, sizeof *in);
    if (!in)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    *in = (fs_h5_input){comm, file, info, shards || info->is_virtual, H5I_INVALID_HID,
                        H5I_INVALID_HID, H5I_INVALID_HID, ""};
    fs_input_name(file, info, in->name, sizeof in->name);
    /* Independent reads: each rank's hyperslab at once. ROMIO's collective
     * (two-phase) read of this MPICH took 198 s for the 1 GiB per rank of a
     * 512^3 input, where independent reads take 3 s. */
    fs_status ret = fs_h5_transfer_dxpl(0, &in->dxpl);
    if (ret == FS_OK)
        ret = open_input(comm, file, info, shards, in->independent, &in->fid, &in->did);
    return ret;
}

fs_status fs_h5_input_read(fs_h5_input *in, const fs_io_map *map, void *data,
                           fs_io_progress progress, void *ctx, fs_finite *finite)
{
    int64_t slow_bytes = fs_testhooks_slow_read_bytes();
    fs_h5_transfer x = {
        .comm = in->comm,
        /* Virtual datasets are read by each rank alone, with the default
         * driver: a rank with nothing to read stays out. */
        .skip_empty = in->independent,
        .piece_bytes = slow_bytes > 0                ? slow_bytes
                       : map->mem_stride_last != 1 ? FS_IO_STAGE_BYTES
                                                   : FS_IO_CALL_BYTES,
        .pause_s = fs_testhooks_slow_read_seconds(),
        .name = in->name,
        .finite = finite,
        .slice = &in->info->slice,
        .did = in->did,
        .dxpl = in->dxpl,
    };
    fs_h5_pieces pc = fs_h5_plan_pieces(map, x.piece_bytes);
    void *stage = NULL;
    fs_status ret = fs_h5_transfer_begin(&x, map, &pc, &stage);
    if (ret == FS_OK)
        ret = fs_h5_transfer_run(&x, map, &pc, stage, data, progress, ctx);
    free(stage);
    return ret;
}

fs_status fs_h5_input_close(fs_h5_input **inp, fs_status local)
{
    fs_h5_input *in = *inp;
    if (!in)
        return local;
    fs_status ret = fs_h5_close_ids(local, in->file, 1, in->did);
    if (in->fid >= 0 && H5Fclose(in->fid) < 0 && ret == FS_OK)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: close failed", in->file);
    ret = fs_h5_close_ids(ret, in->file, 1, in->dxpl);
    ret = fs_h5_input_unchanged(in->comm, in->file, in->info, ret);
    free(in);
    *inp = NULL;
    return ret;
}

fs_status fs_h5_read(MPI_Comm comm, const char *file, const fs_input_info *info,
                     const fs_shard_set *shards, const fs_io_map *map, void *data,
                     fs_io_progress progress, void *ctx, fs_finite *finite)
{
    fs_h5_input *in = NULL;
    fs_status ret = fs_h5_input_open(comm, file, info, shards, &in);
    if (ret == FS_OK)
        ret = fs_h5_input_read(in, map, data, progress, ctx, finite);
    return fs_h5_input_close(&in, ret);
}

/* ------------------------------------------------------------------ raw bytes */

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
        ret = fs_h5_raw_layout(did, a->mem_type, &a->raw);
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

