/* test_transform: the decomposition arithmetic of transform.c, serial, for
 * rank counts no test machine has: every stage's boxes must tile the array
 * exactly (sizes add up, no box outside it), the exchanges must move one
 * grid dimension, and 64-bit sizes must come out exact. Nothing is
 * allocated at the array's size. Exit 0 when all passed. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "transform.h"

static long checks, failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static fs_input_info input(int ndim, const int64_t *shape, fs_dtype dtype)
{
    fs_input_info in;
    memset(&in, 0, sizeof in);
    in.ndim = ndim;
    memcpy(in.shape, shape, (size_t)ndim * sizeof *shape);
    in.dtype = dtype;
    snprintf(in.type_name, sizeof in.type_name, "%s", fs_dtype_name(dtype));
    snprintf(in.dataset, sizeof in.dataset, "/x");
    return in;
}

static fs_options options(void)
{
    fs_options o;
    memset(&o, 0, sizeof o);
    o.transpose = "pairwise";
    o.norm = FS_NORM_BACKWARD;
    return o;
}

/* Every stage tiles the working array: the boxes' sizes add up to it and
 * each box lies inside it. With `all` every rank is visited, else a sample. */
static void check_tiling(const fs_transform *t, const char *what)
{
    int64_t total = 1;
    for (int k = 0; k < t->ndim; k++)
        total *= t->shape[k];
    for (int s = 0; s < t->nstages; s++) {
        int64_t sum = 0;
        int inside = 1;
        for (int c1 = 0; c1 < t->grid[0]; c1++)
            for (int c2 = 0; c2 < t->grid[1]; c2++) {
                fs_box b = fs_transform_box(t, s, c1, c2);
                int64_t n = fs_box_elems(&b);
                sum += n;
                for (int k = 0; k < t->ndim && n; k++)
                    inside = inside && b.start[k] >= 0 && b.start[k] + b.count[k] <= t->shape[k];
            }
        CHECK(sum == total, "%s: stage %d boxes add up to %" PRId64 ", not %" PRId64, what, s, sum, total);
        CHECK(inside, "%s: stage %d has a box outside the array", what, s);
    }
    for (int e = 0; e + 1 < t->nstages; e++) {
        int g = fs_transform_exchange_dim(t, e);
        CHECK(t->split[e][1 - g] == t->split[e + 1][1 - g],
              "%s: exchange %d moves both grid dimensions", what, e);
    }
}

