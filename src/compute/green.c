/* SPDX-License-Identifier: GPL-3.0-or-later */
/* green: see green.h. */
#include "config.h"

#include "compute/green.h"

#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

double fs_green_at(int d, double r)
{
    return d == 1 ? r / 2.0 : d == 2 ? log(r) / (2.0 * M_PI) : -1.0 / (4.0 * M_PI * r);
}

/* The integral of 1/r over [0,a] x [0,b] x [0,c]. */
static double inverse_r_integral(double a, double b, double c)
{
    double d = sqrt(a * a + b * b + c * c);
    return b * c * log((a + d) / hypot(b, c)) + a * c * log((b + d) / hypot(a, c)) +
           a * b * log((c + d) / hypot(a, b)) - a * a / 2 * atan(b * c / (a * d)) -
           b * b / 2 * atan(a * c / (b * d)) - c * c / 2 * atan(a * b / (c * d));
}

/* The integral of ln(r) over [0,a] x [0,b]. */
static double log_r_integral(double a, double b)
{
    return 0.5 * (a * b * log(a * a + b * b) - 3 * a * b + a * a * atan(b / a) +
                  b * b * atan(a / b));
}

double fs_green_cell_mean(int d, const double *h)
{
    if (d == 1)
        return h[0] / 8.0; /* the mean of |x| / 2 over [-h/2, h/2] */
    if (d == 2)
        return 4.0 * log_r_integral(h[0] / 2, h[1] / 2) / (2.0 * M_PI * h[0] * h[1]);
    return -8.0 * inverse_r_integral(h[0] / 2, h[1] / 2, h[2] / 2) /
           (4.0 * M_PI * h[0] * h[1] * h[2]);
}

/* Volume times G along one line of the table's last axis, m points of
 * spacing hl, at squared distance r2 from that axis (the origin's value is
 * the caller's). */
static void fill_line(int d, double r2, double hl, int64_t m, double volume, double *line)
{
    for (int64_t j = 0; j < m; j++) {
        double x = (double)j * hl;
        line[j] = volume * fs_green_at(d, sqrt(r2 + x * x));
    }
}

/* The DCT-I of lines of m points in place, `block` of GREEN_BLOCK lines at
 * a time and `one` for the rest: line l's point j at first[l dist + j
 * stride] (both planned FFTW_UNALIGNED, so any line can start them). */
#define GREEN_BLOCK 16
typedef struct line_plans {
    fftw_plan block, one;
} line_plans;

static int line_plans_new(int m, int stride, int dist, double *g, line_plans *p)
{
    fftw_r2r_kind kind = FFTW_REDFT00;
    unsigned flags = FFTW_ESTIMATE | FFTW_UNALIGNED;
    p->block = fftw_plan_many_r2r(1, &m, GREEN_BLOCK, g, NULL, stride, dist, g, NULL, stride,
                                  dist, &kind, flags);
    p->one = fftw_plan_many_r2r(1, &m, 1, g, NULL, stride, dist, g, NULL, stride, dist, &kind,
                                flags);
    return p->block && p->one;
}

static void line_plans_free(line_plans *p)
{
    if (p->block)
        fftw_destroy_plan(p->block);
    if (p->one)
        fftw_destroy_plan(p->one);
}

static void lines_execute(const line_plans *p, double *first, int64_t count, int64_t dist)
{
    int64_t l = 0;
    for (; l + GREEN_BLOCK <= count; l += GREEN_BLOCK)
        fftw_execute_r2r(p->block, first + l * dist, first + l * dist);
    for (; l < count; l++)
        fftw_execute_r2r(p->one, first + l * dist, first + l * dist);
}

/* A cube of m^3 points with one spacing h: G and its transform are
 * symmetric in the axes, so g[i][j][:] = g[j][i][:] before the last axis's
 * DCT and after it, and the transform is symmetric in its last two axes
 * after the first axis's. The lines with i <= j are filled and transformed
 * along the last axis and copied to their mirrors, every line along the
 * middle axis is transformed, and along the first axis those of [.][k][l]
 * with k <= l, copied to [.][l][k]: two thirds of the DCT work, half the
 * filling. */
