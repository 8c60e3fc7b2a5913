/* SPDX-License-Identifier: GPL-3.0-or-later */
/* atomic: see atomic.h. */
#include "config.h"

#include "core/atomic.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/collective.h"
#include "core/signals.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* The host part of a temporary's name is cut to this many bytes, and the
 * pid part given room for 10 digits, so that a base name's shortening
 * depends on the base name alone. */
#define HOST_BYTES 64
#define TEMP_RESERVE (1 + sizeof FS_ATOMIC_TAG - 1 + HOST_BYTES + 1 + 10 + 1 + 6)

/* A temporary whose process still runs but which holds no lock is left
 * alone: it may be between its creation and its lock. After this long,
 * that cannot be, and its owner is told. */
#define UNLOCKED_GRACE_S 60

/* Registered temporaries: fixed tables so the signal handler touches only
 * memory that is never reallocated. fds[i], valid while paths[i] is set,
 * is the descriptor holding the liveness lock, -1 on a rank that did not
 * create the temporary. */
#define MAX_TEMPORARIES 16
typedef struct table {
    char *paths[MAX_TEMPORARIES];
    int fds[MAX_TEMPORARIES];
} table;
static table files, dirs;

/* Close the lock's descriptor of path (the lock goes with it). */
static void release_in(table *t, const char *path)
{
    for (int i = 0; i < MAX_TEMPORARIES; i++) {
        if (t->paths[i] && strcmp(t->paths[i], path) == 0 && t->fds[i] >= 0) {
            close(t->fds[i]);
            t->fds[i] = -1;
        }
    }
}

static void forget_in(table *t, const char *path)
{
    release_in(t, path);
    for (int i = 0; i < MAX_TEMPORARIES; i++) {
        if (t->paths[i] && strcmp(t->paths[i], path) == 0) {
            char *p = t->paths[i];
            t->paths[i] = NULL;
            free(p);
        }
    }
}

static void forget(const char *path)
{
    forget_in(&files, path);
    forget_in(&dirs, path);
}

/* Register path once, with fd (or -1), which the table then owns. */
static void register_in(table *t, const char *path, int fd)
{
    int slot = -1;
    for (int i = 0; i < MAX_TEMPORARIES; i++) {
        if (t->paths[i] && strcmp(t->paths[i], path) == 0) {
            if (t->fds[i] < 0)
                t->fds[i] = fd;
            else if (fd >= 0 && fd != t->fds[i])
                close(fd);
            return;
        }
        if (!t->paths[i] && slot < 0)
            slot = i;
    }
    char *copy = slot >= 0 ? strdup(path) : NULL;
    if (!copy) {
        if (fd >= 0)
            close(fd);
        return;
    }
    t->fds[slot] = fd;
    t->paths[slot] = copy; /* last: the handler sees whole entries only */
}

void fs_atomic_register(const char *tmp_path)
{
    register_in(&files, tmp_path, -1);
}

void fs_atomic_register_dir(const char *tmp_dir)
{
    register_in(&dirs, tmp_dir, -1);
}

void fs_atomic_forget(const char *tmp_path)
{
    forget(tmp_path);
}

int fs_atomic_fd(const char *tmp_path)
{
    for (int i = 0; i < MAX_TEMPORARIES; i++) {
        if (files.paths[i] && strcmp(files.paths[i], tmp_path) == 0 && files.fds[i] >= 0)
            return files.fds[i];
        if (dirs.paths[i] && strcmp(dirs.paths[i], tmp_path) == 0 && dirs.fds[i] >= 0)
            return dirs.fds[i];
    }
    return -1;
}

/* The read lock on FS_ATOMIC_LOCK_BYTE that says "a live run writes this".
 * An open-file-description lock: it belongs to this descriptor alone, so
 * no other descriptor of the same file that HDF5 or MPI-IO closes releases
 * it, and it ends with the process however that ends. */
static int hold_lock(int fd)
{
    struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = FS_ATOMIC_LOCK_BYTE,
                       .l_len = 1};
    return fcntl(fd, F_OFD_SETLK, &fl);
}

/* 1: some process holds the lock on fd's file; 0: none does; -1: the file
 * system cannot tell. */
