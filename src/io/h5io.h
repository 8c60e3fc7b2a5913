/* SPDX-License-Identifier: GPL-3.0-or-later */
/* h5io: parallel HDF5 reading and writing of fftshard's arrays.
 *
 * Input: after rank 0 has probed the file (h5probe.h), every rank opens it
 * through MPI-IO and reads its box (independent requests), converted to the
 * memory type. A virtual dataset (HDF5 1.10 cannot read one through MPI-IO)
 * is opened by every rank with the default driver and read independently;
 * so are shards, through a virtual dataset in a small temporary file that
 * maps them onto the whole array.
 * Output: a float or complex dataset (h5py's {r,i} compound, committed
 * as the named type netCDF-4 reads, _PFNC_*_COMPLEX_TYPE) in an atomic
 * temporary file (see atomic.h), written box by box (independent requests,
 * collective for compressed output), with the attributes listed in
 * fftshard(1) (FILES), or a virtual dataset over shard files.
 * Owns the MPI-IO file access and transfer property lists, the output
 * object (fs_h5_output), the split of large requests into calls of at
 * most FS_IO_CALL_BYTES, and the staging buffer of strided memory. Every HDF5 result is checked; failures come back
 * as a status with our message (HDF5's stack only with --verbose). */
#ifndef FS_H5IO_H
#define FS_H5IO_H

#include <mpi.h>
#include <stdint.h>

#include "core/errors.h"
#include "io/finite.h"
#include "io/h5attrs.h"
#include "io/h5probe.h"
#include "io/iomap.h"
#include "core/layout.h"

/* Called after each piece of a large read or write with the bytes done so
 * far on this rank (may be NULL). */
typedef void (*fs_io_progress)(void *ctx, double bytes_done);

/* Bytes per rank and call: large requests are cut into pieces (MPI-IO
 * counts are ints, and progress needs steps). Pieces of 16 to 512 MiB read
 * and write equally fast. */
#define FS_IO_CALL_BYTES ((int64_t)32 * 1024 * 1024)
/* Memory every other element of which is read or written (real values in
 * complex slots, mem_stride_last 2) goes through a staging buffer of at
 * most this many bytes per rank: HDF5 moves such a selection element by
 * element, about a hundred times slower than contiguous memory. */
#define FS_IO_STAGE_BYTES ((int64_t)4 * 1024 * 1024)

/* Collective: read the file side of `map` into `data`, in calls of at most
 * FS_IO_CALL_BYTES per rank (FS_IO_STAGE_BYTES when staged); every rank
 * makes the same number of calls, those with less or nothing to read
 * selecting nothing. HDF5 converts the file's type to mem_type. With
 * `shards` (may be NULL) the array is the shards' (info->dataset in each),
 * not file's. The memory outside the map's elements is left as it is.
 * With `finite` (may be NULL; begun with the map's fold_inner) each piece's
 * NaN and Inf are counted there as it arrives (finite.h), on this rank. */
fs_status fs_h5_read(MPI_Comm comm, const char *file, const fs_input_info *info,
                     const fs_shard_set *shards, const fs_io_map *map, void *data,
                     fs_io_progress progress, void *ctx, fs_finite *finite);

/* The same in parts, for a caller that reads many boxes of one input (the
 * out-of-core passes): collective open (through MPI-IO, or each rank alone
 * for a virtual dataset and shards); each read collective as fs_h5_read's;
 * the close collective, with fs_h5_input_unchanged's check (local: this
 * rank's status of the reads). *in is freed and set to NULL, also when
 * the open failed. */
typedef struct fs_h5_input fs_h5_input;
fs_status fs_h5_input_open(MPI_Comm comm, const char *file, const fs_input_info *info,
                           const fs_shard_set *shards, fs_h5_input **in);
fs_status fs_h5_input_read(fs_h5_input *in, const fs_io_map *map, void *data,
                           fs_io_progress progress, void *ctx, fs_finite *finite);
fs_status fs_h5_input_close(fs_h5_input **in, fs_status local);

/* Collective, after every rank's read of the input (local: this rank's
 * status of it): once every rank is done, rank 0 looks at `file` again and
 * compares it with the probe's stamp (info->stamp; not for shards). A file
 * whose size, inode or modification time changed meanwhile (truncated,
 * rewritten, replaced) is FS_ERR_RUNTIME "INPUT changed while it was
 * read": what was read may be part old, part new, or zeros where
 * HDF5's MPI-IO driver met the end of a shortened file (it fills a short
 * read with zeros and reports no error). Then every rank returns that
 * status, whatever it had (a read that failed because of the change);
 * otherwise local. The caller agrees. */
