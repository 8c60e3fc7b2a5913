/* SPDX-License-Identifier: GPL-3.0-or-later */
/* dctfft: see dctfft.h. Makhoul's reordering: for DCT-II of x on n
 * points, v[m] = x[2m] and v[n-1-m] = x[2m+1], V = DFT(v), and
 * y[k] = 2 Re(w_k V[k]) with w_k = exp(-i pi k/(2n)). Two real lines a
 * and b go in as v_a + i v_b; their spectra part again as
 * V_a = (Z[k] + conj Z[n-k])/2 and V_b = (Z[k] - conj Z[n-k])/(2i).
 * DCT-III runs it backwards: Z[k] = conj(w_k) (X[k] - i X[n-k]) (X[n] = 0)
 * is Hermitian for real X, so one backward DFT of the two lines' sum
 * gives both, reordered back. DST-II is DCT-II of (-1)^i x read out
 * backwards, DST-III (-1)^i times DCT-III of x read backwards. */
#include "config.h"

#include "compute/dctfft.h"
#include "compute/sharedbuf.h"

#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct fs_dctfft {
    fs_precision prec;
    int comps, inverse, odd;     /* odd: DST (signs at odd indices, indices reversed) */
    int64_t n, howmany, dist, lines, block; /* lines: complex lines; block: per FFT */
    void *buf;                   /* block lines of n complex values, the FFT's */
    void *tw;                    /* n complex: w_k */
    void *zero, *junk;           /* n reals: an odd last real line's partner in, out */
    void *plan;
};

/* One complex line c of the planned lines at data: its real parts re and
 * imaginary parts im, es reals apart (the partner of an odd last real line
 * is `spare`). */
#define LINE_PARTS(T, p, data, c, spare, re, im, es)                                         \
    do {                                                                                    \
        if ((p)->comps == 2) {                                                              \
            re = (T *)(data) + 2 * (c) * (p)->dist;                                         \
            im = re + 1;                                                                    \
            es = 2;                                                                         \
        } else {                                                                            \
            re = (T *)(data) + 2 * (c) * (p)->dist;                                         \
            im = 2 * (c) + 1 < (p)->howmany ? re + (p)->dist : (T *)(spare);                \
            es = 1;                                                                         \
        }                                                                                   \
    } while (0)

/* The reordering into the FFT's line z and the twiddled sums out of it,
 * forward (DCT-II, DST-II) and inverse (DCT-III, DST-III), for values T. */
#define DEFINE_DCTFFT(SUF, T, EXEC)                                                         \
    static void forward_in_##SUF(const fs_dctfft *p, const T *re, const T *im, int64_t es,  \
                                 T *z)                                                      \
    {                                                                                       \
        int64_t n = p->n;                                                                   \
        T sg = p->odd ? (T)-1 : (T)1;                                                       \
        for (int64_t m = 0; 2 * m < n; m++) {                                               \
            z[2 * m] = re[2 * m * es];                                                      \
            z[2 * m + 1] = im[2 * m * es];                                                  \
        }                                                                                   \
        for (int64_t m = 0; 2 * m + 1 < n; m++) {                                           \
            int64_t d = n - 1 - m;                                                          \
            z[2 * d] = sg * re[(2 * m + 1) * es];                                           \
            z[2 * d + 1] = sg * im[(2 * m + 1) * es];                                       \
        }                                                                                   \
    }                                                                                       \
    static void forward_out_##SUF(const fs_dctfft *p, const T *z, T *re, T *im, int64_t es) \
    {                                                                                       \
        int64_t n = p->n, o = p->odd ? n - 1 : 0, step = p->odd ? -es : es;                 \
        const T *tw = p->tw;                                                                \
        re[o * es] = 2 * z[0];                                                              \
        im[o * es] = 2 * z[1];                                                              \
        T *r = re + o * es + step, *i = im + o * es + step;                                 \
        for (int64_t k = 1; k < n; k++, r += step, i += step) {                             \
            int64_t j = n - k;                                                              \
            T sr = z[2 * k] + z[2 * j], si = z[2 * k + 1] - z[2 * j + 1];                   \
            T dr = z[2 * k] - z[2 * j], di = z[2 * k + 1] + z[2 * j + 1];                   \
            T wr = tw[2 * k], wi = tw[2 * k + 1];                                           \
            *r = wr * sr - wi * si;                                                         \
            *i = wr * di + wi * dr;                                                         \
        }                                                                                   \
    }                                                                                       \
    static void inverse_in_##SUF(const fs_dctfft *p, const T *re, const T *im, int64_t es,  \
                                 T *z)                                                      \
    {                                                                                       \
        int64_t n = p->n;                                                                   \
        const T *tw = p->tw;                                                                \
        for (int64_t k = 0; k < n; k++) {                                                   \
            int64_t a = p->odd ? n - 1 - k : k, b = p->odd ? k - 1 : n - k;                 \
            T pr = re[a * es], pi = im[a * es];                                             \
            T qr = k ? re[b * es] : 0, qi = k ? im[b * es] : 0;                             \
            T ar = pr + qi, ai = pi - qr, wr = tw[2 * k], wi = tw[2 * k + 1];               \
            z[2 * k] = wr * ar + wi * ai;                                                   \
            z[2 * k + 1] = wr * ai - wi * ar;                                               \
        }                                                                                   \
    }                                                                                       \
    static void inverse_out_##SUF(const fs_dctfft *p, const T *z, T *re, T *im, int64_t es) \
    {                                                                                       \
        int64_t n = p->n;                                                                   \
        T sg = p->odd ? (T)-1 : (T)1;                                                       \
        for (int64_t m = 0; 2 * m < n; m++) {                                               \
            re[2 * m * es] = z[2 * m];                                                      \
            im[2 * m * es] = z[2 * m + 1];                                                  \
        }                                                                                   \
        for (int64_t m = 0; 2 * m + 1 < n; m++) {                                           \
            int64_t d = n - 1 - m;                                                          \
            re[(2 * m + 1) * es] = sg * z[2 * d];                                           \
            im[(2 * m + 1) * es] = sg * z[2 * d + 1];                                       \
        }                                                                                   \
    }                                                                                       \
    static void execute_##SUF(fs_dctfft *p, void *data)                                     \
    {                                                                                       \
        T *buf = p->buf, *re, *im;                                                          \
        int64_t es, n = p->n;                                                               \
        for (int64_t c0 = 0; c0 < p->lines; c0 += p->block) {                               \
            int64_t nb = p->lines - c0 < p->block ? p->lines - c0 : p->block;               \
            for (int64_t c = 0; c < nb; c++) {                                              \
                LINE_PARTS(T, p, data, c0 + c, p->zero, re, im, es);                        \
                (p->inverse ? inverse_in_##SUF : forward_in_##SUF)(p, re, im, es,           \
                                                                   buf + 2 * c * n);        \
            }                                                                               \
            /* the lines left over by a last, short block: zeros, which stay so */          \
            if (nb < p->block)                                                              \
                memset(buf + 2 * nb * n, 0, (size_t)((p->block - nb) * 2 * n) * sizeof(T)); \
            EXEC(p->plan);                                                                  \
            for (int64_t c = 0; c < nb; c++) {                                              \
                LINE_PARTS(T, p, data, c0 + c, p->junk, re, im, es);                        \
                (p->inverse ? inverse_out_##SUF : forward_out_##SUF)(p, buf + 2 * c * n, re, \
                                                                     im, es);               \
            }                                                                               \
        }                                                                                   \
    }

