/* SPDX-License-Identifier: GPL-3.0-or-later */
/* vector: the stage of --vector, operations on the forward results of the
 * components of a field, element by element in the layout the forward
 * transform ends in, each result brought back by the inverse and written
 * (fs_stage_vector, stage.h):
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
 * The results are written as /NAME (grad_x ..., curl_x ..., divergence,
 * solenoidal_x ..., compressive_x ...), under OUTPUT's path as a group when
 * it names one. The spectra are kept in slots of this rank's last-stage box
 * (slots() of them): slot a holds V_a for a < D - 1 from the earlier turns;
 * on the last turn result 0 is made in the working array (and what the
 * later ones need in the slots), then each later result from the slots.
 * The stage owns the slots, the grid and the results' paths. */
#ifndef FS_VECTOR_H
#define FS_VECTOR_H

#define FS_VECTOR_MAX_AXES 3
#define FS_VECTOR_MAX_RESULTS (2 * FS_VECTOR_MAX_AXES)

typedef enum fs_vector_op {
    FS_VECTOR_NONE,
    FS_VECTOR_GRADIENT,
    FS_VECTOR_CURL,
    FS_VECTOR_DIVERGENCE,
    FS_VECTOR_HELMHOLTZ,
} fs_vector_op;

/* The stage's options: the operation asked for. */
typedef struct fs_vector_options {
    fs_vector_op op;
} fs_vector_options;

#endif
