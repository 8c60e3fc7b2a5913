/* SPDX-License-Identifier: GPL-3.0-or-later */
/* blocked: see blocked.h. */
#include "config.h"

#include "exchange/blocked.h"

#include <stdlib.h>
#include <string.h>

/* A permutation of units as runs: units [src, src + len) move to
 * [dst, dst + len). Complete maps cover every unit on both sides and are
 * sorted by src. */
typedef struct run {
    int64_t src, dst, len;
} run;

typedef struct run_map {
    run *r;
    int64_t n, cap;
} run_map;

struct fs_blocked {
    int npeers;
    size_t elem_bytes;
    int64_t slot_elems;
    int64_t unit_elems;        /* elements moved as one unit */
    int64_t nunits;            /* units in the buffer */
    run_map pack, unpack;      /* inverse maps: destination unit -> source unit */
    unsigned char *visited;    /* one bit per unit */
    unsigned char *carry;      /* one unit */
    /* zero-filled ranges (in elements) after pack: the slots' padding */
    int64_t *pad_start, *pad_len;
};

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static int map_add(run_map *m, int64_t src, int64_t dst, int64_t len)
{
    if (len == 0)
        return 0;
    /* Merge with the previous run when both sides continue it. */
    if (m->n > 0 && m->r[m->n - 1].src + m->r[m->n - 1].len == src &&
        m->r[m->n - 1].dst + m->r[m->n - 1].len == dst) {
        m->r[m->n - 1].len += len;
        return 0;
    }
    if (m->n == m->cap) {
        int64_t cap = m->cap ? 2 * m->cap : 64;
        run *r = realloc(m->r, (size_t)cap * sizeof *r);
        if (!r)
            return -1;
        m->r = r;
        m->cap = cap;
    }
    m->r[m->n++] = (run){src, dst, len};
    return 0;
}

static void map_free(run_map *m)
{
    free(m->r);
    memset(m, 0, sizeof *m);
}

static int by_src(const void *a, const void *b)
{
    int64_t x = ((const run *)a)->src, y = ((const run *)b)->src;
    return x < y ? -1 : x > y;
}

static int by_dst(const void *a, const void *b)
{
    int64_t x = ((const run *)a)->dst, y = ((const run *)b)->dst;
    return x < y ? -1 : x > y;
}

/* Where unit u goes (m complete and sorted by src). */
static int64_t map_apply(const run_map *m, int64_t u)
{
    int64_t lo = 0, hi = m->n - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (m->r[mid].src <= u)
            lo = mid;
        else
            hi = mid - 1;
    }
    return m->r[lo].dst + (u - m->r[lo].src);
}

typedef struct gcd_ctx {
    int64_t gcd, runs;
} gcd_ctx;

/* The gcd of every run's offset and length (fs_box_runs), by arithmetic: the
 * runs' offsets are base + sum index[k] * stride[k], whose gcd is that of
 * base and the strides of the axes with more than one index; their length
 * is one. A billion runs then cost nothing to a dry run. */
static void runs_gcd(const fs_box *inner, const fs_box *outer, gcd_ctx *g)
{
    if (fs_box_elems(inner) == 0)
        return;
    int ndim = inner->ndim, run_axis = ndim - 1;
    int64_t len = inner->count[ndim - 1];
    while (run_axis > 0 && inner->count[run_axis] == outer->count[run_axis]) {
        run_axis--;
        len *= inner->count[run_axis];
    }
    int64_t stride = 1, runs = 1, d = gcd64(g->gcd, len);
    d = gcd64(d, fs_box_offset_in(inner, outer));
    for (int k = ndim - 1; k >= 0; k--) {
        if (k < run_axis && inner->count[k] > 1)
            d = gcd64(d, stride);
        if (k < run_axis)
            runs *= inner->count[k];
        stride *= outer->count[k];
    }
    g->gcd = d;
    g->runs += runs;
}

/* Add the runs of inner inside outer to m, in units: from outer's storage
 * to the packed copy at slot_base (to_packed), or back. */
static int map_box(run_map *m, const fs_box *inner, const fs_box *outer, int64_t slot_base,
                   int64_t unit, int to_packed)
{
    fs_box_runs w;
    fs_box_runs_begin(&w, inner, outer, NULL, 0);
    int64_t len = w.run_elems / unit;
    while (fs_box_runs_next(&w)) {
        int64_t o = w.offset / unit, p = (slot_base + w.other_offset) / unit;
        if (to_packed ? map_add(m, o, p, len) : map_add(m, p, o, len))
            return -1;
    }
    return 0;
}

/* The complement of the sorted runs' `field` ranges in [0, nunits), as runs
 * with only src (start) and len set. */
static int complement(const run_map *sorted, int use_dst, int64_t nunits, run_map *out)
{
    int64_t cursor = 0;
    for (int64_t i = 0; i < sorted->n; i++) {
        int64_t start = use_dst ? sorted->r[i].dst : sorted->r[i].src;
        if (start > cursor && map_add(out, cursor, -1, start - cursor))
            return -1;
        cursor = start + sorted->r[i].len;
    }
    if (cursor < nunits && map_add(out, cursor, -1, nunits - cursor))
        return -1;
    return 0;
}

