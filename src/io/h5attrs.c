/* SPDX-License-Identifier: GPL-3.0-or-later */
/* h5attrs: see h5attrs.h.
 *
 * A record of the block, every field copied with memcpy (records are not
 * aligned):
 *   uint32 name bytes (with the NUL), the name
 *   uint32 type bytes, the type as H5Tencode wrote it
 *   int32 rank (-1: a null dataspace, 0: scalar), uint64 dims[rank]
 *   uint8 1 for a variable-length string
 *   uint64 data bytes, the values in the type (variable-length strings:
 *   each one's text and a NUL). */
#include "config.h"

#include "io/h5attrs.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/collective.h"
#include "io/h5common.h"

void fs_input_attrs_free(fs_input_attrs *a)
{
    free(a->block);
    memset(a, 0, sizeof *a);
}

/* ------------------------------------------------------------------ block */

/* The block being built; ok 0 once an allocation failed. */
typedef struct builder {
    fs_input_attrs *a;
    int64_t size;
    int ok;
} builder;

static void put(builder *b, const void *src, size_t n)
{
    if (!b->ok)
        return;
    if (b->a->bytes + (int64_t)n > b->size) {
        int64_t size = b->size ? 2 * b->size : 4096;
        while (size < b->a->bytes + (int64_t)n)
            size *= 2;
        unsigned char *grown = realloc(b->a->block, (size_t)size);
        if (!grown) {
            b->ok = 0;
            return;
        }
        b->a->block = grown;
        b->size = size;
    }
    if (n)
        memcpy(b->a->block + b->a->bytes, src, n);
    b->a->bytes += (int64_t)n;
}

/* One record as read back from the block: pointers into it. */
typedef struct record {
    const char *name;
    const unsigned char *type;
    int32_t rank;
    hsize_t dims[H5S_MAX_RANK];
    int vlen_string;
    const unsigned char *data;
    uint64_t data_bytes;
} record;

/* n bytes at *pos of the block into dst (NULL: only the place, in *at). */
static int take(const fs_input_attrs *a, int64_t *pos, void *dst, uint64_t n,
                const unsigned char **at)
{
    if (n > (uint64_t)(a->bytes - *pos))
        return -1;
    if (dst)
        memcpy(dst, a->block + *pos, n);
    if (at)
        *at = a->block + *pos;
    *pos += (int64_t)n;
    return 0;
}

/* The record at *pos; -1 when the block ends early. */
static int next_record(const fs_input_attrs *a, int64_t *pos, record *r)
{
    uint32_t name_bytes = 0, type_bytes = 0;
    uint8_t vlen = 0;
    const unsigned char *name;
    memset(r, 0, sizeof *r);
    if (take(a, pos, &name_bytes, sizeof name_bytes, NULL) || name_bytes == 0 ||
        take(a, pos, NULL, name_bytes, &name) || name[name_bytes - 1] != '\0' ||
        take(a, pos, &type_bytes, sizeof type_bytes, NULL) ||
        take(a, pos, NULL, type_bytes, &r->type) || take(a, pos, &r->rank, sizeof r->rank, NULL) ||
        r->rank < -1 || r->rank > H5S_MAX_RANK)
        return -1;
    for (int k = 0; k < r->rank; k++) {
        uint64_t d;
        if (take(a, pos, &d, sizeof d, NULL))
            return -1;
        r->dims[k] = (hsize_t)d;
    }
    if (take(a, pos, &vlen, sizeof vlen, NULL) ||
        take(a, pos, &r->data_bytes, sizeof r->data_bytes, NULL) ||
        take(a, pos, NULL, r->data_bytes, &r->data))
        return -1;
    r->name = (const char *)name;
    r->vlen_string = vlen;
    return 0;
}

/* Whether b holds the record rec (bytes long, named name) byte for byte:
 * the same name, type, shape and values. */
static int holds_alike(const fs_input_attrs *b, const unsigned char *rec, int64_t bytes,
                       const char *name)
{
    int64_t pos = 0;
    record r;
    for (int i = 0; i < b->count; i++) {
        int64_t at = pos;
        if (next_record(b, &pos, &r) != 0)
            return 0;
        if (strcmp(r.name, name) == 0)
            return pos - at == bytes && memcmp(b->block + at, rec, (size_t)bytes) == 0;
    }
    return 0;
}

