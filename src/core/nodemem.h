/* SPDX-License-Identifier: GPL-3.0-or-later */
/* nodemem: what this process sees of its node, from the kernel's files
 * and its affinity: the memory available (the kernel's MemAvailable in
 * /proc/meminfo, or less when the process's cgroup or one above it, v2 or
 * v1's memory controller, allows less than that beyond what it already
 * uses, its inactive page cache not counted) and the
 * CPUs it may run on. Not collective: the facts of the node that the ranks
 * agree on (its ranks, the memory per rank, crowded) are found once per
 * run from these by fs_node_facts (core/collective.h). Owns nothing. */
#ifndef FS_NODEMEM_H
#define FS_NODEMEM_H

#include <sched.h>
#include <stdint.h>

/* The node's available memory in bytes and what limits it (a static
 * string), from the files; 0 when unknown. */
uint64_t fs_nodemem_available(const char **limited_by);

/* The kernel's MemAvailable of /proc/meminfo alone, in bytes; 0 when not
 * there. */
uint64_t fs_nodemem_meminfo_available(void);

/* This process's resident anonymous memory (RssAnon of
 * /proc/self/status), in bytes: what it holds already of what its cgroup
 * charges it; 0 when unknown. */
uint64_t fs_nodemem_own_anon(void);

/* The CPUs this process may run on: its affinity mask, else every online
 * CPU. */
void fs_nodemem_own_cpus(cpu_set_t *set);

#endif
