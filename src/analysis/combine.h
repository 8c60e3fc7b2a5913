/* SPDX-License-Identifier: GPL-3.0-or-later */
/* combine: operations on the forward results of several INPUTs, each
 * multiplied element by element in the layout the forward transform ends
 * in (no exchange, no gather), then brought back by the inverse of the
 * round trip (transform.h) and written as one result:
 *   --correlate        ifftn(X_a conj X_b) / N  (one INPUT: X_a conj X_a)
 *   --convolve         ifftn(X_a X_b)
 *   --phase-correlate  ifftn(R / |R|), R = X_a conj X_b (|R| = 0: 0), and
 *                      the position of the largest real part, as the shift
 *                      of a against b (numpy's signed convention)
 * with X = fftn over the transformed axes, N their number of points; and
 *   --vector=gradient|curl|divergence|helmholtz  vector.h's operations of
 *                      the components, one result each (several per run)
 *
 * It owns the forward results kept on the ranks that hold them (input a's
 * last-stage box while b is transformed; --vector's spectra), the results'
 * paths in OUTPUT, --vector's grid (kgrid.h, --box-size) and
 * the phase correlation's peak. The multiplication is the pipeline's
 * "operate" phase, as --apply's is. */
#ifndef FS_COMBINE_H
#define FS_COMBINE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/kgrid.h"
#include "core/errors.h"
#include "core/layout.h"
#include "plan/runconfig.h"
#include "plan/transform.h"
#include "core/json.h"

typedef struct fs_combine fs_combine;

/* The operation's name as options, attributes and the report give it
 * ("correlate", "convolve", "phase-correlate"; NULL for none). */
const char *fs_combine_name(fs_combine_op op);

#define FS_COMBINE_PATH_MAX 1100

/* The results written on the last INPUT's turn for ndim-D INPUTs (0
 * without an operation; 1 but for --vector), and the path in OUTPUT of
 * result k into buf: OUTPUT's dataset path when given, else /correlation,
 * /convolution or /phase_correlation; --vector: /NAME (vector.h's), under
 * OUTPUT's path as a group when given. */
int fs_combine_results(const fs_run_config *o, int ndim);
void fs_combine_result_path(const fs_run_config *o, int ndim, int k, char *buf, size_t size);

/* From the n transforms ts planned for the INPUTs (every rank): *out NULL
 * without an operation; FS_ERR_USAGE when the INPUTs are not transformed
 * alike (one shape, the same axes, kind and precision: the same boxes). */
fs_status fs_combine_new(const fs_run_config *o, const fs_transform *const *ts, int n,
                         fs_combine **out);
void fs_combine_free(fs_combine **cb);

/* Whether input i's turn writes a result (cb NULL: every turn does), and
 * how many (cb NULL: 1). */
int fs_combine_writes(const fs_combine *cb, int i);
int fs_combine_count(const fs_combine *cb, int i);

/* The path of result k (fs_combine_result_path's). */
const char *fs_combine_path(const fs_combine *cb, int k);

/* --vector's grid (NULL: another operation, or cb NULL). */
const fs_kgrid *fs_combine_grid(const fs_combine *cb);

/* This rank's part of input i's forward result, the last-stage box `last`
 * of t at data: kept (the first of two, --vector's but the last), or
 * combined with the ones kept into data (result 0), ready for the inverse.
 * The status is this rank's. */
fs_status fs_combine_apply(fs_combine *cb, int i, const fs_transform *t, const fs_box *last,
                           void *data);

/* --vector, after result k - 1 is written: result k (k >= 1) into data
 * from the kept spectra, ready for the inverse; the last frees them. The
 * status is this rank's. */
fs_status fs_combine_next(fs_combine *cb, int k, const fs_transform *t, const fs_box *last,
                          void *data);

/* Collective, after the inverse (--phase-correlate; nothing else): the
 * largest real part of the field in the first-stage boxes `first` at data,
 * the first in numpy's order when several are equal, and its index. The
 * status is agreed. */
fs_status fs_combine_peak(fs_combine *cb, MPI_Comm comm, const fs_transform *t,
                          const fs_box *first, const void *data);

/* The report's part: a JSON "combine" object (arg: the fs_combine) and the
 * summary's line into buf (of size bytes). */
void fs_combine_json(fs_json *j, const void *arg);
void fs_combine_summary(const fs_combine *cb, const char *output, char *buf, size_t size);

#endif
