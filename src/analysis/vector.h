/* SPDX-License-Identifier: GPL-3.0-or-later */
/* vector: --vector's operations on the forward results of the components
 * of a field, element by element in the layout the forward transform ends
 * in (combine.h keeps the spectra and runs the inverse of each result):
 *   gradient    of one INPUT X: i k'_a X along each transformed axis a
 *   divergence  of D INPUTs V_a: i sum_a k'_a V_a
 *   curl        of 3 INPUTs: i k' x V
 *   helmholtz   of D INPUTs: S = V - C (solenoidal), C = k' (k'.V) / |k'|^2
 *               (compressive); |k'|^2 = 0: C = 0, the mode stays in S
 * with k' = kgrid.h's k with the Nyquist plane of an even axis set to 0
 * (as --apply's deriv), a = the transformed axes in increasing order (at
 * most three: x, y, z), each result times `scale` (the 1 / N the inverse
 * leaves to the caller).
 *
 * The spectra are kept in slots of this rank's last-stage box (fs_vector_slots
 * of them): slot a holds V_a for a < D - 1 from the earlier turns; on the last
 * turn fs_vector_first puts result 0 into data (and what the later ones
 * need into the slots), fs_vector_next result k. Pure arithmetic; owns
 * nothing. */
#ifndef FS_VECTOR_H
#define FS_VECTOR_H

#include <stdint.h>

#include "analysis/kgrid.h"
#include "core/errors.h"
#include "core/layout.h"
#include "plan/runconfig.h"
#include "plan/transform.h"

#define FS_VECTOR_MAX_AXES 3
#define FS_VECTOR_MAX_RESULTS (2 * FS_VECTOR_MAX_AXES)

/* Whether op is one of --vector's. */
int fs_vector_is(fs_combine_op op);

/* The INPUTs op takes on a D-axis transform. */
int fs_vector_inputs(fs_combine_op op, int D);

/* The kept spectra of a run of op with n INPUTs (what the footprint counts). */
int fs_vector_slots(fs_combine_op op, int n);

/* Its results on a D-axis transform, and the name of result k ("grad_x"). */
int fs_vector_results(fs_combine_op op, int D);
void fs_vector_result_name(fs_combine_op op, int D, int k, char *buf, size_t size);

/* The last turn: result 0 into data (which holds the last INPUT's spectrum),
 * slots prepared for the others. */
fs_status fs_vector_first(fs_combine_op op, const fs_kgrid *g, const fs_transform *t,
                          const fs_box *last, void **slots, void *data, double scale);

/* Result k (k >= 1) into data from the slots. */
fs_status fs_vector_next(fs_combine_op op, const fs_kgrid *g, const fs_transform *t,
                         const fs_box *last, void **slots, void *data, int k, double scale);

#endif
