/* SPDX-License-Identifier: GPL-3.0-or-later */
/* rawio: see rawio.h. */
#include "config.h"

#include "io/rawio.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct piece {
    fs_box box, mem_box;
    char *mem;
} piece;

struct fs_rawio {
    fs_rawio_args a;
    int fd;
    pthread_t thread;
    int started;
    pthread_mutex_t lock;
    pthread_cond_t changed;   /* a piece queued, a piece done, or stop */
    /* Under lock: */
    piece *queue;
    int64_t submitted, done;
    int stop;                 /* 1: after the queue; 2: at once */
    int err;                  /* errno of the first failure (-1: end of file) */
    const char *failed_call;  /* "pread", "pwrite" */
    double busy_s;
    /* The caller's alone: */
    double waited_s;
    int closed;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* All of n bytes at file offset `at`; 0, or -1 with errno (0: end of file). */
static int move_all(int fd, int writing, char *mem, size_t n, off_t at)
{
    while (n > 0) {
        ssize_t k = writing ? pwrite(fd, mem, n, at) : pread(fd, mem, n, at);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0)
                errno = 0;
            return -1;
        }
        mem += k;
        n -= (size_t)k;
        at += k;
    }
    return 0;
}

/* One piece, run by run; 0, or -1 with errno. */
static int move_piece(const fs_rawio *io, const piece *p)
{
    size_t eb = io->a.elem_bytes;
    fs_box_runs w;
    fs_box_runs_begin(&w, &p->box, &io->a.dataset, &p->mem_box, 0);
    while (fs_box_runs_next(&w)) {
        off_t at = (off_t)(io->a.data_offset + w.offset * (int64_t)eb);
        if (move_all(io->fd, io->a.writing, p->mem + (size_t)w.other_offset * eb,
                     (size_t)w.run_elems * eb, at) != 0)
            return -1;
    }
    return 0;
}

static void *run_thread(void *arg)
{
    fs_rawio *io = arg;
    pthread_mutex_lock(&io->lock);
    for (;;) {
        while (io->done == io->submitted && !io->stop)
            pthread_cond_wait(&io->changed, &io->lock);
        if (io->stop == 2 || io->err || io->done == io->submitted)
            break;
        piece p = io->queue[io->done];
        pthread_mutex_unlock(&io->lock);
        double t0 = now_s();
        int failed = move_piece(io, &p);
        int err = errno;
        double t = now_s() - t0;
        pthread_mutex_lock(&io->lock);
        io->busy_s += t;
        if (failed) {
            io->err = err ? err : -1;
            io->failed_call = io->a.writing ? "pwrite" : "pread";
        } else {
            io->done++;
        }
        pthread_cond_broadcast(&io->changed);
    }
    pthread_mutex_unlock(&io->lock);
    return NULL;
}

fs_status fs_rawio_new(const fs_rawio_args *a, fs_rawio **out)
{
    *out = NULL;
    fs_rawio *io = calloc(1, sizeof *io);
    piece *queue = calloc((size_t)(a->max_pieces > 0 ? a->max_pieces : 1), sizeof *queue);
    if (!io || !queue) {
        free(io);
        free(queue);
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    io->a = *a;
    io->queue = queue;
    io->fd = open(a->path, (a->writing ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
    if (io->fd < 0) {
        fs_status st = fs_error_set(FS_ERR_RUNTIME, "%s: cannot open for %s: %s", a->name,
                                    a->writing ? "writing" : "reading", strerror(errno));
        free(queue);
        free(io);
        return st;
    }
    pthread_mutex_init(&io->lock, NULL);
    pthread_cond_init(&io->changed, NULL);
    /* The thread starts with every signal held (it inherits the mask). */
    sigset_t all, old;
    sigfillset(&all);
    int err = pthread_sigmask(SIG_SETMASK, &all, &old);
    if (err == 0) {
        err = pthread_create(&io->thread, NULL, run_thread, io);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    io->started = err == 0;
    *out = io;
    if (err != 0) {
        fs_status st = fs_error_set(FS_ERR_RUNTIME, "cannot start the I/O thread: %s", strerror(err));
        fs_rawio_free(out, NULL);
        return st;
    }
    return FS_OK;
}

fs_status fs_rawio_submit(fs_rawio *io, const fs_box *box, const fs_box *mem_box, void *mem)
{
    pthread_mutex_lock(&io->lock);
    fs_status st = FS_OK;
    if (io->submitted >= io->a.max_pieces) {
        st = fs_error_set(FS_ERR_RUNTIME, "%s: more pieces than planned", io->a.name);
    } else {
        io->queue[io->submitted++] = (piece){*box, *mem_box, mem};
        pthread_cond_broadcast(&io->changed);
    }
    pthread_mutex_unlock(&io->lock);
    return st;
}

/* The failure as a message (caller holds the lock). */
static fs_status failure(const fs_rawio *io)
{
    const char *what = io->a.writing ? "write" : "read";
    if (io->err < 0)
        return fs_error_set(FS_ERR_RUNTIME, "%s: %s failed (%s: unexpected end of file)", io->a.name,
                            what, io->failed_call);
    return fs_error_set(FS_ERR_RUNTIME, "%s: %s failed (%s: %s)", io->a.name, what,
                        io->failed_call, strerror(io->err));
}

fs_status fs_rawio_wait(fs_rawio *io, int64_t n)
{
    double t0 = now_s();
    pthread_mutex_lock(&io->lock);
    while (io->done < n && !io->err)
        pthread_cond_wait(&io->changed, &io->lock);
    fs_status st = io->err ? failure(io) : FS_OK;
    pthread_mutex_unlock(&io->lock);
    io->waited_s += now_s() - t0;
    return st;
}

/* End the thread: stop 1 after the queue, 2 at once. */
static void join(fs_rawio *io, int stop)
{
    if (!io->started)
        return;
    pthread_mutex_lock(&io->lock);
    io->stop = stop;
    pthread_cond_broadcast(&io->changed);
    pthread_mutex_unlock(&io->lock);
    pthread_join(io->thread, NULL);
    io->started = 0;
}

fs_status fs_rawio_close(fs_rawio *io)
{
    fs_status st = fs_rawio_wait(io, io->submitted);
    join(io, st == FS_OK ? 1 : 2);
    io->closed = 1;
    if (close(io->fd) != 0 && st == FS_OK)
        st = fs_error_set(FS_ERR_RUNTIME, "%s: %s failed (close: %s)", io->a.name,
                          io->a.writing ? "write" : "read", strerror(errno));
    io->fd = -1;
    return st;
}

void fs_rawio_free(fs_rawio **iop, fs_rawio_times *times)
{
    fs_rawio *io = *iop;
    if (!io)
        return;
    join(io, 2);
    if (!io->closed && io->fd >= 0)
        (void)close(io->fd); /* a failure elsewhere is being reported */
    if (times)
        *times = (fs_rawio_times){io->busy_s, io->waited_s};
    pthread_cond_destroy(&io->changed);
    pthread_mutex_destroy(&io->lock);
    free(io->queue);
    free(io);
    *iop = NULL;
}
