/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pieces: how a stage's box is cut into pieces, so that the I/O of the
 * first and last stages overlaps their FFTs (compute.h's pieces, overlap.h),
 * and how much --check reads again at a time: arithmetic alone, shared by
 * the compute plan, which runs the pieces, and the footprint, which counts
 * their buffers. Owns nothing. */
#ifndef FS_PIECES_H
#define FS_PIECES_H

#include <stddef.h>
#include <stdint.h>

#include "core/layout.h"
#include "plan/transform.h"

/* Pieces of the input read, and of the output written, while the FFTs of
 * the pieces before run: a few MiB, so that the first piece arrives soon
 * and the staging of the output (FS_PIECE_BUFFERS of them) stays small. */
#define FS_OVERLAP_PIECE_BYTES ((int64_t)4 * 1024 * 1024)
#define FS_PIECE_BUFFERS 3
/* --check reads the input again in pieces of about this many bytes (at
 * least a row), no more than the rank's rows: what the check needs beyond
 * the array and the inverse plans. */
#define FS_CHECK_PIECE_BYTES ((int64_t)16 << 20)

/* FS_PIECES_FIRST: stage 0, cut along the box's first axis of more than
 * one index (each piece one run of memory, read straight into place).
 * FS_PIECES_LAST: the last stage, cut along the first axis no operation of
 * the stage transforms, else along the first of more than one index; each
 * piece is staged in a buffer of its own to be written from there. */
typedef enum fs_pieces_kind { FS_PIECES_FIRST, FS_PIECES_LAST } fs_pieces_kind;

typedef struct fs_piece_cut {
    int axis;           /* the axis cut; -1: an operation that cannot be cut */
    int64_t per;        /* indices of it per piece */
    int64_t n;          /* pieces */
    size_t buf_bytes;   /* LAST: the bytes of one staging buffer */
} fs_piece_cut;

/* How stage s of t on box is cut into pieces of about piece_bytes. Only
 * complex, cosine and sine transforms and scaling are cut (axis -1 for
 * other operations: the four-step's twiddle and transpose, real-to-complex
 * transforms). */
fs_piece_cut fs_pieces_cut(const fs_transform *t, int s, const fs_box *box, fs_pieces_kind kind,
                           int64_t piece_bytes);

/* The staging buffers the I/O overlap allocates on a rank whose first and
 * last boxes are these: *count (out) of the bytes returned each (0: no
 * write in pieces, as for one stage whose read goes in pieces, or a last
 * box whose memory is not laid out as OUTPUT's rows). */
int64_t fs_pieces_staging_bytes(const fs_transform *t, const fs_box *first, const fs_box *last,
                                int *count);

/* What the operations of those pieces hold each, besides the buffers they
 * share (compute/sharedbuf.h): FFTW's plans of the piece and the twiddles
 * of its cosine and sine lines, all of them at once (they are planned
 * before the read). */
int64_t fs_pieces_plans_bytes(const fs_transform *t, const fs_box *first, const fs_box *last);

#endif
