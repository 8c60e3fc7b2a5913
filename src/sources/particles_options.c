/* SPDX-License-Identifier: GPL-3.0-or-later */
/* particles_options: --paint's names and values, --mesh, and their checks
 * (particles.h). */
#include "config.h"

#include "sources/particles.h"

#include "core/dtype.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const fs_opt_name fs_paint_windows[] = {
    {"ngp", 1}, {"cic", 2}, {"tsc", 3}, {"pcs", 4}, {NULL, 0}};

const fs_opt_name fs_paint_fields[] = {
    {"delta", FS_PAINT_DELTA}, {"density", FS_PAINT_DENSITY}, {"sum", FS_PAINT_SUM}, {NULL, 0}};

static const char *name_of(const fs_opt_name *names, int value)
{
    for (const fs_opt_name *n = names; n->name; n++)
        if (n->value == value)
            return n->name;
    return "none";
}

const char *fs_paint_window_name(int window)
{
    return name_of(fs_paint_windows, window);
}

const char *fs_paint_field_name(int field)
{
    return name_of(fs_paint_fields, field);
}

fs_status fs_paint_mesh_option(const fs_opt *o, const char *arg, void *section)
{
    fs_particles_options *p = fs_opt_field(o, section); /* the line's field: the options */
    int64_t shape[FS_LAYOUT_MAX_DIMS];
    int n = fs_parse_shape(arg, shape);
    int ok = n >= 1 && n <= FS_PAINT_MAX_DIMS;
    for (int a = 0; ok && a < n; a++)
        ok = shape[a] >= 1 && shape[a] <= 2147483647;
    if (!ok)
        return fs_error_set(FS_ERR_USAGE, "--mesh=%s: expected N or NxN[xN], the points of the "
                            "mesh along each axis (1 to 3 axes of 1 to 2^31 - 1)", arg);
    p->mesh_ndim = n;
    memcpy(p->mesh, shape, sizeof(int64_t) * (size_t)n);
    return FS_OK;
}

fs_status fs_particles_options_check(const fs_particles_options *o, int inverse, int check)
{
    if (!o->window) {
        if (o->mesh_ndim || o->weights || o->interlace || o->field != FS_PAINT_DELTA)
            return fs_error_set(FS_ERR_USAGE, "--mesh, --weights, --paint-field, --interlace: "
                                "only with --paint");
        return FS_OK;
    }
    if (!o->mesh_ndim)
        return fs_error_set(FS_ERR_USAGE, "--paint: give the mesh's points with --mesh=N (or "
                            "NxNxN)");
    if (inverse || check)
        return fs_error_set(FS_ERR_USAGE, "--paint: paints particles for a forward transform "
                            "(not with %s)", inverse ? "--inverse" : "--check");
    if (o->weights && !o->weights[0])
        return fs_error_set(FS_ERR_USAGE, "--weights: expected a dataset");
    return FS_OK;
}

fs_status fs_particles_mesh_shape(const fs_particles_options *o, const fs_input_info *pos,
                                  const char *name, int *ndim, int64_t *mesh)
{
    char shape[256];
    fs_format_shape(pos->ndim, pos->shape, shape, sizeof shape);
    if (pos->ndim > 2 || (pos->ndim == 2 && pos->shape[1] > FS_PAINT_MAX_DIMS))
        return fs_error_set(FS_ERR_INPUT, "%s: shape %s is no table of positions (N x D, D from "
                            "1 to %d)", name, shape, FS_PAINT_MAX_DIMS);
    if (!fs_dtype_is_real(pos->dtype))
        return fs_error_set(FS_ERR_INPUT, "%s: %s positions (expected real numbers)", name,
                            pos->type_name);
    *ndim = pos->ndim == 2 ? (int)pos->shape[1] : 1;
    if (o->mesh_ndim != 1 && o->mesh_ndim != *ndim)
        return fs_error_set(FS_ERR_USAGE, "--mesh: %d lengths for positions of %d column%s (%s)",
                            o->mesh_ndim, *ndim, *ndim > 1 ? "s" : "", name);
    for (int a = 0; a < *ndim; a++)
        mesh[a] = o->mesh[o->mesh_ndim == 1 ? 0 : a];
    return FS_OK;
}

fs_status fs_particles_dry_probe(MPI_Comm comm, const fs_particles_options *o, int sharded,
                                 const fs_location *inputs, fs_input_info *info,
                                 fs_shard_set *shards)
{
    fs_status st = fs_inputs_probe(comm, sharded, inputs, 1, info, shards); /* agreed */
    if (st != FS_OK || !o->window)
        return st;
    int ndim = 0;
    int64_t mesh[FS_PAINT_MAX_DIMS];
    st = fs_particles_mesh_shape(o, info, info->dataset, &ndim, mesh);
    if (st != FS_OK)
        return st;
    info->painted_rows = info->shape[0];
    info->ndim = ndim;
    memcpy(info->shape, mesh, sizeof(int64_t) * (size_t)ndim);
    info->dtype = FS_DTYPE_FLOAT64;
    snprintf(info->type_name, sizeof info->type_name, "float64");
    info->painted = 1;
    info->particle_table = 0;
    return FS_OK;
}

void fs_particles_options_free(fs_particles_options *o)
{
    free(o->weights);
    o->weights = NULL;
}

int64_t fs_particles_dry_bytes(const fs_particles_options *o, int ndim, int64_t rows,
                               const fs_transform *t)
{
    if (!o->window || t->grid[0] < 1)
        return 0;
    return fs_particles_bytes(o->window, ndim, o->weights != NULL, o->interlace, rows, t);
}
