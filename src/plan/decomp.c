/* SPDX-License-Identifier: GPL-3.0-or-later */
/* decomp: see decomp.h. */
#include "config.h"

#include "plan/decomp.h"

#include <stdlib.h>
#include <string.h>

#include "core/prefix.h"

/* [member * nstages + stage]: inclusive counts along grid dimension g. */
typedef struct shares {
    const fs_transform *t;
    int64_t *prefix[2];
} shares;

/* The box of member m (coordinate along dim g) of this rank's dim-g
 * communicator in stage s: `mine` with the dim-g axis moved. */
static fs_box member_box(const shares *sh, fs_box mine, int s, int g, int m)
{
    const fs_transform *t = sh->t;
    int a = t->split[s][g], ns = t->nstages;
    const int64_t *p = sh->prefix[g];
    int64_t incl = p[(size_t)m * (size_t)ns + (size_t)s];
    int64_t start = m ? p[(size_t)(m - 1) * (size_t)ns + (size_t)s] : 0;
    if (a >= 0) {
        mine.start[a] = start;
        mine.count[a] = incl - start;
    } else if (a == FS_GATHER) {
        /* everything on member 0, nothing elsewhere */
        mine = fs_box_full(t->ndim, t->shape);
        if (incl - start == 0)
            for (int k = 0; k < mine.ndim; k++)
                mine.count[k] = 0;
    }
    return mine;
}

/* The grid communicators and the running sums of every member's shares. */
static fs_status make_shares(MPI_Comm comm, const fs_transform *t, fs_decomposition *d, shares *sh)
{
    int rank, ns = t->nstages;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed");
    d->coord[0] = rank / t->grid[1];
    d->coord[1] = rank % t->grid[1];
    if (MPI_Comm_split(comm, d->coord[1], d->coord[0], &d->dim_comm[0]) != MPI_SUCCESS ||
        MPI_Comm_split(comm, d->coord[0], d->coord[1], &d->dim_comm[1]) != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_split failed");
    for (int g = 0; g < 2; g++) {
        if (MPI_Comm_set_errhandler(d->dim_comm[g], MPI_ERRORS_RETURN) != MPI_SUCCESS)
            return fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_set_errhandler failed");
        int64_t share[FS_MAX_STAGES] = {0}, ignored;
        for (int s = 0; s < ns; s++) {
            int a = t->split[s][g];
            if (a >= 0)
                fs_split_block(fs_domain_split_length(t, s, g), t->grid[g], d->coord[g],
                               &share[s], &ignored);
            else if (a == FS_GATHER)
                share[s] = d->coord[g] == 0 ? t->shape[0] : 0;
        }
        sh->prefix[g] = malloc((size_t)t->grid[g] * (size_t)ns * sizeof(int64_t));
        if (!sh->prefix[g])
            return fs_error_set(FS_ERR_RUNTIME, "out of memory");
        fs_status st = fs_prefix_broadcast_int64(d->dim_comm[g], share, ns, FS_PREFIX_SUM,
                                                 sh->prefix[g]);
        if (st != FS_OK)
            return st;
    }
    return FS_OK;
}

/* The redistribution of exchange e (and its reverse with with_back). */
static fs_status make_redist(const shares *sh, fs_decomposition *d, int e, int with_back)
{
    const fs_transform *t = sh->t;
    int g = fs_transform_exchange_dim(t, e), n = t->grid[g];
    fs_box *from = calloc((size_t)n, sizeof *from), *to = calloc((size_t)n, sizeof *to);
    if (from && to) {
        for (int m = 0; m < n; m++) {
            from[m] = member_box(sh, d->box[e], e, g, m);
            to[m] = member_box(sh, d->box[e + 1], e + 1, g, m);
        }
        d->rd[e] = fs_redist_new(n, d->coord[g], from, to);
        if (with_back)
            d->rd_back[e] = fs_redist_new(n, d->coord[g], to, from);
    }
    free(from);
    free(to);
    if (!d->rd[e] || (with_back && !d->rd_back[e]))
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    return FS_OK;
}

fs_status fs_decomposition_new(MPI_Comm comm, const fs_transform *t, int with_back,
                               fs_decomposition **out)
{
    *out = NULL;
    fs_decomposition *d = calloc(1, sizeof *d);
    if (!d)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    d->nstages = t->nstages;
    d->dim_comm[0] = d->dim_comm[1] = MPI_COMM_NULL;
    shares sh = {t, {NULL, NULL}};
    fs_status st = make_shares(comm, t, d, &sh);
    for (int s = 0; s < t->nstages && st == FS_OK; s++) {
        d->box[s] = fs_box_full(t->ndim, t->shape);
        for (int g = 0; g < 2; g++)
            d->box[s] = member_box(&sh, d->box[s], s, g, d->coord[g]);
    }
    for (int e = 0; e + 1 < t->nstages && st == FS_OK; e++)
        st = make_redist(&sh, d, e, with_back);
    free(sh.prefix[0]);
    free(sh.prefix[1]);
    if (st != FS_OK)
        fs_decomposition_free(&d);
    *out = d;
    return st;
}

void fs_decomposition_free(fs_decomposition **dp)
{
    fs_decomposition *d = *dp;
    if (!d)
        return;
    for (int e = 0; e < FS_MAX_EXCH; e++) {
        fs_redist_free(&d->rd[e]);
        fs_redist_free(&d->rd_back[e]);
    }
    for (int g = 0; g < 2; g++)
        if (d->dim_comm[g] != MPI_COMM_NULL)
            MPI_Comm_free(&d->dim_comm[g]);
    free(d);
    *dp = NULL;
}

const fs_box *fs_decomposition_first(const fs_decomposition *d)
{
    return &d->box[0];
}

const fs_box *fs_decomposition_last(const fs_decomposition *d)
{
    return &d->box[d->nstages - 1];
}

int64_t fs_decomposition_max_elems(const fs_decomposition *d)
{
    int64_t need = 1;
    for (int s = 0; s < d->nstages; s++)
        need = fs_box_elems(&d->box[s]) > need ? fs_box_elems(&d->box[s]) : need;
    return need;
}
