/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The start-up floor of an MPI program: what MPI_Init, one barrier and
 * MPI_Finalize cost under mpiexec, for `make bench` to set fftshard's
 * 1x1x1 run against. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "mpi_hello: MPI_Init failed\n");
        return 1;
    }
    int err = MPI_Barrier(MPI_COMM_WORLD);
    if (err != MPI_SUCCESS) {
        fprintf(stderr, "mpi_hello: MPI_Barrier failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return MPI_Finalize() == MPI_SUCCESS ? 0 : 1;
}