static int lock_held(int fd)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = FS_ATOMIC_LOCK_BYTE,
                       .l_len = 1, .l_pid = 0};
    if (fcntl(fd, F_OFD_GETLK, &fl) != 0)
        return -1;
    return fl.l_type != F_UNLCK;
}

int fs_atomic_claim_failure(void)
{
    const char *path = NULL;
    for (int i = 0; i < MAX_TEMPORARIES && !path; i++)
        path = files.paths[i];
    if (!path)
        return 1;
    /* Kept open to the end: closing it would drop the claim. */
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : 1;
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET,
                       .l_start = FS_ATOMIC_LOCK_BYTE - 1, .l_len = 1};
    if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
        return 1;
    int taken = errno == EAGAIN || errno == EACCES;
    close(fd);
    return !taken;
}

/* This host's name as temporaries carry it. */
static void this_host(char host[HOST_BYTES + 1])
{
    char full[256] = "localhost";
    gethostname(full, sizeof full - 1);
    full[sizeof full - 1] = '\0';
    snprintf(host, HOST_BYTES + 1, "%s", full);
    for (char *c = host; *c; c++)
        if (*c == '/')
            *c = '_';
}

char *fs_atomic_short_name(const char *name, size_t reserve)
{
    size_t len = strlen(name), room = NAME_MAX - reserve;
    if (len <= room)
        return strdup(name);
    /* The hash keeps two long names with the same start apart. */
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = (h ^ *c) * 16777619u;
    size_t keep = room - 9;
    while (keep > 0 && ((unsigned char)name[keep] & 0xC0) == 0x80)
        keep--; /* not inside a UTF-8 character */
    char *s = NULL;
    if (asprintf(&s, "%.*s~%08" PRIx32, (int)keep, name, h) < 0)
        return NULL;
    return s;
}

/* The mkstemp/mkdtemp template of a temporary for dir/base (malloc'ed). */
static char *temp_template(const char *dir, const char *base)
{
    char host[HOST_BYTES + 1];
    this_host(host);
    char *b = fs_atomic_short_name(base, TEMP_RESERVE), *t = NULL;
    if (b && asprintf(&t, "%s/.%s" FS_ATOMIC_TAG "%s-%ld-XXXXXX", dir, b, host, (long)getpid()) < 0)
        t = NULL;
    free(b);
    return t;
}

/* Unlink every entry of the directory open as fd, relative to fd: a link
 * is removed, never followed, and subdirectories stay. Closes fd. */
static void empty_dir_fd(int fd)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

/* Remove `name` from the directory dfd: the file or directory that was
 * opened as fd (closed here) and found to be `st`; a directory is emptied
 * through fd first. Only if the name still means that file: a name swapped
 * meanwhile is left (EBUSY). 0 or -1 with errno. */
static int remove_opened(int dfd, const char *name, int fd, const struct stat *st)
{
    if (S_ISDIR(st->st_mode))
        empty_dir_fd(fd);
    else
        close(fd);
    struct stat now;
    if (fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) != 0)
        return -1;
    if (now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
        errno = EBUSY;
        return -1;
    }
    return unlinkat(dfd, name, S_ISDIR(st->st_mode) ? AT_REMOVEDIR : 0);
}

/* Open `name` in dfd only if it is a regular file or a directory, without
 * following a link and without blocking (a FIFO or device is never
 * opened); *st is what was opened. -1 otherwise. */
static int open_entry(int dfd, const char *name, struct stat *st)
{
    struct stat before;
    if (fstatat(dfd, name, &before, AT_SYMLINK_NOFOLLOW) != 0 ||
        !(S_ISREG(before.st_mode) || S_ISDIR(before.st_mode)))
        return -1;
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
                                   (S_ISDIR(before.st_mode) ? O_DIRECTORY : 0));
    if (fd >= 0 && (fstat(fd, st) != 0 || st->st_dev != before.st_dev || st->st_ino != before.st_ino)) {
        close(fd);
        fd = -1;
    }
    return fd;
}

