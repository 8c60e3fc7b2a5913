/* SPDX-License-Identifier: GPL-3.0-or-later */
/* green: see green.h. */
#include "config.h"

#include "compute/green.h"

#include <fftw3.h>
#include <math.h>
#include <stdlib.h>

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

fs_status fs_green_table(int d, const int64_t *n, const double *h, double **out)
{
    int dims[3];
    fftw_r2r_kind kinds[3];
    size_t total = 1;
    double volume = 1.0;
    for (int a = 0; a < d; a++) {
        if (n[a] + 1 > INT32_MAX)
            return fs_error_set(FS_ERR_RUNTIME, "--boundary=free: axis of %lld points: too "
                                "long for the Green's function's table", (long long)n[a]);
        dims[a] = (int)(n[a] + 1);
        kinds[a] = FFTW_REDFT00;
        total *= (size_t)dims[a];
        volume *= h[a];
    }
    double *g = malloc(sizeof(double) * total);
    if (!g)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory: %zu bytes for the Green's "
                            "function", sizeof(double) * total);
    /* planned before the values go in: FFTW_ESTIMATE leaves the array alone */
    fftw_plan p = fftw_plan_r2r(d, dims, g, g, kinds, FFTW_ESTIMATE);
    if (!p) {
        free(g);
        return fs_error_set(FS_ERR_RUNTIME, "FFTW gave no plan for the Green's function");
    }
    int64_t idx[3] = {0, 0, 0};
    for (size_t e = 0; e < total; e++) {
        double r2 = 0;
        for (int a = 0; a < d; a++)
            r2 += ((double)idx[a] * h[a]) * ((double)idx[a] * h[a]);
        g[e] = volume * (e == 0 ? fs_green_cell_mean(d, h) : fs_green_at(d, sqrt(r2)));
        for (int a = d - 1; a >= 0 && ++idx[a] == dims[a]; a--)
            idx[a] = 0;
    }
    fftw_execute(p);
    fftw_destroy_plan(p);
    *out = g;
    return FS_OK;
}
