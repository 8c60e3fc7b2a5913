/* atomic: see atomic.h. */
#include "config.h"

#include "atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Registered temporaries: a fixed table so the signal handler touches only
 * memory that is never reallocated. */
#define MAX_TEMPORARIES 8
static char *temporaries[MAX_TEMPORARIES];

static void forget(const char *path)
{
    for (int i = 0; i < MAX_TEMPORARIES; i++) {
        if (temporaries[i] && strcmp(temporaries[i], path) == 0) {
            char *p = temporaries[i];
            temporaries[i] = NULL;
            free(p);
        }
    }
}

void fs_atomic_register(const char *tmp_path)
{
    for (int i = 0; i < MAX_TEMPORARIES; i++) {
        if (!temporaries[i]) {
            temporaries[i] = strdup(tmp_path);
            return;
        }
    }
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
    if (asprintf(&tmp, "%s/.%s" FS_ATOMIC_TAG "XXXXXX", dir, base) < 0) {
        tmp = NULL;
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

static void on_signal(int sig)
{
    /* Only async-signal-safe calls here: unlink, signal, raise. */
    for (int i = 0; i < MAX_TEMPORARIES; i++)
        if (temporaries[i])
            unlink(temporaries[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

void fs_atomic_install_signal_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
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

fs_status fs_atomic_begin(MPI_Comm comm, const char *final_path, const char *input_path, int force,
                          char **tmp_path)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    *tmp_path = NULL;
    fs_status st = rank == 0 ? check_and_create(final_path, input_path, force, tmp_path) : FS_OK;
    if ((st = fs_error_agree(comm, st)) != FS_OK)
        return st;
    long len = rank == 0 ? (long)strlen(*tmp_path) : 0;
    st = FS_OK;
    if (MPI_Bcast(&len, 1, MPI_LONG, 0, comm) != MPI_SUCCESS)
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Bcast failed");
    else if (rank != 0 && !(*tmp_path = calloc((size_t)len + 1, 1)))
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
    if (fs_error_agree(comm, st) != FS_OK) {
        if (rank == 0)
            fs_atomic_abort(*tmp_path);
        free(*tmp_path);
        *tmp_path = NULL;
        return FS_ERR_RUNTIME;
    }
    if (MPI_Bcast(*tmp_path, (int)len, MPI_CHAR, 0, comm) != MPI_SUCCESS)
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Bcast failed");
    fs_atomic_register(*tmp_path);
    return fs_error_agree(comm, st);
}
