/* SPDX-License-Identifier: GPL-3.0-or-later */
/* r2r: see r2r.h. */
#include "config.h"

#include "compute/r2r.h"
#include "compute/dctfft.h"
#include "plan/fftwmem.h"

#include <fftw3.h>
#include <math.h>
#include <stdlib.h>

/* FFTW's r2r plan, or for the kinds and lengths of fs_r2r_fast one of
 * dctfft's. */
struct fs_r2r_plan {
    fs_precision prec;
    void *fftw;
    fs_dctfft *fast;
};

/* The plans p holds destroyed. */
static void release(fs_r2r_plan *p)
{
    if (p->fftw && p->prec == FS_SINGLE)
        fftwf_destroy_plan(p->fftw);
    else if (p->fftw)
        fftw_destroy_plan(p->fftw);
    fs_dctfft_free(&p->fast);
}

/* p around an FFTW plan or a dctfft plan (the other NULL); NULL when
 * neither came. */
static fs_r2r_plan *wrap(fs_precision prec, void *fftw, fs_dctfft *fast)
{
    fs_r2r_plan made = {prec, fftw, fast};
    fs_r2r_plan *p = fftw || fast ? malloc(sizeof *p) : NULL;
    if (p)
        *p = made;
    else
        release(&made);
    return p;
}

/* FFTW's guru plan of rank transforms and howmany loops over reals. */
static void *plan_guru(fs_precision prec, int rank, const fftw_iodim64 *dims, int howmany,
                       const fftw_iodim64 *loops, void *data, const fftw_r2r_kind *kinds,
                       unsigned flags)
{
    if (prec == FS_SINGLE)
        return fftwf_plan_guru64_r2r(rank, dims, howmany, loops, data, data, kinds, flags);
    return fftw_plan_guru64_r2r(rank, dims, howmany, loops, data, data, kinds, flags);
}

fs_r2r_plan *fs_r2r_plan_lines(fs_precision prec, const fs_op_spec *spec, int axis, int n,
                               int howmany, int dist, void *data, unsigned flags)
{
    fs_r2r kind = spec->r2r[axis];
    int comps = spec->reals ? 1 : 2;
    if (fs_r2r_fast(kind, n, (int64_t)howmany * comps))
        return wrap(prec, NULL, fs_dctfft_new(prec, kind, n, howmany, dist, comps, flags));
    /* in reals: a complex value's parts are 1 apart, its neighbours 2 */
    fftw_iodim64 dim = {n, comps, comps};
    fftw_iodim64 loops[2] = {{howmany, (ptrdiff_t)dist * comps, (ptrdiff_t)dist * comps},
                             {2, 1, 1}};
    fftw_r2r_kind k = fs_fftw_r2r_kind(kind);
    return wrap(prec, plan_guru(prec, 1, &dim, comps == 2 ? 2 : 1, loops, data, &k, flags), NULL);
}

fs_r2r_plan *fs_r2r_plan_box(fs_precision prec, const fs_op_spec *spec, const fs_box *box,
                             void *data, unsigned flags, double *flops)
{
    int64_t strides[FS_LAYOUT_MAX_DIMS];
    fs_box_strides(box, strides);
    int comps = spec->reals ? 1 : 2, rank = 0, howmany = 0;
    fftw_iodim64 dims[FS_LAYOUT_MAX_DIMS], loops[FS_LAYOUT_MAX_DIMS + 1];
    fftw_r2r_kind kinds[FS_LAYOUT_MAX_DIMS];
    double total = (double)fs_box_elems(box) * comps;
    *flops = 0;
    for (int k = 0; k < box->ndim; k++) {
        /* a cosine or sine of one point is no identity (fs_op_identity_length) */
        if (!spec->axes[k] && box->count[k] <= 1)
            continue;
        fftw_iodim64 d = {box->count[k], strides[k] * comps, strides[k] * comps};
        if (spec->axes[k]) {
            kinds[rank] = fs_fftw_r2r_kind(spec->r2r[k]);
            dims[rank++] = d;
            *flops += 2.5 * total * log2((double)box->count[k] > 1 ? (double)box->count[k] : 1);
        } else {
            loops[howmany++] = d;
        }
    }
    if (comps == 2)
        loops[howmany++] = (fftw_iodim64){2, 1, 1};
    return wrap(prec, plan_guru(prec, rank, dims, howmany, loops, data, kinds, flags), NULL);
}

int fs_r2r_fast_axes(const fs_op_spec *spec, const fs_box *box)
{
    for (int k = 0; k < box->ndim; k++)
        if (spec->axes[k] && box->count[k] > 0 &&
            fs_r2r_fast(spec->r2r[k], box->count[k],
                        fs_box_elems(box) / box->count[k] * (spec->reals ? 1 : 2)))
            return 1;
    return 0;
}

void fs_r2r_execute(fs_r2r_plan *p, void *data, void *out)
{
    if (p->fast)
        fs_dctfft_execute(p->fast, data);
    else if (p->prec == FS_SINGLE)
        fftwf_execute_r2r(p->fftw, data, data);
    else
        fftw_execute_r2r(p->fftw, data, data);
}

void fs_r2r_plan_free(fs_r2r_plan **pp)
{
    fs_r2r_plan *p = *pp;
    if (!p)
        return;
    release(p);
    free(p);
    *pp = NULL;
}

/* Index i of axis k of every line multiplied by f. */
static void scale_plane(const fs_box *box, int k, int64_t i, double f, int comps,
                        fs_precision prec, void *data)
{
    int64_t strides[FS_LAYOUT_MAX_DIMS];
    fs_box_strides(box, strides);
    int64_t inner = strides[k] * comps, n = box->count[k];
    int64_t outer = n > 0 ? fs_box_elems(box) / (n * strides[k]) : 0;
    for (int64_t o = 0; o < outer; o++) {
        int64_t at = (o * n + i) * inner;
        if (prec == FS_SINGLE)
            for (int64_t j = 0; j < inner; j++)
                ((float *)data)[at + j] *= (float)f;
        else
            for (int64_t j = 0; j < inner; j++)
                ((double *)data)[at + j] *= f;
    }
}

void fs_r2r_scale_edges(const fs_op_spec *spec, const fs_box *box, fs_precision prec, void *data,
                        int pre)
{
    int comps = spec->reals ? 1 : 2;
    for (int k = 0; spec->ortho && k < box->ndim; k++) {
        if (!spec->axes[k] || box->count[k] == 0)
            continue;
        fs_r2r_edges e = fs_r2r_ortho_edges(spec->r2r[k], 1);
        double first = pre ? e.pre_first : e.post_first, last = pre ? e.pre_last : e.post_last;
        /* one point is first and last: DST-II's last is its first */
        if (first != 1)
            scale_plane(box, k, 0, first, comps, prec, data);
        if (last != 1)
            scale_plane(box, k, box->count[k] - 1, last, comps, prec, data);
    }
}

size_t fs_r2r_value_bytes(const fs_op_spec *spec, fs_precision prec)
{
    return spec->reals ? fs_dtype_bytes(fs_real_dtype(prec)) : fs_complex_bytes(prec);
}
