/* SPDX-License-Identifier: GPL-3.0-or-later */
/* slice: part of an input dataset, INPUT:/path[START:STOP:STEP, ...].
 *
 * numpy's basic slicing, one entry per axis from the first: a range
 * START:STOP:STEP (each part optional, negative START and STOP counted from
 * the end and clipped to the axis as numpy clips them, STEP at least 1;
 * bounds and steps past 64 bits taken as +-(2^63 - 1), as Python clips
 * them for numpy; an index past 64 bits is out of range for any axis), an
 * index i that selects one position and drops the axis, and at most one
 * `...` standing for the axes not named; the axes after the last entry are
 * taken whole. The text is parsed with the command line (fs_slice_parse:
 * text that is no slice is a usage error), resolved against the dataset's
 * shape once the probe has it (fs_slice_apply: a slice the dataset cannot
 * have is an unusable input), and a box of the sliced array becomes the
 * file's hyperslab (fs_slice_file_box) for every read, so each rank reads
 * its part of the slice and nothing else. Owns nothing: plain data. */
#ifndef FS_SLICE_H
#define FS_SLICE_H

#include <stdint.h>

#include "core/errors.h"
#include "core/layout.h"

#define FS_SLICE_TEXT 512

typedef enum fs_slice_kind { FS_SLICE_RANGE, FS_SLICE_INDEX, FS_SLICE_ELLIPSIS } fs_slice_kind;

/* One entry as written. */
typedef struct fs_slice_entry {
    fs_slice_kind kind;
    int has_start, has_stop;
    int64_t start, stop, step;   /* step 1 when not written; index: start */
} fs_slice_entry;

/* A slice as written (given 0: none). */
typedef struct fs_slice_spec {
    int given;
    int n;
    fs_slice_entry e[FS_LAYOUT_MAX_DIMS + 1];
} fs_slice_spec;

/* A slice resolved against a dataset: per axis of the file's dataset, the
 * first position, the step and the count (1 for a dropped axis); the
 * sliced array's axes are the kept ones in order. */
typedef struct fs_input_slice {
    int given;                   /* 0: the whole dataset */
    int file_ndim;
    int64_t file_shape[FS_LAYOUT_MAX_DIMS];
    int64_t start[FS_LAYOUT_MAX_DIMS], step[FS_LAYOUT_MAX_DIMS], count[FS_LAYOUT_MAX_DIMS];
    int dropped[FS_LAYOUT_MAX_DIMS];      /* an index: not an axis of the sliced array */
    char text[FS_SLICE_TEXT];    /* numpy's spelling, every axis resolved: "[0:10:2, :, 5]" */
} fs_input_slice;

/* Split a trailing slice off the dataset path `path` (in place: the slice
 * text is cut off). A path ending in "[]" loses the "[]" and has no slice
 * (how a dataset whose own name ends in ']' is named); one ending in ']'
 * otherwise must end in a slice. *spec (out) has given 0 when there is
 * none. FS_ERR_USAGE naming `arg` for text that is no slice. */
fs_status fs_slice_parse(const char *arg, char *path, fs_slice_spec *spec);

struct fs_input_info;

/* Rank 0, after the probe: resolve spec (given) against the probed
 * dataset of `file`, and make *info describe the sliced array (its ndim and
 * shape; info->slice the file's selection; the axes a forward run recorded
 * renumbered past the dropped ones). FS_ERR_INPUT for an index out of
 * range, a range that takes nothing, more entries than axes, no axis
 * left. */
fs_status fs_slice_apply(const fs_slice_spec *spec, const char *file, struct fs_input_info *info);

/* The file's hyperslab of a box of the sliced array (start, count per axis
 * of it, ndim of them): fstart, fstride, fcount per file axis. */
void fs_slice_file_box(const fs_input_slice *s, int ndim, const int64_t *start,
                       const int64_t *count, int64_t *fstart, int64_t *fstride, int64_t *fcount);

/* The dataset as it is in its file, sliced or not: its ndim (returned)
 * and shape (out). */
int fs_input_file_shape(const struct fs_input_info *info, int64_t *shape);

#endif
