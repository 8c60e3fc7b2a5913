/* SPDX-License-Identifier: GPL-3.0-or-later */
/* h5recorded: see h5recorded.h. */
#include "config.h"

#include "io/h5recorded.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/h5common.h"

/* An attribute opened for reading: its handles, class and element count. */
typedef struct attr_handle {
    hid_t aid, asp, aty;
    H5T_class_t cls;
    hssize_t count;
} attr_handle;

/* Open the attribute `name` of did: *found 0 when it is absent (nothing
 * open). FS_ERR_INPUT when HDF5 cannot tell its class or size. */
static fs_status attr_open(hid_t did, const char *name, const char *label, int *found,
                           attr_handle *a)
{
    *found = 0;
    *a = (attr_handle){H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID, H5T_NO_CLASS, -1};
    htri_t exists = H5Aexists(did, name);
    if (exists < 0)
        return fs_h5_fail(FS_ERR_INPUT, "%s: cannot look for %s %s attribute", label,
                          strchr("aeiou", name[0]) ? "an" : "a", name);
    if (exists == 0)
        return FS_OK;
    *found = 1;
    a->aid = H5Aopen(did, name, H5P_DEFAULT);
    a->asp = a->aid >= 0 ? H5Aget_space(a->aid) : H5I_INVALID_HID;
    a->aty = a->aid >= 0 ? H5Aget_type(a->aid) : H5I_INVALID_HID;
    a->cls = a->aty >= 0 ? H5Tget_class(a->aty) : H5T_NO_CLASS;
    a->count = a->asp >= 0 ? H5Sget_simple_extent_npoints(a->asp) : -1;
    if (a->cls == H5T_NO_CLASS || a->count < 0)
        return fs_h5_close_ids(fs_h5_fail(FS_ERR_INPUT, "%s: cannot read the %s attribute", label,
                                          name),
                               label, 3, a->aty, a->asp, a->aid);
    return FS_OK;
}

/* A shard's "offset" attribute: its start in the whole array, one integer
 * (along axis 0) or one per axis. has_offset -1: present but unusable. */
fs_status fs_h5_read_offset(hid_t did, const char *label, int ndim, fs_input_info *info)
{
    int found;
    attr_handle a;
    fs_status ret = attr_open(did, "offset", label, &found, &a);
    if (ret != FS_OK || !found)
        return ret;
    long long v[FS_LAYOUT_MAX_DIMS] = {0};
    info->has_offset = -1;
    if (a.cls == H5T_INTEGER && (a.count == 1 || a.count == ndim)) {
        if (H5Aread(a.aid, H5T_NATIVE_LLONG, v) < 0) {
            ret = fs_h5_fail(FS_ERR_INPUT, "%s: cannot read the offset attribute", label);
        } else {
            info->has_offset = 1;
            for (int k = 0; k < ndim; k++) {
                info->offset[k] = v[k];
                if (v[k] < 0)
                    info->has_offset = -1;
            }
        }
    }
    return fs_h5_close_ids(ret, label, 3, a.aty, a.asp, a.aid);
}

/* What an attribute is, for a message: "a string", "numbers", ... */
static const char *attr_kind(const attr_handle *a)
{
    switch (a->cls) {
    case H5T_STRING:
        return a->count == 1 ? "a string" : "strings";
    case H5T_INTEGER:
    case H5T_FLOAT:
        return a->count == 1 ? "a number" : "numbers";
    default:
        return "neither numbers nor a string";
    }
}

/* The attribute `name` as 1 to max whole numbers (integer class, or float
 * values without a fraction), into v; *n their count, -1 when the attribute
 * is absent or not that. A present attribute that is not that has its
 * reason in why ("" otherwise): the inverse refuses a recorded attribute it
 * would take that fftshard cannot have written (fs_recorded). */
