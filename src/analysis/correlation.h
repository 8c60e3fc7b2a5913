/* SPDX-License-Identifier: GPL-3.0-or-later */
/* correlation: --correlation-function, the two-point correlation function
 * xi(r) binned on the distributed result.
 *
 * The definition (fftshard(1), CORRELATION FUNCTION): C = ifftn(|fftn(x)|^2)
 * / N over the transformed axes (N their points; numpy's norms whatever
 * --norm says), the circular autocorrelation of the input as given (no mean
 * is subtracted: the user passes the overdensity); with --cross
 * C = ifftn(fftn(a) conj(fftn(b))) / N of the two inputs. Element d of C is
 * the separation d_a = fftfreq(n_a, 1/n_a)[j_a] (the minimum image, d_a in
 * [-n_a/2, n_a/2)), r = sqrt(sum_a (h_a d_a)^2) with the cell h_a = L_a /
 * n_a (1 without --box-size). xi of a bin is the mean of Re C over its
 * cells; batch axes add cells (each batch index is one more sample), and
 * several inputs without --cross add their C (the pair of their summed
 * power spectrum). Bins (--r-bins): shells one largest cell h wide (bin i
 * holds floor(r / h + 1/2) = i), N equal bins up to the largest r, or
 * edges, each [E_i, E_i+1).
 *
 * The work: after the forward transform and the write, the result in its
 * last layout is made the product |X|^2 (or X_a conj X_b, X_a the copy the
 * spectrum keeps for --cross) times the scale that gives C, the compute
 * plan's inverse takes it back to the first layout, and every rank bins the
 * real-space values it holds; one reduction sums the bins. The module owns
 * the bins and their sums; the copy and the buffers are others'. */
#ifndef FS_CORRELATION_H
#define FS_CORRELATION_H

#include <mpi.h>

#include "compute/compute.h"
#include "core/errors.h"
#include "io/h5io.h"
#include "plan/decomp.h"
#include "core/layout.h"
#include "plan/runconfig.h"
#include "plan/transform.h"
#include "core/progress.h"
#include "core/json.h"
#include "core/timers.h"

typedef struct fs_correlation fs_correlation;

/* The bins --correlation-function asks for on t's grid (o->box as the
 * spectra read it). FS_ERR_USAGE when they do not fit. Not collective. */
fs_status fs_correlation_new(const fs_run_config *o, const fs_transform *t, fs_correlation **out);
void fs_correlation_free(fs_correlation **c);

/* What one input's turn has to work on. */
typedef struct fs_correlation_args {
    MPI_Comm comm;
    const fs_transform *t;
    fs_compute *c;               /* planned with its inverse */
    const fs_decomposition *d;   /* this rank's boxes */
    void *data;                  /* the forward result in the last layout; destroyed */
    fs_timers *timers;
    fs_progress *progress;
} fs_correlation_args;

/* Collective: the product (other: --cross's first input's result for the
 * second's turn, else NULL), the inverse, the binning of this rank's part;
 * count_cells: the first input counts the cells and their r. */
fs_status fs_correlation_add(fs_correlation *c, const fs_correlation_args *a, const void *other,
                             int count_cells);

/* Collective, once every input is added: the sums over all ranks. */
fs_status fs_correlation_reduce(fs_correlation *c, MPI_Comm comm);

/* Collective: the group at `group` (/correlation_function, or under
 * OUTPUT's path with --spectrum-only: fs_spectrum_group) into the open
 * output o (replacing one with `replace`); fields: the inputs,
 * "FILE:DATASET, ...". */
fs_status fs_correlation_write(const fs_correlation *c, fs_h5_output *o, const char *group,
                               const char *fields, int replace);

/* The report's "correlation_function" member (with its group) and the
 * summary's line. */
void fs_correlation_json(fs_json *j, const fs_correlation *c, const char *group);
void fs_correlation_summary(const fs_correlation *c, const char *output, const char *group,
                            char *buf, size_t size);

#endif
