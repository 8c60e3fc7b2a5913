/* SPDX-License-Identifier: GPL-3.0-or-later */
/* h5scales: see h5scales.h. */
#include "config.h"

#include "io/h5scales.h"

#include <hdf5.h>
#include <hdf5_hl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/h5common.h"

/* fill for a coordinate whose values are given. */
static void copy_values(const void *ctx, int64_t first, int64_t count, void *out)
{
    memcpy(out, (const char *)((const fs_h5_coord *)ctx)->values + first * 8, (size_t)count * 8);
}

/* Values [first, first + count) of c into out. */
static void coord_values(const fs_h5_coord *c, int64_t first, int64_t count, void *out)
{
    if (c->values)
        copy_values(c, first, count, out);
    else
        c->fill(c->ctx, first, count, out);
}

/* 1 when the dataset at path is 1-D with c's n values, equal to them; 0
 * when it differs; -1 when there is none. Compared FS_H5_TABLE_PIECE
 * values at a time. */
static int same_values(hid_t fid, const char *path, const fs_h5_coord *c)
{
    htri_t exists = H5Lexists(fid, path, H5P_DEFAULT);
    if (exists <= 0)
        return -1;
    hid_t did = H5Dopen2(fid, path, H5P_DEFAULT);
    if (did < 0)
        return 0;
    hid_t space = H5Dget_space(did), mspace = H5I_INVALID_HID;
    hsize_t dim = 0;
    int same = space >= 0 && H5Sget_simple_extent_ndims(space) == 1 &&
               H5Sget_simple_extent_dims(space, &dim, NULL) == 1 && dim == (hsize_t)c->n &&
               H5DSis_scale(did) > 0;
    int64_t piece = c->n < FS_H5_TABLE_PIECE ? c->n : FS_H5_TABLE_PIECE;
    char *buf = same ? malloc((size_t)(piece > 0 ? piece : 1) * 16) : NULL;
    hid_t mtype = c->type == FS_DTYPE_INTEGER ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
    same = same && buf;
    for (int64_t first = 0; same && first < c->n; first += piece) {
        hsize_t at = (hsize_t)first, cnt = (hsize_t)(c->n - first < piece ? c->n - first : piece);
        if (mspace >= 0)
            H5Sclose(mspace);
        mspace = H5Screate_simple(1, &cnt, NULL);
        same = mspace >= 0 && H5Sselect_hyperslab(space, H5S_SELECT_SET, &at, NULL, &cnt, NULL) >= 0 &&
               H5Dread(did, mtype, mspace, space, H5P_DEFAULT, buf) >= 0;
        if (same) {
            coord_values(c, first, (int64_t)cnt, buf + piece * 8);
            same = memcmp(buf, buf + piece * 8, (size_t)cnt * 8) == 0;
        }
    }
    free(buf);
    if (mspace >= 0)
        H5Sclose(mspace);
    if (space >= 0)
        H5Sclose(space);
    H5Dclose(did);
    return same;
}

fs_status fs_h5_text_attr(fs_h5_output *o, const char *object, const char *name,
                          const char *value)
{
    hid_t fid = (hid_t)fs_h5_output_file(o);
    fs_status ret = FS_OK;
    hid_t obj = H5Oopen(fid, object, H5P_DEFAULT), type = H5Tcopy(H5T_C_S1);
    hid_t space = H5Screate(H5S_SCALAR), attr = H5I_INVALID_HID;
    if (obj >= 0 && H5Aexists(obj, name) > 0 && H5Adelete(obj, name) < 0)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot replace attribute %s of %s",
                         fs_h5_output_name(o), name, object);
    if (ret == FS_OK &&
        (obj < 0 || type < 0 || space < 0 || H5Tset_size(type, H5T_VARIABLE) < 0 ||
         H5Tset_cset(type, H5T_CSET_UTF8) < 0 ||
         (attr = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
         H5Awrite(attr, type, &value) < 0))
        ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot write attribute %s of %s",
                         fs_h5_output_name(o), name, object);
    if (attr >= 0)
        H5Aclose(attr);
    if (obj >= 0)
        H5Oclose(obj);
    return fs_h5_output_failed(o, fs_h5_close_ids(ret, fs_h5_output_name(o), 2, space, type));
}

