/* fft: see fft.h. */
#include "config.h"

#include "fft.h"

#include <complex.h>
#include <fftw3.h>
#include <stdlib.h>

struct fs_fft_pass {
    fftw_plan plan;     /* NULL: nothing to do on this rank */
};

fs_status fs_fft_pass_new(const fs_box *box, const int *transform_axis, int sign, void *data,
                          fs_fft_pass **out)
{
    *out = NULL;
    fs_fft_pass *pass = calloc(1, sizeof *pass);
    if (!pass)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory planning an FFT");
    fftw_iodim64 dims[FS_LAYOUT_MAX_DIMS], loops[FS_LAYOUT_MAX_DIMS];
    int ndims = 0, nloops = 0;
    int64_t stride[FS_LAYOUT_MAX_DIMS];
    int64_t s = 1;
    for (int k = box->ndim - 1; k >= 0; k--) {
        stride[k] = s;
        s *= box->count[k];
    }
    int work = fs_box_elems(box) > 0;
    for (int k = 0; k < box->ndim && work; k++) {
        /* Length-1 transforms are the identity; leaving them out keeps the
         * plan rank low. Dimensions go slowest first, as FFTW expects. */
        if (box->count[k] <= 1)
            continue;
        fftw_iodim64 *d = transform_axis[k] ? &dims[ndims++] : &loops[nloops++];
        d->n = box->count[k];
        d->is = d->os = stride[k];
    }
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
