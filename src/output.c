/* output: see output.h. */
#include "config.h"

#include "output.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "atomic.h"

/* The same path, by name (the file may not exist yet). */
static int same_path(const char *a, const char *b)
{
    char *ra = realpath(a, NULL), *rb = realpath(b, NULL);
    int same = ra && rb && strcmp(ra, rb) == 0;
    free(ra);
    free(rb);
    if (same)
        return 1;
    /* Not both existing: compare the directories and the names. */
    char *da = strdup(a), *db = strdup(b);
    const char *na = strrchr(a, '/') ? strrchr(a, '/') + 1 : a;
    const char *nb = strrchr(b, '/') ? strrchr(b, '/') + 1 : b;
    if (da && db) {
        char *sa = strrchr(da, '/'), *sb = strrchr(db, '/');
        if (sa)
            *sa = '\0';
        if (sb)
            *sb = '\0';
        char *rda = realpath(sa ? (da[0] ? da : "/") : ".", NULL);
        char *rdb = realpath(sb ? (db[0] ? db : "/") : ".", NULL);
        same = rda && rdb && strcmp(rda, rdb) == 0 && strcmp(na, nb) == 0;
        free(rda);
        free(rdb);
    }
    free(da);
    free(db);
    return same;
}

fs_status fs_output_begin(MPI_Comm comm, const fs_options *o, const char *input_dataset,
                          fs_output *out)
{
    memset(out, 0, sizeof *out);
    out->comm = comm;
    out->opts = o;
    out->so.file = -1;
    if (MPI_Comm_rank(comm, &out->rank) != MPI_SUCCESS)
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed"));
    out->dataset = o->output_dataset ? o->output_dataset : input_dataset;
    if (o->report_file) {
        /* Every rank judges the same names the same way: rank 0 speaks. */
        fs_status st = FS_OK;
        if (same_path(o->report_file, o->output_file) || same_path(o->report_file, o->input_file))
            st = fs_error_set(FS_ERR_USAGE, "--report=%s: is the %s file", o->report_file,
                              same_path(o->report_file, o->output_file) ? "output" : "input");
        if ((st = fs_error_agree(comm, out->rank == 0 ? st : FS_OK)) != FS_OK)
            return st;
    }
    fs_status st = fs_atomic_begin(comm, o->output_file, o->input_file, o->force, &out->tmp_path);
    /* A report is a log: it replaces an earlier one without --force. Its
     * temporary exists from now on, so an unwritable report path fails the
     * run before any work. */
    if (st == FS_OK && o->report_file)
        st = fs_atomic_begin(comm, o->report_file, o->input_file, 1, &out->report_tmp);
    if (st == FS_OK && o->shard_output)
        st = fs_shard_output_begin(comm, o->output_file, &out->so);
    return st;
}

/* Chunks of about 1 MiB: the output's shape with the longest axis halved
 * until a chunk fits. */
static void default_chunks(const fs_transform *t, fs_h5_storage *sg)
{
    double eb = (double)fs_dtype_bytes(t->out_type);
    memcpy(sg->chunk, t->out_shape, sizeof sg->chunk);
    for (;;) {
        double bytes = eb;
        int longest = 0;
        for (int k = 0; k < t->out_ndim; k++) {
            bytes *= (double)sg->chunk[k];
            if (sg->chunk[k] > sg->chunk[longest])
                longest = k;
        }
        if (bytes <= 1048576.0 || sg->chunk[longest] == 1)
            return;
        sg->chunk[longest] = (sg->chunk[longest] + 1) / 2;
    }
}

/* --chunks and --deflate: the output's storage. */
static fs_status choose_storage(const fs_options *o, const fs_transform *t, fs_h5_storage *sg)
{
    memset(sg, 0, sizeof *sg);
    if (!o->chunks_ndim && !o->deflate)
        return FS_OK;
    int nd = t->out_ndim;
    if (o->chunks_ndim) {
        if (o->chunks_ndim != nd)
            return fs_error_set(FS_ERR_USAGE, "--chunks: %d lengths for a %d-D output", o->chunks_ndim, nd);
        double bytes = (double)fs_dtype_bytes(t->out_type);
        for (int k = 0; k < nd; k++)
            bytes *= (double)(o->chunks[k] < t->out_shape[k] ? o->chunks[k] : t->out_shape[k]);
        if (bytes >= 4294967296.0)
            return fs_error_set(FS_ERR_USAGE, "--chunks: a chunk of %.0f bytes; HDF5 allows less "
                                "than 4 GiB", bytes);
        memcpy(sg->chunk, o->chunks, sizeof sg->chunk);
    } else {
        default_chunks(t, sg);
    }
    sg->chunk_ndim = nd;
    sg->deflate = o->deflate;
    return FS_OK;
}

