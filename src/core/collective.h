/* SPDX-License-Identifier: GPL-3.0-or-later */
/* collective: everything the ranks do together that is not the data's own
 * movement, in one place.
 *
 * - The agreed status (fs_error_agree and its variants): every rank learns
 *   the highest status of any rank at a stage boundary, the lowest rank
 *   holding it prints its message once.
 * - "Rank 0 decides, every rank agrees" (fs_root_decides): decisions that
 *   need I/O (does the output exist, what does a file hold) are taken on
 *   one rank, so N ranks never print N messages or race on one file, and
 *   then shared with the checked broadcasts (fs_bcast_bytes,
 *   fs_bcast_string).
 * - Checked reductions (fs_allreduce, fs_allreduce_sum_min, fs_every_rank).
 * - The waits (fs_wait_all, fs_wait_any, fs_wait_some): on a node with
 *   more ranks than cores a rank polls and gives its core up between polls
 *   instead of spinning in MPI, which would hold off the peers it waits
 *   for; the agreements and reductions wait so once fs_collective_yield
 *   said the node is crowded.
 * - The facts of the node (fs_node_facts: its ranks, its CPUs, the memory
 *   per rank, whether it is crowded, whether a helper thread has a core),
 *   found once per run and passed down.
 * Every collective function here must be called by every rank of comm
 * (which must have MPI_ERRORS_RETURN) at the same point, checks every MPI
 * call and allocation and returns a status agreed by every rank (printed
 * once) unless its comment says otherwise. Owns the yield setting. */
#ifndef FS_COLLECTIVE_H
#define FS_COLLECTIVE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "core/errors.h"

/* ---------------------------------------------------------------- status */

/* Combine the local status of every rank. Returns the agreed status (the
 * highest); the lowest rank holding that status prints its message on
 * stderr exactly once. When the agreement itself fails, nothing safe is
 * left: the job ends (MPI_Abort, status 1). */
fs_status fs_error_agree(MPI_Comm comm, fs_status local);

/* The same agreement without printing: whether any rank failed, for a step
 * inside a stage whose caller agrees again (and prints) at the stage's end,
 * and for failures the caller reports in its own words. The messages stay
 * where they were set; pass on the local status, not the agreed one, to the
 * agreement that prints, so that a rank which failed is the one to speak. */
fs_status fs_error_agree_quiet(MPI_Comm comm, fs_status local);

/* The same without printing, and every rank takes the status and message
 * (fs_error_set) of the rank that would print them, so whichever rank
 * reports it later tells the cause: for a step inside a collective whose
 * ranks may return by different ways (an exchange's block work, the
 * independent writes of a dataset before its collective close). */
fs_status fs_error_agree_shared(MPI_Comm comm, fs_status local);

/* ------------------------------------------------------ rank 0 decides */

/* Rank 0 runs decide(arg); the other ranks do not call it. Returns its
 * status on every rank, agreed and printed once. */
fs_status fs_root_decides(MPI_Comm comm, fs_status (*decide)(void *arg), void *arg);

/* The same, agreed with fs_error_agree_quiet: nothing is printed and the
 * message stays on rank 0, for a caller that reports the failure in its own
 * words (a warning). */
fs_status fs_root_decides_quietly(MPI_Comm comm, fs_status (*decide)(void *arg), void *arg);

/* root's string *s (in on root, which keeps it; NULL allowed) to every
 * rank: on the others *s (out) is a malloc'ed copy, or NULL when root's was
 * NULL or on failure; the caller frees it. */
fs_status fs_bcast_string(MPI_Comm comm, int root, char **s);

/* root's `bytes` bytes at buf to buf on every rank (every rank passes the
 * same count; counts above INT_MAX go in pieces). */
fs_status fs_bcast_bytes(MPI_Comm comm, int root, void *buf, int64_t bytes);

/* ------------------------------------------------------------ reductions */

/* MPI_Allreduce (in may be MPI_IN_PLACE), yielding as the waits do once
 * the node is crowded. Not agreed: the status is this rank's, with the
 * message set; the callers agree at their stage's end. */
fs_status fs_allreduce(MPI_Comm comm, const void *in, void *out, int count, MPI_Datatype type,
                       MPI_Op op);

/* a[0 .. n) summed over comm's ranks in place, in pieces of at most 2^20
 * doubles (8 MiB): MPI's own copy of the sums is one piece's, whatever n
 * (fs_allreduce_sum_bytes). Not agreed, as fs_allreduce. */
fs_status fs_allreduce_sum(MPI_Comm comm, double *a, int64_t n);

/* The memory fs_allreduce_sum of n doubles over nranks ranks needs beside
 * them, as resident memory counts it: none on one rank; MPICH's
 * reduce-scatter halves the piece at each step (half its copy touched)
 * when nranks is a power of two, else a rank first receives it whole. */
int64_t fs_allreduce_sum_bytes(int64_t n, int nranks);

/* One reduction of pairs: all[0] the sum of every rank's mine[0], all[1]
 * the least mine[1] (a count and the first place found). Not agreed, as
 * fs_allreduce. */
fs_status fs_allreduce_sum_min(MPI_Comm comm, const int64_t mine[2], int64_t all[2]);

/* Whether `mine` (nonzero) holds on every rank: *all (out), the same on
 * every rank. */
fs_status fs_every_rank(MPI_Comm comm, int mine, int *all);

/* ----------------------------------------------------------------- waits */

/* Whether the agreements and reductions give the core up while they wait:
 * nonzero on every rank or none (fs_node.crowded). Every rank must call it
 * alike, between the same two agreements. Not collective. */
void fs_collective_yield(int yields);

/* MPI_Waitall, MPI_Waitany and MPI_Waitsome (statuses ignored); with
 * yields, MPI_Test* with sched_yield between the polls. Return the MPI
 * error code. Not collective. */
int fs_wait_all(int yields, int n, MPI_Request *reqs);
int fs_wait_any(int yields, int n, MPI_Request *reqs, int *index);
int fs_wait_some(int yields, int n, MPI_Request *reqs, int *outcount, int *indices);

/* ------------------------------------------------------------------ node */

/* The facts of the node that the plans depend on, the same on every rank
 * but ranks and cpus (this rank's node). */
typedef struct fs_node {
    int ranks;                /* the ranks sharing this rank's node */
    int cpus;                 /* the CPUs they may run on: the union of their
                               * affinity masks, or FFTSHARD_NODE_CPUS */
    uint64_t mem_per_rank;    /* the bytes a rank may use: --mem-per-rank, or
                               * the node's available memory (fs_nodemem_available)
                               * shared equally by its ranks, the least of any
                               * node; 0 when the node says nothing */
    char mem_source[160];     /* where that figure comes from, for messages */
    int mem_hard;             /* that figure is a cgroup's limit (not
                               * --mem-per-rank): a rank that needs more is
                               * killed by the out-of-memory killer */
    int crowded;              /* some node has more ranks than CPUs */
    int io_thread;            /* every rank's helper thread has a CPU of its own
                               * (two per rank) and MPI allows threads;
                               * FFTSHARD_IO_THREAD overrides the count */
} fs_node;

/* The node facts: one split of comm by node. given: --mem-per-rank (0: not
 * given). ranks_per_node > 0: that many ranks on a node like this rank's
 * (the dry run's --ranks); 0: this job's. */
fs_status fs_node_facts(MPI_Comm comm, uint64_t given, int ranks_per_node, fs_node *out);

#endif