static fs_status read_numbers(hid_t did, const char *name, const char *label, int max,
                              long long *v, int *n, char *why, size_t why_size)
{
    *n = -1;
    why[0] = '\0';
    int found;
    attr_handle a;
    fs_status ret = attr_open(did, name, label, &found, &a);
    if (ret != FS_OK || !found)
        return ret;
    double d[FS_LAYOUT_MAX_DIMS];
    int numbers = a.cls == H5T_INTEGER || a.cls == H5T_FLOAT;
    if (!numbers)
        snprintf(why, why_size, "the %s attribute is %s, not integers", name, attr_kind(&a));
    else if (a.count < 1)
        snprintf(why, why_size, "the %s attribute is empty", name);
    else if (a.count > max)
        snprintf(why, why_size, "the %s attribute holds %lld values, not %s%d", name,
                 (long long)a.count, max > 1 ? "at most " : "", max);
    else if (H5Aread(a.aid, H5T_NATIVE_LLONG, v) < 0 ||
             (a.cls == H5T_FLOAT && H5Aread(a.aid, H5T_NATIVE_DOUBLE, d) < 0))
        ret = fs_h5_fail(FS_ERR_INPUT, "%s: cannot read the %s attribute", label, name);
    else
        *n = (int)a.count;
    for (int i = 0; i < *n && a.cls == H5T_FLOAT; i++)
        if (d[i] != (double)v[i]) {
            snprintf(why, why_size, "the %s attribute holds %g, not a whole number", name, d[i]);
            *n = -1;
        }
    return fs_h5_close_ids(ret, label, 3, a.aty, a.asp, a.aid);
}

/* A string attribute, fixed or variable length, into buf; "" when it is
 * absent, not one string or longer than buf, then why says which of those
 * when it is present ("" otherwise). why may be NULL. */
static fs_status read_text(hid_t did, const char *name, const char *label, char *buf, size_t size,
                           char *why, size_t why_size)
{
    buf[0] = '\0';
    if (why)
        why[0] = '\0';
    int found;
    attr_handle a;
    fs_status ret = attr_open(did, name, label, &found, &a);
    if (ret != FS_OK || !found)
        return ret;
    hid_t aid = a.aid, aty = a.aty;
    int string = a.cls == H5T_STRING, got = 0;
    htri_t variable = string ? H5Tis_variable_str(aty) : 0;
    size_t len = string ? H5Tget_size(aty) : 0;
    if (variable < 0)
        ret = fs_h5_fail(FS_ERR_INPUT, "%s: cannot read the %s attribute", label, name);
    else if (string && a.count == 1 && variable) {
        /* Read in the stored type (its character set) as a char *. */
        char *text = NULL;
        if (H5Aread(aid, aty, &text) < 0)
            ret = fs_h5_fail(FS_ERR_INPUT, "%s: cannot read the %s attribute", label, name);
        else if (text && strlen(text) < size)
            got = (strcpy(buf, text), 1);
        if (text && H5free_memory(text) < 0 && ret == FS_OK)
            ret = fs_h5_fail(FS_ERR_INPUT, "%s: cannot read the %s attribute", label, name);
    } else if (string && a.count == 1 && len < size) {
        /* The stored bytes, NUL- or space-padded to len. */
        char text[256] = "";
        if (H5Aread(aid, aty, text) < 0)
            ret = fs_h5_fail(FS_ERR_INPUT, "%s: cannot read the %s attribute", label, name);
        while (len > 0 && (text[len - 1] == ' ' || text[len - 1] == '\0'))
            len--;
        memcpy(buf, text, len);
        buf[len] = '\0';
        got = 1;
    }
    if (ret == FS_OK && !got && why)
        snprintf(why, why_size, "the %s attribute is %s%s", name, attr_kind(&a),
                 string && a.count == 1 ? " longer than fftshard records" : ", not one string");
    return fs_h5_close_ids(ret, label, 3, a.aty, a.asp, a.aid);
}

/* Why the recorded axes and real axis cannot be a forward run's on an
 * ndim-D input ("" when they can): every axis in range and named once, the
 * real axis one of them. */
