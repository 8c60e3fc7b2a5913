/* SPDX-License-Identifier: GPL-3.0-or-later */
/* snapshot: what a particle snapshot's files say of themselves, read by
 * rank 0.
 *
 * Simulation codes (Gadget-4, SWIFT, AREPO) write a snapshot as one or
 * several HDF5 files, each holding the tables of its particles by type
 * (/PartType0 ... /PartType5: Coordinates N x 3, Masses, ...) and a
 * /Header group whose attributes give the box (BoxSize: one length, or one
 * per axis), the particles of each type in the whole snapshot
 * (NumPart_Total, NumPart_Total_HighWord its upper 32 bits), in the file
 * (NumPart_ThisFile) and the number of files (NumFilesPerSnapshot). This
 * module reads those attributes into plain data (any integer or float
 * type), and tells a particle table from a field when a dataset is probed
 * (the warning that names --paint). Owns nothing. */
#ifndef FS_SNAPSHOT_H
#define FS_SNAPSHOT_H

#include <stdint.h>

#include "core/errors.h"
#include "io/h5probe.h"

#define FS_SNAPSHOT_TYPES 6

/* One file's /Header; every count that is absent is -1. */
typedef struct fs_snapshot_header {
    int present;                          /* the file has a /Header group */
    int nbox;                             /* BoxSize: 0 absent, 1 (every axis) or per axis */
    double box[3];
    int64_t total[FS_SNAPSHOT_TYPES];     /* NumPart_Total (+ HighWord << 32) */
    int64_t this_file[FS_SNAPSHOT_TYPES]; /* NumPart_ThisFile */
    int64_t nfiles;                       /* NumFilesPerSnapshot */
} fs_snapshot_header;

/* Rank 0 only (serial): file's /Header (h->present 0 without one).
 * FS_ERR_INPUT naming the file and the attribute when one is there but
 * cannot be what it says (not numbers, BoxSize not positive and finite,
 * more than 3 lengths or FS_SNAPSHOT_TYPES counts, a negative count). */
fs_status fs_snapshot_header_read(const char *file, fs_snapshot_header *h);

/* The particle type of a dataset path "/PartTypeK/NAME": K, else -1. */
int fs_snapshot_part_type(const char *dataset);

/* h5probe's question of an open file fid (an hid_t) and its probed
 * dataset: whether it is a particle table (2-D with 1 to 3 columns, in a
 * PartType group, the file holding a /Header): info->particle_table.
 * Asking never fails: what cannot be read is no table. */
void fs_snapshot_mark(int64_t fid, fs_input_info *info);

#endif
