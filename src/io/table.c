/* SPDX-License-Identifier: GPL-3.0-or-later */
/* table: see table.h. */
#include "config.h"

#include "io/table.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/collective.h"
#include "io/textfile.h"

/* A table's rows at most (a text file of that many lines is read by rank 0). */
#define MAX_TABLE_ROWS (1 << 24)

/* A row is two numbers: far shorter; a comment line may be long. */
#define MAX_LINE_BYTES 65536

/* The row "k v" of line p (its line end cut) in *k and *v; *blank (out)
 * for a line without a row (blank, or a comment). FS_ERR_INPUT naming the
 * line for anything else. */
static fs_status parse_row(const fs_textfile *f, const fs_table *t, char *p, int *blank,
                           double *k, double *v)
{
    const char *what = f->what, *file = f->file;
    int lineno = f->lineno;
    while (isspace((unsigned char)*p))
        p++;
    *blank = *p == '\0' || *p == '#';
    if (*blank)
        return FS_OK;
    /* A byte order mark is no number: said so, since it cannot be seen. */
    if (lineno == 1 && strncmp(p, "\xef\xbb\xbf", 3) == 0)
        return fs_error_set(FS_ERR_INPUT, "%s%s: line 1 starts with a UTF-8 byte order mark: "
                            "a table is plain text", what, file);
    /* k, whitespace, v, nothing but whitespace after it. */
    char *end_k, *end_v;
    *k = strtod(p, &end_k);
    int two = end_k > p && isspace((unsigned char)*end_k);
    if (two) {
        *v = strtod(end_k, &end_v);
        two = end_v > end_k && end_v[strspn(end_v, " \t\v\f\r")] == '\0';
    }
    if (!two)
        return fs_error_set(FS_ERR_INPUT, "%s%s: line %d: expected two numbers k %s", what, file,
                            lineno, t->column);
    if (!isfinite(*k) || !isfinite(*v))
        return fs_error_set(FS_ERR_INPUT, "%s%s: line %d: %s is %g, not a finite number", what,
                            file, lineno, isfinite(*k) ? t->column : "k", isfinite(*k) ? *v : *k);
    if (*k < 0)
        return fs_error_set(FS_ERR_INPUT, "%s%s: line %d: k = %.17g is negative (k >= 0)", what,
                            file, lineno, *k);
    if (t->nrows > 0 && !(*k > t->k[t->nrows - 1]))
        return fs_error_set(FS_ERR_INPUT, "%s%s: line %d: k must increase (%.17g after %.17g)",
                            what, file, lineno, *k, t->k[t->nrows - 1]);
    if (t->nrows == MAX_TABLE_ROWS)
        return fs_error_set(FS_ERR_INPUT, "%s%s: more than %d rows", what, file, MAX_TABLE_ROWS);
    return FS_OK;
}

/* The row (k, v) after t's others. */
static fs_status add_row(fs_table *t, int *cap, double k, double v)
{
    if (t->nrows == *cap) {
        int grown_cap = *cap ? 2 * *cap : 256;
        double *grown = realloc(t->k, sizeof(double) * 2 * (size_t)grown_cap);
        if (!grown)
            return fs_error_set(FS_ERR_RUNTIME, "out of memory");
        /* k in the first half, the values in the second: move them up. */
        if (t->nrows)
            memmove(grown + grown_cap, grown + *cap, sizeof(double) * (size_t)t->nrows);
        *cap = grown_cap;
        t->k = grown;
        t->v = grown + grown_cap;
    }
    t->k[t->nrows] = k;
    t->v[t->nrows++] = v;
    return FS_OK;
}

/* Rank 0: the table t from `file`; what + file names it in messages. The
 * file is never waited on (io/textfile.h). */
static fs_status read_table(fs_table *t, const char *file, const char *what)
{
    fs_textfile f;
    fs_status st = fs_textfile_open(&f, what, file, MAX_LINE_BYTES);
    int cap = 0;
    char *line = NULL;
    while (st == FS_OK && (st = fs_textfile_next(&f, &line)) == FS_OK && line) {
        int blank = 1;
        double k = 0, v = 0;
        st = parse_row(&f, t, line, &blank, &k, &v);
        if (st == FS_OK && !blank)
            st = add_row(t, &cap, k, v);
    }
    fs_textfile_close(&f);
    if (st == FS_OK && t->nrows < 2)
        st = fs_error_set(FS_ERR_INPUT, "%s%s: expected at least two rows k %s", what, file,
                          t->column);
    return st;
}

/* The table as one array (k then the values), packed for the broadcast. */
static fs_status share_table(MPI_Comm comm, int rank, fs_table *t)
{
    int64_t n = t->nrows;
    fs_status st = fs_bcast_bytes(comm, 0, &n, sizeof n);
    if (st != FS_OK)
        return st;
    double *both = malloc(sizeof(double) * 2 * (size_t)(n > 0 ? n : 1));
    if (both && rank == 0) {
        memcpy(both, t->k, sizeof(double) * (size_t)n);
        memcpy(both + n, t->v, sizeof(double) * (size_t)n);
    }
    st = fs_error_agree(comm, both ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory"));
    if (st == FS_OK)
        st = fs_bcast_bytes(comm, 0, both, (int64_t)sizeof(double) * 2 * n);
    free(t->k);
    t->k = both;
    t->v = both ? both + n : NULL;
    t->nrows = (int)n;
    return st;
}

typedef struct table_read {
    fs_table *t;
    const char *file, *what;
} table_read;

static fs_status read_one(void *arg)
{
    table_read *r = arg;
    return read_table(r->t, r->file, r->what);
}

fs_status fs_table_load(MPI_Comm comm, const char *file, const char *what, fs_table *t)
{
    int rank = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed"));
    table_read r = {t, file, what};
    fs_status st = fs_root_decides(comm, read_one, &r);
    return st == FS_OK ? share_table(comm, rank, t) : st;
}

void fs_table_free(fs_table *t)
{
    free(t->k);
    t->k = t->v = NULL;
    t->nrows = 0;
}

double fs_table_at(const fs_table *t, double k)
{
    int lo = 0, hi = t->nrows - 1;
    if (k >= t->k[hi])
        return t->v[hi];
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (t->k[mid] <= k)
            lo = mid;
        else
            hi = mid;
    }
    double w = (k - t->k[lo]) / (t->k[hi] - t->k[lo]);
    double d = t->v[hi] - t->v[lo];
    /* Values of opposite signs near the largest double: their difference
     * overflows, the weighted sum does not (and w = 0 times inf was NaN). */
    return isfinite(d) ? t->v[lo] + w * d : t->v[lo] * (1.0 - w) + t->v[hi] * w;
}
