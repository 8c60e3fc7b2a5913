/* SPDX-License-Identifier: GPL-3.0-or-later */
/* destinations: see destinations.h. */
#include "config.h"

#include "output/destinations.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/collective.h"
#include "report/report.h"
#include "output/shardout.h"

/* A file as it can be compared before it exists. */
typedef struct file_id {
    char *label;      /* how a message names it */
    const char *what; /* a destination's content: "result", "report", "wisdom" */
    int exists;
    dev_t dev;
    ino_t ino;
    char *where;      /* not existing: its resolved directory and name */
} file_id;

typedef struct file_list {
    file_id *items;
    int n, cap;
} file_list;

static void file_list_free(file_list *l)
{
    for (int i = 0; i < l->n; i++) {
        free(l->items[i].label);
        free(l->items[i].where);
    }
    free(l->items);
    memset(l, 0, sizeof *l);
}

/* Where a file that does not exist would be: its directory resolved (links
 * and "..") and its name, so that two spellings of one place compare equal. */
static char *resolved_place(const char *path)
{
    char *copy = strdup(path), *base_copy = strdup(path), *where = NULL;
    char *dir = copy ? realpath(dirname(copy), NULL) : NULL;
    if (dir && base_copy && asprintf(&where, "%s/%s", dir, basename(base_copy)) < 0)
        where = NULL;
    if (!where && copy && base_copy)
        where = strdup(path); /* a missing directory: refused before any comparison */
    free(dir);
    free(copy);
    free(base_copy);
    return where;
}

/* Add path under a label made from fmt; a source that does not exist is
 * left out (it cannot be overwritten). */
