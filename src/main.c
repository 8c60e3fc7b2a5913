/* fftshard: the N-D FFT of an HDF5 dataset over MPI ranks.
 * main stays thin: start MPI, parse the command line, run the pipeline, and
 * turn the agreed status into the exit status of every rank. */
#include "config.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "atomic.h"
#include "dryrun.h"
#include "errors.h"
#include "h5io.h"
#include "options.h"
#include "pipeline.h"
#include "probe_guard.h"

int main(int argc, char **argv)
{
    /* Started by rank 0 to check INPUT in a process of its own: no MPI. */
    if (getenv(FS_PROBE_FD_ENV))
        return fs_probe_guard_child(argc, argv);
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "fftshard: error: MPI_Init failed\n");
        return FS_ERR_RUNTIME;
    }
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank;
    MPI_Comm_rank(comm, &rank);
    fs_h5_init();
    fs_atomic_install_signal_handlers();

    fs_options opts;
    fs_status status = fs_options_parse(argc, argv, &opts);
    if (status != FS_OK) {
        /* Every rank parsed the same argv: rank 0 speaks for all. */
        if (rank == 0) {
            fs_error_print();
            if (status == FS_ERR_USAGE)
                fprintf(stderr, "Try 'fftshard --help' for more information.\n");
        }
    } else if (opts.action == FS_ACTION_HELP) {
        if (rank == 0)
            fs_options_print_help(stdout);
    } else if (opts.action == FS_ACTION_VERSION) {
        if (rank == 0)
            fs_options_print_version(stdout);
    } else {
        fs_error_set_verbose(opts.verbose);
        status = opts.dry_run ? fs_dry_run(comm, &opts) : fs_pipeline_run(comm, &opts);
        /* Some option values (--axes) can only be judged against the input. */
        if (status == FS_ERR_USAGE && rank == 0)
            fprintf(stderr, "Try 'fftshard --help' for more information.\n");
    }
    fs_options_free(&opts);
    fflush(stdout);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return (int)status;
}
