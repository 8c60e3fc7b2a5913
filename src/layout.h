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
/* Intersection of two boxes (an empty box has some count 0). */
fs_box fs_box_intersect(const fs_box *a, const fs_box *b);
/* Nonzero when `inner` (global coordinates, inside `outer`) occupies one
 * contiguous run of the row-major storage of `outer`. */
int fs_box_is_contiguous_in(const fs_box *inner, const fs_box *outer);
/* Offset in elements of the first element of `inner` within `outer`'s storage. */
int64_t fs_box_offset_in(const fs_box *inner, const fs_box *outer);

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