/* netCDF-4 numbers every dimension of a file: a scale's _Netcdf4Dimid
 * when it has one, else the next number after the highest it has met so
 * far, in the order it reads the file (a group's objects, then its
 * subgroups). Two dimensions of one number are one to it: a variable takes
 * the other's length. What the file's scales say, to number a new one. */
typedef struct dimids {
    long long highest;          /* the highest _Netcdf4Dimid (-1: none) */
    long long unnumbered;       /* scales without one */
} dimids;

/* fs_h5_visit's visitor: every dimension scale of the file counted. */
static herr_t count_dimid(hid_t obj, const char *name, const fs_h5_oinfo *info, void *data)
{
    dimids *d = data;
    if (info->type != H5O_TYPE_DATASET)
        return 0;
    hid_t did = H5Dopen2(obj, name, H5P_DEFAULT), attr = H5I_INVALID_HID;
    int id = -1;
    if (did >= 0 && H5DSis_scale(did) > 0) {
        if (H5Aexists(did, "_Netcdf4Dimid") > 0 &&
            (attr = H5Aopen(did, "_Netcdf4Dimid", H5P_DEFAULT)) >= 0 &&
            H5Aread(attr, H5T_NATIVE_INT, &id) >= 0 && id >= 0)
            d->highest = id > d->highest ? id : d->highest;
        else
            d->unnumbered++;
    }
    fs_h5_close_ids(FS_OK, name, 2, attr, did);
    fs_h5_clear_errors(FS_OK); /* what cannot be read is no dimension netCDF-4 numbers */
    return 0;
}

/* Collective: the dataset did, about to become a scale, numbered past
 * every dimension netCDF-4 can number in the file: after the highest
 * number, one more than the scales without one, which netCDF-4 numbers
 * one after another from where it is. Numbered so, neither those nor the
 * next scales fftshard makes can meet it, in whatever order netCDF-4
 * reads them. */
static fs_status number_dimension(fs_h5_output *o, hid_t did, const char *path)
{
    dimids d = {-1, 0};
    hid_t fid = (hid_t)fs_h5_output_file(o), space = H5I_INVALID_HID, attr = H5I_INVALID_HID;
    if (fs_h5_visit(fid, count_dimid, &d) < 0)
        return fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot list the dimension scales",
                          fs_h5_output_name(o));
    long long next = d.highest + 1 + d.unnumbered;
    int id = next > 2147483647LL ? -1 : (int)next;
    fs_status ret = FS_OK;
    if (id < 0)
        ret = fs_error_set(FS_ERR_RUNTIME, "%s: no netCDF-4 dimension number is left for %s",
                           fs_h5_output_name(o), path);
    else if ((space = H5Screate(H5S_SCALAR)) < 0 ||
             (attr = H5Acreate2(did, "_Netcdf4Dimid", H5T_STD_I32LE, space, H5P_DEFAULT,
                                H5P_DEFAULT)) < 0 ||
             H5Awrite(attr, H5T_NATIVE_INT, &id) < 0)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot number the dimension %s",
                         fs_h5_output_name(o), path);
    return fs_h5_close_ids(ret, fs_h5_output_name(o), 2, attr, space);
}

fs_status fs_h5_scale_set(fs_h5_output *o, const char *path)
{
    const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    hid_t did = H5Dopen2((hid_t)fs_h5_output_file(o), path, H5P_DEFAULT);
    fs_status ret = did >= 0 ? number_dimension(o, did, path)
                             : fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot open %s",
                                          fs_h5_output_name(o), path);
    if (ret == FS_OK && H5DSset_scale(did, name) < 0)
        ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot make %s a dimension scale",
                         fs_h5_output_name(o), path);
    if (did >= 0)
        H5Dclose(did);
    return fs_h5_output_failed(o, ret);
}

/* How many names a coordinate tries: its own, its alt, then the last of
 * those with _2, _3, ... appended. */
#define COORD_NAMES 32

/* Whether path is one of the n paths (leading slashes aside). */
static int path_among(const char *path, const char *const *paths, int n)
{
    path += strspn(path, "/");
    for (int i = 0; i < n; i++)
        if (strcmp(path, paths[i] + strspn(paths[i], "/")) == 0)
            return 1;
    return 0;
}

