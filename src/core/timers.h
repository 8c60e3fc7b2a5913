/* SPDX-License-Identifier: GPL-3.0-or-later */
/* timers: where a rank's time goes, phase by phase (the man page's
 * phases: read, paint, plan, fft, exchange, operate, write, check, commit), the
 * I/O its helper thread hid behind the computation, and the process's
 * peak memory: the figures every module adds to and the report gathers.
 * Starting a phase names it for a signal's message (signals.h). */
#ifndef FS_TIMERS_H
#define FS_TIMERS_H

#include <stdint.h>

typedef enum fs_phase {
    FS_PHASE_READ,
    FS_PHASE_PAINT,     /* particles sent to their ranks and painted (--paint) */
    FS_PHASE_PLAN,
    FS_PHASE_FFT,
    FS_PHASE_EXCHANGE,
    FS_PHASE_OPERATE,   /* a stage's work between a round trip's transforms */
    FS_PHASE_WRITE,
    FS_PHASE_CHECK,
    FS_PHASE_COMMIT,
    FS_PHASE_TOTAL,
    FS_NPHASES
} fs_phase;

/* "read", "plan", ...: the report's and the messages' name of a phase. */
const char *fs_phase_name(fs_phase phase);

/* I/O a helper thread did while the rank computed (rawio.h): the seconds
 * it spent reading and writing, and of those the seconds the rank did not
 * wait for (the read and write phases count only the waits). */
typedef struct fs_io_overlap {
    double read_s, read_hidden_s, write_s, write_hidden_s;
} fs_io_overlap;

typedef struct fs_timers {
    double t_s[FS_NPHASES];        /* accumulated seconds */
    double started_at[FS_NPHASES]; /* MPI_Wtime of the running interval */
    /* whether the phase's interval is running: MPI_Wtime's origin is the
     * MPI's own (Open MPI's starts at 0 in MPI_Init), so no time value can
     * mean "stopped" */
    unsigned char running[FS_NPHASES];
    fs_io_overlap io;
} fs_timers;

void fs_timer_start(fs_timers *t, fs_phase phase);
void fs_timer_stop(fs_timers *t, fs_phase phase);
/* t's seconds and I/O added to total's, its total phase aside (the run
 * times its own total). */
void fs_timers_add(fs_timers *total, const fs_timers *t);

/* Peak resident memory of this process in bytes (VmHWM, or the peak
 * before the last fs_peak_memory_restart where that was more), 0 if
 * unknown. */
int64_t fs_peak_memory_bytes(void);
/* Let the kernel's peak (VmHWM) count again from the resident memory now
 * (/proc/self/clear_refs), the peak so far kept for fs_peak_memory_bytes:
 * the resident bytes now, or -1 when the kernel does not let it. */
int64_t fs_peak_memory_restart(void);
/* How far the resident memory rose above `resident` (fs_peak_memory_restart's
 * return) since then; -1 when unknown. */
int64_t fs_peak_memory_since(int64_t resident);

#endif
