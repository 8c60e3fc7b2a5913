/* SPDX-License-Identifier: GPL-3.0-or-later */
/* textfile: a text file that one process reads line by line without ever
 * waiting on it: the tables of io/table.h, the list of --shards.
 *
 * A name that is not a regular file is refused before anything opens it:
 * opening a FIFO for reading waits for a writer, a device (/dev/zero) never
 * ends, a terminal waits for its user, and opening some devices does
 * something. The open cannot block either (O_NONBLOCK), should the name be
 * swapped meanwhile, and fstat checks what was opened. The bytes read are
 * those the file held when it was opened, FS_TEXT_MAX_BYTES at most; a
 * file whose size or modification time changed by the end of the read (a
 * writer still at work) was not read whole and is not taken. Lines end
 * with \n or \r\n (the line end is cut), the last one may lack it; a line
 * holding a NUL byte, or longer than its reader allows, is refused with its
 * number. Owns its descriptor and its buffer. */
#ifndef FS_TEXTFILE_H
#define FS_TEXTFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "core/errors.h"

/* The largest text file read: a table or a list is far smaller; the limit
 * keeps a mistaken name (a disk image, a core dump) from being read. */
#define FS_TEXT_MAX_BYTES ((int64_t)1 << 30)
#define FS_TEXT_MAX_TEXT "1 GiB"

typedef struct fs_textfile {
    const char *what, *file;  /* messages: what + file + ": ..." */
    int fd;
    struct stat opened;       /* the file as it was opened */
    char *buf;
    size_t cap, start, end;   /* buf[start, end): read, not yet handed out */
    int64_t left;             /* bytes of the file not yet read */
    size_t max_line;          /* bytes of a line at most, its line end not counted */
    int lineno;               /* the number of the line last handed out */
} fs_textfile;

/* What a file that is not a regular one is, for messages: "a FIFO", "a
 * socket", "a device", "a directory". */
const char *fs_file_kind(mode_t mode);

/* Open file for reading; what + file name it in messages ("--apply:
 * transfer:" "t.txt"). FS_ERR_INPUT (status 3) when it is missing, a
 * directory, not a regular file, unreadable or larger than
 * FS_TEXT_MAX_BYTES; FS_ERR_RUNTIME when out of memory. Closed by
 * fs_textfile_close, also after a failure. */
fs_status fs_textfile_open(fs_textfile *t, const char *what, const char *file, size_t max_line);

/* The next line in *line (out; NUL-terminated, without its line end, valid
 * until the next call), NULL after the last one; t->lineno is its number.
 * FS_ERR_INPUT for a line holding a NUL byte or longer than max_line;
 * FS_ERR_RUNTIME when the file cannot be read, or changed since it was
 * opened (checked once its last line was handed out). */
fs_status fs_textfile_next(fs_textfile *t, char **line);

void fs_textfile_close(fs_textfile *t);

#endif
