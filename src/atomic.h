/* atomic: output files that appear whole or not at all.
 *
 * A result is written to a temporary file created exclusively beside its final
 * path (name not guessable, permissions from the umask) and renamed over the
 * final path on success. Temporaries still registered when the process gets
 * SIGINT or SIGTERM, or when fs_atomic_abort runs, are unlinked, so an
 * existing output is never touched by a failed run. Owns the temporaries:
 * their names, creation, the table of registered ones, their commit or
 * removal, and the leftovers of killed runs. What a signal does, and when,
 * is signals.h's. */
#ifndef FS_ATOMIC_H
#define FS_ATOMIC_H

#include <mpi.h>

#include "errors.h"

/* The recognisable part of every temporary name:
 * ".<base>.fftshard-tmp-<host>-<pid>-XXXXXX" (pid: rank 0's process). */
#define FS_ATOMIC_TAG ".fftshard-tmp-"

/* The mkstemp/mkdtemp template of a temporary for dir/base (malloc'ed). */
char *fs_atomic_template(const char *dir, const char *base);

/* Remove a directory's files, then the directory (not in a signal handler). */
void fs_atomic_remove_tree(const char *path);

/* Remove the temporaries for dir/base that runs killed outright (SIGKILL,
 * a node lost) left behind: those of this host whose process is gone, each
 * with a note on stderr; those of other hosts are reported, not touched. */
void fs_atomic_clean_leftovers(const char *dir, const char *base);

/* Create the temporary for final_path. *tmp_path (out) is malloc'ed; the file
 * exists, empty, when this returns FS_OK. FS_ERR_OUTPUT when the directory is
 * missing or not writable. */
fs_status fs_atomic_create(const char *final_path, char **tmp_path);

/* Remember tmp_path (a copy is kept) so a signal or fs_atomic_abort removes
 * it. Any rank may register the same path. */
void fs_atomic_register(const char *tmp_path);

/* A temporary directory: removed (when empty) on a signal, after the files. */
void fs_atomic_register_dir(const char *tmp_dir);

/* Stop tracking a path (it was renamed or removed by other means). */
void fs_atomic_forget(const char *tmp_path);

/* Rename tmp_path over final_path and forget it. */
fs_status fs_atomic_commit(const char *tmp_path, const char *final_path);

/* Unlink tmp_path (if it exists) and forget it. */
void fs_atomic_abort(const char *tmp_path);

/* Unlink every registered temporary, then empty and remove every registered
 * directory. Async-signal-safe: the cleanup given to fs_signals_install. */
void fs_atomic_remove_registered(void);

/* Collective over comm: rank 0 decides whether final_path may be written
 * (FS_ERR_OUTPUT when it is a directory, exists without `force`, or is the
 * same file as `input_path`, which may be NULL) and creates the temporary;
 * every rank gets its name in *tmp_path (malloc'ed) and registers it. The
 * returned status is agreed and already printed. */
fs_status fs_atomic_begin(MPI_Comm comm, const char *final_path, const char *input_path, int force,
                          char **tmp_path);

/* Collective over comm: put a collective output in place. Rank 0 runs
 * commit(arg) (the renames) while every rank holds SIGINT and SIGTERM
 * (fs_signals_hold), from before rank 0 starts until all agree on the
 * outcome, so no signal handler removes a temporary while it is being
 * renamed and a signal takes effect before the renames or after all of
 * them, never between; after a successful commit, an interrupted run says
 * the output had been written. Returns the agreed status of commit. */
fs_status fs_atomic_commit_collective(MPI_Comm comm, fs_status (*commit)(void *), void *arg);

#endif
