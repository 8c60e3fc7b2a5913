/* SPDX-License-Identifier: GPL-3.0-or-later */
/* slice: see slice.h. */
#include "config.h"

#include "io/slice.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/h5probe.h"

/* ------------------------------------------------------------------ parsing */

/* [p, end) without the blanks around it. */
static void trim(const char **p, const char **end)
{
    while (*p < *end && isspace((unsigned char)**p))
        (*p)++;
    while (*end > *p && isspace((unsigned char)(*end)[-1]))
        (*end)--;
}

/* An integer spelled exactly by [p, end) (blanks around allowed, a sign,
 * any number of digits): 0 and *v, 1 when there is nothing, -1 when it is
 * no integer, 2 when it does not fit in 64 bits (*v then the largest of
 * its sign, +-INT64_MAX: Python clips a slice's bounds and step so before
 * numpy sees them). */
static int parse_int(const char *p, const char *end, int64_t *v)
{
    trim(&p, &end);
    if (p == end)
        return 1;
    int negative = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    if (p == end)
        return -1;
    /* -2^63 fits (an index from the end), +2^63 does not */
    uint64_t x = 0, limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    int big = 0;
    for (; p < end; p++) {
        if (!isdigit((unsigned char)*p))
            return -1;
        unsigned d = (unsigned)(*p - '0');
        if (x > (limit - d) / 10)
            big = 1;
        else
            x = 10 * x + d;
    }
    if (big)
        *v = negative ? -INT64_MAX : INT64_MAX;
    else
        *v = !negative ? (int64_t)x : x > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)x;
    return big ? 2 : 0;
}

/* One entry [p, end): "...", an index, or START:STOP:STEP. NULL, or why
 * it is none (in why, for the message). */
static const char *parse_entry(const char *p, const char *end, fs_slice_entry *e, char *why,
                               size_t size)
{
    memset(e, 0, sizeof *e);
    e->step = 1;
    trim(&p, &end);
    int len = (int)(end - p);
    if (len == 0)
        return "an empty entry (each entry is START:STOP:STEP, an index or '...')";
    if (len == 3 && memcmp(p, "...", 3) == 0) {
        e->kind = FS_SLICE_ELLIPSIS;
        return NULL;
    }
    const char *c1 = memchr(p, ':', (size_t)len);
    if (!c1) {
        e->kind = FS_SLICE_INDEX;
        int got = parse_int(p, end, &e->start);
        if (got == 0)
            return NULL;
        if (got == 2) /* numpy: IndexError, whatever the axis */
            snprintf(why, size, "slice index %.*s%s is out of range for any axis (it does not "
                     "fit in 64 bits)", len < 40 ? len : 40, p, len < 40 ? "" : "...");
        else
            snprintf(why, size, "'%.*s' is no slice entry (START:STOP:STEP, an index or '...')",
                     len, p);
        return why;
    }
    e->kind = FS_SLICE_RANGE;
    const char *c2 = memchr(c1 + 1, ':', (size_t)(end - c1 - 1));
    const char *stop_end = c2 ? c2 : end;
    int a = parse_int(p, c1, &e->start), b = parse_int(c1 + 1, stop_end, &e->stop);
    int c = c2 ? parse_int(c2 + 1, end, &e->step) : 1;
    if (a < 0 || b < 0 || c < 0 || (c2 && memchr(c2 + 1, ':', (size_t)(end - c2 - 1)))) {
        snprintf(why, size, "'%.*s' is no slice entry (START:STOP:STEP, each an integer or "
                 "left out)", len, p);
        return why;
    }
    /* a bound past 64 bits is clipped to the axis below, as numpy clips it */
    e->has_start = a == 0 || a == 2;
    e->has_stop = b == 0 || b == 2;
    if (c == 1)
        e->step = 1;
    if (e->step == 0)
        return "slice step 0 (a step is 1 or more)";
    if (e->step < 0) {
        snprintf(why, size, "'%.*s': a negative step is not supported (the slice is read in "
                 "the file's order: STEP is 1 or more)", len, p);
        return why;
    }
    return NULL;
}

