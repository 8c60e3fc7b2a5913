/* SPDX-License-Identifier: GPL-3.0-or-later */
/* h5xfer: what h5read.c and h5write.c share: how a read or a write of a
 * map (iomap.h) moves between a dataset and memory (the MPI-IO property lists,
 * the map cut into pieces of bounded size (one call each, every rank making
 * as many calls), the hyperslabs of a piece (an input's slice and a folded
 * 1-D view included), strided memory staged through a packed buffer, the
 * values read counted for NaN and Inf, progress and the slowed reads of the
 * tests), a virtual dataset's mappings and a dataset's raw layout. Private
 * to io/: the interface is h5io.h. Owns nothing past a call. */
#ifndef FS_H5XFER_H
#define FS_H5XFER_H

#include <hdf5.h>
#include <mpi.h>

#include "io/h5io.h"

/* File access through MPI-IO on comm. */
fs_status fs_h5_mpio_fapl(MPI_Comm comm, hid_t *fapl);
/* Transfer properties: independent requests, or collective ones. */
fs_status fs_h5_transfer_dxpl(int collective, hid_t *dxpl);

/* A map's pieces, one call each: the box cut along `axis` into runs of at
 * most per_piece indices, for every index of the axes before it, so that a
 * piece holds at most the bytes asked for (one index of the last axis at
 * least; a folded view is cut along its rows only). Every rank makes ncalls
 * calls, the most pieces of any rank; its calls past its own pieces select
 * nothing. */
typedef struct fs_h5_pieces {
    int axis;
    int64_t per_piece; /* indices of axis per piece */
    int64_t along;     /* pieces per line of axis */
    int64_t local;     /* this rank's pieces */
    int64_t max_elems; /* elements of the largest piece */
    int64_t ncalls;
} fs_h5_pieces;

/* This rank's pieces of at most piece_bytes of mem_type (no MPI). */
fs_h5_pieces fs_h5_plan_pieces(const fs_io_map *map, int64_t piece_bytes);

/* How a read or a write goes: the dataset, the memory type and transfer
 * properties, the bytes per call, and what messages name. */
typedef struct fs_h5_transfer {
    MPI_Comm comm;
    hid_t did, dxpl;
    int writing;
    int skip_empty;      /* a rank with nothing selected makes no call */
    int64_t piece_bytes; /* per call and rank */
    double pause_s;      /* after every call (FFTSHARD_SLOW_READ) */
    const char *name;    /* FILE or FILE:DATASET */
    const char *disk;    /* writes: the file on disk (is its file system full?) */
    int abandon_on_failure; /* collective writes: a failure ends the job (fs_h5_abandon) */
    fs_finite *finite;   /* reads: NaN and Inf counted here (NULL: not counted) */
    const fs_input_slice *slice; /* reads: the input's slice (NULL or not given: none) */
} fs_h5_transfer;

/* Collective: allocate the staging buffer (when the memory side is
 * strided) and agree on the number of calls: every rank learns of
 * another's failure here, before any call that the others would wait in. */
fs_status fs_h5_transfer_begin(const fs_h5_transfer *x, const fs_io_map *map, fs_h5_pieces *pc,
                               void **stage);

/* Every call of a read or a write (fs_h5_transfer_begin first): the pieces
 * of the map, between the dataset and data, through the staging buffer
 * when there is one. Progress counts the bytes of mem_type done on this
 * rank. */
fs_status fs_h5_transfer_run(const fs_h5_transfer *x, const fs_io_map *map, const fs_h5_pieces *pc,
                             void *stage, void *data, fs_io_progress progress, void *ctx);

/* Map the box set->boxes[i] of a virtual dataset of the given shape onto
 * the whole dataset `dataset` of set->files[i], for every i (--shards'
 * map file, --shard-output's master). */
fs_status fs_h5_set_mappings(hid_t dcpl, int ndim, const int64_t *shape, const fs_shard_set *set,
                             const char *dataset);

/* Whether the open dataset did is stored as fs_h5_raw describes, and
 * where; HDF5's refusals (an unallocated dataset has no offset) are no
 * error here. */
fs_status fs_h5_raw_layout(hid_t did, fs_dtype mem_type, fs_h5_raw *raw);

#endif
