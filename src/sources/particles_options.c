/* SPDX-License-Identifier: GPL-3.0-or-later */
/* particles_options: --paint's names and values, --mesh, and their checks
 * (particles.h). */
#include "config.h"

#include "sources/particles.h"

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

void fs_particles_options_free(fs_particles_options *o)
{
    free(o->weights);
    o->weights = NULL;
}
