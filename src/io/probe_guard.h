/* SPDX-License-Identifier: GPL-3.0-or-later */
/* probe_guard: the input check (fs_h5_probe) in a process of its own.
 *
 * HDF5 1.10 can crash on a damaged file: its metadata parser trusts the
 * addresses and lengths it reads. Rank 0 therefore checks INPUT in another
 * process. A helper forked at start-up, before MPI_Init (no MPI state, no
 * threads yet, the libraries already loaded), answers rank 0's requests
 * over a socket; a check costs a few milliseconds instead of starting the
 * program again. Where there is no helper (it could not be started, or it
 * died on an earlier input), this program is started again with
 * FFTSHARD_PROBE_FD in its environment: it probes without starting MPI and
 * writes what it found to that descriptor. A process that dies of a crash
 * signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) instead of answering
 * makes the input unusable (FS_ERR_INPUT, "HDF5 crashed reading it"), before
 * any output exists; one ended otherwise (SIGKILL from the out-of-memory
 * killer, SIGTERM, an exit) is a runtime failure that says so
 * (FS_ERR_RUNTIME): the file was not judged. The helper owns nothing else: it never
 * outlives the rank that started it, and ends when that rank closes it. */
#ifndef FS_PROBE_GUARD_H
#define FS_PROBE_GUARD_H

#include "core/errors.h"
#include "core/testhooks.h"
#include "io/h5probe.h"

/* Before MPI_Init, in the process that may become rank 0 (every process
 * when the launcher does not say which): fork the helper. Without it the
 * checks start the program again. */
void fs_probe_guard_start(void);

/* Collective-free: end the helper and wait for it (every rank, before
 * MPI_Finalize; ranks other than 0 as soon as they know their rank). */
void fs_probe_guard_stop(void);

/* Rank 0 only: fs_h5_probe(file, dataset, info) run in another process.
 * When none can be started, the probe runs here. */
fs_status fs_h5_probe_guarded(const char *file, const char *dataset, fs_input_info *info);

/* main() of the child, called before MPI_Init when FS_PROBE_FD_ENV is set:
 * argv is {program, FILE, [DATASET]}. Returns the exit status. */
int fs_probe_guard_child(int argc, char **argv);

#endif