fs_status fs_slice_parse(const char *arg, char *path, fs_slice_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    size_t len = strlen(path);
    if (len == 0 || path[len - 1] != ']')
        return FS_OK;
    if (len >= 2 && path[len - 2] == '[') {
        if (len == 2 || path[len - 3] == '/')
            return fs_error_set(FS_ERR_USAGE, "'%s': no dataset name before '[]'", arg);
        path[len - 2] = '\0'; /* "NAME[]": the dataset NAME, whole */
        return FS_OK;
    }
    char *open = strrchr(path, '[');
    char why[160];
    const char *bad = NULL;
    if (!open)
        bad = "the dataset path ends in ']' without a slice (a dataset whose name ends in ']' "
              "is named with '[]' after it)";
    else if (open == path || open[-1] == '/')
        bad = "no dataset name before the slice";
    for (const char *p = open ? open + 1 : NULL; !bad && p < path + len - 1;) {
        const char *comma = memchr(p, ',', (size_t)(path + len - 1 - p));
        const char *end = comma ? comma : path + len - 1;
        char many[96];
        snprintf(many, sizeof many, "more than %d slice entries (fftshard reads arrays of at "
                 "most %d axes)", FS_LAYOUT_MAX_DIMS, FS_LAYOUT_MAX_DIMS);
        if (spec->n == FS_LAYOUT_MAX_DIMS + 1) { /* 8 and a '...': no room for more */
            snprintf(why, sizeof why, "%s", many);
            bad = why;
            break;
        }
        fs_slice_entry *e = &spec->e[spec->n];
        bad = parse_entry(p, end, e, why, sizeof why);
        int named = 0;
        for (int i = 0; !bad && i < spec->n; i++) {
            named += spec->e[i].kind != FS_SLICE_ELLIPSIS;
            if (e->kind == FS_SLICE_ELLIPSIS && spec->e[i].kind == FS_SLICE_ELLIPSIS)
                bad = "more than one '...' in the slice";
        }
        if (!bad && named + (e->kind != FS_SLICE_ELLIPSIS) > FS_LAYOUT_MAX_DIMS) {
            snprintf(why, sizeof why, "%s", many);
            bad = why;
        }
        spec->n++;
        p = comma ? comma + 1 : end;
        if (comma && p == path + len - 1 && !bad)
            bad = "an empty entry (each entry is START:STOP:STEP, an index or '...')";
    }
    if (bad) {
        memset(spec, 0, sizeof *spec);
        return fs_error_set(FS_ERR_USAGE, "'%s': %s", arg, bad);
    }
    *open = '\0';
    spec->given = 1;
    return FS_OK;
}

/* ------------------------------------------------------------------ resolving */

/* numpy's clipping of a range bound v (from the end when negative) to an
 * axis of n. */
static int64_t clip_bound(int64_t v, int64_t n)
{
    if (v < 0)
        v = v < -n ? 0 : v + n;
    return v > n ? n : v;
}

/* Entry e on file axis k of length n into s; the text of it appended. */
static fs_status resolve_entry(const fs_slice_entry *e, int k, int64_t n, const char *name,
                               fs_input_slice *s, char *text, size_t size)
{
    size_t used = strlen(text);
    const char *sep = k ? ", " : "";
    if (e->kind == FS_SLICE_INDEX) {
        int64_t i = e->start < 0 ? e->start + n : e->start;
        if (i < 0 || i >= n)
            return fs_error_set(FS_ERR_INPUT, "%s: slice index %lld is out of range for axis %d "
                                "of length %lld", name, (long long)e->start, k, (long long)n);
        s->start[k] = i;
        s->step[k] = 1;
        s->count[k] = 1;
        s->dropped[k] = 1;
        snprintf(text + used, size - used, "%s%lld", sep, (long long)i);
        return FS_OK;
    }
    int64_t a = e->has_start ? clip_bound(e->start, n) : 0;
    int64_t b = e->has_stop ? clip_bound(e->stop, n) : n;
    int64_t step = e->kind == FS_SLICE_RANGE ? e->step : 1;
    int64_t count = b > a ? (b - a - 1) / step + 1 : 0;
    if (count == 0)
        return fs_error_set(FS_ERR_INPUT, "%s: the slice takes nothing of axis %d of length %lld "
                            "(%lld:%lld)", name, k, (long long)n, (long long)a, (long long)b);
    s->start[k] = a;
    s->step[k] = step;
    s->count[k] = count;
    if (a == 0 && b == n && step == 1)
        snprintf(text + used, size - used, "%s:", sep);
    else if (step == 1)
        snprintf(text + used, size - used, "%s%lld:%lld", sep, (long long)a, (long long)b);
    else
        snprintf(text + used, size - used, "%s%lld:%lld:%lld", sep, (long long)a, (long long)b,
                 (long long)step);
    return FS_OK;
}

