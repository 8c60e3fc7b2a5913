/* SPDX-License-Identifier: GPL-3.0-or-later */
/* testhooks: the environment variables fftshard reads for its tests and for
 * its own probe child, read in one place, once, at start-up.
 *
 * main() calls fs_testhooks_read() first, before MPI_Init starts threads and
 * before anything else looks at the environment; the rest of the program
 * asks the accessors below and never calls getenv for these names. Programs
 * that use the library without fftshard's main (the unit tests, bench and
 * fuzz programs, fftshard-mkdata) get the hooks read at their first use.
 * The variables of HDF5 and the system (HDF5_VDS_PREFIX, TMPDIR) are not
 * hooks and stay with the code they configure (h5io.c).
 *
 * The hooks (all documented in fftshard(1), ENVIRONMENT):
 *
 *   FFTSHARD_PAUSE=POINT[:SECONDS]   for tests. Every rank holds for a
 *       minute (or SECONDS) when POINT, a phase, is first reached, and rank 0
 *       says "pausing at ..." on stderr; "start-up" holds every rank once
 *       MPI_Init has returned, its signals still held, and "finalize" just
 *       before MPI_Finalize, its watchdog armed, as a stall would (main.c);
 *       "shards-renamed" and "renamed" hold rank 0 at a step of the commit,
 *       "add-copy" just before --add copies OUTPUT (fs_signals_pause_point,
 *       signals.c); "probe" holds the process that checks INPUT for rank 0
 *       with its question taken (probe_guard.c); "text-read" holds rank 0
 *       once it has read a text file, before it checks that the file did
 *       not change (io/textfile.c); POINT@N, POINT while dataset N
 *       of several is worked on (tests/multi.bats). Used by tests/faults.bats
 *       (signals in every phase, a disk filling up during the write, the
 *       input check's process ended from outside), tests/signals.bats,
 *       tests/apply.bats and tests/safety-inputs.bats (a table or a list
 *       written to while it is read).
 *   FFTSHARD_MPI_INT_LIMIT=N   for tests. The largest element count the
 *       alltoall strategy passes to MPI_Alltoallv (default INT_MAX); lower,
 *       small arrays reach its point-to-point split path
 *       (exchange/alltoall.c). Used by tests/pencil.bats.
 *   FFTSHARD_SLOW_READ=BYTES:SECONDS   for tests. Reads go in pieces of at
 *       most BYTES per rank (instead of tens of MiB), and every rank sleeps
 *       SECONDS (a decimal number) after each piece, so that a small file
 *       reads as slowly as a large one (h5io.c). Used by tests/io.bats
 *       (progress lines during a long read; an input changed while it is
 *       read). Ignored unless both are positive.
 *   FFTSHARD_IO_THREAD=on|off   for tests and measurements. Whether the
 *       read and the write overlap the FFTs through a helper thread
 *       (pipeline.c) wherever the data allow, instead of only where every
 *       rank of a node has a core free for its thread. Used by
 *       tests/io.bats (the overlap on a machine of two cores).
 *   FFTSHARD_PAINT_ROUND_BYTES=BYTES   for tests. The bytes of particle
 *       rows a rank reads, sends and receives per round of --paint (instead
 *       of FS_PAINT_ROUND_BYTES), so that a small snapshot takes many
 *       rounds, each cut in pieces per destination (sources/route.c). Used by
 *       tests/paint.bats.
 *   FFTSHARD_FINALIZE_TIMEOUT=SECONDS   for users too (documented): how long
 *       a rank waits in MPI_Finalize, once every rank is done, before it ends
 *       the job with the agreed status (default FS_FINALIZE_TIMEOUT_S;
 *       signals.c). Used by tests/faults.bats and tests/netns.bats (over TCP).
 *   FFTSHARD_PROBE_FD=FD   internal: set by rank 0 (probe_guard.c) in the
 *       environment of the child that checks INPUT; the program is then that
 *       child (main.c) and writes what it found to FD. No test sets it; every
 *       run that reads an input goes through it (tests/fuzz.bats, cli.bats).
 *   FFTSHARD_PROBE_VERBOSE   internal: set with FFTSHARD_PROBE_FD under
 *       --verbose, so that the child shows HDF5's error stack
 *       (tests/cli.bats, the truncated file with --verbose).
 *
 * Not hooks: FFTSHARD, FFTSHARD_MKDATA, FFTSHARD_VERSION and
 * FFTSHARD_SANITIZERS are set by Makefile.am for the tests (the programs
 * under test, the expected version, a sanitized build) and read only by the
 * tests (tests/helpers.bash, cli.bats, oracle.py, bench.py), never by
 * fftshard. */
