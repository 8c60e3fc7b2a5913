/* SPDX-License-Identifier: GPL-3.0-or-later */
/* layout: decomposition arithmetic. No MPI calls, no allocation beyond the
 * redistribution tables, so every function here is unit-testable in one
 * process for any rank count.
 *
 * A rank's local data is always a box of the global array (start and count per
 * axis) stored row-major over the box. Moving from one distribution to another
 * is a redistribution: rank p sends to q the intersection of its box before
 * with q's box after. Slabs, pencils and gathers are all such moves, so one
 * exchange interface serves them all. Sizes are 64-bit throughout. */
#ifndef FS_LAYOUT_H
#define FS_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#define FS_LAYOUT_MAX_DIMS 8

/* --decomp: how the ranks split the array (see transform.h). */
typedef enum fs_decomp { FS_DECOMP_AUTO, FS_DECOMP_SLAB, FS_DECOMP_PENCIL } fs_decomp;

typedef struct fs_box {
    int ndim;
    int64_t start[FS_LAYOUT_MAX_DIMS];
    int64_t count[FS_LAYOUT_MAX_DIMS];
} fs_box;

/* Block split of n items over nparts: the first n % nparts parts get one more.
 * Part `part` gets *count items starting at *offset. */
void fs_split_block(int64_t n, int nparts, int part, int64_t *count, int64_t *offset);

/* The whole array of the given shape as a box. */
fs_box fs_box_full(int ndim, const int64_t *shape);
/* The box of part `part` when `shape` is split in blocks along `axis` over
 * nparts (axis < 0: part 0 holds everything, the others nothing). */
fs_box fs_box_split(int ndim, const int64_t *shape, int axis, int nparts, int part);
int64_t fs_box_elems(const fs_box *b);
/* Whether a and b are the same box (rank, start and count). */
int fs_box_equal(const fs_box *a, const fs_box *b);
/* Intersection of two boxes (an empty box has some count 0). */
fs_box fs_box_intersect(const fs_box *a, const fs_box *b);
/* Nonzero when `inner` (global coordinates, inside `outer`) occupies one
 * contiguous run of the row-major storage of `outer`. */
int fs_box_is_contiguous_in(const fs_box *inner, const fs_box *outer);
/* Offset in elements of the first element of `inner` within `outer`'s storage. */
int64_t fs_box_offset_in(const fs_box *inner, const fs_box *outer);

/* Strides of the row-major storage of box b, in elements: element
 * (start + i) is at sum_k i[k] * stride[k]. */
void fs_box_strides(const fs_box *b, int64_t stride[FS_LAYOUT_MAX_DIMS]);

/* The runs of a box: the walker over the row-major storage of a box inside
 * a larger array that the copies, permutations and visits of a box's
 * elements share.
 *
 * A walk steps through the elements of `inner`, in row-major order, a run at
 * a time. A run is a row along the last axis merged with the rows after it
 * across every trailing axis that inner covers fully both in `outer` and in
 * `other`, so it is contiguous in the storage of both; every run has the
 * same length. `other` is a second box holding inner (NULL: inner itself, so
 * other_offset is the offset in inner's own packed row-major copy). With
 * FS_BOX_RUNS_ROWS runs are single rows, never merged, for visitors that
 * need each element's coordinates. Both boxes must hold inner.
 *
 *     fs_box_runs w;
 *     fs_box_runs_begin(&w, inner, outer, NULL, 0);
 *     while (fs_box_runs_next(&w))
 *         memcpy(packed + w.other_offset * eb, data + w.offset * eb, w.run_elems * eb);
 *
 * It is an iterator rather than a callback so that the copy loops keep their
 * memcpy inline, and so that a walk can also go backwards or start anywhere
 * (fs_box_runs_seek): the own block of an exchange moves in place partly in
 * descending order.
 *
 * A per-element visitor such as --check's map_visit (pipeline.c: the
 * elements of an fs_io_map, memory with a strided last axis, a folded 1-D
 * view cut at fold_limit) is a walk with FS_BOX_RUNS_ROWS over
 *     inner = the map's file_box with rows [first_row, first_row + rows),
 *     outer = the memory array as a box in file coordinates, counted in
 *             steps s = mem_stride_last along the last axis:
 *             start[k] = file_box.start[k] - mem_start[k] / s_k,
 *             count[k] = mem_dims[k] / s_k (s_k = s on the last axis, else 1),
 * and, for element j of a run: memory offset s * (offset + j), coordinates
 * at[] with j added to the last one, and for a fold the run cut where
 * at[0] * fold_inner + at[1] + j reaches fold_limit. */
#define FS_BOX_RUNS_ROWS 1u

