/* SPDX-License-Identifier: GPL-3.0-or-later */
/* h5common: see h5common.h. */
#include "config.h"

#include "io/h5common.h"

#include <libgen.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>

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

/* Below this, a failed write is taken to be its file system's being full. */
#define FULL_DISK_BYTES ((unsigned long long)1 << 20)

void fs_h5_full_disk_note(const char *disk_path, const char *reason, char *note, size_t size)
{
    struct statvfs fs;
    note[0] = '\0';
    if (!disk_path || strstr(reason, "No space left"))
        return;
    char *dir = strdup(disk_path);
    int found = statvfs(disk_path, &fs) == 0 || (dir && statvfs(dirname(dir), &fs) == 0);
    free(dir);
    unsigned long long left = (unsigned long long)fs.f_bavail * fs.f_frsize;
    if (found && left < FULL_DISK_BYTES)
        snprintf(note, size, ": No space left on device (%llu KiB free)", left / 1024);
}

static fs_status vfail(const char *disk_path, fs_status status, const char *fmt, va_list ap)
{
    char message[1536];
    vsnprintf(message, sizeof message, fmt, ap);
    /* Without HDF5's reason our message still stands on its own. */
    char reason[256] = "";
    if (H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_error, reason) < 0)
        reason[0] = '\0';
    if (fs_error_verbose() && fs_error_status() == FS_OK) {
        fprintf(stderr, "%s: HDF5 error stack for: %s\n", fs_error_program(), message);
        if (H5Eprint2(H5E_DEFAULT, stderr) < 0)
            fprintf(stderr, "%s: (HDF5 cannot print its error stack)\n", fs_error_program());
    }
    char note[96];
    fs_h5_full_disk_note(disk_path, reason, note, sizeof note);
    if (reason[0])
        return fs_error_set(status, "%s%s (HDF5: %s)", message, note, reason);
    return fs_error_set(status, "%s%s", message, note);
}

fs_status fs_h5_fail(fs_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fs_status ret = vfail(NULL, status, fmt, ap);
    va_end(ap);
    return ret;
}

fs_status fs_h5_fail_writing(const char *disk_path, fs_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fs_status ret = vfail(disk_path, status, fmt, ap);
    va_end(ap);
    return ret;
}

/* Close one handle; the kind of object it is, for the message, in *kind. */
static herr_t close_one(hid_t id, const char **kind)
{
    switch (H5Iget_type(id)) {
    case H5I_FILE: *kind = "file"; return H5Fclose(id);
    case H5I_GROUP: *kind = "group"; return H5Gclose(id);
    case H5I_DATASET: *kind = "dataset"; return H5Dclose(id);
    case H5I_DATASPACE: *kind = "dataspace"; return H5Sclose(id);
    case H5I_DATATYPE: *kind = "datatype"; return H5Tclose(id);
    case H5I_ATTR: *kind = "attribute"; return H5Aclose(id);
    case H5I_GENPROP_LST: *kind = "property list"; return H5Pclose(id);
    default: *kind = "object of an unknown kind"; return -1;
    }
}

fs_status fs_h5_close_ids(fs_status ret, const char *where, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        hid_t id = va_arg(ap, hid_t);
        const char *kind = "object";
        if (id >= 0 && close_one(id, &kind) < 0 && ret == FS_OK)
            ret = fs_h5_fail(FS_ERR_RUNTIME, "%s: cannot close an HDF5 %s", where, kind);
    }
    va_end(ap);
    return ret;
}

fs_status fs_h5_clear_errors(fs_status ret)
{
    if (H5Eclear2(H5E_DEFAULT) < 0 && ret == FS_OK)
        return fs_error_set(FS_ERR_RUNTIME, "cannot empty HDF5's error stack");
    return ret;
}

/* ROMIO's names of the file systems it has drivers for, by statfs magic;
 * any other is "ufs:", the driver ROMIO falls back on. */
static const struct {
    long magic;
    const char *prefix;
} romio_prefixes[] = {
    {0x6969, "nfs:"},          /* NFS_SUPER_MAGIC */
    {0x0BD00BD0, "lustre:"},   /* LL_SUPER_MAGIC */
    {0x47504653, "gpfs:"},     /* GPFS_SUPER_MAGIC */
};