static int named_in(const char *const *names, const char *name)
{
    for (; names && *names; names++)
        if (strcmp(*names, name) == 0)
            return 1;
    return 0;
}

fs_status fs_input_attrs_shared(const fs_input_attrs *a, int n, const char *const *skip,
                                fs_input_attrs *out)
{
    memset(out, 0, sizeof *out);
    builder b = {out, 0, 1};
    int64_t pos = 0;
    record r;
    for (int i = 0; n > 0 && i < a[0].count; i++) {
        int64_t at = pos;
        if (next_record(&a[0], &pos, &r) != 0) {
            fs_input_attrs_free(out);
            return fs_error_set(FS_ERR_RUNTIME, "the copied attributes are damaged");
        }
        int alike = !named_in(skip, r.name);
        for (int k = 1; k < n && alike; k++)
            alike = holds_alike(&a[k], a[0].block + at, pos - at, r.name);
        if (alike) {
            put(&b, a[0].block + at, (size_t)(pos - at));
            out->count++;
        }
    }
    if (!b.ok) {
        fs_input_attrs_free(out);
        return fs_error_set(FS_ERR_RUNTIME, "out of memory for the shared attributes");
    }
    return FS_OK;
}

int fs_input_attrs_number(const fs_input_attrs *a, const char *name, double *value)
{
    int64_t pos = 0;
    record r;
    for (int i = 0; i < a->count; i++) {
        if (next_record(a, &pos, &r) != 0)
            return 0;
        if (strcmp(r.name, name) != 0)
            continue;
        hsize_t points = 1;
        for (int k = 0; k < r.rank; k++)
            points *= r.dims[k];
        if (r.vlen_string || r.rank < 0 || points != 1)
            return 0;
        hid_t type = H5Tdecode(r.type);
        if (type < 0)
            return 0;
        H5T_class_t cls = H5Tget_class(type);
        size_t size = H5Tget_size(type);
        unsigned char buf[64]; /* converted in place: room for either type */
        int ok = (cls == H5T_INTEGER || cls == H5T_FLOAT) && size <= sizeof buf &&
                 r.data_bytes >= size;
        if (ok) {
            memcpy(buf, r.data, size);
            ok = H5Tconvert(type, H5T_NATIVE_DOUBLE, 1, buf, NULL, H5P_DEFAULT) >= 0;
        }
        H5Tclose(type);
        if (ok)
            memcpy(value, buf, sizeof *value);
        return ok;
    }
    return 0;
}

/* The record of one attribute (a number or a text) onto b. */
static int put_given(builder *b, const char *name, const char *value)
{
    char *end;
    double number = strtod(value, &end);
    int is_number = *value && !*end;
    hid_t type = is_number ? H5Tcopy(H5T_NATIVE_DOUBLE) : H5Tcopy(H5T_C_S1);
    size_t type_bytes = 0;
    if (type < 0 || (!is_number && (H5Tset_size(type, H5T_VARIABLE) < 0 ||
                                    H5Tset_cset(type, H5T_CSET_UTF8) < 0)) ||
        H5Tencode(type, NULL, &type_bytes) < 0) {
        H5Tclose(type);
        return -1;
    }
    unsigned char *encoded = malloc(type_bytes);
    int ok = encoded && H5Tencode(type, encoded, &type_bytes) >= 0;
    H5Tclose(type);
    uint32_t name_bytes = (uint32_t)strlen(name) + 1, tb = (uint32_t)type_bytes;
    int32_t rank = 0;
    uint8_t vlen = (uint8_t)!is_number;
    uint64_t bytes = is_number ? sizeof number : strlen(value) + 1;
    if (ok) {
        put(b, &name_bytes, sizeof name_bytes);
        put(b, name, name_bytes);
        put(b, &tb, sizeof tb);
        put(b, encoded, type_bytes);
        put(b, &rank, sizeof rank);
        put(b, &vlen, sizeof vlen);
        put(b, &bytes, sizeof bytes);
        put(b, is_number ? (const void *)&number : value, (size_t)bytes);
    }
    free(encoded);
    return ok ? 0 : -1;
}