fs_status fs_h5_coord_make(fs_h5_output *o, const char *group, const fs_h5_coord *c,
                           const char *const *taken, int ntaken, char *path, size_t size)
{
    const char *sep = strcmp(group, "/") == 0 ? "" : "/";
    const char *base = c->alt ? c->alt : c->name;
    int same = 0;
    for (int i = 0; i < COORD_NAMES && same == 0; i++) {
        if (i == 0 || (i == 1 && c->alt))
            snprintf(path, size, "%s%s%s", group, sep, i == 0 ? c->name : c->alt);
        else
            snprintf(path, size, "%s%s%s_%d", group, sep, base, i + (c->alt ? 0 : 1));
        same = path_among(path, taken, ntaken) ? 0 : same_values((hid_t)fs_h5_output_file(o), path, c);
    }
    if (same == 1)
        return FS_OK;
    if (same == 0)
        return fs_error_set(FS_ERR_OUTPUT, "%s: %s holds something else than the coordinate "
                            "fftshard writes there", fs_h5_output_name(o), path);
    fs_status st = c->values ? fs_h5_output_table_fill(o, path, c->n, c->type, copy_values, c)
                             : fs_h5_output_table_fill(o, path, c->n, c->type, c->fill, c->ctx);
    if (st == FS_OK)
        st = fs_h5_scale_set(o, path);
    if (st == FS_OK && c->units)
        st = fs_h5_text_attr(o, path, "units", c->units);
    if (st == FS_OK && c->long_name)
        st = fs_h5_text_attr(o, path, "long_name", c->long_name);
    return st;
}

fs_status fs_h5_scales_attach(fs_h5_output *o, const char *dataset, int ndim,
                              const char *const *scales)
{
    hid_t fid = (hid_t)fs_h5_output_file(o);
    hid_t did = H5Dopen2(fid, dataset, H5P_DEFAULT);
    fs_status ret = did >= 0 ? FS_OK
                             : fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot open %s",
                                          fs_h5_output_name(o), dataset);
    for (int i = 0; i < ndim && ret == FS_OK; i++) {
        hid_t sid = H5Dopen2(fid, scales[i], H5P_DEFAULT);
        if (sid < 0 || H5DSattach_scale(did, sid, (unsigned)i) < 0)
            ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot attach the coordinate %s to axis %d of %s",
                             fs_h5_output_name(o), scales[i], i, dataset);
        if (sid >= 0)
            H5Dclose(sid);
    }
    if (did >= 0)
        H5Dclose(did);
    return fs_h5_output_failed(o, ret);
}

/* H5DSiterate_scales' visitor: every scale attached to the axis detached. */
static herr_t detach_one(hid_t did, unsigned axis, hid_t sid, void *data)
{
    int *failed = data;
    if (H5DSdetach_scale(did, sid, axis) < 0)
        *failed = 1;
    return *failed ? -1 : 1; /* one at a time: the list changes under the walk */
}

fs_status fs_h5_scales_detach(fs_h5_output *o, const char *dataset)
{
    hid_t fid = (hid_t)fs_h5_output_file(o);
    hid_t did = H5Lexists(fid, dataset, H5P_DEFAULT) > 0 ? H5Oopen(fid, dataset, H5P_DEFAULT)
                                                         : H5I_INVALID_HID;
    hid_t space = H5I_INVALID_HID;
    if (did < 0 || H5Iget_type(did) != H5I_DATASET)
        return fs_h5_close_ids(FS_OK, fs_h5_output_name(o), 1, did); /* nothing attached */
    int ndim = did >= 0 && (space = H5Dget_space(did)) >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    int failed = ndim < 0;
    for (int a = 0; a < ndim && !failed; a++)
        while (!failed && H5DSget_num_scales(did, (unsigned)a) > 0)
            if (H5DSiterate_scales(did, (unsigned)a, NULL, detach_one, &failed) < 0)
                failed = 1;
    fs_status ret = failed ? fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot detach the coordinates of %s",
                                        fs_h5_output_name(o), dataset)
                           : FS_OK;
    if (did >= 0)
        H5Dclose(did);
    return fs_h5_output_failed(o, fs_h5_close_ids(ret, fs_h5_output_name(o), 1, space));
}

