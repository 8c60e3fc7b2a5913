/* SPDX-License-Identifier: GPL-3.0-or-later */
/* h5scales: coordinates as HDF5 dimension scales (H5DS, HDF5's high-level
 * library), the convention netCDF-4 and xarray (h5netcdf) read dimensions
 * and coordinates by.
 *
 * A coordinate is a 1-D dataset made a dimension scale under its own name,
 * which becomes the dimension's name, with the attributes units and
 * long_name; each axis of a result gets one attached. A coordinate already
 * in the group with the same values is shared (the results /u, /v, /w of
 * one shape have one set), a different one gives way to another name (its
 * alternative, then the name with _2, _3, ... appended). Every scale it
 * makes carries _Netcdf4Dimid, netCDF-4's number of the dimension, unique
 * in the file. It reads the coordinates an input dataset carries, detaches
 * them from a dataset about to be replaced, and finds a coordinate that
 * another dataset uses before --add replaces it. It
 * owns nothing beyond the calls: the file is the output's (h5io.h), and
 * like every metadata change over an MPI-IO file each call is collective. */
#ifndef FS_H5SCALES_H
#define FS_H5SCALES_H

#include <stddef.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/errors.h"
#include "core/layout.h"
#include "io/h5io.h"

/* What a coordinate holds and says. */
typedef struct fs_h5_coord {
    const char *name;      /* its dataset's (and the dimension's) name */
    const char *alt;       /* the name used when `name` holds other values (NULL: none) */
    int64_t n;
    fs_dtype type;         /* FS_DTYPE_FLOAT64 or FS_DTYPE_INTEGER */
    const void *values;    /* n values; NULL: fill makes them */
    fs_h5_fill_fn fill;    /* values made piece by piece (a coordinate as long as a 1-D
                              array is never held whole) */
    const void *ctx;       /* fill's */
    const char *units;     /* NULL: none */
    const char *long_name; /* NULL: none */
} fs_h5_coord;

/* Collective: the coordinate c in group (path "/" or "/g"), made or
 * shared, at none of the ntaken paths `taken` (the run's results, which
 * may not exist yet); its path into path[size]. */
fs_status fs_h5_coord_make(fs_h5_output *o, const char *group, const fs_h5_coord *c,
                           const char *const *taken, int ntaken, char *path, size_t size);

/* Collective: the 1-D dataset at path made a dimension scale, named by
 * the last part of the path, and numbered for netCDF-4 past every
 * dimension the file has (_Netcdf4Dimid). */
fs_status fs_h5_scale_set(fs_h5_output *o, const char *path);

/* Collective: the scales at scales[i] attached to axis i of `dataset`. */
fs_status fs_h5_scales_attach(fs_h5_output *o, const char *dataset, int ndim,
                              const char *const *scales);

/* Collective: a text attribute (UTF-8) of the object at `object`, replacing
 * one of that name. */
fs_status fs_h5_text_attr(fs_h5_output *o, const char *object, const char *name,
                          const char *value);

/* Collective: every coordinate attached to the dataset at `dataset` (if
 * there is one) detached, before --add --force replaces it: a scale that
 * stays keeps no reference to a dataset that is gone. */
fs_status fs_h5_scales_detach(fs_h5_output *o, const char *dataset);

/* An axis's coordinate as an input holds it: the first numeric 1-D
 * dimension scale of the axis's length attached to it. */
typedef struct fs_h5_found_coord {
    int found;             /* 0: none (the rest unset) */
    char name[64];         /* its dataset's name (the dimension's) */
    int is_int;            /* values int64, else float64 */
    int has_values;        /* 0: a netCDF-4 dimension without a variable (indices stand for it) */
    char units[128];       /* "": none (or too long) */
    char long_name[256];
} fs_h5_found_coord;

/* An input dataset's coordinates, on every rank (output/coords.h takes
 * them). */
typedef struct fs_input_coords {
    int ndim;
    fs_h5_found_coord axis[FS_LAYOUT_MAX_DIMS];
    void *values[FS_LAYOUT_MAX_DIMS];  /* malloc'ed, NULL: none */
} fs_input_coords;

/* The coordinate of a batch axis and room for its texts. */
typedef struct fs_h5_batch_coord {
    fs_h5_coord c;
    char name[80], long_name[96];
} fs_h5_batch_coord;

/* Batch axis a (n points) of a result of the input whose coordinates are
 * in (NULL: none): the input's own coordinate along a (its name, values,
 * units and long_name, borrowed), else the indices 0 .. n-1 (units 1)
 * named as the input's netCDF-4 dimension without a variable, or axis<a>,
 * made piece by piece as they are written (c.long_name points into out). */
void fs_h5_batch_coord_of(const fs_input_coords *in, int a, int64_t n, fs_h5_batch_coord *out);

/* One process (rank 0), serially: the coordinates of the ndim axes of
 * `dataset` in `file` (shape its shape) for which want[a] is nonzero into
 * found[a], the values of each one found into values[a] (shape[a] int64
 * or float64, malloc'ed; NULL when none: the caller frees). An axis not
 * wanted, or whose scale cannot be read, has none; only running out of
 * memory fails. */
fs_status fs_h5_coords_read(const char *file, const char *dataset, int ndim, const int64_t *shape,
                            const int *want, fs_h5_found_coord *found, void **values);

/* One process (rank 0), serially, before --add replaces the object at
 * `path` in `file` (a dataset, or a group and all in it; `name` is the
 * file as messages call it): FS_ERR_OUTPUT when it is or holds a dimension
 * scale that a dataset elsewhere in the file has attached (fftshard's
 * coordinates, netCDF-4's dimensions, any other): that dataset would keep
 * a reference to whatever replaced it, and netCDF-4 could no longer open
 * the file. */
fs_status fs_h5_coords_in_use(const char *file, const char *name, const char *path);

#endif
