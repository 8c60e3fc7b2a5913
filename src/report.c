/* report: see report.h. */
#include "config.h"

#include "report.h"

#include "exchange.h"

#include <stdlib.h>
#include <string.h>

static const char *const phase_names[FS_NPHASES] = {
    "read", "plan", "fft", "exchange", "write", "total",
};

const char *fs_phase_name(fs_phase phase)
{
    return phase_names[phase];
}

void fs_timer_start(fs_timers *t, fs_phase phase)
{
    t->started_at[phase] = MPI_Wtime();
}

void fs_timer_stop(fs_timers *t, fs_phase phase)
{
    if (t->started_at[phase] > 0)
        t->t_s[phase] += MPI_Wtime() - t->started_at[phase];
    t->started_at[phase] = 0;
}

int64_t fs_peak_memory_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    int64_t kib = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            kib = strtoll(line + 6, NULL, 10);
    fclose(f);
    return kib * 1024;
}

void fs_report_summary(MPI_Comm comm, const fs_timers *t, const fs_run_figures *fig, FILE *out)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double mins[FS_NPHASES], maxs[FS_NPHASES], sums[FS_NPHASES];
    MPI_Reduce(t->t_s, mins, FS_NPHASES, MPI_DOUBLE, MPI_MIN, 0, comm);
    MPI_Reduce(t->t_s, maxs, FS_NPHASES, MPI_DOUBLE, MPI_MAX, 0, comm);
    MPI_Reduce(t->t_s, sums, FS_NPHASES, MPI_DOUBLE, MPI_SUM, 0, comm);
    const fs_exchange_stats *xs = fig->exchange;
    double local[3] = {xs ? (double)xs->bytes_sent : 0, xs ? xs->t_hooks_s : 0,
                       xs ? xs->t_hooks_overlapped_s : 0};
    double sums_x[3];
    MPI_Reduce(local, sums_x, 3, MPI_DOUBLE, MPI_SUM, 0, comm);
    double total_sent = sums_x[0];
    int64_t peak = fs_peak_memory_bytes(), peak_max;
    MPI_Reduce(&peak, &peak_max, 1, MPI_INT64_T, MPI_MAX, 0, comm);
    if (rank != 0)
        return;
    fprintf(out, "fftshard: %s\n", fig->title);
    fprintf(out, "  %-9s %10s %10s %10s\n", "phase", "min s", "mean s", "max s");
    for (int p = 0; p < FS_NPHASES; p++)
        fprintf(out, "  %-9s %10.4f %10.4f %10.4f\n", phase_names[p], mins[p], sums[p] / size,
                maxs[p]);
    double t_transform = maxs[FS_PHASE_FFT] + maxs[FS_PHASE_EXCHANGE];
    double t_x = maxs[FS_PHASE_EXCHANGE];
    fprintf(out, "  transform %.2f GFlop/s (5 N log2 N / max fft + exchange time)\n",
            t_transform > 0 ? fig->flops / t_transform / 1e9 : 0.0);
    if (t_x > 0 && total_sent > 0)
        fprintf(out, "  exchange %.3f GB/s (bytes sent by all ranks / max exchange time)\n",
                total_sent / t_x / 1e9);
    if (sums_x[1] > 0)
        fprintf(out, "  overlap: %.4f s of %.4f s block FFT work ran with messages in flight (%.0f%%, all ranks)\n",
                sums_x[2], sums_x[1], 100.0 * sums_x[2] / sums_x[1]);
    fprintf(out, "  peak memory %.1f MiB per rank (max), %.2f x the rank's share of the array\n",
            peak_max / 1048576.0,
            fig->array_bytes > 0 ? (double)peak_max * size / (double)fig->array_bytes : 0.0);
    fflush(out);
}
