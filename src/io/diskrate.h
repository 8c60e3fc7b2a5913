/* SPDX-License-Identifier: GPL-3.0-or-later */
/* diskrate: the read and write rates of the disk a run's scratch goes to,
 * from a short probe, for the out-of-core plan's predicted time and the
 * report's comparison (--disk-rate gives them instead).
 *
 * Rank 0 writes a temporary of its own (core/atomic.h, named for the path
 * given, removed at once and on any signal) in pieces of 4 MiB, waits for
 * it to reach the disk (fdatasync), drops it from the page cache and reads
 * it back: the rates of a synced sequential write and of a read from the
 * disk, each from one stream, as the passes move their blocks. Owns
 * nothing. */
#ifndef FS_DISKRATE_H
#define FS_DISKRATE_H

#include <mpi.h>
#include <stdint.h>

#include "core/errors.h"

/* The most a probe writes. */
#define FS_DISKRATE_MAX_BYTES ((int64_t)32 * 1024 * 1024)

/* Collective: the rates in bytes per second of the file system of
 * final_path's directory, by a probe of `bytes` (at most
 * FS_DISKRATE_MAX_BYTES, at least 4 MiB). FS_ERR_OUTPUT when the directory
 * does not allow creating a file, FS_ERR_RUNTIME when the disk is full.
 * Agreed. */
fs_status fs_diskrate_probe(MPI_Comm comm, const char *final_path, int64_t bytes,
                            double *read_rate, double *write_rate);

#endif
