/* SPDX-License-Identifier: GPL-3.0-or-later */
/* route: see route.h. */
#include "config.h"

#include "sources/route.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/collective.h"
#include "core/testhooks.h"
#include "io/finite.h"
#include "io/h5io.h"

#define MAX_ROUND_BYTES ((int64_t)1 << 30) /* MPI counts of doubles stay ints */

typedef struct router {
    MPI_Comm comm;
    int rank, nranks;
    const fs_paint_table *tab;
    fs_paint_mesh *mesh;
    int allow_nonfinite, weighted, stride;
    int64_t rows;                   /* per round */
    int64_t per_dest;               /* rows to one rank per piece */
    double *pos, *wts, *send;
    int *dest;
    int *counts;                    /* 4 P: sent and received (doubles), their displacements */
    int64_t *nper, *at;             /* rows of this round per rank, where each goes */
    int64_t bad, bad_first;         /* positions beyond a period, the first's flat index */
    fs_finite fin_pos, fin_wts;
    fs_paint_route_stats *st;
} router;

int64_t fs_paint_route_rows(int stride)
{
    int64_t bytes = fs_testhooks_paint_round_bytes();
    bytes = bytes ? bytes : FS_PAINT_ROUND_BYTES;
    bytes = bytes < MAX_ROUND_BYTES ? bytes : MAX_ROUND_BYTES;
    int64_t rows = bytes / (8 * stride);
    return rows > 0 ? rows : 1;
}

int64_t fs_paint_route_bytes(int stride, int nranks, int64_t rows, int64_t *received)
{
    /* as fs_paint_route sizes them: a round; what the largest share fills
     * of it */
    int64_t round = fs_paint_route_rows(stride);
    int64_t share = rows < 0 ? round : (rows + nranks - 1) / nranks;
    int64_t m = share < round ? share : round;
    if (received)
        *received = rows < 0 ? INT64_MAX : rows;
    /* read (positions and weights), sent, their ranks (the received rows
     * are mesh.c's pending ones) */
    return m * (16 * stride + 4) + (int64_t)nranks * 32;
}

static fs_status router_new(router *rt)
{
    int64_t n = rt->rows;
    rt->pos = malloc(sizeof(double) * (size_t)(n * rt->tab->ndim));
    rt->wts = malloc(sizeof(double) * (size_t)n);
    rt->send = malloc(sizeof(double) * (size_t)(n * rt->stride));
    rt->dest = malloc(sizeof(int) * (size_t)n);
    rt->counts = malloc(sizeof(int) * 4 * (size_t)rt->nranks);
    rt->nper = malloc(sizeof(int64_t) * 2 * (size_t)rt->nranks);
    rt->at = rt->nper + rt->nranks;
    if (!rt->pos || !rt->wts || !rt->send || !rt->dest || !rt->counts || !rt->nper)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory for the particles' rounds");
    return FS_OK;
}

static void router_free(router *rt)
{
    free(rt->pos);
    free(rt->wts);
    free(rt->send);
    free(rt->dest);
    free(rt->counts);
    free(rt->nper);
}

/* Rows [lo, lo + m) of a table of ndim dims (N x cols, or N) into out. */
static fs_status read_rows(router *rt, const fs_input_info *info, const fs_shard_set *shards,
                           int64_t lo, int64_t m, double *out)
{
    fs_box box;
    memset(&box, 0, sizeof box);
    box.ndim = info->ndim;
    box.start[0] = lo;
    box.count[0] = m;
    for (int a = 1; a < info->ndim; a++)
        box.count[a] = m ? info->shape[a] : 0;
    fs_io_map map = fs_io_map_plain(&box, FS_DTYPE_FLOAT64);
    double t0 = MPI_Wtime();
    fs_status st = fs_h5_read(rt->comm, rt->tab->file, info, shards, &map, out, NULL, NULL, NULL);
    rt->st->read_s += MPI_Wtime() - t0;
    return st;
}

static void note_nonfinite(fs_finite *f, int64_t flat)
{
    f->count++;
    if (flat < f->first)
        f->first = flat;
}

/* Row lo + j checked and wrapped; its destination (-1: not painted). */
static void check_row(router *rt, int64_t lo, int64_t j)
{
    const fs_paint_table *tab = rt->tab;
    double *x = rt->pos + j * tab->ndim;
    int skip = 0;
    for (int a = 0; a < tab->ndim; a++) {
        double L = tab->box[a];
        int64_t flat = (lo + j) * (tab->pos->ndim > 1 ? tab->pos->shape[1] : 1) + a;
        if (!isfinite(x[a])) {
            note_nonfinite(&rt->fin_pos, flat);
            skip = 1;
        } else if (x[a] < -L || x[a] >= 2 * L) {
            rt->bad++;
            rt->bad_first = flat < rt->bad_first ? flat : rt->bad_first;
            skip = 1;
        } else {
            x[a] = x[a] < 0 ? x[a] + L : x[a] >= L ? x[a] - L : x[a];
            x[a] = x[a] < L ? x[a] : 0.0; /* -tiny + L rounds to L */
        }
    }
    if (rt->weighted && !isfinite(rt->wts[j]))
        note_nonfinite(&rt->fin_wts, lo + j);
    rt->st->skipped += skip;
    rt->dest[j] = skip ? -1 : fs_paint_mesh_owner(rt->mesh, x);
}

