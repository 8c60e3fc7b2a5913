/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_transform: the decomposition arithmetic of transform.c, serial, for
 * rank counts no test machine has: every stage's boxes must tile the array
 * exactly (sizes add up, no box outside it), the exchanges must move one
 * grid dimension, and 64-bit sizes must come out exact; the cosine and sine
 * axes (r2r.c): their kinds' frequencies against the definitions, sizes and
 * inverses, and their operations in every layout. Nothing is allocated at
 * the array's size. Exit 0 when all passed. */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plan/transform.h"

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

/* A request for every axis of an input of this shape and type on
 * `nranks` ranks, precision from the type (as the planner decides it). */
static fs_transform_request request(int ndim, const int64_t *shape, fs_dtype dtype, int nranks)
{
    fs_transform_request rq;
    memset(&rq, 0, sizeof rq);
    rq.ndim = ndim;
    memcpy(rq.shape, shape, (size_t)ndim * sizeof *shape);
    rq.in_dtype = dtype;
    snprintf(rq.in_name, sizeof rq.in_name, "/x");
    rq.in_type_name = fs_dtype_name(dtype);
    for (int k = 0; k < ndim; k++)
        rq.transform_axis[k] = 1;
    rq.real_axis = ndim - 1;
    rq.prec = fs_dtype_is_single(dtype) ? FS_SINGLE : FS_DOUBLE;
    rq.norm = FS_NORM_BACKWARD;
    rq.nranks = nranks;
    return rq;
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

/* Every transformed axis is transformed exactly once, in a stage where it
 * is whole on every rank (or by the block work of an overlapping strategy,
 * which sees it whole), and no batch axis is transformed. */
static void check_ops(const fs_transform *t, const char *what)
{
    for (int k = 0; k < t->ndim && !t->fold; k++) {
        int times = t->hook_axes_pre[k] + t->hook_axes_post[k], split_there = 0;
        for (int s = 0; s < t->nstages; s++)
            for (int i = 0; i < t->nops[s]; i++) {
                const fs_op_spec *op = &t->ops[s][i];
                int does = ((op->kind == FS_OP_C2C || op->kind == FS_OP_R2C ||
                             op->kind == FS_OP_R2R) && op->axes[k]) ||
                           ((op->kind == FS_OP_C2R || op->kind == FS_OP_C2R_VIA_C2C) &&
                            op->real_axis == k);
                times += does;
                split_there = split_there || (does && (t->split[s][0] == k || t->split[s][1] == k));
            }
        CHECK(times == (t->transform_axis[k] ? 1 : 0), "%s: axis %d transformed %d times", what, k,
              times);
        CHECK(!split_there, "%s: axis %d transformed while split", what, k);
    }
}

/* The ranks holding nothing in some stage. */
static int idle_ranks(const fs_transform *t)
{
    int idle = 0;
    for (int c1 = 0; c1 < t->grid[0]; c1++)
        for (int c2 = 0; c2 < t->grid[1]; c2++) {
            int empty = 0;
            for (int s = 0; s < t->nstages; s++) {
                fs_box b = fs_transform_box(t, s, c1, c2);
                empty = empty || fs_box_elems(&b) == 0;
            }
            idle += empty;
        }
    return idle;
}

/* Batch axes in every position, one to three of them, on 1 to 12 ranks,
 * every kind, auto, slabs and pencils: every layout tiles the array and
 * transforms each axis once, where it is whole. */
static void check_batch_layouts(void)
{
    static const int64_t shapes[][4] = {{3, 8, 6, 5}, {2, 9, 7, 1}, {5, 1, 4, 6}, {7, 3, 2, 4}};
    fs_decomp decomps[3] = {FS_DECOMP_AUTO, FS_DECOMP_SLAB, FS_DECOMP_PENCIL};
    for (int sh = 0; sh < 4; sh++)
        for (int mask = 1; mask < 16; mask++)
            for (int P = 1; P <= 12; P++)
                for (int d = 0; d < 3; d++)
                    for (int kind = 0; kind < 3; kind++) {
                        fs_transform_request rq = request(4, shapes[sh], FS_DTYPE_FLOAT64, P);
                        int last = -1;
                        for (int k = 0; k < 4; k++) {
                            rq.transform_axis[k] = (mask >> k) & 1;
                            last = rq.transform_axis[k] ? k : last;
                        }
                        rq.real_axis = last;
                        rq.real = kind > 0;
                        rq.inverse = kind == 2;
                        rq.decomp = decomps[d];
                        fs_transform t;
                        char what[96];
                        snprintf(what, sizeof what, "%lldx%lldx%lldx%lld axes mask %d on %d, decomp %d, kind %d",
                                 (long long)shapes[sh][0], (long long)shapes[sh][1],
                                 (long long)shapes[sh][2], (long long)shapes[sh][3], mask, P, d, kind);
                        fs_status st = fs_transform_plan(&rq, &t);
                        if (kind == 2 && rq.shape[last] < 2) {
                            fs_error_clear();
                            continue; /* c2r of length 1 needs --last-size */
                        }
                        CHECK(st == FS_OK || (d == 2 && P == 1), "%s: plan failed: %s", what,
                              fs_error_message());
                        fs_error_clear();
                        if (st != FS_OK)
                            continue;
                        CHECK(d != 2 || t.pencil, "%s: --decomp=pencil gave slabs", what);
                        check_tiling(&t, what);
                        check_ops(&t, what);
                    }
}

/* Entry [k][j] of the unscaled matrix of kind c on n points, from
 * scipy.fft's definitions, for the input indices j that carry no halved
 * end term (DCT-I's ends, DCT-III's first, DST-III's last). */
static double definition(fs_r2r c, int64_t n, int64_t k, int64_t j)
{
    double N = (double)n, K = (double)k, J = (double)j;
    switch (c) {
    case FS_DCT1: return 2 * cos(M_PI * K * J / (N - 1));
    case FS_DCT2: return 2 * cos(M_PI * K * (2 * J + 1) / (2 * N));
    case FS_DCT3: return 2 * cos(M_PI * (2 * K + 1) * J / (2 * N));
    case FS_DCT4: return 2 * cos(M_PI * (2 * K + 1) * (2 * J + 1) / (4 * N));
    case FS_DST1: return 2 * sin(M_PI * (K + 1) * (J + 1) / (N + 1));
    case FS_DST2: return 2 * sin(M_PI * (K + 1) * (2 * J + 1) / (2 * N));
    case FS_DST3: return 2 * sin(M_PI * (2 * K + 1) * (J + 1) / (2 * N));
    case FS_DST4: return 2 * sin(M_PI * (2 * K + 1) * (2 * J + 1) / (4 * N));
    case FS_AXIS_FFT: break;
    }
    return NAN;
}

/* fs_r2r_angle against the definitions (2 cos or 2 sin of theta_k (j +
 * s)), the logical sizes, the inverses and the orthogonalizing factors. */
static void check_r2r_kinds(void)
{
    for (int c = FS_DCT1; c <= FS_DST4; c++) {
        fs_r2r kind = (fs_r2r)c;
        int dct = kind <= FS_DCT4, type = dct ? c - FS_DCT1 + 1 : c - FS_DST1 + 1;
        double s = type == 2 || type == 4 ? 0.5 : dct ? 0 : 1;
        for (int64_t n = kind == FS_DCT1 ? 2 : 1; n <= 7; n++)
            for (int64_t k = 0; k < n; k++)
                for (int64_t j = 0; j < n; j++) {
                    int halved = (kind == FS_DCT1 && (j == 0 || j == n - 1)) ||
                                 (kind == FS_DCT3 && j == 0) || (kind == FS_DST3 && j == n - 1);
                    double th = fs_r2r_angle(kind, n, k) * ((double)j + s);
                    double got = 2 * (dct ? cos(th) : sin(th));
                    CHECK(halved || fabs(got - definition(kind, n, k, j)) < 1e-12,
                          "%s n=%" PRId64 " [%" PRId64 "][%" PRId64 "]: %g, not %g",
                          fs_r2r_name(kind), n, k, j, got, definition(kind, n, k, j));
                }
        double N = fs_r2r_points(kind, 5);
        CHECK(N == (kind == FS_DCT1 ? 8 : kind == FS_DST1 ? 12 : 10), "%s: logical size %g",
              fs_r2r_name(kind), N);
        fs_r2r inv = fs_r2r_inverse(kind);
        CHECK(fs_r2r_inverse(inv) == kind && (type == 2 || type == 3 ? inv != kind : inv == kind),
              "%s: inverse %s", fs_r2r_name(kind), fs_r2r_name(inv));
        /* ortho: a kind's factors and its inverse's undo each other */
        fs_r2r_edges e = fs_r2r_ortho_edges(kind, 1), f = fs_r2r_ortho_edges(inv, 1);
        CHECK(fabs(e.post_first * f.pre_first - 1) < 1e-15 &&
                  fabs(e.post_last * f.pre_last - 1) < 1e-15,
              "%s: ortho factors not undone by %s's", fs_r2r_name(kind), fs_r2r_name(inv));
        e = fs_r2r_ortho_edges(kind, 0);
        CHECK(e.pre_first == 1 && e.pre_last == 1 && e.post_first == 1 && e.post_last == 1,
              "%s: factors without ortho", fs_r2r_name(kind));
    }
    CHECK(fs_r2r_points(FS_AXIS_FFT, 5) == 5, "a Fourier axis counts its length");
    CHECK(fs_r2r_parse("dst3") == FS_DST3 && fs_r2r_parse("dct") < 0 && fs_r2r_parse("fft") == 0,
          "kind names");
}

/* Cosine and sine axes in every position with Fourier ones, every kind of
 * those, on 1 to 9 ranks, slabs and pencils: every layout tiles the array,
 * transforms each axis once where it is whole, the R2R operations after
 * the stage's complex and real-to-complex ones and before a complex-to-real
 * one, of the kind computed (an inverse's: the inverse kind). */
static void check_r2r_layouts(void)
{
    static const int64_t shape[4] = {5, 8, 6, 7};
    fs_decomp decomps[2] = {FS_DECOMP_AUTO, FS_DECOMP_PENCIL};
    for (int mask = 1; mask < 16; mask++)
        for (int P = 1; P <= 9; P += 2)
            for (int d = 0; d < 2; d++)
                for (int kind = 0; kind < 4; kind++) {
                    fs_transform_request rq = request(4, shape, FS_DTYPE_FLOAT64, P);
                    int last = -1;
                    for (int k = 0; k < 4; k++) {
                        rq.transform_axis[k] = 1;
                        rq.r2r[k] = (mask >> k) & 1 ? (fs_r2r)(FS_DCT1 + (k + mask) % 8) : FS_AXIS_FFT;
                        last = rq.r2r[k] == FS_AXIS_FFT ? k : last;
                    }
                    if (kind >= 2 && last < 0)
                        continue;
                    rq.real_axis = last;
                    rq.real = kind >= 2;
                    rq.inverse = kind == 1 || kind == 3;
                    rq.decomp = decomps[d];
                    fs_transform t;
                    char what[96];
                    snprintf(what, sizeof what, "r2r mask %d on %d, decomp %d, kind %d", mask, P, d, kind);
                    fs_status st = fs_transform_plan(&rq, &t);
                    CHECK(st == FS_OK || (d == 1 && P == 1), "%s: %s", what, fs_error_message());
                    fs_error_clear();
                    if (st != FS_OK)
                        continue;
                    check_tiling(&t, what);
                    check_ops(&t, what);
                    CHECK(fs_dtype_is_real(t.work_type) == (mask == 15), "%s: working type %s", what,
                          fs_dtype_name(t.work_type));
                    for (int s = 0; s < t.nstages; s++)
                        for (int i = 0; i < t.nops[s]; i++) {
                            const fs_op_spec *op = &t.ops[s][i];
                            for (int j = i + 1; op->kind == FS_OP_R2R && j < t.nops[s]; j++)
                                CHECK(t.ops[s][j].kind != FS_OP_C2C && t.ops[s][j].kind != FS_OP_R2C,
                                      "%s: a complex transform after R2R", what);
                            for (int j = 0; op->kind == FS_OP_R2R && j < i; j++)
                                CHECK(t.ops[s][j].kind != FS_OP_C2R && t.ops[s][j].kind != FS_OP_C2R_VIA_C2C,
                                      "%s: R2R after c2r", what);
                            for (int k = 0; op->kind == FS_OP_R2R && k < 4; k++)
                                CHECK(!op->axes[k] || op->r2r[k] == (rq.inverse ? fs_r2r_inverse(rq.r2r[k])
                                                                                  : rq.r2r[k]),
                                      "%s: axis %d computes %s", what, k, fs_r2r_name(op->r2r[k]));
                        }
                }
}

int main(void)
{
    check_r2r_kinds();
    check_r2r_layouts();
    fs_transform_request rq;
    fs_transform t;

    /* 8192^3 complex64 on 65536 ranks: pencils 256 x 256, 32x32x8192 blocks. */
    int64_t big[3] = {8192, 8192, 8192};
    rq = request(3, big, FS_DTYPE_COMPLEX64, 65536);
    rq.hooks = 1;
    CHECK(fs_transform_plan(&rq, &t) == FS_OK, "8192^3 on 65536: plan failed: %s",
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
    rq = request(2, tall, FS_DTYPE_COMPLEX128, 7);
    rq.hooks = 1;
    CHECK(fs_transform_plan(&rq, &t) == FS_OK, "2^34x3 on 7: plan failed");
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
    rq = request(3, s3, FS_DTYPE_COMPLEX128, 8);
    rq.hooks = 1;
    CHECK(fs_transform_plan(&rq, &t) == FS_OK && t.pencil, "3x40x40 on 8: pencils");
    check_tiling(&t, "3x40x40 on 8");
    /* ... but slabs when asked. */
    rq.decomp = FS_DECOMP_SLAB;
    CHECK(fs_transform_plan(&rq, &t) == FS_OK && !t.pencil, "--decomp=slab");
    check_tiling(&t, "3x40x40 slab on 8");

    /* Grids given, uneven sizes, every rank count up to 12. */
    int64_t s4[4] = {7, 9, 5, 3};
    for (int P = 1; P <= 12; P++)
        for (int a = 1; a <= P; a++) {
            if (P % a)
                continue;
            rq = request(4, s4, FS_DTYPE_FLOAT64, P);
            rq.grid[0] = a;
            rq.grid[1] = P / a;
            char what[64];
            snprintf(what, sizeof what, "7x9x5x3 grid %dx%d", a, P / a);
            fs_status st = fs_transform_plan(&rq, &t);
            CHECK(P == 1 ? st != FS_OK || !t.exchanges : st == FS_OK && t.pencil, "%s: plan", what);
            if (st == FS_OK)
                check_tiling(&t, what);
            fs_error_clear();
        }
    /* A grid that is not the rank count is a usage error. */
    rq = request(4, s4, FS_DTYPE_FLOAT64, 8);
    rq.grid[0] = 3;
    rq.grid[1] = 3;
    CHECK(fs_transform_plan(&rq, &t) == FS_ERR_USAGE, "--grid=3x3 on 8 ranks is refused");
    fs_error_clear();

    /* Real transforms: r2c keeps pencils with the real axis last, halved. */
    rq = request(3, s3, FS_DTYPE_FLOAT64, 8);
    rq.real = 1;
    CHECK(fs_transform_plan(&rq, &t) == FS_OK && t.pencil && t.shape[2] == 21,
          "r2c 3x40x40 on 8: pencils on the halved array");
    check_tiling(&t, "r2c 3x40x40 on 8");
    /* c2r stays on slabs, reversed so the real axis ends whole. */
    int64_t h[3] = {6, 5, 21};
    rq = request(3, h, FS_DTYPE_COMPLEX128, 4);
    rq.real = rq.inverse = 1;
    CHECK(fs_transform_plan(&rq, &t) == FS_OK && !t.pencil && t.split[1][0] == 0 &&
              t.real_len == 40,
          "c2r on 4: reversed slab, length 40");
    check_tiling(&t, "c2r 6x5x21 on 4");

    /* 1-D: four-step for composite lengths, any rank count. */
    for (int64_t n = 2; n <= 64; n++)
        for (int P = 2; P <= 9; P += 7) {
            int64_t s1[1] = {n};
            rq = request(1, s1, FS_DTYPE_COMPLEX128, P);
            CHECK(fs_transform_plan(&rq, &t) == FS_OK, "1-D %" PRId64 " on %d", n, P);
            if (t.fold)
                CHECK(t.n1 * t.n2 == n && t.n1 > 1 && t.n1 <= t.n2, "1-D %" PRId64 ": factors", n);
            check_tiling(&t, "1-D");
        }

    check_batch_layouts();

    /* A vector field 3 x 512^3 with --axes=1,2,3 --real on 64 ranks: a slab
     * of axis 1, then axis 2, the short batch axis whole: no rank idle. */
    int64_t vec[4] = {3, 512, 512, 512};
    rq = request(4, vec, FS_DTYPE_FLOAT32, 64);
    rq.transform_axis[0] = 0;
    rq.real = 1;
    CHECK(fs_transform_plan(&rq, &t) == FS_OK && !t.pencil && t.split[0][0] == 1 &&
              t.split[1][0] == 2 && t.padded && t.shape[3] == 257,
          "3x512^3 axes 1,2,3 r2c on 64: slab 1 -> 2, padded");
    CHECK(idle_ranks(&t) == 0, "3x512^3 on 64: %d ranks idle", idle_ranks(&t));
    check_ops(&t, "3x512^3 on 64");
    rq.decomp = FS_DECOMP_PENCIL;
    CHECK(fs_transform_plan(&rq, &t) == FS_OK && t.pencil && idle_ranks(&t) == 0,
          "3x512^3 --decomp=pencil on 64: every rank holds data");
    rq.decomp = FS_DECOMP_AUTO;
    rq.grid[0] = rq.grid[1] = 8;
    CHECK(fs_transform_plan(&rq, &t) == FS_OK && t.pencil && idle_ranks(&t) == 0 && t.nstages == 3,
          "3x512^3 --grid=8x8: pencils on axes 1, 2, 3");
    check_ops(&t, "3x512^3 grid 8x8");
    /* 8 x 16 x 16 with --axes=1,2 on 64: no axis fills 64 ranks alone; the
     * batch axis over the grid rows in both stages. */
    int64_t ser[3] = {8, 16, 16};
    rq = request(3, ser, FS_DTYPE_COMPLEX128, 64);
    rq.transform_axis[0] = 0;
    CHECK(fs_transform_plan(&rq, &t) == FS_OK && t.pencil && t.grid[0] == 8 && t.nstages == 2 &&
              t.split[0][0] == 0 && t.split[1][0] == 0 && t.split[0][1] == 1 &&
              t.split[1][1] == 2 && idle_ranks(&t) == 0,
          "8x16x16 axes 1,2 on 64: grid 8x8, axis 0 over the rows");
    /* A long batch axis after a short transformed axis: no exchange. */
    int64_t tall2[2] = {2, 1000};
    rq = request(2, tall2, FS_DTYPE_COMPLEX128, 8);
    rq.transform_axis[1] = 0;
    CHECK(fs_transform_plan(&rq, &t) == FS_OK && !t.exchanges && t.split[0][0] == 1,
          "2x1000 axis 0 on 8: split axis 1, no exchange");
    /* Today's layouts where they fill every rank: unchanged. */
    int64_t s13[3] = {13, 7, 4};
    rq = request(3, s13, FS_DTYPE_COMPLEX128, 5);
    CHECK(fs_transform_plan(&rq, &t) == FS_OK && !t.pencil && t.split[0][0] == 0 &&
              t.split[1][0] == 1,
          "13x7x4 on 5: slab 0 -> 1");
    int64_t bat0[3] = {40, 6, 5};
    rq = request(3, bat0, FS_DTYPE_COMPLEX128, 8);
    rq.transform_axis[0] = 0;
    CHECK(fs_transform_plan(&rq, &t) == FS_OK && !t.exchanges && t.split[0][0] == 0,
          "40x6x5 axes 1,2 on 8: slab on axis 0, no exchange");

    /* DCT-I needs two points; a 1-D cosine transform on several ranks is no four-step */
    int64_t one[3] = {4, 1, 3};
    rq = request(3, one, FS_DTYPE_FLOAT64, 2);
    rq.r2r[1] = FS_DCT1;
    CHECK(fs_transform_plan(&rq, &t) == FS_ERR_USAGE, "DCT-I of one point is refused");
    fs_error_clear();
    rq.r2r[1] = FS_DST1;
    CHECK(fs_transform_plan(&rq, &t) == FS_OK && t.kind == FS_C2C, "DST-I of one point");
    int64_t line[1] = {4096};
    rq = request(1, line, FS_DTYPE_FLOAT64, 4);
    rq.r2r[0] = FS_DCT2;
    CHECK(fs_transform_plan(&rq, &t) == FS_OK && !t.fold && t.kind == FS_R2R &&
              t.split[1][0] == FS_GATHER && t.work_type == FS_DTYPE_FLOAT64,
          "1-D DCT-II on 4 ranks: gathered, real");

    printf("test_transform: %ld checks, %ld failed\n", checks, failures);
    return failures ? 1 : 0;
}
