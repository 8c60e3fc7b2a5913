/* dryrun: --dry-run, planning a job without data.
 *
 * From the input file (probed on rank 0) or --shape and --dtype, and a rank
 * count (--ranks, default this job's), print the decomposition, the grid,
 * the smallest and largest local block of every stage, the exchanges and
 * their largest messages, and the memory per rank of the strategy, with
 * whether it fits --mem-per-rank. Only arithmetic: nothing is allocated at
 * full size, nothing is read or written, and it runs on one process. */
#ifndef FS_DRYRUN_H
#define FS_DRYRUN_H

#include <mpi.h>
#include "errors.h"
#include "options.h"

/* Collective over comm; rank 0 prints on stdout. */
fs_status fs_dry_run(MPI_Comm comm, const fs_options *opts);

#endif
