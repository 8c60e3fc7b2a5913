/* SPDX-License-Identifier: GPL-3.0-or-later */
/* r2r: the cosine and sine axes of a transform (transform.h): their kinds'
 * inverses, sizes, frequencies and orthogonalizing factors, and the checks
 * of a request that has them. */
#include "config.h"

#include "plan/transform.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int fs_r2r_any(const fs_r2r *r2r, int ndim)
{
    for (int k = 0; k < ndim; k++)
        if (r2r[k] != FS_AXIS_FFT)
            return 1;
    return 0;
}

fs_r2r fs_r2r_inverse(fs_r2r k)
{
    switch (k) {
    case FS_DCT2: return FS_DCT3;
    case FS_DCT3: return FS_DCT2;
    case FS_DST2: return FS_DST3;
    case FS_DST3: return FS_DST2;
    default: return k;
    }
}

double fs_r2r_points(fs_r2r k, int64_t n)
{
    switch (k) {
    case FS_AXIS_FFT: return (double)n;
    case FS_DCT1: return 2.0 * (double)(n - 1);
    case FS_DST1: return 2.0 * (double)(n + 1);
    default: return 2.0 * (double)n;
    }
}

double fs_r2r_angle(fs_r2r k, int64_t n, int64_t j)
{
    double N = (double)n, J = (double)j;
    switch (k) {
    case FS_DCT1: return n > 1 ? M_PI * J / (N - 1) : 0;
    case FS_DCT2: return M_PI * J / N;
    case FS_DST1: return M_PI * (J + 1) / (N + 1);
    case FS_DST2: return M_PI * (J + 1) / N;
    case FS_DCT3: case FS_DCT4: case FS_DST3: case FS_DST4: return M_PI * (J + 0.5) / N;
    case FS_AXIS_FFT: break;
    }
    return 0;
}

fs_r2r_edges fs_r2r_ortho_edges(fs_r2r computed, int ortho)
{
    fs_r2r_edges e = {1, 1, 1, 1};
    if (!ortho)
        return e;
    switch (computed) {
    case FS_DCT1:
        e.pre_first = e.pre_last = M_SQRT2;
        e.post_first = e.post_last = M_SQRT1_2;
        break;
    case FS_DCT2: e.post_first = M_SQRT1_2; break;
    case FS_DCT3: e.pre_first = M_SQRT2; break;
    case FS_DST2: e.post_last = M_SQRT1_2; break;
    case FS_DST3: e.pre_last = M_SQRT2; break;
    default: break;
    }
    return e;
}

fs_r2r fs_transform_computed(const fs_transform *t, int k)
{
    return t->sign > 0 ? fs_r2r_inverse(t->r2r[k]) : t->r2r[k];
}

int fs_r2r_fast(fs_r2r k, int64_t n, int64_t lines)
{
    return (k == FS_DCT2 || k == FS_DCT3 || k == FS_DST2 || k == FS_DST3) && n >= 1 &&
           n <= FS_R2R_FAST_MAX_N && lines >= 2;
}

int64_t fs_r2r_fast_block(int64_t n, int64_t lines, size_t complex_bytes)
{
    int64_t b = FS_R2R_FAST_BLOCK_BYTES / (n * (int64_t)complex_bytes);
    b = b < lines ? b : lines;
    return b > 1 ? b : 1;
}

int64_t fs_r2r_fast_bytes(int64_t n, size_t complex_bytes)
{
    int64_t line = n * (int64_t)complex_bytes;
    int64_t block = fs_r2r_fast_block(n, INT64_MAX, complex_bytes) * line;
    return block + line + line + line;
}

double fs_transform_points(const fs_transform *t)
{
    double n = 1;
    for (int k = 0; k < t->in_ndim; k++)
        if (t->transform_axis[k])
            n *= fs_r2r_points(t->r2r[k], k == t->real_axis ? t->real_len : t->in_shape[k]);
    return n;
}

void fs_transform_kinds_text(const fs_transform *t, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < t->naxes && fs_r2r_any(t->r2r, t->in_ndim) && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, i ? ",%s" : "%s",
                                 fs_r2r_name(t->r2r[t->axes[i]]));
}

int fs_r2r_fourier_axes(const fs_transform_request *rq)
{
    int n = 0;
    for (int k = 0; k < rq->ndim; k++)
        n += rq->transform_axis[k] && rq->r2r[k] == FS_AXIS_FFT;
    return n;
}

/* The request's kinds against its input. */
static fs_status check_request(const fs_transform_request *rq)
{
    for (int k = 0; k < rq->ndim; k++)
        if (rq->transform_axis[k] && rq->r2r[k] == FS_DCT1 && rq->shape[k] < 2)
            return fs_error_set(FS_ERR_USAGE,
                                "DCT-I on axis %d of length %lld: needs 2 points or more (its "
                                "logical size is 2(n-1)); choose another type for that axis",
                                k, (long long)rq->shape[k]);
    if (rq->real && fs_r2r_any(rq->r2r, rq->ndim) && !fs_r2r_fourier_axes(rq))
        return fs_error_set(FS_ERR_USAGE, "--real: every transformed axis is a cosine or sine "
                            "axis, and --real halves a Fourier axis; drop --real (real input "
                            "gives real output)");
    return FS_OK;
}

double fs_transform_flop_rate(const fs_transform *t)
{
    return t->kind == FS_C2C || (t->kind == FS_R2R && !fs_dtype_is_real(t->work_type)) ? 5.0 : 2.5;
}

fs_status fs_r2r_take_request(const fs_transform_request *rq, fs_transform *t)
{
    memcpy(t->r2r, rq->r2r, sizeof t->r2r);
    t->kind = fs_r2r_any(rq->r2r, rq->ndim) && !fs_r2r_fourier_axes(rq) ? FS_R2R
              : !rq->real                                               ? FS_C2C
              : rq->inverse                                             ? FS_C2R
                                                                        : FS_R2C;
    /* cosine and sine axes alone keep real input real */
    t->work_type = t->kind == FS_R2R && fs_dtype_is_real(rq->in_dtype) ? fs_real_dtype(rq->prec)
                                                                       : fs_complex_dtype(rq->prec);
    return check_request(rq);
}

fs_op_spec fs_transform_r2r_op(const fs_transform *t, const int *axes)
{
    fs_op_spec s;
    memset(&s, 0, sizeof s);
    s.kind = FS_OP_R2R;
    memcpy(s.axes, axes, sizeof s.axes);
    for (int k = 0; k < t->ndim; k++)
        s.r2r[k] = axes[k] ? fs_transform_computed(t, k) : FS_AXIS_FFT;
    s.ortho = t->norm == FS_NORM_ORTHO;
    s.reals = fs_dtype_is_real(t->work_type);
    return s;
}

int fs_op_transforms_axes(const fs_op_spec *op)
{
    return op->kind == FS_OP_C2C || op->kind == FS_OP_R2R;
}

int64_t fs_op_identity_length(const fs_op_spec *op)
{
    return op->kind == FS_OP_R2R ? 0 : 1;
}