/* Complete a map whose sources and destinations are each disjoint into a
 * permutation of [0, nunits): the unmapped sources (padding) go, in order,
 * to the destinations no run reaches. */
static int map_complete(run_map *m, int64_t nunits)
{
    int ret = -1;
    run_map free_src = {0}, free_dst = {0}, tmp = {0};
    /* A rank that sends nothing has no runs yet, and no array: qsort and
     * memcpy must not see its NULL even with a count of 0. */
    if (m->n > 0)
        qsort(m->r, (size_t)m->n, sizeof *m->r, by_src);
    if (complement(m, 0, nunits, &free_src))
        goto done;
    tmp.r = malloc((size_t)(m->n ? m->n : 1) * sizeof *tmp.r);
    if (!tmp.r)
        goto done;
    if (m->n > 0)
        memcpy(tmp.r, m->r, (size_t)m->n * sizeof *tmp.r);
    tmp.n = tmp.cap = m->n;
    qsort(tmp.r, (size_t)tmp.n, sizeof *tmp.r, by_dst);
    if (complement(&tmp, 1, nunits, &free_dst))
        goto done;
    int64_t i = 0, j = 0, si = 0, dj = 0;
    while (i < free_src.n && j < free_dst.n) {
        int64_t a = free_src.r[i].len - si, b = free_dst.r[j].len - dj;
        int64_t len = a < b ? a : b;
        if (map_add(m, free_src.r[i].src + si, free_dst.r[j].src + dj, len))
            goto done;
        si += len;
        dj += len;
        if (si == free_src.r[i].len)
            i++, si = 0;
        if (dj == free_dst.r[j].len)
            j++, dj = 0;
    }
    if (i != free_src.n || j != free_dst.n)
        goto done; /* not a permutation: a planning bug */
    if (m->n > 0)
        qsort(m->r, (size_t)m->n, sizeof *m->r, by_src);
    ret = 0;
done:
    map_free(&free_src);
    map_free(&free_dst);
    map_free(&tmp);
    return ret;
}

/* Apply the permutation whose inverse is `inv` (runs from destination to
 * source, sorted by destination): each cycle is walked backwards, pulling
 * the unit that belongs at the current place into it, so every unit is
 * copied once and one unit of scratch holds the cycle's first. */
static void permute(fs_blocked *b, const run_map *inv, void *data)
{
    size_t ub = (size_t)b->unit_elems * b->elem_bytes;
    unsigned char *base = data;
    memset(b->visited, 0, (size_t)(b->nunits + 7) / 8);
    for (int64_t r = 0; r < inv->n; r++) {
        /* Runs that stay in place need no work. */
        if (inv->r[r].src == inv->r[r].dst)
            continue;
        for (int64_t start = inv->r[r].src; start < inv->r[r].src + inv->r[r].len; start++) {
            if (b->visited[start >> 3] & (1u << (start & 7)))
                continue;
            memcpy(b->carry, base + (size_t)start * ub, ub);
            int64_t cur = start;
            for (;;) {
                b->visited[cur >> 3] |= (unsigned char)(1u << (cur & 7));
                int64_t from = map_apply(inv, cur);
                if (from == start) {
                    memcpy(base + (size_t)cur * ub, b->carry, ub);
                    break;
                }
                memcpy(base + (size_t)cur * ub, base + (size_t)from * ub, ub);
                cur = from;
            }
        }
    }
}

/* The inverse of a complete map, sorted for map_apply. */
static int map_invert(const run_map *m, run_map *inv)
{
    memset(inv, 0, sizeof *inv);
    inv->r = malloc((size_t)(m->n ? m->n : 1) * sizeof *inv->r);
    if (!inv->r)
        return -1;
    for (int64_t i = 0; i < m->n; i++)
        inv->r[i] = (run){m->r[i].dst, m->r[i].src, m->r[i].len};
    inv->n = inv->cap = m->n;
    qsort(inv->r, (size_t)inv->n, sizeof *inv->r, by_src);
    return 0;
}

/* Slot and unit sizes of rd's layout, the units it permutes (the slots,
 * and the boxes' storage where it is longer: a box the blocks do not
 * fill, as free space's second stage, whose zeros are written after the
 * exchange), and how many runs its boxes have. */