typedef struct fs_box_runs {
    int64_t run_elems;   /* elements in every run */
    int64_t nruns;       /* runs in the walk (0: inner is empty) */
    /* The current run, after fs_box_runs_next returned 1 or fs_box_runs_seek: */
    int64_t index;       /* 0 .. nruns - 1 in walk order (-1 before the first) */
    int64_t offset;      /* its first element in outer's storage */
    int64_t other_offset; /* its first element in other's storage */
    int64_t at[FS_LAYOUT_MAX_DIMS]; /* global coordinates of its first element */
    /* Private. Runs are indexed by the axes [0, axis). */
    int axis;
    int64_t first, other_first;
    int64_t start[FS_LAYOUT_MAX_DIMS], count[FS_LAYOUT_MAX_DIMS];
    int64_t stride[FS_LAYOUT_MAX_DIMS], other_stride[FS_LAYOUT_MAX_DIMS];
} fs_box_runs;

/* Start a walk of inner's runs (see above); flags 0 or FS_BOX_RUNS_ROWS.
 * The walk holds no pointer to the boxes. */
void fs_box_runs_begin(fs_box_runs *w, const fs_box *inner, const fs_box *outer,
                       const fs_box *other, unsigned flags);
/* Make run i (0 <= i < nruns) the current one; next continues after it. */
void fs_box_runs_seek(fs_box_runs *w, int64_t i);

/* Step to the next run (the first after begin): 1, or 0 past the last.
 * Inline: copy loops call it once per run, and runs can be a few bytes. */
static inline int fs_box_runs_next(fs_box_runs *w)
{
    if (w->index + 1 >= w->nruns)
        return 0;
    if (w->index < 0) {
        fs_box_runs_seek(w, 0);
        return 1;
    }
    w->index++;
    /* An odometer over the run axes. A run follows, so some axis has room
     * and the carry stops before axis 0 overflows. */
    for (int k = w->axis - 1;; k--) {
        w->offset += w->stride[k];
        w->other_offset += w->other_stride[k];
        if (++w->at[k] < w->start[k] + w->count[k])
            return 1;
        w->at[k] = w->start[k];
        w->offset -= w->count[k] * w->stride[k];
        w->other_offset -= w->count[k] * w->other_stride[k];
    }
}

/* Copy the sub-box `inner` (global coordinates) between the row-major storage
 * of `outer` (at outer_data) and a packed row-major buffer (at packed).
 * elem_bytes is the size of one element. */
void fs_box_pack(const fs_box *inner, const fs_box *outer, const void *outer_data,
                 void *packed, size_t elem_bytes);
void fs_box_unpack(const fs_box *inner, const fs_box *outer, void *outer_data,
                   const void *packed, size_t elem_bytes);

/* A redistribution over npeers ranks, seen from one rank: its box before
 * (`from`) and after (`to`), and per peer q the box sent to q (from ∩ to_q)
 * and received from q (from_q ∩ to), all in global coordinates. */
typedef struct fs_redist {
    int npeers;
    int self;                /* this rank's index among the peers */
    fs_box from, to;
    fs_box *send;            /* [npeers] */
    fs_box *recv;            /* [npeers] */
    fs_box *peer_from, *peer_to; /* [npeers]: every peer's from and to boxes (how
                                    its runs fall, for messages both sides cut alike) */
    int64_t *send_elems;     /* [npeers] */
    int64_t *recv_elems;     /* [npeers] */
    int64_t send_total, recv_total;
} fs_redist;

/* Build the redistribution of rank `self` given every peer's from/to boxes
 * (arrays of npeers). Returns NULL when out of memory. Free with
 * fs_redist_free(&r), which sets r to NULL. */
fs_redist *fs_redist_new(int npeers, int self, const fs_box *from_all, const fs_box *to_all);
void fs_redist_free(fs_redist **r);

/* The most elements an array may have: 2^56, so that its size in bytes,
 * padded real layouts and two buffers of it all stay far inside int64_t. */
#define FS_MAX_ELEMS ((int64_t)1 << 56)
#define FS_MAX_ELEMS_TEXT "2^56"

/* The number of elements of an array of the given shape (0 when an axis is
 * 0), or -1 when it exceeds FS_MAX_ELEMS or a length is negative. */
int64_t fs_shape_elems(int ndim, const int64_t *shape);

/* Parse "64x48x30" into shape; returns the number of axes, or -1 (also for
 * more than FS_MAX_ELEMS elements). */
int fs_parse_shape(const char *text, int64_t shape[FS_LAYOUT_MAX_DIMS]);
/* Format shape as "64x48x30" into buf. */
void fs_format_shape(int ndim, const int64_t *shape, char *buf, size_t size);

#endif
