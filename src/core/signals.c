/* SPDX-License-Identifier: GPL-3.0-or-later */
/* signals: see signals.h. */
#include "config.h"

#include "core/signals.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/launcher.h"
#include "core/testhooks.h"

/* How long rank r > 0 waits, after its cleanup, before it speaks for the
 * job and ends it: LONE_RANK_WAIT_NS + (r - 1) steps, at most
 * LONE_RANK_STEPS. When a lower rank got the signal too, that rank ends
 * the job first and this one is killed silently; only the lowest rank that
 * got the signal speaks. Generous, because a rank's handler runs only once
 * a write(2) to a slow file system has returned; the cost is paid only
 * when rank 0 did not get the signal. */
#define LONE_RANK_WAIT_NS 1500000000L
#define LONE_RANK_STEP_NS 250000000L
#define LONE_RANK_STEPS 16

/* How long a rank waits for the launcher to end it after asking. */
#define LAUNCHER_WAIT_S 10

/* How long a rank other than 0 whose MPI_Finalize stalled waits before it
 * asks for the job's end: rank 0, stalled too when the stall is MPICH's
 * (its closing barrier is global), says why first. */
#define FINALIZE_SPEAKER_WAIT_NS 500000000L

/* The watch of the launcher (fs_signals_watch_launcher): how often it
 * looks, and how long a signal held during start-up waits for MPI_Init
 * (a fraction of a second when all is well) before it acts anyway. */
#define WATCH_STEP_MS 100
#define START_UP_HOLD_MAX_MS 10000

/* What the run is doing, for the message of an interrupted run. */
static const char *volatile current_phase = "start-up";
static volatile int signal_rank = -1;
/* Several inputs: the dataset being worked on, from 1 (0: one input). */
static volatile int current_dataset;

/* The commit of a collective output (fs_signals_hold): while `holding`, a
 * signal only leaves its number in `held_signal`; `in_place` once the output
 * is where it belongs. Lock-free atomics: the handler may run on any thread
 * of the process that does not hold the signals. */
static atomic_int holding, held_signal, in_place;

/* What the handler removes (fs_signals_install). */
static void (*volatile cleanup)(void);

/* Set by the first handler that goes on to end the process: a second
 * signal on another thread (the watch's, during start-up) only waits. */
static atomic_int ending;

/* The watch: its thread, the pipe that wakes it to stop, and what it
 * watches for: start-up (a signal held too long, the launcher gone), the
 * run (the launcher gone), or nothing more. */
enum { WATCH_OFF, WATCH_START_UP, WATCH_RUN, WATCH_DONE };
static atomic_int watch_state;
static pthread_t watch_thread;
static int watch_wake[2] = {-1, -1};

/* The watchdog of MPI_Finalize (fs_signals_finish): the status the job ends
 * with, and whether it may be ended through the launcher. */
static volatile sig_atomic_t final_status;
static volatile sig_atomic_t launcher_armed;

/* FFTSHARD_PAUSE=POINT[:SECONDS]: hold this process for a minute (or
 * SECONDS) when POINT, a phase or a step of the commit, is first reached,
 * so that a test's signal finds it there. `what` is how rank 0 names it. */
