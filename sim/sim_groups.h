/* sim_groups: which groups of ranks an exchange must simulate.
 *
 * A pencil exchange runs inside groups of ranks: the rows, then the columns
 * of the process grid. In the network model make simulate uses (SimGrid's
 * max-min sharing of the links' bandwidth, no cross traffic, computation
 * not shared between ranks of different hosts) two groups whose routes
 * share no link cannot change each other's times. So the groups that can
 * touch rank 0's group are the connected component of "shares a link with"
 * that holds it, found here from SimGrid's own routes between the hosts of
 * every pair of ranks in every group. Given that every rank starts the
 * exchange together (the simulator's stage barriers), simulating that
 * component alone gives its ranks the times of the full run; the other
 * ranks skip the exchange.
 *
 * Owns nothing after it returns. */
#ifndef SIM_GROUPS_H
#define SIM_GROUPS_H

#include <mpi.h>

#include "errors.h"

typedef struct sim_component {
    int simulated;   /* this rank's group is in rank 0's component */
    int ranks;       /* ranks in the component (the same on every rank) */
    int groups;      /* groups in it */
} sim_component;

#define SIM_MAX_EXCH 8

/* Collective over world (MPI_ERRORS_RETURN), for nexch exchanges at once
 * (each collective over thousands of simulated ranks costs seconds of the
 * simulator's time). group[e] (in): this rank's group in exchange e, in
 * 0..ngroups[e]-1, the same on all its members; out[e] (out): the
 * component of the group of world's rank 0. The routes are computed on
 * rank 0 only. An error leaves the other ranks waiting: end the run. */
fs_status sim_components_find(MPI_Comm world, int nexch, const int *group, const int *ngroups,
                              sim_component *out);

#endif
