/* SPDX-License-Identifier: GPL-3.0-or-later */
/* output: see output.h. */
#include "config.h"

#include "output/output.h"

#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/collective.h"
#include "core/signals.h"
#include "core/atomic.h"
#include "output/destinations.h"
#include "io/h5scales.h"
#include "report/report.h"
#include "analysis/combine.h"
#include "analysis/spectrum.h"

/* The output dataset of input i (infos: the probed inputs): the combined
 * result's on its turn (NULL: none on this turn, combine.h), else OUTPUT's
 * path when given, else the input's own. */
static const char *dataset_for(const fs_output *out, const fs_input_info *infos, int i)
{
    const fs_run_config *o = out->opts;
    if (o->combine != FS_COMBINE_NONE)
        return i == out->ninfos - 1 && out->nresults ? out->results[0] : NULL;
    return o->output_dataset ? o->output_dataset : infos[i].dataset;
}

/* Whether the dataset at `inner` would lie inside the one at `outer`. */
static int inside(const char *outer, const char *inner)
{
    size_t n = strlen(outer);
    return strncmp(outer, inner, n) == 0 && inner[n] == '/';
}

typedef struct paths_args {
    const fs_output *out;
    const fs_input_info *infos;
    int n;
    int results;      /* result_paths: how many of the paths are datasets */
    char what[2][FS_INPUT_NAME_MAX];
    char groups[3][FS_PATH_MAX]; /* the spectra's and the correlation function's */
} paths_args;

/* What OUTPUT gets: each input's result (none with --spectrum-only; the
 * combined spectra's all), then the spectra's groups. Returns how many (at
 * most n + 3 + FS_VECTOR_MAX_RESULTS). */
static int result_paths(paths_args *a, const char **paths)
{
    int n = 0;
    for (int i = 0; i < a->n && !a->out->opts->spectrum_only; i++)
        if (dataset_for(a->out, a->infos, i))
            paths[n++] = dataset_for(a->out, a->infos, i);
    for (int k = 1; k < a->out->nresults && n > 0; k++) /* the combined spectra's others */
        paths[n++] = a->out->results[k];
    a->results = n;
    for (int g = 0; g < 3 && fs_spectrum_group(a->out->opts, g, a->groups[g], sizeof a->groups[g]);
         g++)
        paths[n++] = a->groups[g];
    return n;
}

/* How a message names path i of result_paths, in a->what[slot] (0 or 1). */
static const char *result_name(paths_args *a, const char **paths, int i, int slot)
{
    char *buf = a->what[slot];
    if (i < a->results)
        snprintf(buf, sizeof a->what[0], "%s:%s%s",
                 a->out->opts->inputs[a->out->nresults ? 0 : i].file, paths[i],
                 a->infos[a->out->nresults ? 0 : i].slice.text); /* "" unsliced */
    else
        snprintf(buf, sizeof a->what[0], "the spectrum %s", paths[i]);
    return buf;
}

/* Rank 0, --add: every result needs a place in `file` (OUTPUT, or its
 * copy) that its other contents leave free (a dataset there, or a
 * spectrum's group, only with --force, which replaces it, and never a
 * coordinate that another dataset uses), reached through no link and only
 * through groups. */
static fs_status check_add_paths(paths_args *a, const char *file)
{
    const fs_run_config *o = a->out->opts;
    const char *paths[a->n + 3 + FS_VECTOR_MAX_RESULTS];
    int n = result_paths(a, paths);
    for (int i = 0; i < n; i++) {
        const char *p = paths[i];
        fs_h5_path_state state;
        fs_status ret = fs_h5_output_path_state(file, o->output_file, p, &state);
        if (ret != FS_OK)
            return ret;
        /* What would be replaced may be a coordinate of a dataset that stays. */
        if ((state == FS_H5_PATH_DATASET || (i >= a->results && state == FS_H5_PATH_OTHER)) &&
            (ret = fs_h5_coords_in_use(file, o->output_file, p)) != FS_OK)
            return ret;
        if (i >= a->results && state == FS_H5_PATH_BLOCKED)
            return fs_error_set(FS_ERR_OUTPUT, "%s:%s: the file holds a dataset or another object "
                                "that is not a group on the way; --add writes only inside groups",
                                o->output_file, p);
        if (i >= a->results && state != FS_H5_PATH_FREE && !o->force)
            return fs_error_set(FS_ERR_OUTPUT, "%s:%s: the file holds a spectrum or another object "
                                "there; use --force to replace it", o->output_file, p);
        if (i >= a->results)
            continue; /* --force: replaced */
        if (state == FS_H5_PATH_DATASET && !o->force)
            return fs_error_set(FS_ERR_OUTPUT, "%s:%s: the dataset exists; use --force to replace "
                                "it", o->output_file, p);
        if (state == FS_H5_PATH_OTHER || state == FS_H5_PATH_BLOCKED)
            return fs_error_set(FS_ERR_OUTPUT, "%s:%s: the file holds a group or another object "
                                "there or on the way; --add writes datasets only where there is "
                                "none or a dataset", o->output_file, p);
    }
    return FS_OK;
}

