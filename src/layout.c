/* layout: see layout.h. */
#include "config.h"

#include "layout.h"

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
    if (fs_box_elems(inner) == 0)
        return 1;
    /* Row-major: past the first axis where inner is partial, inner must be
     * full; before it, inner must be a single index. */
    int k = 0;
    while (k < inner->ndim && inner->count[k] == 1)
        k++;
    for (int j = k + 1; j < inner->ndim; j++)
        if (inner->count[j] != outer->count[j])
            return 0;
    return 1;
}

int64_t fs_box_offset_in(const fs_box *inner, const fs_box *outer)
{
    int64_t offset = 0;
    for (int k = 0; k < outer->ndim; k++)
        offset = offset * outer->count[k] + (inner->start[k] - outer->start[k]);
    return offset;
}

/* Walk the rows (runs along the last axis merged with every trailing axis
 * where inner is full) of inner inside outer and copy each run. */
static void box_copy(const fs_box *inner, const fs_box *outer, char *outer_data, char *packed,
                     size_t elem_bytes, int to_packed)
{
    int ndim = inner->ndim;
    if (fs_box_elems(inner) == 0)
        return;
    /* The contiguous run: trailing axes that inner covers fully, plus one more. */
    int run_axis = ndim - 1;
    int64_t run = inner->count[ndim - 1];
    while (run_axis > 0 && inner->count[run_axis] == outer->count[run_axis]) {
        run_axis--;
        run *= inner->count[run_axis];
    }
    int64_t stride[FS_LAYOUT_MAX_DIMS];
    int64_t s = 1;
    for (int k = ndim - 1; k >= 0; k--) {
        stride[k] = s;
        s *= outer->count[k];
    }
    int64_t index[FS_LAYOUT_MAX_DIMS] = {0};
    size_t run_bytes = (size_t)run * elem_bytes;
    int64_t base = fs_box_offset_in(inner, outer);
    char *p = packed;
    for (;;) {
        int64_t off = base;
        for (int k = 0; k < run_axis; k++)
            off += index[k] * stride[k];
        char *o = outer_data + (size_t)off * elem_bytes;
        if (to_packed)
            memcpy(p, o, run_bytes);
        else
            memcpy(o, p, run_bytes);
        p += run_bytes;
        int k = run_axis - 1;
        while (k >= 0 && ++index[k] == inner->count[k])
            index[k--] = 0;
        if (k < 0)
            break;
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
    if (!r->send || !r->recv || !r->send_elems || !r->recv_elems) {
        fs_redist_free(&r);
        return NULL;
    }
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
