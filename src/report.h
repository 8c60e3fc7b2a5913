/* report: where the time went. Phase timers kept by every rank and the
 * human summary that rank 0 prints on stderr at the end of a run. */
#ifndef FS_REPORT_H
#define FS_REPORT_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

typedef enum fs_phase {
    FS_PHASE_READ,
    FS_PHASE_PLAN,
    FS_PHASE_FFT,
    FS_PHASE_EXCHANGE,
    FS_PHASE_WRITE,
    FS_PHASE_TOTAL,
    FS_NPHASES
} fs_phase;

typedef struct fs_timers {
    double t_s[FS_NPHASES];        /* accumulated seconds */
    double started_at[FS_NPHASES]; /* MPI_Wtime of the running interval, 0 when stopped */
} fs_timers;

const char *fs_phase_name(fs_phase phase);
void fs_timer_start(fs_timers *t, fs_phase phase);
void fs_timer_stop(fs_timers *t, fs_phase phase);

/* Peak resident memory of this process in bytes (VmHWM), 0 if unknown. */
int64_t fs_peak_memory_bytes(void);

/* What the summary needs besides the timers. */
typedef struct fs_run_figures {
    const char *title;          /* one line describing the run */
    double flops;               /* nominal operations of the whole transform (5 N log2 N) */
    const struct fs_exchange_stats *exchange; /* this rank's, NULL without exchange */
    int64_t array_bytes;        /* whole array in working precision */
} fs_run_figures;

/* Collective over comm: rank 0 prints the phase table (min/mean/max over
 * ranks), GFlop/s, exchange bandwidth and peak memory to out. */
void fs_report_summary(MPI_Comm comm, const fs_timers *t, const fs_run_figures *fig, FILE *out);

#endif
