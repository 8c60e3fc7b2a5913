/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sim_shm: messages through one node's shared memory, as MPICH moves them:
 * the receiving rank copies each message's bytes itself, on its own core,
 * inside the MPI call that completes the receive. SimGrid's links move
 * bytes beside the ranks' computations; on a node they do not, which is
 * why an overlapping strategy (pairwise) hides less there, and why, with
 * more ranks than cores, the copies take the cores' time from the FFTs.
 *
 * Through MPI's profiling interface this module replaces MPI_Irecv, the
 * waits and tests and MPI_Alltoallv of the simulator: with a copy rate set
 * each completed receive charges its receiver bytes / rate of computation
 * on its host's cores. fftshard-sim sets the rate from the calibration
 * file's receive_copy_rate and the wake-up below from its wake_s (make
 * simulate fits both for this machine's platform); without them the calls
 * cost what SMPI's own do. */
#ifndef FFTSHARD_SIM_SHM_H
#define FFTSHARD_SIM_SHM_H

/* Flops of a 1Gf host per second of the calibration machine's core: what
 * the simulator executes for a second of modelled work. */
#define SIM_REF_SPEED 1e9

/* Bytes per second of one core's receive copies; 0 (the default): none. */
void sim_shm_set_copy_rate(double bytes_per_s);
/* With more ranks than cores a rank whose wait blocked runs again only at
 * its turn on a core: each blocking wait (MPI_Wait, -all, -any, -some) that
 * had to wait then costs this many seconds more (the calibration's wake_s,
 * fitted per rank past one per core); 0 (the default): none. */
void sim_shm_set_wake(double seconds);

#endif
