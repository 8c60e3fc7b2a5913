/* SPDX-License-Identifier: GPL-3.0-or-later */
/* signals: what SIGINT and SIGTERM do to a run, and where the tests of
 * interruptions stop it.
 *
 * Owns the handlers of SIGINT and SIGTERM from the first instruction of
 * main to MPI_Finalize, the name of the phase the run is in and this
 * process's rank (for the one line an interrupted job prints), the pause
 * points of FFTSHARD_PAUSE, the signals held during start-up and while a
 * collective output is committed, and how an interrupted rank ends the job.
 * It knows no files: the handler runs the cleanup it was given
 * (fs_atomic_remove_registered) and prints which phase was interrupted.
 *
 * How the job ends: a launcher reports for its ranks what it chooses
 * (MPICH's hydra says status 0 for every rank it ended after passing on a
 * signal sent to mpiexec), so a rank's own exit status cannot reach a job
 * script. An interrupted rank therefore asks the launcher to end the job
 * with status 128 + signal, the way MPI_Abort does (launcher.h: hydra's
 * PMI-1 abort, PMIx_Abort); without such a launcher, or if it does not end
 * the rank within seconds, the rank dies of the signal itself (restored to
 * SIG_DFL and sent again), as a shell or srun expects. One rank of a node
 * speaks: a rank that the launcher stops after another spoke keeps quiet
 * (fs_launcher_claim_message).
 *
 * A launcher can vanish without ending its ranks (launcher.h): a thread of
 * this module watches for that from just before MPI_Init to MPI_Finalize,
 * and a rank whose launcher is gone ends as on SIGTERM, its message on the
 * launcher's own standard error. The same thread lets a signal held during
 * start-up act if MPI_Init has not returned 10 s later: a hung start-up
 * must not make a rank deaf to SIGTERM.
 *
 * Also owns the watchdog of MPI_Finalize (SIGALRM, fs_signals_finish): MPICH
 * 4.0.2 over UCX's TCP transport can stall there for ever. Its finalize
 * closes every endpoint in flush mode, which completes only while the peer
 * still drives UCX, and then waits in a barrier of the launcher, which does
 * not: a rank that reaches finalize last can wait for peers that already
 * sit in that barrier (MPICH removed the barrier later, pmodels/mpich#6596).
 * The watchdog is armed only once every rank is done (a last barrier), so
 * when it fires the agreed status stands and everything is written; it ends
 * the whole job with that status, through the launcher as above: a rank
 * that merely exited would make hydra kill the others (status 9) and
 * Open MPI's mpirun report 1. */
#ifndef FS_SIGNALS_H
#define FS_SIGNALS_H

/* The first call of main, before MPI_Init: SIGINT and SIGTERM are handled
 * but held (a signal waits, even in MPI_Init's threads, until
 * fs_signals_install), SIGXFSZ is ignored (a file-size limit fails the
 * write, EFBIG, instead of killing the rank), and the launcher's connection
 * is noted. */
void fs_signals_start(void);

/* Just before MPI_Init, after any fork (a thread starts): watch the
 * launcher until fs_signals_finish. Once it is gone the rank ends as on
 * SIGTERM (during start-up too); a SIGINT or SIGTERM held during start-up
 * acts once it has waited 10 s for fs_signals_install. Nothing is watched
 * in a process started alone. */
void fs_signals_watch_launcher(void);

/* For a process that must not act as a rank (the probe child): SIGINT and
 * SIGTERM back to their default action, not held. */
void fs_signals_stop(void);

/* Once MPI_Init has returned: the handlers run cleanup (may be NULL; must be
 * async-signal-safe) and end the job; a signal held since fs_signals_start
 * takes effect now. Also usable without fs_signals_start (fftshard-mkdata). */
void fs_signals_install(void (*cleanup)(void));

/* Just before MPI_Finalize, once every rank has passed its last collective:
 * the run is over and `status` stands, so SIGINT and SIGTERM are held from now
 * on (and die with the process), the launcher is no longer watched, and the
 * watchdog is armed: if MPI_Finalize
 * has not returned within finalize_seconds, rank 0 (or a process whose rank
 * is not known) warns on stderr, and every rank asks the launcher to end the
 * job with `status` (on a copy of the connection of its own, which
 * MPI_Finalize does not close), or, without a launcher, exits with it. */
void fs_signals_finish(int status, unsigned finalize_seconds);

/* After fs_signals_finish, a failed run (status nonzero) under a launcher
 * that reports every rank's nonzero exit in lines of its own (Open MPI's
 * mpirun: ten of them): rank 0 ends the job through the launcher with
 * `status` instead, which it reports without a word; the other ranks wait
 * for that end outside MPI (their SIGTERM and SIGINT back to the default:
 * they die of the launcher's signal without a word) and go on into
 * MPI_Finalize only if it does not come. Returns at once elsewhere. */
void fs_signals_end_failed(int status);

/* MPI_Finalize returned: the watchdog is disarmed and the copy closed. */
void fs_signals_finalized(void);

/* The phase named by an interrupted run's message (a static string, kept),
 * and this process's rank (-1, the default: not known). */
void fs_signals_set_phase(const char *phase);
void fs_signals_set_rank(int rank);
/* Several inputs: the dataset being worked on, from 1 (0, the default: one
 * input), named in the message with the phase. */
void fs_signals_set_dataset(int dataset);

/* For the tests of interruptions: FFTSHARD_PAUSE=POINT[:SECONDS] holds the
 * process for a minute (or SECONDS) when POINT is first reached: a phase
 * (fs_signals_set_phase), "start-up" (MPI_Init has returned, signals still
 * held), "finalize" (just before MPI_Finalize, its watchdog armed), "shards-renamed" (the shard directory in place, its master not yet)
 * and "renamed" (rank 0's renames done, the other ranks not yet told),
 * "probe" (the process checking INPUT for rank 0, its question taken),
 * "add-copy" (rank 0 with --add, OUTPUT checked, not yet copied);
 * POINT@N is POINT reached while dataset N of several is worked on. */
void fs_signals_pause_point(const char *point);

/* From fs_signals_hold to fs_signals_release a SIGINT or SIGTERM only waits;
 * release lets it take effect. output_in_place nonzero: the output is where
 * it belongs, and an interrupted run now says it had been written. */
void fs_signals_hold(void);
void fs_signals_release(int output_in_place);

#endif
