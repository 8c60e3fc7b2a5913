/* SPDX-License-Identifier: GPL-3.0-or-later */
/* table: see table.h. */
#include "config.h"

#include "io/table.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/collective.h"

/* A table's rows at most (a text file of that many lines is read by rank 0). */
#define MAX_TABLE_ROWS (1 << 24)

/* Rank 0: the table t from `file`; what + file names it in messages. */
static fs_status read_table(fs_table *t, const char *file, const char *what)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return fs_error_set(FS_ERR_INPUT, "%s%s: %s", what, file, strerror(errno));
    fs_status st = FS_OK;
    char line[4096];
    int cap = 0, lineno = 0;
    while (st == FS_OK && fgets(line, sizeof line, f)) {
        lineno++;
        char *p = line + strspn(line, " \t");
        if (*p == '#' || *p == '\n' || *p == '\r' || *p == '\0')
            continue;
        double k, v;
        char extra;
        if (sscanf(p, "%lf %lf %c", &k, &v, &extra) != 2 || !isfinite(k) || !isfinite(v) || k < 0)
            st = fs_error_set(FS_ERR_INPUT, "%s%s: line %d: expected two numbers k %s (k >= 0)",
                              what, file, lineno, t->column);
        else if (t->nrows > 0 && !(k > t->k[t->nrows - 1]))
            st = fs_error_set(FS_ERR_INPUT, "%s%s: line %d: k must increase", what, file, lineno);
        else if (t->nrows == MAX_TABLE_ROWS)
            st = fs_error_set(FS_ERR_INPUT, "%s%s: more than %d rows", what, file, MAX_TABLE_ROWS);
        if (st == FS_OK && t->nrows == cap) {
            cap = cap ? 2 * cap : 256;
            double *grown = realloc(t->k, sizeof(double) * 2 * (size_t)cap);
            if (!grown) {
                st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
                break;
            }
            /* k in the first half, the values in the second: move them up. */
            if (t->nrows)
                memmove(grown + cap, grown + cap / 2, sizeof(double) * (size_t)t->nrows);
            t->k = grown;
            t->v = grown + cap;
        }
        if (st == FS_OK) {
            t->k[t->nrows] = k;
            t->v[t->nrows++] = v;
        }
    }
    if (st == FS_OK && ferror(f))
        st = fs_error_set(FS_ERR_INPUT, "%s%s: %s", what, file, strerror(errno));
    if (st == FS_OK && t->nrows < 2)
        st = fs_error_set(FS_ERR_INPUT, "%s%s: expected at least two rows k %s", what, file,
                          t->column);
    fclose(f);
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
