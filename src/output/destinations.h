/* SPDX-License-Identifier: GPL-3.0-or-later */
/* destinations: the files a run will create or replace, checked against the
 * files it reads, once, before any work.
 *
 * The destinations are OUTPUT, the --report file and the --wisdom file
 * (read at the start, replaced at the end); the sources are every INPUT, every
 * input shard and every source file of a virtual input dataset. Rank 0
 * refuses (FS_ERR_OUTPUT) a destination whose name ends in '/' or is "."
 * or "..", whose directory is missing, not a directory or not writable, or
 * which is the same file as a source or as another destination (the same
 * device and inode when both exist, else the same resolved directory and
 * name). With --force --shard-output the files of the old shard set that
 * the commit removes count as destinations too. Whether an existing destination may be replaced (--force) and what
 * kind of file it is stay with atomic.h and wisdom.h. */
#ifndef FS_DESTINATIONS_H
#define FS_DESTINATIONS_H

#include <mpi.h>

#include "core/errors.h"
#include "io/h5probe.h"

/* What a run reads and writes, by name (borrowed, not freed here). */
typedef struct fs_run_files {
    const char *output;
    const char *report;           /* NULL: no --report */
    const char *wisdom;           /* NULL: no --wisdom */
    int ninputs;
    const char *const *inputs;    /* each INPUT's file as given (with --shards, the pattern
                                     or list) */
    const fs_input_info *infos;   /* each probed input (its dataset, whether virtual) */
    const fs_shard_set *shards;   /* rank 0: the --shards files of the one INPUT; NULL for
                                     files */
    const char *replaced_set;     /* --force --shard-output: OUTPUT's dataset, whose old
                                     shard set the commit removes; else NULL */
} fs_run_files;

/* Collective over comm; rank 0 decides from f (the other ranks' f is not
 * read). Returns the agreed status, already printed. */
fs_status fs_destinations_check(MPI_Comm comm, const fs_run_files *f);

#endif
