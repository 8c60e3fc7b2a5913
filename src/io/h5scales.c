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

/* 1 when the dataset at path is 1-D with c's n values, equal to them; 0
 * when it differs; -1 when there is none. */
static int same_values(hid_t fid, const char *path, const fs_h5_coord *c)
{
    htri_t exists = H5Lexists(fid, path, H5P_DEFAULT);
    if (exists <= 0)
        return -1;
    hid_t did = H5Dopen2(fid, path, H5P_DEFAULT);
    if (did < 0)
        return 0;
    hid_t space = H5Dget_space(did);
    hsize_t dim = 0;
    int same = space >= 0 && H5Sget_simple_extent_ndims(space) == 1 &&
               H5Sget_simple_extent_dims(space, &dim, NULL) == 1 && dim == (hsize_t)c->n;
    size_t bytes = (size_t)(c->n > 0 ? c->n : 1) * 8;
    void *buf = same ? malloc(bytes) : NULL;
    hid_t mtype = c->type == FS_DTYPE_INTEGER ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
    same = buf && H5Dread(did, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0 &&
           memcmp(buf, c->values, (size_t)c->n * 8) == 0 && H5DSis_scale(did) > 0;
    free(buf);
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

fs_status fs_h5_scale_set(fs_h5_output *o, const char *path)
{
    const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    hid_t did = H5Dopen2((hid_t)fs_h5_output_file(o), path, H5P_DEFAULT);
    fs_status ret = did >= 0 && H5DSset_scale(did, name) >= 0
                        ? FS_OK
                        : fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot make %s a dimension scale",
                                     fs_h5_output_name(o), path);
    if (did >= 0)
        H5Dclose(did);
    return fs_h5_output_failed(o, ret);
}

fs_status fs_h5_coord_make(fs_h5_output *o, const char *group, const fs_h5_coord *c, char *path,
                           size_t size)
{
    const char *sep = strcmp(group, "/") == 0 ? "" : "/";
    const char *name = c->name;
    snprintf(path, size, "%s%s%s", group, sep, name);
    int same = same_values((hid_t)fs_h5_output_file(o), path, c);
    if (same == 1)
        return FS_OK;
    if (same == 0 && c->alt) {
        name = c->alt;
        snprintf(path, size, "%s%s%s", group, sep, name);
        same = same_values((hid_t)fs_h5_output_file(o), path, c);
        if (same == 1)
            return FS_OK;
    }
    if (same == 0)
        return fs_error_set(FS_ERR_OUTPUT, "%s: %s holds something else than the coordinate "
                            "fftshard writes there", fs_h5_output_name(o), path);
    fs_status st = fs_h5_output_table(o, path, 1, &c->n, c->type, c->values);
    if (st == FS_OK)
        st = fs_h5_scale_set(o, path);
    if (st == FS_OK && c->units)
        st = fs_h5_text_attr(o, path, "units", c->units);
    if (st == FS_OK)
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