DEFINE_DCTFFT(double, double, fftw_execute)
DEFINE_DCTFFT(single, float, fftwf_execute)

/* The plan's n twiddle factors w_k = exp(-i pi k/(2n)) in its precision. */
static void fill_twiddles(fs_dctfft *p)
{
    for (int64_t k = 0; k < p->n; k++) {
        double a = M_PI * (double)k / (2.0 * (double)p->n), c = cos(a), s = -sin(a);
        if (p->prec == FS_SINGLE) {
            ((float *)p->tw)[2 * k] = (float)c;
            ((float *)p->tw)[2 * k + 1] = (float)s;
        } else {
            ((double *)p->tw)[2 * k] = c;
            ((double *)p->tw)[2 * k + 1] = s;
        }
    }
}

/* The block every transform assembles its lines in, and the zeros and
 * the sink of an odd last line's partner (sharedbuf.h: the zeros stay
 * zeros, nobody reads the sink). */
static fs_sharedbuf shared_block, shared_zero, shared_junk;
#define SHARED_LINE_BYTES ((size_t)64 * 1024)

fs_dctfft *fs_dctfft_new(fs_precision prec, fs_r2r kind, int64_t n, int64_t howmany,
                         int64_t dist, int comps, unsigned flags)
{
    if (!fs_r2r_fast(kind, n, howmany * comps))
        return NULL;
    fs_dctfft *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    size_t real = prec == FS_SINGLE ? sizeof(float) : sizeof(double);
    p->prec = prec;
    p->comps = comps;
    p->inverse = kind == FS_DCT3 || kind == FS_DST3;
    p->odd = kind == FS_DST2 || kind == FS_DST3;
    p->n = n;
    p->howmany = howmany;
    p->dist = dist;
    p->lines = comps == 2 ? howmany : (howmany + 1) / 2;
    p->block = fs_r2r_fast_block(n, p->lines, 2 * real);
    p->buf = fs_sharedbuf_take(&shared_block, (size_t)(p->block * n) * 2 * real,
                               FS_R2R_FAST_BLOCK_BYTES);
    p->tw = fftw_malloc((size_t)n * 2 * real);
    p->zero = fs_sharedbuf_take(&shared_zero, (size_t)n * real, SHARED_LINE_BYTES);
    p->junk = fs_sharedbuf_take(&shared_junk, (size_t)n * real, SHARED_LINE_BYTES);
    if (!p->buf || !p->tw || !p->zero || !p->junk) {
        fs_dctfft_free(&p);
        return NULL;
    }
    memset(p->zero, 0, (size_t)n * real);
    fill_twiddles(p);
    int len = (int)n, sign = p->inverse ? FFTW_BACKWARD : FFTW_FORWARD, nb = (int)p->block;
    p->plan = prec == FS_SINGLE
                  ? (void *)fftwf_plan_many_dft(1, &len, nb, p->buf, NULL, 1, len, p->buf, NULL,
                                                1, len, sign, flags)
                  : (void *)fftw_plan_many_dft(1, &len, nb, p->buf, NULL, 1, len, p->buf, NULL, 1,
                                               len, sign, flags);
    if (!p->plan)
        fs_dctfft_free(&p);
    return p;
}

void fs_dctfft_execute(fs_dctfft *p, void *data)
{
    if (p->prec == FS_SINGLE)
        execute_single(p, data);
    else
        execute_double(p, data);
}

void fs_dctfft_free(fs_dctfft **pp)
{
    fs_dctfft *p = *pp;
    if (!p)
        return;
    if (p->plan && p->prec == FS_SINGLE)
        fftwf_destroy_plan(p->plan);
    else if (p->plan)
        fftw_destroy_plan(p->plan);
    fs_sharedbuf_give(&shared_block, p->buf);
    fftw_free(p->tw);
    fs_sharedbuf_give(&shared_zero, p->zero);
    fs_sharedbuf_give(&shared_junk, p->junk);
    free(p);
    *pp = NULL;
}