/* Rank 0, before anything is written: a write that fails part way through
 * a collective call can leave the other ranks waiting in it for ever, so
 * free space and the file size limit are checked first. Compressed output
 * is counted uncompressed: FFT output hardly compresses. */
static fs_status check_space(const fs_output *out, const fs_transform *t)
{
    double eb = (double)fs_dtype_bytes(t->out_type);
    double need = eb, largest_file;
    for (int k = 0; k < t->out_ndim; k++)
        need *= (double)t->out_shape[k];
    largest_file = need;
    if (out->opts->shard_output) {
        largest_file = 0;
        for (int64_t i = 0; i < out->so.sources.n; i++)
            if ((double)fs_box_elems(&out->so.sources.boxes[i]) * eb > largest_file)
                largest_file = (double)fs_box_elems(&out->so.sources.boxes[i]) * eb;
    }
    need += 65536; /* HDF5's metadata */
    largest_file += 65536;
    const char *path = out->opts->output_file;
    char *copy = strdup(path);
    const char *dir = copy ? dirname(copy) : ".";
    struct statvfs vfs;
    struct rlimit lim;
    fs_status st = FS_OK;
    if (statvfs(dir, &vfs) == 0 && (double)vfs.f_bavail * (double)vfs.f_frsize < need)
        st = fs_error_set(FS_ERR_RUNTIME, "%s: the result needs %.1f MiB but %s has %.1f MiB free "
                          "(disk full)", path, need / 1048576.0, dir,
                          (double)vfs.f_bavail * (double)vfs.f_frsize / 1048576.0);
    else if (getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
             (double)lim.rlim_cur < largest_file)
        st = fs_error_set(FS_ERR_RUNTIME, "%s: the result needs files of %.1f MiB but the file size "
                          "limit (ulimit -f) is %.1f MiB", path, largest_file / 1048576.0,
                          (double)lim.rlim_cur / 1048576.0);
    free(copy);
    return st;
}

fs_status fs_output_plan(fs_output *out, const fs_transform *t)
{
    const fs_options *o = out->opts;
    /* Every rank decides alike: rank 0 speaks. */
    fs_status st = choose_storage(o, t, &out->storage);
    if (st == FS_OK && o->shard_output)
        st = fs_shard_output_plan(out->comm, t, o->shard_output, o->output_file, &out->so);
    if (st == FS_OK && out->rank == 0)
        st = check_space(out, t);
    return fs_error_agree(out->comm,
                          out->rank == 0 || fs_error_status() == FS_ERR_RUNTIME ? st : FS_OK);
}

fs_status fs_output_create(fs_output *out, const fs_transform *t)
{
    fs_status st = FS_OK;
    if (!out->opts->shard_output)
        st = fs_h5_output_new(out->comm, out->tmp_path, out->dataset, t->out_ndim, t->out_shape,
                              t->out_type, &out->storage, &out->h5);
    else if (out->so.file >= 0) /* else this rank owns nothing of the output */
        st = fs_h5_output_new(out->so.comm, out->so.path, out->dataset, t->out_ndim,
                              out->so.box.count, t->out_type, &out->storage, &out->h5);
    if (out->h5)
        fs_h5_output_set_name(out->h5, out->opts->output_file);
    return st;
}

/* The attributes of an output dataset (collective over its file's ranks). */
static fs_status write_attributes(const fs_output *out, const fs_transform *t, fs_h5_output *h5)
{
    const fs_options *o = out->opts;
    const fs_output_attrs *a = &out->attrs;
    char input[2 * FS_PATH_MAX + 2];
    snprintf(input, sizeof input, "%s:%s", a->input_file, a->input_dataset);
    int64_t axes[FS_MAX_DIMS], ranks = a->nranks, last_size = 0;
    int naxes = 0;
    for (int k = 0; k < t->in_ndim; k++)
        if (t->transform_axis[k])
            axes[naxes++] = k;
    /* The real length along the halved axis (the last transformed one for
     * c2c), which an inverse --real run needs. */
    if (t->real_axis >= 0)
        last_size = t->real_len;
    else if (naxes)
        last_size = t->in_shape[axes[naxes - 1]];
    struct { const char *name, *value; } strings[] = {
        {"fftshard_version", PACKAGE_VERSION},
        {"transform", fs_kind_name(t->kind)},
        {"direction", o->inverse ? "inverse" : "forward"},
        {"norm", fs_norm_name(o->norm)},
        {"input", input},
        {"transpose", a->strategy},
        {"precision", fs_precision_name(t->prec)},
    };
    fs_status st = FS_OK;
    for (size_t i = 0; i < sizeof strings / sizeof strings[0] && st == FS_OK; i++)
        st = fs_h5_output_attr_string(h5, strings[i].name, strings[i].value);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(h5, "axes", naxes, axes);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(h5, "input_shape", t->in_ndim, t->in_shape);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(h5, "last_size", -1, &last_size);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(h5, "ranks", -1, &ranks);
    return st;
}