/* Rank 0: every result needs a place of its own in OUTPUT, and with --add
 * one that OUTPUT leaves free (check_add_paths). */
static fs_status check_paths_on_root(void *arg)
{
    paths_args *a = arg;
    const fs_run_config *o = a->out->opts;
    const char *paths[a->n + 3 + FS_VECTOR_MAX_RESULTS];
    int n = result_paths(a, paths);
    for (int i = 0; i < n; i++) {
        const char *p = paths[i];
        for (int j = 0; j < i; j++) {
            const char *q = paths[j];
            if (strcmp(p, q) == 0 || inside(p, q) || inside(q, p))
                return fs_error_set(FS_ERR_USAGE, "%s and %s: both would be written to %s:%s; "
                                    "give each INPUT its own dataset path",
                                    result_name(a, paths, j, 0), result_name(a, paths, i, 1),
                                    o->output_file, strcmp(p, q) == 0 || inside(q, p) ? q : p);
        }
    }
    struct stat st;
    if (!o->add || stat(o->output_file, &st) != 0)
        return FS_OK; /* nothing to add to: created as without --add */
    return check_add_paths(a, o->output_file);
}

/* The attributes fftshard writes on a result (fftshard(1), FILES AND
 * CONVENTIONS; "offset" and "shards" with --shard-output). An input
 * attribute of one of these names is not copied: an input that is itself
 * a result has them all, and the result's own values hold. */
static const char *const own_attrs[] = {
    "fftshard_version", "transform", "direction", "norm", "input", "transpose", "precision",
    "axes", "real_axis", "input_shape", "last_size", "ranks", "offset", "shards",
    "operation", "box_size", "k_convention", "second_input", "input_slice",
    /* the coordinates' bookkeeping (HDF5's dimension scales, netCDF-4's):
     * the result has its own */
    "DIMENSION_LIST", "REFERENCE_LIST", "CLASS", "NAME", "_Netcdf4Dimid", "_Netcdf4Coordinates",
    NULL,
};

/* Collective: rank 0 reads each input dataset's own attributes, every
 * rank gets them. */
static fs_status take_input_attrs(fs_output *out, const fs_input_info *infos, int n,
                                  const fs_shard_set *shards)
{
    const fs_run_config *o = out->opts;
    out->input_attrs = calloc((size_t)(n > 0 ? n : 1), sizeof *out->input_attrs);
    out->input_coords = calloc((size_t)(n > 0 ? n : 1), sizeof *out->input_coords);
    fs_status st = out->input_attrs && out->input_coords
                       ? FS_OK
                       : fs_error_set(FS_ERR_RUNTIME, "out of memory");
    if ((st = fs_error_agree(out->comm, st)) != FS_OK)
        return st;
    out->n_input_attrs = n;
    int sharded = shards && shards->n;
    for (int i = 0; i < n && st == FS_OK; i++) {
        if (out->rank == 0)
            st = fs_h5_attrs_read(sharded ? shards->files[0] : o->inputs[i].file,
                                  infos[i].dataset, own_attrs, o->verbose, o->quiet,
                                  &out->input_attrs[i]);
        st = fs_error_agree(out->comm, st);
        if (st == FS_OK)
            st = fs_h5_attrs_bcast(out->comm, 0, &out->input_attrs[i]); /* agreed */
        /* The batch axes' coordinates: the whole array's, which no shard has. */
        if (st == FS_OK && !o->shard_output && !o->spectrum_only)
            st = fs_input_coords_take(out->comm, o->inputs[i].file, &infos[i], sharded,
                                      &out->input_coords[i]);
    }
    return st;
}