fs_status fs_h5_input_unchanged(MPI_Comm comm, const char *file, const fs_input_info *info,
                                fs_status local);

/* Where a dataset's elements lie in its file as raw bytes, for a caller
 * that moves them itself (rawio.h): usable when the dataset is stored
 * contiguously in the file itself (no filters, no external file, space
 * allocated) with every element exactly as mem_type in this process's
 * memory; offset is then the byte offset of its first element. */
typedef struct fs_h5_raw {
    int usable;
    int64_t offset;
} fs_h5_raw;

/* Collective: whether the input dataset of `file` (info from the probe;
 * shards, virtual datasets and slices never are) can be read raw as
 * mem_type. Rank
 * 0 looks and tells the others; a file it cannot judge is not usable, and
 * that is no error. */
fs_status fs_h5_raw_input(MPI_Comm comm, const char *file, const fs_input_info *info,
                          const fs_shard_set *shards, fs_dtype mem_type, fs_h5_raw *raw);

/* An output file being written. */
typedef struct fs_h5_output fs_h5_output;

/* How the output dataset is stored: contiguous (chunk_ndim 0), or in chunks
 * (clipped to the shape), deflate > 0 compressing them (shuffle, then
 * deflate at that level). */
typedef struct fs_h5_storage {
    int chunk_ndim;
    int64_t chunk[FS_LAYOUT_MAX_DIMS];
    int deflate;
} fs_h5_storage;

/* Collective: open the temporary tmp_path for writing through MPI-IO, as a
 * new, empty HDF5 file (existing 0: rank 0 created it empty), or as the
 * HDF5 file it holds (existing nonzero: a copy of OUTPUT, --add). No
 * dataset yet: see fs_h5_output_add. */
fs_status fs_h5_output_open(MPI_Comm comm, const char *tmp_path, int existing, fs_h5_output **out);

/* Collective: create the dataset `dataset` of the given shape and element
 * type in o's file (missing groups on its path created; the previous
 * dataset closed): writes and attributes go to it from now on. storage may
 * be NULL (contiguous). With `replace`, whatever is linked at `dataset` is
 * unlinked first; HDF5 does not reclaim its space. */
fs_status fs_h5_output_add(fs_h5_output *o, const char *dataset, int ndim, const int64_t *shape,
                           fs_dtype file_type, const fs_h5_storage *storage, int replace);

/* Collective: create the group `path` (missing groups on the way too;
 * with `replace`, whatever is linked there is unlinked first); attributes
 * go to it from now on. */
fs_status fs_h5_output_group(fs_h5_output *o, const char *path, int replace);
/* Collective, same values on every rank: a small contiguous dataset of
 * float64 (type FS_DTYPE_FLOAT64) or int64 (FS_DTYPE_INTEGER) values of
 * `rank` dimensions, written whole by rank 0. */
fs_status fs_h5_output_table(fs_h5_output *o, const char *path, int rank, const int64_t *dims,
                             fs_dtype type, const void *values);

/* Collective. Create the dataset `dataset` of the given shape and element
 * type (complex types as h5py's {r,i} compound) in the (already created,
 * empty) temporary file tmp_path; missing groups on its path are created.
 * storage may be NULL (contiguous). */
fs_status fs_h5_output_new(MPI_Comm comm, const char *tmp_path, const char *dataset,
                           int ndim, const int64_t *shape, fs_dtype file_type,
                           const fs_h5_storage *storage, fs_h5_output **out);
/* One process: create in tmp_path a virtual dataset of the given shape that
 * maps sources->boxes[i] to the whole dataset `dataset` of sources->files[i]
 * (names relative to tmp_path's directory). Attributes go on it as on any
 * output; fs_h5_output_write is not for it. */
fs_status fs_h5_output_new_virtual(const char *tmp_path, const char *dataset, int ndim,
                                   const int64_t *shape, fs_dtype file_type,
                                   const fs_shard_set *sources, fs_h5_output **out);
/* The name messages give the file (the final path rather than the
 * temporary's); a copy is kept. Without memory for the copy, messages keep
 * naming the temporary: the name is only for the reader. */
void fs_h5_output_set_name(fs_h5_output *o, const char *name);
/* Collective: write the memory side of `map` from data into the file side,
 * in pieces as fs_h5_read reads; HDF5 converts to the file type. Memory in
 * rows longer than the box's (a real array in complex storage, the half of
 * a full complex row) is packed in place for the write (HDF5 writes such a
 * selection at half the speed of contiguous memory), which overwrites what
 * lies between the rows: without `keep` it is left packed; with `keep`
 * the rows are put back after where the rest is padding (map->mem_padding;
 * what the padding held is not kept), and otherwise written where they lie,
 * unpacked. A failure is every rank's (the failing rank's message), or,
 * inside a collective transfer, ends the job (see fs_h5_abandon). */
