/* SPDX-License-Identifier: GPL-3.0-or-later */
/* optable: see optable.h. */
#include "config.h"

#include "core/optable.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void *fs_opt_field(const fs_opt *o, void *section)
{
    return (char *)section + o->field;
}

const fs_opt_name *fs_opt_find_name(const fs_opt_name *names, const char *name)
{
    for (; names->name; names++)
        if (strcmp(names->name, name) == 0)
            return names;
    return NULL;
}

void fs_opt_list_names(const fs_opt_name *names, char *out, size_t size)
{
    out[0] = '\0';
    for (int i = 0; names[i].name; i++) {
        const char *sep = i == 0 ? "" : names[i + 1].name ? ", " : " or ";
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%s%s", sep, names[i].name);
    }
}

int fs_opt_parse_long(const char *text, long lo, long hi, long *value)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < lo || v > hi)
        return -1;
    *value = v;
    return 0;
}

int fs_opt_parse_numbers(const char *text, double *out, int max, int allow_zero)
{
    int n = 0;
    const char *p = text;
    for (;;) {
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (errno || end == p || !(v < 1e300) || !(allow_zero ? v >= 0 : v > 0) || n == max)
            return -1;
        out[n++] = v;
        if (*end == '\0')
            return n;
        if (*end != ',')
            return -1;
        p = end + 1;
    }
}

int fs_opt_parse_ints(const char *text, int *out, int max, long lo, long hi)
{
    int n = 0;
    const char *p = text;
    for (char *end = NULL;; p = end + 1) {
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno || end == p || v < lo || v > hi || n == max || (*end && *end != ','))
            return -1;
        out[n++] = (int)v;
        if (!*end)
            return n;
    }
}

int fs_parse_bytes(const char *text, uint64_t *bytes)
{
    char *end;
    if (text[0] < '0' || text[0] > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno)
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: return -1;
    }
    if (*end == 'i' || *end == 'B')   /* 64KiB, 64KB: the same */
        end += *end == 'i' ? (end[1] == 'B' ? 2 : 1) : 1;
    if (*end != '\0' || (shift && v > (~0ULL >> shift)))
        return -1;
    *bytes = (uint64_t)v << shift;
    return 0;
}

fs_status fs_opt_flag(const fs_opt *o, const char *arg, void *section)
{
    (void)arg;
    *(int *)fs_opt_field(o, section) = 1;
    return FS_OK;
}

fs_status fs_opt_long(const fs_opt *o, const char *arg, void *section)
{
    long v;
    if (fs_opt_parse_long(arg, o->lo, o->hi, &v) != 0)
        return fs_error_set(FS_ERR_USAGE, "--%s=%s: expected %s", o->long_name, arg, o->expected);
    if (o->field_bytes == sizeof(int64_t))
        *(int64_t *)fs_opt_field(o, section) = v;
    else
        *(int *)fs_opt_field(o, section) = (int)v;
    return FS_OK;
}

/* The entry of o->names that arg names; NULL with the usage error. */
static const fs_opt_name *named(const fs_opt *o, const char *arg)
{
    const fs_opt_name *found = fs_opt_find_name(o->names, arg);
    if (!found) {
        char expected[256];
        fs_opt_list_names(o->names, expected, sizeof expected);
        fs_error_set(FS_ERR_USAGE, "--%s=%s: expected %s", o->long_name, arg, expected);
    }
    return found;
}

fs_status fs_opt_enum(const fs_opt *o, const char *arg, void *section)
{
    const fs_opt_name *found = named(o, arg);
    if (!found)
        return FS_ERR_USAGE;
    *(int *)fs_opt_field(o, section) = found->value;
    return FS_OK;
}

fs_status fs_opt_string(const fs_opt *o, const char *arg, void *section)
{
    char *copy = strdup(arg);
    if (!copy)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    char **field = fs_opt_field(o, section);
    free(*field);
    *field = copy;
    return FS_OK;
}

fs_status fs_opt_name_of(const fs_opt *o, const char *arg, void *section)
{
    const fs_opt_name *found = named(o, arg);
    return found ? fs_opt_string(o, found->name, section) : FS_ERR_USAGE;
}

fs_status fs_opt_file(const fs_opt *o, const char *arg, void *section)
{
    if (arg[0] == '\0')
        return fs_error_set(FS_ERR_USAGE, "--%s: expected a file name", o->long_name);
    return fs_opt_string(o, arg, section);
}

void fs_opt_print_help(const fs_opt *o, FILE *out)
{
    if (o->help)
        fputs(o->help, out);
    if (o->help_fn)
        o->help_fn(out);
}
