/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shardout: see shardout.h. */
#include "config.h"

#include "output/shardout.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/collective.h"
#include "core/atomic.h"
#include "core/signals.h"

#define SHARD_DIR_TAG ".shards-"

/* Room kept after STEM in a shard's name: ".NNNN.h5" with up to 10 digits. */
#define SHARD_FILE_RESERVE (1 + 10 + 3)

/* The name the set's directory gets once complete, BASE.shards-XXXXXX
 * (XXXXXX: its temporary's), short enough for NAME_MAX (malloc'ed). */
static char *set_dir_name(const char *base, const char *dir_tmp)
{
    char *b = fs_atomic_short_name(base, sizeof SHARD_DIR_TAG - 1 + 6), *name = NULL;
    if (b && asprintf(&name, "%s" SHARD_DIR_TAG "%s", b, dir_tmp + strlen(dir_tmp) - 6) < 0)
        name = NULL;
    free(b);
    return name;
}

/* The marker's text for the set directory `name`. */
static char *marker_text(const char *name)
{
    char *text = NULL;
    if (asprintf(&text, "%s%s\n", FS_SHARD_MARKER_TEXT, name) < 0)
        return NULL;
    return text;
}

/* Rank 0: the marker in the new directory (open as dfd), naming it. */
static fs_status write_marker(int dfd, const char *dir_tmp, const char *name)
{
    char *text = marker_text(name);
    if (!text)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    mode_t mask = umask(0);
    umask(mask);
    errno = EBADF; /* when the directory is not open here */
    int fd = dfd >= 0 ? openat(dfd, FS_SHARD_MARKER, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
                                                      O_CLOEXEC, 0666 & ~mask) : -1;
    size_t len = strlen(text);
    int ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;
    int e = errno;
    if (fd >= 0 && close(fd) != 0 && ok) {
        ok = 0;
        e = errno;
    }
    free(text);
    if (!ok)
        return fs_error_set(e == ENOSPC || e == EDQUOT ? FS_ERR_RUNTIME : FS_ERR_OUTPUT,
                            "%s/" FS_SHARD_MARKER ": cannot write the shard set's marker: %s", dir_tmp,
                            strerror(e));
    return FS_OK;
}

typedef struct begin_args {
    const char *output_file;
    fs_shard_output *so;
} begin_args;

/* Rank 0: the temporary directory beside the output, with its marker. It
 * stays 0700 until the commit, so nobody else can put a link in it. */
static fs_status make_dir_on_root(void *arg)
{
    begin_args *a = arg;
    fs_shard_output *so = a->so;
    char *dir = NULL, *base = NULL, *name = NULL;
    fs_status st = fs_atomic_create_dir(a->output_file, &so->dir_tmp);
    if (st == FS_OK && (fs_atomic_split_path(a->output_file, &dir, &base) != 0 ||
                        !(name = set_dir_name(base, so->dir_tmp))))
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
    if (st == FS_OK)
        st = write_marker(fs_atomic_fd(so->dir_tmp), so->dir_tmp, name);
    if (st != FS_OK && so->dir_tmp) {
        fs_atomic_remove_tree(so->dir_tmp);
        fs_atomic_forget(so->dir_tmp);
        free(so->dir_tmp);
        so->dir_tmp = NULL;
    }
    free(name);
    free(dir);
    free(base);
    return st;
}

fs_status fs_shard_output_begin(MPI_Comm comm, const char *output_file, fs_shard_output *so)
{
    memset(so, 0, sizeof *so);
    so->file = -1;
    so->comm = MPI_COMM_NULL;
    begin_args a = {output_file, so};
    fs_status st = fs_root_decides(comm, make_dir_on_root, &a);
    if (st == FS_OK)
        st = fs_bcast_string(comm, 0, &so->dir_tmp);
    if (st == FS_OK) {
        fs_atomic_register_dir(so->dir_tmp);
    } else if (so->dir_tmp) {
        /* Rank 0 made it but the others do not know it: nothing to abort later. */
        fs_atomic_remove_tree(so->dir_tmp);
        fs_atomic_forget(so->dir_tmp);
        free(so->dir_tmp);
        so->dir_tmp = NULL;
    }
    return st;
}