fs_status fs_h5_output_write(fs_h5_output *o, const fs_io_map *map, void *data, int keep,
                             fs_io_progress progress, void *ctx);
/* The same for o's current dataset (every rank asks HDF5, which answers
 * from the metadata it holds): usable only in a file written through
 * MPI-IO by independent transfers. *path (out) is o's file, valid while o
 * is. */
fs_status fs_h5_output_raw(fs_h5_output *o, fs_dtype mem_type, fs_h5_raw *raw, const char **path);
/* Collective, after this rank wrote its part of o's dataset itself (local:
 * its status): every rank returns the lowest failing rank's status and
 * message, as after fs_h5_output_write. */
fs_status fs_h5_output_raw_done(fs_h5_output *o, fs_status local);
/* What messages call o's file, and the file on disk (its temporary). */
const char *fs_h5_output_name(const fs_h5_output *o);
const char *fs_h5_output_disk(const fs_h5_output *o);
/* Collective, same values on every rank: attributes on the dataset. When
 * HDF5 fails in these and in fs_h5_output_close on an MPI-IO file, the
 * ranks' HDF5 states differ and the job ends (fs_h5_abandon). */
fs_status fs_h5_output_attr_string(fs_h5_output *o, const char *name, const char *value);
/* n < 0 writes a scalar holding values[0]. */
fs_status fs_h5_output_attr_int64s(fs_h5_output *o, const char *name, int n, const int64_t *values);
/* An attribute array of `rank` dims (0: scalar) of int64 (type
 * FS_DTYPE_INTEGER) or float64 (FS_DTYPE_FLOAT64) values, row-major. */
fs_status fs_h5_output_attr_numbers(fs_h5_output *o, const char *name, int rank,
                                    const int64_t *dims, fs_dtype type, const void *values);
/* Collective, the same block on every rank: the input's own attributes
 * (h5attrs.h) onto the dataset, or the group of fs_h5_output_group. */
fs_status fs_h5_output_copy_attrs(fs_h5_output *o, const fs_input_attrs *a);
/* Collective: close everything; *o set to NULL. Returns the close status. */
fs_status fs_h5_output_close(fs_h5_output **o);
/* The open file, for the metadata calls of h5scales.h; and the failure of
 * such a collective call (on an MPI-IO file the job ends, as above). */
int64_t fs_h5_output_file(const fs_h5_output *o); /* an hid_t */
fs_status fs_h5_output_failed(const fs_h5_output *o, fs_status st);

/* What is at a dataset path of an existing file. */
typedef enum fs_h5_path_state {
    FS_H5_PATH_FREE,      /* nothing: a dataset can be created there */
    FS_H5_PATH_DATASET,   /* a dataset, which only --force replaces */
    FS_H5_PATH_OTHER,     /* a group, a type, or a link that leads nowhere */
    FS_H5_PATH_BLOCKED,   /* something not a group on the way: nothing can be created there */
} fs_h5_path_state;

/* One process (rank 0), serially: what `file` holds at `path` (messages
 * call the file `name`). FS_ERR_OUTPUT when file is not an HDF5 file or
 * cannot be read, or when the path, or any group on the way, is a soft,
 * external or user-defined link (never followed). */
fs_status fs_h5_output_path_state(const char *file, const char *name, const char *path,
                                  fs_h5_path_state *state);

/* End the job from this rank alone, at once, with status st: a collective
 * call on an output failed here, and the other ranks may wait in it. With
 * speak nonzero print our message first (rank 0 at once, others after a
 * pause in which rank 0's abort may end them). Removes every temporary this
 * process registered (atomic.h: each rank registers them all), then
 * MPI_Abort. Enters no collective call. Does not return. */
void fs_h5_abandon(fs_status st, int speak) __attribute__((noreturn));

/* Split "FILE.h5:/path" into file and dataset. Only a colon followed by '/'
 * separates, so paths with colons elsewhere still work. *file and *dataset
 * are malloc'ed (dataset NULL when absent). The dataset path comes back as
 * HDF5 resolves it ("//u", "/./u", "/u/": "/u"), so that paths are compared
 * as HDF5 sees them; an empty file name, ".." in the path, or the root group
 * is FS_ERR_USAGE. */
fs_status fs_split_location(const char *arg, char **file, char **dataset);

#endif
