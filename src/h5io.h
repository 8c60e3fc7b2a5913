/* h5io: parallel HDF5 input and output of fftshard.
 *
 * Input: rank 0 probes the file alone (does it exist, which dataset, what
 * type and shape) so errors are decided once and worded by us; then every
 * rank opens it through MPI-IO and reads its box (independent requests), converted to
 * complex double in place. A virtual dataset (HDF5 1.10 cannot read one
 * through MPI-IO) is opened by every rank with the default driver and read
 * independently; so are shards, through a virtual dataset in a small
 * temporary file that maps them onto the whole array.
 * Output: a float or complex dataset (h5py's {r,i} compound) in an atomic temporary
 * file (see atomic.h), written box by box (independent requests, collective
 * for compressed output), with the
 * attributes of DESIGN.md section 3. HDF5's automatic error printing is off;
 * with --verbose the HDF5 error stack is shown under our message. */
#ifndef FS_H5IO_H
#define FS_H5IO_H

#include <mpi.h>
#include <stdint.h>
#include "dtype.h"
#include "errors.h"
#include "layout.h"

#define FS_PATH_MAX 1024


/* What the probe learned; plain data so it can be broadcast as bytes. */
typedef struct fs_input_info {
    char dataset[FS_PATH_MAX];   /* absolute path in the file */
    int ndim;
    int64_t shape[FS_LAYOUT_MAX_DIMS];
    fs_dtype dtype;
    char type_name[64];          /* e.g. "float32", "int16", "complex64" */
    int64_t last_size_attr;      /* the dataset's last_size attribute, 0 when absent */
    int is_virtual;              /* a virtual dataset (its sources were checked) */
    int has_offset;              /* an "offset" attribute: a shard's place in the whole */
    int64_t offset[FS_LAYOUT_MAX_DIMS];
    int64_t nshards;             /* --shards: how many files make the array (0: one file) */
} fs_input_info;

/* The files of a sharded array: file i holds the box boxes[i] of the whole
 * (its dataset has the box's shape). */
typedef struct fs_shard_set {
    int64_t n;
    char **files;
    fs_box *boxes;
} fs_shard_set;

void fs_shard_set_free(fs_shard_set *set);

/* Start HDF5 quietly (automatic error printing off). */
void fs_h5_init(void);

/* Rank 0 only (serial). dataset may be NULL: the only dataset in the file.
 * FS_ERR_INPUT with a message for every unusable case. */
fs_status fs_h5_probe(const char *file, const char *dataset, fs_input_info *info);

/* Called after each piece of a large read or write with the bytes done so
 * far on this rank (may be NULL). */
typedef void (*fs_io_progress)(void *ctx, double bytes_done);

/* Where a hyperslab of the file lives in memory. The file side is a box of
 * the dataset, or, for a 1-D dataset seen as 2-D (fold_inner > 0: shape
 * (n / fold_inner, fold_inner), row-major), a box of that view, the
 * positions from fold_limit on left out (0: none). The memory side is an
 * array of mem_type with dims mem_dims (as many as the box has), the box's
 * first element at mem_start, every element of the last axis or every
 * other (mem_stride_last 2: the real parts of complex elements). */
typedef struct fs_io_map {
    fs_box file_box;
    int64_t fold_inner, fold_limit;
    fs_dtype mem_type;
    int64_t mem_dims[FS_LAYOUT_MAX_DIMS];
    int64_t mem_start[FS_LAYOUT_MAX_DIMS];
    int mem_stride_last;
} fs_io_map;

/* The map of a box stored alone, row-major, as mem_type elements. */
fs_io_map fs_io_map_plain(const fs_box *box, fs_dtype mem_type);

/* Bytes per rank and collective call: large requests are cut along the
 * box's first axis (MPI-IO counts are ints, and progress needs steps). */
#define FS_IO_CALL_BYTES ((int64_t)512 * 1024 * 1024)

/* Collective: read the file side of `map` into `data`, in calls of at most
 * FS_IO_CALL_BYTES per rank. Ranks with an empty box take part and read
 * nothing. HDF5 converts the file's type to mem_type. With `shards` (may be
 * NULL) the array is the shards' (info->dataset in each), not file's. */
fs_status fs_h5_read(MPI_Comm comm, const char *file, const fs_input_info *info,
                     const fs_shard_set *shards, const fs_io_map *map, void *data,
                     fs_io_progress progress, void *ctx);

/* Rank 0 only: the source files of the virtual dataset `dataset` in `file`
 * as stored (relative names are relative to file's directory); *n 0 when
 * it is not virtual. Free with fs_strings_free. */
fs_status fs_h5_virtual_files(const char *file, const char *dataset, char ***names, int64_t *n);
void fs_strings_free(char **names, int64_t n);

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
 * temporary's). */
void fs_h5_output_set_name(fs_h5_output *o, const char *name);
/* Collective: write the memory side of `map` from data into the file side;
 * HDF5 converts to the file type. */
fs_status fs_h5_output_write(fs_h5_output *o, const fs_io_map *map, const void *data,
                             fs_io_progress progress, void *ctx);
/* Collective, same values on every rank: attributes on the dataset. */
fs_status fs_h5_output_attr_string(fs_h5_output *o, const char *name, const char *value);
/* n < 0 writes a scalar holding values[0]. */
fs_status fs_h5_output_attr_int64s(fs_h5_output *o, const char *name, int n, const int64_t *values);
/* An attribute array of `rank` dims (0: scalar) of int64 (type
 * FS_DTYPE_INTEGER) or float64 (FS_DTYPE_FLOAT64) values, row-major. */
fs_status fs_h5_output_attr_numbers(fs_h5_output *o, const char *name, int rank,
                                    const int64_t *dims, fs_dtype type, const void *values);
/* Collective: close everything; *o set to NULL. Returns the close status. */
fs_status fs_h5_output_close(fs_h5_output **o);


#endif
