/* SPDX-License-Identifier: GPL-3.0-or-later */
/* h5attrs: the input dataset's own attributes, carried to the output.
 *
 * A snapshot's dataset holds its metadata (time, box size, units) as
 * attributes; the result keeps them under their own names. Rank 0 reads
 * them serially (fs_h5_attrs_read) into one block of bytes, which one
 * broadcast carries to every rank (fs_h5_attrs_bcast): parallel HDF5 wants
 * every rank to create an attribute with the same type and values, so
 * every rank writes them all (h5io's fs_h5_output_copy_attrs, through
 * fs_h5_attrs_write). Each attribute is kept in the file's own type and
 * byte order, written back unconverted: numbers, fixed-length strings,
 * compounds, enums and arrays of them, and variable-length strings (carried
 * as their text). Skipped, with a reason: fftshard's own names (the result
 * has its own values for those), references (they point into the input
 * file), other variable-length types, and attributes of more than
 * FS_ATTR_MAX_BYTES (the output's object header holds no larger one).
 * What several inputs hold alike goes on what they make together (a
 * spectrum's group: fs_input_attrs_shared). Owns the block
 * (fs_input_attrs); every hid_t it opens is closed before it returns. */
#ifndef FS_H5ATTRS_H
#define FS_H5ATTRS_H

#include <mpi.h>
#include <stdint.h>

#include "core/errors.h"

/* The largest attribute copied (its values, or 16 bytes per string of a
 * variable-length one): HDF5 keeps attributes in the dataset's object
 * header, 64 KiB at most each. */
#define FS_ATTR_MAX_BYTES 60000

/* The attributes to copy, one record after another (h5attrs.c). */
typedef struct fs_input_attrs {
    int64_t bytes;          /* of block */
    unsigned char *block;   /* malloc'ed; NULL when there is nothing to copy */
    int count;              /* attributes in the block */
} fs_input_attrs;

/* Rank 0 only (serial): the attributes of `dataset` in `file` into *a
 * (out; free with fs_input_attrs_free), those named in skip (a NULL-ended
 * list of fftshard's own names) left out. A left-out attribute is named on
 * stderr: with verbose one of ours, and unless quiet one whose type or size
 * cannot be copied. FS_ERR_INPUT with a message when the file, the dataset
 * or an attribute cannot be read. */
fs_status fs_h5_attrs_read(const char *file, const char *dataset, const char *const *skip,
                           int verbose, int quiet, fs_input_attrs *a);

/* Collective: root's *a to every rank (in on root; out elsewhere, where *a
 * starts zeroed). The status is agreed and printed. */
fs_status fs_h5_attrs_bcast(MPI_Comm comm, int root, fs_input_attrs *a);

/* What n inputs share, for what all of them make (a spectrum): the
 * attributes of a[0] that every a[1..n-1] holds alike (the same name,
 * type, shape and values), those named in skip (a NULL-ended list) left
 * out, into *out (out; free with fs_input_attrs_free). Not collective;
 * the same blocks give the same result on every rank. */
fs_status fs_input_attrs_shared(const fs_input_attrs *a, int n, const char *const *skip,
                                fs_input_attrs *out);

/* Whether a holds an attribute `name` of one number (an integer or a
 * float, scalar or of one element), its value as a double into *value. */
int fs_input_attrs_number(const fs_input_attrs *a, const char *name, double *value);

/* The attribute `name` of a set to `value` (--attr): a float64 when
 * value is a number (strtod takes all of it), else a variable-length UTF-8
 * string; one of that name in a is replaced. FS_ERR_RUNTIME when out of
 * memory (a then unchanged). */
fs_status fs_input_attrs_put(fs_input_attrs *a, const char *name, const char *value);

/* Free the block and zero *a. */
void fs_input_attrs_free(fs_input_attrs *a);

#endif
