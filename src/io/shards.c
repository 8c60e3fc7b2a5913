/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shards: see shards.h. */
#include "config.h"

#include "io/shards.h"

#include "core/collective.h"
#include "io/probe_guard.h"
#include "io/textfile.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A growing list of strings. */
typedef struct names {
    char **v;
    int64_t n, cap;
} names;

static int names_add(names *l, const char *s)
{
    if (l->n == l->cap) {
        int64_t cap = l->cap ? 2 * l->cap : 16;
        char **v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    if (!(l->v[l->n] = strdup(s)))
        return -1;
    l->n++;
    return 0;
}

/* The integer field of a pattern: its position and length in `text`, or
 * -1 when text has none, or more than one, or a conversion that is not an
 * integer. */
static int find_field(const char *text, size_t *at, size_t *len)
{
    int found = 0;
    for (size_t i = 0; text[i]; i++) {
        if (text[i] != '%')
            continue;
        if (text[i + 1] == '%') {
            i++;
            continue;
        }
        size_t j = i + 1;
        while (text[j] && strchr("-+ 0#", text[j]))
            j++;
        while (text[j] >= '0' && text[j] <= '9')
            j++;
        if (!text[j] || !strchr("diu", text[j]))
            return -1;
        *at = i;
        *len = j + 1 - i;
        found++;
        i = j;
    }
    return found == 1 ? 0 : -1;
}

/* Nonzero when spec is a pattern (one printf integer field in the file
 * name) rather than a list file. */
static int is_pattern(const char *spec)
{
    size_t at, len;
    return find_field(spec, &at, &len) == 0;
}

/* Literal text of a pattern piece ("%%" is "%"). */
static void unescape(const char *from, size_t n, char *to, size_t size)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < size; i++) {
        to[o++] = from[i];
        if (from[i] == '%' && i + 1 < n && from[i + 1] == '%')
            i++;
    }
    to[o] = '\0';
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static void format_number(const char *pattern, long v, char *out, size_t size)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    snprintf(out, size, pattern, v);
#pragma GCC diagnostic pop
}

/* The files a pattern names: every number from the smallest found in the
 * directory up to the largest, none missing. */
static fs_status expand_pattern(const char *spec, names *out)
{
    const char *slash = strrchr(spec, '/');
    const char *base = slash ? slash + 1 : spec;
    char dir[PATH_MAX];
    size_t at, len;
    if (find_field(base, &at, &len) != 0)
        return fs_error_set(FS_ERR_USAGE, "--shards: %s: the number field must be in the file "
                            "name, not in the directory", spec);
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - spec) : 1, slash ? spec : ".");
    if (slash == spec)
        snprintf(dir, sizeof dir, "/");
    /* A "%d" field with an "l" would be "%ld"; patterns use int fields. */
    char fmt[PATH_MAX], prefix[PATH_MAX], suffix[PATH_MAX];
    snprintf(fmt, sizeof fmt, "%.*s%.*sl%c%s", (int)at, base, (int)len - 1, base + at,
             base[at + len - 1], base + at + len);
    unescape(base, at, prefix, sizeof prefix);
    unescape(base + at + len, strlen(base + at + len), suffix, sizeof suffix);

    DIR *d = opendir(dir);
    if (!d)
        return fs_error_set(FS_ERR_INPUT, "--shards: %s: %s", dir, strerror(errno));
    long *nums = NULL;
    size_t n = 0, cap = 0;
    fs_status ret = FS_OK;
    struct dirent *e;
    while ((e = readdir(d)) && ret == FS_OK) {
        size_t el = strlen(e->d_name), pl = strlen(prefix), sl = strlen(suffix);
        if (el <= pl + sl || strncmp(e->d_name, prefix, pl) != 0 ||
            strcmp(e->d_name + el - sl, suffix) != 0)
            continue;
        const char *digits = e->d_name + pl;
        size_t nd = el - pl - sl, k = 0;
        while (k < nd && digits[k] >= '0' && digits[k] <= '9')
            k++;
        if (k != nd || nd > 18)
            continue;
        long v = strtol(digits, NULL, 10);
        char again[PATH_MAX];
        format_number(fmt, v, again, sizeof again);
        if (strcmp(again, e->d_name) != 0)
            continue; /* e.g. "field.12.h5" for "field.%04d.h5" */
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            long *grown = realloc(nums, cap * sizeof *nums);
            if (!grown) {
                ret = fs_error_set(FS_ERR_RUNTIME, "out of memory");
                break;
            }
            nums = grown;
        }
        nums[n++] = v;
    }
    closedir(d);
    if (ret == FS_OK && n == 0)
        ret = fs_error_set(FS_ERR_INPUT, "--shards: no file matches %s", spec);
    if (ret == FS_OK)
        qsort(nums, n, sizeof *nums, cmp_long);
    char dirfmt[PATH_MAX + 8];
    snprintf(dirfmt, sizeof dirfmt, "%.*s%s", slash ? (int)(slash + 1 - spec) : 0, spec, fmt);
    for (size_t i = 0; i < n && ret == FS_OK; i++) {
        char path[PATH_MAX + 64];
        if (i > 0 && nums[i] != nums[i - 1] + 1) {
            format_number(dirfmt, nums[i - 1] + 1, path, sizeof path);
            ret = fs_error_set(FS_ERR_INPUT, "%s: no such file: shard %ld is missing (the pattern "
                               "%s matches %ld to %ld)", path, nums[i - 1] + 1, spec, nums[0],
                               nums[n - 1]);
            break;
        }
        format_number(dirfmt, nums[i], path, sizeof path);
        if (names_add(out, path) != 0)
            ret = fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    free(nums);
    return ret;
}

