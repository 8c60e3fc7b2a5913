/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shards: an input array stored as many HDF5 files (--shards).
 *
 * The files are named by a printf pattern with one integer field
 * ("field.%04d.h5": every number from the smallest found, without gaps) or
 * listed in a text file (one path per line, relative to the list's
 * directory; blank lines and lines starting with '#' ignored). Each holds
 * the same dataset path. Without "offset" attributes the files are
 * consecutive slabs along axis 0, in order, agreeing in the other axes; with
 * them (on every file: the start along axis 0, or along every axis) each file
 * sits at its offset and together they must tile the whole array exactly.
 * Rank 0 probes every shard (fs_h5_probe), so a bad one is named. */
#ifndef FS_SHARDS_H
#define FS_SHARDS_H

#include <mpi.h>

#include "core/errors.h"
#include "io/h5probe.h"

/* Rank 0 only: the input of a run, shards (sharded nonzero) or one file
 * (checked in a child process: see probe_guard.h), and its slice (may be
 * NULL; slice.h) taken of it. */
fs_status fs_input_probe(int sharded, const char *input, const char *dataset,
                         const fs_slice_spec *slice, fs_input_info *info, fs_shard_set *set);

/* Collective: rank 0's set to every rank (others' *set is filled). */
fs_status fs_shards_bcast(MPI_Comm comm, fs_shard_set *set);

/* Collective: rank 0 probes the n INPUTs (fs_input_probe), every rank gets
 * what it found in infos (and with sharded, the files in *set). The status
 * is agreed and printed. */
fs_status fs_inputs_probe(MPI_Comm comm, int sharded, const fs_location *inputs, int n,
                          fs_input_info *infos, fs_shard_set *set);

#endif