/* Whether this ROMIO was built with the driver of prefix: it refuses an
 * unknown one with MPI_ERR_IO before it looks at the file, where a missing
 * file gives another error class. Asked once per prefix, on this rank. */
static int romio_has_driver(size_t i)
{
    static int known[sizeof romio_prefixes / sizeof romio_prefixes[0]]; /* 0 unknown, 1 yes, 2 no */
    if (!known[i]) {
        char probe[64];
        snprintf(probe, sizeof probe, "%s/proc/self/fftshard-no-such-file", romio_prefixes[i].prefix);
        MPI_File fh;
        int err = MPI_File_open(MPI_COMM_SELF, probe, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), cls = MPI_ERR_IO;
        if (err == MPI_SUCCESS) {
            MPI_File_close(&fh);
            cls = MPI_SUCCESS;
        } else if (MPI_Error_class(err, &cls) != MPI_SUCCESS) {
            cls = MPI_ERR_IO;
        }
        known[i] = cls == MPI_ERR_IO ? 2 : 1;
    }
    return known[i] == 1;
}

/* The ROMIO prefix of the file system that holds path (or, when path does
 * not exist yet, its directory). */
static const char *romio_prefix(const char *path)
{
    struct statfs fs;
    int found = statfs(path, &fs) == 0;
    if (!found) {
        char *copy = strdup(path);
        found = copy && statfs(dirname(copy), &fs) == 0;
        free(copy);
    }
    for (size_t i = 0; found && i < sizeof romio_prefixes / sizeof romio_prefixes[0]; i++)
        if ((long)fs.f_type == romio_prefixes[i].magic && romio_has_driver(i))
            return romio_prefixes[i].prefix;
    return "ufs:";
}

/* Whether this MPI-IO strips a file-system prefix from names as ROMIO
 * does: it opens "ufs:/dev/null" as /dev/null, where Open MPI's OMPIO
 * looks for a directory named "ufs:" and finds none. Asked once. */
static int mpio_takes_prefixes(void)
{
    static int known; /* 0 unknown, 1 yes, 2 no */
    if (!known) {
        char probe[] = "ufs:/dev/null";
        MPI_File fh;
        known = 2;
        if (MPI_File_open(MPI_COMM_SELF, probe, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) ==
            MPI_SUCCESS) {
            MPI_File_close(&fh);
            known = 1;
        }
    }
    return known == 1;
}

void fs_h5_choose_mpio(void)
{
#ifdef OMPI_MAJOR_VERSION
    if (!getenv("OMPI_MCA_io"))
        setenv("OMPI_MCA_io", "romio321", 1);
#endif
}

fs_status fs_h5_mpio_name(const char *path, char **name)
{
    const char *prefix = strchr(path, ':') && mpio_takes_prefixes() ? romio_prefix(path) : "";
    size_t len = strlen(prefix) + strlen(path) + 1;
    if (!(*name = malloc(len)))
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    snprintf(*name, len, "%s%s", prefix, path);
    return FS_OK;
}

fs_status fs_h5_element_type(fs_dtype t, int native, hid_t *type)
{
    int single = t == FS_DTYPE_FLOAT32 || t == FS_DTYPE_COMPLEX64;
    hid_t scalar = native ? (single ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE)
                          : (single ? H5T_IEEE_F32LE : H5T_IEEE_F64LE);
    const char *what = native ? "memory" : "file";
    *type = H5I_INVALID_HID;
    if (t == FS_DTYPE_FLOAT32 || t == FS_DTYPE_FLOAT64 || t == FS_DTYPE_INTEGER) {
        if ((*type = H5Tcopy(scalar)) < 0)
            return fs_h5_fail(FS_ERR_RUNTIME, "cannot make the HDF5 %s type of %s elements", what,
                              fs_dtype_name(t));
        return FS_OK;
    }
    size_t half = single ? sizeof(float) : sizeof(double);
    hid_t c = H5Tcreate(H5T_COMPOUND, 2 * half);
    if (c < 0 || H5Tinsert(c, "r", 0, scalar) < 0 || H5Tinsert(c, "i", half, scalar) < 0) {
        fs_status ret = fs_h5_fail(FS_ERR_RUNTIME, "cannot make the HDF5 %s type of %s elements",
                                   what, fs_dtype_name(t));
        return fs_h5_close_ids(ret, "an element type", 1, c);
    }
    *type = c;
    return FS_OK;
}
