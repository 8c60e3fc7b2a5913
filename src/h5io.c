/* h5io: see h5io.h. */
#include "config.h"

#include "h5io.h"

#include <errno.h>
#include <hdf5.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"

#if H5_VERSION_GE(1, 12, 0)
typedef H5O_info2_t fs_h5_oinfo;
#define fs_h5_visit(obj, op, data) H5Ovisit3(obj, H5_INDEX_NAME, H5_ITER_INC, op, data, H5O_INFO_BASIC)
#define fs_h5_info_by_name(loc, name, info) H5Oget_info_by_name3(loc, name, info, H5O_INFO_BASIC, H5P_DEFAULT)
#else
typedef H5O_info_t fs_h5_oinfo;
#define fs_h5_visit(obj, op, data) H5Ovisit2(obj, H5_INDEX_NAME, H5_ITER_INC, op, data, H5O_INFO_BASIC)
#define fs_h5_info_by_name(loc, name, info) H5Oget_info_by_name2(loc, name, info, H5O_INFO_BASIC, H5P_DEFAULT)
#endif

void fs_h5_init(void)
{
    H5open();
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

/* Close the open ones among n handles (files, datasets, dataspaces,
 * datatypes, attributes, property lists) on a cleanup path, where a failure
 * to close changes nothing. Negative handles are skipped. */
static void close_handles(int n, ...)
{
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        hid_t id = va_arg(ap, hid_t);
        if (id < 0)
            continue;
        switch (H5Iget_type(id)) {
        case H5I_FILE: H5Fclose(id); break;
        case H5I_DATASET: H5Dclose(id); break;
        case H5I_DATASPACE: H5Sclose(id); break;
        case H5I_DATATYPE: H5Tclose(id); break;
        case H5I_ATTR: H5Aclose(id); break;
        case H5I_GENPROP_LST: H5Pclose(id); break;
        default: break;
        }
    }
    va_end(ap);
}

/* The innermost entry of HDF5's error stack: the concrete reason (a lock
 * held by another process, a truncated file, ENOSPC) in HDF5's words. */
static herr_t innermost_error(unsigned n, const H5E_error2_t *err, void *data)
{
    char *reason = data;
    if (n == 0 && err->desc) {
        snprintf(reason, 256, "%s", err->desc);
        /* MPI error strings run over lines; a message is one line. */
        for (char *c = reason; *c; c++)
            if (*c == '\n' || *c == '\r' || *c == '\t')
                *c = ' ';
    }
    return 0;
}

/* An HDF5 call failed: record our message with HDF5's innermost reason;
 * with --verbose show HDF5's whole stack. */
