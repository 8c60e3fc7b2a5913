/* SPDX-License-Identifier: GPL-3.0-or-later */
/* dtype: see dtype.h. */
#include "config.h"

#include "core/dtype.h"

#include <string.h>

const char *fs_dtype_name(fs_dtype t)
{
    switch (t) {
    case FS_DTYPE_FLOAT32: return "float32";
    case FS_DTYPE_FLOAT64: return "float64";
    case FS_DTYPE_COMPLEX64: return "complex64";
    case FS_DTYPE_COMPLEX128: return "complex128";
    case FS_DTYPE_INTEGER: return "integer";
    }
    return "?";
}

size_t fs_dtype_bytes(fs_dtype t)
{
    switch (t) {
    case FS_DTYPE_FLOAT32: return 4;
    case FS_DTYPE_FLOAT64: case FS_DTYPE_INTEGER: case FS_DTYPE_COMPLEX64: return 8;
    case FS_DTYPE_COMPLEX128: return 16;
    }
    return 16;
}

int fs_dtype_is_real(fs_dtype t)
{
    return t == FS_DTYPE_FLOAT32 || t == FS_DTYPE_FLOAT64 || t == FS_DTYPE_INTEGER;
}

int fs_dtype_is_single(fs_dtype t)
{
    return t == FS_DTYPE_FLOAT32 || t == FS_DTYPE_COMPLEX64;
}

fs_dtype fs_complex_dtype(fs_precision p)
{
    return p == FS_SINGLE ? FS_DTYPE_COMPLEX64 : FS_DTYPE_COMPLEX128;
}

fs_dtype fs_real_dtype(fs_precision p)
{
    return p == FS_SINGLE ? FS_DTYPE_FLOAT32 : FS_DTYPE_FLOAT64;
}

size_t fs_complex_bytes(fs_precision p)
{
    return fs_dtype_bytes(fs_complex_dtype(p));
}

const char *fs_precision_name(fs_precision p)
{
    return p == FS_SINGLE ? "single" : "double";
}

const char *fs_kind_name(fs_kind k)
{
    return k == FS_R2C ? "r2c" : k == FS_C2R ? "c2r" : k == FS_R2R ? "r2r" : "c2c";
}

static const char *const r2r_names[] = {"fft",  "dct1", "dct2", "dct3", "dct4",
                                        "dst1", "dst2", "dst3", "dst4"};

const char *fs_r2r_name(fs_r2r k)
{
    return k >= FS_AXIS_FFT && k <= FS_DST4 ? r2r_names[k] : "?";
}

int fs_r2r_parse(const char *name)
{
    for (int k = FS_AXIS_FFT; k <= FS_DST4; k++)
        if (strcmp(name, r2r_names[k]) == 0)
            return k;
    return -1;
}

const char *fs_norm_name(fs_norm norm)
{
    return norm == FS_NORM_ORTHO ? "ortho" : norm == FS_NORM_FORWARD ? "forward" : "backward";
}