/* The ranks [first, first + count) of group g of n. */
static fs_status group_ranks(const fs_transform *t, int P, int n, int g, int *first, int *count)
{
    int P1 = t->grid[0], P2 = t->grid[1];
    int64_t c, o;
    if (P2 == 1) {
        fs_split_block(P, n, g, &c, &o);
        *first = (int)o;
        *count = (int)c;
    } else if (n <= P1) {
        fs_split_block(P1, n, g, &c, &o);  /* whole rows */
        *first = (int)o * P2;
        *count = (int)c * P2;
    } else {
        int k = n / P1;                    /* every row in k parts */
        fs_split_block(P2, k, g % k, &c, &o);
        *first = (g / k) * P2 + (int)o;
        *count = (int)c;
    }
    return FS_OK;
}

/* The box of the group of ranks first .. first + count - 1: the union of
 * its members' output boxes, from the same arithmetic as the layout. */
static fs_status group_box(const fs_transform *t, int first, int count, fs_box *out)
{
    int P2 = t->grid[1], s = t->nstages - 1;
    fs_box u;
    memset(&u, 0, sizeof u);
    u.ndim = t->out_ndim;
    int64_t volume = 0;
    int have = 0;
    for (int q = first; q < first + count; q++) {
        fs_box b = fs_transform_box(t, s, q / P2, q % P2);
        if (fs_box_elems(&b) == 0)
            continue;
        fs_box f = t->fold ? fs_box_full(t->out_ndim, t->out_shape)
                           : fs_transform_write_map(t, &b).file_box;
        volume += fs_box_elems(&f);
        for (int k = 0; k < u.ndim; k++) {
            int64_t lo = have && u.start[k] < f.start[k] ? u.start[k] : f.start[k];
            int64_t hi = have && u.start[k] + u.count[k] > f.start[k] + f.count[k]
                             ? u.start[k] + u.count[k] : f.start[k] + f.count[k];
            u.start[k] = lo;
            u.count[k] = hi - lo;
        }
        have = 1;
        if (t->fold)
            break;
    }
    if (volume != fs_box_elems(&u) && !t->fold)
        return fs_error_set(FS_ERR_RUNTIME, "--shard-output: ranks %d to %d do not hold one box",
                            first, first + count - 1);
    *out = u;
    return FS_OK;
}

/* so->dir_final, and (out, malloc'ed) the set directory's name relative
 * to OUTPUT's directory and the files' STEM (OUTPUT's name without .h5),
 * each short enough for NAME_MAX. */
