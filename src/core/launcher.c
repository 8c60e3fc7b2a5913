/* SPDX-License-Identifier: GPL-3.0-or-later */
/* launcher: see launcher.h. */
#include "config.h"

#include "core/launcher.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static fs_launcher_kind kind = FS_LAUNCHER_NONE;
static int detected;
static int env_rank = -1;

/* The launcher's process on this node as the rank found it at its start:
 * its parent (hydra's proxy, mpirun or orted, slurmstepd). */
static pid_t start_parent = -1;
/* hydra: the control connection of the node's proxy to mpiexec
 * (HYDI_CONTROL_FD), which the proxy's ranks inherit, else -1. */
static int control_fd = -1;
/* A copy of the launcher's own standard error, where a rank whose standard
 * error is a pipe to the launcher speaks once the launcher is gone (no one
 * reads that pipe any more), else -1. */
static int launcher_err_fd = -1;

/* The PMI-1 connection (PMI_FD, a socket) of hydra, else -1; and the copy
 * kept across MPI_Finalize (fs_launcher_keep). */
static int pmi_fd = -1;
static volatile int kept_fd = -1;

/* The thread that ends the job by a library call: the handler writes the
 * status (one byte) to ender_pipe[1]. */
static int ender_pipe[2] = {-1, -1};
static volatile int ender_ready;

/* Slurm: scancel's path and its arguments for this job step, made when
 * armed; the handler only runs them. */
static char scancel_path[4096];
static char step_arg[64];
static int slurm_ready;
/* How long the rank that spoke stays after signalling the step, holding
 * the note (fs_launcher_claim_message) while the other ranks of its node
 * end: longer than the longest wait of a rank before it speaks (signals.c:
 * 1.5 s + 16 x 0.25 s). */
#define SLURM_HOLD_S 6

/* The note of the rank that speaks for the job's end on this node. */
static volatile int claim_fd = -1;

/* The value of the variable name as a rank, or -1. */
static int rank_of(const char *name)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return -1;
    long r = strtol(v, &end, 10);
    return *end || r < 0 || r > 0x7fffffffL ? -1 : (int)r;
}