void fs_output_init(fs_output *out)
{
    memset(out, 0, sizeof *out);
    out->so.comm = MPI_COMM_NULL;
    out->so.file = -1;
}

fs_h5_output *fs_output_h5(const fs_output *out)
{
    return out->h5;
}

/* The input's slice as the result records it (NULL: not sliced). */
static const char *slice_text(const fs_input_info *info)
{
    return info->slice.given ? info->slice.text : NULL;
}

void fs_output_select(fs_output *out, int i, const fs_input_info *info, const char *input_file,
                      const char *strategy, int nranks)
{
    const fs_run_config *o = out->opts;
    out->dataset = dataset_for(out, out->infos, i);
    out->current = o->combine != FS_COMBINE_NONE ? 0 : i; /* whose coordinates */
    out->attrs = (fs_output_attrs){input_file, info->dataset, strategy, nranks,
                                   i < out->n_input_attrs ? &out->input_attrs[i] : NULL,
                                   NULL, 0, {0}, NULL, NULL, NULL, slice_text(info), NULL};
    if (o->combine != FS_COMBINE_NONE && out->ninfos > 0) {
        /* the combined result: the first INPUT's name and attributes, the
         * second's name beside them */
        out->attrs.input_file = o->inputs[0].file;
        out->attrs.input_dataset = out->infos[0].dataset;
        out->attrs.copied = out->n_input_attrs ? &out->input_attrs[0] : NULL;
        out->attrs.input_slice = slice_text(&out->infos[0]);
        out->attrs.operation = fs_combine_name(o->combine);
        out->dataset = out->nresults ? out->results[0] : NULL; /* what each turn goes into */
        if (out->ninfos > 1 && !fs_vector_is(o->combine)) {
            out->attrs.second_file = o->inputs[1].file;
            out->attrs.second_dataset = out->infos[1].dataset;
            out->attrs.second_slice = out->infos[1].slice.text;
        }
        if (out->ninfos > 1 && fs_vector_is(o->combine))
            out->attrs.components = out->components;
    }
}

void fs_output_select_result(fs_output *out, int k)
{
    out->result = k;
    if (k < out->nresults)
        out->dataset = out->results[k];
}

void fs_output_set_operation(fs_output *out, const char *text, int nbox, const double *box)
{
    out->attrs.operation = text;
    out->attrs.nbox = nbox < FS_LAYOUT_MAX_DIMS ? nbox : FS_LAYOUT_MAX_DIMS;
    memcpy(out->attrs.box, box, sizeof *box * (size_t)out->attrs.nbox);
}