static fs_status cube_table(int64_t m, double h, double *g)
{
    line_plans last = {0}, first = {0};
    fftw_iodim line = {.n = (int)m, .is = (int)m, .os = (int)m};
    fftw_iodim loops[2] = {{.n = (int)m, .is = (int)(m * m), .os = (int)(m * m)},
                           {.n = (int)m, .is = 1, .os = 1}};
    fftw_r2r_kind kind = FFTW_REDFT00;
    fftw_plan middle = fftw_plan_guru_r2r(1, &line, 2, loops, g, g, &kind, FFTW_ESTIMATE);
    int ok = middle && line_plans_new((int)m, 1, (int)m, g, &last) &&
             line_plans_new((int)m, (int)(m * m), 1, g, &first);
    if (ok) {
        for (int64_t i = 0; i < m; i++) {
            double *row = g + (i * m + i) * m;
            for (int64_t j = i; j < m; j++)
                fill_line(3, (double)(i * i + j * j) * h * h, h, m, h * h * h, row + (j - i) * m);
            if (i == 0)
                g[0] = h * h * h * fs_green_cell_mean(3, (double[3]){h, h, h});
            lines_execute(&last, row, m - i, m);
            for (int64_t j = i + 1; j < m; j++)
                memcpy(g + (j * m + i) * m, g + (i * m + j) * m, sizeof(double) * (size_t)m);
        }
        fftw_execute(middle);
        for (int64_t k = 0; k < m; k++)
            lines_execute(&first, g + k * m + k, m - k, 1);
        for (int64_t i = 0; i < m; i++) {
            double *plane = g + i * m * m;
            for (int64_t k = 0; k < m; k++)
                for (int64_t l = k + 1; l < m; l++)
                    plane[l * m + k] = plane[k * m + l];
        }
    }
    if (middle)
        fftw_destroy_plan(middle);
    line_plans_free(&last);
    line_plans_free(&first);
    return ok ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "FFTW gave no plan for the Green's function");
}

/* Any other grid: every line filled, FFTW's d-dimensional REDFT00. */
static fs_status grid_table(int d, const int *dims, const double *h, double *g)
{
    fftw_r2r_kind kinds[3] = {FFTW_REDFT00, FFTW_REDFT00, FFTW_REDFT00};
    /* planned before the values go in: FFTW_ESTIMATE leaves the array alone */
    fftw_plan p = fftw_plan_r2r(d, dims, g, g, kinds, FFTW_ESTIMATE);
    if (!p)
        return fs_error_set(FS_ERR_RUNTIME, "FFTW gave no plan for the Green's function");
    double volume = 1.0;
    int64_t lines = 1, m = dims[d - 1];
    for (int a = 0; a < d; a++)
        volume *= h[a];
    for (int a = 0; a < d - 1; a++)
        lines *= dims[a];
    int64_t idx[3] = {0, 0, 0};
    for (int64_t l = 0; l < lines; l++) {
        double r2 = 0;
        for (int a = 0; a < d - 1; a++)
            r2 += ((double)idx[a] * h[a]) * ((double)idx[a] * h[a]);
        fill_line(d, r2, h[d - 1], m, volume, g + l * m);
        for (int a = d - 2; a >= 0 && ++idx[a] == dims[a]; a--)
            idx[a] = 0;
    }
    g[0] = volume * fs_green_cell_mean(d, h);
    fftw_execute(p);
    fftw_destroy_plan(p);
    return FS_OK;
}

fs_status fs_green_table(int d, const int64_t *n, const double *h, double **out)
{
    int dims[3] = {1, 1, 1};
    size_t total = 1;
    for (int a = 0; a < d; a++) {
        if (n[a] + 1 > INT32_MAX || (d == 3 && (n[a] + 1) * (n[a] + 1) > INT32_MAX))
            return fs_error_set(FS_ERR_RUNTIME, "--boundary=free: axis of %lld points: too "
                                "long for the Green's function's table", (long long)n[a]);
        dims[a] = (int)(n[a] + 1);
        total *= (size_t)dims[a];
    }
    double *g = malloc(sizeof(double) * total);
    if (!g)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory: %zu bytes for the Green's "
                            "function", sizeof(double) * total);
    int cube = d == 3 && n[0] == n[1] && n[1] == n[2] && h[0] == h[1] && h[1] == h[2];
    fs_status st = cube ? cube_table(dims[0], h[0], g) : grid_table(d, dims, h, g);
    if (st != FS_OK) {
        free(g);
        return st;
    }
    *out = g;
    return FS_OK;
}
