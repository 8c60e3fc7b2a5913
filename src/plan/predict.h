/* SPDX-License-Identifier: GPL-3.0-or-later */
/* predict: --dry-run --platform, the strategies' times on a simulated
 * machine.
 *
 * Runs SimGrid's smpirun with the user's platform file on the simulator
 * fftshard-sim (built from fftshard's own exchange code, sim/fftshard-sim.c)
 * for the planned shape, type, ranks and grid, and prints its predicted
 * exchange and total seconds per strategy. The simulator is looked for next
 * to the fftshard binary (and in the build tree's sim/), then in PATH;
 * smpirun in PATH. Runs on one process, rank 0's, after the plan is
 * printed. */
#ifndef FS_PREDICT_H
#define FS_PREDICT_H

#include <stdio.h>

#include "core/errors.h"
#include "plan/runconfig.h"
#include "plan/transform.h"

/* Print the prediction for plan t on opts->platform_file to out. A missing
 * smpirun or simulator, or a failed simulation, is FS_ERR_RUNTIME with a
 * one-line reason. */
fs_status fs_predict_print(FILE *out, const fs_run_config *opts, const fs_transform *t, int ndim,
                           const int64_t *shape, fs_dtype dtype, int nranks);

#endif
