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
                               const fs_transform *t, int sharded, fs_input_coords *c)
{
    memset(c, 0, sizeof *c);
    c->ndim = info->ndim;
    int rank = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed"));
    fs_status st = FS_OK;
    /* A slice's axes are not the dataset's: indices stand for its coordinates. */
    int batch[FS_LAYOUT_MAX_DIMS];
    for (int a = 0; a < info->ndim; a++)
        batch[a] = !t->transform_axis[a];
    if (rank == 0 && !sharded && !info->slice.given)
        st = fs_h5_coords_read(file, info->dataset, info->ndim, info->shape, batch, c->axis,
                               c->values);
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

/* The values of a coordinate made on demand (fs_h5_fill_fn): k or x of a
 * transformed axis, or the indices of a batch axis. */
typedef struct coord_rule {
    int kind;        /* RULE_K, RULE_X */
    int half;        /* k along the halved axis: rfftfreq */
    int64_t n;       /* the real length */
    double L;        /* the box length */
    fs_r2r r2r;      /* a cosine or sine axis: its index's angle over the spacing L/n */
} coord_rule;
enum { RULE_K, RULE_X };

static void fill_coord(const void *ctx, int64_t first, int64_t count, void *out)
{
    const coord_rule *r = ctx;
    for (int64_t j = first; j < first + count; j++) {
        /* numpy.fft.rfftfreq along the halved axis, fftfreq elsewhere */
        int64_t f = r->half || j < (r->n + 1) / 2 ? j : j - r->n;
        ((double *)out)[j - first] =
            r->kind != RULE_K         ? (double)j * r->L / (double)r->n
            : r->r2r != FS_AXIS_FFT ? fs_r2r_angle(r->r2r, r->n, j) * (double)r->n / r->L
                                      : 2.0 * M_PI * (double)f / r->L;
    }
}

/* What one axis's coordinate is, and room for its texts. */
typedef struct axis_coord {
    fs_h5_coord c;
    char name[80], units[128], long_name[256];
    coord_rule rule;  /* the values, unless the input's */
} axis_coord;

/* Transformed axis a (its i-th in increasing order) of t's result: k
 * (spectral) or x. */
static void transformed_coord(const fs_transform *t, int nbox, const double *box, int a, int i,
                              axis_coord *ac)
{
    int spectral = t->sign < 0 && !t->round_trip; /* FFTW_FORWARD */
    int64_t count = t->out_shape[a];
    /* the real length: the input's, the output's for x, the halved axis's */
    int64_t n = a == t->real_axis ? t->real_len : spectral ? t->in_shape[a] : count;
    double L = nbox ? box[nbox == 1 ? 0 : i] : (double)n;
    fs_r2r kind = t->r2r[a];
    ac->rule = (coord_rule){spectral ? RULE_K : RULE_X, a == t->real_axis, n, L, kind};
    const char *unit = nbox ? "box_length_unit" : "grid_spacing";
    snprintf(ac->name, sizeof ac->name, "%s%d", spectral ? "k" : "x", a);
    snprintf(ac->units, sizeof ac->units, "%s%s", spectral ? "rad/" : "", unit);
    if (spectral && kind != FS_AXIS_FFT)
        snprintf(ac->long_name, sizeof ac->long_name, "wave number along axis %d: the angle "
                 "theta_j of %s (fftshard(1), COSINE AND SINE TRANSFORMS) over L/%lld, L = %.17g",
                 a, fs_r2r_name(kind), (long long)n, L);
    else if (spectral)
        snprintf(ac->long_name, sizeof ac->long_name, "wave number along axis %d: 2 pi "
                 "numpy.fft.%s(%lld, L/%lld), L = %.17g", a, a == t->real_axis ? "rfftfreq" :
                 "fftfreq", (long long)n, (long long)n, L);
    else
        snprintf(ac->long_name, sizeof ac->long_name, "position along axis %d: j L / %lld, "
                 "L = %.17g", a, (long long)n, L);
    ac->c = (fs_h5_coord){ac->name, NULL, count, FS_DTYPE_FLOAT64, NULL, fill_coord, &ac->rule,
                          ac->units, ac->long_name};
}

/* Batch axis a: the input's coordinate, or the indices. */
static void batch_coord(const fs_transform *t, const fs_input_coords *in, int a, axis_coord *ac)
{
    fs_h5_batch_coord b;
    fs_h5_batch_coord_of(in, a, t->out_shape[a], &b);
    snprintf(ac->name, sizeof ac->name, "%s", b.name);
    snprintf(ac->long_name, sizeof ac->long_name, "%s", b.long_name);
    ac->c = b.c;
    ac->c.name = ac->name;
    if (b.c.long_name == b.long_name)
        ac->c.long_name = ac->long_name;
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
        if (t->transform_axis[a])
            transformed_coord(t, nbox, box, a, i++, &ac[a]);
        else
            batch_coord(t, in, a, &ac[a]);
        st = fs_h5_coord_make(h, group, &ac[a].c, taken, ntaken, paths[a], sizeof paths[a]);
        scales[a] = paths[a];
    }
    if (st == FS_OK)
        st = fs_h5_scales_attach(h, dataset, t->out_ndim, scales);
    return st;
}
