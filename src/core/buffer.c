/* SPDX-License-Identifier: GPL-3.0-or-later */
/* buffer: see buffer.h. */
#include "config.h"

#include "core/buffer.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "core/nodemem.h"

#define HUGE_PAGE ((size_t)2 * 1024 * 1024)

static const fs_buffer_allocator *allocator;

void fs_buffer_use(const fs_buffer_allocator *a)
{
    allocator = a;
}

void *fs_buffer_alloc(size_t bytes)
{
    if (allocator)
        return allocator->alloc(bytes ? bytes : 1);
    void *p = NULL;
    if (bytes < HUGE_PAGE)
        return posix_memalign(&p, 64, bytes ? bytes : 1) == 0 ? p : NULL;
    size_t rounded = fs_buffer_resident(bytes);
    if (posix_memalign(&p, HUGE_PAGE, rounded) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    /* Huge pages save TLB misses in the strided passes, but a buffer that
     * takes much of the memory left makes the kernel compact memory on
     * every fault (reads of a large input then crawl): advise them only
     * for buffers well under what is available. */
    if ((double)rounded < (double)fs_nodemem_meminfo_available() / 4)
        madvise(p, rounded, MADV_HUGEPAGE); /* advice: harmless where refused */
#endif
    return p;
}

size_t fs_buffer_resident(size_t bytes)
{
    return bytes < HUGE_PAGE ? bytes : (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
}

void fs_buffer_free(void *p)
{
    if (allocator && p)
        allocator->release(p);
    else if (!allocator)
        free(p);
}
