/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pieces: see pieces.h. */
#include "config.h"

#include "plan/pieces.h"

#include "io/iomap.h"

/* The axis to cut the stage's box along: FIRST, its first of more than one
 * index; LAST, its first no operation transforms, else that one too. -1:
 * an operation that cannot be cut. A window is applied to each piece as it
 * is read, before its transforms: not in LAST, whose cut axis is
 * transformed before the pieces. */
static int piece_axis(const fs_op_spec *specs, int n, const fs_box *box, fs_pieces_kind kind)
{
    int first = -1, free_axis = -1;
    for (int i = 0; i < n; i++)
        if (!fs_op_transforms_axes(&specs[i]) && specs[i].kind != FS_OP_SCALE &&
            !(specs[i].kind == FS_OP_WINDOW && kind == FS_PIECES_FIRST))
            return -1;
    for (int k = 0; k < box->ndim; k++) {
        if (box->count[k] <= 1)
            continue;
        if (first < 0)
            first = k;
        int used = 0;
        for (int i = 0; i < n; i++)
            used |= fs_op_transforms_axes(&specs[i]) && specs[i].axes[k];
        if (!used && free_axis < 0)
            free_axis = k;
    }
    if (first < 0)
        return 0;
    return kind == FS_PIECES_LAST && free_axis >= 0 ? free_axis : first;
}

fs_piece_cut fs_pieces_cut(const fs_transform *t, int s, const fs_box *box, fs_pieces_kind kind,
                           int64_t piece_bytes)
{
    fs_piece_cut c = {piece_axis(t->ops[s], t->nops[s], box, kind), 0, 0, 0};
    if (c.axis < 0)
        return c;
    int64_t elems = fs_box_elems(box);
    int64_t slice_elems = elems > 0 ? elems / box->count[c.axis] : 0;
    int64_t slice_bytes = slice_elems * (int64_t)fs_dtype_bytes(t->work_type);
    c.per = slice_bytes > 0 && piece_bytes > slice_bytes ? piece_bytes / slice_bytes : 1;
    if (c.per > box->count[c.axis])
        c.per = box->count[c.axis];
    c.n = elems > 0 ? (box->count[c.axis] + c.per - 1) / c.per : 0;
    c.buf_bytes = kind == FS_PIECES_LAST ? (size_t)(slice_elems * c.per) * fs_dtype_bytes(t->work_type)
                                         : 0;
    return c;
}

/* A piece's FFTW plans, besides the twiddles of its lines (measured: 246
 * MiB of float32 cosine transforms on one rank, 62 pieces, held 1.2 to
 * 1.8 MiB beyond the footprint's plans). */
#define PIECE_PLAN_BYTES ((int64_t)16 * 1024)
#define SHORT_LINE 65536

int64_t fs_pieces_plans_bytes(const fs_transform *t, const fs_box *first, const fs_box *last)
{
    int64_t each = PIECE_PLAN_BYTES, n = 0, real = t->prec == FS_SINGLE ? 4 : 8;
    /* the short lines' (a long one's are counted with its plan, footprint.h;
     * FFTW shares its own twiddles among plans) */
    for (int a = 0; a < t->in_ndim && t->in_ndim > 1 && !t->fold; a++)
        if (t->transform_axis[a] && t->r2r[a] != FS_AXIS_FFT && t->in_shape[a] <= SHORT_LINE)
            each += t->in_shape[a] * 2 * real;
    fs_piece_cut c = fs_pieces_cut(t, 0, first, FS_PIECES_FIRST, FS_OVERLAP_PIECE_BYTES);
    n += c.axis < 0 ? 0 : c.n;
    if (t->nstages > 1) {
        c = fs_pieces_cut(t, t->nstages - 1, last, FS_PIECES_LAST, FS_OVERLAP_PIECE_BYTES);
        n += c.axis < 0 ? 0 : c.n;
    }
    return n * each;
}

int64_t fs_pieces_staging_bytes(const fs_transform *t, const fs_box *first, const fs_box *last,
                                int *count)
{
    fs_io_map rm = fs_transform_read_map(t, first), wm = fs_transform_write_map(t, last);
    *count = 0;
    /* the write goes in pieces only from memory laid out as OUTPUT's rows */
    if ((t->nstages == 1 && fs_io_map_is_plain(&rm, first)) || !fs_io_map_is_plain(&wm, last))
        return 0;
    fs_piece_cut c = fs_pieces_cut(t, t->nstages - 1, last, FS_PIECES_LAST, FS_OVERLAP_PIECE_BYTES);
    *count = c.axis < 0 ? 0 : c.n < FS_PIECE_BUFFERS ? (int)c.n : FS_PIECE_BUFFERS;
    return *count ? (int64_t)c.buf_bytes : 0;
}
