/* SPDX-License-Identifier: GPL-3.0-or-later */
/* buffer: the large working buffers of a rank (the data array, the
 * exchanges' second arrays and packing buffers, the staging of the I/O
 * pieces): 2 MiB aligned and, where the kernel allows, backed by
 * transparent huge pages. The strided FFT passes and the exchange touch
 * many pages; huge pages save their TLB misses and make first touch 512
 * times cheaper. Buffers of the same size have the same alignment, as
 * FFTW's new-array execution asks of a buffer used in place of the one a
 * plan was made on. A program that must place its buffers elsewhere (the
 * simulator: SMPI's shared memory) names its allocator once, before the
 * first buffer. Owns nothing but that choice. */
#ifndef FS_BUFFER_H
#define FS_BUFFER_H

#include <stddef.h>

/* NULL when out of memory; free with fs_buffer_free. */
void *fs_buffer_alloc(size_t bytes);
void fs_buffer_free(void *p);
/* What a buffer of `bytes` from fs_buffer_alloc holds once touched: a
 * large one in whole huge pages (for the footprint, plan/footprint.h). */
size_t fs_buffer_resident(size_t bytes);

/* malloc's: blocks of this size or more are mapped on their own and given
 * back when freed; the heap keeps this much of its top (main.c sets both). */
#define FS_MALLOC_MAPPED_BYTES (1 << 20)
#define FS_MALLOC_TRIM_BYTES (8 << 20)

/* Every later fs_buffer_alloc and fs_buffer_free goes to these (NULL:
 * back to the huge-page buffers). */
typedef struct fs_buffer_allocator {
    void *(*alloc)(size_t bytes);
    void (*release)(void *p);
} fs_buffer_allocator;
void fs_buffer_use(const fs_buffer_allocator *a);

#endif
