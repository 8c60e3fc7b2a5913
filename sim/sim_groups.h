/* SPDX-License-Identifier: GPL-3.0-or-later */
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

#include "core/errors.h"

/* A component too large to simulate whole (more ranks than asked for) is
 * sampled: every k-th of its groups runs, and the bandwidth of each link
 * they use is scaled to their share of the component's routes through it
 * (sim_groups.c says when that is exact). */
typedef struct sim_component {
    int simulated;   /* this rank's group runs the exchange */
    int ranks;       /* ranks that run it (the same on every rank) */
    int groups;      /* groups that run it */
    int component_ranks, component_groups;   /* rank 0's component, whole */
} sim_component;

#define SIM_MAX_EXCH 8

/* The scaled bandwidths of the sampled exchanges, on rank 0. */
typedef struct sim_links sim_links;

/* Collective over world (MPI_ERRORS_RETURN), for nexch exchanges at once
 * (each collective over thousands of simulated ranks costs seconds of the
 * simulator's time). group[e] (in): this rank's group in exchange e, in
 * 0..ngroups[e]-1, the same on all its members; max_ranks: sample a
 * component of more ranks than this (0: never); out[e] (out): what runs
 * exchange e. The routes are computed on rank 0 only; *links (out): on
 * rank 0 when a component is sampled, else NULL; free with
 * sim_links_free. An error leaves the other ranks waiting: end the run. */
fs_status sim_components_find(MPI_Comm world, int nexch, const int *group, const int *ngroups,
                              int max_ranks, sim_component *out, sim_links **links);

/* The bandwidths of exchange e (-1: the platform's own) set on the links:
 * at the start of the exchange, on the rank that holds links (NULL: no-op). */
void sim_links_apply(const sim_links *links, int e);

/* Restores the platform's bandwidths and sets *links to NULL. */
void sim_links_free(sim_links **links);

#endif
