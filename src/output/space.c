/* SPDX-License-Identifier: GPL-3.0-or-later */
/* space: see space.h. */
#include "config.h"

#include "output/space.h"

#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "report/report.h"

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
fs_status fs_output_storage(const fs_output_options *o, const fs_transform *t, fs_h5_storage *sg)
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

/* What HDF5 adds to a file besides the data: the superblock, object headers
 * and attributes (a few KiB) and an index entry per chunk (about 60 bytes
 * measured). Counted generously: a disk that fills up while HDF5 writes its
 * metadata fails a collective call that the ranks cannot end together. */
#define METADATA_BYTES_PER_FILE 262144.0
#define METADATA_BYTES_PER_CHUNK 256.0

/* A file of the given shape with the output's storage: data and metadata. */
static double file_bytes(const fs_h5_storage *sg, int ndim, const int64_t *shape, double elem_bytes)
{
    double bytes = elem_bytes, chunks = 1;
    for (int k = 0; k < ndim; k++) {
        bytes *= (double)shape[k];
        if (sg->chunk_ndim && sg->chunk[k] > 0)
            chunks *= ceil((double)shape[k] / (double)sg->chunk[k]);
    }
    return bytes + METADATA_BYTES_PER_FILE + (sg->chunk_ndim ? chunks * METADATA_BYTES_PER_CHUNK : 0);
}

/* The report: the run's figures and one record per rank. */
#define REPORT_BYTES 16384.0
#define REPORT_BYTES_PER_RANK 2048.0
/* The wisdom: what the file holds now plus what this run may add. */
#define WISDOM_BYTES_ADDED 65536.0

/* The destinations: the result, the shard files, the report, the wisdom,
 * the scratch. */
#define MAX_NEEDS 5

/* One destination's place and what it will need there. */
typedef struct space_need {
    const char *path;   /* named in the message */
    char *dir;          /* malloc'ed */
    const char *what;   /* "the result" */
    double bytes;
} space_need;

/* The one OUTPUT file holding every result (n transforms), and with --add
 * what it holds now. */
static fs_status result_bytes(const fs_output *out, const fs_transform *const *ts, int n, double *bytes)
{
    *bytes = 0;
    for (int i = 0; i < n; i++) {
        fs_h5_storage sg;
        fs_status st = fs_output_storage(out->opts, ts[i], &sg);
        if (st != FS_OK)
            return st;
        *bytes += file_bytes(&sg, ts[i]->out_ndim, ts[i]->out_shape,
                             (double)fs_dtype_bytes(ts[i]->out_type));
    }
    struct stat st;
    if (out->opts->add && stat(out->opts->file, &st) == 0)
        *bytes += (double)st.st_size;
    return FS_OK;
}

