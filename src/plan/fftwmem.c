/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fftwmem: see fftwmem.h. */
#include "config.h"

#include "plan/fftwmem.h"

#include <malloc.h>
#include <string.h>

#include "core/timers.h"
#include "plan/transform.h"

fftw_r2r_kind fs_fftw_r2r_kind(fs_r2r k)
{
    switch (k) {
    case FS_DCT1: return FFTW_REDFT00;
    case FS_DCT2: return FFTW_REDFT10;
    case FS_DCT3: return FFTW_REDFT01;
    case FS_DCT4: return FFTW_REDFT11;
    case FS_DST1: return FFTW_RODFT00;
    case FS_DST2: return FFTW_RODFT10;
    case FS_DST3: return FFTW_RODFT01;
    case FS_DST4: return FFTW_RODFT11;
    case FS_AXIS_FFT: break;
    }
    return FFTW_R2HC;
}

/* malloc's bytes in use, mapped ones included. */
static int64_t heap_bytes(void)
{
    struct mallinfo2 m = mallinfo2();
    return (int64_t)(m.uordblks + m.hblkhd);
}

/* The line's plan on data, forward (back 0) or its inverse: FFTW's plan,
 * NULL when it cannot. */
static void *plan_line(int n, fs_line_kind kind, fs_r2r r2r, fs_precision prec, void *data,
                       int back)
{
    unsigned flags = FFTW_ESTIMATE;
    fftw_r2r_kind k = fs_fftw_r2r_kind(back ? fs_r2r_inverse(r2r) : r2r);
    int sign = back ? FFTW_BACKWARD : FFTW_FORWARD;
    if (prec == FS_SINGLE)
        return kind == FS_LINE_C2C ? (void *)fftwf_plan_dft_1d(n, data, data, sign, flags)
               : kind == FS_LINE_R2R ? (void *)fftwf_plan_r2r_1d(n, data, data, k, flags)
               : back                ? (void *)fftwf_plan_dft_c2r_1d(n, data, data, flags)
                                     : (void *)fftwf_plan_dft_r2c_1d(n, data, data, flags);
    return kind == FS_LINE_C2C ? (void *)fftw_plan_dft_1d(n, data, data, sign, flags)
           : kind == FS_LINE_R2R ? (void *)fftw_plan_r2r_1d(n, data, data, k, flags)
           : back                ? (void *)fftw_plan_dft_c2r_1d(n, data, data, flags)
                                 : (void *)fftw_plan_dft_r2c_1d(n, data, data, flags);
}

static void run_line(fs_precision prec, void *plan)
{
    if (plan && prec == FS_SINGLE)
        fftwf_execute(plan);
    else if (plan)
        fftw_execute(plan);
}

static void destroy_line(fs_precision prec, void *plan)
{
    if (plan && prec == FS_SINGLE)
        fftwf_destroy_plan(plan);
    else if (plan)
        fftw_destroy_plan(plan);
}

/* The line's bytes: n complex values, n reals padded to n / 2 + 1 of
 * them, or n reals. */
static size_t line_bytes(int64_t n, fs_line_kind kind, fs_precision prec)
{
    size_t cb = fs_complex_bytes(prec);
    return kind == FS_LINE_C2C   ? (size_t)n * cb
           : kind == FS_LINE_R2C ? (size_t)(n / 2 + 1) * cb
                                 : (size_t)n * cb / 2;
}

static fs_fftwmem measure(int64_t n, fs_line_kind kind, fs_r2r r2r, fs_precision prec,
                          int inverse)
{
    fs_fftwmem m = {0, 0, -1};
    size_t bytes = line_bytes(n, kind, prec);
    void *data = prec == FS_SINGLE ? fftwf_malloc(bytes) : fftw_malloc(bytes);
    if (!data)
        return m;
    memset(data, 0, bytes); /* resident, as the run's line is */
    int64_t before = heap_bytes();
    void *fwd = plan_line((int)n, kind, r2r, prec, data, 0);
    int64_t between = heap_bytes();
    void *inv = fwd && inverse ? plan_line((int)n, kind, r2r, prec, data, 1) : NULL;
    if (fwd && (inv || !inverse)) {
        m.forward = between - before;
        m.inverse = inverse ? heap_bytes() - between : 0;
        int64_t resident = fs_peak_memory_restart();
        run_line(prec, fwd);
        run_line(prec, inv);
        m.exec = fs_peak_memory_since(resident);
    }
    destroy_line(prec, inv);
    destroy_line(prec, fwd);
    if (prec == FS_SINGLE)
        fftwf_free(data);
    else
        fftw_free(data);
    return m;
}

#define REMEMBERED 16

fs_fftwmem fs_fftwmem_line(int64_t n, fs_line_kind kind, fs_r2r r2r, fs_precision prec,
                           int inverse)
{
    static struct {
        int64_t n;
        fs_line_kind kind;
        fs_r2r r2r;
        fs_precision prec;
        int inverse;
        fs_fftwmem m;
    } seen[REMEMBERED];
    static int nseen;
    if (kind != FS_LINE_R2R)
        r2r = FS_AXIS_FFT;
    for (int i = 0; i < nseen; i++)
        if (seen[i].n == n && seen[i].kind == kind && seen[i].r2r == r2r &&
            seen[i].prec == prec && seen[i].inverse >= inverse)
            return seen[i].m;
    fs_fftwmem none = {0, 0, -1};
    if (n < 2 || n > INT32_MAX ||
        (int64_t)line_bytes(n, kind, prec) > FS_FFTWMEM_MAX_LINE_BYTES)
        return none;
    fs_fftwmem m = measure(n, kind, r2r, prec, inverse);
    int at = nseen < REMEMBERED ? nseen++ : (int)(n % REMEMBERED);
    seen[at].n = n;
    seen[at].kind = kind;
    seen[at].r2r = r2r;
    seen[at].prec = prec;
    seen[at].inverse = inverse;
    seen[at].m = m;
    return m;
}
