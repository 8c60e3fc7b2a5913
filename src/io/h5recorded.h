/* SPDX-License-Identifier: GPL-3.0-or-later */
/* h5recorded: the attributes the probe reads off an input dataset besides
 * its type and shape (h5probe.h): a shard's "offset", and what a forward
 * run of fftshard recorded on its result for an inverse to default to
 * ("last_size", "fftshard_version", "direction", "transform", "norm",
 * "axes", "real_axis"), each judged: a value fftshard cannot have written
 * leaves its reason in fs_recorded's *_bad fields for the planner to
 * refuse; and the box lengths "box_size" that the stages take for
 * --box-size (a reason in box_bad when they are none). Rank 0, serial,
 * with the probe's dataset open. Owns nothing. */
#ifndef FS_H5RECORDED_H
#define FS_H5RECORDED_H

#include <hdf5.h>

#include "core/errors.h"
#include "io/h5probe.h"

/* A shard's "offset" attribute: its start in the whole array, one integer
 * (along axis 0) or one per axis (info->has_offset -1: present but
 * unusable). label names the dataset in messages. */
fs_status fs_h5_read_offset(hid_t did, const char *label, int ndim, fs_input_info *info);

/* What a forward run recorded for the inverse (info->recorded,
 * info->last_size_attr), and the box_size attribute whoever wrote it
 * (info->box_n). FS_ERR_INPUT when HDF5 cannot read one. */
fs_status fs_h5_read_recorded(hid_t did, const char *label, fs_input_info *info);

#endif
