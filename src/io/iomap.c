/* SPDX-License-Identifier: GPL-3.0-or-later */
/* iomap: see iomap.h. */
#include "config.h"

#include "io/iomap.h"

#include <string.h>

fs_io_map fs_io_map_plain(const fs_box *box, fs_dtype mem_type)
{
    fs_io_map m;
    memset(&m, 0, sizeof m);
    m.file_box = *box;
    m.mem_type = mem_type;
    m.mem_stride_last = 1;
    for (int k = 0; k < box->ndim; k++)
        m.mem_dims[k] = box->count[k];
    return m;
}

int fs_io_map_is_plain(const fs_io_map *m, const fs_box *box)
{
    if (m->mem_stride_last != 1 || m->fold_inner > 0 || m->file_box.ndim != box->ndim)
        return 0;
    for (int k = 0; k < box->ndim; k++)
        if (m->file_box.start[k] != box->start[k] || m->file_box.count[k] != box->count[k] ||
            m->mem_dims[k] != box->count[k] || m->mem_start[k] != 0)
            return 0;
    return 1;
}