fs_status fs_input_attrs_put(fs_input_attrs *a, const char *name, const char *value)
{
    fs_input_attrs out = {0};
    builder b = {&out, 0, 1};
    int64_t pos = 0;
    record r;
    for (int i = 0; i < a->count; i++) {
        int64_t at = pos;
        if (next_record(a, &pos, &r) != 0)
            b.ok = 0;
        if (!b.ok)
            break;
        if (strcmp(r.name, name) != 0) {
            put(&b, a->block + at, (size_t)(pos - at));
            out.count++;
        }
    }
    if (b.ok && put_given(&b, name, value) == 0 && b.ok) {
        out.count++;
        fs_input_attrs_free(a);
        *a = out;
        return FS_OK;
    }
    fs_input_attrs_free(&out);
    return fs_error_set(FS_ERR_RUNTIME, "--attr %s=%s: cannot be made an attribute", name, value);
}

/* ------------------------------------------------------------------ read */

/* Why type cannot be copied as bytes, or NULL. A variable-length string at
 * the top is carried as text (not asked here). *failed: HDF5 failed. */
static const char *uncopyable(hid_t type, int *failed)
{
    H5T_class_t cls = H5Tget_class(type);
    if (cls == H5T_NO_CLASS) {
        *failed = 1;
        return "";
    }
    if (cls == H5T_REFERENCE)
        return "a reference into the input file";
    if (cls == H5T_VLEN)
        return "a variable-length sequence";
    if (cls == H5T_STRING && H5Tis_variable_str(type) != 0)
        return "variable-length strings inside a compound or array";
    hid_t inner = H5I_INVALID_HID;
    const char *why = NULL;
    if (cls == H5T_ARRAY) {
        if ((inner = H5Tget_super(type)) < 0)
            *failed = 1;
        else
            why = uncopyable(inner, failed);
    } else if (cls == H5T_COMPOUND) {
        int n = H5Tget_nmembers(type);
        *failed |= n < 0;
        for (int i = 0; i < n && !why && !*failed; i++) {
            if ((inner = H5Tget_member_type(type, (unsigned)i)) < 0) {
                *failed = 1;
                break;
            }
            why = uncopyable(inner, failed);
            *failed |= H5Tclose(inner) < 0;
            inner = H5I_INVALID_HID;
        }
    }
    if (inner >= 0)
        *failed |= H5Tclose(inner) < 0;
    return why;
}

/* What H5Aiterate2 hands each attribute. */
typedef struct reader {
    const char *label;            /* "file:/dataset" */
    const char *const *skip;
    int verbose, quiet;
    char skipped[512];            /* fftshard's names met, for one --verbose note */
    builder b;
    fs_status st;
} reader;

/* The values of the open attribute aid (npoints of type) after the record's
 * head: as bytes, or a variable-length string's texts. */
static fs_status put_values(reader *r, hid_t aid, hid_t type, hssize_t npoints, int vlen_string)
{
    size_t size = H5Tget_size(type);
    void *values = calloc((size_t)npoints, vlen_string ? sizeof(char *) : size);
    fs_status ret = FS_OK;
    if (!values)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory reading the attributes of %s", r->label);
    if (H5Aread(aid, type, values) < 0) {
        free(values);
        return FS_ERR_INPUT; /* the caller's message */
    }
    if (vlen_string) {
        char **texts = values;
        uint64_t bytes = 0;
        for (hssize_t i = 0; i < npoints; i++)
            bytes += (texts[i] ? strlen(texts[i]) : 0) + 1;
        put(&r->b, &bytes, sizeof bytes);
        for (hssize_t i = 0; i < npoints; i++) {
            put(&r->b, texts[i] ? texts[i] : "", (texts[i] ? strlen(texts[i]) : 0) + 1);
            if (texts[i] && H5free_memory(texts[i]) < 0)
                ret = FS_ERR_INPUT;
        }
    } else {
        uint64_t bytes = (uint64_t)npoints * size;
        put(&r->b, &bytes, sizeof bytes);
        put(&r->b, values, (size_t)bytes);
    }
    free(values);
    return ret;
}

/* The record of the open attribute aid (type: a transient copy of its
 * type), or a note saying why it is left out. */