#ifndef FS_TESTHOOKS_H
#define FS_TESTHOOKS_H

#include <stdint.h>

/* The variable that makes the program a probe child (io/probe_guard.h),
 * and the one that asks that child for HDF5's error stack. */
#define FS_PROBE_FD_ENV "FFTSHARD_PROBE_FD"
#define FS_PROBE_VERBOSE_ENV "FFTSHARD_PROBE_VERBOSE"

/* FFTSHARD_FINALIZE_TIMEOUT's default. Short: MPICH 4.0.2 over UCX's TCP
 * transport stalls in MPI_Finalize in about half of the runs on 4 ranks,
 * for ever, while a finalize that does return takes well under a second
 * (fftshard(1), ENVIRONMENT). */
#define FS_FINALIZE_TIMEOUT_S 2

typedef struct fs_testhooks {
    char pause_point[32];       /* FFTSHARD_PAUSE's POINT (the value cut to 31
                                   bytes first), "" when unset */
    long pause_seconds;         /* its SECONDS, 60 without ":SECONDS" */
    int64_t mpi_int_limit;      /* FFTSHARD_MPI_INT_LIMIT when a positive
                                   number, else INT_MAX */
    int64_t slow_read_bytes;    /* FFTSHARD_SLOW_READ's BYTES, 0 when unset
                                   or not usable */
    double slow_read_seconds;   /* its SECONDS, 0 likewise */
    int io_thread;              /* FFTSHARD_IO_THREAD: 1 "on", 0 "off", -1
                                   otherwise (the default choice) */
    int64_t paint_round_bytes;  /* FFTSHARD_PAINT_ROUND_BYTES when from 1 to 2^40,
                                   else 0 (the default round) */
    int node_cpus;              /* FFTSHARD_NODE_CPUS when from 1 to 65536, else
                                   0 (the ranks' affinity masks count) */
    unsigned finalize_seconds;  /* FFTSHARD_FINALIZE_TIMEOUT when from 1 to
                                   86399, else FS_FINALIZE_TIMEOUT_S */
    int probe_child;            /* FFTSHARD_PROBE_FD is set (even empty) */
    int probe_fd;               /* its value as a number (atoi), -1 when unset */
    int probe_verbose;          /* FFTSHARD_PROBE_VERBOSE is set */
} fs_testhooks;

/* Read every hook from the environment into this process's copy; main calls
 * it before MPI_Init. Reading again replaces the copy. */
void fs_testhooks_read(void);

/* The hooks read (read now if they were not yet); never NULL. */
const fs_testhooks *fs_testhooks_get(void);

/* The accessors, one per hook: the fields above. */
const char *fs_testhooks_pause_point(void);
long fs_testhooks_pause_seconds(void);
int64_t fs_testhooks_mpi_int_limit(void);
int64_t fs_testhooks_slow_read_bytes(void);
double fs_testhooks_slow_read_seconds(void);
int fs_testhooks_io_thread(void);
int fs_testhooks_node_cpus(void);
int64_t fs_testhooks_paint_round_bytes(void);
unsigned fs_testhooks_finalize_seconds(void);
int fs_testhooks_probe_child(void);
int fs_testhooks_probe_fd(void);
int fs_testhooks_probe_verbose(void);

#endif