static void judge_axes(fs_recorded *rec, int ndim, const char *axes_why, int n)
{
    char *why = rec->axes_bad;
    size_t size = sizeof rec->axes_bad;
    int seen[FS_LAYOUT_MAX_DIMS] = {0}, has_real = rec->real_axis < 0;
    if (axes_why[0])
        snprintf(why, size, "%s", axes_why);
    else if (n > ndim)
        snprintf(why, size, "the axes attribute holds %d values; a %d-D array has %d axes", n,
                 ndim, ndim);
    for (int i = 0; i < n && !why[0]; i++) {
        int64_t a = rec->axes[i];
        if (a < 0 || a >= ndim)
            snprintf(why, size, "the axes attribute names axis %lld of a %d-D array",
                     (long long)a, ndim);
        else if (seen[a]++)
            snprintf(why, size, "the axes attribute names axis %lld twice", (long long)a);
        has_real = has_real || a == rec->real_axis;
    }
    if (!why[0] && n > 0 && !has_real)
        snprintf(why, size, "the real_axis attribute %lld is not one of the axes attribute's",
                 (long long)rec->real_axis);
    if (why[0])
        rec->naxes = 0;
}

/* The "box_size" attribute (fftshard-mkdata's, a result of fftshard's with
 * --box-size, a simulation's): 1 to FS_LAYOUT_MAX_DIMS positive finite
 * numbers, whoever wrote it; box_n -1 with the reason otherwise. */
static fs_status read_box_size(hid_t did, const char *label, fs_input_info *info)
{
    int found;
    attr_handle a;
    fs_status ret = attr_open(did, "box_size", label, &found, &a);
    if (ret != FS_OK || !found)
        return ret;
    char *why = info->box_bad;
    size_t size = sizeof info->box_bad;
    info->box_n = -1;
    if (a.cls != H5T_INTEGER && a.cls != H5T_FLOAT)
        snprintf(why, size, "the box_size attribute is %s, not lengths", attr_kind(&a));
    else if (a.count < 1 || a.count > FS_LAYOUT_MAX_DIMS)
        snprintf(why, size, "the box_size attribute holds %lld values, not 1 to %d lengths",
                 (long long)a.count, FS_LAYOUT_MAX_DIMS);
    else if (H5Aread(a.aid, H5T_NATIVE_DOUBLE, info->box_size) < 0)
        ret = fs_h5_fail(FS_ERR_INPUT, "%s: cannot read the box_size attribute", label);
    else
        info->box_n = (int)a.count;
    for (int i = 0; ret == FS_OK && i < info->box_n; i++)
        if (!(info->box_size[i] > 0 && info->box_size[i] < 1e300)) {
            snprintf(why, size, "the box_size attribute holds %g, not a positive length",
                     info->box_size[i]);
            info->box_n = -1;
        }
    return fs_h5_close_ids(ret, label, 3, a.aty, a.asp, a.aid);
}

/* What the inverse gives back besides the input, as a forward run of
 * fftshard recorded it: its windows, and its input's shape before the zero
 * padding. Only said (a note), so anything unusable is left out. */
static fs_status read_domain(hid_t did, const char *label, fs_recorded *rec)
{
    char form[16] = "", why[FS_RECORDED_WHY];
    long long a[FS_LAYOUT_MAX_DIMS], b[FS_LAYOUT_MAX_DIMS];
    int na = -1, nb = -1;
    fs_status ret = read_text(did, "window", label, rec->window, sizeof rec->window, NULL, 0);
    if (ret == FS_OK)
        ret = read_text(did, "window_form", label, form, sizeof form, NULL, 0);
    rec->window_sym = strcmp(form, "symmetric") == 0;
    if (ret == FS_OK)
        ret = read_numbers(did, "input_shape", label, FS_LAYOUT_MAX_DIMS, a, &na, why,
                           sizeof why);
    if (ret == FS_OK)
        ret = read_numbers(did, "padded_shape", label, FS_LAYOUT_MAX_DIMS, b, &nb, why,
                           sizeof why);
    if (ret != FS_OK || na < 1 || na != nb)
        return ret;
    rec->nshape = na;
    for (int k = 0; k < na; k++) {
        rec->input_shape[k] = a[k];
        rec->padded_shape[k] = b[k];
    }
    return FS_OK;
}

