/* atomic: see atomic.h. */
#include "config.h"

#include "atomic.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agree.h"
#include "signals.h"

/* Registered temporaries: a fixed table so the signal handler touches only
 * memory that is never reallocated. */
#define MAX_TEMPORARIES 8
static char *temporaries[MAX_TEMPORARIES];
static char *temporary_dirs[MAX_TEMPORARIES];

static void forget_in(char **table, const char *path)
{
    for (int i = 0; i < MAX_TEMPORARIES; i++) {
        if (table[i] && strcmp(table[i], path) == 0) {
            char *p = table[i];
            table[i] = NULL;
            free(p);
        }
    }
}

static void forget(const char *path)
{
    forget_in(temporaries, path);
    forget_in(temporary_dirs, path);
}

static void register_in(char **table, const char *path)
{
    for (int i = 0; i < MAX_TEMPORARIES; i++) {
        if (!table[i]) {
            table[i] = strdup(path);
            return;
        }
    }
}

void fs_atomic_register(const char *tmp_path)
{
    register_in(temporaries, tmp_path);
}

void fs_atomic_register_dir(const char *tmp_dir)
{
    register_in(temporary_dirs, tmp_dir);
}

void fs_atomic_forget(const char *tmp_path)
{
    forget(tmp_path);
}

char *fs_atomic_template(const char *dir, const char *base)
{
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    for (char *c = host; *c; c++)
        if (*c == '/')
            *c = '_';
    char *t = NULL;
    if (asprintf(&t, "%s/.%s" FS_ATOMIC_TAG "%s-%ld-XXXXXX", dir, base, host, (long)getpid()) < 0)
        return NULL;
    return t;
}

void fs_atomic_remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
    }
    rmdir(path);
}

/* Whether process pid on this host is a running fftshard. */
static int running_here(long pid)
{
    if (pid <= 0 || (kill((pid_t)pid, 0) != 0 && errno == ESRCH))
        return 0;
    char path[64], comm[64] = "";
    snprintf(path, sizeof path, "/proc/%ld/comm", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 1; /* alive, and nothing says it is another program */
    int is_ours = fgets(comm, sizeof comm, f) && strncmp(comm, "fftshard", 8) == 0;
    fclose(f);
    return is_ours;
}

void fs_atomic_clean_leftovers(const char *dir, const char *base)
{
    char host[256] = "localhost", prefix[1100];
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    snprintf(prefix, sizeof prefix, ".%s" FS_ATOMIC_TAG, base);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t pl = strlen(prefix);
        if (strncmp(e->d_name, prefix, pl) != 0)
            continue;
        /* HOST-PID-XXXXXX after the tag */
        char rest[512];
        snprintf(rest, sizeof rest, "%s", e->d_name + pl);
        char *last = strrchr(rest, '-');
        if (!last)
            continue;
        *last = '\0';
        char *mid = strrchr(rest, '-');
        if (!mid)
            continue;
        *mid = '\0';
        long pid = strtol(mid + 1, NULL, 10);
        char path[2200];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (strcmp(rest, host) != 0) {
            fs_note("warning: %s: left by a run on %s (process %ld); remove it if no run is "
                    "writing there", path, rest, pid);
        } else if (!running_here(pid)) {
            struct stat st;
            if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
                fs_atomic_remove_tree(path);
            else
                unlink(path);
            fs_note("note: removed %s, left by an interrupted run (process %ld)", path, pid);
        }
    }
    closedir(d);
}

fs_status fs_atomic_create(const char *final_path, char **tmp_path)
{
    *tmp_path = NULL;
    char *dir_copy = strdup(final_path), *base_copy = strdup(final_path);
    fs_status ret = FS_OK;
    char *tmp = NULL;
    if (!dir_copy || !base_copy) {
        ret = fs_error_set(FS_ERR_RUNTIME, "out of memory");
        goto done;
    }
    const char *dir = dirname(dir_copy), *base = basename(base_copy);
    fs_atomic_clean_leftovers(dir, base);
    if (!(tmp = fs_atomic_template(dir, base))) {
        ret = fs_error_set(FS_ERR_RUNTIME, "out of memory");
        goto done;
    }
    /* mkstemp creates the file exclusively (O_EXCL, never through a symlink)
     * with an unpredictable name and mode 0600. */
    int fd = mkstemp(tmp);
    if (fd >= 0)
        fs_atomic_register(tmp); /* from the first moment a signal could strand it */
    if (fd < 0) {
        int e = errno;
        ret = fs_error_set(e == ENOSPC || e == EIO || e == ENOMEM ? FS_ERR_RUNTIME : FS_ERR_OUTPUT,
                           "%s: cannot create a file in directory %s: %s", final_path, dir,
                           strerror(e));
        goto done;
    }
    /* Give the result the permissions a plain create would: 0666 & ~umask. */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0 || close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        ret = fs_error_set(FS_ERR_RUNTIME, "%s: %s", tmp, strerror(e));
        goto done;
    }
    *tmp_path = tmp;
    tmp = NULL;
