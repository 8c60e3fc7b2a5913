/* SPDX-License-Identifier: GPL-3.0-or-later */
/* mpio_guard: every MPI-IO write HDF5 makes to an output, checked.
 *
 * HDF5 1.10 does not always return a failed MPI-IO write: inside a metadata
 * cache sync point (chunk allocation, flushes) it can carry on with some
 * ranks one collective call ahead of the others, and the job hangs before
 * any error reaches us. MPI's profiling interface lets us see every write
 * HDF5 makes: this module defines MPI_File_write_at, MPI_File_write_at_all,
 * MPI_File_set_size and MPI_File_sync over their PMPI_ forms, so that they
 * replace the MPI library's in any program linked with it. While an output
 * is watched (h5write.c watches each MPI-IO output from its opening to its
 * close), the first of them that fails ends the job from the rank it
 * failed on (fs_h5_abandon), before HDF5 enters another collective call;
 * otherwise they are MPI's own. Owns the output watched. */
#ifndef FS_MPIO_GUARD_H
#define FS_MPIO_GUARD_H

#include "io/h5io.h"

/* o's MPI-IO writes end the job when they fail; forget: no longer (o was
 * not watched: nothing). One output at a time. */
void fs_mpio_guard_watch(const fs_h5_output *o);
void fs_mpio_guard_forget(const fs_h5_output *o);

#endif
