/* SPDX-License-Identifier: GPL-3.0-or-later */
/* coords: the coordinates of a result, what netCDF-4 and xarray read its
 * dimensions by (fftshard(1), WHAT READERS SEE).
 *
 * Every axis of a result written into OUTPUT gets a dimension scale
 * (h5scales.h) in the result's group: a transformed axis of a forward
 * result its wave number k<a> (2 pi numpy.fft.fftfreq(n, L/n), rfftfreq
 * along the halved axis of --real, in the stored, unshifted order; a
 * cosine or sine axis fs_r2r_angle over the spacing L/n); a
 * transformed axis of an inverse or --apply result its position x<a>
 * (j L / n); a batch axis the input's own coordinate when it has one of
 * that length (copied: name, values, units, long_name), else its indices
 * axis<a>. L is --box-size's length, else n (units per grid spacing).
 * Results of one shape share their coordinates. It owns the input's
 * coordinates taken for the batch axes (fs_input_coords). */
#ifndef FS_COORDS_H
#define FS_COORDS_H

#include <mpi.h>

#include "core/errors.h"
#include "io/h5io.h"
#include "io/h5probe.h"
#include "io/h5scales.h"
#include "core/layout.h"
#include "plan/transform.h"

/* Collective: rank 0 reads the coordinates of the input `info` in `file`
 * (none for --shards, sharded, or a sliced input), every rank gets them in *c (out; free with
 * fs_input_coords_free). The status is agreed. */
fs_status fs_input_coords_take(MPI_Comm comm, const char *file, const fs_input_info *info,
                               const fs_transform *t, int sharded, fs_input_coords *c);
void fs_input_coords_free(fs_input_coords *c);

/* Whether nbox --box-size lengths fit t (none, one, or one per transformed
 * axis): FS_ERR_USAGE otherwise, before any work. */
fs_status fs_coords_check(int nbox, const fs_transform *t);

/* Collective: the coordinates of t's result `dataset` in h (in its group),
 * made or shared, attached to its axes, at none of the ntaken paths
 * `taken` (the run's results); box[0..nbox): --box-size's lengths (nbox 0:
 * grid units); in: its input's (may be NULL). */
fs_status fs_coords_write(fs_h5_output *h, const char *dataset, const fs_transform *t, int nbox,
                          const double *box, const fs_input_coords *in, const char *const *taken,
                          int ntaken);

#endif