static fs_status add(file_list *l, int is_source, const char *path, const char *what,
                     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static fs_status add(file_list *l, int is_source, const char *path, const char *what,
                     const char *fmt, ...)
{
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (is_source && !exists)
        return FS_OK;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        file_id *items = realloc(l->items, (size_t)cap * sizeof *items);
        if (!items)
            return fs_error_set(FS_ERR_RUNTIME, "out of memory");
        l->items = items;
        l->cap = cap;
    }
    file_id *f = &l->items[l->n];
    memset(f, 0, sizeof *f);
    va_list ap;
    va_start(ap, fmt);
    int len = vasprintf(&f->label, fmt, ap);
    va_end(ap);
    if (len < 0 || (!exists && !(f->where = resolved_place(path)))) {
        if (len >= 0)
            free(f->label);
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    f->what = what;
    f->exists = exists;
    f->dev = exists ? st.st_dev : 0;
    f->ino = exists ? st.st_ino : 0;
    l->n++;
    return FS_OK;
}

static int same_file(const file_id *a, const file_id *b)
{
    if (a->exists != b->exists)
        return 0;
    return a->exists ? a->dev == b->dev && a->ino == b->ino : strcmp(a->where, b->where) == 0;
}

/* A destination must name a file in a directory where one can be created:
 * known now, not after the work (a rename onto "new.h5/" fails at the end). */
static fs_status check_place(const char *label, const char *path)
{
    size_t len = strlen(path);
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    if (len == 0 || path[len - 1] == '/' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return fs_error_set(FS_ERR_OUTPUT, "%s: names a directory, not a file", label);
    char *copy = strdup(path);
    if (!copy)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    const char *dir = dirname(copy);
    struct stat st;
    fs_status ret = FS_OK;
    int e = 0;
    if (stat(dir, &st) != 0)
        e = errno;
    else if (!S_ISDIR(st.st_mode))
        e = ENOTDIR;
    else if (access(dir, W_OK | X_OK) != 0)
        e = errno;
    if (e)
        ret = fs_error_set(e == ENOMEM ? FS_ERR_RUNTIME : FS_ERR_OUTPUT,
                           "%s: cannot create a file in directory %s: %s", label, dir, strerror(e));
    free(copy);
    return ret;
}

/* The source files of a virtual input dataset, as HDF5 will find them. */
static fs_status add_virtual_sources(file_list *sources, const char *input, const fs_input_info *info)
{
    char **names = NULL;
    int64_t n = 0;
    fs_status st = fs_h5_virtual_files(input, info->dataset, &names, &n);
    for (int64_t i = 0; i < n && st == FS_OK; i++) {
        char path[2 * FS_PATH_MAX];
        if (strchr(names[i], '%'))
            continue; /* printf-named sources of an unlimited dataset: HDF5 finds them */
        st = fs_h5_source_path(input, names[i], path, sizeof path);
        if (st == FS_OK)
            st = add(sources, 1, path, NULL, "source %s of the virtual dataset", names[i]);
    }
    fs_strings_free(names, n);
    return st;
}

static fs_status list_sources(const fs_run_files *f, file_list *sources)
{
    fs_status st = FS_OK;
    if (f->shards) {
        st = add(sources, 1, f->inputs[0], NULL, "the --shards list");
        for (int64_t i = 0; i < f->shards->n && st == FS_OK; i++)
            st = add(sources, 1, f->shards->files[i], NULL, "input shard %s", f->shards->files[i]);
        return st;
    }
    for (int i = 0; i < f->ninputs && st == FS_OK; i++) {
        st = f->ninputs == 1 ? add(sources, 1, f->inputs[i], NULL, "the input file")
                             : add(sources, 1, f->inputs[i], NULL, "the input file %s", f->inputs[i]);
        if (st == FS_OK && f->infos[i].is_virtual)
            st = add_virtual_sources(sources, f->inputs[i], &f->infos[i]);
    }
    return st;
}

typedef struct destination {
    const char *path, *option, *what, *as_other;
} destination;

static fs_status list_destinations(const fs_run_files *f, file_list *dests, file_list *others)
{
    /* --report=- is standard output, not a file. */
    const char *report = fs_report_to_stdout(f->report) ? NULL : f->report;
    const destination all[] = {
        {f->output, NULL, "result", "the output file"},
        {report, "--report", "report", "the --report file"},
        {f->wisdom, "--wisdom", "wisdom", "the --wisdom file"},
    };
    fs_status st = FS_OK;
    for (size_t i = 0; i < sizeof all / sizeof all[0] && st == FS_OK; i++) {
        const destination *d = &all[i];
        if (!d->path)
            continue;
        char label[FS_PATH_MAX + 16];
        snprintf(label, sizeof label, "%s%s%s", d->option ? d->option : "", d->option ? "=" : "",
                 d->path);
        st = check_place(label, d->path);
        if (st == FS_OK)
            st = add(dests, 0, d->path, d->what, "%s", label);
        if (st == FS_OK)
            st = add(others, 0, d->path, d->what, "%s", d->as_other);
    }
    return st;
}

/* --force --shard-output over an old master: the files its commit removes. */
static fs_status list_replaced_set(const fs_run_files *f, file_list *dests, file_list *others)
{
    char **paths = NULL;
    int64_t n = 0;
    fs_status st = FS_OK;
    if (f->replaced_set)
        fs_shard_output_old_files(f->output, f->replaced_set, &paths, &n);
    for (int64_t i = 0; i < n && st == FS_OK; i++) {
        st = add(dests, 0, paths[i], "result", "%s (a file of the shard set --force replaces)",
                 f->output);
        if (st == FS_OK)
            st = add(others, 0, paths[i], "result", "a file of the shard set --force replaces");
    }
    fs_strings_free(paths, n);
    return st;
}

static fs_status decide(void *arg)
{
    const fs_run_files *f = arg;
    file_list sources = {0}, dests = {0}, others = {0};
    fs_status st = list_destinations(f, &dests, &others);
    if (st == FS_OK)
        st = list_replaced_set(f, &dests, &others);
    if (st == FS_OK)
        st = list_sources(f, &sources);
    for (int i = 0; i < dests.n && st == FS_OK; i++) {
        const file_id *d = &dests.items[i];
        const file_id *clash = NULL;
        for (int s = 0; s < sources.n && !clash; s++)
            if (same_file(d, &sources.items[s]))
                clash = &sources.items[s];
        for (int j = 0; j < i && !clash; j++)
            if (same_file(d, &others.items[j]))
                clash = &others.items[j];
        if (clash)
            st = fs_error_set(FS_ERR_OUTPUT, "%s: is %s; write the %s to another file", d->label,
                              clash->label, d->what);
    }
    file_list_free(&sources);
    file_list_free(&dests);
    file_list_free(&others);
    return st;
}

fs_status fs_destinations_check(MPI_Comm comm, const fs_run_files *f)
{
    return fs_root_decides(comm, decide, (void *)f);
}
