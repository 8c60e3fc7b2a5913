/* SPDX-License-Identifier: GPL-3.0-or-later */
/* synth: see synth.h. */
#include "config.h"

#include "tools/synth.h"

#include <math.h>
#include <string.h>

/* splitmix64's finaliser: a bijective mix with good avalanche, so every
 * (seed, counter) pair gives an independent-looking value. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double fs_synth_uniform(uint64_t seed, uint64_t counter)
{
    uint64_t bits = mix64(mix64(seed + 0x9e3779b97f4a7c15ULL) ^ (counter * 0x9e3779b97f4a7c15ULL + 1));
    return (double)(bits >> 11) * 0x1.0p-53 * 2.0 - 1.0;
}

void fs_synth_init(fs_synth *s, int ndim, const int64_t *shape, uint64_t seed, int nwaves)
{
    memset(s, 0, sizeof *s);
    s->seed = seed;
    s->ndim = ndim;
    s->nwaves = nwaves > FS_SYNTH_MAX_WAVES ? FS_SYNTH_MAX_WAVES : nwaves;
    memcpy(s->shape, shape, (size_t)ndim * sizeof *shape);
    uint64_t c = UINT64_C(1) << 62; /* draws for the waves, apart from the noise counters */
    for (int w = 0; w < s->nwaves; w++) {
        for (int d = 0; d < ndim; d++) {
            double u = (fs_synth_uniform(seed, c++) + 1.0) / 2.0;
            int64_t k = (int64_t)(u * (double)shape[d]);
            s->k[w][d] = k < shape[d] ? k : shape[d] - 1;
        }
        s->amp_re[w] = fs_synth_uniform(seed, c++);
        s->amp_im[w] = fs_synth_uniform(seed, c++);
    }
}

void fs_synth_store(fs_dtype t, void *out, int64_t i, double re, double im)
{
    switch (t) {
    case FS_DTYPE_FLOAT32: ((float *)out)[i] = (float)re; break;
    case FS_DTYPE_FLOAT64:
    case FS_DTYPE_INTEGER: ((double *)out)[i] = re; break;
    case FS_DTYPE_COMPLEX64:
        ((float *)out)[2 * i] = (float)re;
        ((float *)out)[2 * i + 1] = (float)im;
        break;
    case FS_DTYPE_COMPLEX128:
        ((double *)out)[2 * i] = re;
        ((double *)out)[2 * i + 1] = im;
        break;
    }
}

void fs_synth_fill(const fs_synth *s, const fs_box *box, fs_dtype t, void *out)
{
    int64_t n = fs_box_elems(box);
    int ndim = s->ndim;
    int is_complex = t == FS_DTYPE_COMPLEX64 || t == FS_DTYPE_COMPLEX128;
    int64_t index[FS_LAYOUT_MAX_DIMS] = {0};
    for (int64_t i = 0; i < n; i++) {
        int64_t global = 0;
        for (int d = 0; d < ndim; d++)
            global = global * s->shape[d] + box->start[d] + index[d];
        double re = 0, im = 0;
        if (s->nwaves == 0) {
            re = fs_synth_uniform(s->seed, (uint64_t)global * 2);
            im = is_complex ? fs_synth_uniform(s->seed, (uint64_t)global * 2 + 1) : 0.0;
        } else {
            for (int w = 0; w < s->nwaves; w++) {
                /* Phase as an exact fraction per axis keeps large grids accurate. */
                double turns = 0;
                for (int d = 0; d < ndim; d++) {
                    int64_t m = (s->k[w][d] * (box->start[d] + index[d])) % s->shape[d];
                    turns += (double)m / (double)s->shape[d];
                }
                double c = cos(2 * M_PI * turns), si = sin(2 * M_PI * turns);
                re += s->amp_re[w] * c - s->amp_im[w] * si;
                im += s->amp_re[w] * si + s->amp_im[w] * c;
            }
        }
        fs_synth_store(t, out, i, re, im);
        for (int d = ndim - 1; d >= 0 && ++index[d] == box->count[d]; d--)
            index[d] = 0;
    }
}

/* The value at distance r from the centre (synth.h). */
static double gaussian_at(int d, double r, double sigma, int potential)
{
    double s2 = sqrt(2.0) * sigma, g = exp(-r * r / (2 * sigma * sigma));
    if (!potential)
        return g / pow(sqrt(2 * M_PI) * sigma, d);
    if (d == 1)
        return r / 2 * erf(r / s2) + sigma * g / sqrt(2 * M_PI);
    return r > 0 ? -erf(r / s2) / (4 * M_PI * r) : -sqrt(2 / M_PI) / (4 * M_PI * sigma);
}

void fs_synth_gaussian(int ndim, const int64_t *shape, const double *L, double sigma,
                       int potential, const fs_box *box, fs_dtype t, void *out)
{
    int64_t n = fs_box_elems(box), index[FS_LAYOUT_MAX_DIMS] = {0};
    for (int64_t i = 0; i < n; i++) {
        double r2 = 0;
        for (int a = 0; a < ndim; a++) {
            double x = ((double)(box->start[a] + index[a]) + 0.5) * L[a] / (double)shape[a] -
                       L[a] / 2;
            r2 += x * x;
        }
        fs_synth_store(t, out, i, gaussian_at(ndim, sqrt(r2), sigma, potential), 0.0);
        for (int a = ndim - 1; a >= 0 && ++index[a] == box->count[a]; a--)
            index[a] = 0;
    }
}
