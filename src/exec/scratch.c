/* SPDX-License-Identifier: GPL-3.0-or-later */
/* scratch: see scratch.h. */
#include "config.h"

#include "exec/scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/atomic.h"
#include "core/collective.h"

typedef struct create_args {
    const char *final_path;   /* the name the temporaries are made for */
    int n;
    char **paths;
} create_args;

/* Rank 0: the temporaries, each registered, open and locked. */
static fs_status create_on_root(void *arg)
{
    create_args *a = arg;
    fs_status st = FS_OK;
    for (int i = 0; i < a->n && st == FS_OK; i++)
        st = fs_atomic_create(a->final_path, &a->paths[i]);
    return st;
}

/* dir/NAME, NAME the last component of output_file; malloc'ed (NULL: out
 * of memory). */
static char *final_path_in(const char *output_file, const char *dir)
{
    if (!dir)
        return strdup(output_file);
    char *odir = NULL, *base = NULL, *path = NULL;
    if (fs_atomic_split_path(output_file, &odir, &base) == 0) {
        size_t n = strlen(dir) + strlen(base) + 2;
        if ((path = malloc(n)))
            snprintf(path, n, "%s/%s", dir, base);
    }
    free(odir);
    free(base);
    return path;
}

fs_status fs_scratch_begin(MPI_Comm comm, const char *output_file, const char *dir, int n,
                           fs_scratch *s)
{
    memset(s, 0, sizeof *s);
    s->final = final_path_in(output_file, dir);
    char *base = NULL;
    int split = s->final ? fs_atomic_split_path(s->final, &s->dir, &base) : -1;
    free(base);
    create_args a = {s->final, n, s->path};
    fs_status st = fs_error_agree(comm, split != 0 ? fs_error_set(FS_ERR_RUNTIME, "out of memory")
                                        : n > FS_SCRATCH_FILES
                                            ? fs_error_set(FS_ERR_RUNTIME, "out of core: %d "
                                                           "scratch files, more than %d", n,
                                                           FS_SCRATCH_FILES)
                                            : FS_OK);
    if (st == FS_OK && n)
        st = fs_root_decides(comm, create_on_root, &a);
    s->n = n;
    for (int i = 0; i < n && st == FS_OK; i++) {
        st = fs_error_agree(comm, fs_bcast_string(comm, 0, &s->path[i]));
        if (st == FS_OK)
            fs_atomic_register(s->path[i]);
    }
    return st;
}

/* Rank 0: each file first .. first + n - 1 `bytes` long, the blocks
 * allocated where the file system can (ext4, XFS); elsewhere a sparse
 * file. */
static fs_status size_on_root(const fs_scratch *s, int first, int n, int64_t bytes)
{
    for (int i = first; i < first + n && i < s->n; i++) {
        int fd = fs_atomic_fd(s->path[i]);
        if (fd < 0)
            return fs_error_set(FS_ERR_RUNTIME, "%s: the scratch file is not open", s->path[i]);
        if (ftruncate(fd, 0) != 0 || ftruncate(fd, (off_t)bytes) != 0)
            return fs_error_set(FS_ERR_RUNTIME, "%s: cannot size the scratch file: %s",
                                s->path[i], strerror(errno));
        if (bytes > 0 && fallocate(fd, 0, 0, (off_t)bytes) != 0 && errno != EOPNOTSUPP &&
            errno != ENOSYS)
            return fs_error_set(FS_ERR_RUNTIME, "%s: cannot take %.1f MiB for the scratch file: "
                                "%s (disk full)", s->path[i], (double)bytes / 1048576.0,
                                strerror(errno));
    }
    return FS_OK;
}

fs_status fs_scratch_size(MPI_Comm comm, fs_scratch *s, int first, int n, int64_t bytes)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    fs_status st = rank == 0 ? size_on_root(s, first, n, bytes) : FS_OK;
    return fs_error_agree(comm, st);
}

void fs_scratch_end(fs_scratch *s, int rank)
{
    for (int i = 0; i < s->n; i++) {
        if (s->path[i] && rank == 0)
            fs_atomic_abort(s->path[i]);
        else if (s->path[i])
            fs_atomic_forget(s->path[i]);
        free(s->path[i]);
        s->path[i] = NULL;
    }
    free(s->final);
    free(s->dir);
    s->final = s->dir = NULL;
    s->n = 0;
}

fs_status fs_tiles_new(const fs_transform *vt, int s, size_t elem_bytes, fs_tiles *t)
{
    int P2 = vt->grid[1], V = vt->grid[0] * vt->grid[1];
    t->n = V;
    t->box = malloc((size_t)V * sizeof *t->box);
    t->offset = malloc((size_t)V * sizeof *t->offset);
    if (!t->box || !t->offset) {
        fs_tiles_free(t);
        return fs_error_set(FS_ERR_RUNTIME, "out of memory for the layout of %d blocks", V);
    }
    int64_t at = 0;
    for (int w = 0; w < V; w++) {
        t->box[w] = fs_transform_box(vt, s, w / P2, w % P2);
        t->offset[w] = at;
        at += fs_box_elems(&t->box[w]) * (int64_t)elem_bytes;
    }
    return FS_OK;
}

void fs_tiles_free(fs_tiles *t)
{
    free(t->box);
    free(t->offset);
    t->box = NULL;
    t->offset = NULL;
    t->n = 0;
}
