/* probe_guard: see probe_guard.h. */
#include "config.h"

#include "probe_guard.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testhooks.h"

extern char **environ;

#define VERBOSE_ENV FS_PROBE_VERBOSE_ENV

/* What the child sends back, as bytes through a pipe. */
typedef struct probe_result {
    int status;
    fs_input_info info;
    char message[2048];
} probe_result;

static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
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

int fs_probe_guard_child(int argc, char **argv)
{
    /* A crash must end this process quietly: the parent reports it. (The
     * libraries, UCX among them, install handlers that print backtraces.) */
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        signal(fatal[i], SIG_DFL);
    int fd = fs_testhooks_probe_fd();
    if (fd < 0 || argc < 2 || argc > 3)
        return 2;
    fs_h5_init();
    fs_error_set_verbose(fs_testhooks_probe_verbose());
    probe_result *res = calloc(1, sizeof *res);
    if (!res)
        return 1;
    res->status = fs_h5_probe(argv[1], argc == 3 ? argv[2] : NULL, &res->info);
    snprintf(res->message, sizeof res->message, "%s", fs_error_message());
    int ok = write_all(fd, res, sizeof *res) == 0;
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

fs_status fs_h5_probe_guarded(const char *file, const char *dataset, fs_input_info *info)
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
    fs_status st;
    memset(info, 0, sizeof *info);
    if (!res) {
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
    } else if (got == sizeof *res) {
        /* The child answered: what happens to it afterwards (a library
         * failing while it shuts down) does not change the answer. */
        *info = res->info;
        st = (fs_status)res->status;
        if (st != FS_OK)
            fs_error_set(st, "%s", res->message);
    } else if (WIFSIGNALED(wstatus)) {
        st = fs_error_set(FS_ERR_INPUT, "%s: HDF5 crashed reading it (%s): the file is damaged", file,
                          strsignal(WTERMSIG(wstatus)));
    } else {
        st = fs_error_set(FS_ERR_INPUT,
                          "%s: HDF5 failed reading it (exit status %d): the file is damaged", file,
                          WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
    }
    free(res);
    return st;
}