fs_status fs_output_begin(MPI_Comm comm, const fs_run_config *o, const fs_input_info *infos, int n,
                          const fs_shard_set *shards, fs_output *out)
{
    fs_output_init(out);
    out->comm = comm;
    out->opts = o;
    out->infos = infos;
    out->ninfos = n;
    out->nresults = n > 0 ? fs_combine_results(o, infos[0].ndim) : 0;
    for (int k = 0; k < out->nresults; k++)
        fs_combine_result_path(o, infos[0].ndim, k, out->results[k], sizeof out->results[k]);
    size_t used = 0;
    for (int i = 0; i < n && i < FS_VECTOR_MAX_AXES && used < sizeof out->components; i++) {
        int w = snprintf(out->components + used, sizeof out->components - used, "%s%s:%s",
                         i ? ", " : "", o->inputs[i].file, infos[i].dataset);
        used += w > 0 ? (size_t)w : 0;
    }
    if (MPI_Comm_rank(comm, &out->rank) != MPI_SUCCESS)
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed"));
    out->dataset = dataset_for(out, infos, 0);
    const char *inputs[n > 0 ? n : 1];
    for (int i = 0; i < n; i++)
        inputs[i] = o->inputs[i].file;
    fs_run_files files = {
        .output = o->output_file,
        .report = o->report_file,
        .wisdom = o->wisdom_file,
        .ninputs = n,
        .inputs = inputs,
        .infos = infos,
        .shards = shards,
        .replaced_set = o->force && o->shard_output ? out->dataset : NULL,
    };
    fs_status st = fs_destinations_check(comm, &files);
    paths_args pa = {.out = out, .infos = infos, .n = n};
    if (st == FS_OK)
        st = fs_root_decides(comm, check_paths_on_root, &pa);
    /* --add replaces OUTPUT by a copy with more in it: no --force needed. */
    if (st == FS_OK)
        st = fs_atomic_begin(comm, o->output_file, o->input_file, o->force || o->add,
                             &out->tmp_path);
    /* A report is a log: it replaces an earlier one without --force. Its
     * temporary exists from now on, so an unwritable report path fails the
     * run before any work. */
    if (st == FS_OK && o->report_file && !fs_report_to_stdout(o->report_file))
        st = fs_atomic_begin(comm, o->report_file, o->input_file, 1, &out->report_tmp);
    if (st == FS_OK && o->shard_output)
        st = fs_shard_output_begin(comm, o->output_file, &out->so);
    if (st == FS_OK)
        st = take_input_attrs(out, infos, n, shards);
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
static fs_status choose_storage(const fs_run_config *o, const fs_transform *t, fs_h5_storage *sg)
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
        fs_status st = choose_storage(out->opts, ts[i], &sg);
        if (st != FS_OK)
            return st;
        *bytes += file_bytes(&sg, ts[i]->out_ndim, ts[i]->out_shape,
                             (double)fs_dtype_bytes(ts[i]->out_type));
    }
    struct stat st;
    if (out->opts->add && stat(out->opts->output_file, &st) == 0)
        *bytes += (double)st.st_size;
    return FS_OK;
}

