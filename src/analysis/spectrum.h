/* SPDX-License-Identifier: GPL-3.0-or-later */
/* spectrum: power and cross spectra binned on the distributed result.
 *
 * After the forward transform every rank bins |X|^2 of its own part of the
 * result into shells of |k|, and one reduction gives every rank the whole
 * spectrum; nothing is gathered. The convention (fftshard(1), SPECTRA):
 * element [j0, j1, ...] has the wave vector k_a = 2 pi f_a / L_a over the
 * transformed axes a, f_a = numpy.fft.fftfreq(n_a, 1/n_a)[j_a] and L_a the
 * box length (--box-size, default n_a). Shell i holds the modes with
 * floor(|k| / k_f + 1/2) = i, k_f = 2 pi / max L_a, unless --bins gives
 * other edges. Per bin: the number of modes, their mean |k| and their mean
 * |X|^2 (times V / N^2 with --box-size). The half spectrum of an r2c counts
 * every mode that stands for two twice, so it equals the full complex
 * computation. Batch axes add modes: each batch index is one more sample.
 *
 * Several inputs add their power (the kinetic energy spectrum of u, v, w is
 * half of it); --cross bins Re(X_a conj X_b) of two inputs with their two
 * power spectra. --los bins again by |mu| = |k_los| / |k|. */
#ifndef FS_SPECTRUM_H
#define FS_SPECTRUM_H

#include <mpi.h>

#include "analysis/correlation.h"
#include "core/errors.h"
#include "io/h5io.h"
#include "core/layout.h"
#include "plan/runconfig.h"
#include "core/json.h"
#include "core/timers.h"
#include "plan/transform.h"

typedef struct fs_spectrum fs_spectrum;

/* What the options ask for, checked against the n transforms of the run
 * (every rank, the same arguments): NULL in *out when no spectrum is asked
 * for. FS_ERR_USAGE when the options do not fit the inputs (a --box-size
 * or --los for other axes, inputs of different shapes). Not collective. */
fs_status fs_spectrum_new(const fs_run_config *o, const fs_transform *const *ts, int n,
                          fs_spectrum **out);
void fs_spectrum_free(fs_spectrum **s);

/* Bin the result of input i (this rank's last-stage box `last` of t in
 * data). With --cross, input 0's result is kept for input 1's turn. Not
 * collective. */
fs_status fs_spectrum_add(fs_spectrum *s, int i, const fs_transform *t, const fs_box *last,
                          const void *data);

/* --correlation-function's part (correlation.h), NULL for none or s NULL. */
fs_correlation *fs_spectrum_correlation(const fs_spectrum *s);

/* Collective, after input i is binned and written: its part in the
 * correlation function; with
 * --cross the first input's result is kept for the second's turn, whose
 * product uses it and frees it. */
fs_status fs_spectrum_correlate(fs_spectrum *s, int i, const fs_correlation_args *a);

/* Collective, once every input is binned: the sums over all ranks. */
fs_status fs_spectrum_reduce(fs_spectrum *s, MPI_Comm comm);

/* The n inputs of a spectrum: each one's location as given, its dataset
 * as probed, and the dataset's own attributes (attrs NULL: none). */
typedef struct fs_spectrum_inputs {
    const fs_location *inputs;
    const fs_input_info *infos;
    const fs_input_attrs *attrs;
    int n;
} fs_spectrum_inputs;

/* Collective: the spectra into the open output o as the groups named by
 * fs_spectrum_group (replacing what is there with `replace`), each with
 * its convention as attributes, the fields' names ("FILE:DATASET" of each
 * input: its file, and its dataset as probed), then the attributes every
 * input's dataset holds alike (a time, a viscosity, units), but for the
 * group's own names. */
fs_status fs_spectrum_write(const fs_spectrum *s, fs_h5_output *o, const fs_spectrum_inputs *in,
                            int replace);

/* The path of group i (from 0) of the spectra the options ask for, into
 * path (size bytes; FS_PATH_MAX will do): "/power_spectrum", then
 * "/cross_spectrum", then "/correlation_function"; with --spectrum-only
 * under OUTPUT's path, the group that names ("/t0001/power_spectrum").
 * 0 past the last, else 1. */
int fs_spectrum_group(const fs_run_config *o, int i, char *path, size_t size);

/* Collective, once every dataset is binned: the spectra summed over the
 * ranks (fs_spectrum_reduce), then into h5 (fs_spectrum_write) beside the
 * results, timed as timers' write phase. The status is agreed; a failed
 * write ends the job as any collective write does. */
fs_status fs_spectrum_finish(fs_spectrum *s, MPI_Comm comm, fs_h5_output *h5,
                             const fs_spectrum_inputs *in, int replace, fs_timers *timers);

/* The path of group i of s as written (NULL past the last). */
const char *fs_spectrum_path(const fs_spectrum *s, int i);

/* The report's "spectra" member (a JSON object per group, with its path)
 * and the summary's line (rank 0). */
void fs_spectrum_json(fs_json *j, const void *s);
void fs_spectrum_summary(const fs_spectrum *s, const char *output, char *buf, size_t size);

#endif