/* The destinations of this run. *n (out) entries; dirs freed by the caller. */
static fs_status list_needs(const fs_output *out, const fs_transform *const *ts, int nts,
                            space_need *needs, int *n, double *largest_file)
{
    const fs_output_options *o = out->opts;
    const fs_transform *t = ts[0];
    double eb = (double)fs_dtype_bytes(t->out_type);
    int nranks = 1;
    if (MPI_Comm_size(out->comm, &nranks) != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_size failed");
    space_need all[MAX_NEEDS] = {{o->file, NULL, "the result", 0}};
    int count = 1;
    *largest_file = 0;
    if (o->shard_output) {
        all[0].bytes = METADATA_BYTES_PER_FILE; /* the master */
        all[count++] = (space_need){o->file, NULL, "the shard files", 0};
        for (int64_t i = 0; i < out->so.sources.n; i++) {
            const fs_box *b = &out->so.sources.boxes[i];
            double f = file_bytes(&out->storage, b->ndim, b->count, eb);
            all[1].bytes += f;
            *largest_file = f > *largest_file ? f : *largest_file;
        }
    } else {
        fs_status st = result_bytes(out, ts, nts, &all[0].bytes);
        if (st != FS_OK)
            return st;
        *largest_file = all[0].bytes;
    }
    if (o->report_file && !fs_report_to_stdout(o->report_file))
        all[count++] = (space_need){o->report_file, NULL, "the report",
                                    REPORT_BYTES + REPORT_BYTES_PER_RANK * nranks};
    if (o->wisdom_file) {
        struct stat st;
        double now = stat(o->wisdom_file, &st) == 0 ? (double)st.st_size : 0;
        all[count++] = (space_need){o->wisdom_file, NULL, "the wisdom", now + WISDOM_BYTES_ADDED};
    }
    if (out->scratch_path) /* the scratch files beside it, or in --scratch */
        all[count++] = (space_need){out->scratch_path, NULL, "the scratch", out->scratch_bytes};
    for (int i = 0; i < count; i++) {
        char *copy = strdup(all[i].path);
        /* The shard files go into their own directory beside OUTPUT. */
        const char *dir = copy ? dirname(copy) : NULL;
        if (i == 1 && o->shard_output && out->so.dir_tmp)
            dir = out->so.dir_tmp;
        all[i].dir = dir ? strdup(dir) : NULL;
        free(copy);
        needs[i] = all[i];
        *n = i + 1;
        if (!needs[i].dir)
            return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    return FS_OK;
}

/* bytes in MiB, or in KiB below one MiB, into buf. */
static const char *size_text(double bytes, char *buf, size_t size)
{
    if (bytes >= 1048576.0)
        snprintf(buf, size, "%.1f MiB", bytes / 1048576.0);
    else
        snprintf(buf, size, "%.0f KiB", bytes / 1024.0);
    return buf;
}

/* Every file system the destinations are on must hold all of them. */
static fs_status check_free_space(const space_need *needs, int n)
{
    dev_t dev[MAX_NEEDS];
    for (int i = 0; i < n; i++) {
        struct stat st;
        dev[i] = stat(needs[i].dir, &st) == 0 ? st.st_dev : (dev_t)-1 - (dev_t)i;
    }
    for (int i = 0; i < n; i++) {
        int first = 1;
        for (int j = 0; j < i; j++)
            first = first && dev[j] != dev[i];
        if (!first)
            continue; /* counted with an earlier one */
        double need = 0;
        char what[128] = "";
        int parts = 0;
        for (int j = i; j < n; j++) {
            if (dev[j] != dev[i])
                continue;
            need += needs[j].bytes;
            snprintf(what + strlen(what), sizeof what - strlen(what), "%s%s", parts ? " and " : "",
                     needs[j].what);
            parts++;
        }
        struct statvfs vfs;
        double free_bytes = 0;
        char need_text[32], free_text[32];
        if (statvfs(needs[i].dir, &vfs) == 0 &&
            (free_bytes = (double)vfs.f_bavail * (double)vfs.f_frsize) < need)
            return fs_error_set(FS_ERR_RUNTIME, "%s: %s need%s %s but %s has %s free (disk full)",
                                needs[i].path, what, parts > 1 ? "" : "s",
                                size_text(need, need_text, sizeof need_text), needs[i].dir,
                                size_text(free_bytes, free_text, sizeof free_text));
    }
    return FS_OK;
}

/* Rank 0, before anything is written: a write that fails part way through
 * a collective call can leave the other ranks waiting in it for ever, so
 * free space and the file size limit are checked first. Compressed output
 * is counted uncompressed: FFT output hardly compresses. */
fs_status fs_output_space_check(const fs_output *out, const fs_transform *const *ts, int nts)
{
    space_need needs[MAX_NEEDS];
    int n = 0;
    double largest_file = 0;
    struct rlimit lim;
    fs_status st = list_needs(out, ts, nts, needs, &n, &largest_file);
    if (st == FS_OK)
        st = check_free_space(needs, n);
    if (st == FS_OK && getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
        (double)lim.rlim_cur < largest_file)
        st = fs_error_set(FS_ERR_RUNTIME, "%s: the result needs files of %.1f MiB but the file size "
                          "limit (ulimit -f) is %.1f MiB", out->opts->file,
                          largest_file / 1048576.0, (double)lim.rlim_cur / 1048576.0);
    for (int i = 0; i < n; i++)
        free(needs[i].dir);
    return st;
}
