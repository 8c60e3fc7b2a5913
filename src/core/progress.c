/* SPDX-License-Identifier: GPL-3.0-or-later */
/* progress: see progress.h. */
#include "config.h"

#include "core/progress.h"

#include <mpi.h>
#include <stdio.h>

/* Seconds between two lines of a phase, at least. */
#define PROGRESS_INTERVAL_S 1.0

void fs_progress_init(fs_progress *p, int enabled)
{
    *p = (fs_progress){.enabled = enabled};
}

void fs_progress_begin(fs_progress *p, const char *phase, double total, const char *unit)
{
    p->phase = phase;
    p->total = total;
    p->done = 0;
    p->unit = unit;
    p->started = p->last_print = MPI_Wtime();
}

/* A line; before the end of the phase it says how long the rest will take
 * at the rate so far. */
static void print_line(fs_progress *p, double now, int final)
{
    double elapsed = now - p->started;
    double pct = p->total > 0 ? 100.0 * p->done / p->total : 100.0;
    double rate = elapsed > 0 ? p->done / elapsed : 0;
    const char *scale = p->unit[0] == 'B' ? "GB/s" : "GFlop/s";
    char left[48] = "";
    if (!final && rate > 0)
        snprintf(left, sizeof left, ", %.1f s left", (p->total - p->done) / rate);
    fprintf(stderr, "fftshard: progress: %-8s %5.1f%%  %8.3f %s  %7.1f s%s\n", p->phase, pct,
            rate / 1e9, scale, elapsed, left);
    fflush(stderr);
    p->last_print = now;
}

/* Set the amount done so far (absolute). */
static void set_done(fs_progress *p, double done)
{
    if (!p->enabled || !p->phase)
        return;
    p->done = done;
    double now = MPI_Wtime();
    if (now - p->last_print >= PROGRESS_INTERVAL_S && done < p->total)
        print_line(p, now, 0);
}

void fs_progress_end(fs_progress *p)
{
    if (!p->enabled || !p->phase)
        return;
    p->done = p->total;
    print_line(p, MPI_Wtime(), 1);
    p->phase = NULL;
}

void fs_progress_callback(void *ctx, double done)
{
    set_done(ctx, done);
}
