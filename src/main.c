/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fftshard: the N-D FFT of an HDF5 dataset over MPI ranks.
 * main stays thin: start MPI, parse the command line, run the pipeline, and
 * turn the agreed status into the exit status of every rank. */
#include "config.h"

#include <mpi.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "core/atomic.h"
#include "core/buffer.h"
#include "core/errors.h"
#include "core/launcher.h"
#include "core/signals.h"
#include "core/testhooks.h"
#include "dryrun.h"
#include "io/h5common.h"
#include "io/h5io.h"
#include "io/probe_guard.h"
#include "options.h"
#include "pipeline.h"

/* The smallest file-size limit (ulimit -f) MPI_Init is known to start
 * under: UCX's shared-memory transport creates files of 4 MiB, and fails
 * MPI_Init without them. */
#define MPI_FILE_SIZE_LIMIT_MIN (8 * 1024 * 1024)

/* Before MPI_Init: whether the file-size limit lets MPI start. Every rank
 * checks; the launcher's rank 0 (or a process started alone) says why not. */
static int file_size_limit_lets_mpi_start(void)
{
    struct rlimit lim;
    if (getrlimit(RLIMIT_FSIZE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY ||
        lim.rlim_cur >= MPI_FILE_SIZE_LIMIT_MIN)
        return 1;
    if (fs_launcher_rank() <= 0)
        fprintf(stderr,
                "fftshard: error: file size limit (ulimit -f) of %llu KiB: too small for MPI to "
                "start, which needs %d KiB\n",
                (unsigned long long)lim.rlim_cur / 1024, MPI_FILE_SIZE_LIMIT_MIN / 1024);
    return 0;
}

int main(int argc, char **argv)
{
    /* A fixed threshold: every block of 1 MiB or more is mapped on its own
     * and given back when freed. glibc's default raises the threshold to
     * the largest block freed, after which blocks that size come from the
     * heap and may stay resident there after their free (the correlation
     * function of 2^22 points on one rank peaked 20 MiB higher), so the
     * peak would depend on the order of the allocations. Fixing it fixes
     * the heap's trim threshold too, at 128 KiB, which gave FFTW's buffers
     * back to the system at every plan execution (the free-space solve's
     * FFTs took 1.6 times as long): 8 MiB of the heap's top are kept. */
    mallopt(M_MMAP_THRESHOLD, FS_MALLOC_MAPPED_BYTES);
    mallopt(M_TRIM_THRESHOLD, FS_MALLOC_TRIM_BYTES);
    /* From the first instruction: SIGINT and SIGTERM wait for MPI_Init. */
    fs_signals_start();
    /* Before MPI_Init and its threads: the environment is read here once. */
    fs_testhooks_read();
    /* Started by rank 0 to check INPUT in a process of its own: no MPI. */
    if (fs_testhooks_probe_child()) {
        fs_signals_stop();
        return fs_probe_guard_child(argc, argv);
    }
    if (!file_size_limit_lets_mpi_start())
        return FS_ERR_RUNTIME;
    /* Before MPI_Init, while the process has no threads and no MPI state
     * that a fork could copy in a bad moment. */
    fs_probe_guard_start();
    fs_h5_choose_mpio();
    /* A launcher that vanishes during MPI_Init must not leave the rank
     * waiting for it for ever. */
    fs_signals_watch_launcher();
    /* Funneled: the I/O helper thread (rawio.h) makes no MPI call. */
    int thread_level;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &thread_level) != MPI_SUCCESS) {
        fprintf(stderr, "fftshard: error: MPI_Init failed\n");
        return FS_ERR_RUNTIME;
    }
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (rank != 0)
        fs_probe_guard_stop();
    fs_h5_init();
    fs_signals_set_rank(rank);
    fs_signals_pause_point("start-up");
    /* A signal held since the start acts from here on. */
    fs_signals_install(fs_atomic_remove_registered);

    fs_run_config cfg;
    fs_status status = fs_options_parse(argc, argv, &cfg);
    if (status != FS_OK) {
        /* Every rank parsed the same argv: rank 0 speaks for all. */
        if (rank == 0) {
            fs_error_print();
            if (status == FS_ERR_USAGE)
                fprintf(stderr, "Try 'fftshard --help' for more information.\n");
        }
    } else if (cfg.action == FS_ACTION_HELP) {
        if (rank == 0)
            fs_options_print_help(stdout);
    } else if (cfg.action == FS_ACTION_VERSION) {
        if (rank == 0)
            fs_options_print_version(stdout);
    } else {
        fs_error_set_verbose(cfg.verbose);
        status = cfg.dry.on ? fs_dry_run(comm, &cfg) : fs_pipeline_run(comm, &cfg);
        /* Some option values (--axes) can only be judged against the input. */
        if (status == FS_ERR_USAGE && rank == 0)
            fprintf(stderr, "Try 'fftshard --help' for more information.\n");
    }
    fs_options_free(&cfg);
    fs_probe_guard_stop();
    fflush(stdout);
    /* The last collective: past it no rank works any more, so a stall in
     * MPI_Finalize (MPICH 4.0 over TCP, signals.h) may end the job with the
     * agreed status. The status stands even if the barrier fails. */
    if (MPI_Barrier(comm) != MPI_SUCCESS)
        fprintf(stderr, "fftshard: warning: rank %d: the barrier before MPI_Finalize failed\n",
                rank);
    MPI_Comm_free(&comm);
    fs_signals_finish((int)status, fs_testhooks_finalize_seconds());
    fs_signals_pause_point("finalize");
    fs_signals_end_failed((int)status);
    MPI_Finalize();
    fs_signals_finalized();
    return (int)status;
}
