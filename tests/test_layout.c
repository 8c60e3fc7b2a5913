/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_layout: unit tests of the decomposition arithmetic (src/core/layout.h).
 *
 * Serial, no MPI calls. Every property is checked against a brute-force
 * computation over the elements, on many random (deterministic) boxes.
 * Prints each failure (the first ones of each kind in full) and exits 1 when
 * anything failed. */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"

static long checks, failures;

static void failf(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void failf(const char *file, int line, const char *fmt, ...)
{
    failures++;
    if (failures > 60)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d: FAIL: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* CHECK(condition, printf-style description of the case) */
#define CHECK(cond, ...)                                    \
    do {                                                    \
        checks++;                                           \
        if (!(cond))                                        \
            failf(__FILE__, __LINE__, __VA_ARGS__);         \
    } while (0)

/* ------------------------------------------------------------------ helpers */

static uint64_t rng_state = 0x2545F4914F6CDD1DULL;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static int64_t rng_range(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next() % (uint64_t)(hi - lo + 1));
}

static const char *box_str(const fs_box *b)
{
    static char buf[4][256];
    static int which;
    char *s = buf[which++ % 4];
    size_t used = 0;
    used += (size_t)snprintf(s + used, 256 - used, "[");
    for (int k = 0; k < b->ndim && used < 256; k++)
        used += (size_t)snprintf(s + used, 256 - used, "%s%" PRId64 "+%" PRId64, k ? "," : "",
                                 b->start[k], b->count[k]);
    if (used < 256)
        snprintf(s + used, 256 - used, "]");
    return s;
}

static int box_equal(const fs_box *a, const fs_box *b)
{
    if (a->ndim != b->ndim)
        return 0;
    if (fs_box_elems(a) == 0 && fs_box_elems(b) == 0)
        return 1;
    for (int k = 0; k < a->ndim; k++)
        if (a->start[k] != b->start[k] || a->count[k] != b->count[k])
            return 0;
    return 1;
}

/* A random box of ndim axes, each count in [1, max_count], start in [0, max_start]. */
static fs_box random_box(int ndim, int64_t max_start, int64_t max_count)
{
    fs_box b;
    memset(&b, 0, sizeof b);
    b.ndim = ndim;
    for (int k = 0; k < ndim; k++) {
        b.start[k] = rng_range(0, max_start);
        b.count[k] = rng_range(1, max_count);
    }
    return b;
}

/* A random non-empty sub-box of outer. */
static fs_box random_sub_box(const fs_box *outer)
{
    fs_box b = *outer;
    for (int k = 0; k < outer->ndim; k++) {
        /* Often full or a single index, which is what makes runs contiguous. */
        int64_t kind = rng_range(0, 3);
        if (kind == 0)
            continue;
        int64_t c = kind == 1 ? 1 : rng_range(1, outer->count[k]);
        b.start[k] = outer->start[k] + rng_range(0, outer->count[k] - c);
        b.count[k] = c;
    }
    return b;
}

/* Row-major offset of global coordinates `at` in the storage of `outer`. */
static int64_t offset_of(const int64_t *at, const fs_box *outer)
{
    int64_t off = 0;
    for (int k = 0; k < outer->ndim; k++)
        off = off * outer->count[k] + (at[k] - outer->start[k]);
    return off;
}

/* Step the coordinates `at` through `box` in row-major order; 0 at the end. */
static int next_index(int64_t *at, const fs_box *box)
{
    for (int k = box->ndim - 1; k >= 0; k--) {
        if (++at[k] < box->start[k] + box->count[k])
            return 1;
        at[k] = box->start[k];
    }
    return 0;
}

/* ------------------------------------------------------------------ tests */

static void test_split_block(void)
{
    static const int64_t want_count[5] = {3, 3, 3, 2, 2}, want_offset[5] = {0, 3, 6, 9, 11};
    for (int p = 0; p < 5; p++) {
        int64_t c = -1, o = -1;
        fs_split_block(13, 5, p, &c, &o);
        CHECK(c == want_count[p] && o == want_offset[p],
              "split 13 over 5, part %d: count %" PRId64 " offset %" PRId64 ", expected %" PRId64
              " %" PRId64, p, c, o, want_count[p], want_offset[p]);
    }
    /* Fewer items than parts: the first n parts get one, the rest none. */
    for (int p = 0; p < 5; p++) {
        int64_t c = -1, o = -1;
        fs_split_block(3, 5, p, &c, &o);
        CHECK(c == (p < 3) && o == (p < 3 ? p : 3),
              "split 3 over 5, part %d: count %" PRId64 " offset %" PRId64, p, c, o);
    }
    for (int p = 0; p < 4; p++) {
        int64_t c = -1, o = -1;
        fs_split_block(0, 4, p, &c, &o);
        CHECK(c == 0 && o == 0, "split 0 over 4, part %d: count %" PRId64 " offset %" PRId64, p, c, o);
    }
    /* Exhaustive small cases and a few 64-bit ones: parts tile [0, n), sizes
     * differ by at most one, larger parts first. */
    int64_t big[] = {INT64_C(1) << 40, (INT64_C(1) << 33) + 7, INT64_C(3000000019)};
    for (int i = 0; i < 60 + 3; i++) {
        int64_t n = i < 60 ? i : big[i - 60];
        for (int parts = 1; parts <= 13; parts++) {
            int64_t next = 0, prev_count = INT64_MAX;
            for (int p = 0; p < parts; p++) {
                int64_t c, o;
                fs_split_block(n, parts, p, &c, &o);
                CHECK(o == next && c >= 0 && c <= prev_count && c >= n / parts && c <= n / parts + 1,
                      "split %" PRId64 " over %d, part %d: count %" PRId64 " offset %" PRId64
                      " (expected offset %" PRId64 ")", n, parts, p, c, o, next);
                next = o + c;
                prev_count = c;
            }
            CHECK(next == n, "split %" PRId64 " over %d: parts sum to %" PRId64, n, parts, next);
        }
    }
}

static void test_box_split(void)
{
    for (int iter = 0; iter < 200; iter++) {
        int ndim = (int)rng_range(1, 8);
        int64_t shape[FS_LAYOUT_MAX_DIMS];
        int64_t total = 1;
        for (int k = 0; k < ndim; k++)
            total *= shape[k] = rng_range(1, 6);
        int axis = (int)rng_range(-1, ndim - 1);
        int parts = (int)rng_range(1, 9);
        fs_box full = fs_box_full(ndim, shape);
        CHECK(fs_box_elems(&full) == total, "full box of %d-D: %" PRId64 " elements, expected %" PRId64,
              ndim, fs_box_elems(&full), total);
        int64_t sum = 0;
        for (int p = 0; p < parts; p++) {
            fs_box b = fs_box_split(ndim, shape, axis, parts, p);
            sum += fs_box_elems(&b);
            CHECK(b.ndim == ndim, "split box has ndim %d, expected %d", b.ndim, ndim);
            for (int k = 0; k < ndim && fs_box_elems(&b) > 0; k++) {
                int64_t c, o;
                if (k == axis)
                    fs_split_block(shape[k], parts, p, &c, &o);
                else
                    c = shape[k], o = 0;
                CHECK(b.start[k] == o && b.count[k] == c,
                      "split along %d over %d, part %d, axis %d: %s", axis, parts, p, k, box_str(&b));
            }
            if (axis < 0)
                CHECK((p == 0) == (fs_box_elems(&b) == total) && (p == 0 || fs_box_elems(&b) == 0),
                      "gather split, part %d holds %" PRId64 " of %" PRId64, p, fs_box_elems(&b), total);
        }
        CHECK(sum == total, "split along %d over %d parts holds %" PRId64 " of %" PRId64, axis,
              parts, sum, total);
    }
}

static void test_intersect(void)
{
    for (int iter = 0; iter < 3000; iter++) {
        int ndim = (int)rng_range(1, 8);
        fs_box a = random_box(ndim, 6, 5), b = random_box(ndim, 6, 5);
        fs_box r = fs_box_intersect(&a, &b);
        int empty = 0;
        int64_t elems = 1, lo[FS_LAYOUT_MAX_DIMS], hi[FS_LAYOUT_MAX_DIMS];
        for (int k = 0; k < ndim; k++) {
            lo[k] = a.start[k] > b.start[k] ? a.start[k] : b.start[k];
            int64_t hi_a = a.start[k] + a.count[k], hi_b = b.start[k] + b.count[k];
            hi[k] = hi_a < hi_b ? hi_a : hi_b;
            if (hi[k] <= lo[k])
                empty = 1;
            else
                elems *= hi[k] - lo[k];
        }
        for (int k = 0; k < ndim && !empty; k++)
            CHECK(r.start[k] == lo[k] && r.count[k] == hi[k] - lo[k],
                  "intersect %s and %s = %s, axis %d should be %" PRId64 "+%" PRId64, box_str(&a),
                  box_str(&b), box_str(&r), k, lo[k], hi[k] - lo[k]);
        CHECK(r.ndim == ndim, "intersection has ndim %d, expected %d", r.ndim, ndim);
        CHECK(fs_box_elems(&r) == (empty ? 0 : elems),
              "intersect %s and %s = %s: %" PRId64 " elements, expected %" PRId64, box_str(&a),
              box_str(&b), box_str(&r), fs_box_elems(&r), empty ? 0 : elems);
        fs_box s = fs_box_intersect(&b, &a);
        CHECK(box_equal(&r, &s), "intersection not symmetric: %s vs %s", box_str(&r), box_str(&s));
    }
}

/* Contiguity and offset against the offsets of every element. */
static void test_contiguity_and_offset(void)
{
    for (int iter = 0; iter < 3000; iter++) {
        int ndim = (int)rng_range(1, 6);
        fs_box outer = random_box(ndim, 5, 4);
        fs_box inner = random_sub_box(&outer);
        int64_t at[FS_LAYOUT_MAX_DIMS];
        memcpy(at, inner.start, sizeof at);
        int64_t first = offset_of(at, &outer), expect = first;
        int contiguous = 1;
        do {
            contiguous &= offset_of(at, &outer) == expect++;
        } while (next_index(at, &inner));
        CHECK(fs_box_offset_in(&inner, &outer) == first, "offset of %s in %s: %" PRId64 ", expected %" PRId64,
              box_str(&inner), box_str(&outer), fs_box_offset_in(&inner, &outer), first);
        CHECK(!fs_box_is_contiguous_in(&inner, &outer) == !contiguous,
              "%s in %s: is_contiguous says %d, expected %d", box_str(&inner), box_str(&outer),
              fs_box_is_contiguous_in(&inner, &outer), contiguous);
    }
    /* Hand-picked cases. */
    fs_box outer = {.ndim = 3, .start = {10, 0, 5}, .count = {4, 3, 2}};
    fs_box row = {.ndim = 3, .start = {11, 1, 5}, .count = {1, 1, 2}};
    fs_box rows = {.ndim = 3, .start = {11, 1, 5}, .count = {1, 2, 2}};
    fs_box slab = {.ndim = 3, .start = {11, 0, 5}, .count = {2, 3, 2}};
    fs_box column = {.ndim = 3, .start = {10, 0, 5}, .count = {4, 3, 1}};
    fs_box plane = {.ndim = 3, .start = {10, 1, 5}, .count = {2, 1, 2}};
    CHECK(fs_box_is_contiguous_in(&row, &outer) && fs_box_offset_in(&row, &outer) == 8, "row");
    CHECK(fs_box_is_contiguous_in(&rows, &outer) && fs_box_offset_in(&rows, &outer) == 8, "rows");
    CHECK(fs_box_is_contiguous_in(&slab, &outer) && fs_box_offset_in(&slab, &outer) == 6, "slab");
    CHECK(!fs_box_is_contiguous_in(&column, &outer), "column");
    CHECK(!fs_box_is_contiguous_in(&plane, &outer), "plane");
    CHECK(fs_box_is_contiguous_in(&outer, &outer) && fs_box_offset_in(&outer, &outer) == 0, "whole");
}

/* pack then unpack, for element sizes 1, 8 and 16 bytes, up to 8-D. */
static void test_pack_unpack(void)
{
    static const size_t sizes[] = {1, 8, 16};
    for (int iter = 0; iter < 1500; iter++) {
        int ndim = (int)rng_range(1, 8);
        size_t eb = sizes[iter % 3];
        fs_box outer = random_box(ndim, 4, ndim > 5 ? 3 : 5);
        fs_box inner = random_sub_box(&outer);
        int64_t n_outer = fs_box_elems(&outer), n_inner = fs_box_elems(&inner);
        unsigned char *data = malloc((size_t)n_outer * eb), *packed = malloc((size_t)n_inner * eb + 1),
                      *back = calloc((size_t)n_outer, eb);
        if (!data || !packed || !back) {
            fprintf(stderr, "out of memory\n");
            exit(99);
        }
        /* Element i of outer: bytes (i * 131 + b * 7 + 1) mod 251, distinct enough. */
        for (int64_t i = 0; i < n_outer; i++)
            for (size_t b = 0; b < eb; b++)
                data[(size_t)i * eb + b] = (unsigned char)((i * 131 + (int64_t)b * 7 + 1) % 251);
        packed[(size_t)n_inner * eb] = 0xA5; /* guard byte past the end */
        fs_box_pack(&inner, &outer, data, packed, eb);
        CHECK(packed[(size_t)n_inner * eb] == 0xA5, "pack %s of %s wrote past the packed buffer",
              box_str(&inner), box_str(&outer));
        int64_t at[FS_LAYOUT_MAX_DIMS], j = 0;
        memcpy(at, inner.start, sizeof at);
        int bad = 0;
        do {
            int64_t i = offset_of(at, &outer);
            bad += memcmp(packed + (size_t)j * eb, data + (size_t)i * eb, eb) != 0;
            j++;
        } while (next_index(at, &inner));
        CHECK(bad == 0, "pack %s of %s (%zu-byte elements): %d of %" PRId64 " elements wrong",
              box_str(&inner), box_str(&outer), eb, bad, n_inner);

        fs_box_unpack(&inner, &outer, back, packed, eb);
        /* Inside inner: the original values; outside: untouched zeros. */
        memcpy(at, outer.start, sizeof at);
        bad = 0;
        do {
            int inside = 1;
            for (int k = 0; k < ndim; k++)
                inside &= at[k] >= inner.start[k] && at[k] < inner.start[k] + inner.count[k];
            int64_t i = offset_of(at, &outer);
            if (inside)
                bad += memcmp(back + (size_t)i * eb, data + (size_t)i * eb, eb) != 0;
            else
                for (size_t b = 0; b < eb; b++)
                    bad += back[(size_t)i * eb + b] != 0;
        } while (next_index(at, &outer));
        CHECK(bad == 0, "unpack %s into %s (%zu-byte elements): %d wrong", box_str(&inner),
              box_str(&outer), eb, bad);
        free(data);
        free(packed);
        free(back);
    }
    /* An empty inner box copies nothing. */
    fs_box outer = {.ndim = 2, .start = {0, 0}, .count = {3, 3}};
    fs_box none = {.ndim = 2, .start = {1, 1}, .count = {0, 0}};
    double d[9] = {0}, p[1] = {42.0};
    fs_box_pack(&none, &outer, d, p, sizeof(double));
    fs_box_unpack(&none, &outer, d, p, sizeof(double));
    CHECK(p[0] == 42.0 && d[4] == 0.0, "empty box pack/unpack touched memory");
}

/* A random box holding inner: each axis as large, or up to 2 larger on
 * either side. */
static fs_box random_super_box(const fs_box *inner)
{
    fs_box b = *inner;
    for (int k = 0; k < inner->ndim; k++) {
        if (rng_range(0, 1) == 0)
            continue;
        int64_t before = rng_range(0, 2), after = rng_range(0, 2);
        b.start[k] -= before;
        b.count[k] += before + after;
    }
    return b;
}

/* Walk inner's runs inside outer and other (NULL: inner's packed copy)
 * against brute force: the runs, joined, are inner's elements in row-major
 * order, each exactly once (so a skipped or repeated run fails), every run
 * is contiguous in both storages with the coordinates of its first element,
 * runs are merged as far as both storages allow (single rows with
 * FS_BOX_RUNS_ROWS), and seek lands on the same runs. */
static void check_runs(const fs_box *inner, const fs_box *outer, const fs_box *other,
                       unsigned flags)
{
    const fs_box *in_other = other ? other : inner;
    int nd = inner->ndim;
    int64_t n = fs_box_elems(inner);
    fs_box_runs w;
    fs_box_runs_begin(&w, inner, outer, other, flags);
    const char *how = flags & FS_BOX_RUNS_ROWS ? "rows" : "runs";
    CHECK(n == 0 ? w.nruns == 0 : w.nruns * w.run_elems == n,
          "%s of %s in %s / %s: %" PRId64 " runs of %" PRId64 " for %" PRId64 " elements", how,
          box_str(inner), box_str(outer), box_str(in_other), w.nruns, w.run_elems, n);
    if (flags & FS_BOX_RUNS_ROWS && n > 0)
        CHECK(w.run_elems == inner->count[nd - 1], "rows of %s: %" PRId64 " long", box_str(inner),
              w.run_elems);
    int64_t nrec = w.nruns > 0 ? w.nruns : 1;
    int64_t *rec = malloc((size_t)nrec * 2 * sizeof *rec);
    int64_t (*rec_at)[FS_LAYOUT_MAX_DIMS] = malloc((size_t)nrec * sizeof *rec_at);
    unsigned char *seen = calloc((size_t)(n > 0 ? n : 1), 1);
    if (!rec || !rec_at || !seen) {
        fprintf(stderr, "out of memory\n");
        exit(99);
    }
    int64_t expect_at[FS_LAYOUT_MAX_DIMS], runs = 0, walked = 0, bad = 0, unmerged = 0;
    memcpy(expect_at, inner->start, sizeof expect_at);
    while (fs_box_runs_next(&w)) {
        if (runs >= nrec) { /* more runs than announced */
            bad++;
            break;
        }
        bad += w.index != runs || memcmp(w.at, expect_at, (size_t)nd * sizeof *expect_at) != 0;
        for (int64_t j = 0; j < w.run_elems && walked < n; j++, walked++) {
            bad += offset_of(expect_at, outer) != w.offset + j;
            bad += offset_of(expect_at, in_other) != w.other_offset + j;
            seen[offset_of(expect_at, inner)]++;
            next_index(expect_at, inner);
        }
        if (runs > 0 && !(flags & FS_BOX_RUNS_ROWS))
            unmerged += w.offset == rec[2 * (runs - 1)] + w.run_elems &&
                        w.other_offset == rec[2 * (runs - 1) + 1] + w.run_elems;
        rec[2 * runs] = w.offset;
        rec[2 * runs + 1] = w.other_offset;
        memcpy(rec_at[runs], w.at, sizeof rec_at[runs]);
        runs++;
    }
    int64_t once = 0;
    for (int64_t i = 0; i < n; i++)
        once += seen[i] == 1;
    CHECK(bad == 0 && runs == w.nruns && walked == n && once == n && !fs_box_runs_next(&w),
          "%s of %s in %s / %s: %" PRId64 " wrong, %" PRId64 " runs of %" PRId64 " announced, %" PRId64
          " of %" PRId64 " elements walked, %" PRId64 " seen once",
          how, box_str(inner), box_str(outer), box_str(in_other), bad, runs, w.nruns, walked, n, once);
    CHECK(unmerged == 0, "runs of %s in %s / %s: %" PRId64 " runs continue the one before",
          box_str(inner), box_str(outer), box_str(in_other), unmerged);
    /* Seek to a few runs, then step on from there. */
    for (int t = 0; t < 4 && runs == w.nruns && w.nruns > 0; t++) {
        int64_t i = rng_range(0, w.nruns - 1);
        fs_box_runs_seek(&w, i);
        int ok = w.index == i && w.offset == rec[2 * i] && w.other_offset == rec[2 * i + 1] &&
                 memcmp(w.at, rec_at[i], (size_t)nd * sizeof *expect_at) == 0;
        if (i + 1 < w.nruns)
            ok &= fs_box_runs_next(&w) && w.index == i + 1 && w.offset == rec[2 * (i + 1)] &&
                  memcmp(w.at, rec_at[i + 1], (size_t)nd * sizeof *expect_at) == 0;
        else
            ok &= !fs_box_runs_next(&w);
        CHECK(ok, "%s of %s in %s: seek to run %" PRId64 " and on", how, box_str(inner),
              box_str(outer), i);
    }
    free(rec);
    free(rec_at);
    free(seen);
}

static void test_box_runs(void)
{
    for (int iter = 0; iter < 4000; iter++) {
        int ndim = (int)rng_range(1, 8);
        fs_box outer = random_box(ndim, 4, ndim > 5 ? 3 : 6);
        fs_box inner = random_sub_box(&outer);
        if (iter % 16 == 0) /* empty in one axis, as an intersection would not be */
            inner.count[rng_range(0, ndim - 1)] = 0;
        fs_box other = random_super_box(&inner);
        int kind = (int)rng_range(0, 3);
        check_runs(&inner, &outer, kind == 0 ? NULL : &other, kind == 3 ? FS_BOX_RUNS_ROWS : 0);
    }

    /* Hand-picked: lengths and counts of runs. */
    static const struct {
        const char *what;
        fs_box inner, outer, other;  /* other.ndim 0: NULL */
        unsigned flags;
        int64_t run_elems, nruns, first, other_first;
    } cases[] = {
        {"1-D part", {1, {3}, {4}}, {1, {0}, {10}}, {0}, 0, 4, 1, 3, 0},
        {"1-D whole", {1, {0}, {10}}, {1, {0}, {10}}, {0}, 0, 10, 1, 0, 0},
        {"1-D rows", {1, {2}, {5}}, {1, {1}, {9}}, {1, {0}, {8}}, FS_BOX_RUNS_ROWS, 5, 1, 1, 2},
        {"slab merges", {3, {11, 0, 5}, {2, 3, 2}}, {3, {10, 0, 5}, {4, 3, 2}}, {0}, 0, 12, 1, 6, 0},
        {"other stops the merge", {3, {11, 0, 5}, {2, 3, 2}}, {3, {10, 0, 5}, {4, 3, 2}},
         {3, {11, 0, 5}, {2, 4, 2}}, 0, 6, 2, 6, 0},
        {"rows only", {3, {11, 0, 5}, {2, 3, 2}}, {3, {10, 0, 5}, {4, 3, 2}}, {0},
         FS_BOX_RUNS_ROWS, 2, 6, 6, 0},
        {"column", {3, {10, 0, 6}, {4, 3, 1}}, {3, {10, 0, 5}, {4, 3, 2}}, {0}, 0, 1, 12, 1, 0},
        {"8-D, three whole trailing axes", {8, {1, 0, 1, 0, 1, 0, 0, 0}, {1, 2, 1, 2, 2, 2, 2, 2}},
         {8, {0, 0, 0, 0, 0, 0, 0, 0}, {2, 3, 2, 2, 3, 2, 2, 2}}, {0}, 0, 16, 4, 344, 0},
        {"8-D whole", {8, {0}, {2, 1, 2, 1, 2, 1, 2, 3}}, {8, {0}, {2, 1, 2, 1, 2, 1, 2, 3}}, {0}, 0,
         48, 1, 0, 0},
        {"empty", {3, {1, 1, 1}, {0, 0, 0}}, {3, {0, 0, 0}, {4, 3, 2}}, {0}, 0, 0, 0, 0, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const fs_box *other = cases[c].other.ndim ? &cases[c].other : NULL;
        fs_box_runs w;
        fs_box_runs_begin(&w, &cases[c].inner, &cases[c].outer, other, cases[c].flags);
        int has = fs_box_runs_next(&w);
        CHECK(w.run_elems == cases[c].run_elems && w.nruns == cases[c].nruns &&
                  has == (cases[c].nruns > 0) &&
                  (!has || (w.offset == cases[c].first && w.other_offset == cases[c].other_first)),
              "%s: %" PRId64 " runs of %" PRId64 " from %" PRId64 " / %" PRId64 ", expected %" PRId64
              " of %" PRId64 " from %" PRId64 " / %" PRId64,
              cases[c].what, w.nruns, w.run_elems, w.offset, w.other_offset, cases[c].nruns,
              cases[c].run_elems, cases[c].first, cases[c].other_first);
        check_runs(&cases[c].inner, &cases[c].outer, other, cases[c].flags);
    }

    /* The recipe in layout.h for a map with a strided last axis (the real
     * parts of complex storage: memory of doubles, every other one): rows
     * of the file box in the memory box give the map's memory offsets. */
    for (int iter = 0; iter < 300; iter++) {
        int nd = (int)rng_range(1, 4);
        fs_box storage = random_box(nd, 3, 5), file = random_sub_box(&storage);
        int64_t s = 2, mem_dims[FS_LAYOUT_MAX_DIMS], mem_start[FS_LAYOUT_MAX_DIMS];
        fs_box mem = file;
        for (int k = 0; k < nd; k++) {
            int64_t sk = k == nd - 1 ? s : 1;
            mem_dims[k] = storage.count[k] * sk;
            mem_start[k] = (file.start[k] - storage.start[k]) * sk;
            mem.start[k] = file.start[k] - mem_start[k] / sk;
            mem.count[k] = mem_dims[k] / sk;
        }
        int64_t at[FS_LAYOUT_MAX_DIMS], bad = 0, walked = 0;
        memcpy(at, file.start, sizeof at);
        fs_box_runs w;
        fs_box_runs_begin(&w, &file, &mem, NULL, FS_BOX_RUNS_ROWS);
        while (fs_box_runs_next(&w)) {
            for (int64_t j = 0; j < w.run_elems; j++, walked++) {
                int64_t off = 0; /* as map_visit computes it */
                for (int k = 0; k < nd; k++) {
                    int64_t idx = at[k] - file.start[k];
                    off = off * mem_dims[k] + mem_start[k] + (k == nd - 1 ? idx * s : idx);
                }
                bad += s * (w.offset + j) != off || w.at[nd - 1] + j != at[nd - 1];
                next_index(at, &file);
            }
        }
        CHECK(bad == 0 && walked == fs_box_elems(&file), "strided map of %s in %s: %" PRId64 " wrong",
              box_str(&file), box_str(&storage), bad);
    }

    fs_box b = {.ndim = 4, .start = {7, 7, 7, 7}, .count = {5, 4, 3, 2}};
    int64_t stride[FS_LAYOUT_MAX_DIMS];
    fs_box_strides(&b, stride);
    CHECK(stride[0] == 24 && stride[1] == 6 && stride[2] == 2 && stride[3] == 1,
          "strides of %s: %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64, box_str(&b), stride[0],
          stride[1], stride[2], stride[3]);
}

static void test_redist(void)
{
    for (int iter = 0; iter < 400; iter++) {
        int ndim = (int)rng_range(1, 5);
        int64_t shape[FS_LAYOUT_MAX_DIMS];
        for (int k = 0; k < ndim; k++)
            shape[k] = rng_range(1, 11);
        int P = (int)rng_range(1, 9);
        int axis_from = (int)rng_range(-1, ndim - 1), axis_to = (int)rng_range(-1, ndim - 1);
        fs_box *from_all = calloc((size_t)P, sizeof *from_all), *to_all = calloc((size_t)P, sizeof *to_all);
        fs_redist **rd = calloc((size_t)P, sizeof *rd);
        if (!from_all || !to_all || !rd) {
            fprintf(stderr, "out of memory\n");
            exit(99);
        }
        for (int p = 0; p < P; p++) {
            from_all[p] = fs_box_split(ndim, shape, axis_from, P, p);
            to_all[p] = fs_box_split(ndim, shape, axis_to, P, p);
        }
        for (int p = 0; p < P; p++) {
            rd[p] = fs_redist_new(P, p, from_all, to_all);
            CHECK(rd[p] != NULL, "fs_redist_new returned NULL");
            if (!rd[p])
                exit(1);
        }
        for (int p = 0; p < P; p++) {
            fs_redist *r = rd[p];
            CHECK(r->npeers == P && r->self == p && box_equal(&r->from, &from_all[p]) &&
                      box_equal(&r->to, &to_all[p]),
                  "redist of rank %d of %d: header wrong", p, P);
            int64_t send_sum = 0, recv_sum = 0;
            for (int q = 0; q < P; q++) {
                /* What p sends to q is what q receives from p. */
                CHECK(box_equal(&r->send[q], &rd[q]->recv[p]) &&
                          r->send_elems[q] == rd[q]->recv_elems[p],
                      "shape %dD split %d->%d over %d: %d sends %s (%" PRId64 ") to %d, which "
                      "receives %s (%" PRId64 ")", ndim, axis_from, axis_to, P, p,
                      box_str(&r->send[q]), r->send_elems[q], q, box_str(&rd[q]->recv[p]),
                      rd[q]->recv_elems[p]);
                fs_box expect_send = fs_box_intersect(&from_all[p], &to_all[q]);
                CHECK(box_equal(&r->send[q], &expect_send) &&
                          r->send_elems[q] == fs_box_elems(&expect_send),
                      "rank %d sends %s to %d, expected %s", p, box_str(&r->send[q]), q,
                      box_str(&expect_send));
                CHECK(r->recv_elems[q] == fs_box_elems(&r->recv[q]),
                      "recv_elems[%d] = %" PRId64 " but the box holds %" PRId64, q,
                      r->recv_elems[q], fs_box_elems(&r->recv[q]));
                send_sum += r->send_elems[q];
                recv_sum += r->recv_elems[q];
            }
            CHECK(r->send_total == send_sum && send_sum == fs_box_elems(&from_all[p]),
                  "rank %d of %d (split %d->%d): send_total %" PRId64 ", sum %" PRId64
                  ", from box %" PRId64, p, P, axis_from, axis_to, r->send_total, send_sum,
                  fs_box_elems(&from_all[p]));
            CHECK(r->recv_total == recv_sum && recv_sum == fs_box_elems(&to_all[p]),
                  "rank %d of %d (split %d->%d): recv_total %" PRId64 ", sum %" PRId64
                  ", to box %" PRId64, p, P, axis_from, axis_to, r->recv_total, recv_sum,
                  fs_box_elems(&to_all[p]));
        }
        for (int p = 0; p < P; p++) {
            fs_redist_free(&rd[p]);
            CHECK(rd[p] == NULL, "fs_redist_free did not set the pointer to NULL");
        }
        free(rd);
        free(from_all);
        free(to_all);
    }
}

static void test_parse_shape(void)
{
    static const struct {
        const char *text;
        int ndim;
        int64_t shape[FS_LAYOUT_MAX_DIMS];
    } cases[] = {
        {"64x48x30", 3, {64, 48, 30}},
        {"7", 1, {7}},
        {"1x2x3x4x5x6x7x8", 8, {1, 2, 3, 4, 5, 6, 7, 8}},
        {"4X3", 2, {4, 3}},
        {"4,3", 2, {4, 3}},
        {"4294967296x3", 2, {INT64_C(4294967296), 3}},
        {"1x2x3x4x5x6x7x8x9", -1, {0}},
        {"", -1, {0}},
        {"x", -1, {0}},
        {"0", -1, {0}},
        {"4x0", -1, {0}},
        {"4x", -1, {0}},
        {"x4", -1, {0}},
        {"-4", -1, {0}},
        {"4x-3", -1, {0}},
        {"+4", -1, {0}},
        {"4xx3", -1, {0}},
        {"4 x3", -1, {0}},
        {"4x3 ", -1, {0}},
        {"abc", -1, {0}},
        {"4.5", -1, {0}},
        {"99999999999999999999999", -1, {0}},
        /* at most FS_MAX_ELEMS = 2^56 elements; products beyond int64 too */
        {"72057594037927936", 1, {INT64_C(72057594037927936)}},
        {"72057594037927937", -1, {0}},
        {"268435456x268435456", 2, {INT64_C(268435456), INT64_C(268435456)}},
        {"268435456x268435457", -1, {0}},
        {"1099511627776x1099511627776x1099511627776", -1, {0}},
        {"4611686018427387904x4", -1, {0}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t shape[FS_LAYOUT_MAX_DIMS] = {0};
        int n = fs_parse_shape(cases[i].text, shape);
        int same = n == cases[i].ndim;
        for (int k = 0; same && k < n; k++)
            same = shape[k] == cases[i].shape[k];
        CHECK(same, "fs_parse_shape(\"%s\") = %d, expected %d", cases[i].text, n, cases[i].ndim);
        if (n > 0 && same && strchr(cases[i].text, 'X') == NULL && strchr(cases[i].text, ',') == NULL) {
            char buf[256];
            fs_format_shape(n, shape, buf, sizeof buf);
            CHECK(strcmp(buf, cases[i].text) == 0, "fs_format_shape gives \"%s\", expected \"%s\"",
                  buf, cases[i].text);
        }
    }
}

static void test_shape_elems(void)
{
    int64_t a[3] = {4, 0, 3}, b[2] = {INT64_C(1) << 40, INT64_C(1) << 40}, c[2] = {-1, 0},
            d[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 0}, e[2] = {INT64_C(1) << 28, INT64_C(1) << 28};
    CHECK(fs_shape_elems(3, a) == 0, "fs_shape_elems(4x0x3) = %lld", (long long)fs_shape_elems(3, a));
    CHECK(fs_shape_elems(2, b) == -1, "fs_shape_elems(2^40x2^40) = %lld", (long long)fs_shape_elems(2, b));
    CHECK(fs_shape_elems(2, c) == -1, "fs_shape_elems(-1x0) = %lld", (long long)fs_shape_elems(2, c));
    CHECK(fs_shape_elems(3, d) == 0, "fs_shape_elems(2^40x2^40x0) = %lld", (long long)fs_shape_elems(3, d));
    CHECK(fs_shape_elems(2, e) == FS_MAX_ELEMS, "fs_shape_elems(2^28x2^28) = %lld",
          (long long)fs_shape_elems(2, e));
    CHECK(fs_shape_elems(0, a) == 1, "fs_shape_elems of no axes = %lld", (long long)fs_shape_elems(0, a));
}

int main(void)
{
    test_split_block();
    test_box_split();
    test_intersect();
    test_contiguity_and_offset();
    test_box_runs();
    test_pack_unpack();
    test_redist();
    test_parse_shape();
    test_shape_elems();
    if (failures > 60)
        fprintf(stderr, "... %ld more failures not shown\n", failures - 60);
    printf("test_layout: %ld checks, %ld failed\n", checks, failures);
    return failures ? 1 : 0;
}
