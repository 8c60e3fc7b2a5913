/* SPDX-License-Identifier: GPL-3.0-or-later */
/* textfile: see textfile.h. */
#include "config.h"

#include "io/textfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/signals.h"

/* Bytes read at once (a line may be longer: the buffer holds one whole). */
#define CHUNK_BYTES 65536

const char *fs_file_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "a device";
    return "not a file";
}

/* t->fd open on a regular file of at most FS_TEXT_MAX_BYTES, t->opened its
 * status; nothing is read yet. */
static fs_status open_regular(fs_textfile *t)
{
    const char *what = t->what, *file = t->file;
    struct stat st;
    /* stat decides before anything opens the name. */
    if (stat(file, &st) != 0)
        return fs_error_set(FS_ERR_INPUT, "%s%s: %s", what, file,
                            errno == ENOENT ? "no such file" : strerror(errno));
    if (S_ISDIR(st.st_mode))
        return fs_error_set(FS_ERR_INPUT, "%s%s: is a directory", what, file);
    if (!S_ISREG(st.st_mode))
        return fs_error_set(FS_ERR_INPUT, "%s%s: not a regular file (%s)", what, file,
                            fs_file_kind(st.st_mode));
    t->fd = open(file, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (t->fd < 0)
        return fs_error_set(FS_ERR_INPUT, "%s%s: %s", what, file, strerror(errno));
    if (fstat(t->fd, &t->opened) != 0)
        return fs_error_set(FS_ERR_RUNTIME, "%s%s: %s", what, file, strerror(errno));
    if (!S_ISREG(t->opened.st_mode))
        return fs_error_set(FS_ERR_INPUT, "%s%s: not a regular file (%s)", what, file,
                            fs_file_kind(t->opened.st_mode));
    if (t->opened.st_size > FS_TEXT_MAX_BYTES)
        return fs_error_set(FS_ERR_INPUT, "%s%s: larger than " FS_TEXT_MAX_TEXT " (%lld bytes)",
                            what, file, (long long)t->opened.st_size);
    t->left = (int64_t)t->opened.st_size;
    return FS_OK;
}

fs_status fs_textfile_open(fs_textfile *t, const char *what, const char *file, size_t max_line)
{
    memset(t, 0, sizeof *t);
    t->fd = -1;
    t->what = what;
    t->file = file;
    t->max_line = max_line;
    fs_status st = open_regular(t);
    if (st != FS_OK)
        return st;
    /* A whole line with its \r, one byte more (a \n, or the one too many)
     * and a terminating NUL fit. */
    t->cap = max_line + 3 > CHUNK_BYTES ? max_line + 3 : CHUNK_BYTES;
    t->buf = malloc(t->cap);
    return t->buf ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory");
}

/* The file as read is the file as opened: nothing was written to it
 * meanwhile (its size and modification time are those of the open). */
static fs_status unchanged(const fs_textfile *t)
{
    /* FFTSHARD_PAUSE=text-read: a test changes the file here. */
    fs_signals_pause_point("text-read");
    struct stat now;
    if (fstat(t->fd, &now) != 0)
        return fs_error_set(FS_ERR_RUNTIME, "%s%s: %s", t->what, t->file, strerror(errno));
    const struct stat *was = &t->opened;
    if (now.st_size != was->st_size || now.st_mtim.tv_sec != was->st_mtim.tv_sec ||
        now.st_mtim.tv_nsec != was->st_mtim.tv_nsec)
        return fs_error_set(FS_ERR_RUNTIME, "%s%s: changed while it was read (%s); not taken",
                            t->what, t->file,
                            now.st_size != was->st_size ? "its size" : "its modification time");
    return FS_OK;
}

/* More of the file after what buf holds (t->left > 0). */
static fs_status fill(fs_textfile *t)
{
    if (t->start > 0) {
        memmove(t->buf, t->buf + t->start, t->end - t->start);
        t->end -= t->start;
        t->start = 0;
    }
    /* Room for one byte at least: the caller keeps no more than a line and
     * its \r unended, and one byte for the NUL. */
    size_t want = t->cap - 1 - t->end;
    if ((int64_t)want > t->left)
        want = (size_t)t->left;
    ssize_t n;
    do
        n = read(t->fd, t->buf + t->end, want);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return fs_error_set(FS_ERR_RUNTIME, "%s%s: %s", t->what, t->file, strerror(errno));
    if (n == 0)   /* cut short since it was opened */
        return fs_error_set(FS_ERR_RUNTIME, "%s%s: changed while it was read (its size); "
                            "not taken", t->what, t->file);
    t->end += (size_t)n;
    t->left -= n;
    return FS_OK;
}

fs_status fs_textfile_next(fs_textfile *t, char **line)
{
    *line = NULL;
    char *begin = NULL, *nl = NULL;
    for (;;) {
        begin = t->buf + t->start;
        nl = memchr(begin, '\n', t->end - t->start);
        if (nl || t->end - t->start > t->max_line + 1)
            break;
        if (t->left == 0) {
            if (t->end == t->start)
                return unchanged(t);
            break;   /* the last line, without its \n */
        }
        fs_status st = fill(t);
        if (st != FS_OK)
            return st;
    }
    t->lineno++;
    size_t len = nl ? (size_t)(nl - begin) : t->end - t->start;
    if (len > 0 && begin[len - 1] == '\r')
        len--;
    if (len > t->max_line)
        return fs_error_set(FS_ERR_INPUT, "%s%s: line %d is longer than %zu bytes", t->what,
                            t->file, t->lineno, t->max_line);
    if (memchr(begin, '\0', len))
        return fs_error_set(FS_ERR_INPUT, "%s%s: line %d holds a NUL byte: not text", t->what,
                            t->file, t->lineno);
    t->start = nl ? (size_t)(nl + 1 - t->buf) : t->end;
    begin[len] = '\0';
    *line = begin;
    return FS_OK;
}

void fs_textfile_close(fs_textfile *t)
{
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
    free(t->buf);
    t->buf = NULL;
}
