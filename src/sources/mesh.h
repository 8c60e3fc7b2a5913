/* SPDX-License-Identifier: GPL-3.0-or-later */
/* mesh: where this rank paints, private to sources/.
 *
 * The rank's part of the mesh is its first-stage box, laid out in the
 * working buffer as the read of a field would lay it out
 * (fs_transform_read_map: FFTW's padded real rows, real values in complex
 * slots, the 1-D four-step's rows and columns). A particle is painted by
 * the rank whose box holds its leftmost cell on the first mesh
 * (fs_paint_mesh_owner); of its p^D cells those past the box on a split
 * axis (at most p cells further, p with the shifted mesh) are ghost
 * cells, summed in a table keyed by the cell's index in the mesh and
 * added to their owners once every particle is painted
 * (fs_paint_mesh_ghosts). The table is sized for every cell a particle of
 * this rank can reach past the box, so it cannot fill up. Owns the
 * per-axis tables of offsets and owners and the ghost tables; the meshes'
 * memory is the caller's. */
#ifndef FS_PAINT_MESH_H
#define FS_PAINT_MESH_H

#include <mpi.h>
#include <stdint.h>

#include "core/errors.h"
#include "plan/decomp.h"
#include "plan/transform.h"

typedef struct fs_paint_mesh fs_paint_mesh;

typedef struct fs_paint_mesh_args {
    const fs_transform *t;
    const fs_decomposition *d;
    int window;                       /* the order p, 1 to 4 */
    int ndim;                         /* the mesh's axes, 1 to 3 */
    const int64_t *n;                 /* its shape */
    const double *box;                /* its box lengths */
    void *data[2];                    /* the mesh and (data[1] not NULL) the shifted one */
    int weighted;                     /* the rows have a weight after the coordinates */
    int64_t min_rows;                 /* the rows kept before painting: at least these */
} fs_paint_mesh_args;

/* Not collective. FS_ERR_RUNTIME when out of memory. */
fs_status fs_paint_mesh_new(const fs_paint_mesh_args *a, fs_paint_mesh **out);
void fs_paint_mesh_free(fs_paint_mesh **m);

/* The rank that paints a particle at x (ndim coordinates in [0, L)). */
int fs_paint_mesh_owner(const fs_paint_mesh *m, const double *x);

/* Particles to paint are received straight into the pending rows: rows
 * of ndim + weighted doubles, the ndim coordinates in [0, L), then with
 * weighted their weight (else 1). They are kept, in mesh units, until the
 * pending rows are full (about a row per PEND_CELLS cells of the box,
 * mesh.c), then ordered by cell and painted: particles painted in the
 * order of their cells find the mesh's cache lines in the cache, and each
 * line read serves several particles. */

/* The pending rows' capacity: the most that one reserve can ask. */
int64_t fs_paint_mesh_capacity(const fs_paint_mesh *m);

/* Where n more rows go (n at most the capacity): the pending ones are
 * painted first when they leave less room, *st (out) that painting's
 * status, FS_ERR_RUNTIME when a particle reaches a cell no other rank was
 * planned to own (a particle this rank does not own); the room is there
 * whatever the status. */
double *fs_paint_mesh_reserve(fs_paint_mesh *m, int64_t n, fs_status *st);

/* The n rows written where fs_paint_mesh_reserve said, taken to paint
 * (painted now if they fill the pending rows: that status). */
fs_status fs_paint_mesh_add(fs_paint_mesh *m, int64_t n);

/* The rows that can still wait before the pending ones are painted. */
int64_t fs_paint_mesh_room(const fs_paint_mesh *m);

/* The pending rows painted now (fs_paint_mesh_reserve's status). */
fs_status fs_paint_mesh_flush(fs_paint_mesh *m);

/* Collective: the pending particles painted, the ghost cells added to
 * their owners' meshes; *bytes_sent (out) what this rank sent. This rank's
 * status. */
fs_status fs_paint_mesh_ghosts(fs_paint_mesh *m, MPI_Comm comm, int64_t *bytes_sent);

/* Every cell of this rank's box of both meshes: v a + b. */
void fs_paint_mesh_scale(fs_paint_mesh *m, double a, double b);

/* The bytes of the ghost cells' tables and the pending rows (of stride
 * doubles, at least min_rows; resident as far as the at most `received`
 * rows a rank paints fill them: the particles are received into them) of
 * the rank of t that needs most, for a window of order p with the shifted
 * mesh or not: for the footprint. */
int64_t fs_paint_mesh_bytes(const fs_transform *t, int window, int shifted, int stride,
                            int64_t min_rows, int64_t received);

#endif
