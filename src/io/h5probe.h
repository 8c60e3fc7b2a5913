/* SPDX-License-Identifier: GPL-3.0-or-later */
/* h5probe: what an HDF5 input holds, decided by rank 0 alone.
 *
 * Rank 0 probes the file serially with HDF5's default driver (does it
 * exist, which dataset, what element type and shape), so every unusable
 * input is refused once, before any parallel work, in our words. A virtual
 * dataset reads fill values where a source is missing, so its sources are
 * checked too (they exist, fftshard reads their type, they are large enough
 * for their mappings). A shard's "offset" attribute and what a forward run
 * recorded for the inverse ("last_size", "axes", "real_axis", "norm",
 * "axis_kinds", ...)
 * are read here; the dataset's other attributes are h5attrs' to copy.
 * Owns the description of an input: what the probe learned (fs_input_info) and the files of a sharded array
 * (fs_shard_set). HDF5's automatic error printing is off (fs_h5_init); with
 * --verbose the HDF5 error stack is shown under our message. Reading and
 * writing the arrays is h5io's job. */
#ifndef FS_H5PROBE_H
#define FS_H5PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/errors.h"
#include "io/slice.h"
#include "core/layout.h"

#define FS_PATH_MAX 1024
#define FS_RECORDED_WHY 96

/* What a forward run of fftshard recorded on its result (fftshard(1),
 * FILES AND CONVENTIONS), for an inverse run to default to: the values as
 * stored, which the planner interprets and checks against the input. */
#define FS_RECORDED_WINDOW 512
typedef struct fs_recorded {
    int forward;                 /* fftshard_version present and direction "forward" */
    char transform[8];           /* "c2c", "r2c" or "r2r"; "" when absent */
    char norm[16];               /* "backward", "ortho", "forward"; "" when absent */
    int naxes;                   /* 0: no usable axes attribute */
    int64_t axes[FS_LAYOUT_MAX_DIMS]; /* in the order given (versions without real_axis: sorted) */
    int64_t real_axis;           /* the halved axis of r2c; -1 when not recorded */
    int nkinds;                  /* "axis_kinds": the kind of each of axes (0: absent) */
    fs_r2r kinds[FS_LAYOUT_MAX_DIMS];
    /* Why a recorded value cannot be fftshard's, naming the attribute ("":
     * absent or usable; the value is then not taken): axes_bad covers the
     * axes and real_axis attributes. The inverse refuses what it would take. */
    char axes_bad[FS_RECORDED_WHY], norm_bad[FS_RECORDED_WHY], transform_bad[FS_RECORDED_WHY];
    char kinds_bad[FS_RECORDED_WHY];
    /* What the inverse gives back besides the input: the forward run's
     * windows ("window", "window_form"; "" none) and zero padding (the
     * "input_shape" it padded to "padded_shape"; nshape 0: none). */
    char window[FS_RECORDED_WINDOW];
    int window_sym;
    int nshape;
    int64_t input_shape[FS_LAYOUT_MAX_DIMS], padded_shape[FS_LAYOUT_MAX_DIMS];
} fs_recorded;

/* Which file a path named when the probe looked at it: an input changed
 * later (truncated, rewritten, replaced) no longer matches. */
typedef struct fs_file_stamp {
    int known;                   /* 0: not taken (shards) */
    uint64_t dev, ino;
    int64_t size, mtime_s, mtime_ns;
} fs_file_stamp;

