/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shardout: --shard-output, the result as several files and a master.
 *
 * The ranks form groups of consecutive ranks whose output boxes together
 * make one box (whole rows of the process grid, or equal parts of every
 * row); each group writes its box into one file with MPI-IO on the group's
 * communicator. Rank 0 then writes OUTPUT as a virtual dataset mapping every
 * file onto its place, so h5py and h5dump read one array.
 *
 * Atomic as a set: the files are written into a hidden temporary directory
 * beside OUTPUT (".BASE.fftshard-tmp-HOST-PID-XXXXXX", mode 0700 until the
 * commit so that nobody can put a link in it); on success it is renamed
 * (never over anything) to "BASE.shards-XXXXXX" and then the master is
 * renamed to OUTPUT, over an existing one only with --force, so OUTPUT
 * never names a missing or partial file. Each file is "STEM.NNNN.h5"
 * (STEM: OUTPUT's name without .h5) with the same dataset path and an
 * "offset" attribute giving its box's start, so the files are also valid
 * --shards input. Names too long for NAME_MAX are shortened
 * (fs_atomic_short_name).
 *
 * The marker: rank 0 writes into the directory, when it creates it, the
 * file FS_SHARD_MARKER holding FS_SHARD_MARKER_TEXT, the directory's final
 * name and a newline. The master's virtual dataset names the directory;
 * the marker says that fftshard made the directory under that name. When
 * --force replaces a master, the set directories its virtual dataset reads
 * are removed only if reached without a symbolic link and holding that
 * marker, and in them only the regular files the master named (unlinkat on
 * the directory's descriptor), then the marker and the directory when
 * nothing else is left; anything else stays, with a warning. */
#ifndef FS_SHARDOUT_H
#define FS_SHARDOUT_H

#include <mpi.h>

#include "core/errors.h"
#include "io/h5io.h"
#include "plan/transform.h"

/* The marker file in a set directory, and the start of its one line. */
#define FS_SHARD_MARKER ".fftshard-shards"
#define FS_SHARD_MARKER_TEXT "fftshard shard set "

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

/* Collective: rank 0 creates the temporary directory beside output_file,
 * locked as atomic.h's temporaries are, with its marker; FS_ERR_OUTPUT
 * when it cannot. */
fs_status fs_shard_output_begin(MPI_Comm comm, const char *output_file, fs_shard_output *so);

/* Collective: form the groups for `requested` files (<= 0: one per rank)
 * from the plan's last stage. FS_ERR_USAGE when that many files cannot
 * each hold one box of the output. */
fs_status fs_shard_output_plan(MPI_Comm comm, const fs_transform *t, int requested,
                               const char *output_file, fs_shard_output *so);

/* Rank 0, after every file is closed and master_tmp holds the master:
 * move the directory and then the master into place (over an existing
 * OUTPUT only with `force`: else FS_ERR_OUTPUT, nothing left), and remove
 * the set of the master that was replaced (dataset: its path), see above. */
fs_status fs_shard_output_commit(fs_shard_output *so, const char *master_tmp,
                                 const char *output_file, const char *dataset, int force);

/* Rank 0: the files of the set that a --force commit over the existing
 * master output_file would remove (those of its virtual dataset `dataset`
 * in a set directory of fftshard's layout), named from the current
 * directory (malloc'ed, fs_strings_free); none when it is not such a
 * master. */
void fs_shard_output_old_files(const char *output_file, const char *dataset, char ***paths,
                               int64_t *n);

/* Collective: remove the directory of a failed run (after every rank
 * closed its file). */
void fs_shard_output_abort(MPI_Comm comm, fs_shard_output *so);

void fs_shard_output_free(fs_shard_output *so);

#endif
