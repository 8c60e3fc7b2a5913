/* SPDX-License-Identifier: GPL-3.0-or-later */
/* h5paths: what h5io.h says of paths: what an existing file holds at a
 * path (--add's checks, never following a link), and FILE.h5:/path split
 * into file and dataset as HDF5 resolves the path. */
#include "config.h"

#include "io/h5io.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/h5common.h"

/* The kind of the link at `name` in fid (the last component not followed):
 * H5L_TYPE_HARD, _SOFT, _EXTERNAL or a user-defined kind; H5L_TYPE_ERROR
 * when it cannot be told. */
static H5L_type_t link_kind(hid_t fid, const char *name)
{
#if H5_VERSION_GE(1, 12, 0)
    H5L_info2_t info;
    return H5Lget_info2(fid, name, &info, H5P_DEFAULT) < 0 ? H5L_TYPE_ERROR : info.type;
#else
    H5L_info_t info;
    return H5Lget_info(fid, name, &info, H5P_DEFAULT) < 0 ? H5L_TYPE_ERROR : info.type;
#endif
}

/* What is at `path` in the open file fid: the prefixes of the path first
 * (a dataset on the way blocks it as much as one at it). A soft, external
 * or user-defined link at any of them is refused (FS_ERR_OUTPUT), before
 * anything behind it is opened: writing through it would write where it
 * leads, another file (the input) or another place, not the copy.
 * Messages call the file `file`. */
static fs_status path_state_in(hid_t fid, const char *file, const char *path, fs_h5_path_state *state)
{
    char prefix[FS_PATH_MAX];
    size_t len = strlen(path);
    if (len >= sizeof prefix)
        return fs_error_set(FS_ERR_OUTPUT, "%s:%s: dataset path too long", file, path);
    *state = FS_H5_PATH_FREE;
    for (size_t end = 1; end <= len; end++) {
        if (end < len && path[end] != '/')
            continue;
        memcpy(prefix, path, end);
        prefix[end] = '\0';
        htri_t exists = H5Lexists(fid, prefix, H5P_DEFAULT);
        if (exists < 0)
            return fs_h5_fail(FS_ERR_OUTPUT, "%s: cannot look up %s", file, prefix);
        if (exists == 0)
            return FS_OK;
        H5L_type_t kind = link_kind(fid, prefix);
        if (kind == H5L_TYPE_ERROR)
            return fs_h5_fail(FS_ERR_OUTPUT, "%s: cannot look up %s", file, prefix);
        if (kind != H5L_TYPE_HARD)
            return fs_error_set(FS_ERR_OUTPUT, "%s:%s: %s is %s link; --add follows no link on "
                                "the result's path (it would write where the link leads)", file,
                                path, prefix, kind == H5L_TYPE_SOFT       ? "a soft"
                                              : kind == H5L_TYPE_EXTERNAL ? "an external"
                                                                          : "a user-defined");
        hid_t obj = H5Oopen(fid, prefix, H5P_DEFAULT);
        H5I_type_t type = obj >= 0 ? H5Iget_type(obj) : H5I_BADID;
        if (obj >= 0 && H5Oclose(obj) < 0)
            return fs_h5_fail(FS_ERR_OUTPUT, "%s: cannot close %s", file, prefix);
        /* A link that leads nowhere (H5Oopen failed) is not free either. */
        fs_status st = fs_h5_clear_errors(FS_OK);
        if (st != FS_OK)
            return st;
        if (end == len) {
            *state = type == H5I_DATASET ? FS_H5_PATH_DATASET : FS_H5_PATH_OTHER;
            return FS_OK;
        }
        if (type != H5I_GROUP) {
            *state = FS_H5_PATH_BLOCKED;
            return FS_OK;
        }
    }
    return FS_OK;
}

fs_status fs_h5_output_path_state(const char *file, const char *name, const char *path,
                                  fs_h5_path_state *state)
{
    *state = FS_H5_PATH_FREE;
    htri_t is_hdf5 = H5Fis_hdf5(file);
    if (is_hdf5 <= 0)
        return fs_h5_clear_errors(fs_error_set(FS_ERR_OUTPUT, "%s: not an HDF5 file; --add adds "
                                               "datasets to an HDF5 file", name));
    hid_t fid = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (fid < 0)
        return fs_h5_fail(FS_ERR_OUTPUT, "%s: cannot open the HDF5 file", name);
    fs_status st = path_state_in(fid, name, path, state);
    return fs_h5_close_ids(st, name, 1, fid);
}

/* path (from its first '/') as HDF5 resolves it, in place: empty and "."
 * components dropped ("//u", "/./u" and "/u/" are all "/u"). -1 when a
 * component is "..", which HDF5 takes for a link of that name, not the
 * parent group. */
static int normalise_dataset_path(char *path)
{
    char *out = path;
    for (char *p = path; *p;) {
        while (*p == '/')
            p++;
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return -1;
        if (n > 0 && !(n == 1 && p[0] == '.')) {
            *out++ = '/';
            memmove(out, p, n);
            out += n;
        }
        p += n;
    }
    if (out == path)
        *out++ = '/';
    *out = '\0';
    return 0;
}

fs_status fs_split_location(const char *arg, char **file, char **dataset)
{
    *file = NULL;
    *dataset = NULL;
    const char *sep = strstr(arg, ":/");
    size_t file_len = sep ? (size_t)(sep - arg) : strlen(arg);
    if (file_len == 0)
        return fs_error_set(FS_ERR_USAGE, "'%s': no file name", arg);
    *file = strndup(arg, file_len);
    if (sep)
        *dataset = strdup(sep + 1);
    if (!*file || (sep && !*dataset)) {
        free(*file);
        free(*dataset);
        *file = *dataset = NULL;
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    const char *why = NULL;
    if (*dataset && normalise_dataset_path(*dataset) != 0)
        why = "'..' in the dataset path (HDF5 reads it as a link named '..', not the parent group)";
    else if (*dataset && strcmp(*dataset, "/") == 0)
        why = "dataset path is the root group";
    if (why) {
        free(*file);
        free(*dataset);
        *file = *dataset = NULL;
        return fs_error_set(FS_ERR_USAGE, "'%s': %s", arg, why);
    }
    return FS_OK;
}