/* This round's rows sorted by destination into the send buffer, as rows of
 * stride doubles; the kept rows' weights summed. */
static void sort_rows(router *rt, int64_t m)
{
    int D = rt->tab->ndim;
    int64_t *at = rt->at;
    memset(rt->nper, 0, sizeof(int64_t) * 2 * (size_t)rt->nranks);
    for (int64_t j = 0; j < m; j++)
        if (rt->dest[j] >= 0)
            rt->nper[rt->dest[j]]++;
    for (int r = 1; r < rt->nranks; r++)
        at[r] = at[r - 1] + rt->nper[r - 1];
    for (int64_t j = 0; j < m; j++) {
        if (rt->dest[j] < 0)
            continue;
        double *row = rt->send + at[rt->dest[j]]++ * rt->stride, w = rt->weighted ? rt->wts[j] : 1;
        memcpy(row, rt->pos + j * D, sizeof(double) * (size_t)D);
        if (rt->weighted)
            row[D] = w;
        rt->st->kept++;
        rt->st->sum_w += w;
        rt->st->sum_w2 += w * w;
    }
}

/* Piece s of the sorted rows: at most per_dest rows to each rank, sent,
 * received into the pending rows and painted when they are full. */
static fs_status send_piece(router *rt, int64_t s)
{
    int P = rt->nranks, *sc = rt->counts, *rc = sc + P, *sd = sc + 2 * P, *rd = sc + 3 * P;
    int64_t first = 0;
    for (int r = 0; r < P; r++) {
        int64_t from = s * rt->per_dest, left = rt->nper[r] - from;
        int64_t n = left < 0 ? 0 : left < rt->per_dest ? left : rt->per_dest;
        sc[r] = (int)(n * rt->stride);
        sd[r] = (int)((first + (from < rt->nper[r] ? from : rt->nper[r])) * rt->stride);
        first += rt->nper[r];
        rt->st->bytes_sent += r != rt->rank ? (int64_t)sc[r] * 8 : 0;
    }
    if (MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, rt->comm) != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Alltoall of the particles' counts failed");
    int64_t total = 0;
    for (int r = 0; r < P; r++) {
        rd[r] = (int)total;
        total += rc[r];
    }
    fs_status painted; /* the pending rows, painted to make room (a failure leaves it) */
    double *into = fs_paint_mesh_reserve(rt->mesh, total / rt->stride, &painted);
    if (MPI_Alltoallv(rt->send, sc, sd, MPI_DOUBLE, into, rc, rd, MPI_DOUBLE, rt->comm) !=
        MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Alltoallv of the particles failed");
    rt->st->received += total / rt->stride;
    fs_status st = fs_paint_mesh_add(rt->mesh, total / rt->stride);
    return painted != FS_OK ? painted : st;
}

/* The round's rows to their ranks, in as many pieces as the rank with the
 * most rows for one destination needs. */
static fs_status send_round(router *rt, int64_t m)
{
    sort_rows(rt, m);
    int64_t most = 0;
    for (int r = 0; r < rt->nranks; r++)
        most = rt->nper[r] > most ? rt->nper[r] : most;
    /* the pieces, and whether a rank's waiting particles would not leave
     * room for a round: then every rank paints its own now, together (one
     * painting alone would keep the others waiting in the next exchange) */
    int64_t v[2] = {(most + rt->per_dest - 1) / rt->per_dest,
                    fs_paint_mesh_room(rt->mesh) < rt->rows}, pieces;
    fs_status st = fs_allreduce(rt->comm, MPI_IN_PLACE, v, 2, MPI_INT64_T, MPI_MAX);
    if (st == FS_OK && v[1])
        st = fs_error_agree_shared(rt->comm, fs_paint_mesh_flush(rt->mesh));
    pieces = v[0];
    for (int64_t s = 0; s < pieces && st == FS_OK; s++)
        st = fs_error_agree_shared(rt->comm, send_piece(rt, s));
    return st;
}

/* Once a round found positions it cannot paint: every rank says the same. */
static fs_status refuse(router *rt)
{
    char name[FS_INPUT_NAME_MAX];
    const fs_input_info *pos = rt->tab->pos;
    fs_input_name(rt->tab->file, pos, name, sizeof name);
    int64_t mine[2] = {rt->bad, rt->bad_first}, all[2];
    fs_status st = fs_allreduce_sum_min(rt->comm, mine, all);
    if (st == FS_OK && all[0] > 0) {
        int64_t cols = pos->ndim > 1 ? pos->shape[1] : 1;
        return fs_error_set(FS_ERR_INPUT, "%s: %lld position%s more than a period outside the "
                            "box [0, L) (L %g%s), the first at [%lld, %lld]; give the box's "
                            "length with --box-size", name, (long long)all[0],
                            all[0] == 1 ? " lies" : "s lie", rt->tab->box[0],
                            rt->tab->ndim > 1 ? " on axis 0" : "", (long long)(all[1] / cols),
                            (long long)(all[1] % cols));
    }
    if (st == FS_OK && !rt->allow_nonfinite)
        st = fs_finite_agree(rt->comm, &rt->fin_pos, name);
    if (st == FS_OK && rt->weighted && !rt->allow_nonfinite) {
        fs_input_name(rt->tab->file, rt->tab->wts, name, sizeof name);
        st = fs_finite_agree(rt->comm, &rt->fin_wts, name);
    }
    return st;
}

/* Round r of this rank's share [lo, hi): read, checked, sent and painted.
 * *stop (out): a rank found what it cannot paint. */
static fs_status round_of(router *rt, int64_t lo, int64_t hi, int64_t r, int *stop)
{
    const fs_paint_table *tab = rt->tab;
    int64_t from = lo + r * rt->rows, m = hi - from < rt->rows ? hi - from : rt->rows;
    m = m > 0 ? m : 0;
    fs_status st = read_rows(rt, tab->pos, tab->pos_shards, from, m, rt->pos);
    if (st == FS_OK && tab->wts)
        st = read_rows(rt, tab->wts, tab->wts_shards, from, m, rt->wts);
    if ((st = fs_error_agree_shared(rt->comm, st)) != FS_OK)
        return st;
    double t0 = MPI_Wtime();
    for (int64_t j = 0; j < m; j++)
        check_row(rt, from, j);
    int64_t flags = rt->bad + (rt->allow_nonfinite ? 0 : rt->fin_pos.count + rt->fin_wts.count);
    st = fs_allreduce(rt->comm, MPI_IN_PLACE, &flags, 1, MPI_INT64_T, MPI_SUM);
    *stop = flags > 0;
    if (st == FS_OK && !*stop)
        st = send_round(rt, m);
    rt->st->paint_s += MPI_Wtime() - t0;
    return st;
}

fs_status fs_paint_route(MPI_Comm comm, const fs_paint_table *tab, fs_paint_mesh *mesh,
                         int allow_nonfinite, fs_progress *progress, fs_paint_route_stats *out)
{
    memset(out, 0, sizeof *out);
    router rt = {.comm = comm, .tab = tab, .mesh = mesh, .allow_nonfinite = allow_nonfinite,
                 .weighted = tab->wts != NULL, .bad_first = INT64_MAX, .st = out};
    fs_status st = FS_OK;
    if (MPI_Comm_rank(comm, &rt.rank) != MPI_SUCCESS || MPI_Comm_size(comm, &rt.nranks) != MPI_SUCCESS)
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed");
    rt.stride = tab->ndim + rt.weighted;
    rt.rows = fs_paint_route_rows(rt.stride);
    /* a piece fits every rank's pending rows (at least a row per rank) */
    int64_t room = fs_paint_mesh_capacity(mesh);
    room = room < rt.rows ? room : rt.rows;
    if (st == FS_OK)
        st = fs_allreduce(comm, MPI_IN_PLACE, &room, 1, MPI_INT64_T, MPI_MIN);
    rt.per_dest = room / rt.nranks > 0 ? room / rt.nranks : 1;
    fs_finite_begin(&rt.fin_pos, tab->pos->ndim, tab->pos->shape, 0);
    if (tab->wts)
        fs_finite_begin(&rt.fin_wts, tab->wts->ndim, tab->wts->shape, 0);
    if (st == FS_OK)
        st = router_new(&rt);
    st = fs_error_agree_shared(comm, st);
    /* equal shares; as many rounds as the largest needs, on every rank */
    int64_t N = tab->rows, P = rt.nranks, lo = N / P * rt.rank + (N % P < rt.rank ? N % P : rt.rank);
    int64_t hi = lo + N / P + (rt.rank < N % P), most = N / P + (N % P > 0);
    int64_t rounds = (most + rt.rows - 1) / rt.rows;
    fs_progress_begin(progress, "paint", (double)(hi - lo) * 8 * rt.stride, "B");
    int stop = 0;
    for (int64_t r = 0; r < rounds && st == FS_OK && !stop; r++) {
        st = round_of(&rt, lo, hi, r, &stop);
        out->rounds++;
        fs_progress_callback(progress, (double)((r + 1) * rt.rows) * 8 * rt.stride);
    }
    fs_progress_end(progress);
    if (st == FS_OK && stop)
        st = refuse(&rt);
    router_free(&rt);
    return st;
}