/* The destinations of this run. *n (out) entries; dirs freed by the caller. */
static fs_status list_needs(const fs_output *out, const fs_transform *const *ts, int nts,
                            space_need *needs, int *n, double *largest_file)
{
    const fs_run_config *o = out->opts;
    const fs_transform *t = ts[0];
    double eb = (double)fs_dtype_bytes(t->out_type);
    int nranks = 1;
    if (MPI_Comm_size(out->comm, &nranks) != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_size failed");
    space_need all[4] = {{o->output_file, NULL, "the result", 0}};
    int count = 1;
    *largest_file = 0;
    if (o->shard_output) {
        all[0].bytes = METADATA_BYTES_PER_FILE; /* the master */
        all[count++] = (space_need){o->output_file, NULL, "the shard files", 0};
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
    dev_t dev[4];
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
static fs_status check_space(const fs_output *out, const fs_transform *const *ts, int nts)
{
    space_need needs[4];
    int n = 0;
    double largest_file = 0;
    struct rlimit lim;
    fs_status st = list_needs(out, ts, nts, needs, &n, &largest_file);
    if (st == FS_OK)
        st = check_free_space(needs, n);
    if (st == FS_OK && getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
        (double)lim.rlim_cur < largest_file)
        st = fs_error_set(FS_ERR_RUNTIME, "%s: the result needs files of %.1f MiB but the file size "
                          "limit (ulimit -f) is %.1f MiB", out->opts->output_file,
                          largest_file / 1048576.0, (double)lim.rlim_cur / 1048576.0);
    for (int i = 0; i < n; i++)
        free(needs[i].dir);
    return st;
}

fs_status fs_output_plan(fs_output *out, const fs_transform *const *ts, int n)
{
    const fs_run_config *o = out->opts;
    /* Every rank decides alike: rank 0 speaks. Each result's storage is
     * chosen again when it is created; all are judged now. */
    fs_status st = FS_OK;
    for (int i = n - 1; i >= 0 && st == FS_OK; i--)
        st = choose_storage(o, ts[i], &out->storage);
    for (int i = 0; i < n && st == FS_OK && !o->shard_output; i++)
        st = fs_coords_check(o, ts[i]);
    if (st == FS_OK && o->shard_output)
        st = fs_shard_output_plan(out->comm, ts[0], o->shard_output, o->output_file, &out->so);
    const fs_transform *all[n + FS_VECTOR_MAX_RESULTS]; /* --vector: more results than INPUTs */
    int nall = 0;
    for (; nall < n; nall++)
        all[nall] = ts[nall];
    for (; n > 0 && nall < out->nresults; nall++)
        all[nall] = ts[0];
    if (st == FS_OK && out->rank == 0) /* --spectrum-only: no result, ts[0] still the transform */
        st = check_space(out, nall ? all : ts, nall);
    return fs_error_agree(out->comm,
                          out->rank == 0 || fs_error_status() == FS_ERR_RUNTIME ? st : FS_OK);
}

/* Rank 0, --add: OUTPUT's contents into its temporary (nothing to copy when
 * there was no OUTPUT), and what OUTPUT was when copied, which the commit
 * finds again or refuses (out->copied). The copy is what is written: its
 * result paths are checked again (OUTPUT may have changed since
 * fs_output_begin looked). */
static fs_status copy_output(void *arg)
{
    fs_output *out = arg;
    fs_signals_pause_point("add-copy");
    fs_status st = fs_atomic_copy_into(out->opts->output_file, out->tmp_path, &out->copied);
    if (st != FS_OK || !out->copied.exists)
        return st;
    paths_args pa = {.out = out, .infos = out->infos, .n = out->ninfos};
    return check_add_paths(&pa, out->tmp_path);
}

fs_status fs_output_open(fs_output *out)
{
    const fs_run_config *o = out->opts;
    if (o->shard_output)
        return FS_OK; /* the files are made with their datasets */
    int existing = 0;
    if (o->add) {
        /* Agreed quietly: the caller agrees (and prints) at the stage's end. */
        fs_status st_copy = fs_root_decides_quietly(out->comm, copy_output, out);
        if (st_copy != FS_OK)
            return st_copy;
        existing = out->copied.exists; /* rank 0's, sent to all */
        fs_status st_bcast = fs_bcast_bytes(out->comm, 0, &existing, sizeof existing);
        if (st_bcast != FS_OK)
            return st_bcast;
    }
    fs_status st = fs_h5_output_open(out->comm, out->tmp_path, existing, &out->h5);
    if (out->h5)
        fs_h5_output_set_name(out->h5, o->output_file);
    return st;
}

fs_status fs_output_create(fs_output *out, const fs_transform *t)
{
    fs_status st = FS_OK;
    if (!out->opts->shard_output) {
        st = choose_storage(out->opts, t, &out->storage);
        /* --add --force: the replaced dataset's coordinates stay for others */
        if (st == FS_OK && out->opts->add && out->opts->force)
            st = fs_h5_scales_detach(out->h5, out->dataset);
        if (st == FS_OK)
            st = fs_h5_output_add(out->h5, out->dataset, t->out_ndim, t->out_shape, t->out_type,
                                  &out->storage, out->opts->add && out->opts->force);
        return st;
    }
    if (out->so.file >= 0) /* else this rank owns nothing of the output */
        st = fs_h5_output_new(out->so.comm, out->so.path, out->dataset, t->out_ndim,
                              out->so.box.count, t->out_type, &out->storage, &out->h5);
    if (out->h5)
        fs_h5_output_set_name(out->h5, out->opts->output_file);
    return st;
}

/* --apply's result: what was applied, in which units of k; a combined
 * result (no box): the operation and the second INPUT. */
static fs_status round_trip_attributes(const fs_output_attrs *a, fs_h5_output *h5)
{
    int64_t n = a->nbox;
    fs_status st = fs_h5_output_attr_string(h5, "operation", a->operation ? a->operation : "");
    if (st == FS_OK && a->second_file) {
        char second[FS_INPUT_NAME_MAX];
        snprintf(second, sizeof second, "%s:%s%s", a->second_file, a->second_dataset,
                 a->second_slice);
        st = fs_h5_output_attr_string(h5, "second_input", second);
    }
    if (st == FS_OK && a->components)
        st = fs_h5_output_attr_string(h5, "components", a->components);
    if (st != FS_OK || !n)
        return st;
    if (st == FS_OK)
        st = fs_h5_output_attr_numbers(h5, "box_size", 1, &n, FS_DTYPE_FLOAT64, a->box);
    if (st == FS_OK)
        st = fs_h5_output_attr_string(h5, "k_convention", "k_a = 2 pi fftfreq(n_a, 1/n_a) / L_a "
                                      "over the transformed axes, L_a = box_size");
    return st;
}

/* The attributes of an output dataset (collective over its file's ranks):
 * fftshard's own (own_attrs), then the input dataset's. */
static fs_status write_attributes(const fs_output *out, const fs_transform *t, fs_h5_output *h5)
{
    const fs_run_config *o = out->opts;
    const fs_output_attrs *a = &out->attrs;
    char input[2 * FS_PATH_MAX + 2];
    snprintf(input, sizeof input, "%s:%s", a->input_file, a->input_dataset);
    int64_t axes[FS_MAX_DIMS], ranks = a->nranks, last_size = 0, real_axis = t->real_axis;
    /* In the order asked, as numpy's axes argument: for --real the halved
     * axis is the last. */
    for (int i = 0; i < t->naxes; i++)
        axes[i] = t->axes[i];
    /* The real length along the halved axis (the last transformed one for
     * c2c), which an inverse --real run needs. */
    if (t->real_axis >= 0)
        last_size = t->real_len;
    else if (t->naxes)
        last_size = t->in_shape[t->axes[t->naxes - 1]];
    struct { const char *name, *value; } strings[] = {
        {"fftshard_version", PACKAGE_VERSION},
        {"transform", fs_kind_name(t->kind)},
        {"direction", t->round_trip ? "round trip" : o->inverse ? "inverse" : "forward"},
        {"norm", fs_norm_name(t->norm)},
        {"input", input},
        {"transpose", a->strategy},
        {"precision", fs_precision_name(t->prec)},
    };
    fs_status st = FS_OK;
    for (size_t i = 0; i < sizeof strings / sizeof strings[0] && st == FS_OK; i++)
        st = fs_h5_output_attr_string(h5, strings[i].name, strings[i].value);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(h5, "axes", t->naxes, axes);
    if (st == FS_OK && t->real_axis >= 0)
        st = fs_h5_output_attr_int64s(h5, "real_axis", -1, &real_axis);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(h5, "input_shape", t->in_ndim, t->in_shape);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(h5, "last_size", -1, &last_size);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(h5, "ranks", -1, &ranks);
    if (st == FS_OK && a->input_slice)
        st = fs_h5_output_attr_string(h5, "input_slice", a->input_slice);
    if (st == FS_OK && t->round_trip)
        st = round_trip_attributes(a, h5);
    if (st == FS_OK && a->copied)
        st = fs_h5_output_copy_attrs(h5, a->copied);
    return st;
}

fs_status fs_output_write(fs_output *out, const fs_transform *t, const fs_box *last,
                          void *data, fs_progress *progress)
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
    const fs_run_config *o = out->opts;
    int keep = o->check || o->correlation || out->result + 1 < out->nresults; /* read again */
    if (out->h5)
        st = fs_h5_output_write(out->h5, &m, data, keep, fs_progress_callback, progress);
    if (st == FS_OK)
        st = fs_output_write_attributes(out, t);
    fs_progress_end(progress);
    return st;
}

fs_status fs_output_write_attributes(fs_output *out, const fs_transform *t)
{
    if (!out->h5)
        return FS_OK;
    fs_status st = write_attributes(out, t, out->h5);
    if (st == FS_OK && out->opts->shard_output)
        st = fs_h5_output_attr_int64s(out->h5, "offset", t->out_ndim, out->so.box.start);
    /* The shard files and their virtual master carry none (fftshard(1));
     * the coordinates keep out of the way of the results still to come. */
    paths_args a = {.out = out, .infos = out->infos, .n = out->ninfos};
    const char *taken[out->ninfos + 3 + FS_VECTOR_MAX_RESULTS];
    int ntaken = result_paths(&a, taken);
    if (st == FS_OK && !out->opts->shard_output)
        st = fs_coords_write(out->h5, out->dataset, t, out->opts,
                             out->current < out->n_input_attrs ? &out->input_coords[out->current]
                                                               : NULL,
                             taken, ntaken);
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

/* A failure after the result is in place says so. */
static fs_status after_the_result(fs_status st)
{
    if (st == FS_OK)
        return st;
    char message[1024];
    snprintf(message, sizeof message, "%s", fs_error_message());
    fs_error_clear();
    return fs_error_set(st, "%s (the result was written)", message);
}

/* Rank 0, once the result is in place: the report and the wisdom, already
 * written, each renamed over its file (a rename beside its own temporary:
 * nothing left to fail but the directory itself). */
static fs_status commit_side_files(fs_output *out)
{
    char **tmp[] = {&out->report_tmp, &out->wisdom_tmp};
    const char *final[] = {out->opts->report_file, out->opts->wisdom_file};
    fs_status st = FS_OK;
    for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) {
        if (!*tmp[i])
            continue;
        if (st != FS_OK)
            fs_atomic_abort(*tmp[i]);
        else
            st = after_the_result(fs_atomic_commit(*tmp[i], final[i]));
        free(*tmp[i]);
        *tmp[i] = NULL;
    }
    return st;
}

/* Rank 0 (fs_atomic_commit_collective): the result into place, then the
 * report and the wisdom. The result goes first: a commit it cannot make
 * leaves all three as they were. */
static fs_status commit_on_root(void *arg)
{
    commit_args *c = arg;
    const fs_run_config *o = c->out->opts;
    /* --add: OUTPUT as it was copied (or still absent), else nothing. */
    fs_status st = o->shard_output
                       ? commit_shards(c->out, c->t)
                       : fs_atomic_place_checked(c->out->tmp_path, o->output_file, o->force,
                                                 o->add ? &c->out->copied : NULL);
    if (st == FS_OK)
        return commit_side_files(c->out);
    return st;
}

fs_status fs_output_commit(fs_output *out, const fs_transform *t)
{
    commit_args c = {out, t};
    fs_status st = fs_atomic_commit_collective(out->comm, commit_on_root, &c);
    /* --report=-: standard output has no temporary to rename, so the report
     * goes there once the result is in place (not while the signals are
     * held: a reader that stops reading would hold them for ever). */
    if (st == FS_OK && fs_report_to_stdout(out->opts->report_file))
        st = fs_error_agree(out->comm,
                            out->rank == 0 ? after_the_result(fs_report_flush_stdout()) : FS_OK);
    return st;
}

void fs_output_abandon(fs_output *out, fs_status st)
{
    /* The ranks' HDF5 states now differ, and closing the file would wait
     * forever in a collective call that some rank has left; nothing here
     * is collective, so a rank may come here alone. Every rank registered
     * every temporary (the shard directory with the files in it), so any
     * one rank removes them all. The status was agreed and printed: rank 0
     * ends the job; the others wait for that, but not for ever. */
    if (out->rank == 0)
        fs_h5_abandon(st, 0);
    fs_atomic_remove_registered();
    sleep(10);
    fs_h5_abandon(st, 0);
}

void fs_output_finish(fs_output *out, fs_status st)
{
    fs_h5_output_close(&out->h5);
    if (st != FS_OK && out->tmp_path)
        fs_atomic_abort(out->tmp_path);
    if (st != FS_OK && out->opts && out->opts->shard_output && out->so.dir_tmp)
        fs_shard_output_abort(out->comm, &out->so);
    fs_shard_output_free(&out->so);
    /* Once committed these are NULL on rank 0, which renamed them; the
     * other ranks forget the names they registered. */
    char *side[] = {out->report_tmp, out->wisdom_tmp};
    for (size_t i = 0; i < sizeof side / sizeof side[0]; i++) {
        if (side[i] && st == FS_OK)
            fs_atomic_forget(side[i]);
        else if (side[i])
            fs_atomic_abort(side[i]);
    }
    fs_report_discard_stdout(); /* kept by a run that failed after the report */
    free(out->tmp_path);
    free(out->report_tmp);
    free(out->wisdom_tmp);
    out->tmp_path = out->report_tmp = out->wisdom_tmp = NULL;
    for (int i = 0; i < out->n_input_attrs; i++) {
        fs_input_attrs_free(&out->input_attrs[i]);
        fs_input_coords_free(&out->input_coords[i]);
    }
    free(out->input_attrs);
    free(out->input_coords);
    out->input_attrs = NULL;
    out->input_coords = NULL;
    out->n_input_attrs = 0;
}
