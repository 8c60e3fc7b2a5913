/* SPDX-License-Identifier: GPL-3.0-or-later */
/* progress: per-phase progress lines on stderr, for --progress.
 *
 * Only rank 0 prints (its own share stands for the job), so lines from
 * several ranks never interleave. Lines are driven by the work itself: the
 * read and the write report every piece they finish (h5io.h), and a line is
 * printed when a second or more has passed since the last one, with the
 * percentage, the rate and the time left at that rate; every phase ends
 * with a line at 100%. Nothing depends on whether stderr is a terminal:
 * under mpiexec the ranks' stderr is a pipe to the launcher, whatever the
 * job's own stderr is, and in a batch job a log file wants the lines too. */
#ifndef FS_PROGRESS_H
#define FS_PROGRESS_H

#include <stdint.h>

typedef struct fs_progress {
    int enabled;        /* this process prints */
    const char *phase;
    double total, done; /* in units (bytes, or operations for fft) */
    const char *unit;   /* "B" or "flop" */
    double started, last_print;
} fs_progress;

/* enabled: this process prints (rank 0 with --progress, without --quiet). */
void fs_progress_init(fs_progress *p, int enabled);
void fs_progress_begin(fs_progress *p, const char *phase, double total, const char *unit);
void fs_progress_end(fs_progress *p);

/* Callback form for the I/O layer: ctx is an fs_progress. */
void fs_progress_callback(void *ctx, double done);

#endif
