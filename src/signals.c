/* signals: see signals.h. */
#include "config.h"

#include "signals.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testhooks.h"

/* What the run is doing, for the message of an interrupted run. */
static const char *volatile current_phase = "start-up";
static volatile int signal_rank = -1;

/* The commit of a collective output (fs_signals_hold): while `holding`, a
 * signal only leaves its number in `held_signal`; `in_place` once the output
 * is where it belongs. Lock-free atomics: the handler may run on any thread
 * of the process. */
static atomic_int holding, held_signal, in_place;

/* What the handler removes (fs_signals_install). */
static void (*volatile cleanup)(void);

/* FFTSHARD_PAUSE=POINT[:SECONDS]: hold this process for a minute (or
 * SECONDS) when POINT, a phase or a step of the commit, is first reached,
 * so that a test's signal finds it there. `what` is how rank 0 names it. */
static void pause_point(const char *point, const char *what)
{
    static int paused;
    const char *pause_at = fs_testhooks_pause_point();
    if (pause_at[0] && !paused && strcmp(pause_at, point) == 0) {
        paused = 1;
        if (signal_rank == 0) {
            fprintf(stderr, "fftshard: pausing at %s (FFTSHARD_PAUSE)\n", what);
            fflush(stderr);
        }
        /* other signals (the launcher's, MPI's) must not cut it short */
        struct timespec pause = {fs_testhooks_pause_seconds(), 0};
        while (nanosleep(&pause, &pause) != 0 && errno == EINTR)
            ;
    }
}

void fs_signals_set_phase(const char *phase)
{
    current_phase = phase;
    char what[64];
    snprintf(what, sizeof what, "the start of the %s phase", phase);
    pause_point(phase, what);
}

void fs_signals_pause_point(const char *point)
{
    pause_point(point, point);
}

void fs_signals_set_rank(int rank)
{
    signal_rank = rank;
}

static void say(const char *text)
{
    ssize_t ignored = write(2, text, strlen(text));
    (void)ignored;
}

/* "fftshard: error: interrupted by SIGTERM during the exchange phase (rank
 * 3): the temporary output was removed" with async-signal-safe calls. */
static void report_signal(int sig)
{
    char rank[16] = "?";
    int r = signal_rank;
    if (r >= 0) {
        char digits[16];
        int n = 0;
        do
            digits[n++] = (char)('0' + r % 10);
        while ((r /= 10) > 0 && n < 15);
        for (int i = 0; i < n; i++)
            rank[i] = digits[n - 1 - i];
        rank[n] = '\0';
    }
    say("fftshard: error: interrupted by ");
    say(sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal");
    say(" during the ");
    say(current_phase);
    say(" phase (rank ");
    say(rank);
    say(atomic_load(&in_place) || strcmp(current_phase, "report") == 0
            ? "): the output had been written\n"
            : "): the temporary output was removed\n");
}

static void on_signal(int sig)
{
    /* Only async-signal-safe calls here (and in cleanup): write,
     * nanosleep, _exit. During a commit the signal waits for its end
     * (checked again after the note: the commit may have ended meanwhile,
     * and then either it sees the note or this handler goes on). */
    if (atomic_load(&holding)) {
        atomic_store(&held_signal, sig);
        if (atomic_load(&holding))
            return;
    }
    if (cleanup)
        cleanup();
    /* One line for the job: rank 0 speaks at once; another rank only when
     * it alone got the signal (the launcher has not ended it 0.2 s later). */
    if (signal_rank != 0) {
        struct timespec pause = {0, 200000000};
        nanosleep(&pause, NULL);
    }
    report_signal(sig);
    _exit(128 + sig);
}

void fs_signals_install(void (*remove_temporaries)(void))
{
    cleanup = remove_temporaries;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

void fs_signals_hold(void)
{
    atomic_store(&holding, 1);
}

void fs_signals_release(int output_in_place)
{
    if (output_in_place)
        atomic_store(&in_place, 1);
    atomic_store(&holding, 0);
    int sig = atomic_exchange(&held_signal, 0);
    if (sig)
        raise(sig);
}