/* What the probe learned; plain data so it can be broadcast as bytes. */
typedef struct fs_input_info {
    fs_file_stamp stamp;         /* the input file as the probe found it */
    char dataset[FS_PATH_MAX];   /* absolute path in the file */
    int ndim;
    int64_t shape[FS_LAYOUT_MAX_DIMS];
    fs_dtype dtype;
    char type_name[64];          /* e.g. "float32", "int16", "complex64" */
    int element_bytes;           /* of one element in the file (int16: 2, complex64: 8) */
    int64_t last_size_attr;      /* the dataset's last_size attribute, 0 when absent */
    char last_size_bad[FS_RECORDED_WHY]; /* why it is no length ("": absent or usable) */
    fs_recorded recorded;        /* a forward run's attributes */
    int is_virtual;              /* a virtual dataset (its sources were checked) */
    int has_offset;              /* an "offset" attribute: a shard's place in the whole */
    int64_t offset[FS_LAYOUT_MAX_DIMS];
    int64_t nshards;             /* --shards: how many files make the array (0: one file) */
    fs_input_slice slice;        /* INPUT's slice (given 0: none); ndim and shape above are
                                  * then the sliced array's, the reads select the slice */
    int particle_table;          /* a snapshot's particle table (snapshot.h), not a field */
    int painted;                 /* the mesh painted from a particle table (paint.h): dataset
                                  * names the field beside the particles, not in the file */
    char painted_from[FS_PATH_MAX]; /* painted: the positions' dataset, what the result
                                  * records as its input */
    int64_t painted_rows;        /* painted by the dry run: the particle table's rows (how
                                  * much of the particles' rounds a rank fills) */
    int box_n;                   /* the dataset's box_size attribute: its lengths as stored
                                  * (0: absent; -1: present but no lengths, why in box_bad) */
    double box_size[FS_LAYOUT_MAX_DIMS];
    char box_bad[FS_RECORDED_WHY];
} fs_input_info;

/* One INPUT as named: FILE.h5[:/path[SLICE]]. */
typedef struct fs_location {
    char *file;
    char *dataset;         /* NULL: the only dataset in the file */
    fs_slice_spec slice;   /* given 0: the whole dataset */
} fs_location;

/* The files of a sharded array: file i holds the box boxes[i] of the whole
 * (its dataset has the box's shape). */
typedef struct fs_shard_set {
    int64_t n;
    char **files;
    fs_box *boxes;
} fs_shard_set;

/* Free what set holds and zero it. */
void fs_shard_set_free(fs_shard_set *set);

/* Start HDF5 quietly (automatic error printing off), once per process
 * before any other HDF5 call. FS_ERR_RUNTIME with a message on failure. */
fs_status fs_h5_init(void);

/* Rank 0 only (serial). dataset may be NULL: the only dataset in the file
 * (dimension scales, a result's coordinates, are not counted nor listed).
 * FS_ERR_INPUT with a message for every unusable case, FS_ERR_RUNTIME when
 * HDF5 fails in a way the file does not explain. */
fs_status fs_h5_probe(const char *file, const char *dataset, fs_input_info *info);

/* How messages and reports name an input: "FILE:DATASET", its slice after
 * it when it has one ("FILE:DATASET[0:10:2, :, 5]"), a painted mesh by its
 * particles' positions; buf (out) returned.
 * FS_INPUT_NAME_MAX bytes hold any. */
#define FS_INPUT_NAME_MAX (2 * FS_PATH_MAX + 2 + FS_SLICE_TEXT)
const char *fs_input_name(const char *file, const fs_input_info *info, char *buf, size_t size);

/* The stamp of a file from its stat. */
struct stat;
fs_file_stamp fs_file_stamp_of(const struct stat *st);

/* Rank 0 only: the source files of the virtual dataset `dataset` in `file`
 * as stored (relative names are relative to file's directory); *n 0 when
 * it is not virtual. A file or dataset that cannot be opened is an error
 * (FS_ERR_INPUT, without HDF5's stack: callers may expect it). *names
 * (out) is freed with fs_strings_free. */
fs_status fs_h5_virtual_files(const char *file, const char *dataset, char ***names, int64_t *n);
void fs_strings_free(char **names, int64_t n);

/* Where HDF5 finds the virtual dataset source `name` (as stored in
 * vds_file): the path, of at most size bytes, written to path. */
fs_status fs_h5_source_path(const char *vds_file, const char *name, char *path, size_t size);

#endif
