/* SPDX-License-Identifier: GPL-3.0-or-later */
/* probe_guard: see probe_guard.h. */
#include "config.h"

#include "io/probe_guard.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/launcher.h"
#include "core/signals.h"
#include "core/testhooks.h"

extern char **environ;

#define VERBOSE_ENV FS_PROBE_VERBOSE_ENV

/* What the child sends back, as bytes through a pipe. */
typedef struct probe_result {
    int status;
    fs_input_info info;
    char message[2048];
} probe_result;

/* What rank 0 asks the helper. */
typedef struct probe_request {
    int verbose;
    int has_dataset;
    char file[4096];
    char dataset[FS_PATH_MAX];
} probe_request;

/* The helper forked at start-up: its pid and this end of its socket (-1:
 * none, or no longer). */
static pid_t helper_pid = -1;
static int helper_fd = -1;

/* All of buf to fd: by write, or on a socket whose peer may be gone by
 * send (an error, not SIGPIPE). */
static int put_all(int fd, const void *buf, size_t len, int socket)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = socket ? send(fd, p, len, MSG_NOSIGNAL) : write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Read up to len bytes, until end of file; the count read. */
static size_t read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, p + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    return got;
}

/* The signals a crash of HDF5 itself ends the probing process with: a bad
 * address, a failed assertion or abort(), arithmetic or instruction faults.
 * Any other signal came from outside (the out-of-memory killer, a user, a
 * batch system) and says nothing about the file. */
static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

static int is_crash_signal(int sig)
{
    for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++)
        if (crash_signals[i] == sig)
            return 1;
    return 0;
}

/* A crash must end the probing process quietly: rank 0 reports it. (The
 * libraries, UCX among them, install handlers that print backtraces.) */
static void crash_quietly(void)
{
    for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++)
        signal(crash_signals[i], SIG_DFL);
}

/* FFTSHARD_PAUSE=probe: hold the probing process with the question taken,
 * before HDF5 opens the file, so that a test can end it from outside. It
 * speaks for rank 0. */
static void pause_with_question(void)
{
    fs_signals_set_rank(0);
    fs_signals_pause_point("probe");
}

/* The helper: answer every request on fd until rank 0 closes it. It keeps
 * none of the descriptors it inherited but the standard ones (the
 * launcher's among them are rank 0's), and dies with rank 0. */
static void helper_main(int fd, pid_t parent)
{
    crash_quietly();
    /* Signals as a process started anew has them: the default action,
     * none held (fs_signals_start held them for MPI_Init). */
    fs_signals_stop();
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
        _exit(0);
    if (fd != 3 && dup2(fd, 3) != 3)
        _exit(1);
    fd = 3;
    close_range(4, ~0U, 0);
    probe_request *req = calloc(1, sizeof *req);
    probe_result *res = calloc(1, sizeof *res);
    if (!req || !res || fs_h5_init() != FS_OK)
        _exit(1);
    while (read_all(fd, req, sizeof *req) == sizeof *req) {
        req->file[sizeof req->file - 1] = '\0';
        req->dataset[sizeof req->dataset - 1] = '\0';
        fs_error_set_verbose(req->verbose);
        pause_with_question();
        memset(res, 0, sizeof *res);
        res->status = fs_h5_probe(req->file, req->has_dataset ? req->dataset : NULL, &res->info);
        snprintf(res->message, sizeof res->message, "%s", fs_error_message());
        if (put_all(fd, res, sizeof *res, 1) != 0)
            break;
    }
    /* Not exit(): the stdio buffers and atexit handlers are rank 0's. */
    _exit(0);
}

void fs_probe_guard_start(void)
{
    /* The launchers name the rank before MPI_Init (launcher.h); the other
     * ranks need no helper. Where none does, every rank forks one and the
     * ranks but 0 stop theirs once MPI_Init has told them their rank. */
    int sv[2];
    if (fs_launcher_rank() > 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return;
    pid_t parent = getpid();
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        helper_main(sv[1], parent);
    }
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        return;
    }
    helper_pid = pid;
    helper_fd = sv[0];
}

/* Close the helper's socket and wait for it to end; *wstatus (out, may be
 * NULL) how it ended. */
static void helper_end(int *wstatus)
{
    int ignored;
    if (helper_fd >= 0)
        close(helper_fd);
    helper_fd = -1;
    while (helper_pid > 0 && waitpid(helper_pid, wstatus ? wstatus : &ignored, 0) < 0 &&
           errno == EINTR)
        ;
    helper_pid = -1;
}

void fs_probe_guard_stop(void)
{
    helper_end(NULL);
}

int fs_probe_guard_child(int argc, char **argv)
{
    crash_quietly();
    int fd = fs_testhooks_probe_fd();
    if (fd < 0 || argc < 2 || argc > 3)
        return 2;
    fs_h5_init();
    fs_error_set_verbose(fs_testhooks_probe_verbose());
    probe_result *res = calloc(1, sizeof *res);
    if (!res)
        return 1;
    pause_with_question();
    res->status = fs_h5_probe(argv[1], argc == 3 ? argv[2] : NULL, &res->info);
    snprintf(res->message, sizeof res->message, "%s", fs_error_message());
    int ok = put_all(fd, res, sizeof *res, 0) == 0;
    close(fd);
    free(res);
    return ok ? 0 : 1;
}

