/* shardout: see shardout.h. */
#include "config.h"

#include "shardout.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agree.h"
#include "atomic.h"
#include "signals.h"

#define SHARD_DIR_TAG ".shards-"

/* Directory and base name of a path (malloc'ed). */
static int split_path(const char *path, char **dir, char **base)
{
    char *a = strdup(path), *b = strdup(path);
    *dir = a ? strdup(dirname(a)) : NULL;
    *base = b ? strdup(basename(b)) : NULL;
    free(a);
    free(b);
    return *dir && *base ? 0 : -1;
}

typedef struct begin_args {
    const char *output_file;
    fs_shard_output *so;
} begin_args;

/* Rank 0: the temporary directory beside the output. */
static fs_status make_dir_on_root(void *arg)
{
    begin_args *a = arg;
    fs_shard_output *so = a->so;
    char *dir = NULL, *base = NULL;
    fs_status st = FS_OK;
    if (split_path(a->output_file, &dir, &base) != 0 ||
        !(so->dir_tmp = fs_atomic_template(dir, base))) {
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
    } else if (!mkdtemp(so->dir_tmp)) {
        st = fs_error_set(FS_ERR_OUTPUT, "%s: cannot create a directory for the shards in %s: %s",
                          a->output_file, dir, strerror(errno));
        free(so->dir_tmp);
        so->dir_tmp = NULL;
    } else {
        fs_atomic_register_dir(so->dir_tmp);
        /* The permissions a plain mkdir would give. */
        mode_t mask = umask(0);
        umask(mask);
        chmod(so->dir_tmp, 0777 & ~mask);
    }
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
    char *dir = NULL, *base = NULL, *stem = NULL;
    fs_status st = split_path(output_file, &dir, &base) == 0 && (stem = strdup(base))
                       ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory");
    if (st == FS_OK) {
        size_t l = strlen(stem);
        if (l > 3 && strcmp(stem + l - 3, ".h5") == 0)
            stem[l - 3] = '\0';
        else if (l > 5 && strcmp(stem + l - 5, ".hdf5") == 0)
            stem[l - 5] = '\0';
    }
    const char *suffix = so->dir_tmp ? so->dir_tmp + strlen(so->dir_tmp) - 6 : "";
    char *final_rel = NULL;
    if (st == FS_OK && (asprintf(&final_rel, "%s" SHARD_DIR_TAG "%s", base, suffix) < 0 ||
                        asprintf(&so->dir_final, "%s/%s", dir, final_rel) < 0))
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
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
    free(dir);
    free(base);
    return st;
}

/* The shard directories (named from OUTPUT's directory) that the virtual
 * dataset `dataset` of the existing master output_file reads from. */
static void old_shard_dirs(const char *output_file, const char *dataset, char ***dirs, int64_t *n)
{
    char **names = NULL, *dir = NULL, *base = NULL;
    int64_t count = 0;
    *dirs = NULL;
    *n = 0;
    struct stat st;
    if (stat(output_file, &st) != 0 || fs_h5_virtual_files(output_file, dataset, &names, &count) != FS_OK ||
        split_path(output_file, &dir, &base) != 0) {
        fs_error_clear();
        goto done;
    }
    *dirs = calloc((size_t)count + 1, sizeof **dirs);
    for (int64_t i = 0; *dirs && i < count; i++) {
        const char *name = names[i], *slash = name ? strchr(name, '/') : NULL;
        size_t bl = strlen(base);
        /* only our own layout: BASE.shards-XXXXXX/FILE */
        if (!slash || strchr(slash + 1, '/') || strncmp(name, base, bl) != 0 ||
            strncmp(name + bl, SHARD_DIR_TAG, strlen(SHARD_DIR_TAG)) != 0)
            continue;
        char *d = NULL;
        if (asprintf(&d, "%s/%.*s", dir, (int)(slash - name), name) < 0)
            continue;
        int seen = 0;
        for (int64_t j = 0; j < *n; j++)
            seen |= strcmp((*dirs)[j], d) == 0;
        if (seen)
            free(d);
        else
            (*dirs)[(*n)++] = d;
    }
done:
    fs_strings_free(names, count);
    free(dir);
    free(base);
}

fs_status fs_shard_output_commit(fs_shard_output *so, const char *master_tmp,
                                 const char *output_file, const char *dataset)
{
    char **old = NULL;
    int64_t nold = 0;
    old_shard_dirs(output_file, dataset, &old, &nold);
    fs_status st = FS_OK;
    if (rename(so->dir_tmp, so->dir_final) != 0) {
        st = fs_error_set(FS_ERR_RUNTIME, "%s: cannot rename the shard directory into place: %s",
                          so->dir_final, strerror(errno));
        fs_atomic_abort(master_tmp);
    } else {
        fs_atomic_forget(so->dir_tmp);
        if (so->path)
            fs_atomic_forget(so->path);
        fs_signals_pause_point("shards-renamed");
        st = fs_atomic_commit(master_tmp, output_file);
        if (st != FS_OK)
            fs_atomic_remove_tree(so->dir_final);
    }
    for (int64_t i = 0; i < nold; i++)
        if (st == FS_OK && strcmp(old[i], so->dir_final) != 0)
            fs_atomic_remove_tree(old[i]);
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
