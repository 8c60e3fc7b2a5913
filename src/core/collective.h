/* SPDX-License-Identifier: GPL-3.0-or-later */
/* collective: "rank 0 decides, every rank agrees", and what rank 0 decided.
 *
 * Decisions that need I/O (does the output exist, what does a file hold)
 * are taken on one rank, so N ranks never print N messages or race on one
 * file, and then shared. fs_root_decides runs the decision on rank 0 and
 * agrees its status; fs_bcast_string and fs_bcast_bytes share what it
 * produced. Every function here is collective over comm (which must have
 * MPI_ERRORS_RETURN), checks every MPI call and allocation, and returns a
 * status agreed by every rank (fs_error_agree: printed once), unless its
 * name says quietly. */
#ifndef FS_COLLECTIVE_H
#define FS_COLLECTIVE_H

#include <mpi.h>
#include <stdint.h>

#include "core/errors.h"

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

#endif