static fs_status h5_fail(fs_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static fs_status h5_fail(fs_status status, const char *fmt, ...)
{
    char message[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    char reason[256] = "";
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_error, reason);
    if (fs_error_verbose() && fs_error_status() == FS_OK) {
        fprintf(stderr, "%s: HDF5 error stack for: %s\n", fs_error_program(), message);
        H5Eprint2(H5E_DEFAULT, stderr);
    }
    if (reason[0])
        return fs_error_set(status, "%s (HDF5: %s)", message, reason);
    return fs_error_set(status, "%s", message);
}

/* ------------------------------------------------------------------ probe */

typedef struct dataset_list {
    char names[16][FS_PATH_MAX];
    int count;     /* all datasets, even those not stored in names */
} dataset_list;

static herr_t collect_dataset(hid_t obj, const char *name, const fs_h5_oinfo *info, void *data)
{
    dataset_list *list = data;
    if (info->type == H5O_TYPE_DATASET) {
        if (list->count < (int)(sizeof list->names / sizeof list->names[0]))
            snprintf(list->names[list->count], FS_PATH_MAX, "/%s", name);
        list->count++;
    }
    return 0;
}

static void format_dataset_list(const dataset_list *list, char *buf, size_t size)
{
    size_t used = 0;
    int shown = list->count < 16 ? list->count : 16;
    buf[0] = '\0';
    for (int i = 0; i < shown && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", list->names[i]);
    if (list->count > shown && used < size)
        snprintf(buf + used, size - used, ", ... (%d in all)", list->count);
}

/* Name the element type, and say whether fftshard can read it. */
static fs_status classify_type(hid_t type, fs_input_info *info)
{
    H5T_class_t cls = H5Tget_class(type);
    size_t size = H5Tget_size(type);
    switch (cls) {
    case H5T_FLOAT:
        snprintf(info->type_name, sizeof info->type_name, "float%zu", 8 * size);
        if (size == 4 || size == 8) {
            info->dtype = size == 4 ? FS_DTYPE_FLOAT32 : FS_DTYPE_FLOAT64;
            return FS_OK;
        }
        break;
    case H5T_INTEGER:
        snprintf(info->type_name, sizeof info->type_name, "%sint%zu",
                 H5Tget_sign(type) == H5T_SGN_NONE ? "u" : "", 8 * size);
        info->dtype = FS_DTYPE_INTEGER;
        return FS_OK;
    case H5T_COMPOUND: {
        int n = H5Tget_nmembers(type);
        int ok = n == 2;
        size_t used = (size_t)snprintf(info->type_name, sizeof info->type_name, "compound {");
        for (int i = 0; i < n && used < sizeof info->type_name; i++) {
            char *name = H5Tget_member_name(type, (unsigned)i);
            hid_t mt = H5Tget_member_type(type, (unsigned)i);
            const char *want = i == 0 ? "r" : "i";
            ok = ok && name && strcmp(name, want) == 0 && mt >= 0 && H5Tget_class(mt) == H5T_FLOAT &&
                 (H5Tget_size(mt) == 4 || H5Tget_size(mt) == 8) && H5Tget_size(mt) * 2 <= size;
            if (i == 1 && ok) {
                hid_t m0 = H5Tget_member_type(type, 0);
                ok = H5Tget_size(m0) == H5Tget_size(mt);
                H5Tclose(m0);
            }
            used += (size_t)snprintf(info->type_name + used, sizeof info->type_name - used, "%s%s",
                                     i ? ", " : "", name ? name : "?");
            if (mt >= 0)
                H5Tclose(mt);
            H5free_memory(name);
        }
        if (used < sizeof info->type_name)
            snprintf(info->type_name + used, sizeof info->type_name - used, "}");
        if (ok) {
            hid_t mt = H5Tget_member_type(type, 0);
            int single = H5Tget_size(mt) == 4;
            H5Tclose(mt);
            info->dtype = single ? FS_DTYPE_COMPLEX64 : FS_DTYPE_COMPLEX128;
            snprintf(info->type_name, sizeof info->type_name, "%s", single ? "complex64" : "complex128");
            return FS_OK;
        }
        return fs_error_set(FS_ERR_INPUT,
                            "unsupported element type %s (complex data is a compound {r, i} of "
                            "two float32 or two float64)",
                            info->type_name);
    }
    case H5T_STRING: snprintf(info->type_name, sizeof info->type_name, "string"); break;
    case H5T_ENUM: snprintf(info->type_name, sizeof info->type_name, "enum"); break;
    case H5T_BITFIELD: snprintf(info->type_name, sizeof info->type_name, "bitfield"); break;
    case H5T_OPAQUE: snprintf(info->type_name, sizeof info->type_name, "opaque"); break;
    case H5T_REFERENCE: snprintf(info->type_name, sizeof info->type_name, "reference"); break;
    case H5T_ARRAY: snprintf(info->type_name, sizeof info->type_name, "array"); break;
    case H5T_VLEN: snprintf(info->type_name, sizeof info->type_name, "variable-length"); break;
    case H5T_TIME: snprintf(info->type_name, sizeof info->type_name, "time"); break;
    default: snprintf(info->type_name, sizeof info->type_name, "unknown"); break;
    }
    return fs_error_set(FS_ERR_INPUT,
                        "unsupported element type %s (expected float32, float64, complex64, "
                        "complex128 or an integer type)",
                        info->type_name);
}

void fs_strings_free(char **names, int64_t n)
{
    for (int64_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

void fs_shard_set_free(fs_shard_set *set)
{
    fs_strings_free(set->files, set->n);
    free(set->boxes);
    memset(set, 0, sizeof *set);
}

/* Mapping i's source file or dataset name (malloc'ed), or NULL. */
static char *virtual_name(hid_t dcpl, size_t i, int dataset)
{
    ssize_t len = dataset ? H5Pget_virtual_dsetname(dcpl, i, NULL, 0)
                          : H5Pget_virtual_filename(dcpl, i, NULL, 0);
    char *name = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (name && (dataset ? H5Pget_virtual_dsetname(dcpl, i, name, (size_t)len + 1)
                         : H5Pget_virtual_filename(dcpl, i, name, (size_t)len + 1)) < 0) {
        free(name);
        name = NULL;
    }
    return name;
}

/* Where HDF5 finds a virtual dataset's source: "." is the file itself; a
 * relative name is looked for under $HDF5_VDS_PREFIX, beside the virtual
 * dataset's file, then from the working directory. */
static void resolve_source(const char *vds_file, const char *name, char *path, size_t size)
{
    struct stat st;
    if (strcmp(name, ".") == 0 || name[0] == '/') {
        snprintf(path, size, "%s", strcmp(name, ".") == 0 ? vds_file : name);
        return;
    }
    const char *prefix = getenv("HDF5_VDS_PREFIX");
    if (prefix && prefix[0]) {
        snprintf(path, size, "%s/%s", prefix, name);
        if (stat(path, &st) == 0)
            return;
    }
    char *copy = strdup(vds_file);
    snprintf(path, size, "%s/%s", copy ? dirname(copy) : ".", name);
    free(copy);
    if (stat(path, &st) != 0)
        snprintf(path, size, "%s", name);
}

/* A virtual dataset reads the fill value where a source is missing; a
 * result computed from that would be silently wrong. Check that every
 * source file and dataset exists, has a type fftshard reads and is large
 * enough for its mapping. */
static fs_status check_virtual_sources(const char *file, const char *dataset, hid_t dcpl)
{
    size_t count = 0;
    if (H5Pget_virtual_count(dcpl, &count) < 0)
        return h5_fail(FS_ERR_INPUT, "%s:%s: cannot read the virtual dataset's mappings", file, dataset);
    fs_status ret = FS_OK;
    for (size_t i = 0; i < count && ret == FS_OK; i++) {
        char *name = virtual_name(dcpl, i, 0), *dset = virtual_name(dcpl, i, 1);
        hid_t fid = H5I_INVALID_HID, did = H5I_INVALID_HID, tid = H5I_INVALID_HID,
              sid = H5I_INVALID_HID, sel = H5I_INVALID_HID;
        char path[2 * FS_PATH_MAX];
        struct stat st;
        if (!name || !dset) {
            ret = h5_fail(FS_ERR_INPUT, "%s:%s: cannot read mapping %zu of the virtual dataset",
                          file, dataset, i);
            goto next;
        }
        if (strchr(name, '%') || strchr(dset, '%'))
            goto next; /* printf-named sources of an unlimited dataset: HDF5 finds them */
        resolve_source(file, name, path, sizeof path);
        int found = stat(path, &st) == 0;
        if (!found || S_ISDIR(st.st_mode)) {
            ret = fs_error_set(FS_ERR_INPUT, "%s:%s: source %s of the virtual dataset: %s", file,
                               dataset, name, found ? "is a directory" : "no such file");
            goto next;
        }
        fid = H5Fis_hdf5(path) > 0 ? H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT) : H5I_INVALID_HID;
        if (fid < 0) {
            ret = fs_error_set(FS_ERR_INPUT, "%s:%s: source %s of the virtual dataset: not a readable "
                               "HDF5 file", file, dataset, name);
            goto next;
        }
        did = H5Dopen2(fid, dset, H5P_DEFAULT);
        if (did < 0) {
            ret = fs_error_set(FS_ERR_INPUT, "%s:%s: source %s of the virtual dataset has no dataset %s",
                               file, dataset, name, dset);
            goto next;
        }
        fs_input_info src;
        memset(&src, 0, sizeof src);
        tid = H5Dget_type(did);
        sid = H5Dget_space(did);
        if (tid < 0 || classify_type(tid, &src) != FS_OK) {
            fs_error_clear();
            ret = fs_error_set(FS_ERR_INPUT, "%s:%s: source %s:%s of the virtual dataset: "
                               "unsupported element type %s", file, dataset, name, dset,
                               src.type_name[0] ? src.type_name : "?");
            goto next;
        }
        sel = H5Pget_virtual_srcspace(dcpl, i);
        int nd = sid >= 0 ? H5Sget_simple_extent_ndims(sid) : -1;
        hsize_t dims[H5S_MAX_RANK], lo[H5S_MAX_RANK], hi[H5S_MAX_RANK];
        if (nd < 0 || sel < 0) {
            ret = h5_fail(FS_ERR_INPUT, "%s:%s: source %s:%s of the virtual dataset: cannot read its "
                          "shape", file, dataset, name, dset);
            goto next;
        }
        H5Sget_simple_extent_dims(sid, dims, NULL);
        int64_t d64[H5S_MAX_RANK];
        hsize_t have = 1;
        for (int k = 0; k < nd; k++) {
            d64[k] = (int64_t)dims[k];
            have *= dims[k];
        }
        char shape[256];
        fs_format_shape(nd, d64, shape, sizeof shape);
        /* "All" of a source maps as many elements as the virtual side
         * selects; a hyperslab of it must lie within its shape. */
        hid_t vsel = H5Pget_virtual_vspace(dcpl, i);
        hssize_t need = vsel >= 0 ? H5Sget_select_npoints(vsel) : -1;
        if (vsel >= 0)
            H5Sclose(vsel);
        if (H5Sget_select_type(sel) == H5S_SEL_ALL) {
            if (need >= 0 && (hsize_t)need != have)
                ret = fs_error_set(FS_ERR_INPUT, "%s:%s: source %s:%s of the virtual dataset has shape "
                                   "%s (%llu elements), its mapping needs %lld", file, dataset, name,
                                   dset, shape, (unsigned long long)have, (long long)need);
        } else if (H5Sget_simple_extent_ndims(sel) == nd && H5Sget_select_npoints(sel) > 0 &&
                   H5Sget_select_bounds(sel, lo, hi) >= 0) {
            for (int k = 0; k < nd && ret == FS_OK; k++)
                if (hi[k] >= dims[k])
                    ret = fs_error_set(FS_ERR_INPUT, "%s:%s: source %s:%s of the virtual dataset has "
                                       "shape %s, too small for its mapping (axis %d reaches %llu)",
                                       file, dataset, name, dset, shape, k,
                                       (unsigned long long)hi[k] + 1);
        }
    next:
        close_handles(5, sel, sid, tid, did, fid);
        H5Eclear2(H5E_DEFAULT);
        free(name);
        free(dset);
    }
    return ret;
}

/* A shard's "offset" attribute: its start in the whole array, one integer
 * (along axis 0) or one per axis. has_offset -1: present but unusable. */
static void read_offset(hid_t did, int ndim, fs_input_info *info)
{
    if (H5Aexists(did, "offset") <= 0)
        return;
    hid_t aid = H5Aopen(did, "offset", H5P_DEFAULT);
    hid_t asp = aid >= 0 ? H5Aget_space(aid) : H5I_INVALID_HID;
    hid_t aty = aid >= 0 ? H5Aget_type(aid) : H5I_INVALID_HID;
    hssize_t n = asp >= 0 ? H5Sget_simple_extent_npoints(asp) : -1;
    long long v[FS_LAYOUT_MAX_DIMS] = {0};
    info->has_offset = -1;
    if (aty >= 0 && H5Tget_class(aty) == H5T_INTEGER && (n == 1 || n == ndim) &&
        H5Aread(aid, H5T_NATIVE_LLONG, v) >= 0) {
        info->has_offset = 1;
        for (int k = 0; k < ndim; k++) {
            info->offset[k] = v[k];
            if (v[k] < 0)
                info->has_offset = -1;
        }
    }
    close_handles(3, aty, asp, aid);
    H5Eclear2(H5E_DEFAULT);
}

fs_status fs_h5_probe(const char *file, const char *dataset, fs_input_info *info)
{
    fs_status ret = FS_OK;
    hid_t fid = H5I_INVALID_HID, did = H5I_INVALID_HID, tid = H5I_INVALID_HID,
          sid = H5I_INVALID_HID;
    memset(info, 0, sizeof *info);

    struct stat st;
    if (stat(file, &st) != 0) {
        ret = fs_error_set(FS_ERR_INPUT, "%s: %s", file,
                           errno == ENOENT ? "no such file" : strerror(errno));
        goto done;
    }
    if (S_ISDIR(st.st_mode)) {
        ret = fs_error_set(FS_ERR_INPUT, "%s: is a directory, not an HDF5 file", file);
        goto done;
    }
    /* Opening a FIFO would wait for a writer forever. */
    if (!S_ISREG(st.st_mode)) {
        ret = fs_error_set(FS_ERR_INPUT, "%s: not a regular file (a FIFO, device or socket)", file);
        goto done;
    }
    FILE *probe = fopen(file, "rb");
    if (!probe) {
        ret = fs_error_set(FS_ERR_INPUT, "%s: %s", file, strerror(errno));
        goto done;
    }
    fclose(probe);
    if (H5Fis_hdf5(file) <= 0) {
        ret = fs_error_set(FS_ERR_INPUT, "%s: not an HDF5 file%s", file,
                           st.st_size == 0 ? " (it is empty)" : "");
        goto done;
    }
    fid = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (fid < 0) {
        ret = h5_fail(FS_ERR_INPUT, "%s: HDF5 cannot open it", file);
        goto done;
    }

    if (dataset) {
        fs_h5_oinfo oinfo;
        /* H5Oget_info_by_name fails for a missing path at any depth. */
        if (fs_h5_info_by_name(fid, dataset, &oinfo) < 0) {
            dataset_list list = {.count = 0};
            char names[1024];
            fs_h5_visit(fid, collect_dataset, &list);
            format_dataset_list(&list, names, sizeof names);
            ret = fs_error_set(FS_ERR_INPUT, "%s: no dataset %s (datasets in the file: %s)", file,
                               dataset, list.count ? names : "none");
            goto done;
        }
        if (oinfo.type != H5O_TYPE_DATASET) {
            ret = fs_error_set(FS_ERR_INPUT, "%s:%s: is a group, not a dataset", file, dataset);
            goto done;
        }
        snprintf(info->dataset, sizeof info->dataset, "%s%s", dataset[0] == '/' ? "" : "/", dataset);
    } else {
        dataset_list list = {.count = 0};
        if (fs_h5_visit(fid, collect_dataset, &list) < 0) {
            ret = h5_fail(FS_ERR_INPUT, "%s: cannot list the objects in the file", file);
            goto done;
        }
        if (list.count == 0) {
            ret = fs_error_set(FS_ERR_INPUT, "%s: the file holds no dataset", file);
            goto done;
        }
        if (list.count > 1) {
            char names[1024];
            format_dataset_list(&list, names, sizeof names);
            ret = fs_error_set(FS_ERR_INPUT,
                               "%s: the file holds %d datasets; name one as %s:/path (%s)", file,
                               list.count, file, names);
            goto done;
        }
        snprintf(info->dataset, sizeof info->dataset, "%s", list.names[0]);
    }

    did = H5Dopen2(fid, info->dataset, H5P_DEFAULT);
    if (did < 0) {
        ret = h5_fail(FS_ERR_INPUT, "%s:%s: cannot open the dataset", file, info->dataset);
        goto done;
    }
    tid = H5Dget_type(did);
    sid = H5Dget_space(did);
    if (tid < 0 || sid < 0) {
        ret = h5_fail(FS_ERR_INPUT, "%s:%s: cannot read the dataset's type or shape", file,
                      info->dataset);
        goto done;
    }
    if (classify_type(tid, info) != FS_OK) {
        /* Put the file and dataset in front of the type's message. */
        char located[2048];
        snprintf(located, sizeof located, "%s:%s: %s", file, info->dataset, fs_error_message());
        fs_error_clear();
        ret = fs_error_set(FS_ERR_INPUT, "%s", located);
        goto done;
    }
    H5S_class_t space_class = H5Sget_simple_extent_type(sid);
    if (space_class != H5S_SIMPLE) {
        ret = fs_error_set(FS_ERR_INPUT, "%s:%s: %s dataset: nothing to transform", file,
                           info->dataset, space_class == H5S_SCALAR ? "a scalar" : "an empty (null)");
        goto done;
    }
    int ndim = H5Sget_simple_extent_ndims(sid);
    if (ndim < 1 || ndim > FS_LAYOUT_MAX_DIMS) {
        ret = fs_error_set(FS_ERR_INPUT, "%s:%s: %d dimensions; fftshard handles 1 to %d", file,
                           info->dataset, ndim, FS_LAYOUT_MAX_DIMS);
        goto done;
    }
    hsize_t dims[FS_LAYOUT_MAX_DIMS];
    H5Sget_simple_extent_dims(sid, dims, NULL);
    /* A forward --real run records the real length for the inverse. */
    if (H5Aexists(did, "last_size") > 0) {
        hid_t aid = H5Aopen(did, "last_size", H5P_DEFAULT);
        hid_t asp = aid >= 0 ? H5Aget_space(aid) : H5I_INVALID_HID;
        long long v = 0;
        if (asp >= 0 && H5Sget_simple_extent_npoints(asp) == 1 &&
            H5Aread(aid, H5T_NATIVE_LLONG, &v) >= 0 && v > 0)
            info->last_size_attr = v;
        close_handles(2, asp, aid);
        H5Eclear2(H5E_DEFAULT);
    }
    info->ndim = ndim;
    for (int k = 0; k < ndim; k++)
        info->shape[k] = (int64_t)dims[k];
    read_offset(did, ndim, info);
    hid_t dcpl = H5Dget_create_plist(did);
    if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_VIRTUAL) {
        info->is_virtual = 1;
        ret = check_virtual_sources(file, info->dataset, dcpl);
    }
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (ret != FS_OK)
        goto done;
    for (int k = 0; k < ndim; k++) {
        if (dims[k] == 0) {
            char shape[256];
            fs_format_shape(ndim, info->shape, shape, sizeof shape);
            ret = fs_error_set(FS_ERR_INPUT, "%s:%s: axis %d has length 0 (shape %s): nothing to transform",
                               file, info->dataset, k, shape);
            goto done;
        }
    }
    if (fs_shape_elems(ndim, info->shape) < 0) {
        char shape[256];
        fs_format_shape(ndim, info->shape, shape, sizeof shape);
        ret = fs_error_set(FS_ERR_INPUT, "%s:%s: shape %s is too large (more than %s elements)", file,
                           info->dataset, shape, FS_MAX_ELEMS_TEXT);
        goto done;
    }
done:
    close_handles(4, sid, tid, did, fid);
    return ret;
}

/* ------------------------------------------------------------------ shared pieces */

/* The HDF5 type of an element: native in memory, little-endian IEEE in files.
 * Complex is h5py's compound {r, i}. */
static hid_t element_type(fs_dtype t, int native)
{
    int single = t == FS_DTYPE_FLOAT32 || t == FS_DTYPE_COMPLEX64;
    hid_t scalar = native ? (single ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE)
                          : (single ? H5T_IEEE_F32LE : H5T_IEEE_F64LE);
    if (t == FS_DTYPE_FLOAT32 || t == FS_DTYPE_FLOAT64 || t == FS_DTYPE_INTEGER)
        return H5Tcopy(scalar);
    size_t half = single ? sizeof(float) : sizeof(double);
    hid_t c = H5Tcreate(H5T_COMPOUND, 2 * half);
    if (c < 0)
        return c;
    if (H5Tinsert(c, "r", 0, scalar) < 0 || H5Tinsert(c, "i", half, scalar) < 0) {
        H5Tclose(c);
        return H5I_INVALID_HID;
    }
    return c;
}

static hid_t mpio_fapl(MPI_Comm comm)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0)
        return fapl;
    if (H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL) < 0) {
        H5Pclose(fapl);
        return H5I_INVALID_HID;
    }
    /* Metadata reads by one rank and broadcast, not by every rank. */
    H5Pset_all_coll_metadata_ops(fapl, 1);
    H5Pset_coll_metadata_write(fapl, 1);
    return fapl;
}