static fs_status set_names(const char *output_file, fs_shard_output *so, char **final_rel,
                           char **stem)
{
    char *dir = NULL, *base = NULL;
    *final_rel = *stem = NULL;
    if (!so->dir_tmp)
        return fs_error_set(FS_ERR_RUNTIME, "--shard-output: no directory for the shards");
    fs_status st = FS_OK;
    if (fs_atomic_split_path(output_file, &dir, &base) != 0 || !(*final_rel = set_dir_name(base, so->dir_tmp)) ||
        asprintf(&so->dir_final, "%s/%s", dir, *final_rel) < 0) {
        so->dir_final = NULL;
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    if (st == FS_OK) {
        size_t l = strlen(base);
        if (l > 3 && strcmp(base + l - 3, ".h5") == 0)
            base[l - 3] = '\0';
        else if (l > 5 && strcmp(base + l - 5, ".hdf5") == 0)
            base[l - 5] = '\0';
        if (!(*stem = fs_atomic_short_name(base, SHARD_FILE_RESERVE)))
            st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    free(dir);
    free(base);
    return st;
}

fs_status fs_shard_output_plan(MPI_Comm comm, const fs_transform *t, int requested,
                               const char *output_file, fs_shard_output *so)
{
    int rank, P;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &P) != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank or MPI_Comm_size failed");
    int P1 = t->grid[0], P2 = t->grid[1];
    int n = requested > 0 ? requested : P;
    if (t->fold) {
        /* A 1-D transform's output positions interleave over the ranks. */
        if (requested > 1)
            return fs_error_set(FS_ERR_USAGE, "--shard-output=%d: a 1-D transform over several ranks "
                                "writes its output interleaved; it can only be one file", requested);
        n = 1;
    }
    if (n > P)
        return fs_error_set(FS_ERR_USAGE, "--shard-output=%d: more files than the %d ranks", n, P);
    if (P2 > 1 && n > P1 && (n % P1 != 0 || n / P1 > P2))
        return fs_error_set(FS_ERR_USAGE, "--shard-output=%d: with the %dx%d process grid the files "
                            "take whole grid rows (at most %d files) or split every row alike (a "
                            "multiple of %d, up to %d)", n, P1, P2, P1, P1, P);

    /* Every rank computes every group's box. */
    fs_box *boxes = calloc((size_t)n, sizeof *boxes);
    if (!boxes)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    int my_group = -1;
    for (int g = 0; g < n; g++) {
        int first, count;
        group_ranks(t, P, n, g, &first, &count);
        if (rank >= first && rank < first + count)
            my_group = g;
        if (group_box(t, first, count, &boxes[g]) != FS_OK) {
            free(boxes);
            return fs_error_status();
        }
    }
    /* Files are numbered over the groups that own data. */
    int nfiles = 0, mine = -1;
    for (int g = 0; g < n; g++) {
        if (fs_box_elems(&boxes[g]) == 0)
            continue;
        if (g == my_group) {
            mine = nfiles;
            so->box = boxes[g];
        }
        boxes[nfiles++] = boxes[g];
    }
    so->nfiles = nfiles;
    so->file = mine;
    int err = MPI_Comm_split(comm, mine >= 0 ? mine : MPI_UNDEFINED, rank, &so->comm);
    if (err != MPI_SUCCESS) {
        so->comm = MPI_COMM_NULL;
        free(boxes);
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_split failed: %s", fs_mpi_strerror(err));
    }

    /* Names: DIR/.BASE.fftshard-tmp-XXXXXX/STEM.NNNN.h5 while written,
     * BASE.shards-XXXXXX/STEM.NNNN.h5 from OUTPUT's directory afterwards. */
    char *final_rel = NULL, *stem = NULL;
    fs_status st = set_names(output_file, so, &final_rel, &stem);
    int width = 4;
    for (int v = nfiles - 1; v >= 10000; v /= 10)
        width++;
    if (st == FS_OK && mine >= 0 && asprintf(&so->path, "%s/%s.%0*d.h5", so->dir_tmp, stem, width, mine) < 0)
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
    if (st == FS_OK && mine >= 0)
        fs_atomic_register(so->path);
    if (st == FS_OK && rank == 0) {
        so->sources.files = calloc((size_t)nfiles + 1, sizeof *so->sources.files);
        so->sources.boxes = boxes;
        boxes = NULL;
        if (!so->sources.files)
            st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
        for (int i = 0; i < nfiles && st == FS_OK; i++) {
            if (asprintf(&so->sources.files[i], "%s/%s.%0*d.h5", final_rel, stem, width, i) < 0)
                st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
            else
                so->sources.n++;
        }
    }
    free(boxes);
    free(final_rel);
    free(stem);
    return st;
}

/* The sources of the virtual dataset `dataset` of the existing master
 * output_file that lie in a set directory of fftshard's layout
 * (BASE.shards-XXXXXX/FILE, named from OUTPUT's directory). */
static void old_sources(const char *output_file, const char *dataset, char ***names, int64_t *n)
{
    char **all = NULL, *dir = NULL, *base = NULL, *prefix = NULL;
    int64_t count = 0;
    *names = NULL;
    *n = 0;
    struct stat st;
    if (stat(output_file, &st) != 0 || fs_h5_virtual_files(output_file, dataset, &all, &count) != FS_OK ||
        fs_atomic_split_path(output_file, &dir, &base) != 0) {
        fs_error_clear();
        goto done;
    }
    char *b = fs_atomic_short_name(base, sizeof SHARD_DIR_TAG - 1 + 6);
    if (!b || asprintf(&prefix, "%s" SHARD_DIR_TAG, b) < 0)
        prefix = NULL;
    free(b);
    *names = prefix ? calloc((size_t)count + 1, sizeof **names) : NULL;
    for (int64_t i = 0; *names && i < count; i++) {
        const char *name = all[i], *slash = name ? strchr(name, '/') : NULL;
        if (slash && !strchr(slash + 1, '/') && slash[1] && strncmp(name, prefix, strlen(prefix)) == 0)
            (*names)[(*n)++] = all[i];
        else
            free(all[i]);
        all[i] = NULL;
    }
done:
    fs_strings_free(all, count);
    free(prefix);
    free(dir);
    free(base);
}

void fs_shard_output_old_files(const char *output_file, const char *dataset, char ***paths,
                               int64_t *n)
{
    char **names = NULL, *dir = NULL, *base = NULL;
    int64_t count = 0;
    *paths = NULL;
    *n = 0;
    old_sources(output_file, dataset, &names, &count);
    if (count > 0 && fs_atomic_split_path(output_file, &dir, &base) == 0)
        *paths = calloc((size_t)count, sizeof **paths);
    for (int64_t i = 0; *paths && i < count; i++)
        if (asprintf(&(*paths)[*n], "%s/%s", dir, names[i]) >= 0)
            (*n)++;
    fs_strings_free(names, count);
    free(dir);
    free(base);
}

/* Whether the directory open as fd holds fftshard's marker naming it `name`. */
static int has_marker(int fd, const char *name)
{
    char *want = marker_text(name), buf[NAME_MAX + 64];
    int mfd = openat(fd, FS_SHARD_MARKER, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat st;
    ssize_t got = -1;
    if (mfd >= 0 && fstat(mfd, &st) == 0 && S_ISREG(st.st_mode))
        got = read(mfd, buf, sizeof buf - 1);
    if (mfd >= 0)
        close(mfd);
    int ours = want && got >= 0 && (size_t)got == strlen(want) && memcmp(buf, want, (size_t)got) == 0;
    free(want);
    return ours;
}

/* Whether the directory open as fd holds nothing but the marker. */
static int only_marker_left(int fd)
{
    int copy = dup(fd);
    DIR *d = copy >= 0 ? fdopendir(copy) : NULL;
    if (!d) {
        if (copy >= 0)
            close(copy);
        return 0;
    }
    rewinddir(d);
    int others = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        others += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
                  strcmp(e->d_name, FS_SHARD_MARKER) != 0;
    closedir(d);
    return others == 0;
}

/* Remove the set directory `set` (set_len bytes of names[i]) in dfd, shown
 * as dir/set, that the replaced master read: only when reached without a
 * symbolic link and holding fftshard's marker for that name, and in it
 * only the regular files the master named, each by unlinkat on the
 * directory's descriptor; then, if nothing else is left, the marker and
 * the directory. Otherwise it is left with a warning. */
static void remove_old_set(int dfd, const char *dir, const char *set, size_t set_len, char **names,
                           int64_t n)
{
    int fd = openat(dfd, set, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || !has_marker(fd, set)) {
        fs_note("warning: %s/%s: not removed: not a shard directory written by fftshard (a "
                "symbolic link, or no " FS_SHARD_MARKER " naming it)", dir, set);
        if (fd >= 0)
            close(fd);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        struct stat st;
        const char *file = names[i] + set_len + 1;
        if (strncmp(names[i], set, set_len) == 0 && names[i][set_len] == '/' &&
            fstatat(fd, file, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
            unlinkat(fd, file, 0);
    }
    struct stat was, now;
    if (!only_marker_left(fd) || unlinkat(fd, FS_SHARD_MARKER, 0) != 0 || fstat(fd, &was) != 0 ||
        fstatat(dfd, set, &now, AT_SYMLINK_NOFOLLOW) != 0 || was.st_ino != now.st_ino ||
        was.st_dev != now.st_dev || unlinkat(dfd, set, AT_REMOVEDIR) != 0)
        fs_note("warning: %s/%s: not removed: it holds files the replaced master did not name",
                dir, set);
    close(fd);
}

/* The set directories of `names` (from old_sources) but `keep` (the new
 * set's name), beside output_file. */
static void remove_old_sets(const char *output_file, const char *keep, char **names, int64_t n)
{
    char *dir = NULL, *base = NULL;
    int dfd = fs_atomic_split_path(output_file, &dir, &base) == 0
                  ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    for (int64_t i = 0; dfd >= 0 && i < n; i++) {
        size_t len = (size_t)(strchr(names[i], '/') - names[i]);
        int seen = strlen(keep) == len && strncmp(keep, names[i], len) == 0;
        for (int64_t j = 0; j < i && !seen; j++)
            seen = strncmp(names[j], names[i], len + 1) == 0;
        char *set = seen ? NULL : strndup(names[i], len);
        if (set)
            remove_old_set(dfd, dir, set, len, names, n);
        free(set);
    }
    if (dfd >= 0)
        close(dfd);
    free(dir);
    free(base);
}

/* Rank 0: the new set directory into place, with the permissions a plain
 * mkdir would give, never over anything. */
static fs_status publish_dir(fs_shard_output *so)
{
    mode_t mask = umask(0);
    umask(mask);
    int fd = fs_atomic_fd(so->dir_tmp);
    if (fd < 0 || fchmod(fd, 0777 & ~mask) != 0)
        return fs_error_set(FS_ERR_RUNTIME, "%s: cannot set the shard directory's permissions: %s",
                            so->dir_tmp, fd < 0 ? "not open" : strerror(errno));
    if (fs_atomic_rename(so->dir_tmp, so->dir_final, 0) != 0)
        return fs_error_set(FS_ERR_RUNTIME, "%s: cannot rename the shard directory into place: %s",
                            so->dir_final, strerror(errno));
    return FS_OK;
}

fs_status fs_shard_output_commit(fs_shard_output *so, const char *master_tmp,
                                 const char *output_file, const char *dataset, int force)
{
    char **old = NULL;
    int64_t nold = 0;
    if (force)
        old_sources(output_file, dataset, &old, &nold);
    fs_status st = publish_dir(so);
    if (st != FS_OK) {
        fs_atomic_abort(master_tmp);
    } else {
        fs_atomic_forget(so->dir_tmp);
        if (so->path)
            fs_atomic_forget(so->path);
        fs_signals_pause_point("shards-renamed");
        st = fs_atomic_place(master_tmp, output_file, force);
        if (st != FS_OK)
            fs_atomic_remove_tree(so->dir_final);
    }
    if (st == FS_OK && nold > 0) {
        const char *slash = strrchr(so->dir_final, '/');
        remove_old_sets(output_file, slash ? slash + 1 : so->dir_final, old, nold);
    }
    fs_strings_free(old, nold);
    return st;
}

void fs_shard_output_abort(MPI_Comm comm, fs_shard_output *so)
{
    int rank = -1;
    if (so->path)
        fs_atomic_abort(so->path);
    /* Rank 0 empties the directory only once no rank writes there. */
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Barrier(comm) != MPI_SUCCESS) {
        /* The run has failed already: say what is left, which a later run
         * removes once this process is gone. */
        if (rank == 0 && so->dir_tmp)
            fs_note("warning: %s: left behind, MPI failed while the ranks stopped", so->dir_tmp);
        return;
    }
    if (rank == 0 && so->dir_tmp) {
        fs_atomic_remove_tree(so->dir_tmp);
        fs_atomic_forget(so->dir_tmp);
    }
}

void fs_shard_output_free(fs_shard_output *so)
{
    /* Nothing to report a failure to here: the handle is dropped either way. */
    if (so->comm != MPI_COMM_NULL && so->comm != 0 && MPI_Comm_free(&so->comm) != MPI_SUCCESS)
        so->comm = MPI_COMM_NULL;
    if (so->dir_tmp)
        fs_atomic_forget(so->dir_tmp);
    free(so->dir_tmp);
    free(so->dir_final);
    free(so->path);
    fs_shard_set_free(&so->sources);
    memset(so, 0, sizeof *so);
    so->comm = MPI_COMM_NULL;
}