/* spec against ndim axes of shape into *s. */
static fs_status resolve(const fs_slice_spec *spec, const char *name, int ndim,
                         const int64_t *shape, fs_input_slice *s)
{
    memset(s, 0, sizeof *s);
    int named = 0, ellipsis = -1;
    for (int i = 0; i < spec->n; i++) {
        if (spec->e[i].kind == FS_SLICE_ELLIPSIS)
            ellipsis = i;
        else
            named++;
    }
    if (named > ndim)
        return fs_error_set(FS_ERR_INPUT, "%s: the slice has %d entries; the dataset has %d "
                            "%s", name, named, ndim, ndim == 1 ? "axis" : "axes");
    s->given = 1;
    s->file_ndim = ndim;
    memcpy(s->file_shape, shape, sizeof *shape * (size_t)ndim);
    /* entry i on axis i before the ellipsis, on the last axes after it */
    int after = ellipsis < 0 ? 0 : spec->n - 1 - ellipsis;
    fs_slice_entry whole = {.kind = FS_SLICE_RANGE, .step = 1};
    char *text = s->text;
    text[0] = '[';
    text[1] = '\0';
    for (int k = 0; k < ndim; k++) {
        const fs_slice_entry *e = &whole;
        if (ellipsis < 0 ? k < spec->n : k < ellipsis)
            e = &spec->e[k];
        else if (ellipsis >= 0 && k >= ndim - after)
            e = &spec->e[ellipsis + 1 + (k - (ndim - after))];
        fs_status st = resolve_entry(e, k, shape[k], name, s, text, FS_SLICE_TEXT - 1);
        if (st != FS_OK)
            return st;
    }
    strcat(text, "]");
    return FS_OK;
}

/* The axes a forward run recorded, renumbered as axes of the sliced array;
 * one the slice drops makes them unusable (fs_recorded.axes_bad). */
static void renumber_recorded(const fs_input_slice *s, const int *axis_of, fs_recorded *rec)
{
    for (int i = 0; i < rec->naxes; i++) {
        int64_t a = rec->axes[i];
        if (a >= 0 && a < s->file_ndim && axis_of[a] < 0) {
            snprintf(rec->axes_bad, sizeof rec->axes_bad, "the slice drops axis %lld, which the "
                     "forward run transformed", (long long)a);
            rec->naxes = 0;
            break;
        }
        rec->axes[i] = axis_of[a];
    }
    if (rec->real_axis >= 0 && rec->real_axis < s->file_ndim)
        rec->real_axis = axis_of[rec->real_axis];
}

fs_status fs_slice_apply(const fs_slice_spec *spec, const char *file, fs_input_info *info)
{
    char name[2 * FS_PATH_MAX + 2];
    snprintf(name, sizeof name, "%s:%s", file, info->dataset);
    fs_input_slice s;
    fs_status st = resolve(spec, name, info->ndim, info->shape, &s);
    if (st != FS_OK)
        return st;
    int axis_of[FS_LAYOUT_MAX_DIMS], n = 0;
    for (int k = 0; k < s.file_ndim; k++) {
        axis_of[k] = s.dropped[k] ? -1 : n;
        if (!s.dropped[k])
            info->shape[n++] = s.count[k];
    }
    if (n == 0)
        return fs_error_set(FS_ERR_INPUT, "%s%s: the slice leaves no axis (an index on every "
                            "axis); fftshard transforms arrays of 1 axis or more", name, s.text);
    info->ndim = n;
    info->slice = s;
    renumber_recorded(&s, axis_of, &info->recorded);
    return FS_OK;
}

void fs_slice_file_box(const fs_input_slice *s, int ndim, const int64_t *start,
                       const int64_t *count, int64_t *fstart, int64_t *fstride, int64_t *fcount)
{
    int a = 0;
    for (int k = 0; k < s->file_ndim; k++) {
        if (s->dropped[k] || a >= ndim) {
            fstart[k] = s->start[k];
            fstride[k] = 1;
            fcount[k] = 1;
            continue;
        }
        fstart[k] = s->start[k] + start[a] * s->step[k];
        fstride[k] = s->step[k];
        fcount[k] = count[a];
        a++;
    }
}

int fs_input_file_shape(const fs_input_info *info, int64_t *shape)
{
    if (!info->slice.given) {
        memcpy(shape, info->shape, sizeof *shape * (size_t)info->ndim);
        return info->ndim;
    }
    memcpy(shape, info->slice.file_shape, sizeof *shape * (size_t)info->slice.file_ndim);
    return info->slice.file_ndim;
}