static hid_t collective_dxpl(void)
{
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (dxpl >= 0 && H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE) < 0) {
        H5Pclose(dxpl);
        return H5I_INVALID_HID;
    }
    return dxpl;
}

/* ------------------------------------------------------------------ read */

fs_io_map fs_io_map_plain(const fs_box *box, fs_dtype mem_type)
{
    fs_io_map m;
    memset(&m, 0, sizeof m);
    m.file_box = *box;
    m.mem_type = mem_type;
    m.mem_stride_last = 1;
    for (int k = 0; k < box->ndim; k++)
        m.mem_dims[k] = box->count[k];
    return m;
}

/* The pieces of a map for one collective call each: rows of the box's first
 * axis. Every rank makes the same number of calls (the largest count). */
typedef struct io_pieces {
    int64_t rows_per_call;
    int ncalls;
} io_pieces;

static fs_status plan_pieces(MPI_Comm comm, const fs_io_map *map, io_pieces *pc)
{
    const fs_box *box = &map->file_box;
    int64_t n = fs_box_elems(box);
    int64_t row_bytes = n > 0 ? n / box->count[0] * (int64_t)fs_dtype_bytes(map->mem_type) : 0;
    pc->rows_per_call = row_bytes > 0 ? FS_IO_CALL_BYTES / row_bytes : 1;
    if (pc->rows_per_call < 1)
        pc->rows_per_call = 1;
    int local = n > 0 ? (int)((box->count[0] + pc->rows_per_call - 1) / pc->rows_per_call) : 0;
    if (MPI_Allreduce(&local, &pc->ncalls, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Allreduce failed");
    return FS_OK;
}

/* Select piece c of the map in the file space and the memory space (both
 * `none` past this rank's end). Returns the elements selected, or -1. */
static int64_t select_piece(const fs_io_map *map, const io_pieces *pc, int c, hid_t fspace,
                            hid_t mspace)
{
    const fs_box *box = &map->file_box;
    int nd = box->ndim;
    int64_t first = (int64_t)c * pc->rows_per_call;
    if (fs_box_elems(box) == 0 || first >= box->count[0])
        return H5Sselect_none(fspace) < 0 || H5Sselect_none(mspace) < 0 ? -1 : 0;
    int64_t rows = box->count[0] - first < pc->rows_per_call ? box->count[0] - first : pc->rows_per_call;
    hsize_t mstart[FS_LAYOUT_MAX_DIMS], mstride[FS_LAYOUT_MAX_DIMS], mcount[FS_LAYOUT_MAX_DIMS];
    for (int k = 0; k < nd; k++) {
        mstart[k] = (hsize_t)map->mem_start[k];
        mstride[k] = 1;
        mcount[k] = (hsize_t)box->count[k];
    }
    mstart[0] += (hsize_t)first;
    mcount[0] = (hsize_t)rows;
    mstride[nd - 1] = (hsize_t)map->mem_stride_last;
    if (map->fold_inner <= 0) {
        hsize_t fstart[FS_LAYOUT_MAX_DIMS], fcount[FS_LAYOUT_MAX_DIMS];
        for (int k = 0; k < nd; k++) {
            fstart[k] = (hsize_t)box->start[k];
            fcount[k] = (hsize_t)box->count[k];
        }
        fstart[0] += (hsize_t)first;
        fcount[0] = (hsize_t)rows;
        if (H5Sselect_hyperslab(fspace, H5S_SELECT_SET, fstart, NULL, fcount, NULL) < 0 ||
            H5Sselect_hyperslab(mspace, H5S_SELECT_SET, mstart, mstride, mcount, NULL) < 0)
            return -1;
        return (int64_t)rows * (fs_box_elems(box) / box->count[0]);
    }
    /* A 1-D file seen as (rows, inner): rows of `cols` elements `inner` apart,
     * the positions from the limit on left out. */
    int64_t inner = map->fold_inner, r0 = box->start[0] + first, c0 = box->start[1],
            cols = box->count[1];
    int64_t limit = map->fold_limit > 0 ? map->fold_limit : INT64_MAX;
    int64_t full = 0; /* rows entirely below the limit */
    while (full < rows && (r0 + full) * inner + c0 + cols <= limit)
        full++;
    int64_t partial = 0; /* elements of the next row below the limit */
    if (full < rows && (r0 + full) * inner + c0 < limit)
        partial = limit - ((r0 + full) * inner + c0);
    herr_t rc = H5Sselect_none(fspace);
    if (rc >= 0)
        rc = H5Sselect_none(mspace);
    if (rc >= 0 && full > 0) {
        hsize_t fs = (hsize_t)(r0 * inner + c0), fst = (hsize_t)inner, fc = (hsize_t)full,
                fb = (hsize_t)cols;
        hsize_t mc[2] = {(hsize_t)full, mcount[1]};
        rc = H5Sselect_hyperslab(fspace, H5S_SELECT_OR, &fs, &fst, &fc, &fb);
        if (rc >= 0)
            rc = H5Sselect_hyperslab(mspace, H5S_SELECT_OR, mstart, mstride, mc, NULL);
    }
    if (rc >= 0 && partial > 0) {
        hsize_t fs = (hsize_t)((r0 + full) * inner + c0), fc = (hsize_t)partial;
        hsize_t ms[2] = {mstart[0] + (hsize_t)full, mstart[1]}, mc[2] = {1, (hsize_t)partial};
        rc = H5Sselect_hyperslab(fspace, H5S_SELECT_OR, &fs, NULL, &fc, NULL);
        if (rc >= 0)
            rc = H5Sselect_hyperslab(mspace, H5S_SELECT_OR, ms, mstride, mc, NULL);
    }
    return rc < 0 ? -1 : full * cols + partial;
}

static hid_t memory_space(const fs_io_map *map)
{
    hsize_t dims[FS_LAYOUT_MAX_DIMS];
    int nd = map->file_box.ndim;
    for (int k = 0; k < nd; k++)
        dims[k] = map->mem_dims[k] > 0 ? (hsize_t)map->mem_dims[k] : 1;
    return H5Screate_simple(nd, dims, NULL);
}

/* Map the box sets->boxes[i] of a virtual dataset of the given shape onto
 * the whole dataset `dataset` of sets->files[i], for every i. */
static herr_t set_mappings(hid_t dcpl, int ndim, const int64_t *shape, const fs_shard_set *set,
                           const char *dataset)
{
    hsize_t dims[FS_LAYOUT_MAX_DIMS];
    for (int k = 0; k < ndim; k++)
        dims[k] = (hsize_t)shape[k];
    hid_t space = H5Screate_simple(ndim, dims, NULL);
    herr_t rc = space < 0 ? -1 : 0;
    for (int64_t i = 0; i < set->n && rc >= 0; i++) {
        const fs_box *b = &set->boxes[i];
        hsize_t start[FS_LAYOUT_MAX_DIMS], count[FS_LAYOUT_MAX_DIMS];
        for (int k = 0; k < ndim; k++) {
            start[k] = (hsize_t)b->start[k];
            count[k] = (hsize_t)b->count[k];
        }
        hid_t src = H5Screate_simple(ndim, count, NULL);
        rc = src < 0 ? -1 : H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
        if (rc >= 0)
            rc = H5Pset_virtual(dcpl, space, set->files[i], dataset, src);
        if (src >= 0)
            H5Sclose(src);
    }
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

/* The shards as one array: a virtual dataset mapping each shard's whole
 * dataset onto its box. It is written to a small temporary file and opened
 * read-only: HDF5 opens the sources with the virtual dataset's own access
 * mode, and a writable one would lock every shard exclusively (other ranks
 * would read fill values) and fail on read-only shards. The file is
 * unlinked as soon as it is open. */
static hid_t open_shards(const fs_input_info *info, const fs_shard_set *shards, hid_t *fid)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), space = H5I_INVALID_HID,
          type = element_type(info->dtype, 1), did = H5I_INVALID_HID;
    hsize_t dims[FS_LAYOUT_MAX_DIMS];
    int nd = info->ndim;
    for (int k = 0; k < nd; k++)
        dims[k] = (hsize_t)info->shape[k];
    *fid = H5I_INVALID_HID;
    const char *tmpdir = getenv("TMPDIR");
    char path[FS_PATH_MAX];
    snprintf(path, sizeof path, "%s/" FS_ATOMIC_TAG "shards-XXXXXX",
             tmpdir && tmpdir[0] ? tmpdir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        fs_error_set(FS_ERR_RUNTIME, "%s: cannot create the temporary file that maps the shards: %s",
                     path, strerror(errno));
        goto done;
    }
    close(fd);
    fs_atomic_register(path);
    if (dcpl < 0 || type < 0 || (space = H5Screate_simple(nd, dims, NULL)) < 0 ||
        set_mappings(dcpl, nd, info->shape, shards, info->dataset) < 0)
        goto done;
    *fid = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (*fid < 0)
        goto done;
    did = H5Dcreate2(*fid, "shards", type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (did >= 0)
        H5Dclose(did);
    herr_t closed = H5Fclose(*fid);
    *fid = H5I_INVALID_HID;
    did = H5I_INVALID_HID;
    if (closed < 0 || (*fid = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
        goto done;
    did = H5Dopen2(*fid, "shards", H5P_DEFAULT);
done:
    if (fd >= 0)
        fs_atomic_abort(path);
    close_handles(3, space, type, dcpl);
    return did;
}

fs_status fs_h5_read(MPI_Comm comm, const char *file, const fs_input_info *info,
                     const fs_shard_set *shards, const fs_io_map *map, void *data,
                     fs_io_progress progress, void *ctx)
{
    fs_status ret = FS_OK;
    hid_t fapl = H5I_INVALID_HID, fid = H5I_INVALID_HID, did = H5I_INVALID_HID,
          fspace = H5I_INVALID_HID, mspace = H5I_INVALID_HID, mtype = H5I_INVALID_HID,
          dxpl = H5I_INVALID_HID;
    io_pieces pc;
    double done = 0, eb = (double)fs_dtype_bytes(map->mem_type);
    /* Virtual datasets are read by each rank alone, with the default driver. */
    int independent = shards || info->is_virtual;

    if ((ret = plan_pieces(comm, map, &pc)) != FS_OK)
        return ret;
    fapl = independent ? H5Pcreate(H5P_FILE_ACCESS) : mpio_fapl(comm);
    /* Independent reads: each rank's hyperslab at once. ROMIO's collective
     * (two-phase) read of this MPICH took 198 s for the 1 GiB per rank of a
     * 512^3 input, where independent reads take 3 s. */
    dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (fapl < 0 || dxpl < 0) {
        ret = h5_fail(FS_ERR_RUNTIME, "cannot set up HDF5 access");
        goto done;
    }
    if (shards) {
        did = open_shards(info, shards, &fid);
        if (did < 0) {
            ret = h5_fail(FS_ERR_RUNTIME, "%s: cannot map the %lld shards onto one array", file,
                          (long long)shards->n);
            goto done;
        }
    } else {
        fid = H5Fopen(file, H5F_ACC_RDONLY, fapl);
        if (fid < 0) {
            ret = h5_fail(FS_ERR_INPUT, "%s: cannot open for %s reading", file,
                          independent ? "" : "parallel");
            goto done;
        }
        did = H5Dopen2(fid, info->dataset, H5P_DEFAULT);
    }
    fspace = did >= 0 ? H5Dget_space(did) : H5I_INVALID_HID;
    if (fspace < 0) {
        ret = h5_fail(FS_ERR_INPUT, "%s:%s: cannot open the dataset", file, info->dataset);
        goto done;
    }
    mtype = element_type(map->mem_type, 1);
    mspace = memory_space(map);
    if (mtype < 0 || mspace < 0) {
        ret = h5_fail(FS_ERR_RUNTIME, "cannot describe the input in memory");
        goto done;
    }
    for (int c = 0; c < pc.ncalls && ret == FS_OK; c++) {
        int64_t n = select_piece(map, &pc, c, fspace, mspace);
        if (n < 0)
            ret = h5_fail(FS_ERR_RUNTIME, "cannot select the input hyperslab");
        else if ((!independent || n > 0) && H5Dread(did, mtype, mspace, fspace, dxpl, data) < 0)
            ret = h5_fail(FS_ERR_RUNTIME, "%s:%s: read failed", file, info->dataset);
        done += (double)(n > 0 ? n : 0) * eb;
        if (progress && n > 0)
            progress(ctx, done);
    }
done:
    close_handles(4, mspace, mtype, fspace, did);
    if (fid >= 0 && H5Fclose(fid) < 0 && ret == FS_OK)
        ret = h5_fail(FS_ERR_RUNTIME, "%s: close failed", file);
    close_handles(2, dxpl, fapl);
    return ret;
}

fs_status fs_h5_virtual_files(const char *file, const char *dataset, char ***names, int64_t *n)
{
    *names = NULL;
    *n = 0;
    hid_t fid = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t did = fid >= 0 ? H5Dopen2(fid, dataset, H5P_DEFAULT) : H5I_INVALID_HID;
    hid_t dcpl = did >= 0 ? H5Dget_create_plist(did) : H5I_INVALID_HID;
    size_t count = 0;
    fs_status ret = FS_OK;
    if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_VIRTUAL && H5Pget_virtual_count(dcpl, &count) >= 0 &&
        count > 0) {
        *names = calloc(count, sizeof **names);
        for (size_t i = 0; *names && i < count; i++)
            (*names)[(*n)++] = virtual_name(dcpl, i, 0);
        if (!*names)
            ret = fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    close_handles(3, dcpl, did, fid);
    H5Eclear2(H5E_DEFAULT);
    return ret;
}

/* ------------------------------------------------------------------ write */

struct fs_h5_output {
    MPI_Comm comm;
    char *path;
    char *name;   /* what messages call it (the final path), NULL: path */
    hid_t fid, did, dxpl;
};

/* Chunks and filters of the output dataset. */
static herr_t set_storage(hid_t dcpl, int ndim, const int64_t *shape, const fs_h5_storage *storage)
{
    if (!storage || storage->chunk_ndim == 0)
        return 0;
    hsize_t chunk[FS_LAYOUT_MAX_DIMS];
    for (int k = 0; k < ndim; k++) {
        int64_t c = k < storage->chunk_ndim ? storage->chunk[k] : shape[k];
        chunk[k] = (hsize_t)(c < shape[k] ? c : shape[k]);
        if (chunk[k] == 0)
            chunk[k] = 1;
    }
    if (H5Pset_chunk(dcpl, ndim, chunk) < 0)
        return -1;
    if (storage->deflate > 0 &&
        (H5Pset_shuffle(dcpl) < 0 || H5Pset_deflate(dcpl, (unsigned)storage->deflate) < 0))
        return -1;
    return 0;
}

/* Create the file tmp_path through fapl and in it the dataset `dataset`
 * (groups on its path too) with the creation properties dcpl; *out is the
 * new output, or NULL after a failure. */
static fs_status output_create(MPI_Comm comm, const char *tmp_path, hid_t fapl, hid_t dxpl,
                               const char *dataset, int ndim, const int64_t *shape,
                               fs_dtype file_type, hid_t dcpl, fs_h5_output **out)
{
    fs_status ret = FS_OK;
    hid_t space = H5I_INVALID_HID, ftype = H5I_INVALID_HID, lcpl = H5I_INVALID_HID;
    *out = NULL;
    fs_h5_output *o = calloc(1, sizeof *o);
    if (!o || !(o->path = strdup(tmp_path))) {
        free(o);
        if (dxpl >= 0)
            H5Pclose(dxpl);
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    o->fid = o->did = H5I_INVALID_HID;
    o->dxpl = dxpl;
    o->comm = comm;
    hsize_t dims[FS_LAYOUT_MAX_DIMS];
    for (int k = 0; k < ndim; k++)
        dims[k] = (hsize_t)shape[k];
    space = H5Screate_simple(ndim, dims, NULL);
    ftype = element_type(file_type, 0);
    lcpl = H5Pcreate(H5P_LINK_CREATE);
    if (fapl < 0 || dcpl < 0 || space < 0 || ftype < 0 || lcpl < 0 ||
        H5Pset_create_intermediate_group(lcpl, 1) < 0) {
        ret = h5_fail(FS_ERR_RUNTIME, "cannot describe the output dataset");
        goto done;
    }
    /* The temporary was created empty and exclusively by rank 0; HDF5 now
     * takes it over. */
    o->fid = H5Fcreate(tmp_path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (o->fid < 0) {
        ret = h5_fail(FS_ERR_RUNTIME, "%s: cannot create the HDF5 file", tmp_path);
        goto done;
    }
    o->did = H5Dcreate2(o->fid, dataset, ftype, space, lcpl, dcpl, H5P_DEFAULT);
    if (o->did < 0)
        ret = h5_fail(FS_ERR_RUNTIME, "%s: cannot create dataset %s", tmp_path, dataset);
done:
    close_handles(3, lcpl, ftype, space);
    if (ret != FS_OK) {
        fs_h5_output_close(&o);
        return ret;
    }
    *out = o;
    return FS_OK;
}

fs_status fs_h5_output_new(MPI_Comm comm, const char *tmp_path, const char *dataset, int ndim,
                           const int64_t *shape, fs_dtype file_type, const fs_h5_storage *storage,
                           fs_h5_output **out)
{
    hid_t fapl = mpio_fapl(comm), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    /* Every element is written; filling first would write the file twice. */
    if (dcpl >= 0 && (H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0 ||
                      set_storage(dcpl, ndim, shape, storage) < 0)) {
        H5Pclose(dcpl);
        dcpl = H5I_INVALID_HID;
    }
    /* Filtered datasets can only be written collectively; otherwise each
     * rank writes its hyperslab independently (see fs_h5_read). */
    hid_t dxpl = storage && storage->deflate > 0 ? collective_dxpl() : H5Pcreate(H5P_DATASET_XFER);
    fs_status ret = output_create(comm, tmp_path, fapl, dxpl, dataset, ndim, shape,
                                  file_type, dcpl, out);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (fapl >= 0)
        H5Pclose(fapl);
    return ret;
}

fs_status fs_h5_output_new_virtual(const char *tmp_path, const char *dataset, int ndim,
                                   const int64_t *shape, fs_dtype file_type,
                                   const fs_shard_set *sources, fs_h5_output **out)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (dcpl >= 0 && set_mappings(dcpl, ndim, shape, sources, dataset) < 0) {
        H5Pclose(dcpl);
        dcpl = H5I_INVALID_HID;
    }
    fs_status ret = output_create(MPI_COMM_SELF, tmp_path, H5P_DEFAULT, H5I_INVALID_HID, dataset,
                                  ndim, shape, file_type, dcpl, out);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return ret;
}

void fs_h5_output_set_name(fs_h5_output *o, const char *name)
{
    free(o->name);
    o->name = strdup(name);
}

fs_status fs_h5_output_write(fs_h5_output *o, const fs_io_map *map, const void *data,
                             fs_io_progress progress, void *ctx)
{
    fs_status ret = FS_OK;
    hid_t fspace = H5Dget_space(o->did), mtype = element_type(map->mem_type, 1),
          mspace = memory_space(map);
    double done = 0, eb = (double)fs_dtype_bytes(map->mem_type);
    io_pieces pc;
    if ((ret = plan_pieces(o->comm, map, &pc)) != FS_OK)
        goto done;
    if (fspace < 0 || mtype < 0 || mspace < 0) {
        ret = h5_fail(FS_ERR_RUNTIME, "cannot describe the output hyperslab");
        goto done;
    }
    for (int c = 0; c < pc.ncalls && ret == FS_OK; c++) {
        int64_t n = select_piece(map, &pc, c, fspace, mspace);
        if (n < 0)
            ret = h5_fail(FS_ERR_RUNTIME, "cannot select the output hyperslab");
        else if (H5Dwrite(o->did, mtype, mspace, fspace, o->dxpl, data) < 0)
            ret = h5_fail(FS_ERR_RUNTIME, "%s: write failed", o->name ? o->name : o->path);
        done += (double)(n > 0 ? n : 0) * eb;
        if (progress && n > 0)
            progress(ctx, done);
    }
done:
    close_handles(3, mspace, mtype, fspace);
    return ret;
}

fs_status fs_h5_output_attr_string(fs_h5_output *o, const char *name, const char *value)
{
    fs_status ret = FS_OK;
    hid_t type = H5Tcopy(H5T_C_S1), space = H5Screate(H5S_SCALAR), attr = H5I_INVALID_HID;
    /* Variable-length UTF-8: h5py returns it as str, not bytes. */
    if (type < 0 || space < 0 || H5Tset_size(type, H5T_VARIABLE) < 0 ||
        H5Tset_cset(type, H5T_CSET_UTF8) < 0 ||
        (attr = H5Acreate2(o->did, name, type, space, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
        H5Awrite(attr, type, &value) < 0)
        ret = h5_fail(FS_ERR_RUNTIME, "%s: cannot write attribute %s", o->path, name);
    close_handles(3, attr, space, type);
    return ret;
}

fs_status fs_h5_output_attr_numbers(fs_h5_output *o, const char *name, int rank,
                                    const int64_t *dims, fs_dtype type, const void *values)
{
    fs_status ret = FS_OK;
    hsize_t hdims[FS_LAYOUT_MAX_DIMS];
    for (int k = 0; k < rank; k++)
        hdims[k] = (hsize_t)dims[k];
    hid_t space = rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, hdims, NULL);
    int is_int = type == FS_DTYPE_INTEGER;
    hid_t ftype = is_int ? H5T_STD_I64LE : H5T_IEEE_F64LE;
    hid_t mtype = is_int ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
    hid_t attr = H5I_INVALID_HID;
    if (space < 0 || (attr = H5Acreate2(o->did, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
        H5Awrite(attr, mtype, values) < 0)
        ret = h5_fail(FS_ERR_RUNTIME, "%s: cannot write attribute %s", o->path, name);
    close_handles(2, attr, space);
    return ret;
}

fs_status fs_h5_output_attr_int64s(fs_h5_output *o, const char *name, int n, const int64_t *values)
{
    int64_t dim = n;
    return fs_h5_output_attr_numbers(o, name, n < 0 ? 0 : 1, &dim, FS_DTYPE_INTEGER, values);
}

fs_status fs_h5_output_close(fs_h5_output **o)
{
    fs_status ret = FS_OK;
    fs_h5_output *p = *o;
    if (!p)
        return FS_OK;
    if (p->did >= 0 && H5Dclose(p->did) < 0)
        ret = h5_fail(FS_ERR_RUNTIME, "%s: closing the dataset failed", p->path);
    if (p->dxpl >= 0)
        H5Pclose(p->dxpl);
    /* Closing flushes everything still cached: a full disk shows up here. */
    if (p->fid >= 0 && H5Fclose(p->fid) < 0 && ret == FS_OK)
        ret = h5_fail(FS_ERR_RUNTIME, "%s: closing the file failed (disk full?)",
                      p->name ? p->name : p->path);
    free(p->path);
    free(p->name);
    free(p);
    *o = NULL;
    return ret;
}
