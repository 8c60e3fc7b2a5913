/* SPDX-License-Identifier: GPL-3.0-or-later */
/* coords: see coords.h. */
#include "config.h"

#include "output/coords.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/collective.h"

fs_status fs_input_coords_take(MPI_Comm comm, const char *file, const fs_input_info *info,
                               int sharded, fs_input_coords *c)
{
    memset(c, 0, sizeof *c);
    c->ndim = info->ndim;
    int rank = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed"));
    fs_status st = FS_OK;
    /* A slice's axes are not the dataset's: indices stand for its coordinates. */
    if (rank == 0 && !sharded && !info->slice.given)
        st = fs_h5_coords_read(file, info->dataset, info->ndim, info->shape, c->axis, c->values);
    st = fs_error_agree(comm, st);
    if (st == FS_OK)
        st = fs_error_agree(comm, fs_bcast_bytes(comm, 0, c->axis, sizeof c->axis));
    for (int a = 0; a < c->ndim && st == FS_OK; a++) {
        if (!c->axis[a].found)
            continue;
        int64_t bytes = (info->shape[a] > 0 ? info->shape[a] : 1) * 8;
        if (!c->values[a] && !(c->values[a] = malloc((size_t)bytes)))
            st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
        st = fs_error_agree(comm, st);
        if (st == FS_OK)
            st = fs_error_agree(comm, fs_bcast_bytes(comm, 0, c->values[a], bytes));
    }
    if (st != FS_OK)
        fs_input_coords_free(c);
    return st;
}

void fs_input_coords_free(fs_input_coords *c)
{
    for (int a = 0; a < FS_LAYOUT_MAX_DIMS; a++) {
        free(c->values[a]);
        c->values[a] = NULL;
    }
    c->ndim = 0;
}

/* How many axes t transforms. */
static int transformed_axes(const fs_transform *t)
{
    int n = 0;
    for (int a = 0; a < t->in_ndim; a++)
        n += t->transform_axis[a] != 0;
    return n;
}

fs_status fs_coords_check(int nbox, const fs_transform *t)
{
    int naxes = transformed_axes(t);
    if (nbox > 1 && nbox != naxes)
        return fs_error_set(FS_ERR_USAGE, "--box-size: %d lengths given for %d transformed axes "
                            "(give one, or one per transformed axis)", nbox, naxes);
    return FS_OK;
}

/* What one axis's coordinate is, and room for its texts. */
typedef struct axis_coord {
    fs_h5_coord c;
    char name[80], units[128], long_name[256];
    void *owned;  /* values made here (malloc'ed) */
} axis_coord;

/* Transformed axis a (its i-th in increasing order) of t's result: k
 * (spectral) or x. */
static fs_status transformed_coord(const fs_transform *t, int nbox, const double *box, int a,
                                   int i, axis_coord *ac)
{
    int spectral = t->sign < 0 && !t->round_trip; /* FFTW_FORWARD */
    int64_t count = t->out_shape[a];
    /* the real length: the input's, the output's for x, the halved axis's */
    int64_t n = a == t->real_axis ? t->real_len : spectral ? t->in_shape[a] : count;
    double L = nbox ? box[nbox == 1 ? 0 : i] : (double)n;
    double *v = malloc((size_t)(count > 0 ? count : 1) * sizeof *v);
    if (!v)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    for (int64_t j = 0; j < count; j++) {
        /* numpy.fft.rfftfreq along the halved axis, fftfreq elsewhere */
        int64_t f = a == t->real_axis || j < (n + 1) / 2 ? j : j - n;
        v[j] = spectral ? 2.0 * M_PI * (double)f / L : (double)j * L / (double)n;
    }
    const char *unit = nbox ? "box_length_unit" : "grid_spacing";
    snprintf(ac->name, sizeof ac->name, "%s%d", spectral ? "k" : "x", a);
    snprintf(ac->units, sizeof ac->units, "%s%s", spectral ? "rad/" : "", unit);
    if (spectral)
        snprintf(ac->long_name, sizeof ac->long_name, "wave number along axis %d: 2 pi "
                 "numpy.fft.%s(%lld, L/%lld), L = %.17g", a, a == t->real_axis ? "rfftfreq" :
                 "fftfreq", (long long)n, (long long)n, L);
    else
        snprintf(ac->long_name, sizeof ac->long_name, "position along axis %d: j L / %lld, "
                 "L = %.17g", a, (long long)n, L);
    ac->owned = v;
    ac->c = (fs_h5_coord){ac->name, NULL, count, FS_DTYPE_FLOAT64, v, ac->units, ac->long_name};
    return FS_OK;
}

/* Batch axis a: the input's coordinate, or the indices. */
static fs_status batch_coord(const fs_transform *t, const fs_input_coords *in, int a,
                             axis_coord *ac)
{
    fs_h5_batch_coord b;
    fs_status st = fs_h5_batch_coord_of(in, a, t->out_shape[a], &b);
    if (st != FS_OK)
        return st;
    snprintf(ac->name, sizeof ac->name, "%s", b.name);
    snprintf(ac->long_name, sizeof ac->long_name, "%s", b.long_name);
    ac->c = b.c;
    ac->c.name = ac->name;
    if (b.owned)
        ac->c.long_name = ac->long_name;
    ac->owned = b.owned;
    return FS_OK;
}

fs_status fs_coords_write(fs_h5_output *h, const char *dataset, const fs_transform *t, int nbox,
                          const double *box, const fs_input_coords *in,
                          const char *const *taken, int ntaken)
{
    char group[FS_PATH_MAX];
    snprintf(group, sizeof group, "%s", dataset);
    char *slash = strrchr(group, '/');
    if (slash == group || !slash)
        snprintf(group, sizeof group, "/");
    else
        *slash = '\0';
    axis_coord ac[FS_LAYOUT_MAX_DIMS];
    char paths[FS_LAYOUT_MAX_DIMS][FS_PATH_MAX + 96];
    const char *scales[FS_LAYOUT_MAX_DIMS];
    memset(ac, 0, sizeof ac);
    fs_status st = FS_OK;
    for (int a = 0, i = 0; a < t->out_ndim && st == FS_OK; a++) {
        st = t->transform_axis[a] ? transformed_coord(t, nbox, box, a, i++, &ac[a])
                                  : batch_coord(t, in, a, &ac[a]);
        if (st == FS_OK)
            st = fs_h5_coord_make(h, group, &ac[a].c, taken, ntaken, paths[a], sizeof paths[a]);
        scales[a] = paths[a];
    }
    if (st == FS_OK)
        st = fs_h5_scales_attach(h, dataset, t->out_ndim, scales);
    for (int a = 0; a < t->out_ndim; a++)
        free(ac[a].owned);
    return st;
}
