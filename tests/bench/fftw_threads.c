/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fftw_threads: the in-memory ceiling of `make bench`. FFTW's own threaded
 * transform of an N0 x N1 x N2 complex128 array in one process, in place,
 * planned with FFTW_MEASURE on T threads; prints the best of R executions:
 *
 *     fftw_threads N0 N1 N2 THREADS REPEATS
 *     fftw-threads 256x256x256 threads=2 best=0.0871s
 *
 * The figure fftshard's fft + exchange is compared with on the same cores. */
#define _POSIX_C_SOURCE 200809L
#include <fftw3.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: fftw_threads N0 N1 N2 THREADS REPEATS\n");
        return 2;
    }
    int n[3] = {atoi(argv[1]), atoi(argv[2]), atoi(argv[3])};
    int threads = atoi(argv[4]), repeats = atoi(argv[5]);
    if (n[0] < 1 || n[1] < 1 || n[2] < 1 || threads < 1 || repeats < 1) {
        fprintf(stderr, "fftw_threads: expected positive numbers\n");
        return 2;
    }
    if (!fftw_init_threads()) {
        fprintf(stderr, "fftw_threads: fftw_init_threads failed\n");
        return 1;
    }
    fftw_plan_with_nthreads(threads);
    size_t elems = (size_t)n[0] * (size_t)n[1] * (size_t)n[2];
    fftw_complex *a = fftw_alloc_complex(elems);
    if (!a) {
        fprintf(stderr, "fftw_threads: out of memory\n");
        return 1;
    }
    fftw_plan p = fftw_plan_dft_3d(n[0], n[1], n[2], a, a, FFTW_FORWARD, FFTW_MEASURE);
    if (!p) {
        fprintf(stderr, "fftw_threads: no plan\n");
        return 1;
    }
    /* MEASURE overwrote the array: fill it after planning. */
    for (size_t i = 0; i < elems; i++) {
        a[i][0] = (double)(i % 97) / 97.0 - 0.5;
        a[i][1] = (double)(i % 89) / 89.0 - 0.5;
    }
    double best = 0;
    for (int r = 0; r < repeats; r++) {
        double t0 = now();
        fftw_execute(p);
        double t = now() - t0;
        best = r == 0 || t < best ? t : best;
    }
    printf("fftw-threads %dx%dx%d threads=%d best=%.4fs\n", n[0], n[1], n[2], threads, best);
    fftw_destroy_plan(p);
    fftw_free(a);
    fftw_cleanup_threads();
    return 0;
}
