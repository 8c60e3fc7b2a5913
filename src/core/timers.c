/* SPDX-License-Identifier: GPL-3.0-or-later */
/* timers: see timers.h. */
#include "config.h"

#include "core/timers.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/signals.h"

static const char *const phase_names[FS_NPHASES] = {
    "read", "paint", "plan", "fft", "exchange", "operate", "write", "check", "commit", "total",
};

const char *fs_phase_name(fs_phase phase)
{
    return phase_names[phase];
}

void fs_timer_start(fs_timers *t, fs_phase phase)
{
    if (phase != FS_PHASE_TOTAL)
        fs_signals_set_phase(phase_names[phase]);
    t->started_at[phase] = MPI_Wtime();
    t->running[phase] = 1;
}

void fs_timer_stop(fs_timers *t, fs_phase phase)
{
    if (t->running[phase])
        t->t_s[phase] += MPI_Wtime() - t->started_at[phase];
    t->running[phase] = 0;
}

void fs_timers_add(fs_timers *total, const fs_timers *t)
{
    for (int p = 0; p < FS_NPHASES; p++)
        if (p != FS_PHASE_TOTAL)
            total->t_s[p] += t->t_s[p];
    total->io.read_s += t->io.read_s;
    total->io.read_hidden_s += t->io.read_hidden_s;
    total->io.write_s += t->io.write_s;
    total->io.write_hidden_s += t->io.write_hidden_s;
}

/* VmHWM and VmRSS of this process in bytes (0 when unknown). */
static void memory_status(int64_t *peak, int64_t *resident)
{
    *peak = *resident = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            *peak = strtoll(line + 6, NULL, 10) * 1024;
        else if (strncmp(line, "VmRSS:", 6) == 0)
            *resident = strtoll(line + 6, NULL, 10) * 1024;
    fclose(f);
}

static int64_t peak_before_restart; /* the peak fs_peak_memory_restart let go */

int64_t fs_peak_memory_bytes(void)
{
    int64_t peak, resident;
    memory_status(&peak, &resident);
    return peak > peak_before_restart ? peak : peak_before_restart;
}

int64_t fs_peak_memory_restart(void)
{
    int64_t peak, resident;
    memory_status(&peak, &resident);
    FILE *f = peak > 0 ? fopen("/proc/self/clear_refs", "w") : NULL;
    if (!f)
        return -1;
    peak_before_restart = peak > peak_before_restart ? peak : peak_before_restart;
    int cleared = fputs("5", f) >= 0;
    cleared &= fclose(f) == 0;
    memory_status(&peak, &resident);
    return cleared ? resident : -1;
}

int64_t fs_peak_memory_since(int64_t resident)
{
    int64_t peak, now;
    memory_status(&peak, &now);
    return resident < 0 || peak <= 0 ? -1 : peak > resident ? peak - resident : 0;
}
