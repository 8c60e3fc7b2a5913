/* SPDX-License-Identifier: GPL-3.0-or-later */
/* layout: see layout.h. */
#include "config.h"

#include "core/layout.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fs_split_block(int64_t n, int nparts, int part, int64_t *count, int64_t *offset)
{
    int64_t base = n / nparts, extra = n % nparts;
    *count = base + (part < extra);
    *offset = part * base + (part < extra ? part : extra);
}

fs_box fs_box_full(int ndim, const int64_t *shape)
{
    fs_box b;
    memset(&b, 0, sizeof b);
    b.ndim = ndim;
    for (int k = 0; k < ndim; k++)
        b.count[k] = shape[k];
    return b;
}

fs_box fs_box_split(int ndim, const int64_t *shape, int axis, int nparts, int part)
{
    fs_box b = fs_box_full(ndim, shape);
    if (axis < 0) {
        if (part != 0)
            for (int k = 0; k < ndim; k++)
                b.count[k] = 0;
        return b;
    }
    fs_split_block(shape[axis], nparts, part, &b.count[axis], &b.start[axis]);
    return b;
}

int64_t fs_box_elems(const fs_box *b)
{
    int64_t n = 1;
    for (int k = 0; k < b->ndim; k++)
        n *= b->count[k];
    return n;
}

int fs_box_equal(const fs_box *a, const fs_box *b)
{
    int equal = a->ndim == b->ndim;
    for (int k = 0; equal && k < a->ndim; k++)
        equal = a->start[k] == b->start[k] && a->count[k] == b->count[k];
    return equal;
}

fs_box fs_box_intersect(const fs_box *a, const fs_box *b)
{
    fs_box r;
    memset(&r, 0, sizeof r);
    r.ndim = a->ndim;
    for (int k = 0; k < a->ndim; k++) {
        int64_t lo = a->start[k] > b->start[k] ? a->start[k] : b->start[k];
        int64_t a_hi = a->start[k] + a->count[k], b_hi = b->start[k] + b->count[k];
        int64_t hi = a_hi < b_hi ? a_hi : b_hi;
        r.start[k] = lo;
        r.count[k] = hi > lo ? hi - lo : 0;
    }
    /* An empty box is empty in every axis, so it compares and sizes simply. */
    if (fs_box_elems(&r) == 0)
        for (int k = 0; k < r.ndim; k++)
            r.count[k] = 0;
    return r;
}

int fs_box_is_contiguous_in(const fs_box *inner, const fs_box *outer)
{
    fs_box_runs w;
    fs_box_runs_begin(&w, inner, outer, NULL, 0);
    return w.nruns <= 1;
}

int64_t fs_box_offset_in(const fs_box *inner, const fs_box *outer)
{
    int64_t offset = 0;
    for (int k = 0; k < outer->ndim; k++)
        offset = offset * outer->count[k] + (inner->start[k] - outer->start[k]);
    return offset;
}

void fs_box_strides(const fs_box *b, int64_t stride[FS_LAYOUT_MAX_DIMS])
{
    int64_t s = 1;
    for (int k = b->ndim - 1; k >= 0; k--) {
        stride[k] = s;
        s *= b->count[k];
    }
}

void fs_box_runs_begin(fs_box_runs *w, const fs_box *inner, const fs_box *outer,
                       const fs_box *other, unsigned flags)
{
    if (!other)
        other = inner;
    int nd = inner->ndim;
    memset(w, 0, sizeof *w);
    w->index = -1;
    if (fs_box_elems(inner) == 0)
        return;
    /* The run: the last axis, and one axis more for every trailing axis
     * that is whole in both storages (the rows after it then follow on). */
    w->axis = nd > 0 ? nd - 1 : 0;
    w->run_elems = nd > 0 ? inner->count[nd - 1] : 1;
    while (!(flags & FS_BOX_RUNS_ROWS) && w->axis > 0 &&
           inner->count[w->axis] == outer->count[w->axis] &&
           inner->count[w->axis] == other->count[w->axis]) {
        w->axis--;
        w->run_elems *= inner->count[w->axis];
    }
    w->nruns = 1;
    for (int k = 0; k < w->axis; k++)
        w->nruns *= inner->count[k];
    for (int k = 0; k < nd; k++) {
        w->start[k] = w->at[k] = inner->start[k];
        w->count[k] = inner->count[k];
    }
    fs_box_strides(outer, w->stride);
    fs_box_strides(other, w->other_stride);
    w->first = fs_box_offset_in(inner, outer);
    w->other_first = fs_box_offset_in(inner, other);
}

