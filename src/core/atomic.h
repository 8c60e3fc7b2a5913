/* SPDX-License-Identifier: GPL-3.0-or-later */
/* atomic: output files that appear whole or not at all.
 *
 * A result is written to a temporary file created exclusively beside its final
 * path (name not guessable, permissions from the umask) and renamed to the
 * final path on success: over an existing file only when the caller may
 * replace it (--force, the report, the wisdom), otherwise with a rename that
 * never replaces, so a file that appeared there during the run is kept.
 * Temporaries still registered when the process gets SIGINT or SIGTERM, or
 * when fs_atomic_abort runs, are unlinked, so an existing output is never
 * touched by a failed run. Owns the temporaries: their names, creation, the
 * table of registered ones with the descriptors that prove their owner is
 * alive, their commit or removal, and the leftovers of killed runs; and the
 * commit lock of a final path with the check that the file copied for
 * --add is still the one there (fs_atomic_place_checked). What a signal
 * does, and when, is signals.h's.
 *
 * Liveness: the process that creates a temporary (rank 0) keeps it open for
 * as long as it is registered and holds an open-file-description read lock
 * (F_OFD_SETLK) on one byte at offset FS_ATOMIC_LOCK_BYTE, far beyond any
 * data, so it never meets HDF5's flock() or ROMIO's byte-range locks. A
 * leftover is a killed run's only when that byte is not locked.
 *
 * Nothing here follows a symbolic link when it deletes: directories are
 * opened with O_NOFOLLOW and emptied with unlinkat on their descriptor. */
#ifndef FS_ATOMIC_H
#define FS_ATOMIC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <mpi.h>

#include "core/errors.h"

/* The recognisable part of every temporary name:
 * ".<base>.fftshard-tmp-<host>-<pid>-XXXXXX" (pid: rank 0's process; host
 * cut to 64 bytes). A base too long for NAME_MAX is shortened
 * (fs_atomic_short_name) by the same rule for every process, so leftovers
 * are still recognised. */
#define FS_ATOMIC_TAG ".fftshard-tmp-"

/* The byte a live owner's read lock covers. */
#define FS_ATOMIC_LOCK_BYTE (INT64_MAX - 1)

/* name itself (a copy) when it and `reserve` more bytes fit in NAME_MAX;
 * otherwise its start (cut at a character boundary), "~" and eight hex
 * digits of a hash of the whole name, together NAME_MAX - reserve bytes.
 * Malloc'ed; NULL when out of memory. reserve < NAME_MAX - 16. */
char *fs_atomic_short_name(const char *name, size_t reserve);

/* The directory and the base name of path (malloc'ed); -1, both NULL,
 * when out of memory. */
int fs_atomic_split_path(const char *path, char **dir, char **base);

/* Remove a directory's entries (never following a link; subdirectories
 * stay), then the directory, if path's last component is a directory and
 * not a symbolic link (not in a signal handler). */
void fs_atomic_remove_tree(const char *path);

/* Create the temporary for final_path. *tmp_path (out) is malloc'ed; the file
 * exists, empty, registered, open and locked by this process, when this
 * returns FS_OK. FS_ERR_OUTPUT when the directory is missing or not
 * writable. */
fs_status fs_atomic_create(const char *final_path, char **tmp_path);

/* The same for a temporary directory beside final_path (mode 0700 until its
 * owner changes it; registered with fs_atomic_register_dir). */
fs_status fs_atomic_create_dir(const char *final_path, char **tmp_dir);

/* The descriptor this process holds on a temporary it created (the lock's),
 * -1 when none. Still owned by the table: never close it. */
int fs_atomic_fd(const char *tmp_path);

/* Remember tmp_path (a copy is kept) so a signal or fs_atomic_abort removes
 * it. Any rank may register the same path. */
void fs_atomic_register(const char *tmp_path);

/* A temporary directory: removed (when empty) on a signal, after the files. */
void fs_atomic_register_dir(const char *tmp_dir);

/* Stop tracking a path (it was renamed or removed by other means); its
 * descriptor is closed, which releases the lock. */
void fs_atomic_forget(const char *tmp_path);

/* Rename from to `to`. With `replace`, whatever file is at `to` is replaced;
 * without, -1 and errno EEXIST when `to` exists: renameat2's
 * RENAME_NOREPLACE, or where the file system lacks it link() and unlink()
 * for a file, a check and rename() for a directory. 0 or -1 with errno. */
int fs_atomic_rename(const char *from, const char *to, int replace);

/* Put tmp_path in place at final_path and forget it; replace as for
 * fs_atomic_rename. When final_path appeared without `replace`: FS_ERR_OUTPUT
 * ("appeared during the run"), tmp_path removed. */
fs_status fs_atomic_place(const char *tmp_path, const char *final_path, int replace);

/* fs_atomic_place replacing: for the files fftshard may always replace
 * (the report, the wisdom). */
fs_status fs_atomic_commit(const char *tmp_path, const char *final_path);

/* What a file was: the commit of a copy (--add) requires it unchanged. */
typedef struct fs_file_id {
    int exists;                 /* 0: there was no file (the rest is 0) */
    int regular;                /* fs_atomic_place_checked's own use */
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;      /* to the nanosecond */
} fs_file_id;

/* The name of the lock file beside OUTPUT: ".<base>" FS_ATOMIC_LOCK_SUFFIX. */
#define FS_ATOMIC_LOCK_SUFFIX ".fftshard-lock"

/* One process: the contents and permission bits of the file src into its
 * temporary tmp_path (made by fs_atomic_create), so that a run can change
 * a copy of a file and put it in place whole (--add). *id (out) is what src
 * was (exists 0, and nothing copied, when there is no src). src is opened
 * without following a link; not a regular file, or changed while it was
 * copied: FS_ERR_OUTPUT. */
fs_status fs_atomic_copy_into(const char *src, const char *tmp_path, fs_file_id *id);

/* Put tmp_path in place at final_path as fs_atomic_place does, under the
 * lock every fftshard commit of final_path takes (an open-file-description
 * write lock on ".<base>.fftshard-lock" beside it, removed by its holder
 * before it lets go; unlocked where the file system has none). With expect
 * (--add), only if final_path is still the file expect describes (device,
 * inode, size and modification time to the nanosecond), or still absent
 * when expect->exists is 0; otherwise FS_ERR_OUTPUT "OUTPUT changed during
 * the run", final_path untouched, tmp_path removed. Without expect,
 * `replace` as for fs_atomic_place. */
fs_status fs_atomic_place_checked(const char *tmp_path, const char *final_path, int replace,
                                  const fs_file_id *expect);

/* Unlink tmp_path (if it exists) and forget it. */
void fs_atomic_abort(const char *tmp_path);

/* Whether this process is the first of the job to end it for a failure
 * (1) or another one already does (0): the first takes a write lock on
 * the byte before FS_ATOMIC_LOCK_BYTE of the first registered temporary
 * file, and keeps it; one that finds the lock taken, or the temporary
 * already removed by the first, is second. 1 when nothing is registered
 * or the file system has no locks. So that a job says its failure once. */
int fs_atomic_claim_failure(void);

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
