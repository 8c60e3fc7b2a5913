/* shardout: --shard-output, the result as several files and a master.
 *
 * The ranks form groups of consecutive ranks whose output boxes together
 * make one box (whole rows of the process grid, or equal parts of every
 * row); each group writes its box into one file with MPI-IO on the group's
 * communicator. Rank 0 then writes OUTPUT as a virtual dataset mapping every
 * file onto its place, so h5py and h5dump read one array.
 *
 * Atomic as a set: the files are written into a hidden temporary directory
 * beside OUTPUT (".BASE.fftshard-tmp-XXXXXX"); on success it is renamed to
 * "BASE.shards-XXXXXX" and then the master is renamed to OUTPUT, so OUTPUT
 * never names a missing or partial file. The files of a master that --force
 * replaced are removed after the new master is in place. Each file is
 * "STEM.NNNN.h5" (STEM: OUTPUT's name without .h5) with the same dataset
 * path and an "offset" attribute giving its box's start, so the files are
 * also valid --shards input. */
#ifndef FS_SHARDOUT_H
#define FS_SHARDOUT_H

#include <mpi.h>

#include "errors.h"
#include "h5io.h"
#include "transform.h"

typedef struct fs_shard_output {
    int nfiles;            /* files written (groups owning data) */
    int file;              /* this rank's file, -1: none (owns nothing) */
    MPI_Comm comm;         /* the ranks writing this rank's file */
    fs_box box;            /* that file's box in the output array */
    char *dir_tmp;         /* the directory being written */
    char *dir_final;       /* its name once complete */
    char *path;            /* this rank's file (in dir_tmp) */
    fs_shard_set sources;  /* rank 0: every file, named from OUTPUT's directory, and its box */
} fs_shard_output;

/* Collective: rank 0 creates the temporary directory beside output_file;
 * FS_ERR_OUTPUT when it cannot. */
fs_status fs_shard_output_begin(MPI_Comm comm, const char *output_file, fs_shard_output *so);

/* Collective: form the groups for `requested` files (<= 0: one per rank)
 * from the plan's last stage. FS_ERR_USAGE when that many files cannot
 * each hold one box of the output. */
fs_status fs_shard_output_plan(MPI_Comm comm, const fs_transform *t, int requested,
                               const char *output_file, fs_shard_output *so);

/* Rank 0, after every file is closed and master_tmp holds the master:
 * move the directory and then the master into place, and remove the files
 * of the master that was replaced (dataset: its path). */
fs_status fs_shard_output_commit(fs_shard_output *so, const char *master_tmp,
                                 const char *output_file, const char *dataset);

/* Collective: remove the directory of a failed run (after every rank
 * closed its file). */
void fs_shard_output_abort(MPI_Comm comm, fs_shard_output *so);

void fs_shard_output_free(fs_shard_output *so);

#endif