/* The text of a string attribute `name` of obj into buf (size bytes); ""
 * when there is none, it is no string, or it does not fit. */
static void read_text(hid_t obj, const char *name, char *buf, size_t size)
{
    buf[0] = '\0';
    if (H5Aexists(obj, name) <= 0)
        return;
    hid_t attr = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t type = attr >= 0 ? H5Aget_type(attr) : H5I_INVALID_HID;
    hid_t space = attr >= 0 ? H5Aget_space(attr) : H5I_INVALID_HID;
    hid_t mtype = H5Tcopy(H5T_C_S1);
    /* HDF5 converts no character set into another: the file's is read */
    if (type >= 0 && space >= 0 && mtype >= 0 && H5Tget_class(type) == H5T_STRING &&
        H5Sget_simple_extent_npoints(space) == 1 && H5Tset_cset(mtype, H5Tget_cset(type)) >= 0) {
        if (H5Tis_variable_str(type) > 0) {
            char *text = NULL;
            if (H5Tset_size(mtype, H5T_VARIABLE) >= 0 && H5Aread(attr, mtype, &text) >= 0 && text) {
                if (strlen(text) < size)
                    snprintf(buf, size, "%s", text);
                H5free_memory(text);
            }
        } else {
            size_t n = H5Tget_size(type);
            if (n > 0 && n < size && H5Tset_size(mtype, n + 1) >= 0 && H5Aread(attr, mtype, buf) < 0)
                buf[0] = '\0';
        }
    }
    fs_h5_close_ids(FS_OK, "an attribute", 4, mtype, space, type, attr);
}

/* H5DSiterate_scales' visitor: the first numeric 1-D scale of the axis's
 * length, read into the fs_h5_found_coord at data. */
typedef struct found_args {
    fs_h5_found_coord *c;
    int64_t n;
    void *values;  /* n * 8 bytes */
} found_args;

static herr_t take_scale(hid_t did, unsigned axis, hid_t sid, void *data)
{
    found_args *a = data;
    fs_h5_found_coord *c = a->c;
    char path[1024], scale_name[128] = "";
    hid_t space = H5Dget_space(sid), type = H5Dget_type(sid);
    hsize_t dim = 0;
    ssize_t len = H5Iget_name(sid, path, sizeof path);
    const char *slash = len > 0 && (size_t)len < sizeof path ? strrchr(path, '/') : NULL;
    H5T_class_t cls = type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS;
    int usable = slash && strlen(slash + 1) > 0 && strlen(slash + 1) < sizeof c->name &&
                 space >= 0 && H5Sget_simple_extent_ndims(space) == 1 &&
                 H5Sget_simple_extent_dims(space, &dim, NULL) == 1 && dim == (hsize_t)a->n &&
                 (cls == H5T_INTEGER || cls == H5T_FLOAT);
    if (usable) {
        snprintf(c->name, sizeof c->name, "%s", slash + 1);
        c->is_int = cls == H5T_INTEGER;
        /* netCDF-4 gives a dimension without a coordinate variable a scale
         * named thus, holding nothing meaningful: indices stand for it. */
        if (H5DSget_scale_name(sid, scale_name, sizeof scale_name) < 0)
            scale_name[0] = '\0';
        c->has_values = strncmp(scale_name, "This is a netCDF dimension but not a netCDF variable",
                                52) != 0;
        if (c->has_values)
            usable = H5Dread(sid, c->is_int ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE, H5S_ALL,
                             H5S_ALL, H5P_DEFAULT, a->values) >= 0;
        read_text(sid, "units", c->units, sizeof c->units);
        read_text(sid, "long_name", c->long_name, sizeof c->long_name);
    }
    c->found = usable;
    fs_h5_close_ids(FS_OK, "a coordinate", 2, type, space);
    return usable ? 1 : 0; /* the first usable one */
}

