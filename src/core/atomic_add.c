/* SPDX-License-Identifier: GPL-3.0-or-later */
/* atomic_add: atomic.h's side of --add: the copy of an existing OUTPUT
 * into its temporary, and the placement under the commit lock that puts
 * the result in place only if OUTPUT is still the file copied. */
#include "config.h"

#include "core/atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes from in to out from their current offsets to in's end: the kernel
 * copies (copy_file_range, which may share extents), or read and write
 * where it cannot across these files. 0 or -1 with errno. */
static int copy_contents(int in, int out)
{
    static char buf[1 << 20];
    int kernel = 1;
    for (;;) {
        ssize_t n = -1;
        if (kernel) {
            n = copy_file_range(in, NULL, out, NULL, (size_t)1 << 30, 0);
            if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL ||
                          errno == EOPNOTSUPP)) {
                kernel = 0;
                continue;
            }
        } else {
            n = read(in, buf, sizeof buf);
            for (ssize_t done = 0, w = 0; n > 0 && done < n; done += w)
                if ((w = write(out, buf + done, (size_t)(n - done))) < 0)
                    return -1;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -1 : 0;
    }
}

static void file_id_of(const struct stat *st, fs_file_id *id)
{
    *id = (fs_file_id){.exists = 1, .dev = st->st_dev, .ino = st->st_ino, .size = st->st_size,
                       .mtime = st->st_mtim};
}

static int same_id(const fs_file_id *a, const fs_file_id *b)
{
    if (!a->exists || !b->exists)
        return a->exists == b->exists;
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* What is at path now (not following a link): exists 0 when nothing. 0, or
 * -1 with errno when it cannot be told. */
static int file_id_at(const char *path, fs_file_id *id)
{
    struct stat st;
    memset(id, 0, sizeof *id);
    if (lstat(path, &st) == 0) {
        file_id_of(&st, id);
        id->regular = S_ISREG(st.st_mode);
        return 0;
    }
    return errno == ENOENT ? 0 : -1;
}

fs_status fs_atomic_copy_into(const char *src, const char *tmp_path, fs_file_id *id)
{
    struct stat st, after;
    fs_file_id now;
    fs_status ret = FS_OK;
    memset(id, 0, sizeof *id);
    /* Never through a link, never blocking on a FIFO swapped in. */
    int in = open(src, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), out = -1, e = 0;
    if (in < 0 && errno == ENOENT)
        return FS_OK; /* nothing to copy: the commit finds it absent or refuses */
    if (in < 0 || fstat(in, &st) != 0) {
        e = errno;
    } else if (!S_ISREG(st.st_mode)) {
        ret = fs_error_set(FS_ERR_OUTPUT, "%s: exists and is not a regular file", src);
        goto done;
    } else if ((out = open(tmp_path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        e = errno;
    } else if (copy_contents(in, out) != 0 || fchmod(out, st.st_mode & 07777) != 0 ||
               fstat(in, &after) != 0) {
        e = errno;
    }
    if (out >= 0 && close(out) != 0 && !e)
        e = errno;
    out = -1;
    if (e) {
        ret = fs_error_set(e == ENOENT || e == EACCES ? FS_ERR_OUTPUT : FS_ERR_RUNTIME,
                           "%s: cannot copy it into its temporary: %s", src, strerror(e));
        goto done;
    }
    file_id_of(&st, id);
    file_id_of(&after, &now);
    if (!same_id(id, &now))
        ret = fs_error_set(FS_ERR_OUTPUT, "%s: OUTPUT changed during the run (written while it "
                           "was copied); it is left as the other writer left it", src);
done:
    if (in >= 0)
        close(in);
    return ret;
}

/* The lock fftshard's commits of final_path take: an open-file-description
 * write lock on a file of fftshard's own beside it,
 * ".<base>.fftshard-lock", which its holder removes before letting go.
 * A process that locked a name already removed (or replaced) tries again.
 * *fd is -1 when the file system has no locks (the check runs unlocked). */
static fs_status lock_final(const char *final_path, char **lock_path, int *fd)
{
    char *dir = NULL, *base = NULL, *b = NULL;
    *lock_path = NULL;
    *fd = -1;
    fs_status ret = FS_OK;
    if (fs_atomic_split_path(final_path, &dir, &base) != 0 ||
        !(b = fs_atomic_short_name(base, 1 + sizeof FS_ATOMIC_LOCK_SUFFIX)) ||
        asprintf(lock_path, "%s/.%s" FS_ATOMIC_LOCK_SUFFIX, dir, b) < 0) {
        *lock_path = NULL;
        ret = fs_error_set(FS_ERR_RUNTIME, "out of memory");
        goto done;
    }
    for (;;) {
        int f = open(*lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (f < 0) {
            ret = fs_error_set(FS_ERR_OUTPUT, "%s: cannot lock it for the commit: %s",
                               *lock_path, strerror(errno));
            goto done;
        }
        struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
        int r;
        while ((r = fcntl(f, F_OFD_SETLKW, &fl)) != 0 && errno == EINTR)
            ;
        if (r != 0) {
            int e = errno;
            close(f);
            if (e == EINVAL || e == ENOLCK || e == EOPNOTSUPP || e == ENOSYS) {
                unlink(*lock_path); /* no locks here: the check runs unlocked */
                goto done;
            }
            ret = fs_error_set(FS_ERR_RUNTIME, "%s: cannot lock it for the commit: %s",
                               *lock_path, strerror(e));
            goto done;
        }
        struct stat held, named;
        if (fstat(f, &held) == 0 && lstat(*lock_path, &named) == 0 && held.st_dev == named.st_dev &&
            held.st_ino == named.st_ino) {
            *fd = f;
            goto done;
        }
        close(f); /* its holder removed it meanwhile */
    }
done:
    if (ret != FS_OK) {
        free(*lock_path);
        *lock_path = NULL;
    }
    free(b);
    free(dir);
    free(base);
    return ret;
}

static void unlock_final(char *lock_path, int fd)
{
    if (fd >= 0) {
        unlink(lock_path); /* while still held: nobody else holds this name */
        close(fd);
    }
    free(lock_path);
}

fs_status fs_atomic_place_checked(const char *tmp_path, const char *final_path, int replace,
                                  const fs_file_id *expect)
{
    char *lock_path = NULL;
    int fd = -1;
    fs_status st = lock_final(final_path, &lock_path, &fd);
    if (st != FS_OK) {
        fs_atomic_abort(tmp_path);
        return st;
    }
    fs_file_id now;
    if (expect && file_id_at(final_path, &now) != 0) {
        st = fs_error_set(FS_ERR_OUTPUT, "%s: cannot tell whether it changed during the run: %s",
                          final_path, strerror(errno));
        fs_atomic_abort(tmp_path);
    } else if (expect && (!same_id(expect, &now) || (now.exists && !now.regular))) {
        st = fs_error_set(FS_ERR_OUTPUT, "%s: OUTPUT changed during the run (%s); it is left as "
                          "the other writer left it, and nothing was added", final_path,
                          !expect->exists ? "it appeared after the run began"
                          : !now.exists   ? "it was removed after it was copied"
                                          : "it was written or replaced after it was copied");
        fs_atomic_abort(tmp_path);
    } else {
        /* --add: the file copied is replaced; without it, replace as asked. */
        st = fs_atomic_place(tmp_path, final_path, expect ? expect->exists : replace);
    }
    unlock_final(lock_path, fd);
    return st;
}
