/* SPDX-License-Identifier: GPL-3.0-or-later */
/* space: what a run's files will take, decided before anything is
 * written: the storage of a result (--chunks, --deflate, else chunks of
 * about 1 MiB when chunked), the bytes of every destination (the results
 * with HDF5's metadata, OUTPUT as it is with --add, the shard files, the
 * report, the wisdom), the free space of each file system they are on and
 * the file-size limit. A write that fails part way through a collective
 * call can leave the other ranks waiting in it for ever, so these are
 * checked first. Owns nothing. */
#ifndef FS_SPACE_H
#define FS_SPACE_H

#include "core/errors.h"
#include "io/h5io.h"
#include "output/output.h"
#include "plan/transform.h"

/* The storage of t's result under the options (FS_ERR_USAGE for --chunks
 * that do not fit it). */
fs_status fs_output_storage(const fs_output_options *o, const fs_transform *t, fs_h5_storage *sg);

/* Rank 0: every destination's file system holds what the run writes there
 * (the nts results ts in one OUTPUT, or out's shard files), and the file
 * size limit lets the largest file be written: FS_ERR_RUNTIME ("disk
 * full") otherwise. Compressed output is counted uncompressed: FFT output
 * hardly compresses. */
fs_status fs_output_space_check(const fs_output *out, const fs_transform *const *ts, int nts);

#endif
