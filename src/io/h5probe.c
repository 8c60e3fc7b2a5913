/* SPDX-License-Identifier: GPL-3.0-or-later */
/* h5probe: see h5probe.h. */
#include "config.h"

#include "io/h5probe.h"
#include "io/h5recorded.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <libgen.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/h5common.h"
#include "io/snapshot.h"
#include "io/textfile.h"

fs_status fs_h5_init(void)
{
    /* Under MPI, HDF5 shuts down inside MPI_Finalize (an attribute on
     * MPI_COMM_SELF). Its atexit handler would run after MPI_Abort instead,
     * flush a file that MPI-IO can no longer write and crash: after a
     * failed write (fs_h5_output_abandon) the job must end with our status,
     * not SIGSEGV. Without MPI (the probe child) the handler stays. */
    int mpi_up = 0;
    if (MPI_Initialized(&mpi_up) != MPI_SUCCESS)
        return fs_error_set(FS_ERR_RUNTIME, "MPI_Initialized failed");
    if (mpi_up && H5dont_atexit() < 0)
        return fs_error_set(FS_ERR_RUNTIME, "cannot keep HDF5 from shutting down at exit");
    if (H5open() < 0)
        return fs_error_set(FS_ERR_RUNTIME, "the HDF5 library cannot start");
    if (H5Eset_auto2(H5E_DEFAULT, NULL, NULL) < 0)
        return fs_error_set(FS_ERR_RUNTIME, "cannot turn off HDF5's automatic error printing");
    return FS_OK;
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

/* ------------------------------------------------------------------ special files */

/* Refuse a special file among the inputs without waiting on it: opening a
 * FIFO for reading blocks until a writer comes, a device may never end.
 * stat decides before anything opens the name; the open that proves the
 * file readable cannot block (O_NONBLOCK), and fstat checks that the name
 * still holds a regular file. (HDF5 opens the name once more, without
 * O_NONBLOCK: a file swapped for a FIFO in between is out of our reach.)
 * label starts the message; *st (out) is the file's status. */
static fs_status check_regular(const char *path, const char *label, struct stat *st)
{
    if (stat(path, st) != 0)
        return fs_error_set(FS_ERR_INPUT, "%s: %s", label,
                            errno == ENOENT ? "no such file" : strerror(errno));
    if (S_ISDIR(st->st_mode))
        return fs_error_set(FS_ERR_INPUT, "%s: is a directory, not an HDF5 file", label);
    if (!S_ISREG(st->st_mode))
        return fs_error_set(FS_ERR_INPUT, "%s: not a regular file (%s)", label,
                            fs_file_kind(st->st_mode));
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return fs_error_set(FS_ERR_INPUT, "%s: %s", label, strerror(errno));
    struct stat now;
    int same = fstat(fd, &now) == 0 && S_ISREG(now.st_mode);
    close(fd);
    if (!same)
        return fs_error_set(FS_ERR_INPUT, "%s: not a regular file (%s)", label,
                            fs_file_kind(now.st_mode));
    *st = now;
    return FS_OK;
}

/* ------------------------------------------------------------------ datasets */

typedef struct dataset_list {
    char names[16][FS_PATH_MAX];
    int count;     /* all datasets, even those not stored in names */
} dataset_list;

/* Whether the dataset `name` under obj is a dimension scale: a coordinate
 * (fftshard's, netCDF-4's), metadata of other datasets, never an input
 * picked for the user. */
static int is_scale(hid_t obj, const char *name)
{
    hid_t did = H5Dopen2(obj, name, H5P_DEFAULT);
    int scale = did >= 0 && H5DSis_scale(did) > 0;
    if (did >= 0)
        H5Dclose(did);
    H5Eclear2(H5E_DEFAULT);
    return scale;
}

static herr_t collect_dataset(hid_t obj, const char *name, const fs_h5_oinfo *info, void *data)
{
    dataset_list *list = data;
    if (info->type == H5O_TYPE_DATASET && !is_scale(obj, name)) {
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

/* The named dataset is missing: say so, with the datasets the file holds. */
static fs_status no_such_dataset(hid_t fid, const char *file, const char *dataset)
{
    dataset_list list = {.count = 0};
    char names[1024] = "";
    /* The listing only helps the reader; the missing dataset is the error. */
    if (fs_h5_visit(fid, collect_dataset, &list) < 0)
        snprintf(names, sizeof names, "unknown: HDF5 cannot list them");
    else if (list.count == 0)
        snprintf(names, sizeof names, "none");
    else
        format_dataset_list(&list, names, sizeof names);
    return fs_error_set(FS_ERR_INPUT, "%s: no dataset %s (datasets in the file: %s)", file, dataset,
                        names);
}

/* The absolute path of the dataset to transform into info->dataset: the
 * named one, or the only one in the file. */
static fs_status find_dataset(hid_t fid, const char *file, const char *dataset, fs_input_info *info)
{
    if (dataset) {
        fs_h5_oinfo oinfo;
        /* H5Oget_info_by_name fails for a missing path at any depth. */
        if (fs_h5_info_by_name(fid, dataset, &oinfo) < 0)
            return no_such_dataset(fid, file, dataset);
        if (oinfo.type != H5O_TYPE_DATASET)
            return fs_error_set(FS_ERR_INPUT, "%s:%s: is a group, not a dataset", file, dataset);
        snprintf(info->dataset, sizeof info->dataset, "%s%s", dataset[0] == '/' ? "" : "/", dataset);
        return FS_OK;
    }
    dataset_list list = {.count = 0};
    if (fs_h5_visit(fid, collect_dataset, &list) < 0)
        return fs_h5_fail(FS_ERR_INPUT, "%s: cannot list the objects in the file", file);
    if (list.count == 0)
        return fs_error_set(FS_ERR_INPUT, "%s: the file holds no dataset", file);
    if (list.count > 1) {
        char names[1024];
        format_dataset_list(&list, names, sizeof names);
        return fs_error_set(FS_ERR_INPUT, "%s: the file holds %d datasets; name one as %s:/path (%s)",
                            file, list.count, file, names);
    }
    snprintf(info->dataset, sizeof info->dataset, "%s", list.names[0]);
    return FS_OK;
}

/* ------------------------------------------------------------------ element types */

/* The name of a class of element types fftshard does not read. */
static const char *class_name(H5T_class_t cls)
{
    switch (cls) {
    case H5T_STRING: return "string";
    case H5T_ENUM: return "enum";
    case H5T_BITFIELD: return "bitfield";
    case H5T_OPAQUE: return "opaque";
    case H5T_REFERENCE: return "reference";
    case H5T_ARRAY: return "array";
    case H5T_VLEN: return "variable-length";
    case H5T_TIME: return "time";
    default: return "unknown";
    }
}

/* Member i of a compound type: its name (into name) and, when its type is
 * float32 or float64, that type's size in *float_size (0 otherwise). */
static fs_status compound_member(hid_t type, unsigned i, char *name, size_t name_size,
                                 size_t *float_size)
{
    *float_size = 0;
    char *member = H5Tget_member_name(type, i);
    if (!member)
        return fs_h5_fail(FS_ERR_INPUT, "cannot read the name of member %u of the compound element "
                          "type", i);
    snprintf(name, name_size, "%s", member);
    if (H5free_memory(member) < 0)
        return fs_h5_fail(FS_ERR_RUNTIME, "cannot free a member name HDF5 returned");
    hid_t mt = H5Tget_member_type(type, i);
    H5T_class_t cls = mt >= 0 ? H5Tget_class(mt) : H5T_NO_CLASS;
    size_t size = cls != H5T_NO_CLASS ? H5Tget_size(mt) : 0;
    fs_status ret = FS_OK;
    if (size == 0)
        ret = fs_h5_fail(FS_ERR_INPUT, "cannot read the type of member %s of the compound element type",
                         name);
    else if (cls == H5T_FLOAT && (size == 4 || size == 8))
        *float_size = size;
    return fs_h5_close_ids(ret, "a compound member's type", 1, mt);
}

/* A compound is complex data when it is h5py's {r, i} of two float32 or two
 * float64. The type's name into info->type_name in any case. */
static fs_status read_compound(hid_t type, size_t size, fs_input_info *info, int *supported)
{
    int n = H5Tget_nmembers(type);
    if (n < 0)
        return fs_h5_fail(FS_ERR_INPUT, "cannot read the members of the compound element type");
    char *text = info->type_name;
    size_t cap = sizeof info->type_name, float_size[2] = {0, 0};
    int ok = n == 2;
    size_t used = (size_t)snprintf(text, cap, "compound {");
    for (int i = 0; i < n && used < cap; i++) {
        char name[256];
        size_t fsize;
        fs_status st = compound_member(type, (unsigned)i, name, sizeof name, &fsize);
        if (st != FS_OK)
            return st;
        if (i < 2)
            float_size[i] = fsize;
        ok = ok && strcmp(name, i == 0 ? "r" : "i") == 0 && fsize > 0 && fsize * 2 <= size;
        used += (size_t)snprintf(text + used, cap - used, "%s%s", i ? ", " : "", name);
    }
    if (used < cap)
        snprintf(text + used, cap - used, "}");
    *supported = ok && float_size[0] == float_size[1];
    if (*supported) {
        int single = float_size[0] == 4;
        info->dtype = single ? FS_DTYPE_COMPLEX64 : FS_DTYPE_COMPLEX128;
        snprintf(text, cap, "%s", single ? "complex64" : "complex128");
    }
    return FS_OK;
}

/* Name the element type into info->type_name and say whether fftshard
 * reads it (*supported; then info->dtype is set). Fails only when HDF5
 * cannot describe the type. */
static fs_status read_type(hid_t type, fs_input_info *info, int *supported)
{
    *supported = 0;
    H5T_class_t cls = H5Tget_class(type);
    size_t size = cls != H5T_NO_CLASS ? H5Tget_size(type) : 0;
    if (size == 0)
        return fs_h5_fail(FS_ERR_INPUT, "cannot read the element type");
    info->element_bytes = (int)size;
    switch (cls) {
    case H5T_FLOAT:
        snprintf(info->type_name, sizeof info->type_name, "float%zu", 8 * size);
        *supported = size == 4 || size == 8;
        info->dtype = size == 4 ? FS_DTYPE_FLOAT32 : FS_DTYPE_FLOAT64;
        return FS_OK;
    case H5T_INTEGER: {
        H5T_sign_t sign = H5Tget_sign(type);
        if (sign == H5T_SGN_ERROR)
            return fs_h5_fail(FS_ERR_INPUT, "cannot read the sign of the integer element type");
        snprintf(info->type_name, sizeof info->type_name, "%sint%zu", sign == H5T_SGN_NONE ? "u" : "",
                 8 * size);
        *supported = 1;
        info->dtype = FS_DTYPE_INTEGER;
        return FS_OK;
    }
    case H5T_COMPOUND: return read_compound(type, size, info, supported);
    default:
        snprintf(info->type_name, sizeof info->type_name, "%s", class_name(cls));
        return FS_OK;
    }
}

/* What to say after "unsupported element type NAME". */
static const char *supported_types_hint(const fs_input_info *info)
{
    if (strncmp(info->type_name, "compound", 8) == 0)
        return "complex data is a compound {r, i} of two float32 or two float64";
    return "expected float32, float64, complex64, complex128 or an integer type";
}

/* ------------------------------------------------------------------ damaged metadata */

/* A chunked dataset's chunks: as many axes as the shape, none empty, none
 * longer than a fixed maximum length (HDF5 writes no other). */
static fs_status check_chunks(hid_t dcpl, int nd, const hsize_t *maxdims, const char *label)
{
    hsize_t chunk[H5S_MAX_RANK];
    int chunk_nd = H5Pget_chunk(dcpl, H5S_MAX_RANK, chunk);
    if (chunk_nd < 0)
        return fs_h5_fail(FS_ERR_INPUT, "%s: cannot read the dataset's chunks", label);
    if (chunk_nd != nd)
        return fs_error_set(FS_ERR_INPUT, "%s: damaged: chunks of %d axes in a %d-D dataset", label,
                            chunk_nd, nd);
    for (int k = 0; k < nd; k++)
        if (chunk[k] == 0 || (maxdims[k] != H5S_UNLIMITED && chunk[k] > maxdims[k]))
            return fs_error_set(FS_ERR_INPUT, "%s: damaged: chunks of length %llu along axis %d, "
                                "whose maximum length is %llu", label, (unsigned long long)chunk[k],
                                k, (unsigned long long)maxdims[k]);
    return FS_OK;
}

/* Contiguous or compact data: the bytes stored hold the whole shape. (A
 * contiguous dataset never written has no storage and reads as fill.) */
static fs_status check_stored_bytes(hid_t did, hid_t dcpl, hid_t sid, hid_t tid, H5D_layout_t layout,
                                    const char *label)
{
    int external = H5Pget_external_count(dcpl);
    hssize_t elems = H5Sget_simple_extent_npoints(sid);
    size_t elem_bytes = H5Tget_size(tid);
    if (external < 0 || elems < 0 || elem_bytes == 0)
        return fs_h5_fail(FS_ERR_INPUT, "%s: cannot read the dataset's storage", label);
    if (external > 0 || (layout == H5D_CONTIGUOUS && H5Dget_offset(did) == HADDR_UNDEF))
        return fs_h5_clear_errors(FS_OK);
    /* Too many bytes to count: check_size refuses the shape. */
    if ((uint64_t)elems > UINT64_MAX / elem_bytes)
        return FS_OK;
    uint64_t need = (uint64_t)elems * elem_bytes, have = H5Dget_storage_size(did);
    if (have < need)
        return fs_error_set(FS_ERR_INPUT, "%s: damaged: %llu bytes of data stored, its shape needs "
                            "%llu", label, (unsigned long long)have, (unsigned long long)need);
    return FS_OK;
}

/* Metadata that contradicts itself marks a damaged file: HDF5 1.10 trusts
 * it, and reading a shape beyond its maximum shape takes minutes and
 * gigabytes, or reads past the data's storage. Each test here is cheap. */
static fs_status check_consistent(hid_t did, hid_t sid, hid_t tid, const char *label)
{
    hsize_t dims[H5S_MAX_RANK], maxdims[H5S_MAX_RANK];
    int nd = H5Sget_simple_extent_ndims(sid);
    if (nd < 0 || nd > H5S_MAX_RANK || H5Sget_simple_extent_dims(sid, dims, maxdims) < 0)
        return fs_h5_fail(FS_ERR_INPUT, "%s: cannot read the dataset's shape", label);
    for (int k = 0; k < nd; k++)
        if (maxdims[k] != H5S_UNLIMITED && dims[k] > maxdims[k])
            return fs_error_set(FS_ERR_INPUT, "%s: damaged: axis %d has length %llu, beyond its "
                                "maximum length %llu", label, k, (unsigned long long)dims[k],
                                (unsigned long long)maxdims[k]);
    hid_t dcpl = H5Dget_create_plist(did);
    H5D_layout_t layout = dcpl >= 0 ? H5Pget_layout(dcpl) : H5D_LAYOUT_ERROR;
    fs_status ret = FS_OK;
    if (layout == H5D_LAYOUT_ERROR)
        ret = fs_h5_fail(FS_ERR_INPUT, "%s: cannot read the dataset's layout", label);
    else if (layout == H5D_CHUNKED)
        ret = check_chunks(dcpl, nd, maxdims, label);
    else if (layout == H5D_CONTIGUOUS || layout == H5D_COMPACT)
        ret = check_stored_bytes(did, dcpl, sid, tid, layout, label);
    return fs_h5_close_ids(ret, label, 1, dcpl);
}

/* ------------------------------------------------------------------ virtual datasets */

/* Mapping i's source file name (dataset 0) or dataset name (dataset 1)
 * into *name (malloc'ed). */
static fs_status virtual_name(hid_t dcpl, size_t i, int dataset, char **name)
{
    ssize_t len = dataset ? H5Pget_virtual_dsetname(dcpl, i, NULL, 0)
                          : H5Pget_virtual_filename(dcpl, i, NULL, 0);
    *name = NULL;
    if (len < 0)
        return fs_h5_fail(FS_ERR_INPUT, "cannot read mapping %zu of the virtual dataset", i);
    if (!(*name = malloc((size_t)len + 1)))
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    if ((dataset ? H5Pget_virtual_dsetname(dcpl, i, *name, (size_t)len + 1)
                 : H5Pget_virtual_filename(dcpl, i, *name, (size_t)len + 1)) < 0) {
        free(*name);
        *name = NULL;
        return fs_h5_fail(FS_ERR_INPUT, "cannot read mapping %zu of the virtual dataset", i);
    }
    return FS_OK;
}

/* Where HDF5 finds a virtual dataset's source: "." is the file itself; a
 * relative name is looked for under $HDF5_VDS_PREFIX, beside the virtual
 * dataset's file, then from the working directory. */
static fs_status resolve_source(const char *vds_file, const char *name, char *path, size_t size)
{
    struct stat st;
    if (strcmp(name, ".") == 0 || name[0] == '/') {
        snprintf(path, size, "%s", strcmp(name, ".") == 0 ? vds_file : name);
        return FS_OK;
    }
    const char *prefix = getenv("HDF5_VDS_PREFIX");
    if (prefix && prefix[0]) {
        snprintf(path, size, "%s/%s", prefix, name);
        if (stat(path, &st) == 0)
            return FS_OK;
    }
    char *copy = strdup(vds_file);
    if (!copy)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    snprintf(path, size, "%s/%s", dirname(copy), name);
    free(copy);
    if (stat(path, &st) != 0)
        snprintf(path, size, "%s", name);
    return FS_OK;
}

/* A source's shape against its mapping i: "all" of a source maps as many
 * elements as the virtual side selects; a hyperslab of it (sel) must lie
 * within its shape. label starts every message. */
static fs_status check_source_extent(const char *label, int nd, const hsize_t *dims, hid_t dcpl,
                                     size_t i, hid_t sel)
{
    int64_t d64[H5S_MAX_RANK];
    hsize_t have = 1;
    for (int k = 0; k < nd; k++) {
        d64[k] = (int64_t)dims[k];
        have *= dims[k];
    }
    char shape[256];
    fs_format_shape(nd, d64, shape, sizeof shape);
    H5S_sel_type kind = H5Sget_select_type(sel);
    if (kind == H5S_SEL_ERROR)
        return fs_h5_fail(FS_ERR_INPUT, "%s: cannot read its mapping", label);
    if (kind == H5S_SEL_ALL) {
        hid_t vsel = H5Pget_virtual_vspace(dcpl, i);
        hssize_t need = vsel >= 0 ? H5Sget_select_npoints(vsel) : -1;
        fs_status ret = FS_OK;
        if (need < 0)
            ret = fs_h5_fail(FS_ERR_INPUT, "%s: cannot read its mapping", label);
        else if ((hsize_t)need != have)
            ret = fs_error_set(FS_ERR_INPUT, "%s has shape %s (%llu elements), its mapping needs %lld",
                               label, shape, (unsigned long long)have, (long long)need);
        return fs_h5_close_ids(ret, label, 1, vsel);
    }
    int sel_nd = H5Sget_simple_extent_ndims(sel);
    hssize_t npoints = H5Sget_select_npoints(sel);
    if (sel_nd < 0 || npoints < 0)
        return fs_h5_fail(FS_ERR_INPUT, "%s: cannot read its mapping", label);
    if (sel_nd != nd || npoints == 0)
        return FS_OK;
    hsize_t lo[H5S_MAX_RANK], hi[H5S_MAX_RANK];
    if (H5Sget_select_bounds(sel, lo, hi) < 0)
        return fs_h5_fail(FS_ERR_INPUT, "%s: cannot read its mapping", label);
    for (int k = 0; k < nd; k++)
        if (hi[k] >= dims[k])
            return fs_error_set(FS_ERR_INPUT, "%s has shape %s, too small for its mapping (axis %d "
                                "reaches %llu)", label, shape, k, (unsigned long long)hi[k] + 1);
    return FS_OK;
}

/* The dataset dset of a source file (open as fid) against mapping i. */
static fs_status check_source_dataset(const char *file, const char *dataset, hid_t dcpl, size_t i,
                                      hid_t fid, const char *name, const char *dset)
{
    hid_t did = H5Dopen2(fid, dset, H5P_DEFAULT), tid = H5I_INVALID_HID, sid = H5I_INVALID_HID,
          sel = H5I_INVALID_HID;
    char label[2048];
    snprintf(label, sizeof label, "%s:%s: source %s:%s of the virtual dataset", file, dataset, name,
             dset);
    fs_input_info src;
    memset(&src, 0, sizeof src);
    int supported = 0, nd = -1;
    hsize_t dims[H5S_MAX_RANK];
    fs_status ret = FS_OK;
    if (did < 0) {
        ret = fs_error_set(FS_ERR_INPUT, "%s:%s: source %s of the virtual dataset has no dataset %s",
                           file, dataset, name, dset);
        goto done;
    }
    if ((tid = H5Dget_type(did)) < 0)
        ret = fs_h5_fail(FS_ERR_INPUT, "%s: cannot read its element type", label);
    else if ((ret = read_type(tid, &src, &supported)) == FS_OK && !supported)
        ret = fs_error_set(FS_ERR_INPUT, "%s: unsupported element type %s", label, src.type_name);
    if (ret != FS_OK)
        goto done;
    sid = H5Dget_space(did);
    sel = H5Pget_virtual_srcspace(dcpl, i);
    nd = sid >= 0 ? H5Sget_simple_extent_ndims(sid) : -1;
    if (nd < 0 || sel < 0 || H5Sget_simple_extent_dims(sid, dims, NULL) < 0) {
        ret = fs_h5_fail(FS_ERR_INPUT, "%s: cannot read its shape", label);
        goto done;
    }
    ret = check_consistent(did, sid, tid, label);
    if (ret == FS_OK)
        ret = check_source_extent(label, nd, dims, dcpl, i, sel);
done:
    return fs_h5_close_ids(ret, label, 4, sel, sid, tid, did);
}

/* Source i of a virtual dataset, file `name` and dataset `dset` as stored. */
static fs_status check_source(const char *file, const char *dataset, hid_t dcpl, size_t i,
                              const char *name, const char *dset)
{
    char path[2 * FS_PATH_MAX], label[2 * FS_PATH_MAX + 64];
    struct stat st;
    fs_status ret = resolve_source(file, name, path, sizeof path);
    if (ret != FS_OK)
        return ret;
    snprintf(label, sizeof label, "%s:%s: source %s of the virtual dataset", file, dataset, name);
    if ((ret = check_regular(path, label, &st)) != FS_OK)
        return ret;
    /* Either failure means the same to the reader: HDF5's reason adds nothing. */
    hid_t fid = H5Fis_hdf5(path) > 0 ? H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT) : H5I_INVALID_HID;
    if (fid < 0)
        return fs_error_set(FS_ERR_INPUT, "%s:%s: source %s of the virtual dataset: not a readable "
                            "HDF5 file", file, dataset, name);
    ret = check_source_dataset(file, dataset, dcpl, i, fid, name, dset);
    return fs_h5_close_ids(ret, path, 1, fid);
}

/* A virtual dataset reads the fill value where a source is missing; a
 * result computed from that would be silently wrong. Check that every
 * source file and dataset exists, has a type fftshard reads and is large
 * enough for its mapping. */
static fs_status check_virtual_sources(const char *file, const char *dataset, hid_t dcpl)
{
    size_t count = 0;
    if (H5Pget_virtual_count(dcpl, &count) < 0)
        return fs_h5_fail(FS_ERR_INPUT, "%s:%s: cannot read the virtual dataset's mappings", file,
                          dataset);
    fs_status ret = FS_OK;
    for (size_t i = 0; i < count && ret == FS_OK; i++) {
        char *name = NULL, *dset = NULL;
        ret = virtual_name(dcpl, i, 0, &name);
        if (ret == FS_OK)
            ret = virtual_name(dcpl, i, 1, &dset);
        if (ret != FS_OK) {
            /* Put the file and dataset in front of the message. */
            char located[2048];
            snprintf(located, sizeof located, "%s:%s: %s", file, dataset, fs_error_message());
            fs_error_clear();
            ret = fs_error_set(ret, "%s", located);
        } else if (!strchr(name, '%') && !strchr(dset, '%')) {
            /* printf-named sources of an unlimited dataset: HDF5 finds them */
            ret = check_source(file, dataset, dcpl, i, name, dset);
        }
        free(name);
        free(dset);
        /* A source may be refused after HDF5 failed to open it. */
        ret = fs_h5_clear_errors(ret);
    }
    return ret;
}

fs_status fs_h5_virtual_files(const char *file, const char *dataset, char ***names, int64_t *n)
{
    *names = NULL;
    *n = 0;
    hid_t did = H5I_INVALID_HID, dcpl = H5I_INVALID_HID;
    size_t count = 0;
    fs_status ret = FS_OK;
    /* The caller may expect no such file or dataset: no HDF5 stack for those. */
    hid_t fid = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (fid < 0 || (did = H5Dopen2(fid, dataset, H5P_DEFAULT)) < 0) {
        ret = fs_error_set(FS_ERR_INPUT, "%s: cannot open %s to read its sources", file, dataset);
        goto done;
    }
    H5D_layout_t layout = (dcpl = H5Dget_create_plist(did)) >= 0 ? H5Pget_layout(dcpl) : H5D_LAYOUT_ERROR;
    if (layout == H5D_LAYOUT_ERROR || (layout == H5D_VIRTUAL && H5Pget_virtual_count(dcpl, &count) < 0)) {
        ret = fs_h5_fail(FS_ERR_INPUT, "%s:%s: cannot read the dataset's layout", file, dataset);
        goto done;
    }
    if (count > 0 && !(*names = calloc(count, sizeof **names)))
        ret = fs_error_set(FS_ERR_RUNTIME, "out of memory");
    for (size_t i = 0; i < count && ret == FS_OK; i++, (*n)++)
        ret = virtual_name(dcpl, i, 0, &(*names)[i]);
    if (ret != FS_OK) {
        fs_strings_free(*names, *n);
        *names = NULL;
        *n = 0;
    }
done:
    ret = fs_h5_close_ids(ret, file, 3, dcpl, did, fid);
    return fs_h5_clear_errors(ret);
}

fs_status fs_h5_source_path(const char *vds_file, const char *name, char *path, size_t size)
{
    return resolve_source(vds_file, name, path, size);
}

/* ------------------------------------------------------------------ probe */

const char *fs_input_name(const char *file, const fs_input_info *info, char *buf, size_t size)
{
    snprintf(buf, size, "%s:%s%s", file, info->painted ? info->painted_from : info->dataset,
             info->slice.given ? info->slice.text : "");
    return buf;
}

fs_file_stamp fs_file_stamp_of(const struct stat *st)
{
    return (fs_file_stamp){1, (uint64_t)st->st_dev, (uint64_t)st->st_ino, (int64_t)st->st_size,
                           (int64_t)st->st_mtim.tv_sec, (int64_t)st->st_mtim.tv_nsec};
}

/* Is the dataset virtual? Then its sources must be usable. */
static fs_status check_layout(hid_t did, const char *file, fs_input_info *info)
{
    hid_t dcpl = H5Dget_create_plist(did);
    H5D_layout_t layout = dcpl >= 0 ? H5Pget_layout(dcpl) : H5D_LAYOUT_ERROR;
    fs_status ret = FS_OK;
    if (layout == H5D_LAYOUT_ERROR)
        ret = fs_h5_fail(FS_ERR_INPUT, "%s:%s: cannot read the dataset's layout", file, info->dataset);
    else if (layout == H5D_VIRTUAL) {
        info->is_virtual = 1;
        ret = check_virtual_sources(file, info->dataset, dcpl);
    }
    return fs_h5_close_ids(ret, file, 1, dcpl);
}

/* The shape (sid) fftshard can transform: simple, 1 to FS_LAYOUT_MAX_DIMS
 * axes, into info->ndim and info->shape. */
static fs_status read_shape(hid_t sid, const char *label, fs_input_info *info)
{
    H5S_class_t space_class = H5Sget_simple_extent_type(sid);
    if (space_class == H5S_NO_CLASS)
        return fs_h5_fail(FS_ERR_INPUT, "%s: cannot read the dataset's shape", label);
    if (space_class != H5S_SIMPLE)
        return fs_error_set(FS_ERR_INPUT, "%s: %s dataset: nothing to transform", label,
                            space_class == H5S_SCALAR ? "a scalar" : "an empty (null)");
    int ndim = H5Sget_simple_extent_ndims(sid);
    if (ndim < 0)
        return fs_h5_fail(FS_ERR_INPUT, "%s: cannot read the dataset's shape", label);
    if (ndim < 1 || ndim > FS_LAYOUT_MAX_DIMS)
        return fs_error_set(FS_ERR_INPUT, "%s: %d dimensions; fftshard handles 1 to %d", label, ndim,
                            FS_LAYOUT_MAX_DIMS);
    hsize_t dims[FS_LAYOUT_MAX_DIMS];
    if (H5Sget_simple_extent_dims(sid, dims, NULL) < 0)
        return fs_h5_fail(FS_ERR_INPUT, "%s: cannot read the dataset's shape", label);
    info->ndim = ndim;
    for (int k = 0; k < ndim; k++)
        info->shape[k] = (int64_t)dims[k];
    return FS_OK;
}

/* Only now the length of every axis: a virtual dataset's sources come
 * first, as before. */
static fs_status check_size(const char *label, const fs_input_info *info)
{
    char shape[256];
    fs_format_shape(info->ndim, info->shape, shape, sizeof shape);
    for (int k = 0; k < info->ndim; k++)
        if (info->shape[k] == 0)
            return fs_error_set(FS_ERR_INPUT, "%s: axis %d has length 0 (shape %s): nothing to "
                                "transform", label, k, shape);
    if (fs_shape_elems(info->ndim, info->shape) < 0)
        return fs_error_set(FS_ERR_INPUT, "%s: shape %s is too large (more than %s elements)", label,
                            shape, FS_MAX_ELEMS_TEXT);
    return FS_OK;
}

/* Everything about the open dataset did of file. */
static fs_status probe_dataset(hid_t did, const char *file, fs_input_info *info)
{
    char label[2 * FS_PATH_MAX + 2];
    snprintf(label, sizeof label, "%s:%s", file, info->dataset);
    hid_t tid = H5Dget_type(did), sid = H5Dget_space(did);
    int supported = 0;
    fs_status ret = FS_OK;
    if (tid < 0 || sid < 0)
        ret = fs_h5_fail(FS_ERR_INPUT, "%s: cannot read the dataset's type or shape", label);
    if (ret == FS_OK && (ret = read_type(tid, info, &supported)) != FS_OK) {
        /* Put the file and dataset in front of the message. */
        char located[sizeof label + 2048];
        snprintf(located, sizeof located, "%s: %s", label, fs_error_message());
        fs_error_clear();
        ret = fs_error_set(ret, "%s", located);
    } else if (ret == FS_OK && !supported) {
        ret = fs_error_set(FS_ERR_INPUT, "%s: unsupported element type %s (%s)", label,
                           info->type_name, supported_types_hint(info));
    }
    if (ret == FS_OK)
        ret = read_shape(sid, label, info);
    if (ret == FS_OK)
        ret = check_consistent(did, sid, tid, label);
    if (ret == FS_OK)
        ret = fs_h5_read_recorded(did, label, info);
    if (ret == FS_OK)
        ret = fs_h5_read_offset(did, label, info->ndim, info);
    if (ret == FS_OK)
        ret = check_layout(did, file, info);
    if (ret == FS_OK)
        ret = check_size(label, info);
    return fs_h5_close_ids(ret, label, 2, sid, tid);
}

/* What can be said of the file before HDF5 opens it; its stamp. */
static fs_status check_file(const char *file, fs_file_stamp *stamp)
{
    struct stat st;
    fs_status ret = check_regular(file, file, &st);
    if (ret != FS_OK)
        return ret;
    *stamp = fs_file_stamp_of(&st);
    htri_t is_hdf5 = H5Fis_hdf5(file);
    if (is_hdf5 < 0)
        return fs_h5_fail(FS_ERR_INPUT, "%s: not an HDF5 file (HDF5 cannot read its signature)", file);
    if (is_hdf5 == 0)
        return fs_error_set(FS_ERR_INPUT, "%s: not an HDF5 file%s", file,
                            st.st_size == 0 ? " (it is empty)" : "");
    return FS_OK;
}

fs_status fs_h5_probe(const char *file, const char *dataset, fs_input_info *info)
{
    hid_t fid = H5I_INVALID_HID, did = H5I_INVALID_HID;
    memset(info, 0, sizeof *info);
    fs_status ret = check_file(file, &info->stamp);
    if (ret != FS_OK)
        return ret;
    fid = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (fid < 0)
        return fs_h5_fail(FS_ERR_INPUT, "%s: HDF5 cannot open it", file);
    ret = find_dataset(fid, file, dataset, info);
    if (ret == FS_OK && (did = H5Dopen2(fid, info->dataset, H5P_DEFAULT)) < 0)
        ret = fs_h5_fail(FS_ERR_INPUT, "%s:%s: cannot open the dataset", file, info->dataset);
    if (ret == FS_OK)
        ret = probe_dataset(did, file, info);
    if (ret == FS_OK)
        fs_snapshot_mark(fid, info);
    return fs_h5_close_ids(ret, file, 2, did, fid);
}