fs_status fs_h5_coords_read(const char *file, const char *dataset, int ndim, const int64_t *shape,
                            const int *want, fs_h5_found_coord *found, void **values)
{
    for (int a = 0; a < ndim; a++) {
        memset(&found[a], 0, sizeof found[a]);
        values[a] = NULL;
    }
    hid_t fid = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t did = fid >= 0 ? H5Dopen2(fid, dataset, H5P_DEFAULT) : H5I_INVALID_HID;
    fs_status ret = FS_OK;
    for (int a = 0; a < ndim && did >= 0 && ret == FS_OK; a++) {
        if (!want[a] || H5DSget_num_scales(did, (unsigned)a) <= 0)
            continue;
        values[a] = malloc((size_t)(shape[a] > 0 ? shape[a] : 1) * 8);
        if (!values[a]) {
            ret = fs_error_set(FS_ERR_RUNTIME, "out of memory");
            break;
        }
        found_args args = {&found[a], shape[a], values[a]};
        if (H5DSiterate_scales(did, (unsigned)a, NULL, take_scale, &args) < 0)
            found[a].found = 0;
        if (!found[a].found) {
            free(values[a]);
            values[a] = NULL;
        }
    }
    /* A file or scale that cannot be read gives its axes no coordinate:
     * the probe judged the input itself. */
    fs_h5_close_ids(FS_OK, file, 1, did);
    if (fid >= 0)
        H5Fclose(fid);
    return ret;
}

/* ------------------------------------------------------------------ coordinates in use */

/* A dimension scale at or under the path about to be replaced. */
typedef struct found_scale {
    fs_h5_oinfo info;
    char path[2 * FS_PATH_MAX + 2]; /* for the message */
} found_scale;

typedef struct in_use_args {
    char top[FS_PATH_MAX];      /* the path replaced, as "/a/b" */
    int nscales, cap;
    found_scale *scale;         /* the scales at or under it */
    int failed;                 /* out of memory */
    int found;                  /* the scale a dataset elsewhere uses; -1: none */
    char user[FS_PATH_MAX];     /* that dataset */
    unsigned axis;              /* its axis */
} in_use_args;