/* The environment of the child: ours, FS_PROBE_FD_ENV=fd and, with
 * --verbose, VERBOSE_ENV=1. NULL when out of memory. */
static char **child_environment(int fd, char *fd_entry, size_t fd_entry_size)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 3, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], FS_PROBE_FD_ENV "=", strlen(FS_PROBE_FD_ENV) + 1) != 0 &&
            strncmp(environ[i], VERBOSE_ENV "=", strlen(VERBOSE_ENV) + 1) != 0)
            env[k++] = environ[i];
    snprintf(fd_entry, fd_entry_size, "%s=%d", FS_PROBE_FD_ENV, fd);
    env[k++] = fd_entry;
    if (fs_error_verbose())
        env[k++] = VERBOSE_ENV "=1";
    env[k] = NULL;
    return env;
}

/* The verdict on what a probing process sent (got bytes of *res; res NULL
 * when out of memory) and how it ended. */
static fs_status verdict(const char *file, const probe_result *res, size_t got, int wstatus,
                         fs_input_info *info)
{
    memset(info, 0, sizeof *info);
    if (!res)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    if (got == sizeof *res) {
        /* It answered: what happens to it afterwards (a library failing
         * while it shuts down) does not change the answer. */
        *info = res->info;
        fs_status st = (fs_status)res->status;
        if (st != FS_OK)
            fs_error_set(st, "%s", res->message);
        return st;
    }
    int sig = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
    if (is_crash_signal(sig))
        return fs_error_set(FS_ERR_INPUT, "%s: HDF5 crashed reading it (%s): the file is damaged",
                            file, strsignal(sig));
    /* Not HDF5's doing: the file was not judged. */
    if (sig)
        return fs_error_set(FS_ERR_RUNTIME,
                            "%s: the process checking it was ended by SIG%s (%s) from outside "
                            "(the out-of-memory killer, a user or the batch system) before it "
                            "answered; the input was not judged",
                            file, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?", strsignal(sig));
    return fs_error_set(FS_ERR_RUNTIME,
                        "%s: the process checking it ended (exit status %d) before it answered; "
                        "the input was not judged",
                        file, WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
}

/* The probe in this program started anew. */
static fs_status probe_spawned(const char *file, const char *dataset, fs_input_info *info)
{
    /* This program, by its path: under valgrind /proc/self/exe is valgrind,
     * and readlink gives the program valgrind runs. */
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    int fds[2];
    if (len <= 0 || (size_t)len >= sizeof exe - 1 || pipe(fds) != 0)
        return fs_h5_probe(file, dataset, info);
    exe[len] = '\0';
    char fd_entry[64];
    char **env = child_environment(fds[1], fd_entry, sizeof fd_entry);
    char *argv[] = {"fftshard", (char *)file, (char *)dataset, NULL};
    pid_t pid = -1;
    posix_spawn_file_actions_t actions;
    int spawned = -1;
    if (env && posix_spawn_file_actions_init(&actions) == 0) {
        /* The child gets the write end only; when that cannot be
         * arranged there is no child and the probe runs here. */
        if (posix_spawn_file_actions_addclose(&actions, fds[0]) == 0) {
            fflush(stderr);
            spawned = posix_spawn(&pid, exe, &actions, NULL, argv, env);
        }
        posix_spawn_file_actions_destroy(&actions);
    }
    free(env);
    close(fds[1]);
    if (spawned != 0) {
        close(fds[0]);
        return fs_h5_probe(file, dataset, info);
    }
    probe_result *res = calloc(1, sizeof *res);
    size_t got = res ? read_all(fds[0], res, sizeof *res) : 0;
    close(fds[0]);
    int wstatus = 0;
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
        ;
    fs_status st = verdict(file, res, got, wstatus, info);
    free(res);
    return st;
}

fs_status fs_h5_probe_guarded(const char *file, const char *dataset, fs_input_info *info)
{
    probe_request *req = NULL;
    if (helper_fd >= 0 && strlen(file) < sizeof req->file &&
        (!dataset || strlen(dataset) < sizeof req->dataset))
        req = calloc(1, sizeof *req);
    probe_result *res = req ? calloc(1, sizeof *res) : NULL;
    if (!res) {
        free(req);
        return probe_spawned(file, dataset, info);
    }
    req->verbose = fs_error_verbose();
    req->has_dataset = dataset != NULL;
    strcpy(req->file, file);
    if (dataset)
        strcpy(req->dataset, dataset);
    int sent = put_all(helper_fd, req, sizeof *req, 1) == 0;
    size_t got = sent ? read_all(helper_fd, res, sizeof *res) : 0;
    free(req);
    fs_status st;
    if (got == sizeof *res) {
        st = verdict(file, res, got, 0, info);
    } else {
        /* It died: on this input when it had taken the request, else
         * before it (then the program started anew asks). */
        int wstatus = 0;
        helper_end(&wstatus);
        st = sent ? verdict(file, res, got, wstatus, info) : probe_spawned(file, dataset, info);
    }
    free(res);
    return st;
}