/* What a forward run recorded for the inverse. A --real run's "last_size"
 * (the real length) counts whoever wrote it; the rest only on a forward
 * result of fftshard. Values fftshard cannot have written leave their
 * reason in the *_bad fields. */
fs_status fs_h5_read_recorded(hid_t did, const char *label, fs_input_info *info)
{
    fs_recorded *rec = &info->recorded;
    char version[64], direction[16], axes_why[FS_RECORDED_WHY], why[FS_RECORDED_WHY];
    long long v[FS_LAYOUT_MAX_DIMS];
    int n = -1, naxes = -1;
    rec->real_axis = -1;
    fs_status ret = read_box_size(did, label, info);
    if (ret == FS_OK)
        ret = read_numbers(did, "last_size", label, 1, v, &n, info->last_size_bad,
                           sizeof info->last_size_bad);
    if (ret == FS_OK && n == 1 && v[0] > 0)
        info->last_size_attr = v[0];
    else if (ret == FS_OK && n == 1)
        snprintf(info->last_size_bad, sizeof info->last_size_bad,
                 "the last_size attribute is %lld; a length is 1 or more", v[0]);
    if (ret == FS_OK)
        ret = read_text(did, "fftshard_version", label, version, sizeof version, NULL, 0);
    if (ret == FS_OK)
        ret = read_text(did, "direction", label, direction, sizeof direction, NULL, 0);
    rec->forward = ret == FS_OK && version[0] && strcmp(direction, "forward") == 0;
    if (ret != FS_OK || !rec->forward)
        return ret;
    ret = read_text(did, "transform", label, rec->transform, sizeof rec->transform,
                    rec->transform_bad, sizeof rec->transform_bad);
    if (ret == FS_OK && !rec->transform_bad[0] && strcmp(rec->transform, "c2c") != 0 &&
        strcmp(rec->transform, "r2c") != 0)
        snprintf(rec->transform_bad, sizeof rec->transform_bad,
                 "the transform attribute is '%s', not c2c or r2c", rec->transform);
    if (ret == FS_OK)
        ret = read_text(did, "norm", label, rec->norm, sizeof rec->norm, rec->norm_bad,
                        sizeof rec->norm_bad);
    if (ret == FS_OK && !rec->norm_bad[0] && strcmp(rec->norm, "backward") != 0 &&
        strcmp(rec->norm, "ortho") != 0 && strcmp(rec->norm, "forward") != 0)
        snprintf(rec->norm_bad, sizeof rec->norm_bad,
                 "the norm attribute is '%s', not backward, ortho or forward", rec->norm);
    if (ret == FS_OK)
        ret = read_numbers(did, "axes", label, FS_LAYOUT_MAX_DIMS, v, &naxes, axes_why,
                           sizeof axes_why);
    for (int k = 0; ret == FS_OK && k < naxes; k++)
        rec->axes[k] = v[k];
    rec->naxes = naxes > 0 ? naxes : 0;
    if (ret == FS_OK)
        ret = read_numbers(did, "real_axis", label, 1, v, &n, why, sizeof why);
    if (ret == FS_OK && n == 1 && v[0] >= 0)
        rec->real_axis = v[0];
    else if (ret == FS_OK && n == 1)
        snprintf(why, sizeof why, "the real_axis attribute is %lld, not an axis", v[0]);
    if (ret == FS_OK && why[0] && !axes_why[0])
        snprintf(axes_why, sizeof axes_why, "%s", why);
    if (ret == FS_OK && (naxes >= 0 || axes_why[0]))
        judge_axes(rec, info->ndim, axes_why, rec->naxes);
    return ret == FS_OK ? read_domain(did, label, rec) : ret;
}