void fs_atomic_remove_tree(const char *path)
{
    char *d = strdup(path), *b = strdup(path);
    int dfd = d && b ? open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (dfd >= 0) {
        const char *name = basename(b);
        struct stat st;
        int fd = open_entry(dfd, name, &st);
        if (fd >= 0 && S_ISDIR(st.st_mode))
            remove_opened(dfd, name, fd, &st);
        else if (fd >= 0)
            close(fd);
        close(dfd);
    }
    free(d);
    free(b);
}

/* The leftover `name` in dfd (shown as dir/name), whose name goes on with
 * `owner` ("HOST-PID-XXXXXX"): judged by its lock and removed when dead. */
static void clean_one(int dfd, const char *dir, const char *name, const char *owner,
                      const char *host)
{
    char rest[NAME_MAX + 1];
    snprintf(rest, sizeof rest, "%s", owner);
    char *last = strrchr(rest, '-'), *mid = NULL;
    if (last) {
        *last = '\0';
        mid = strrchr(rest, '-'); /* the host may hold '-' */
    }
    if (!mid)
        return;
    *mid = '\0';
    long pid = strtol(mid + 1, NULL, 10);
    struct stat st;
    int fd = open_entry(dfd, name, &st);
    if (fd < 0)
        return; /* gone, or a link or special file: not ours to judge */
    int held = lock_held(fd);
    int gone = pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
    int here = strcmp(rest, host) == 0;
    if (held == 1) {
        /* a live run writes it */
    } else if (!here) {
        fs_note("warning: %s/%s: left by a run on %s (process %ld); remove it if no run is "
                "writing there", dir, name, rest, pid);
    } else if (held < 0) {
        fs_note("warning: %s/%s: left by process %ld, whose lock this file system cannot show; "
                "remove it if no run is writing there", dir, name, pid);
    } else if (!gone) {
        if (time(NULL) - st.st_ctime > UNLOCKED_GRACE_S)
            fs_note("warning: %s/%s: process %ld still runs but holds no lock on it; remove it "
                    "if no run is writing there", dir, name, pid);
    } else {
        int removed = remove_opened(dfd, name, fd, &st) == 0;
        int e = errno;
        fd = -1;
        if (removed)
            fs_note("note: removed %s/%s, left by an interrupted run (process %ld)", dir, name, pid);
        else
            fs_note("warning: %s/%s: left by an interrupted run (process %ld), not removed: %s",
                    dir, name, pid, e == EBUSY ? "it changed meanwhile" : strerror(e));
    }
    if (fd >= 0)
        close(fd);
}

/* Remove the temporaries for dir/base that runs killed outright (SIGKILL,
 * a node lost) left behind: those of this host that no live process holds
 * locked (see atomic.h) and whose process is gone or which are over a minute
 * old, each with a note on stderr; those of other hosts, unless locked,
 * are reported and not touched, as are those whose lock cannot be tested. */
static void clean_leftovers(const char *dir, const char *base)
{
    char host[HOST_BYTES + 1], *prefix = NULL;
    this_host(host);
    char *b = fs_atomic_short_name(base, TEMP_RESERVE);
    if (!b || asprintf(&prefix, ".%s" FS_ATOMIC_TAG, b) < 0)
        prefix = NULL;
    DIR *d = prefix ? opendir(dir) : NULL;
    if (d) {
        size_t pl = strlen(prefix);
        struct dirent *e;
        while ((e = readdir(d)))
            if (strncmp(e->d_name, prefix, pl) == 0)
                clean_one(dirfd(d), dir, e->d_name, e->d_name + pl, host);
        closedir(d);
    }
    free(prefix);
    free(b);
}

int fs_atomic_split_path(const char *path, char **dir, char **base)
{
    char *a = strdup(path), *b = strdup(path);
    *dir = a ? strdup(dirname(a)) : NULL;
    *base = b ? strdup(basename(b)) : NULL;
    free(a);
    free(b);
    if (*dir && *base)
        return 0;
    free(*dir);
    free(*base);
    *dir = *base = NULL;
    return -1;
}