static fs_status put_attribute(reader *r, const char *name, hid_t aid, hid_t type, hid_t space)
{
    int failed = 0;
    int vlen_string = H5Tget_class(type) == H5T_STRING && H5Tis_variable_str(type) > 0;
    const char *why = vlen_string ? NULL : uncopyable(type, &failed);
    H5S_class_t sclass = H5Sget_simple_extent_type(space);
    int rank = H5Sget_simple_extent_ndims(space);
    hssize_t npoints = H5Sget_simple_extent_npoints(space);
    size_t size = H5Tget_size(type);
    hsize_t dims[H5S_MAX_RANK];
    if (failed || sclass == H5S_NO_CLASS || rank < 0 || npoints < 0 || size == 0 ||
        H5Sget_simple_extent_dims(space, dims, NULL) < 0)
        return FS_ERR_INPUT;
    double payload = (double)npoints * (double)(vlen_string ? 16 : size);
    char too_large[96];
    if (!why && payload > FS_ATTR_MAX_BYTES) {
        snprintf(too_large, sizeof too_large, "%.0f bytes, more than the %d an attribute may hold",
                 payload, FS_ATTR_MAX_BYTES);
        why = too_large;
    }
    if (why) {
        if (!r->quiet)
            fs_note("warning: %s: attribute %s not copied to the result: %s", r->label, name, why);
        return FS_OK;
    }
    size_t type_bytes = 0;
    if (H5Tencode(type, NULL, &type_bytes) < 0 || type_bytes == 0)
        return FS_ERR_INPUT;
    unsigned char *encoded = malloc(type_bytes);
    if (!encoded)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory reading the attributes of %s", r->label);
    if (H5Tencode(type, encoded, &type_bytes) < 0) {
        free(encoded);
        return FS_ERR_INPUT;
    }
    uint32_t name_bytes = (uint32_t)strlen(name) + 1, tb = (uint32_t)type_bytes;
    int32_t rank32 = sclass == H5S_NULL ? -1 : sclass == H5S_SCALAR ? 0 : rank;
    uint8_t vlen = (uint8_t)vlen_string;
    put(&r->b, &name_bytes, sizeof name_bytes);
    put(&r->b, name, name_bytes);
    put(&r->b, &tb, sizeof tb);
    put(&r->b, encoded, type_bytes);
    free(encoded);
    put(&r->b, &rank32, sizeof rank32);
    for (int k = 0; k < rank32; k++) {
        uint64_t d = dims[k];
        put(&r->b, &d, sizeof d);
    }
    put(&r->b, &vlen, sizeof vlen);
    fs_status ret = FS_OK;
    if (npoints > 0 && sclass != H5S_NULL) {
        ret = put_values(r, aid, type, npoints, vlen_string);
    } else {
        uint64_t none = 0;
        put(&r->b, &none, sizeof none);
    }
    r->b.a->count += ret == FS_OK;
    return ret;
}

static herr_t read_one(hid_t did, const char *name, const H5A_info_t *info, void *data)
{
    (void)info;
    reader *r = data;
    for (const char *const *s = r->skip; s && *s; s++)
        if (strcmp(*s, name) == 0) {
            size_t used = strlen(r->skipped);
            snprintf(r->skipped + used, sizeof r->skipped - used, "%s%s", used ? ", " : "", name);
            return 0;
        }
    hid_t aid = H5Aopen(did, name, H5P_DEFAULT);
    hid_t ftype = aid >= 0 ? H5Aget_type(aid) : H5I_INVALID_HID;
    /* A transient copy: a committed (named) type cannot be encoded. */
    hid_t type = ftype >= 0 ? H5Tcopy(ftype) : H5I_INVALID_HID;
    hid_t space = aid >= 0 ? H5Aget_space(aid) : H5I_INVALID_HID;
    fs_status ret = type >= 0 && space >= 0 ? put_attribute(r, name, aid, type, space) : FS_ERR_INPUT;
    if (ret == FS_ERR_INPUT && fs_error_status() == FS_OK)
        ret = fs_h5_fail(FS_ERR_INPUT, "%s: cannot read attribute %s", r->label, name);
    r->st = fs_h5_close_ids(ret, r->label, 4, space, type, ftype, aid);
    if (r->st == FS_OK && !r->b.ok)
        r->st = fs_error_set(FS_ERR_RUNTIME, "out of memory reading the attributes of %s", r->label);
    return r->st == FS_OK ? 0 : -1;
}

