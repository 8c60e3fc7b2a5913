/* progress: per-phase progress lines on stderr for long runs.
 *
 * Only rank 0 prints (its own share stands for the job), so lines from
 * several ranks never interleave. Enabled by --progress, or automatically
 * when stderr is a terminal; then a phase prints at most one line a second,
 * and a final line when it took a second or more (always with --progress). */
#ifndef FS_PROGRESS_H
#define FS_PROGRESS_H

#include <stdint.h>

typedef struct fs_progress {
    int enabled;        /* this process prints */
    int every_phase;    /* --progress: a final line for every phase */
    const char *phase;
    double total, done; /* in units (bytes, or operations for fft) */
    const char *unit;   /* "B" or "flop" */
    double started, last_print;
    int lines;          /* lines printed in this phase */
} fs_progress;

void fs_progress_init(fs_progress *p, int enabled, int every_phase);
void fs_progress_begin(fs_progress *p, const char *phase, double total, const char *unit);
/* Set the amount done so far (absolute). */
void fs_progress_update(fs_progress *p, double done);
void fs_progress_end(fs_progress *p);

/* Callback form for the I/O layer: ctx is an fs_progress. */
void fs_progress_callback(void *ctx, double done);

#endif
