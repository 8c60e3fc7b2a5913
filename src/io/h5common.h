/* SPDX-License-Identifier: GPL-3.0-or-later */
/* h5common: what h5probe, h5attrs and h5io share; for those modules only.
 *
 * HDF5 failures in our words (fs_h5_fail: our message, HDF5's innermost
 * reason in brackets, its whole error stack under --verbose), closing
 * handles with every result checked, emptying the error stack after a
 * call that was allowed to fail, and the HDF5 types of fftshard's
 * elements. Owns nothing: every hid_t it returns is the caller's to close. */
#ifndef FS_H5COMMON_H
#define FS_H5COMMON_H

#include <hdf5.h>
#include <string.h>

#include "core/errors.h"
#include "io/h5attrs.h"
#include "io/h5probe.h"

/* HDF5 1.12 renamed the object visit and info calls and identifies an
 * object by a token instead of an address; these name them in either. */
#if H5_VERSION_GE(1, 12, 0)
typedef H5O_info2_t fs_h5_oinfo;
#define fs_h5_visit(obj, op, data) H5Ovisit3(obj, H5_INDEX_NAME, H5_ITER_INC, op, data, H5O_INFO_BASIC)
#define fs_h5_info(obj, info) H5Oget_info3(obj, info, H5O_INFO_BASIC)
#define fs_h5_info_by_name(loc, name, info) H5Oget_info_by_name3(loc, name, info, H5O_INFO_BASIC, H5P_DEFAULT)
#define fs_h5_same_object(a, b) (memcmp(&(a)->token, &(b)->token, sizeof (a)->token) == 0)
#else
typedef H5O_info_t fs_h5_oinfo;
#define fs_h5_visit(obj, op, data) H5Ovisit2(obj, H5_INDEX_NAME, H5_ITER_INC, op, data, H5O_INFO_BASIC)
#define fs_h5_info(obj, info) H5Oget_info2(obj, info, H5O_INFO_BASIC)
#define fs_h5_info_by_name(loc, name, info) H5Oget_info_by_name2(loc, name, info, H5O_INFO_BASIC, H5P_DEFAULT)
#define fs_h5_same_object(a, b) ((a)->addr == (b)->addr)
#endif

/* An HDF5 call failed: record our message (fs_error_set) with HDF5's
 * innermost reason; with --verbose print HDF5's stack first. Returns status. */
fs_status fs_h5_fail(fs_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* fs_h5_fail for a write to the file at disk_path: when its file system is
 * (all but) full the message says "No space left on device", whatever
 * reason HDF5 gives. MPI-IO does not always pass ENOSPC on: a rank whose
 * share of a collective write another rank made sees "Other I/O error". */
fs_status fs_h5_fail_writing(const char *disk_path, fs_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Close the open ones among n handles (files, groups, datasets, dataspaces,
 * datatypes, attributes, property lists; negative ones are skipped), all of
 * them even when one fails. Returns ret when it is not FS_OK: the first
 * error stands. Otherwise FS_OK, or FS_ERR_RUNTIME with a message naming
 * `where` (a file or dataset, for the message) when a close failed. */
fs_status fs_h5_close_ids(fs_status ret, const char *where, int n, ...);

/* Empty HDF5's error stack after a call that was allowed to fail, so that a
 * later message does not quote its reason. Returns ret, or FS_ERR_RUNTIME
 * when ret is FS_OK and the stack cannot be emptied. */
fs_status fs_h5_clear_errors(fs_status ret);

/* The name under which MPI-IO (ROMIO or OMPIO) opens path, in *name (malloc'ed; the
 * caller frees it). ROMIO takes everything before a name's first colon for
 * a file-system prefix ("ufs:", "nfs:", "lustre:", ...) and strips it, so
 * "snap_12:00.h5" is refused and "ufs:x.h5" opens x.h5. A name with a colon
 * gets the prefix of the file system it is on (statfs, as ROMIO would
 * choose without one; "ufs:" when ROMIO lacks that driver), which makes the
 * rest literal; other names are given as they are, and so is every name
 * under an MPI-IO that takes names literally (Open MPI's OMPIO, which would
 * look for a directory "ufs:"; told apart by whether "ufs:/dev/null"
 * opens). Messages and attributes
 * keep the user's name. FS_ERR_RUNTIME when out of memory. */
fs_status fs_h5_mpio_name(const char *path, char **name);

/* When the file system of disk_path (or of its directory) is all but full
 * (under 1 MiB free) and reason does not say so already: in note, a note
 * that does (": No space left on device (N KiB free)"), else "". Open
 * MPI's ROMIO says only "input/output error" for a full disk. */
void fs_h5_full_disk_note(const char *disk_path, const char *reason, char *note, size_t size);

/* Before MPI_Init: under Open MPI, its ROMIO (io component romio321) for
 * MPI-IO unless the user chose one (OMPI_MCA_io): Open MPI 4.1's own
 * OMPIO returns success from a collective write that failed for a full
 * disk (fcoll vulcan; it only prints "fbtl_pwritev failed"), which would
 * commit a broken OUTPUT with status 0. Elsewhere it does nothing. */
void fs_h5_choose_mpio(void);

/* The HDF5 type of an element: native in memory (native nonzero), little-
 * endian IEEE in files; complex types are h5py's compound {r, i}, integers
 * float64. *type (out) is a new type the caller closes, negative after a
 * failure. */
fs_status fs_h5_element_type(fs_dtype t, int native, hid_t *type);

/* Collective when did is in an MPI-IO file: create on the dataset did every
 * attribute of a (h5attrs.h), with the type, shape and values read from
 * the input. `where` names the output in messages. */
fs_status fs_h5_attrs_write(hid_t did, const fs_input_attrs *a, const char *where);

#endif