static void geometry(const fs_redist *rd, size_t elem_bytes, int64_t *slot_out, int64_t *unit_out,
                     int64_t *nunits, int64_t *runs)
{
    int P = rd->npeers;
    int64_t slot = 1;
    for (int q = 0; q < P; q++) {
        if (rd->send_elems[q] > slot)
            slot = rd->send_elems[q];
        if (rd->recv_elems[q] > slot)
            slot = rd->recv_elems[q];
    }
    /* The unit divides the slot size and every run's length and offset on
     * both sides, so each side is a whole number of units. */
    gcd_ctx g = {slot, 0};
    for (int q = 0; q < P; q++) {
        runs_gcd(&rd->send[q], &rd->from, &g);
        runs_gcd(&rd->recv[q], &rd->to, &g);
    }
    int64_t from = fs_box_elems(&rd->from), to = fs_box_elems(&rd->to);
    int64_t domain = (int64_t)P * slot;
    domain = from > domain ? from : domain;
    domain = to > domain ? to : domain;
    int64_t unit = gcd64(gcd64(g.gcd, from), to);
    /* Units above 256 KiB are split (any divisor works) to bound scratch. */
    const int64_t max_unit_bytes = 256 * 1024;
    if ((int64_t)elem_bytes * unit > max_unit_bytes) {
        int64_t parts = ((int64_t)elem_bytes * unit + max_unit_bytes - 1) / max_unit_bytes;
        while (unit % parts)
            parts++;
        unit /= parts;
    }
    *slot_out = slot;
    *unit_out = unit;
    *nunits = domain / unit;
    *runs = g.runs;
}

void fs_blocked_estimate(const fs_redist *rd, size_t elem_bytes, int64_t *buffer_elems,
                         size_t *scratch_bytes)
{
    int64_t slot, unit, nunits, runs;
    geometry(rd, elem_bytes, &slot, &unit, &nunits, &runs);
    *buffer_elems = nunits * unit;
    /* The two kept maps: a run per box run (merging only removes some) and
     * the padding's runs, cut at most at every slot's end on either side. */
    *scratch_bytes = (size_t)(nunits + 7) / 8 + 1 + (size_t)unit * elem_bytes +
                     (size_t)(runs + 4 * (int64_t)rd->npeers) * sizeof(run) +
                     2 * (size_t)rd->npeers * sizeof(int64_t);
}

void fs_blocked_free(fs_blocked **pb)
{
    fs_blocked *b = *pb;
    if (!b)
        return;
    map_free(&b->pack);
    map_free(&b->unpack);
    free(b->visited);
    free(b->carry);
    free(b->pad_start);
    free(b->pad_len);
    free(b);
    *pb = NULL;
}

fs_status fs_blocked_new(const fs_redist *rd, size_t elem_bytes, const int *slot_of_source,
                         fs_blocked **out)
{
    *out = NULL;
    fs_blocked *b = calloc(1, sizeof *b);
    if (!b)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory planning the blocked layout");
    int P = rd->npeers;
    b->npeers = P;
    b->elem_bytes = elem_bytes;
    int64_t slot, unit, runs;
    geometry(rd, elem_bytes, &slot, &unit, &b->nunits, &runs);
    b->slot_elems = slot;
    b->unit_elems = unit;
    size_t ub = (size_t)unit * elem_bytes;
    b->visited = malloc((size_t)(b->nunits + 7) / 8 + 1);
    b->carry = malloc(ub);
    b->pad_start = calloc((size_t)P, sizeof *b->pad_start);
    b->pad_len = calloc((size_t)P, sizeof *b->pad_len);
    if (!b->visited || !b->carry || !b->pad_start || !b->pad_len)
        goto oom;

    /* pack: the from box -> slot q at q * slot. */
    for (int q = 0; q < P; q++) {
        if (map_box(&b->pack, &rd->send[q], &rd->from, (int64_t)q * slot, unit, 1))
            goto oom;
        b->pad_start[q] = (int64_t)q * slot + rd->send_elems[q];
        b->pad_len[q] = slot - rd->send_elems[q];
    }
    /* unpack: the slot holding the block from peer q -> its place in `to`. */
    for (int q = 0; q < P; q++) {
        int sl = slot_of_source ? slot_of_source[q] : q;
        if (map_box(&b->unpack, &rd->recv[q], &rd->to, (int64_t)sl * slot, unit, 0))
            goto oom;
    }
    if (map_complete(&b->pack, b->nunits) || map_complete(&b->unpack, b->nunits))
        goto oom;
    /* permute() walks cycles backwards: keep the inverse maps. */
    run_map inv_pack, inv_unpack;
    if (map_invert(&b->pack, &inv_pack))
        goto oom;
    if (map_invert(&b->unpack, &inv_unpack)) {
        map_free(&inv_pack);
        goto oom;
    }
    map_free(&b->pack);
    map_free(&b->unpack);
    b->pack = inv_pack;
    b->unpack = inv_unpack;
    *out = b;
    return FS_OK;
oom:
    fs_blocked_free(&b);
    return fs_error_set(FS_ERR_RUNTIME, "out of memory planning the blocked layout");
}

int64_t fs_blocked_slot_elems(const fs_blocked *b)
{
    return b->slot_elems;
}

void fs_blocked_pack(fs_blocked *b, void *data)
{
    permute(b, &b->pack, data);
    /* Padding is zeroed, so the XOR of two padded slots is defined. */
    for (int q = 0; q < b->npeers; q++)
        memset((unsigned char *)data + (size_t)b->pad_start[q] * b->elem_bytes, 0,
               (size_t)b->pad_len[q] * b->elem_bytes);
}

void fs_blocked_unpack(fs_blocked *b, void *data)
{
    permute(b, &b->unpack, data);
}
