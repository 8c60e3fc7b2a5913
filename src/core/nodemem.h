/* SPDX-License-Identifier: GPL-3.0-or-later */
/* nodemem: the memory one rank may use, for the default strategy's choice.
 *
 * --mem-per-rank when given; else what the node has available: the
 * kernel's MemAvailable (/proc/meminfo), or less when the job's cgroup
 * (v2, or v1's memory controller) allows less than that beyond what it
 * already uses, shared equally among the ranks on the node
 * (MPI_Comm_split_type SHARED), the smallest figure of any node; and
 * whether a node has more ranks than cores. Owns nothing. */
#ifndef FS_NODEMEM_H
#define FS_NODEMEM_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include "core/errors.h"

/* Collective over comm. given: --mem-per-rank (0: not given).
 * ranks_per_node: the ranks that will share a node (0: this job's on each
 * node). *bytes (out): the memory per rank, 0 when the node says nothing;
 * source (out, size bytes): where the figure comes from, for messages.
 * Returns the agreed status. */
fs_status fs_nodemem_per_rank(MPI_Comm comm, uint64_t given, int ranks_per_node, uint64_t *bytes,
                              char *source, size_t size);

/* Collective over comm: whether the ranks on some node outnumber the CPUs
 * they may run on (the union of their affinity masks; FFTSHARD_NODE_CPUS
 * stands for that count). ranks_per_node > 0: that many ranks on a node
 * like this rank's (the dry run's --ranks). *crowded (out): 1 or 0, the
 * same on every rank. Returns the agreed status. */
fs_status fs_nodemem_crowded(MPI_Comm comm, int ranks_per_node, int *crowded);

/* The CPUs this process may run on (its affinity mask, else the online
 * ones), at least 1. Not collective. */
int fs_nodemem_usable_cpus(void);

/* The node's available memory in bytes and what limits it (a static
 * string), from the files; 0 when unknown. Not collective. */
uint64_t fs_nodemem_available(const char **limited_by);

#endif