fs_status fs_output_write(fs_output *out, const fs_transform *t, const fs_box *last,
                          const void *data, fs_progress *progress)
{
    fs_io_map m = fs_transform_write_map(t, last);
    fs_progress_begin(progress, "write",
                      (double)fs_box_elems(&m.file_box) * (double)fs_complex_bytes(t->prec), "B");
    fs_status st = FS_OK;
    if (out->opts->shard_output) {
        /* The file holds the group's box: positions relative to its start. */
        for (int k = 0; k < m.file_box.ndim && !t->fold; k++)
            m.file_box.start[k] -= out->so.box.start[k];
    }
    if (out->h5) {
        st = fs_h5_output_write(out->h5, &m, data, fs_progress_callback, progress);
        if (st == FS_OK)
            st = write_attributes(out, t, out->h5);
        if (st == FS_OK && out->opts->shard_output)
            st = fs_h5_output_attr_int64s(out->h5, "offset", t->out_ndim, out->so.box.start);
    }
    fs_progress_end(progress);
    return st;
}

fs_status fs_output_close(fs_output *out)
{
    return fs_h5_output_close(&out->h5);
}

typedef struct commit_args {
    fs_output *out;
    const fs_transform *t;
} commit_args;

/* Rank 0, sharded output: the master, then everything into place. */
static fs_status commit_shards(fs_output *out, const fs_transform *t)
{
    fs_h5_output *master = NULL;
    fs_status st = fs_h5_output_new_virtual(out->tmp_path, out->dataset, t->out_ndim, t->out_shape,
                                            t->out_type, &out->so.sources, &master);
    if (st == FS_OK)
        st = write_attributes(out, t, master);
    if (st == FS_OK) {
        int64_t n = out->so.nfiles;
        st = fs_h5_output_attr_int64s(master, "shards", -1, &n);
    }
    fs_status closed = fs_h5_output_close(&master);
    st = st != FS_OK ? st : closed;
    if (st != FS_OK)
        return st;
    return fs_shard_output_commit(&out->so, out->tmp_path, out->opts->output_file, out->dataset,
                                  out->opts->force);
}

/* Rank 0 (fs_atomic_commit_collective): the result into place. */
static fs_status commit_on_root(void *arg)
{
    commit_args *c = arg;
    if (c->out->opts->shard_output)
        return commit_shards(c->out, c->t);
    return fs_atomic_place(c->out->tmp_path, c->out->opts->output_file, c->out->opts->force);
}

fs_status fs_output_commit(fs_output *out, const fs_transform *t)
{
    commit_args c = {out, t};
    return fs_atomic_commit_collective(out->comm, commit_on_root, &c);
}

void fs_output_abandon(fs_output *out, fs_status st)
{
    /* The ranks' HDF5 states now differ, and closing the file would wait
     * forever in a collective call that some rank has left. */
    if (out->so.path)
        fs_atomic_abort(out->so.path);
    if (out->rank == 0) {
        if (out->tmp_path)
            fs_atomic_abort(out->tmp_path);
        if (out->report_tmp)
            fs_atomic_abort(out->report_tmp);
    }
    MPI_Barrier(out->comm);
    if (out->rank == 0 && out->so.dir_tmp)
        fs_atomic_remove_tree(out->so.dir_tmp);
    fflush(stdout);
    fflush(stderr);
    /* MPI_Abort gives the job the status (MPICH adds one line saying so);
     * ranks that merely exited would be reported as killed. */
    if (out->rank == 0)
        MPI_Abort(MPI_COMM_WORLD, (int)st);
    for (;;)
        pause();
}

void fs_output_finish(fs_output *out, fs_status st)
{
    fs_h5_output_close(&out->h5);
    if (st != FS_OK && out->tmp_path)
        fs_atomic_abort(out->tmp_path);
    if (st != FS_OK && out->opts && out->opts->shard_output && out->so.dir_tmp)
        fs_shard_output_abort(out->comm, &out->so);
    fs_shard_output_free(&out->so);
    if (out->report_tmp)
        fs_atomic_abort(out->report_tmp); /* gone already when the report was written */
    free(out->tmp_path);
    free(out->report_tmp);
    out->tmp_path = out->report_tmp = NULL;
}