fs_status fs_h5_attrs_read(const char *file, const char *dataset, const char *const *skip,
                           int verbose, int quiet, fs_input_attrs *a)
{
    char label[2 * 1024 + 2];
    snprintf(label, sizeof label, "%s:%s", file, dataset);
    memset(a, 0, sizeof *a);
    reader r = {label, skip, verbose, quiet, "", {a, 0, 1}, FS_OK};
    hid_t fid = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t did = fid >= 0 ? H5Dopen2(fid, dataset, H5P_DEFAULT) : H5I_INVALID_HID;
    fs_status ret = FS_OK;
    if (did < 0)
        ret = fs_h5_fail(FS_ERR_INPUT, "%s: cannot open it to read its attributes", label);
    else if (H5Aiterate2(did, H5_INDEX_NAME, H5_ITER_INC, NULL, read_one, &r) < 0)
        ret = r.st != FS_OK ? r.st
                            : fs_h5_fail(FS_ERR_INPUT, "%s: cannot list its attributes", label);
    ret = fs_h5_close_ids(ret, label, 2, did, fid);
    if (ret == FS_OK && verbose && r.skipped[0])
        fs_note("%s: not copied, the result has its own: %s", label, r.skipped);
    if (ret != FS_OK)
        fs_input_attrs_free(a);
    return ret;
}

/* ------------------------------------------------------------------ carry */

fs_status fs_h5_attrs_bcast(MPI_Comm comm, int root, fs_input_attrs *a)
{
    int rank;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed"));
    int64_t head[2] = {a->bytes, a->count};
    fs_status st = fs_bcast_bytes(comm, root, head, sizeof head);
    if (st != FS_OK)
        return st;
    fs_status mine = FS_OK;
    if (rank != root) {
        a->bytes = head[0];
        a->count = (int)head[1];
        a->block = head[0] ? malloc((size_t)head[0]) : NULL;
        if (head[0] && !a->block)
            mine = fs_error_set(FS_ERR_RUNTIME, "out of memory receiving %lld bytes of attributes",
                                (long long)head[0]);
    }
    if ((st = fs_error_agree(comm, mine)) == FS_OK && head[0])
        st = fs_bcast_bytes(comm, root, a->block, head[0]);
    if (st != FS_OK && rank != root)
        fs_input_attrs_free(a);
    return st;
}

/* ------------------------------------------------------------------ write */

/* One record onto did. */
static fs_status write_record(hid_t did, const record *rec, const char *where)
{
    hid_t type = H5Tdecode(rec->type);
    hid_t space = rec->rank < 0 ? H5Screate(H5S_NULL)
                  : rec->rank == 0 ? H5Screate(H5S_SCALAR)
                                   : H5Screate_simple(rec->rank, rec->dims, NULL);
    hid_t attr = H5I_INVALID_HID;
    hssize_t npoints = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
    fs_status ret = FS_OK;
    /* Own memory, aligned; a variable-length string's pointers into it. */
    void *values = rec->data_bytes ? malloc(rec->data_bytes) : NULL;
    char **texts = rec->vlen_string && npoints > 0 ? calloc((size_t)npoints, sizeof *texts) : NULL;
    if ((rec->data_bytes && !values) || (rec->vlen_string && npoints > 0 && !texts)) {
        ret = fs_error_set(FS_ERR_RUNTIME, "out of memory writing attribute %s", rec->name);
    } else if (type < 0 || space < 0 || npoints < 0 ||
               (attr = H5Acreate2(did, rec->name, type, space, H5P_DEFAULT, H5P_DEFAULT)) < 0) {
        ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot write attribute %s", where, rec->name);
    } else if (rec->data_bytes) {
        memcpy(values, rec->data, rec->data_bytes);
        const char *p = values, *end = p + rec->data_bytes;
        for (hssize_t i = 0; texts && i < npoints && p < end; i++) {
            texts[i] = (char *)p;
            p += strlen(p) + 1;
        }
        if (H5Awrite(attr, type, texts ? (void *)texts : values) < 0)
            ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot write attribute %s", where, rec->name);
    }
    free(texts);
    free(values);
    return fs_h5_close_ids(ret, where, 3, attr, space, type);
}

fs_status fs_h5_attrs_write(hid_t did, const fs_input_attrs *a, const char *where)
{
    int64_t pos = 0;
    fs_status ret = FS_OK;
    for (int i = 0; i < a->count && ret == FS_OK; i++) {
        record rec;
        if (next_record(a, &pos, &rec) != 0)
            ret = fs_error_set(FS_ERR_RUNTIME, "%s: the copied attributes are damaged", where);
        else
            ret = write_record(did, &rec, where);
    }
    return ret;
}
