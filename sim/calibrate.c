/* SPDX-License-Identifier: GPL-3.0-or-later */
/* calibrate: the rates of this machine's core that fftshard-sim models the
 * local work by, printed as sim/calibration.txt's lines.
 *
 *   fft_rate_double, fft_rate_single   5 N log2 N / seconds of FFTW's
 *       in-place 3-D complex transform (FFTW_ESTIMATE, fftshard's default
 *       plan) of SIZE^3 elements, the best of a few runs;
 *   copy_rate   bytes per second of memcpy between two 64 MiB buffers.
 *
 * Usage: calibrate [SIZE] (default 128). */
#include "config.h"

#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS 5

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double fft_rate_double(int n)
{
    size_t elems = (size_t)n * n * n;
    fftw_complex *a = fftw_malloc(elems * sizeof *a);
    if (!a)
        return -1;
    fftw_plan p = fftw_plan_dft_3d(n, n, n, a, a, FFTW_FORWARD, FFTW_ESTIMATE);
    if (!p) {
        fftw_free(a);
        return -1;
    }
    memset(a, 0, elems * sizeof *a);
    double best = INFINITY;
    for (int r = 0; r < RUNS; r++) {
        double t0 = now();
        fftw_execute(p);
        double dt = now() - t0;
        best = dt < best ? dt : best;
    }
    fftw_destroy_plan(p);
    fftw_free(a);
    return 5.0 * (double)elems * log2((double)elems) / best;
}

static double fft_rate_single(int n)
{
    size_t elems = (size_t)n * n * n;
    fftwf_complex *a = fftwf_malloc(elems * sizeof *a);
    if (!a)
        return -1;
    fftwf_plan p = fftwf_plan_dft_3d(n, n, n, a, a, FFTW_FORWARD, FFTW_ESTIMATE);
    if (!p) {
        fftwf_free(a);
        return -1;
    }
    memset(a, 0, elems * sizeof *a);
    double best = INFINITY;
    for (int r = 0; r < RUNS; r++) {
        double t0 = now();
        fftwf_execute(p);
        double dt = now() - t0;
        best = dt < best ? dt : best;
    }
    fftwf_destroy_plan(p);
    fftwf_free(a);
    return 5.0 * (double)elems * log2((double)elems) / best;
}

static double copy_rate(void)
{
    size_t bytes = (size_t)64 << 20;
    char *a = malloc(bytes), *b = malloc(bytes);
    if (!a || !b) {
        free(a);
        free(b);
        return -1;
    }
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    double best = INFINITY;
    for (int r = 0; r < RUNS; r++) {
        double t0 = now();
        memcpy(r % 2 ? a : b, r % 2 ? b : a, bytes);
        double dt = now() - t0;
        best = dt < best ? dt : best;
    }
    /* Keep the copies from being optimised away. */
    volatile char sink = a[bytes / 2] + b[bytes / 3];
    (void)sink;
    free(a);
    free(b);
    return (double)bytes / best;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 128;
    if (n < 8 || n > 1024) {
        fprintf(stderr, "calibrate: SIZE must be 8 to 1024\n");
        return 2;
    }
    double fd = fft_rate_double(n), fs = fft_rate_single(n), cr = copy_rate();
    if (fd <= 0 || fs <= 0 || cr <= 0) {
        fprintf(stderr, "calibrate: out of memory or FFTW could not plan\n");
        return 1;
    }
    printf("# fftshard-sim calibration: one core of this machine (sim/calibrate %d)\n", n);
    printf("fft_rate_double %.4g\n", fd);
    printf("fft_rate_single %.4g\n", fs);
    printf("copy_rate %.4g\n", cr);
    return 0;
}
