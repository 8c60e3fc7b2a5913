/* SPDX-License-Identifier: GPL-3.0-or-later */
/* particles: a snapshot's particles painted on the mesh the ranks
 * transform, instead of a field read from a file (--paint): a source of
 * the run's first-stage boxes (sources/: what makes them instead of the
 * read).
 *
 * Rank 0 reads the snapshot's Header in every file (io/snapshot.h) and the
 * probe of each INPUT becomes the mesh's (fs_particles_probe): the box from
 * --box-size or the Header's BoxSize, the counts checked against the
 * tables. Then, for each INPUT, every rank reads an equal share of the
 * particle rows in rounds of bounded size (io/h5io.h's hyperslab reads,
 * one file or --shards), sends each particle to the rank whose first-stage
 * box holds its leftmost cell (one exchange per round, in pieces that fit
 * the rows each rank keeps waiting whatever the particles' distribution,
 * received straight into them), paints the ones it received with the
 * window on its box, and adds what fell on other ranks'
 * cells (the ghost cells past its box) to their owners at the end
 * (fs_particles_fill). The mesh holds delta = rho / mean(rho) - 1, the density
 * or the weighted sum (--paint-field). With --interlace a second mesh,
 * the particles shifted by half a cell, is painted in the same pass; the
 * stage that combines the two after the transform reads it from the
 * result (fs_painted).
 *
 * Conventions (fftshard(1), PAINTING): mesh point i of an axis of n points
 * and length L is at x = i L / n (nbodykit's and Pylians' convention);
 * positions wrap periodically into [0, L); a particle at u = x n / L in
 * mesh units gives cell i the weight W(u - i) of its window: ngp (p = 1),
 * cic (2), tsc (3) and pcs (4), the B-splines of order p, whose cells are
 * the p from floor(u + 1/2) - (p - 1) / 2 on for odd p, from floor(u) -
 * (p / 2 - 1) on for even p (pmesh's).
 *
 * Owns each INPUT's particle tables (their files, the weights' dataset),
 * what painting them made, and the shifted mesh; the working buffer and
 * the decomposition are the caller's. No stage is known here. */
#ifndef FS_PARTICLES_H
#define FS_PARTICLES_H

#include <mpi.h>
#include <stdint.h>

#include "core/errors.h"
#include "core/optable.h"
#include "core/progress.h"
#include "core/timers.h"
#include "io/h5probe.h"
#include "io/shards.h"
#include "plan/decomp.h"
#include "plan/transform.h"

#define FS_PAINT_MAX_DIMS 3

/* What the mesh holds (--paint-field). */
typedef enum fs_paint_field {
    FS_PAINT_DELTA,     /* rho / mean(rho) - 1, rho the weighted sum per cell */
    FS_PAINT_DENSITY,   /* the weighted sum per unit volume: sum / (V / N) */
    FS_PAINT_SUM,       /* the weighted sum per cell */
} fs_paint_field;

/* The options (the lines live with the stage that reports the painting:
 * the stages share them). */
typedef struct fs_particles_options {
    int window;                       /* --paint: the window's order p, 1 ngp .. 4 pcs (0: a
                                         field is read, nothing painted) */
    int mesh_ndim;                    /* --mesh: 1 (every axis) or one length per axis */
    int64_t mesh[FS_PAINT_MAX_DIMS];
    char *weights;                    /* --weights=DATASET (NULL: every particle weighs 1) */
    int field;                        /* --paint-field (fs_paint_field) */
    int interlace;                    /* --interlace */
} fs_particles_options;

/* The accepted names of --paint and --paint-field, and their values'. */
extern const fs_opt_name fs_paint_windows[], fs_paint_fields[];
const char *fs_paint_window_name(int window);
const char *fs_paint_field_name(int field);
/* --mesh's handler: N or AxB[xC], each from 1 to 2^31 - 1, into the
 * fs_particles_options that is the line's field. */
fs_status fs_paint_mesh_option(const fs_opt *o, const char *arg, void *section);
/* The options among themselves and against the rest of the command line
 * (FS_ERR_USAGE): --mesh, --weights, --paint-field, --interlace only with
 * --paint, which needs --mesh and is not for --inverse or --check. */
fs_status fs_particles_options_check(const fs_particles_options *o, int inverse, int check);
void fs_particles_options_free(fs_particles_options *o);
/* The mesh of the positions pos (N x D, or N), named name: its axes *ndim
 * and shape mesh (out). FS_ERR_INPUT: not a table of real positions;
 * FS_ERR_USAGE: a --mesh of other dimensions. */
fs_status fs_particles_mesh_shape(const fs_particles_options *o, const fs_input_info *pos,
                                  const char *name, int *ndim, int64_t *mesh);
