/* SPDX-License-Identifier: GPL-3.0-or-later */
/* json: see json.h. */
#include "config.h"

#include "core/json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

struct fs_json {
    FILE *f;
    int depth;
    int first;      /* no comma needed before the next member */
};

static void write_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\t': fputs("\\t", f); break;
        case '\r': fputs("\\r", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

static void key_of(fs_json *j, const char *key)
{
    fprintf(j->f, "%s\n%*s", j->first ? "" : ",", 2 * j->depth, "");
    j->first = 0;
    if (key) {
        write_string(j->f, key);
        fputs(": ", j->f);
    }
}

void fs_json_open(fs_json *j, const char *key, char bracket)
{
    key_of(j, key);
    fputc(bracket, j->f);
    j->depth++;
    j->first = 1;
}

void fs_json_close(fs_json *j, char bracket)
{
    j->depth--;
    fprintf(j->f, "\n%*s%c", 2 * j->depth, "", bracket);
    j->first = 0;
}

void fs_json_text(fs_json *j, const char *key, const char *v)
{
    key_of(j, key);
    write_string(j->f, v);
}

void fs_json_str(fs_json *j, const char *key, const char *v)
{
    if (v)
        fs_json_text(j, key, v);
    else
        fs_json_null(j, key);
}

void fs_json_int(fs_json *j, const char *key, int64_t v)
{
    key_of(j, key);
    fprintf(j->f, "%" PRId64, v);
}

void fs_json_bool(fs_json *j, const char *key, int v)
{
    key_of(j, key);
    fputs(v ? "true" : "false", j->f);
}

/* JSON has no NaN or infinity. */
void fs_json_num(fs_json *j, const char *key, double v)
{
    key_of(j, key);
    if (isfinite(v))
        fprintf(j->f, "%.9g", v);
    else
        fputs("null", j->f);
}

void fs_json_null(fs_json *j, const char *key)
{
    key_of(j, key);
    fputs("null", j->f);
}

void fs_json_ints_strided(fs_json *j, const char *key, int n, const int64_t *v, size_t stride)
{
    key_of(j, key);
    fputc('[', j->f);
    for (int i = 0; i < n; i++)
        fprintf(j->f, "%s%" PRId64, i ? ", " : "", v[(size_t)i * stride]);
    fputc(']', j->f);
}

void fs_json_ints(fs_json *j, const char *key, int n, const int64_t *v)
{
    fs_json_ints_strided(j, key, n, v, 1);
}

void fs_json_raw(fs_json *j, const char *text)
{
    fprintf(j->f, "%s%s", j->first ? "" : ",", text);
    j->first = 0;
}

void fs_json_parts(fs_json *j, const fs_json_part *parts, int n)
{
    for (int i = 0; i < n; i++) {
        const char *m = parts[i].member;
        int opens = m && (i == 0 || !parts[i - 1].member || strcmp(parts[i - 1].member, m) != 0);
        int closes = m && (i + 1 == n || !parts[i + 1].member ||
                           strcmp(parts[i + 1].member, m) != 0);
        if (opens)
            fs_json_open(j, m, '{');
        parts[i].write(j, parts[i].arg);
        if (closes)
            fs_json_close(j, '}');
    }
}

/* f's status once closed: 0 or an errno. */
static int closed(FILE *f)
{
    int e = ferror(f) ? (errno ? errno : EIO) : 0;
    if (fclose(f) != 0 && !e)
        e = errno ? errno : EIO;
    return e;
}

int fs_json_document(FILE *f, void (*body)(fs_json *j, void *arg), void *arg)
{
    fs_json w = {f, 1, 1};
    fputc('{', f);
    body(&w, arg);
    fputs("\n}\n", f);
    return closed(f);
}

int fs_json_fragment(FILE *f, int depth, void (*body)(fs_json *j, void *arg), void *arg)
{
    fs_json w = {f, depth, 1};
    body(&w, arg);
    return closed(f);
}
