/* signals: what SIGINT and SIGTERM do to a run, and where the tests of
 * interruptions stop it.
 *
 * Owns the handlers of SIGINT and SIGTERM, the name of the phase the run is
 * in and this process's rank (for the one line an interrupted run prints),
 * the pause points of FFTSHARD_PAUSE, and the signals held while a
 * collective output is committed. It knows no files: the handler runs the
 * cleanup it was given (fs_atomic_remove_registered), prints which phase
 * was interrupted and exits with status 128 + signal. */
#ifndef FS_SIGNALS_H
#define FS_SIGNALS_H

/* Install the SIGINT/SIGTERM handlers. cleanup (may be NULL) must be
 * async-signal-safe. */
void fs_signals_install(void (*cleanup)(void));

/* The phase named by an interrupted run's message (a static string, kept),
 * and this process's rank (-1, the default: not known). */
void fs_signals_set_phase(const char *phase);
void fs_signals_set_rank(int rank);

/* For the tests of interruptions: FFTSHARD_PAUSE=POINT[:SECONDS] holds the
 * process for a minute (or SECONDS) when POINT is first reached: a phase
 * (fs_signals_set_phase), or "shards-renamed" (the shard directory in place,
 * its master not yet) and "renamed" (rank 0's renames done, the other ranks
 * not yet told). */
void fs_signals_pause_point(const char *point);

/* From fs_signals_hold to fs_signals_release a SIGINT or SIGTERM only waits;
 * release lets it take effect. output_in_place nonzero: the output is where
 * it belongs, and an interrupted run now says it had been written. */
void fs_signals_hold(void);
void fs_signals_release(int output_in_place);

#endif