/* Whether the object at absolute path p lies at or under a->top. */
static int under_top(const in_use_args *a, const char *p)
{
    size_t n = strlen(a->top);
    if (strcmp(a->top, "/") == 0)
        return 1;
    return strncmp(p, a->top, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

/* fs_h5_visit's visitor from the replaced path (itself is "."): its
 * dimension scales. */
static herr_t note_scale(hid_t obj, const char *name, const fs_h5_oinfo *info, void *data)
{
    in_use_args *a = data;
    if (info->type != H5O_TYPE_DATASET)
        return 0;
    hid_t did = H5Dopen2(obj, name, H5P_DEFAULT);
    if (did >= 0 && H5DSis_scale(did) > 0) {
        if (a->nscales == a->cap) {
            int cap = a->cap ? 2 * a->cap : 8;
            found_scale *more = realloc(a->scale, sizeof *more * (size_t)cap);
            a->failed = !more;
            a->scale = more ? more : a->scale;
            a->cap = more ? cap : a->cap;
        }
        if (!a->failed) {
            found_scale *f = &a->scale[a->nscales++];
            f->info = *info;
            if (strcmp(name, ".") == 0)
                snprintf(f->path, sizeof f->path, "%s", a->top);
            else
                snprintf(f->path, sizeof f->path, "%s/%s", strcmp(a->top, "/") ? a->top : "",
                         name);
        }
    }
    fs_h5_close_ids(FS_OK, name, 1, did);
    fs_h5_clear_errors(FS_OK); /* what cannot be opened holds no scale */
    return a->failed ? -1 : 0;
}

/* H5DSiterate_scales' visitor: whether the scale sid is one of a's. */
static herr_t match_scale(hid_t did, unsigned axis, hid_t sid, void *data)
{
    in_use_args *a = data;
    fs_h5_oinfo info;
    if (fs_h5_info(sid, &info) < 0)
        return 0;
    for (int i = 0; i < a->nscales; i++)
        if (fs_h5_same_object(&info, &a->scale[i].info)) {
            a->found = i;
            a->axis = axis;
            return 1;
        }
    return 0;
}

/* fs_h5_visit's visitor over the whole file: a dataset outside the
 * replaced path with one of its scales attached. */
static herr_t find_user(hid_t obj, const char *name, const fs_h5_oinfo *info, void *data)
{
    in_use_args *a = data;
    char path[FS_PATH_MAX];
    snprintf(path, sizeof path, "/%s", name);
    if (info->type != H5O_TYPE_DATASET || under_top(a, path))
        return 0;
    hid_t did = H5Dopen2(obj, name, H5P_DEFAULT), space = H5I_INVALID_HID;
    int ndim = did >= 0 && (space = H5Dget_space(did)) >= 0 ? H5Sget_simple_extent_ndims(space) : 0;
    for (int k = 0; k < ndim && a->found < 0; k++)
        if (H5DSget_num_scales(did, (unsigned)k) > 0 &&
            H5DSiterate_scales(did, (unsigned)k, NULL, match_scale, a) > 0)
            snprintf(a->user, sizeof a->user, "%s", path);
    fs_h5_close_ids(FS_OK, path, 2, space, did);
    fs_h5_clear_errors(FS_OK); /* a dataset whose scales cannot be read uses none */
    return a->found >= 0;
}

fs_status fs_h5_coords_in_use(const char *file, const char *name, const char *path)
{
    in_use_args *a = calloc(1, sizeof *a);
    if (!a)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    snprintf(a->top, sizeof a->top, "%s", path);
    a->found = -1;
    fs_status st = FS_OK;
    hid_t fid = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t obj = fid >= 0 ? H5Oopen(fid, path, H5P_DEFAULT) : H5I_INVALID_HID;
    if (obj < 0 || fs_h5_visit(obj, note_scale, a) < 0 ||
        (a->nscales && fs_h5_visit(fid, find_user, a) < 0))
        st = a->failed ? fs_error_set(FS_ERR_RUNTIME, "out of memory")
                       : fs_h5_fail(FS_ERR_OUTPUT, "%s:%s: cannot tell whether another dataset "
                                    "uses a coordinate there", name, path);
    if (st == FS_OK && a->found >= 0) {
        const char *scale = a->scale[a->found].path;
        int itself = strcmp(scale, a->top) == 0;
        st = fs_error_set(FS_ERR_OUTPUT, "%s:%s: %s%s%s the coordinate of axis %u of %s (a "
                          "dimension scale attached to it); --add replaces no coordinate that "
                          "another dataset uses", name, path,
                          itself ? "the dataset" : "the group holds ", itself ? "" : scale,
                          itself ? " is" : ",", a->axis, a->user);
    }
    st = fs_h5_close_ids(st, name, 2, obj, fid);
    free(a->scale);
    free(a);
    return st;
}

/* The indices first .. first + count - 1 (fs_h5_fill_fn). */
static void fill_index(const void *ctx, int64_t first, int64_t count, void *out)
{
    (void)ctx;
    for (int64_t j = 0; j < count; j++)
        ((int64_t *)out)[j] = first + j;
}

void fs_h5_batch_coord_of(const fs_input_coords *in, int a, int64_t n, fs_h5_batch_coord *out)
{
    memset(out, 0, sizeof *out);
    const fs_h5_found_coord *f = in && a < in->ndim && in->axis[a].found ? &in->axis[a] : NULL;
    if (f && f->has_values) {
        snprintf(out->name, sizeof out->name, "%s", f->name);
        out->c = (fs_h5_coord){.name = out->name, .n = n,
                               .type = f->is_int ? FS_DTYPE_INTEGER : FS_DTYPE_FLOAT64,
                               .values = in->values[a], .units = f->units[0] ? f->units : NULL,
                               .long_name = f->long_name[0] ? f->long_name : NULL};
        return;
    }
    /* a netCDF-4 dimension without a variable keeps its name */
    if (f)
        snprintf(out->name, sizeof out->name, "%s", f->name);
    else
        snprintf(out->name, sizeof out->name, "axis%d", a);
    snprintf(out->long_name, sizeof out->long_name, "index along axis %d", a);
    out->c = (fs_h5_coord){.name = out->name, .n = n, .type = FS_DTYPE_INTEGER,
                           .fill = fill_index, .units = "1", .long_name = out->long_name};
}
