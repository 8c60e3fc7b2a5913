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
    int slot;
    int64_t data_offset;
    fs_box region, box, mem_box;
    char *mem;
} piece;

typedef struct file {
    fs_rawio_args a;
    int fd;
} file;

/* A byte range written with drop_behind, on its way to the disk, and the
 * bytes of it this thread wrote. */
typedef struct extent {
    int fd;
    off_t at, len;
    int64_t bytes;
} extent;

/* The writes on their way (the thread's alone). */
typedef struct pending {
    extent *e;
    int64_t head, n, cap, bytes;
} pending;

struct fs_rawio {
    int64_t max_pieces;
    file files[FS_RAWIO_MAX_FILES];
    int nfiles;
    pthread_t thread;
    int started;
    pthread_mutex_t lock;
    pthread_cond_t changed;   /* a piece queued, a piece done, or stop */
    /* Under lock: */
    piece *queue;
    int64_t submitted, done;
    int stop;                 /* 1: after the queue; 2: at once */
    int err;                  /* errno of the first failure (-1: end of file) */
    const char *failed_call;  /* "pread", "pwrite", "sync_file_range" */
    int failed_slot;
    fs_rawio_times t;         /* busy, read, write and bytes */
    /* The thread's alone: */
    pending pend;
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

/* A file system that cannot write back a range (sync_file_range's
 * errors for "not here") is synced whole instead. */
static int unsupported(int err)
{
    return err == EINVAL || err == ENOSYS || err == ESPIPE || err == EOPNOTSUPP;
}

/* Wait for the oldest writes on their way until at most `keep` bytes are
 * left, each dropped from the page cache once on the disk; 0, or -1 with
 * errno. */
static int settle(pending *p, int64_t keep)
{
    while (p->n > 0 && p->bytes > keep) {
        extent *e = &p->e[p->head % p->cap];
        unsigned all = SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                       SYNC_FILE_RANGE_WAIT_AFTER;
        if (sync_file_range(e->fd, e->at, e->len, all) != 0 &&
            (!unsupported(errno) || fdatasync(e->fd) != 0))
            return -1;
        (void)posix_fadvise(e->fd, e->at, e->len, POSIX_FADV_DONTNEED);
        p->bytes -= e->bytes;
        p->head++;
        p->n--;
    }
    return 0;
}

#define PAGE_GAP 4096                /* bytes between two short writes noted as one */
#define MERGED_MOST ((off_t)1 << 20) /* the span of writes noted as one at most */

/* A range just written with drop_behind (bytes of it this thread's):
 * started to the disk and noted. */
static int start_write(pending *p, int fd, off_t at, off_t len, int64_t bytes)
{
    if (sync_file_range(fd, at, len, SYNC_FILE_RANGE_WRITE) != 0 && !unsupported(errno))
        return -1;
    /* a short run less than a page past the last one noted extends it (up to
     * MERGED_MOST): the strided runs of a block, a few elements each (a
     * pencil's rows), would otherwise note hundreds of thousands, megabytes
     * of records, before FS_RAWIO_DIRTY_BYTES are on their way; long runs
     * stay apart, settled one by one */
    extent *last = p->n ? &p->e[(p->head + p->n - 1) % p->cap] : NULL;
    if (last && last->fd == fd && len < PAGE_GAP && at >= last->at &&
        at - (last->at + last->len) < PAGE_GAP && at + len - last->at <= MERGED_MOST) {
        last->len = at + len > last->at + last->len ? at + len - last->at : last->len;
        last->bytes += bytes;
        p->bytes += bytes;
        return settle(p, FS_RAWIO_DIRTY_BYTES);
    }
    if (p->n == p->cap) {
        int64_t cap = p->cap ? 2 * p->cap : 64;
        extent *e = malloc((size_t)cap * sizeof *e);
        if (!e) {
            errno = ENOMEM;
            return -1;
        }
        for (int64_t i = 0; i < p->n; i++)
            e[i] = p->e[(p->head + i) % p->cap];
        free(p->e);
        p->e = e;
        p->head = 0;
        p->cap = cap;
    }
    p->e[(p->head + p->n++) % p->cap] = (extent){fd, at, len, bytes};
    p->bytes += bytes;
    return settle(p, FS_RAWIO_DIRTY_BYTES);
}

/* The range [at, at + len) of a file moved with drop_behind (bytes of it
 * moved): a read's pages dropped, a write's started. 0, or -1 with errno. */
static int behind(pending *p, const file *f, off_t at, off_t len, int64_t bytes)
{
    if (len <= 0)
        return 0;
    if (!f->a.writing) {
        (void)posix_fadvise(f->fd, at, len, POSIX_FADV_DONTNEED);
        return 0;
    }
    return start_write(p, f->fd, at, len, bytes);
}

static int64_t piece_bytes(const fs_rawio *io, const piece *p)
{
    return fs_box_elems(&p->box) * (int64_t)io->files[p->slot].a.elem_bytes;
}

/* The runs of a piece read with drop_behind that the kernel was asked to
 * read ahead, neighbours as one range, a window of FS_RAWIO_AHEAD_BYTES at
 * a time, up to a window past the part being read: a strided piece's many
 * short reads then wait on the disk about once, not once a run, and what
 * is read ahead stays within what a memory cgroup leaves the page cache. */
typedef struct ahead {
    fs_box_runs w;
    int more;          /* the runs' walk has runs left */
    int held;          /* [nlo, nhi): a run taken from it, not in the range yet */
    off_t nlo, nhi;
    off_t lo, hi;      /* the range gathered, not asked for yet */
    int64_t bytes;     /* asked for so far */
} ahead;

static void ahead_begin(ahead *a, const piece *p)
{
    fs_box_runs_begin(&a->w, &p->box, &p->region, &p->mem_box, 0);
    a->more = 1;
    a->held = 0;
    a->nlo = a->nhi = a->lo = a->hi = 0;
    a->bytes = 0;
}

/* Asked for `upto` bytes of the piece (or all of it). */
static void ahead_to(ahead *a, const file *f, const piece *p, int64_t upto)
{
    size_t eb = f->a.elem_bytes;
    while (a->bytes < upto) {
        /* the runs that follow the range on, up to a window */
        while (a->hi - a->lo < FS_RAWIO_AHEAD_BYTES) {
            if (!a->held && a->more && (a->more = fs_box_runs_next(&a->w))) {
                a->nlo = (off_t)(p->data_offset + a->w.offset * (int64_t)eb);
                a->nhi = a->nlo + (off_t)((size_t)a->w.run_elems * eb);
                a->held = 1;
            }
            if (!a->held || (a->hi > a->lo && a->nlo != a->hi))
                break;
            if (a->hi == a->lo)
                a->lo = a->nlo;
            a->hi = a->nhi;
            a->held = 0;
        }
        if (a->hi == a->lo)
            return;
        off_t len = a->hi - a->lo < FS_RAWIO_AHEAD_BYTES ? a->hi - a->lo : FS_RAWIO_AHEAD_BYTES;
        (void)posix_fadvise(f->fd, a->lo, len, POSIX_FADV_WILLNEED);
        a->lo += len;
        a->bytes += len;
    }
}

/* One piece, run by run, a run in pieces of at most FS_RAWIO_CHUNK_BYTES;
 * with drop_behind, each range of neighbouring runs is started to the disk
 * (or dropped) as it ends and every FS_RAWIO_CHUNK_BYTES of it: a strided
 * piece's span would take in what other ranks write between its runs, and
 * waiting for that serializes them; a long range left whole would be dirty
 * in the page cache at once. *ranges (out): how many ranges the piece is.
 * 0, or -1 with errno and *call the call that failed. */
static int move_piece(fs_rawio *io, const piece *p, const char **call, int64_t *ranges)
{
    const file *f = &io->files[p->slot];
    size_t eb = f->a.elem_bytes;
    int drop = f->a.drop_behind, writing = f->a.writing;
    fs_box_runs w;
    off_t lo = -1, end = -1; /* the range's part not yet behind; where it ends */
    int64_t done = 0;
    ahead a;
    ahead_begin(&a, p);
    fs_box_runs_begin(&w, &p->box, &p->region, &p->mem_box, 0);
    while (fs_box_runs_next(&w)) {
        off_t at = (off_t)(p->data_offset + w.offset * (int64_t)eb);
        size_t n = (size_t)w.run_elems * eb;
        *call = "sync_file_range";
        if (at != end) {
            if (drop && lo >= 0 && lo < end && behind(&io->pend, f, lo, end - lo, end - lo) != 0)
                return -1;
            (*ranges)++;
            lo = at;
        }
        for (size_t off = 0; off < n;) {
            size_t c = n - off < (size_t)FS_RAWIO_CHUNK_BYTES ? n - off : (size_t)FS_RAWIO_CHUNK_BYTES;
            if (drop && !writing)
                ahead_to(&a, f, p, done + (int64_t)c + FS_RAWIO_AHEAD_BYTES);
            *call = writing ? "pwrite" : "pread";
            if (move_all(f->fd, writing, p->mem + (size_t)w.other_offset * eb + off, c,
                         at + (off_t)off) != 0)
                return -1;
            done += (int64_t)c;
            off += c;
            end = at + (off_t)off;
            *call = "sync_file_range";
            if (drop && end - lo >= FS_RAWIO_CHUNK_BYTES) {
                if (behind(&io->pend, f, lo, end - lo, end - lo) != 0)
                    return -1;
                lo = end;
            }
        }
    }
    *call = "sync_file_range";
    return drop && lo >= 0 && lo < end ? behind(&io->pend, f, lo, end - lo, end - lo) : 0;
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
        piece p = io->queue[io->done % io->max_pieces];
        pthread_mutex_unlock(&io->lock);
        double t0 = now_s();
        const char *call = "pread";
        int64_t ranges = 0;
        int failed = move_piece(io, &p, &call, &ranges);
        int err = errno;
        double t = now_s() - t0;
        int writing = io->files[p.slot].a.writing;
        pthread_mutex_lock(&io->lock);
        io->t.busy_s += t;
        *(writing ? &io->t.write_s : &io->t.read_s) += t;
        if (failed) {
            io->err = err ? err : -1;
            io->failed_call = call;
            io->failed_slot = p.slot;
        } else {
            *(writing ? &io->t.written_bytes : &io->t.read_bytes) += piece_bytes(io, &p);
            *(writing ? &io->t.written_ranges : &io->t.read_ranges) += ranges;
            io->done++;
        }
        pthread_cond_broadcast(&io->changed);
    }
    /* After the queue (stop 1), the writes on their way reach the disk. */
    if (io->stop == 1 && !io->err) {
        pthread_mutex_unlock(&io->lock);
        double t0 = now_s();
        int failed = settle(&io->pend, 0);
        int err = errno;
        pthread_mutex_lock(&io->lock);
        io->t.busy_s += now_s() - t0;
        io->t.write_s += now_s() - t0;
        if (failed) {
            io->err = err ? err : EIO;
            io->failed_call = "sync_file_range";
            io->failed_slot = 0;
        }
    }
    pthread_mutex_unlock(&io->lock);
    return NULL;
}