/* The files a list names, relative ones from the list's directory. The
 * list is never waited on (io/textfile.h). */
static fs_status read_list(const char *spec, names *out)
{
    struct stat st;
    if (stat(spec, &st) != 0 && errno == ENOENT)
        return fs_error_set(FS_ERR_INPUT, "--shards: %s: no such file (a list of shard files, "
                            "or a pattern with a %%d field)", spec);
    fs_textfile f;
    fs_status ret = fs_textfile_open(&f, "--shards: ", spec, PATH_MAX);
    char *copy = ret == FS_OK ? strdup(spec) : NULL;
    const char *slash = strrchr(spec, '/');
    if (copy)
        copy[slash ? slash - spec : 0] = '\0';
    else if (ret == FS_OK)
        ret = fs_error_set(FS_ERR_RUNTIME, "out of memory");
    char *line = NULL;
    while (ret == FS_OK && (ret = fs_textfile_next(&f, &line)) == FS_OK && line) {
        size_t l = strlen(line);
        while (l > 0 && (line[l - 1] == ' ' || line[l - 1] == '\t' || line[l - 1] == '\r'))
            line[--l] = '\0';
        char *p = line + strspn(line, " \t");
        if (*p == '\0' || *p == '#')
            continue;
        char path[2 * PATH_MAX + 2];
        if (p[0] == '/' || !slash)
            snprintf(path, sizeof path, "%s", p);
        else
            snprintf(path, sizeof path, "%s/%s", copy[0] ? copy : "/", p);
        if (names_add(out, path) != 0)
            ret = fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    fs_textfile_close(&f);
    free(copy);
    if (ret == FS_OK && out->n == 0)
        ret = fs_error_set(FS_ERR_INPUT, "--shards: %s: lists no file", spec);
    return ret;
}

static int boxes_overlap(const fs_box *a, const fs_box *b)
{
    for (int k = 0; k < a->ndim; k++)
        if (a->start[k] >= b->start[k] + b->count[k] || b->start[k] >= a->start[k] + a->count[k])
            return 0;
    return 1;
}

/* Place the shards (probed into infos) in the whole array. */
static fs_status place(const names *files, const fs_input_info *infos, fs_input_info *whole,
                       fs_box *boxes)
{
    const fs_input_info *first = &infos[0];
    int nd = first->ndim, with_offset = first->has_offset == 1;
    char shape[256], shape0[256];
    fs_format_shape(nd, first->shape, shape0, sizeof shape0);
    for (int64_t i = 0; i < files->n; i++) {
        const fs_input_info *s = &infos[i];
        const char *f = files->v[i];
        fs_format_shape(s->ndim, s->shape, shape, sizeof shape);
        if (s->ndim != nd)
            return fs_error_set(FS_ERR_INPUT, "%s:%s: %d dimensions, but %s has %d (shape %s)", f,
                                s->dataset, s->ndim, files->v[0], nd, shape0);
        if (strcmp(s->type_name, first->type_name) != 0)
            return fs_error_set(FS_ERR_INPUT, "%s:%s: element type %s, but %s has %s", f, s->dataset,
                                s->type_name, files->v[0], first->type_name);
        if (s->has_offset < 0)
            return fs_error_set(FS_ERR_INPUT, "%s:%s: unusable offset attribute (expected one "
                                "non-negative integer, or one per axis)", f, s->dataset);
        if ((s->has_offset == 1) != with_offset)
            return fs_error_set(FS_ERR_INPUT, "%s:%s: %s an offset attribute but %s %s (all shards "
                                "carry one, or none)", f, s->dataset, with_offset ? "lacks" : "has",
                                files->v[0], with_offset ? "has one" : "does not");
        boxes[i].ndim = nd;
        for (int k = 0; k < nd; k++) {
            boxes[i].count[k] = s->shape[k];
            boxes[i].start[k] = with_offset ? s->offset[k] : 0;
        }
        if (!with_offset) {
            for (int k = 1; k < nd; k++)
                if (s->shape[k] != first->shape[k])
                    return fs_error_set(FS_ERR_INPUT, "%s:%s: shape %s does not stack on %s's %s "
                                        "(shards are consecutive along axis 0 and agree in the "
                                        "other axes)", f, s->dataset, shape, files->v[0], shape0);
            boxes[i].start[0] = i ? boxes[i - 1].start[0] + boxes[i - 1].count[0] : 0;
        }
    }
    *whole = *first;
    whole->has_offset = 0;
    whole->nshards = files->n;
    for (int k = 0; k < nd; k++) {
        whole->shape[k] = 0;
        for (int64_t i = 0; i < files->n; i++)
            if (boxes[i].start[k] + boxes[i].count[k] > whole->shape[k])
                whole->shape[k] = boxes[i].start[k] + boxes[i].count[k];
    }
    if (!with_offset)
        return FS_OK;
    /* Offsets must tile the whole: no overlap, and the volumes add up. */
    double volume = 0, total = 1;
    for (int k = 0; k < nd; k++)
        total *= (double)whole->shape[k];
    for (int64_t i = 0; i < files->n; i++) {
        volume += (double)fs_box_elems(&boxes[i]);
        for (int64_t j = 0; j < i; j++)
            if (boxes_overlap(&boxes[i], &boxes[j]))
                return fs_error_set(FS_ERR_INPUT, "%s: overlaps %s (their offset attributes place "
                                    "them over the same elements)", files->v[i], files->v[j]);
    }
    if (volume != total) {
        fs_format_shape(nd, whole->shape, shape, sizeof shape);
        return fs_error_set(FS_ERR_INPUT, "--shards: the %lld shards leave part of the %s array "
                            "uncovered (their offset attributes do not tile it)",
                            (long long)files->n, shape);
    }
    return FS_OK;
}

/* Rank 0 only. spec: pattern or list file; dataset may be NULL (each
 * shard's only dataset, the first's path for all). Fills *info for the whole
 * array (info->nshards set) and *set (absolute paths). FS_ERR_INPUT naming
 * the shard for every inconsistency, FS_ERR_USAGE for a bad pattern. */
static fs_status probe_shards(const char *spec, const char *dataset, fs_input_info *info,
                          fs_shard_set *set)
{
    names files = {0};
    memset(set, 0, sizeof *set);
    fs_status ret = is_pattern(spec) ? expand_pattern(spec, &files) : read_list(spec, &files);
    fs_input_info *infos = NULL;
    if (ret == FS_OK && !(infos = calloc((size_t)files.n, sizeof *infos)))
        ret = fs_error_set(FS_ERR_RUNTIME, "out of memory");
    for (int64_t i = 0; i < files.n && ret == FS_OK; i++)
        ret = fs_h5_probe(files.v[i], i ? infos[0].dataset : dataset, &infos[i]);
    if (ret == FS_OK && !(set->boxes = calloc((size_t)files.n, sizeof *set->boxes)))
        ret = fs_error_set(FS_ERR_RUNTIME, "out of memory");
    if (ret == FS_OK)
        ret = place(&files, infos, info, set->boxes);
    /* Absolute paths: every rank reads them through a virtual dataset in
     * memory, which has no directory of its own. */
    for (int64_t i = 0; i < files.n && ret == FS_OK; i++) {
        char *abs = realpath(files.v[i], NULL);
        if (!abs) {
            ret = fs_error_set(FS_ERR_INPUT, "%s: %s", files.v[i], strerror(errno));
            break;
        }
        free(files.v[i]);
        files.v[i] = abs;
    }
    free(infos);
    /* The set has no one file to stamp (h5io.h: fs_h5_input_unchanged). */
    info->stamp.known = 0;
    if (ret != FS_OK) {
        fs_strings_free(files.v, files.n);
        free(set->boxes);
        memset(set, 0, sizeof *set);
        return ret;
    }
    set->files = files.v;
    set->n = files.n;
    return FS_OK;
}

fs_status fs_shards_bcast(MPI_Comm comm, fs_shard_set *set)
{
    int rank;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed"));
    /* [n, path bytes], then the paths each ending in a NUL, then the boxes. */
    int64_t head[2] = {set->n, 0};
    if (rank == 0)
        for (int64_t i = 0; i < set->n; i++)
            head[1] += (int64_t)strlen(set->files[i]) + 1;
    fs_status st = fs_bcast_bytes(comm, 0, head, sizeof head);
    if (st != FS_OK)
        return st;
    int64_t n = head[0], chars = head[1];
    char *text = malloc((size_t)chars + 1);
    st = text ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory");
    if (rank != 0 && st == FS_OK) {
        set->n = 0;
        set->files = calloc((size_t)n + 1, sizeof *set->files);
        set->boxes = calloc((size_t)n + 1, sizeof *set->boxes);
        if (!set->files || !set->boxes)
            st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    if ((st = fs_error_agree(comm, st)) != FS_OK) {
        free(text);
        return st;
    }
    if (rank == 0) {
        char *p = text;
        for (int64_t i = 0; i < n; i++)
            p += sprintf(p, "%s", set->files[i]) + 1;
    }
    st = fs_bcast_bytes(comm, 0, text, chars);
    if (st == FS_OK)
        st = fs_bcast_bytes(comm, 0, set->boxes, n * (int64_t)sizeof *set->boxes);
    if (st != FS_OK) {
        free(text);
        return st;
    }
    if (rank != 0) {
        const char *p = text;
        for (int64_t i = 0; i < n && st == FS_OK; i++) {
            if (!(set->files[i] = strdup(p)))
                st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
            else
                set->n++;
            p += strlen(p) + 1;
        }
    }
    free(text);
    return fs_error_agree(comm, st);
}

fs_status fs_input_probe(int sharded, const char *input, const char *dataset,
                         const fs_slice_spec *slice, fs_input_info *info, fs_shard_set *set)
{
    memset(set, 0, sizeof *set);
    fs_status st = sharded ? probe_shards(input, dataset, info, set)
                           : fs_h5_probe_guarded(input, dataset, info);
    if (st == FS_OK && slice && slice->given)
        st = fs_slice_apply(slice, input, info);
    return st;
}

fs_status fs_inputs_probe(MPI_Comm comm, int sharded, const fs_location *inputs, int n,
                          fs_input_info *infos, fs_shard_set *set)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    memset(set, 0, sizeof *set);
    fs_status st = FS_OK;
    for (int i = 0; i < n && st == FS_OK && rank == 0; i++)
        st = fs_input_probe(sharded, inputs[i].file, inputs[i].dataset, &inputs[i].slice,
                            &infos[i], set);
    st = fs_error_agree(comm, st);
    if (st == FS_OK)
        st = fs_bcast_bytes(comm, 0, infos, (int64_t)sizeof *infos * n);
    if (st == FS_OK && sharded)
        st = fs_shards_bcast(comm, set);
    return st;
}