int main(void)
{
    fs_options o = options();
    fs_transform t;

    /* 8192^3 complex64 on 65536 ranks: pencils 256 x 256, 32x32x8192 blocks. */
    int64_t big[3] = {8192, 8192, 8192};
    fs_input_info in = input(3, big, FS_DTYPE_COMPLEX64);
    CHECK(fs_transform_plan(&o, &in, 65536, 1, &t) == FS_OK, "8192^3 on 65536: plan failed: %s",
          fs_error_message());
    CHECK(t.pencil && t.grid[0] == 256 && t.grid[1] == 256, "8192^3 on 65536: grid %dx%d, pencil %d",
          t.grid[0], t.grid[1], t.pencil);
    CHECK(t.prec == FS_SINGLE, "complex64 input is single precision by default");
    fs_box b = fs_transform_box(&t, 0, 255, 255);
    CHECK(b.count[0] == 32 && b.count[1] == 32 && b.count[2] == 8192 && b.start[0] == 255 * 32 &&
              b.start[1] == 255 * 32,
          "8192^3 on 65536: last rank's stage-0 box");
    b = fs_transform_box(&t, 2, 17, 200);
    CHECK(fs_box_elems(&b) == INT64_C(8388608) && b.count[0] == 8192 && b.start[1] == 17 * 32 &&
              b.start[2] == 200 * 32,
          "8192^3 on 65536: a stage-2 box");
    check_tiling(&t, "8192^3 on 65536");

    /* 2^34 x 3 on 7 ranks: 64-bit shares, no overflow. */
    int64_t tall[2] = {INT64_C(1) << 34, 3};
    in = input(2, tall, FS_DTYPE_COMPLEX128);
    CHECK(fs_transform_plan(&o, &in, 7, 1, &t) == FS_OK, "2^34x3 on 7: plan failed");
    CHECK(!t.pencil && t.split[0][0] == 0 && t.split[1][0] == 1, "2^34x3 on 7: slab 0 -> 1");
    int64_t rows = 0;
    for (int p = 0; p < 7; p++) {
        fs_box r = fs_transform_box(&t, 0, p, 0);
        CHECK(r.count[0] == (INT64_C(1) << 34) / 7 + (p < (int)((INT64_C(1) << 34) % 7)),
              "2^34x3 on 7: rank %d rows", p);
        CHECK(r.start[0] == rows, "2^34x3 on 7: rank %d starts at %" PRId64, p, rows);
        rows += r.count[0];
    }
    CHECK(rows == INT64_C(1) << 34, "2^34x3 on 7: rows add up");
    check_tiling(&t, "2^34x3 on 7");

    /* 3x40x40 on 8: more ranks than rows, so pencils. */
    int64_t s3[3] = {3, 40, 40};
    in = input(3, s3, FS_DTYPE_COMPLEX128);
    CHECK(fs_transform_plan(&o, &in, 8, 1, &t) == FS_OK && t.pencil, "3x40x40 on 8: pencils");
    check_tiling(&t, "3x40x40 on 8");
    /* ... but slabs when asked. */
    o.decomp = FS_DECOMP_SLAB;
    CHECK(fs_transform_plan(&o, &in, 8, 1, &t) == FS_OK && !t.pencil, "--decomp=slab");
    check_tiling(&t, "3x40x40 slab on 8");
    o.decomp = FS_DECOMP_AUTO;

    /* Grids given, uneven sizes, every rank count up to 12. */
    int64_t s4[4] = {7, 9, 5, 3};
    in = input(4, s4, FS_DTYPE_FLOAT64);
    for (int P = 1; P <= 12; P++)
        for (int a = 1; a <= P; a++) {
            if (P % a)
                continue;
            o.grid[0] = a;
            o.grid[1] = P / a;
            char what[64];
            snprintf(what, sizeof what, "7x9x5x3 grid %dx%d", a, P / a);
            fs_status st = fs_transform_plan(&o, &in, P, 0, &t);
            CHECK(P == 1 ? st != FS_OK || !t.exchanges : st == FS_OK && t.pencil, "%s: plan", what);
            if (st == FS_OK)
                check_tiling(&t, what);
            fs_error_clear();
        }
    o.grid[0] = o.grid[1] = 0;
    /* A grid that is not the rank count is a usage error. */
    o.grid[0] = 3;
    o.grid[1] = 3;
    CHECK(fs_transform_plan(&o, &in, 8, 0, &t) == FS_ERR_USAGE, "--grid=3x3 on 8 ranks is refused");
    fs_error_clear();
    o.grid[0] = o.grid[1] = 0;

    /* Real transforms: r2c keeps pencils with the real axis last, halved. */
    o.real = 1;
    in = input(3, s3, FS_DTYPE_FLOAT64);
    CHECK(fs_transform_plan(&o, &in, 8, 0, &t) == FS_OK && t.pencil && t.shape[2] == 21,
          "r2c 3x40x40 on 8: pencils on the halved array");
    check_tiling(&t, "r2c 3x40x40 on 8");
    /* c2r stays on slabs, reversed so the real axis ends whole. */
    o.inverse = 1;
    int64_t h[3] = {6, 5, 21};
    in = input(3, h, FS_DTYPE_COMPLEX128);
    CHECK(fs_transform_plan(&o, &in, 4, 0, &t) == FS_OK && !t.pencil && t.split[1][0] == 0 &&
              t.real_len == 40,
          "c2r on 4: reversed slab, length 40");
    check_tiling(&t, "c2r 6x5x21 on 4");

    /* 1-D: four-step for composite lengths, any rank count. */
    o.real = o.inverse = 0;
    for (int64_t n = 2; n <= 64; n++)
        for (int P = 2; P <= 9; P += 7) {
            int64_t s1[1] = {n};
            in = input(1, s1, FS_DTYPE_COMPLEX128);
            CHECK(fs_transform_plan(&o, &in, P, 0, &t) == FS_OK, "1-D %" PRId64 " on %d", n, P);
            if (t.fold)
                CHECK(t.n1 * t.n2 == n && t.n1 > 1 && t.n1 <= t.n2, "1-D %" PRId64 ": factors", n);
            check_tiling(&t, "1-D");
        }

    printf("test_transform: %ld checks, %ld failed\n", checks, failures);
    return failures ? 1 : 0;
}