void fs_box_runs_seek(fs_box_runs *w, int64_t i)
{
    w->index = i;
    w->offset = w->first;
    w->other_offset = w->other_first;
    for (int k = w->axis - 1; k >= 0; k--) {
        int64_t idx = i % w->count[k];
        i /= w->count[k];
        w->at[k] = w->start[k] + idx;
        w->offset += idx * w->stride[k];
        w->other_offset += idx * w->other_stride[k];
    }
}

static void box_copy(const fs_box *inner, const fs_box *outer, char *outer_data, char *packed,
                     size_t elem_bytes, int to_packed)
{
    fs_box_runs w;
    fs_box_runs_begin(&w, inner, outer, NULL, 0);
    size_t run_bytes = (size_t)w.run_elems * elem_bytes;
    while (fs_box_runs_next(&w)) {
        char *o = outer_data + (size_t)w.offset * elem_bytes;
        char *p = packed + (size_t)w.other_offset * elem_bytes;
        if (to_packed)
            memcpy(p, o, run_bytes);
        else
            memcpy(o, p, run_bytes);
    }
}

void fs_box_pack(const fs_box *inner, const fs_box *outer, const void *outer_data, void *packed,
                 size_t elem_bytes)
{
    box_copy(inner, outer, (char *)outer_data, packed, elem_bytes, 1);
}

void fs_box_unpack(const fs_box *inner, const fs_box *outer, void *outer_data, const void *packed,
                   size_t elem_bytes)
{
    box_copy(inner, outer, outer_data, (char *)packed, elem_bytes, 0);
}

fs_redist *fs_redist_new(int npeers, int self, const fs_box *from_all, const fs_box *to_all)
{
    fs_redist *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->npeers = npeers;
    r->self = self;
    r->from = from_all[self];
    r->to = to_all[self];
    r->send = calloc((size_t)npeers, sizeof *r->send);
    r->recv = calloc((size_t)npeers, sizeof *r->recv);
    r->send_elems = calloc((size_t)npeers, sizeof *r->send_elems);
    r->recv_elems = calloc((size_t)npeers, sizeof *r->recv_elems);
    r->peer_from = malloc((size_t)npeers * sizeof *r->peer_from);
    r->peer_to = malloc((size_t)npeers * sizeof *r->peer_to);
    if (!r->send || !r->recv || !r->send_elems || !r->recv_elems || !r->peer_from || !r->peer_to) {
        fs_redist_free(&r);
        return NULL;
    }
    memcpy(r->peer_from, from_all, (size_t)npeers * sizeof *r->peer_from);
    memcpy(r->peer_to, to_all, (size_t)npeers * sizeof *r->peer_to);
    for (int q = 0; q < npeers; q++) {
        r->send[q] = fs_box_intersect(&r->from, &to_all[q]);
        r->recv[q] = fs_box_intersect(&from_all[q], &r->to);
        r->send_elems[q] = fs_box_elems(&r->send[q]);
        r->recv_elems[q] = fs_box_elems(&r->recv[q]);
        r->send_total += r->send_elems[q];
        r->recv_total += r->recv_elems[q];
    }
    return r;
}

void fs_redist_free(fs_redist **r)
{
    if (!*r)
        return;
    free((*r)->send);
    free((*r)->recv);
    free((*r)->send_elems);
    free((*r)->recv_elems);
    free((*r)->peer_from);
    free((*r)->peer_to);
    free(*r);
    *r = NULL;
}

int64_t fs_shape_elems(int ndim, const int64_t *shape)
{
    int zero = 0;
    for (int k = 0; k < ndim; k++) {
        if (shape[k] < 0)
            return -1;
        zero |= shape[k] == 0;
    }
    if (zero)
        return 0;
    int64_t n = 1;
    for (int k = 0; k < ndim; k++) {
        if (shape[k] > FS_MAX_ELEMS / n)
            return -1;
        n *= shape[k];
    }
    return n;
}

int fs_parse_shape(const char *text, int64_t shape[FS_LAYOUT_MAX_DIMS])
{
    int n = 0;
    const char *p = text;
    if (*p == '\0')
        return -1;
    for (;;) {
        if (n == FS_LAYOUT_MAX_DIMS || *p < '0' || *p > '9')
            return -1;
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (errno || v <= 0)
            return -1;
        shape[n++] = v;
        if (*end == '\0')
            return fs_shape_elems(n, shape) < 0 ? -1 : n;
        if (*end != 'x' && *end != 'X' && *end != ',')
            return -1;
        p = end + 1;
    }
}

void fs_format_shape(int ndim, const int64_t *shape, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < ndim && used < size; k++)
        used += (size_t)snprintf(buf + used, size - used, k ? "x%" PRId64 : "%" PRId64, shape[k]);
}
