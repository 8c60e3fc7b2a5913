/* SPDX-License-Identifier: GPL-3.0-or-later */
/* finite: see finite.h. */
#include "config.h"

#include "io/finite.h"

#include <stdio.h>
#include <string.h>

#include "core/collective.h"

/* A value is NaN or Inf when its exponent bits are all ones: a test on the
 * bits, whatever the floating-point flags of the build. The exponent plus
 * its lowest bit carries into the top bit just then; an add and a shift
 * vectorise where a 64-bit compare does not (SSE2 has none). */
#define EXP64 UINT64_C(0x7ff0000000000000)
#define EXP32 UINT32_C(0x7f800000)
#define BAD(u, EXP) ((((u) & (EXP)) + ((EXP) & -(EXP))) >> (sizeof(u) * 8 - 1))

/* Values per inner loop: a trip count the compiler knows lets -O2's
 * cheapest vectoriser take the loop. */
#define BLOCK 64

/* Words of a complex element (2) or a real one (1) whose exponents are all
 * ones: the element count of n elements at p; a complex element counts
 * once. One macro for both widths, so that each loop reads its own type. */
#define DEFINE_COUNT(NAME, WORD, EXP)                                                         \
    static int64_t NAME(const unsigned char *p, int64_t n, int parts)                         \
    {                                                                                         \
        int64_t total = 0, i = 0;                                                             \
        const size_t wb = sizeof(WORD), eb = wb * (size_t)parts;                              \
        for (; i + BLOCK <= n; i += BLOCK) {                                                  \
            const unsigned char *q = p + (size_t)i * eb;                                      \
            WORD c = 0;                                                                       \
            if (parts == 1)                                                                   \
                for (int j = 0; j < BLOCK; j++) {                                             \
                    WORD u;                                                                   \
                    memcpy(&u, q + (size_t)j * wb, wb);                                       \
                    c += BAD(u, EXP);                                                         \
                }                                                                             \
            else                                                                              \
                for (int j = 0; j < BLOCK; j++) {                                             \
                    WORD re, im;                                                              \
                    memcpy(&re, q + (size_t)(2 * j) * wb, wb);                                \
                    memcpy(&im, q + (size_t)(2 * j + 1) * wb, wb);                            \
                    c += BAD(re, EXP) | BAD(im, EXP);                                         \
                }                                                                             \
            total += (int64_t)c;                                                              \
        }                                                                                     \
        for (; i < n; i++)                                                                    \
            for (int k = 0; k < parts; k++) {                                                 \
                WORD u;                                                                       \
                memcpy(&u, p + (size_t)i * eb + (size_t)k * wb, wb);                          \
                if (BAD(u, EXP)) {                                                            \
                    total++;                                                                  \
                    break;                                                                    \
                }                                                                             \
            }                                                                                 \
        return total;                                                                         \
    }

DEFINE_COUNT(count64, uint64_t, EXP64)
DEFINE_COUNT(count32, uint32_t, EXP32)

/* How many of the n values of type t at p are not finite; *first (out) the
 * position of the first of them, looked for only when there is one. */
static int64_t count_values(const void *p, int64_t n, fs_dtype t, int64_t *first)
{
    int parts = fs_dtype_is_real(t) ? 1 : 2;
    int wide = fs_dtype_bytes(t) / (size_t)parts == 8;
    int64_t c = wide ? count64(p, n, parts) : count32(p, n, parts);
    *first = -1;
    for (int64_t i = 0; c > 0 && *first < 0; i++)
        if ((wide ? count64 : count32)((const unsigned char *)p + (size_t)i * fs_dtype_bytes(t), 1,
                                       parts))
            *first = i;
    return c;
}

void fs_finite_begin(fs_finite *f, int ndim, const int64_t *shape, int64_t fold_inner)
{
    memset(f, 0, sizeof *f);
    f->ndim = ndim;
    memcpy(f->shape, shape, (size_t)ndim * sizeof *shape);
    f->fold_inner = fold_inner;
    f->first = INT64_MAX;
}

/* Count found values, the first of them at the coordinates `at`. */
static void note(fs_finite *f, int64_t count, const int64_t *at)
{
    int64_t flat = 0;
    if (f->fold_inner > 0)
        flat = at[0] * f->fold_inner + at[1];
    else
        for (int k = 0; k < f->ndim; k++)
            flat = flat * f->shape[k] + at[k];
    f->count += count;
    if (flat < f->first)
        f->first = flat;
}

/* The coordinates of element `offset` of the row-major storage of b. */
static void coordinates(const fs_box *b, int64_t offset, int64_t *at)
{
    for (int k = b->ndim - 1; k >= 0; k--) {
        int64_t n = b->count[k] > 0 ? b->count[k] : 1;
        at[k] = b->start[k] + offset % n;
        offset /= n;
    }
}

void fs_finite_packed(fs_finite *f, const fs_box *piece, const void *values, int64_t n,
                      fs_dtype t)
{
    int64_t first, at[FS_LAYOUT_MAX_DIMS];
    int64_t c = count_values(values, n, t, &first);
    if (c == 0)
        return;
    coordinates(piece, first, at);
    note(f, c, at);
}

void fs_finite_box(fs_finite *f, const fs_box *piece, const fs_box *outer, const void *data,
                   fs_dtype t)
{
    size_t eb = fs_dtype_bytes(t);
    fs_box_runs w;
    fs_box_runs_begin(&w, piece, outer, NULL, 0);
    while (fs_box_runs_next(&w)) {
        int64_t first, at[FS_LAYOUT_MAX_DIMS];
        const char *run = (const char *)data + (size_t)w.offset * eb;
        int64_t c = count_values(run, w.run_elems, t, &first);
        if (c == 0)
            continue;
        coordinates(outer, w.offset + first, at);
        note(f, c, at);
    }
}

fs_status fs_finite_agree(MPI_Comm comm, const fs_finite *f, const char *name)
{
    int64_t mine[2] = {f->count, f->first}, all[2];
    fs_status st = fs_allreduce_sum_min(comm, mine, all);
    if (st != FS_OK || all[0] == 0)
        return st;
    /* numpy's index of the first: the flat index over the shape */
    char at[FS_LAYOUT_MAX_DIMS * 24] = "";
    int64_t idx[FS_LAYOUT_MAX_DIMS], flat = all[1];
    for (int k = f->ndim - 1; k >= 0; k--) {
        idx[k] = f->shape[k] > 0 ? flat % f->shape[k] : 0;
        flat = f->shape[k] > 0 ? flat / f->shape[k] : 0;
    }
    for (int k = 0; k < f->ndim; k++) {
        size_t used = strlen(at);
        snprintf(at + used, sizeof at - used, "%s%lld", k ? ", " : "", (long long)idx[k]);
    }
    if (all[0] == 1)
        return fs_error_set(FS_ERR_INPUT, "%s: 1 value is not finite (NaN or Inf), at [%s]; give "
                            "--allow-nonfinite to transform it anyway", name, at);
    return fs_error_set(FS_ERR_INPUT, "%s: %lld values are not finite (NaN or Inf), the first at "
                        "[%s]; give --allow-nonfinite to transform them anyway", name,
                        (long long)all[0], at);
}
