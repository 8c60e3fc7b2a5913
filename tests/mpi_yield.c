/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * mpi_yield.so: preloaded into the processes of the test suite
 * (Makefile.am's AM_TESTS_ENVIRONMENT), it makes an MPI rank that polls
 * UCX and finds nothing to do give up the processor, as Open MPI does by
 * itself when it runs more ranks than cores (mpi_yield_when_idle).
 *
 * MPICH's ch4:ucx device spins in its progress loop and ignores
 * MPIR_CVAR_POLLS_BEFORE_YIELD. The suite runs up to 8 ranks on 2 cores,
 * where a spinning rank holds its core for a whole time slice while the
 * rank it waits for cannot run: a barrier of 8 ranks took 55 ms instead of
 * under 5 ms, and a small run 5 s instead of 1.3 s. Nothing else changes:
 * every call still reaches UCX, whose answer is returned as it is. Not
 * linked with MPI, so a process that has no UCX (the Python oracles,
 * h5dump) never calls it. Not used under the sanitizers (their runtime
 * must come first) nor by make bench, which measures what users run.
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>

typedef unsigned (*progress_fn)(void *worker);

unsigned ucp_worker_progress(void *worker);

unsigned ucp_worker_progress(void *worker)
{
    static progress_fn next;
    if (!next)
        next = (progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
    if (!next)
        return 0;
    unsigned events = next(worker);
    if (events == 0)
        sched_yield();
    return events;
}
