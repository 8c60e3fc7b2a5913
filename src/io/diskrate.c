/* SPDX-License-Identifier: GPL-3.0-or-later */
/* diskrate: see diskrate.h. */
#include "config.h"

#include "io/diskrate.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/atomic.h"
#include "core/collective.h"

#define PIECE_BYTES ((size_t)4 * 1024 * 1024)

typedef struct probe_args {
    const char *final_path;
    int64_t bytes;
    double rates[2];          /* read, write */
} probe_args;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Write then read the probe through fd; 0, or -1 with errno. */
static int time_probe(int fd, char *buf, int64_t bytes, double rates[2])
{
    double t0 = now_s();
    for (int64_t at = 0; at < bytes; at += (int64_t)PIECE_BYTES)
        if (pwrite(fd, buf, PIECE_BYTES, (off_t)at) != (ssize_t)PIECE_BYTES)
            return -1;
    if (fdatasync(fd) != 0)
        return -1;
    double written = now_s() - t0;
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    t0 = now_s();
    for (int64_t at = 0; at < bytes; at += (int64_t)PIECE_BYTES)
        if (pread(fd, buf, PIECE_BYTES, (off_t)at) != (ssize_t)PIECE_BYTES)
            return -1;
    double read = now_s() - t0;
    rates[0] = read > 0 ? (double)bytes / read : 0;
    rates[1] = written > 0 ? (double)bytes / written : 0;
    return 0;
}

/* Rank 0: the probe in a temporary of its own, removed after. */
static fs_status probe_on_root(void *arg)
{
    probe_args *a = arg;
    char *tmp = NULL;
    fs_status st = fs_atomic_create(a->final_path, &tmp);
    if (st != FS_OK)
        return st;
    char *buf = malloc(PIECE_BYTES);
    int fd = open(tmp, O_RDWR | O_CLOEXEC);
    if (!buf || fd < 0)
        st = fs_error_set(FS_ERR_RUNTIME, "%s: cannot probe the disk: %s", tmp,
                          buf ? strerror(errno) : "out of memory");
    else {
        memset(buf, 0x5a, PIECE_BYTES); /* not zeros: no file system may skip them */
        if (time_probe(fd, buf, a->bytes, a->rates) != 0)
            st = fs_error_set(FS_ERR_RUNTIME, "%s: cannot probe the disk: %s%s", tmp,
                              strerror(errno), errno == ENOSPC ? " (disk full)" : "");
    }
    if (fd >= 0)
        close(fd);
    free(buf);
    fs_atomic_abort(tmp);
    free(tmp);
    return st;
}

fs_status fs_diskrate_probe(MPI_Comm comm, const char *final_path, int64_t bytes,
                            double *read_rate, double *write_rate)
{
    int64_t piece = (int64_t)PIECE_BYTES;
    bytes = bytes > FS_DISKRATE_MAX_BYTES ? FS_DISKRATE_MAX_BYTES : bytes;
    bytes = (bytes + piece - 1) / piece * piece;
    probe_args a = {final_path, bytes > piece ? bytes : piece, {0, 0}};
    fs_status st = fs_root_decides(comm, probe_on_root, &a);
    if (st == FS_OK)
        st = fs_error_agree(comm, fs_bcast_bytes(comm, 0, a.rates, sizeof a.rates));
    *read_rate = a.rates[0];
    *write_rate = a.rates[1];
    return st;
}