static void pause_point(const char *point, const char *what)
{
    static int paused;
    const char *pause_at = fs_testhooks_pause_point();
    /* POINT@N: the point reached while dataset N is worked on. */
    char point_of_dataset[64] = "";
    if (current_dataset > 0)
        snprintf(point_of_dataset, sizeof point_of_dataset, "%s@%d", point, current_dataset);
    if (pause_at[0] && !paused &&
        (strcmp(pause_at, point) == 0 || strcmp(pause_at, point_of_dataset) == 0)) {
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
    if (current_dataset > 0)
        snprintf(what, sizeof what, "the start of the %s phase of dataset %d", phase,
                 current_dataset);
    else
        snprintf(what, sizeof what, "the start of the %s phase", phase);
    pause_point(phase, what);
}

void fs_signals_set_dataset(int dataset)
{
    current_dataset = dataset;
}

void fs_signals_pause_point(const char *point)
{
    pause_point(point, point);
}

void fs_signals_set_rank(int rank)
{
    signal_rank = rank;
}

/* A line built in a handler: async-signal-safe appends, cut at the end. */
typedef struct line {
    char text[256];
    size_t len;
} line;

static void add_text(line *l, const char *s)
{
    while (*s && l->len < sizeof l->text - 1)
        l->text[l->len++] = *s++;
}

static void add_number(line *l, int n)
{
    char digits[16];
    int k = 0;
    do
        digits[k++] = (char)('0' + n % 10);
    while ((n /= 10) > 0 && k < 15);
    while (k > 0 && l->len < sizeof l->text - 1)
        l->text[l->len++] = digits[--k];
}

/* "fftshard: error: interrupted by SIGTERM during the exchange phase (rank
 * 3): the temporary output was removed", built whole and written with one
 * write(2), so that it never mixes with another process's line. */
static void report_signal(int sig)
{
    line l = {.len = 0};
    add_text(&l, "fftshard: error: interrupted by ");
    add_text(&l, sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal");
    add_text(&l, " during the ");
    add_text(&l, current_phase);
    add_text(&l, " phase");
    if (current_dataset > 0) {
        add_text(&l, " of dataset ");
        add_number(&l, current_dataset);
    }
    add_text(&l, " (rank ");
    if (signal_rank >= 0)
        add_number(&l, signal_rank);
    else
        add_text(&l, "?");
    add_text(&l, atomic_load(&in_place) || strcmp(current_phase, "report") == 0
                     ? "): the output had been written\n"
                     : "): the temporary output was removed\n");
    ssize_t ignored = write(fs_launcher_message_fd(), l.text, l.len);
    (void)ignored;
}

static void sleep_ns(long ns)
{
    struct timespec t = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

/* Under a launcher stderr is a pipe to it: wait (up to a second) until it
 * has read the message, which it then passes on before the request to end
 * the job that follows, instead of dropping it when the job ends. */
static void wait_for_message_read(void)
{
    struct stat st;
    if (fstat(2, &st) != 0 || !S_ISFIFO(st.st_mode))
        return;
    for (int tries = 0; tries < 200; tries++) {
        int unread = 0;
        if (ioctl(2, FIONREAD, &unread) != 0 || unread == 0)
            return;
        sleep_ns(5000000L);
    }
}

/* Ask the launcher to end the job with `status`, as MPI_Abort does, once
 * it has read the message; returns if it cannot be asked or does not act. */
static void ask_launcher_to_end(int status, int sig)
{
    if (!launcher_armed)
        return;
    wait_for_message_read();
    fs_launcher_end(status, sig, LAUNCHER_WAIT_S);
}

/* SIGALRM in MPI_Finalize: every rank is done and the status agreed (see
 * signals.h). Async-signal-safe calls only. */
static void on_finalize_timeout(int sig)
{
    (void)sig;
    if (signal_rank <= 0) {
        static const char msg[] = "fftshard: warning: MPI_Finalize did not return; the job ends "
                                  "without it (the run had finished)\n";
        ssize_t ignored = write(2, msg, sizeof msg - 1);
        (void)ignored;
    } else {
        sleep_ns(FINALIZE_SPEAKER_WAIT_NS);
    }
    ask_launcher_to_end(final_status, 0);
    _exit(final_status);
}

/* End the job with status 128 + sig (see signals.h): ask the launcher, the
 * way MPI_Abort does; failing that, die of the signal. */
static void end_job(int sig, int spoke)
{
    /* A rank that kept quiet leaves the asking to the one that spoke; a
     * launcher that is gone can neither be asked nor read the message. */
    if (spoke && !fs_launcher_gone())
        ask_launcher_to_end(128 + sig, sig);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    sigprocmask(SIG_UNBLOCK, &only, NULL);
    kill(getpid(), sig);
    _exit(128 + sig);
}

static void on_signal(int sig)
{
    /* Only async-signal-safe calls here (and in cleanup): write, fstat,
     * nanosleep, sigaction, sigprocmask, kill, _exit, and ioctl (a bare
     * system call on Linux). During a commit the
     * signal waits for its end (checked again after the note: the commit
     * may have ended meanwhile, and then either it sees the note or this
     * handler goes on). The other of SIGINT and SIGTERM waits (sa_mask):
     * a second signal does not start a second cleanup or message. */
    if (atomic_load(&holding)) {
        atomic_store(&held_signal, sig);
        if (atomic_load(&holding))
            return;
    }
    if (atomic_exchange(&ending, 1))
        for (;;)
            sleep_ns(1000000000L);
    if (cleanup)
        cleanup();
    /* One line for the job: rank 0 speaks; another rank only when no lower
     * rank got the signal, i.e. none has ended the job meanwhile. */
    int r = signal_rank;
    if (r > 0) {
        long steps = r - 1 < LONE_RANK_STEPS ? r - 1 : LONE_RANK_STEPS;
        sleep_ns(LONE_RANK_WAIT_NS + LONE_RANK_STEP_NS * steps);
    }
    /* A rank that the launcher stops after another rank spoke (Open MPI's
     * mpirun and srun signal every rank when one ends) keeps quiet. */
    int spoke = fs_launcher_claim_message();
    if (spoke)
        report_signal(sig);
    end_job(sig, spoke);
}

static void handled_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
}

static void set_handlers(void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    handled_signals(&sa.sa_mask);
    /* The message to a launcher that is gone fails (EPIPE) instead. */
    sigaddset(&sa.sa_mask, SIGPIPE);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

static void set_held(int how)
{
    sigset_t set;
    handled_signals(&set);
    sigprocmask(how, &set, NULL);
}

void fs_signals_start(void)
{
    /* Held first: MPI_Init's threads inherit the mask, so that a signal
     * during start-up reaches this thread, after MPI_Init. */
    set_held(SIG_BLOCK);
    set_handlers(on_signal);
    signal(SIGXFSZ, SIG_IGN);
    fs_launcher_detect();
    /* Until MPI_Init says, the launcher's rank (-1 when none names it). */
    signal_rank = fs_launcher_rank();
}

void fs_signals_stop(void)
{
    set_handlers(SIG_DFL);
    set_held(SIG_UNBLOCK);
}

/* A signal held by every thread and waiting (SIGTERM first), or 0. */
static int held_pending(void)
{
    sigset_t pending;
    if (sigpending(&pending) != 0)
        return 0;
    return sigismember(&pending, SIGTERM) ? SIGTERM : sigismember(&pending, SIGINT) ? SIGINT : 0;
}

/* The launcher is gone, or a signal waited too long for MPI_Init: the rank
 * ends as on the signal (SIGTERM when none came). During start-up every
 * other thread holds it, so this one takes it: the handler runs here. */
static void watch_ends_run(int start_up, int sig)
{
    if (!sig)
        kill(getpid(), SIGTERM);
    if (start_up) {
        sigset_t set;
        handled_signals(&set);
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    }
}

/* The watch: every WATCH_STEP_MS, whether the launcher is gone and, during
 * start-up, how long a signal has been held. */
static void *watch_main(void *unused)
{
    (void)unused;
    int held_ms = 0;
    for (;;) {
        struct pollfd wake = {.fd = watch_wake[0], .events = POLLIN, .revents = 0};
        if (poll(&wake, 1, WATCH_STEP_MS) > 0 || atomic_load(&watch_state) == WATCH_DONE)
            return NULL;
        int start_up = atomic_load(&watch_state) == WATCH_START_UP;
        int sig = start_up ? held_pending() : 0;
        held_ms = sig ? held_ms + WATCH_STEP_MS : 0;
        if (fs_launcher_gone() || held_ms >= START_UP_HOLD_MAX_MS) {
            watch_ends_run(start_up, sig);
            return NULL;
        }
    }
}

void fs_signals_watch_launcher(void)
{
    if (fs_launcher_kind_of() == FS_LAUNCHER_NONE || pipe2(watch_wake, O_CLOEXEC) != 0)
        return;
    /* The thread takes no signal but the one it lets through itself. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    atomic_store(&watch_state, WATCH_START_UP);
    if (pthread_create(&watch_thread, NULL, watch_main, NULL) != 0)
        atomic_store(&watch_state, WATCH_OFF);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The watch ends (before MPI_Finalize: the run is over). */
static void watch_stop(void)
{
    if (atomic_exchange(&watch_state, WATCH_DONE) == WATCH_OFF)
        return;
    char b = 1;
    ssize_t ignored = write(watch_wake[1], &b, 1);
    (void)ignored;
    pthread_join(watch_thread, NULL);
}

void fs_signals_install(void (*remove_temporaries)(void))
{
    cleanup = remove_temporaries;
    launcher_armed = fs_launcher_arm() == 0;
    set_handlers(on_signal);
    int expected = WATCH_START_UP;
    atomic_compare_exchange_strong(&watch_state, &expected, WATCH_RUN);
    set_held(SIG_UNBLOCK);
}

void fs_signals_finish(int status, unsigned finalize_seconds)
{
    set_held(SIG_BLOCK);
    watch_stop();
    /* MPI_Finalize closes the launcher's connection: the watchdog asks on
     * a copy (without one, the rank can only exit). */
    fs_launcher_keep();
    final_status = (sig_atomic_t)status;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_finalize_timeout;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL) == 0)
        alarm(finalize_seconds);
}

/* A rank other than 0 of a failed run while rank 0 has the launcher end
 * the job: out of MPI's way, dying quietly of the launcher's SIGTERM. Open
 * MPI 4.1's mpirun could hang or crash when the other ranks' MPI_Finalize
 * met rank 0's abort (2 hangs and a crash in 40 runs on a loaded node,
 * none in 40 with the ranks waiting). Returns if the launcher does not act. */
static void wait_to_be_ended(void)
{
    set_handlers(SIG_DFL);
    set_held(SIG_UNBLOCK);
    for (int i = 0; i < 2 * (LAUNCHER_WAIT_S + 1); i++)
        sleep_ns(500000000L);
    set_held(SIG_BLOCK);
    set_handlers(on_signal);
}

void fs_signals_end_failed(int status)
{
    if (status == 0 || !launcher_armed || !fs_launcher_reports_exits())
        return;
    fflush(stdout);
    fflush(stderr);
    /* The watchdog would warn of a stall while the launcher ends the job;
     * it is armed again if the launcher does not act. */
    unsigned left = alarm(0);
    if (signal_rank == 0)
        ask_launcher_to_end(status, 0);
    else
        wait_to_be_ended();
    alarm(left ? left : 1);
}

void fs_signals_finalized(void)
{
    alarm(0);
    fs_launcher_finalized();
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