fs_status fs_atomic_create(const char *final_path, char **tmp_path)
{
    *tmp_path = NULL;
    char *dir = NULL, *base = NULL, *tmp = NULL;
    fs_status ret = FS_OK;
    if (fs_atomic_split_path(final_path, &dir, &base) != 0) {
        ret = fs_error_set(FS_ERR_RUNTIME, "out of memory");
        goto done;
    }
    clean_leftovers(dir, base);
    if (!(tmp = temp_template(dir, base))) {
        ret = fs_error_set(FS_ERR_RUNTIME, "out of memory");
        goto done;
    }
    /* mkstemp creates the file exclusively (O_EXCL, never through a symlink)
     * with an unpredictable name and mode 0600. */
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        ret = fs_error_set(e == ENOSPC || e == EIO || e == ENOMEM ? FS_ERR_RUNTIME : FS_ERR_OUTPUT,
                           "%s: cannot create a file in directory %s: %s", final_path, dir,
                           strerror(e));
        goto done;
    }
    /* Locked and registered from the first moment a signal could strand it
     * (a file system without locks leaves leftovers to the user). */
    hold_lock(fd);
    register_in(&files, tmp, fd);
    /* Give the result the permissions a plain create would: 0666 & ~umask. */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) {
        int e = errno;
        fs_atomic_abort(tmp);
        ret = fs_error_set(FS_ERR_RUNTIME, "%s: %s", tmp, strerror(e));
        goto done;
    }
    *tmp_path = tmp;
    tmp = NULL;
done:
    free(tmp);
    free(dir);
    free(base);
    return ret;
}

fs_status fs_atomic_create_dir(const char *final_path, char **tmp_dir)
{
    *tmp_dir = NULL;
    char *dir = NULL, *base = NULL, *tmp = NULL;
    fs_status ret = FS_OK;
    if (fs_atomic_split_path(final_path, &dir, &base) != 0 || !(tmp = temp_template(dir, base))) {
        ret = fs_error_set(FS_ERR_RUNTIME, "out of memory");
        goto done;
    }
    if (!mkdtemp(tmp)) {
        ret = fs_error_set(FS_ERR_OUTPUT, "%s: cannot create a directory in %s: %s", final_path,
                           dir, strerror(errno));
        goto done;
    }
    int fd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        rmdir(tmp);
        ret = fs_error_set(FS_ERR_RUNTIME, "%s: %s", tmp, strerror(e));
        goto done;
    }
    hold_lock(fd);
    register_in(&dirs, tmp, fd);
    *tmp_dir = tmp;
    tmp = NULL;
done:
    free(tmp);
    free(dir);
    free(base);
    return ret;
}

