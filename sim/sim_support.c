/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sim_support: what the modules built into the simulator need from
 * modules it leaves out (fft.c brings FFTW, h5io.c HDF5).
 *
 * The working buffers are SMPI shared memory: every simulated rank maps the
 * same few physical pages, so 4096 ranks of a 1024^3 array fit in this
 * machine's memory. Their contents are garbage, which the exchange code does
 * not mind: it moves bytes and never looks at them, and the simulator models
 * the time of the copies instead of measuring them. */
#include "config.h"

#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compute/fft.h"
#include "io/h5io.h"

void *fs_buffer_alloc(size_t bytes)
{
    return SMPI_SHARED_MALLOC(bytes ? bytes : 1);
}

void fs_buffer_free(void *p)
{
    if (p)
        SMPI_SHARED_FREE(p);
}

/* transform.c's file maps: the simulator reads and writes no file. */
fs_io_map fs_io_map_plain(const fs_box *box, fs_dtype mem_type)
{
    fprintf(stderr, "fftshard-sim: internal error: a file map was asked for\n");
    abort();
    fs_io_map m;
    memset(&m, 0, sizeof m);
    m.file_box = *box;
    m.mem_type = mem_type;
    return m;
}