done:
    free(tmp);
    free(dir_copy);
    free(base_copy);
    return ret;
}

fs_status fs_atomic_commit(const char *tmp_path, const char *final_path)
{
    if (rename(tmp_path, final_path) != 0) {
        int e = errno;
        fs_atomic_abort(tmp_path);
        return fs_error_set(FS_ERR_RUNTIME, "%s: cannot rename the finished result into place: %s",
                            final_path, strerror(e));
    }
    forget(tmp_path);
    return FS_OK;
}

void fs_atomic_abort(const char *tmp_path)
{
    if (!tmp_path)
        return;
    unlink(tmp_path);
    forget(tmp_path);
}

/* Remove the files of a directory, then the directory: open, getdents64,
 * unlinkat and rmdir are async-signal-safe (opendir and readdir are not). */
static void empty_directory(const char *dir)
{
    static char buf[8192];
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        long n;
        while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
            for (long off = 0; off < n;) {
                struct linux_dirent64 {
                    uint64_t d_ino;
                    int64_t d_off;
                    unsigned short d_reclen;
                    unsigned char d_type;
                    char d_name[];
                } *e = (struct linux_dirent64 *)(buf + off);
                if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                    unlinkat(fd, e->d_name, 0);
                off += e->d_reclen;
            }
        }
        close(fd);
    }
    rmdir(dir);
}

void fs_atomic_remove_registered(void)
{
    for (int i = 0; i < MAX_TEMPORARIES; i++)
        if (temporaries[i])
            unlink(temporaries[i]);
    /* Any rank empties a temporary directory (the others may be killed
     * before their handlers run), with system calls only. */
    for (int i = 0; i < MAX_TEMPORARIES; i++)
        if (temporary_dirs[i])
            empty_directory(temporary_dirs[i]);
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static fs_status check_and_create(const char *final_path, const char *input_path, int force,
                                  char **tmp_path)
{
    struct stat st;
    if (input_path && same_file(input_path, final_path))
        return fs_error_set(FS_ERR_OUTPUT, "%s: is the input file; write the result to another file",
                            final_path);
    if (lstat(final_path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return fs_error_set(FS_ERR_OUTPUT, "%s: is a directory", final_path);
        /* Renaming over a device, fifo or symlink would replace it, not write to it. */
        if (!S_ISREG(st.st_mode))
            return fs_error_set(FS_ERR_OUTPUT, "%s: exists and is not a regular file", final_path);
        if (!force)
            return fs_error_set(FS_ERR_OUTPUT, "%s: exists; use --force to replace it", final_path);
    } else if (errno != ENOENT) {
        return fs_error_set(FS_ERR_OUTPUT, "%s: %s", final_path, strerror(errno));
    }
    return fs_atomic_create(final_path, tmp_path);
}

typedef struct begin_args {
    const char *final_path, *input_path;
    int force;
    char **tmp_path;
} begin_args;

static fs_status check_and_create_on_root(void *arg)
{
    begin_args *a = arg;
    return check_and_create(a->final_path, a->input_path, a->force, a->tmp_path);
}

fs_status fs_atomic_begin(MPI_Comm comm, const char *final_path, const char *input_path, int force,
                          char **tmp_path)
{
    *tmp_path = NULL;
    begin_args a = {final_path, input_path, force, tmp_path};
    fs_status st = fs_root_decides(comm, check_and_create_on_root, &a);
    if (st == FS_OK && (st = fs_bcast_string(comm, 0, tmp_path)) != FS_OK) {
        fs_atomic_abort(*tmp_path); /* rank 0's; NULL on the others */
        free(*tmp_path);
        *tmp_path = NULL;
    }
    if (st == FS_OK)
        fs_atomic_register(*tmp_path);
    return st;
}

fs_status fs_atomic_commit_collective(MPI_Comm comm, fs_status (*commit)(void *), void *arg)
{
    int rank;
    fs_signals_hold();
    /* Every rank holds its signals before rank 0 renames anything: no
     * handler removes a temporary from under the renames. */
    int err = MPI_Comm_rank(comm, &rank);
    if (err == MPI_SUCCESS)
        err = MPI_Barrier(comm);
    fs_status st = err == MPI_SUCCESS
                       ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "MPI_Barrier failed: %s",
                                              fs_mpi_strerror(err));
    if (st == FS_OK && rank == 0 && (st = commit(arg)) == FS_OK)
        fs_signals_pause_point("renamed");
    st = fs_error_agree(comm, st);
    fs_signals_release(st == FS_OK);
    return st;
}