int fs_atomic_rename(const char *from, const char *to, int replace)
{
    if (replace)
        return rename(from, to);
#ifdef SYS_renameat2
    if (syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
#endif
    /* A file system without it: link() never replaces either. */
    struct stat st;
    if (lstat(from, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        if (link(from, to) == 0) {
            unlink(from);
            return 0;
        }
        if (errno != EPERM && errno != EOPNOTSUPP && errno != ENOSYS)
            return -1;
    }
    /* Nor hard links (or a directory): the best left is to look first. */
    if (lstat(to, &st) == 0) {
        errno = EEXIST;
        return -1;
    }
    return errno == ENOENT ? rename(from, to) : -1;
}

fs_status fs_atomic_place(const char *tmp_path, const char *final_path, int replace)
{
    if (fs_atomic_rename(tmp_path, final_path, replace) != 0) {
        int e = errno;
        fs_atomic_abort(tmp_path);
        if (e == EEXIST && !replace)
            return fs_error_set(FS_ERR_OUTPUT, "%s: appeared during the run; use --force to "
                                "replace it", final_path);
        return fs_error_set(FS_ERR_RUNTIME, "%s: cannot rename the finished result into place: %s",
                            final_path, strerror(e));
    }
    forget(tmp_path); /* after the rename: the lock covers the whole run */
    return FS_OK;
}

fs_status fs_atomic_commit(const char *tmp_path, const char *final_path)
{
    return fs_atomic_place(tmp_path, final_path, 1);
}

void fs_atomic_abort(const char *tmp_path)
{
    if (!tmp_path)
        return;
    /* Closed first: NFS would keep an open file that is unlinked as .nfsXXXX. */
    release_in(&files, tmp_path);
    unlink(tmp_path);
    forget(tmp_path);
}

/* Remove the files of a directory, then the directory: open, getdents64,
 * unlinkat and rmdir are async-signal-safe (opendir and readdir are not).
 * O_NOFOLLOW: a directory swapped for a link is not emptied. */
static void empty_directory(const char *dir)
{
    static char buf[8192];
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (fd >= 0) {
        long n;
        while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
            for (long off = 0; off < n;) {
                struct linux_dirent64 {
                    uint64_t d_ino;
                    int64_t d_off;
                    unsigned short d_reclen;
                    unsigned char d_type;
                    char d_name[];
                } *e = (struct linux_dirent64 *)(buf + off);
                if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                    unlinkat(fd, e->d_name, 0);
                off += e->d_reclen;
            }
        }
        close(fd);
    }
    rmdir(dir);
}

void fs_atomic_remove_registered(void)
{
    for (int i = 0; i < MAX_TEMPORARIES; i++)
        if (files.paths[i])
            unlink(files.paths[i]);
    /* Any rank empties a temporary directory (the others may be killed
     * before their handlers run), with system calls only. */
    for (int i = 0; i < MAX_TEMPORARIES; i++)
        if (dirs.paths[i])
            empty_directory(dirs.paths[i]);
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static fs_status check_and_create(const char *final_path, const char *input_path, int force,
                                  char **tmp_path)
{
    struct stat st;
    if (input_path && same_file(input_path, final_path))
        return fs_error_set(FS_ERR_OUTPUT, "%s: is the input file; write the result to another file",
                            final_path);
    if (lstat(final_path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return fs_error_set(FS_ERR_OUTPUT, "%s: is a directory", final_path);
        /* Renaming over a device, fifo or symlink would replace it, not write to it. */
        if (!S_ISREG(st.st_mode))
            return fs_error_set(FS_ERR_OUTPUT, "%s: exists and is not a regular file", final_path);
        if (!force)
            return fs_error_set(FS_ERR_OUTPUT, "%s: exists; use --force to replace it", final_path);
    } else if (errno != ENOENT) {
        return fs_error_set(FS_ERR_OUTPUT, "%s: %s", final_path, strerror(errno));
    }
    return fs_atomic_create(final_path, tmp_path);
}

typedef struct begin_args {
    const char *final_path, *input_path;
    int force;
    char **tmp_path;
} begin_args;

static fs_status check_and_create_on_root(void *arg)
{
    begin_args *a = arg;
    return check_and_create(a->final_path, a->input_path, a->force, a->tmp_path);
}

fs_status fs_atomic_begin(MPI_Comm comm, const char *final_path, const char *input_path, int force,
                          char **tmp_path)
{
    *tmp_path = NULL;
    begin_args a = {final_path, input_path, force, tmp_path};
    fs_status st = fs_root_decides(comm, check_and_create_on_root, &a);
    if (st == FS_OK && (st = fs_bcast_string(comm, 0, tmp_path)) != FS_OK) {
        fs_atomic_abort(*tmp_path); /* rank 0's; NULL on the others */
        free(*tmp_path);
        *tmp_path = NULL;
    }
    if (st == FS_OK)
        fs_atomic_register(*tmp_path);
    return st;
}

fs_status fs_atomic_commit_collective(MPI_Comm comm, fs_status (*commit)(void *), void *arg)
{
    int rank;
    fs_signals_hold();
    /* Every rank holds its signals before rank 0 renames anything: no
     * handler removes a temporary from under the renames. */
    int err = MPI_Comm_rank(comm, &rank);
    if (err == MPI_SUCCESS)
        err = MPI_Barrier(comm);
    fs_status st = err == MPI_SUCCESS
                       ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "MPI_Barrier failed: %s",
                                              fs_mpi_strerror(err));
    if (st == FS_OK && rank == 0 && (st = commit(arg)) == FS_OK)
        fs_signals_pause_point("renamed");
    st = fs_error_agree(comm, st);
    fs_signals_release(st == FS_OK);
    return st;
}
