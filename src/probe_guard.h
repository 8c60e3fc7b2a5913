/* probe_guard: the input check (fs_h5_probe) in a process of its own.
 *
 * HDF5 1.10 can crash on a damaged file: its metadata parser trusts the
 * addresses and lengths it reads. Rank 0 therefore checks INPUT in a child
 * process, this program again started with FFTSHARD_PROBE_FD in its
 * environment: it probes without starting MPI and writes what it found to
 * that descriptor. A child that dies instead of answering makes the input
 * unusable (FS_ERR_INPUT, "HDF5 crashed reading it"), before any output
 * exists. */
#ifndef FS_PROBE_GUARD_H
#define FS_PROBE_GUARD_H

#include "errors.h"
#include "h5probe.h"

/* The environment variable that makes the program a probe child. */
#define FS_PROBE_FD_ENV "FFTSHARD_PROBE_FD"

/* Rank 0 only: fs_h5_probe(file, dataset, info) run in a child process.
 * When no child can be started, the probe runs here. */
fs_status fs_h5_probe_guarded(const char *file, const char *dataset, fs_input_info *info);

/* main() of the child, called before MPI_Init when FS_PROBE_FD_ENV is set:
 * argv is {program, FILE, [DATASET]}. Returns the exit status. */
int fs_probe_guard_child(int argc, char **argv);

#endif