/* The dry run's: collective, INPUT probed (fs_inputs_probe) and with
 * --paint, the table of positions become its mesh of float64, its rows in
 * info->painted_rows (no Header read; the status is the same on every
 * rank); and the bytes of fs_particles_bytes for a mesh of ndim axes and a
 * table of `rows` particles (0 without --paint). */
fs_status fs_particles_dry_probe(MPI_Comm comm, const fs_particles_options *o, int sharded,
                                 const fs_location *inputs, fs_input_info *info,
                                 fs_shard_set *shards);
int64_t fs_particles_dry_bytes(const fs_particles_options *o, int ndim, int64_t rows,
                               const fs_transform *t);

/* What painting one INPUT made: the same on every rank but where said. */
typedef struct fs_painted {
    int64_t particles;                /* painted */
    int64_t skipped;                  /* --allow-nonfinite: NaN or Inf positions, not painted */
    double weight_sum, weight_sum2;   /* of the particles painted: sum w, sum w^2 */
    double shot_noise;                /* Poisson noise of the field's power in the spectra's
                                         units (with the box, V / N^2): V / N^2 a^2 sum w^2,
                                         a the field per weight (delta: N / sum w) */
    int field;                        /* fs_paint_field */
    double box[FS_PAINT_MAX_DIMS];    /* the box lengths used, and whence */
    const char *box_from;             /* "--box-size" or "the Header's BoxSize" */
    const char *positions;            /* FILE:DATASET of the positions as named */
    /* this rank's */
    void *shifted;                    /* --interlace: the mesh of the particles shifted by half
                                         a cell, laid out as the first stage's data */
    double read_s, paint_s;           /* reading the particles; sending and painting them */
    int64_t bytes_sent;               /* to other ranks: particles and ghost cells */
    int64_t received;                 /* particles painted here */
    int64_t rounds;                   /* rounds of the read */
} fs_painted;

typedef struct fs_particles fs_particles;

/* What the probe starts from. */
typedef struct fs_particles_args {
    MPI_Comm comm;
    const fs_particles_options *opts; /* window 0: a field is read, nothing to paint */
    int n;                            /* INPUTs */
    const fs_location *inputs;        /* as named */
    fs_input_info *infos;             /* out: each INPUT as probed (a particle table: its mesh) */
    int sharded;                      /* --shards */
    fs_shard_set *shards;             /* out: --shards' files (taken when painted: left empty) */
    int nbox;                         /* --box-size's lengths (0 or less: not given) */
    const double *box;                /* their values */
    int allow_nonfinite;              /* NaN and Inf positions skipped, weights painted */
} fs_particles_args;

/* Collective: rank 0 probes the INPUTs (fs_inputs_probe, every rank gets
 * infos and shards); without a window that is all, *out NULL. With one,
 * rank 0 reads every file's Header and the weights' probe, checks them
 * against the tables (FS_ERR_INPUT: a missing file, a Header that
 * disagrees, counts that do not match; FS_ERR_USAGE: no box, a --mesh of
 * other dimensions than the positions), and every rank gets the particle
 * tables and each INPUT's mesh (infos: float64 of the mesh's shape, named
 * "<group>/<field>", painted 1, the box the particles were wrapped in, the
 * Header's BoxSize unless given, as its box_size attribute for the stages). The status is agreed. Free *out with fs_particles_free (also
 * after a failure). */
fs_status fs_particles_probe(const fs_particles_args *a, fs_particles **out);
void fs_particles_free(fs_particles **p);

/* Collective: INPUT i's particles painted into data (complex elements of
 * t's precision, elems of them, the first stage's layout of t on d). The
 * caller times it as timers' read phase: what is not the reading moves to
 * its paint phase. NaN and Inf refused (status 3) unless the probe's
 * allow_nonfinite, and positions more than a period outside the box. Every rank returns the
 * same status and message (fs_error_agree_shared), for the caller to agree
 * and print. */
fs_status fs_particles_fill(fs_particles *p, int i, const fs_transform *t,
                            const fs_decomposition *d, void *data, int64_t elems,
                            fs_timers *timers, fs_progress *progress);

/* What painting INPUT i made (NULL before fs_particles_fill, or p NULL). */
const fs_painted *fs_particles_result(const fs_particles *p, int i);

/* The bytes a rank of t holds while it paints besides the working buffer
 * (the rounds' buffers, the ghost cells' tables; the shifted mesh is the
 * stage's to count), for the footprint: `rows` positions of ndim columns
 * with a weight or not, a window of order `window`. The buffers are
 * allocated for whole rounds but resident only as far as the rows fill
 * them: a rank's share of a table smaller than a round fills a part. */
int64_t fs_particles_bytes(int window, int ndim, int weighted, int interlace, int64_t rows,
                           const fs_transform *t);

#endif