/* The descriptor the variable name gives when it is a socket, else -1. */
static int socket_of(const char *name)
{
    int fd = rank_of(name);
    struct stat st;
    if (fd < 0 || fd > 65535 || fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
        return -1;
    return fd;
}

/* The parent's standard error, opened anew (appending: a file is written
 * at its end, never over its start; not waiting for a reader), when this
 * process's own is a pipe, which the parent reads; else -1. */
static int open_parent_stderr(void)
{
    struct stat st;
    char path[64];
    if (fstat(2, &st) != 0 || !S_ISFIFO(st.st_mode))
        return -1;
    snprintf(path, sizeof path, "/proc/%ld/fd/2", (long)start_parent);
    int fd = open(path, O_WRONLY | O_APPEND | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd >= 0)
        fcntl(fd, F_SETFL, O_APPEND);
    return fd;
}

void fs_launcher_detect(void)
{
    if (detected)
        return;
    detected = 1;
    start_parent = getppid();
    int fd = socket_of("PMI_FD");
    /* hydra's proxy also hands its ranks a control descriptor; Slurm's pmi2
     * plugin does not. Inside a Slurm job hydra's ranks see SLURM_ too. */
    int hydra = fd >= 0 && getenv("HYDI_CONTROL_FD") != NULL;
    if (rank_of("PALS_RANKID") >= 0) {
        kind = FS_LAUNCHER_PALS;
        env_rank = rank_of("PALS_RANKID");
    } else if (rank_of("PMIX_RANK") >= 0) {
        kind = FS_LAUNCHER_PMIX;
        env_rank = rank_of("PMIX_RANK");
    } else if (rank_of("OMPI_COMM_WORLD_RANK") >= 0) {
        kind = FS_LAUNCHER_PMIX;
        env_rank = rank_of("OMPI_COMM_WORLD_RANK");
    } else if (fd >= 0 && !hydra && getenv("SLURM_STEP_ID")) {
        kind = FS_LAUNCHER_SLURM_PMI2;
        env_rank = rank_of("PMI_RANK");
    } else if (hydra || (fd >= 0 && rank_of("PMI_RANK") >= 0)) {
        kind = FS_LAUNCHER_HYDRA;
        pmi_fd = fd;
        env_rank = rank_of("PMI_RANK");
    } else if (rank_of("SLURM_PROCID") >= 0 && getenv("SLURM_STEP_ID")) {
        kind = FS_LAUNCHER_SLURM;
        env_rank = rank_of("SLURM_PROCID");
    } else if (rank_of("PMI_RANK") >= 0) {
        kind = FS_LAUNCHER_OTHER;
        env_rank = rank_of("PMI_RANK");
    }
    if (kind == FS_LAUNCHER_HYDRA)
        control_fd = socket_of("HYDI_CONTROL_FD");
    if (kind != FS_LAUNCHER_NONE)
        launcher_err_fd = open_parent_stderr();
}

fs_launcher_kind fs_launcher_kind_of(void)
{
    fs_launcher_detect();
    return kind;
}

int fs_launcher_rank(void)
{
    fs_launcher_detect();
    return env_rank;
}

typedef int (*pmix_abort_fn)(int status, const char msg[], void *procs, size_t nprocs);

/* PMIx_Abort of the PMIx library the MPI already loaded, or NULL. */
static pmix_abort_fn find_pmix_abort(void)
{
    static const char *const names[] = {"libpmix.so.2", "libpmix.so"};
    void *f = dlsym(RTLD_DEFAULT, "PMIx_Abort");
    for (size_t i = 0; !f && i < sizeof names / sizeof names[0]; i++) {
        void *lib = dlopen(names[i], RTLD_NOW | RTLD_NOLOAD);
        if (lib)
            f = dlsym(lib, "PMIx_Abort");
    }
    return (pmix_abort_fn)f;
}

/* The ender: waits for a status from a handler, then ends the job. */
static void *ender_main(void *unused)
{
    (void)unused;
    unsigned char status;
    ssize_t n;
    while ((n = read(ender_pipe[0], &status, 1)) < 0 && errno == EINTR)
        ;
    if (n != 1)
        return NULL;
    pmix_abort_fn pmix_abort = find_pmix_abort();
    if (pmix_abort)
        pmix_abort(status, "fftshard: the job ends", NULL, 0);
    else
        MPI_Abort(MPI_COMM_WORLD, status);
    return NULL;
}

static int start_ender(void)
{
    if (ender_ready)
        return 0;
    if (pipe2(ender_pipe, O_CLOEXEC) != 0)
        return -1;
    /* The thread takes no signal: the handlers run on the other threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    int err = pthread_create(&t, NULL, ender_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err != 0) {
        close(ender_pipe[0]);
        close(ender_pipe[1]);
        ender_pipe[0] = ender_pipe[1] = -1;
        return -1;
    }
    pthread_detach(t);
    ender_ready = 1;
    return 0;
}

/* scancel on PATH and the step's name (JOB.STEP), for ending the step. */
static int find_scancel(void)
{
    const char *job = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
    const char *path = getenv("PATH");
    if (!job || !step || !path)
        return -1;
    snprintf(step_arg, sizeof step_arg, "%s.%s", job, step);
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        if (n > 0 && snprintf(scancel_path, sizeof scancel_path, "%.*s/scancel", (int)n, p) <
                         (int)sizeof scancel_path &&
            access(scancel_path, X_OK) == 0) {
            slurm_ready = 1;
            return 0;
        }
        p += n + (p[n] == ':');
    }
    return -1;
}

int fs_launcher_arm(void)
{
    fs_launcher_detect();
    switch (kind) {
    case FS_LAUNCHER_SLURM_PMI2:
    case FS_LAUNCHER_SLURM:
        return find_scancel();
    case FS_LAUNCHER_HYDRA:
        return pmi_fd >= 0 ? 0 : -1;
    case FS_LAUNCHER_PMIX:
    case FS_LAUNCHER_PALS:
        return start_ender();
    default:
        return -1;
    }
}

void fs_launcher_keep(void)
{
    if (pmi_fd >= 0 && kept_fd < 0)
        kept_fd = fcntl(pmi_fd, F_DUPFD_CLOEXEC, 0);
}

void fs_launcher_finalized(void)
{
    int fd = kept_fd;
    kept_fd = -1;
    if (fd >= 0)
        close(fd);
}

static void sleep_s(unsigned s)
{
    struct timespec t = {(time_t)s, 0};
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

/* "cmd=abort exitcode=N\n", MPICH's PMI-1 request, by one write(2). */
static int hydra_abort(int fd, int status)
{
    char line[40] = "cmd=abort exitcode=";
    size_t len = strlen(line);
    char digits[12];
    int k = 0;
    unsigned u = (unsigned)status;
    do
        digits[k++] = (char)('0' + u % 10);
    while ((u /= 10) > 0 && k < 11);
    while (k > 0)
        line[len++] = digits[--k];
    line[len++] = '\n';
    return fd >= 0 && write(fd, line, len) == (ssize_t)len ? 0 : -1;
}

/* Slurm: scancel --signal=SIG JOB.STEP, and wait for it (a few seconds at
 * most: scancel only asks slurmctld). _Fork, unlike fork, is safe in a
 * signal handler: it runs no fork handlers and takes no locks. */
static int slurm_signal_step(int sig)
{
    char *argv[] = {scancel_path, sig == SIGINT ? "--signal=INT" : "--signal=TERM", "--quiet",
                    step_arg, NULL};
    extern char **environ;
#ifdef HAVE__FORK
    pid_t pid = _Fork();
#else
    pid_t pid = vfork();
#endif
    if (pid == 0) {
        execve(scancel_path, argv, environ);
        _exit(127);
    }
    int st;
    if (pid < 0)
        return -1;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return 0;
}

void fs_launcher_end(int status, int sig, unsigned wait_s)
{
    int asked = -1;
    if (kind == FS_LAUNCHER_HYDRA) {
        asked = hydra_abort(kept_fd >= 0 ? kept_fd : pmi_fd, status);
    } else if (slurm_ready) {
        /* srun's status is the largest of its tasks': the tasks end
         * themselves (a signal's death, or exit with status), all of
         * them by the step's signal. */
        if (sig > 0 && slurm_signal_step(sig) == 0)
            sleep_s(SLURM_HOLD_S);
        return;
    } else if (ender_ready) {
        unsigned char b = (unsigned char)status;
        asked = write(ender_pipe[1], &b, 1) == 1 ? 0 : -1;
    }
    if (asked == 0)
        sleep_s(wait_s);
}

int fs_launcher_reports_exits(void)
{
    return kind == FS_LAUNCHER_PMIX && ender_ready;
}

int fs_launcher_gone(void)
{
    if (kind == FS_LAUNCHER_NONE)
        return 0;
    if (getppid() != start_parent)
        return 1;
    /* POLLHUP is reported whatever the events asked for; nothing is read. */
    struct pollfd p = {.fd = control_fd, .events = 0, .revents = 0};
    return control_fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR)) != 0;
}

int fs_launcher_message_fd(void)
{
    return launcher_err_fd >= 0 && fs_launcher_gone() ? launcher_err_fd : 2;
}

int fs_launcher_claim_message(void)
{
    /* Alone, the process is the job. */
    if (claim_fd >= 0 || kind == FS_LAUNCHER_NONE)
        return 1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 1;
    /* Abstract (a leading NUL): gone with the last process holding it. The
     * launcher's process on this node (hydra's proxy, mpirun or orted,
     * slurmstepd) names the job there. */
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    char *p = a.sun_path + 1;
    static const char prefix[] = "fftshard-ending-";
    memcpy(p, prefix, sizeof prefix - 1);
    p += sizeof prefix - 1;
    char digits[12];
    int k = 0;
    /* as at the start: a rank whose launcher is gone has another parent */
    unsigned u = (unsigned)start_parent;
    do
        digits[k++] = (char)('0' + u % 10);
    while ((u /= 10) > 0 && k < 11);
    while (k > 0)
        *p++ = digits[--k];
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)(p - a.sun_path));
    if (bind(fd, (struct sockaddr *)&a, len) != 0) {
        int taken = errno == EADDRINUSE;
        close(fd);
        return !taken;
    }
    claim_fd = fd;
    return 1;
}
