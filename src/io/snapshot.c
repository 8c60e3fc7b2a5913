/* SPDX-License-Identifier: GPL-3.0-or-later */
/* snapshot: see snapshot.h. */
#include "config.h"

#include "io/snapshot.h"

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/h5common.h"

/* Up to max numbers of attribute `name` of the group gid as mem_type (a
 * native double or int64), *n how many (0: no such attribute). */
static fs_status read_numbers(hid_t gid, const char *file, const char *name, hid_t mem_type,
                              void *out, int max, int *n)
{
    *n = 0;
    htri_t exists = H5Aexists(gid, name);
    if (exists < 0)
        return fs_h5_fail(FS_ERR_INPUT, "%s: /Header: cannot look for its attribute %s", file, name);
    if (!exists)
        return FS_OK;
    hid_t aid = H5Aopen(gid, name, H5P_DEFAULT), tid = H5I_INVALID_HID, sid = H5I_INVALID_HID;
    fs_status ret = FS_OK;
    H5T_class_t cls = H5T_NO_CLASS;
    hssize_t count = -1;
    if (aid < 0 || (tid = H5Aget_type(aid)) < 0 || (sid = H5Aget_space(aid)) < 0 ||
        (cls = H5Tget_class(tid)) == H5T_NO_CLASS || (count = H5Sget_simple_extent_npoints(sid)) < 0)
        ret = fs_h5_fail(FS_ERR_INPUT, "%s: /Header: cannot read its attribute %s", file, name);
    else if (cls != H5T_INTEGER && cls != H5T_FLOAT)
        ret = fs_error_set(FS_ERR_INPUT, "%s: /Header: attribute %s is not a number", file, name);
    else if (count < 1 || count > max)
        ret = fs_error_set(FS_ERR_INPUT, "%s: /Header: attribute %s holds %lld values (expected 1 "
                           "to %d)", file, name, (long long)count, max);
    else if (H5Aread(aid, mem_type, out) < 0)
        ret = fs_h5_fail(FS_ERR_INPUT, "%s: /Header: cannot read its attribute %s", file, name);
    if (ret == FS_OK)
        *n = (int)count;
    return fs_h5_close_ids(ret, file, 3, sid, tid, aid);
}

/* NumPart_Total (its high words added), NumPart_ThisFile, NumFilesPerSnapshot. */
static fs_status read_counts(hid_t gid, const char *file, fs_snapshot_header *h)
{
    int64_t high[FS_SNAPSHOT_TYPES] = {0};
    int n = 0, nhigh = 0, nthis = 0, nfiles = 0;
    fs_status ret = read_numbers(gid, file, "NumPart_Total", H5T_NATIVE_INT64, h->total,
                                 FS_SNAPSHOT_TYPES, &n);
    if (ret == FS_OK)
        ret = read_numbers(gid, file, "NumPart_Total_HighWord", H5T_NATIVE_INT64, high,
                           FS_SNAPSHOT_TYPES, &nhigh);
    if (ret == FS_OK)
        ret = read_numbers(gid, file, "NumPart_ThisFile", H5T_NATIVE_INT64, h->this_file,
                           FS_SNAPSHOT_TYPES, &nthis);
    if (ret == FS_OK)
        ret = read_numbers(gid, file, "NumFilesPerSnapshot", H5T_NATIVE_INT64, &h->nfiles, 1,
                           &nfiles);
    if (ret != FS_OK)
        return ret;
    for (int k = 0; k < FS_SNAPSHOT_TYPES; k++) {
        h->total[k] = k < n ? h->total[k] + (k < nhigh ? high[k] << 32 : 0) : -1;
        h->this_file[k] = k < nthis ? h->this_file[k] : -1;
        if ((k < n && h->total[k] < 0) || (k < nthis && h->this_file[k] < 0) || high[k] < 0)
            return fs_error_set(FS_ERR_INPUT, "%s: /Header: a negative particle count", file);
    }
    if (!nfiles)
        h->nfiles = -1;
    else if (h->nfiles < 1)
        return fs_error_set(FS_ERR_INPUT, "%s: /Header: NumFilesPerSnapshot is %lld (expected 1 "
                            "or more)", file, (long long)h->nfiles);
    return FS_OK;
}

fs_status fs_snapshot_header_read(const char *file, fs_snapshot_header *h)
{
    memset(h, 0, sizeof *h);
    h->nfiles = -1;
    for (int k = 0; k < FS_SNAPSHOT_TYPES; k++)
        h->total[k] = h->this_file[k] = -1;
    hid_t fid = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT), gid = H5I_INVALID_HID;
    if (fid < 0)
        return fs_h5_fail(FS_ERR_INPUT, "%s: HDF5 cannot open it", file);
    fs_status ret = FS_OK;
    htri_t has = H5Lexists(fid, "Header", H5P_DEFAULT);
    if (has > 0 && (gid = H5Gopen2(fid, "Header", H5P_DEFAULT)) < 0)
        ret = fs_h5_fail(FS_ERR_INPUT, "%s: /Header is not a group", file);
    if (has > 0 && ret == FS_OK) {
        h->present = 1;
        ret = read_numbers(gid, file, "BoxSize", H5T_NATIVE_DOUBLE, h->box, 3, &h->nbox);
        for (int a = 0; a < h->nbox && ret == FS_OK; a++)
            if (!(h->box[a] > 0) || !isfinite(h->box[a]))
                ret = fs_error_set(FS_ERR_INPUT, "%s: /Header: BoxSize %g is no box length", file,
                                   h->box[a]);
        if (ret == FS_OK)
            ret = read_counts(gid, file, h);
    }
    ret = fs_h5_clear_errors(ret);
    return fs_h5_close_ids(ret, file, 2, gid, fid);
}

int fs_snapshot_part_type(const char *dataset)
{
    const char *p = dataset[0] == '/' ? dataset + 1 : dataset;
    if (strncmp(p, "PartType", 8) != 0 || p[8] < '0' || p[8] > '9' || p[9] != '/')
        return -1;
    return p[8] - '0';
}

void fs_snapshot_mark(int64_t fid, fs_input_info *info)
{
    info->particle_table = 0;
    if (info->ndim != 2 || info->shape[1] < 1 || info->shape[1] > 3 ||
        fs_snapshot_part_type(info->dataset) < 0)
        return;
    fs_h5_oinfo oinfo;
    htri_t has = H5Lexists((hid_t)fid, "Header", H5P_DEFAULT);
    info->particle_table = has > 0 && fs_h5_info_by_name((hid_t)fid, "Header", &oinfo) >= 0 &&
                           oinfo.type == H5O_TYPE_GROUP;
    fs_h5_clear_errors(FS_OK);
}
