/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sharedbuf: see sharedbuf.h. */
#include "config.h"

#include "compute/sharedbuf.h"

#include <fftw3.h>

void *fs_sharedbuf_take(fs_sharedbuf *s, size_t bytes, size_t size)
{
    if (!s->users && !s->buf) {
        if (!(s->buf = fftw_malloc(size)))
            return NULL;
        s->bytes = size;
    }
    if (bytes > s->bytes)
        return fftw_malloc(bytes);
    s->users++;
    return s->buf;
}

void fs_sharedbuf_give(fs_sharedbuf *s, void *buf)
{
    if (!buf)
        return;
    if (buf != s->buf) {
        fftw_free(buf);
        return;
    }
    if (--s->users == 0) {
        fftw_free(s->buf);
        s->buf = NULL;
    }
}
