/* SPDX-License-Identifier: GPL-3.0-or-later */
/* blocked: the in-place blocked layout shared by the strategies that need no
 * second array (xorswap, pairwise).
 *
 * The local buffer is seen as npeers slots of slot_elems elements each
 * (slot_elems = the largest block any rank sends or receives, so uneven
 * blocks are padded to equal slots). pack moves the `from` box, in place,
 * from its row-major storage to "slot q holds the block for peer q, packed
 * row-major, zero-padded"; unpack moves the received blocks, in place, from
 * their slots to the row-major storage of the `to` box. Both are permutations
 * of equal units done by following cycles (each unit copied once), with a
 * visited bitmap and one unit of scratch: the extra memory is
 * O(units / 8 + unit bytes), never a second array. */
#ifndef FS_BLOCKED_H
#define FS_BLOCKED_H

#include <stddef.h>
#include <stdint.h>
#include "core/errors.h"
#include "core/layout.h"

typedef struct fs_blocked fs_blocked;

/* Plan for redistribution rd with elements of elem_bytes. slot_of_source[q]
 * says which slot holds the block received from peer q when unpack runs
 * (NULL: slot q). *out is allocated; free with fs_blocked_free. */
fs_status fs_blocked_new(const fs_redist *rd, size_t elem_bytes, const int *slot_of_source,
                         fs_blocked **out);
void fs_blocked_free(fs_blocked **b);

/* Elements per slot (the buffer holds npeers slots). */
int64_t fs_blocked_slot_elems(const fs_blocked *b);

/* What fs_blocked_new(rd, elem_bytes, ...) needs, by arithmetic alone:
 * the buffer's elements (npeers slots) and a bound on the scratch bytes it
 * holds (bitmap, unit buffer, maps): the strategies' estimates
 * (fs_exchange_ops.estimate). */
void fs_blocked_estimate(const fs_redist *rd, size_t elem_bytes, int64_t *buffer_elems,
                         size_t *scratch_bytes);

/* In place on a buffer of npeers slots. */
void fs_blocked_pack(fs_blocked *b, void *data);
void fs_blocked_unpack(fs_blocked *b, void *data);

#endif
