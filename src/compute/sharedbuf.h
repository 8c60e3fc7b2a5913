/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sharedbuf: one scratch buffer that the operations of a run take turns
 * with, instead of one each.
 *
 * The FFT passes gather strided lines into a buffer, and the cosine and
 * sine transforms through a complex FFT assemble their lines in one; each
 * fills, transforms and empties its buffer within one execution, and the
 * operations of a run execute one at a time, on one thread. A run makes
 * many of them (a piece of the array each where its I/O overlaps the FFTs,
 * a shape of block each out of core), so one buffer per kind serves them
 * all (one each would hold 34 MiB for a cosine transform of 246 MiB of
 * float32 in 62 pieces). An FFTW plan made on the shared buffer runs on it.
 * Not thread-safe: planning and execution are the run's main thread's. */
#ifndef FS_SHAREDBUF_H
#define FS_SHAREDBUF_H

#include <stddef.h>

typedef struct fs_sharedbuf {
    void *buf;
    size_t bytes;   /* its size, fixed while it has users */
    int users;
} fs_sharedbuf;

/* The shared buffer of `size` bytes (allocated with fftw_malloc by its
 * first user), or for `bytes` more than that a buffer of one's own; NULL
 * when out of memory. Give it back with fs_sharedbuf_give. */
void *fs_sharedbuf_take(fs_sharedbuf *s, size_t bytes, size_t size);
/* buf (NULL: nothing) back: the shared one freed with its last user. */
void fs_sharedbuf_give(fs_sharedbuf *s, void *buf);

#endif
