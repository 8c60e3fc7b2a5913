/* SPDX-License-Identifier: GPL-3.0-or-later */
/* footprint: the memory per rank of a run, from arithmetic alone.
 *
 * For a transform request and an exchange strategy: the data buffer, the
 * exchange plans' own buffers (every plan is made before the run and keeps
 * its buffers, so the exchanges' scratch adds up; with --check the inverse
 * exchanges' too, from each strategy's estimate()), FFTW's plans and the
 * I/O (the overlapped write's staging buffers included), the libraries,
 * and with --cross the first input's result kept while the second is
 * transformed, for the rank that needs most. The dry run prints it; the default strategy keeps the strategies whose footprint fits the
 * memory per rank. No MPI, nothing allocated at full size. */
#ifndef FS_FOOTPRINT_H
#define FS_FOOTPRINT_H

#include <stdint.h>
#include "core/errors.h"
#include "exchange/exchange.h"
#include "plan/transform.h"

typedef struct fs_footprint {
    const fs_exchange_ops *ops;        /* NULL: no exchange */
    int64_t array_elems;               /* the data buffer */
    uint64_t messages[FS_MAX_STAGES];  /* per exchange, the most any rank sends */
    /* Bytes per rank, resident (huge pages whole), of the rank that needs
     * most: total_bytes is the sum of the five; exchange_bytes without
     * the inverse's that take the place of kept results (keeps.gone). */
    int64_t array_bytes, exchange_bytes, plans_io_bytes, library_bytes, total_bytes;
    int64_t cross_bytes;               /* the kept copies of forward results (keeps.cross) */
    int64_t green_bytes;               /* --boundary=free: the Green's function's table */
    int64_t stage_sums_bytes;          /* of the stages' own, the sums per bin (keeps) */
    int64_t stage_bytes;               /* the stages' own: keeps.stage_bytes, and what their
                                          end adds to the larger of it and cross_bytes */
    int64_t source_phase_bytes;        /* the whole while a source makes the boxes
                                          (fs_footprint_add_source; 0: none) */
    int64_t before_bytes;              /* what is resident before the first INPUT's boxes
                                          are made (fs_footprint_add_source's base) */
} fs_footprint;

/* What a run keeps besides one transform's own memory. */
typedef struct fs_footprint_keeps {
    int check;          /* --check: the inverse plans, and the input read again in pieces */
    int cross;          /* how many forward results are kept (each the rank's last-stage box):
                           --vector's spectra (vector.h), else 1 or 0 for
                           --cross, --correlate (two INPUTs), --convolve, --phase-correlate:
                           the first input's result (the rank's last-stage box) */
    int undo;           /* --correlation-function: the inverse plans */
    int64_t stage_bytes; /* what the stages hold of their own per rank, the same on every
                            rank: sums per bin (fs_stages_footprint, stage.h) */
    int64_t stage_end_bytes; /* what they hold at the end alone, once the kept results
                                are freed: the reduction's copy, the tables written */
    int later_inputs;   /* INPUTs read after the first's result is kept (its turn's
                           exchange buffers resident then) */
    int unwritten;      /* a round trip that writes nothing (--spectrum-only): its
                           inverse never runs, its exchanges' buffers never touched */
    int gone;           /* of the kept results, those freed before the inverse's first
                           exchange (fs_stage_needs.buffers_gone): the inverse exchanges'
                           buffers, untouched till then, take their place */
    int64_t stage_sums_bytes; /* of stage_bytes, the sums per bin: untouched pages till
                                 the first result is binned (fs_stage_bytes.sums) */
} fs_footprint_keeps;

/* The footprint of a run of rq (planned as ops needs it: with block hooks
 * for a strategy that runs them) with strategy ops; ops NULL, or a request
 * without exchange: no exchange (out->ops NULL), the rest still counted.
 * keeps: what --check, the kept results and --correlation-function need
 * besides. io_thread: the I/O overlaps the FFTs (fs_node.io_thread), the staging
 * buffers of the write in pieces count (fs_pieces_staging_bytes: also
 * where the run then writes as a whole, with shard output or spectra; not
 * for one stage whose input map is plain, which the run reads in pieces
 * unless HDF5 stores the input otherwise, chunked or filtered). */
fs_status fs_footprint_of(const fs_transform_request *rq, const fs_exchange_ops *ops,
                          const fs_exchange_params *params, const fs_footprint_keeps *keeps,
                          int io_thread, fs_footprint *out);

/* A source that makes the first-stage boxes instead of the read (--paint's
 * particles, sources/) and holds `bytes` of buffers while it does: that
 * comes before the transform, with what is resident then (before_bytes:
 * the libraries, the data buffer, FFTW's plans, the kept results, the
 * stages' tables, of the exchanges' buffers the second array that their
 * planning touched; for an INPUT after the first, whose turn comes after
 * the first's exchanges and binning, all of the exchanges' buffers and the
 * sums per bin); it frees them before the transform. The total becomes the
 * larger of that phase (source_phase_bytes) and the rest. */
void fs_footprint_add_source(fs_footprint *fp, int64_t bytes);

/* The parts of every run's memory that the out-of-core plan counts too:
 * what MPI, HDF5 and FFTW hold (measured), FFTW's plans and HDF5's buffers
 * of a real size, and a buffer of `bytes` as resident (huge pages whole). */
int64_t fs_footprint_library_bytes(void);
int64_t fs_footprint_plans_bytes(void);
int64_t fs_footprint_resident(int64_t bytes);

#endif