/* Open a's file into slot io->nfiles. */
static fs_status open_file(fs_rawio *io, const fs_rawio_args *a)
{
    if (io->nfiles == FS_RAWIO_MAX_FILES)
        return fs_error_set(FS_ERR_RUNTIME, "%s: too many files for the I/O thread", a->name);
    file *f = &io->files[io->nfiles];
    f->a = *a;
    f->fd = open(a->path, (a->writing ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
    if (f->fd < 0)
        return fs_error_set(FS_ERR_RUNTIME, "%s: cannot open for %s: %s", a->name,
                            a->writing ? "writing" : "reading", strerror(errno));
    if (a->drop_behind && !a->writing)
        (void)posix_fadvise(f->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    io->nfiles++;
    return FS_OK;
}

fs_status fs_rawio_new(const fs_rawio_args *a, fs_rawio **out)
{
    *out = NULL;
    fs_rawio *io = calloc(1, sizeof *io);
    int64_t cap = a->max_pieces > 0 ? a->max_pieces : 1;
    piece *queue = calloc((size_t)cap, sizeof *queue);
    if (!io || !queue) {
        free(io);
        free(queue);
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    io->max_pieces = cap;
    io->queue = queue;
    fs_status st = a->path ? open_file(io, a) : FS_OK;
    if (st != FS_OK) {
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
        st = fs_error_set(FS_ERR_RUNTIME, "cannot start the I/O thread: %s", strerror(err));
        fs_rawio_free(out, NULL);
        return st;
    }
    return FS_OK;
}

fs_status fs_rawio_add(fs_rawio *io, const fs_rawio_args *a, int *slot)
{
    /* The thread reads the table only for pieces queued after this. */
    pthread_mutex_lock(&io->lock);
    *slot = io->nfiles;
    fs_status st = open_file(io, a);
    pthread_mutex_unlock(&io->lock);
    return st;
}

/* The failure as a message (caller holds the lock). */
static fs_status failure(const fs_rawio *io)
{
    const fs_rawio_args *a = &io->files[io->failed_slot].a;
    const char *what = a->writing ? "write" : "read";
    if (io->err < 0)
        return fs_error_set(FS_ERR_RUNTIME, "%s: %s failed (%s: unexpected end of file)", a->name,
                            what, io->failed_call);
    return fs_error_set(FS_ERR_RUNTIME, "%s: %s failed (%s: %s)", a->name, what, io->failed_call,
                        strerror(io->err));
}

fs_status fs_rawio_submit_to(fs_rawio *io, int slot, int64_t data_offset, const fs_box *region,
                             const fs_box *box, const fs_box *mem_box, void *mem)
{
    pthread_mutex_lock(&io->lock);
    /* a full queue waits for the thread to take a piece */
    while (io->submitted - io->done >= io->max_pieces && !io->err)
        pthread_cond_wait(&io->changed, &io->lock);
    fs_status st = FS_OK;
    if (io->err)
        st = failure(io);
    else if (slot < 0 || slot >= io->nfiles)
        st = fs_error_set(FS_ERR_RUNTIME, "the I/O thread has no file %d", slot);
    else {
        io->queue[io->submitted++ % io->max_pieces] =
            (piece){slot, data_offset, *region, *box, *mem_box, mem};
        pthread_cond_broadcast(&io->changed);
    }
    pthread_mutex_unlock(&io->lock);
    return st;
}

fs_status fs_rawio_submit(fs_rawio *io, const fs_box *box, const fs_box *mem_box, void *mem)
{
    const fs_rawio_args *a = &io->files[0].a;
    return fs_rawio_submit_to(io, 0, a->data_offset, &a->dataset, box, mem_box, mem);
}

int64_t fs_rawio_submitted(const fs_rawio *io)
{
    return io->submitted; /* the caller's own count */
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
    double t0 = now_s();
    join(io, st == FS_OK ? 1 : 2);
    io->waited_s += now_s() - t0; /* the last writes reaching the disk */
    if (st == FS_OK && io->err) {
        pthread_mutex_lock(&io->lock);
        st = failure(io);
        pthread_mutex_unlock(&io->lock);
    }
    io->closed = 1;
    for (int i = 0; i < io->nfiles; i++) {
        if (close(io->files[i].fd) != 0 && st == FS_OK)
            st = fs_error_set(FS_ERR_RUNTIME, "%s: %s failed (close: %s)", io->files[i].a.name,
                              io->files[i].a.writing ? "write" : "read", strerror(errno));
        io->files[i].fd = -1;
    }
    return st;
}

void fs_rawio_free(fs_rawio **iop, fs_rawio_times *times)
{
    fs_rawio *io = *iop;
    if (!io)
        return;
    join(io, 2);
    for (int i = 0; i < io->nfiles && !io->closed; i++)
        if (io->files[i].fd >= 0)
            (void)close(io->files[i].fd); /* a failure elsewhere is being reported */
    if (times) {
        *times = io->t;
        times->waited_s = io->waited_s;
    }
    pthread_cond_destroy(&io->changed);
    pthread_mutex_destroy(&io->lock);
    free(io->pend.e);
    free(io->queue);
    free(io);
    *iop = NULL;
}
