/* fft: see fft.h. */
#include "config.h"

#include "fft.h"

#include <complex.h>
#include <fftw3.h>
#include <stdlib.h>
#include <string.h>

struct fs_fft_pass {
    fftw_plan plan;     /* NULL: nothing to do on this rank */
};

/* Split a row-major box into FFTW's transform dims (axes with
 * transform_axis set) and loop dims (the rest), skipping length-1 axes.
 * Returns 0 when the box is empty. */
static int guru_dims(const fs_box *box, const int *transform_axis, fftw_iodim64 *dims, int *ndims,
                     fftw_iodim64 *loops, int *nloops)
{
    int64_t stride[FS_LAYOUT_MAX_DIMS];
    int64_t s = 1;
    for (int k = box->ndim - 1; k >= 0; k--) {
        stride[k] = s;
        s *= box->count[k];
    }
    *ndims = *nloops = 0;
    if (fs_box_elems(box) == 0)
        return 0;
    for (int k = 0; k < box->ndim; k++) {
        /* Length-1 transforms are the identity; leaving them out keeps the
         * plan rank low. Dimensions go slowest first, as FFTW expects. */
        if (box->count[k] <= 1)
            continue;
        fftw_iodim64 *d = transform_axis[k] ? &dims[(*ndims)++] : &loops[(*nloops)++];
        d->n = box->count[k];
        d->is = d->os = stride[k];
    }
    return 1;
}

fs_status fs_fft_pass_new(const fs_box *box, const int *transform_axis, int sign, void *data,
                          fs_fft_pass **out)
{
    *out = NULL;
    fs_fft_pass *pass = calloc(1, sizeof *pass);
    if (!pass)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory planning an FFT");
    fftw_iodim64 dims[FS_LAYOUT_MAX_DIMS], loops[FS_LAYOUT_MAX_DIMS];
    int ndims, nloops;
    int work = guru_dims(box, transform_axis, dims, &ndims, loops, &nloops);
    if (work && ndims > 0) {
        fftw_complex *c = data;
        pass->plan = fftw_plan_guru64_dft(ndims, dims, nloops, loops, c, c, sign,
                                          FFTW_ESTIMATE);
        if (!pass->plan) {
            free(pass);
            return fs_error_set(FS_ERR_RUNTIME, "FFTW could not plan a %d-D transform", ndims);
        }
    }
    *out = pass;
    return FS_OK;
}

void fs_fft_pass_execute(fs_fft_pass *pass)
{
    if (pass->plan)
        fftw_execute(pass->plan);
}

double fs_fft_pass_flops(const fs_fft_pass *pass)
{
    double add = 0, mul = 0, fma = 0;
    if (!pass->plan)
        return 0;
    fftw_flops(pass->plan, &add, &mul, &fma);
    return add + mul + 2 * fma;
}

void fs_fft_pass_free(fs_fft_pass **pass)
{
    if (!*pass)
        return;
    if ((*pass)->plan)
        fftw_destroy_plan((*pass)->plan);
    free(*pass);
    *pass = NULL;
}

void fs_fft_scale(void *data, int64_t n, double factor)
{
    double *d = data;
    for (int64_t i = 0; i < 2 * n; i++)
        d[i] *= factor;
}

#define BLOCKWISE_MAX_PLANS 16

struct fs_fft_blockwise {
    int transform_axis[FS_LAYOUT_MAX_DIMS];
    int sign;
    int nplans;
    int64_t shape[BLOCKWISE_MAX_PLANS][FS_LAYOUT_MAX_DIMS];
    fftw_plan plan[BLOCKWISE_MAX_PLANS];   /* NULL: nothing to transform */
    int failed;
};

fs_status fs_fft_blockwise_new(const int *transform_axis, int sign, fs_fft_blockwise **out)
{
    fs_fft_blockwise *bw = calloc(1, sizeof *bw);
    if (!bw)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory planning an FFT");
    memcpy(bw->transform_axis, transform_axis, sizeof bw->transform_axis);
    bw->sign = sign;
    *out = bw;
    return FS_OK;
}

int fs_fft_blockwise_execute(fs_fft_blockwise *bw, const fs_box *box, void *data)
{
    fftw_iodim64 dims[FS_LAYOUT_MAX_DIMS], loops[FS_LAYOUT_MAX_DIMS];
    int ndims, nloops;
    if (!guru_dims(box, bw->transform_axis, dims, &ndims, loops, &nloops) || ndims == 0)
        return 0;
    int i = 0;
    while (i < bw->nplans &&
           memcmp(bw->shape[i], box->count, sizeof box->count[0] * (size_t)box->ndim) != 0)
        i++;
    if (i == bw->nplans) {
        if (i == BLOCKWISE_MAX_PLANS) {
            /* Block shapes beyond the cache: recycle the last entry. */
            i = BLOCKWISE_MAX_PLANS - 1;
            fftw_destroy_plan(bw->plan[i]);
            bw->nplans--;
        }
        fftw_complex *c = data;
        /* ESTIMATE never touches the array, so planning on live data is safe. */
        bw->plan[i] = fftw_plan_guru64_dft(ndims, dims, nloops, loops, c, c, bw->sign,
                                           FFTW_ESTIMATE | FFTW_UNALIGNED);
        if (!bw->plan[i]) {
            bw->failed = 1;
            return -1;
        }
        memset(bw->shape[i], 0, sizeof bw->shape[i]);
        memcpy(bw->shape[i], box->count, sizeof box->count[0] * (size_t)box->ndim);
        bw->nplans++;
    }
    fftw_execute_dft(bw->plan[i], data, data);
    return 0;
}

int fs_fft_blockwise_failed(const fs_fft_blockwise *bw)
{
    return bw->failed;
}

void fs_fft_blockwise_free(fs_fft_blockwise **pbw)
{
    fs_fft_blockwise *bw = *pbw;
    if (!bw)
        return;
    for (int i = 0; i < bw->nplans; i++)
        fftw_destroy_plan(bw->plan[i]);
    free(bw);
    *pbw = NULL;
}
