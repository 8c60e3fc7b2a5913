/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pipeline: one fftshard run, from the input file to the committed output.
 *
 * Probe the input on rank 0, check the output, plan the decomposition and the
 * FFT passes, read, transform, exchange, transform, run the stages
 * (stages/driver.h), write, and rename the temporary into place. Every
 * failure leaves through one cleanup path that removes the temporary, after
 * all ranks agree on the status. */
#ifndef FS_PIPELINE_H
#define FS_PIPELINE_H

#include <mpi.h>
#include "core/errors.h"
#include "options.h"

/* Collective over comm (which must have MPI_ERRORS_RETURN). The returned
 * status is the same on every rank and has been printed once. */
fs_status fs_pipeline_run(MPI_Comm comm, const fs_run_config *cfg);

#endif
