/* progress: see progress.h. */
#include "config.h"

#include "progress.h"

#include <mpi.h>
#include <stdio.h>

void fs_progress_init(fs_progress *p, int enabled, int every_phase)
{
    *p = (fs_progress){.enabled = enabled, .every_phase = every_phase};
}

void fs_progress_begin(fs_progress *p, const char *phase, double total, const char *unit)
{
    p->phase = phase;
    p->total = total;
    p->done = 0;
    p->unit = unit;
    p->started = p->last_print = MPI_Wtime();
    p->lines = 0;
}

static void print_line(fs_progress *p, double now)
{
    double elapsed = now - p->started;
    double pct = p->total > 0 ? 100.0 * p->done / p->total : 100.0;
    double rate = elapsed > 0 ? p->done / elapsed : 0;
    const char *scale = p->unit[0] == 'B' ? "GB/s" : "GFlop/s";
    fprintf(stderr, "fftshard: progress: %-8s %5.1f%%  %8.3f %s  %7.1f s\n", p->phase, pct,
            rate / 1e9, scale, elapsed);
    fflush(stderr);
    p->last_print = now;
    p->lines++;
}

void fs_progress_update(fs_progress *p, double done)
{
    if (!p->enabled)
        return;
    p->done = done;
    double now = MPI_Wtime();
    if (now - p->last_print >= 1.0 && done < p->total)
        print_line(p, now);
}

void fs_progress_end(fs_progress *p)
{
    if (!p->enabled || !p->phase)
        return;
    p->done = p->total;
    double now = MPI_Wtime();
    if (p->every_phase || p->lines > 0 || now - p->started >= 1.0)
        print_line(p, now);
    p->phase = NULL;
}

void fs_progress_callback(void *ctx, double done)
{
    fs_progress_update(ctx, done);
}
