/* SPDX-License-Identifier: GPL-3.0-or-later */
/* mesh: see mesh.h. The mesh is seen through the "view" of the read map:
 * its own axes, or for the 1-D four-step the rows and columns of
 * fold_inner that the 1-D index j = row * fold_inner + column falls on.
 * Each view axis has a table of the memory offset of every index of the
 * rank's box, so a cell's place is a sum of table entries whatever the
 * layout (padded rows, real values in complex slots). */
#include "config.h"

#include "sources/mesh.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/collective.h"
#include "core/dtype.h"

#define MAX_P 4
#define SORT_BUCKETS 65536 /* cells of the first two axes the rows are ordered by */
#define ROW_MAX (3 + 1)    /* a row: the coordinates and the weight */
#define PEND_CELLS 4       /* the mesh's cells per pending row */
#define PEND_MIN_ROWS ((int64_t)1 << 16)
#define PEND_MAX_BYTES ((int64_t)256 << 20) /* each of the two buffers */
#define PAD 2              /* cells before index 0 in the tables of the fast kernels */

/* The ghost cells: open addressing, keys the cells' flat indices in the
 * mesh (-1: empty). */
typedef struct ghosts {
    int64_t *key;
    double *val;
    int64_t cap, used;
} ghosts;

struct fs_paint_mesh {
    int ndim, p, left, odd;              /* the window: order, cells before the central one */
    int64_t n[3];
    double nd[3], L[3];                  /* n_a and L_a: u = x n_a / L_a, as documented */
    int nmesh;
    void *data[2];
    int single;                          /* float elements, else double */
    int fold;                            /* 1-D four-step: the view is (rows, inner) */
    int64_t inner;
    int vdim;                            /* the view's axes */
    int64_t vn[3], start[3], count[3];   /* its shape; this rank's box in it */
    int64_t *off[3];                     /* memory offset of each index of the box, per axis */
    int P2;                              /* the grid's second dimension */
    int split[2];                        /* the view axis split over each grid dimension (-1) */
    int *owner[2];                       /* its index's coordinate in the grid */
    ghosts g[2];
    int stride, weighted;                /* the rows: the coordinates, then a weight or not */
    double *pend;                        /* rows in mesh units, u = x n / L, not painted yet */
    int64_t pend_n, pend_cap;
    double *sorted;                      /* them in the order to paint them (sort_pending) */
    int64_t nb[2], *at;                  /* its buckets per axis, their places */
    double per[2];                       /* buckets per cell */
    /* The fast kernels' tables (3-D, no fold): per axis, for the cell of
     * index i - PAD (i from 0, wrapped), its offset in the box or -1, and
     * whether the p cells from it are all in the box. */
    int64_t *cell_off[3];
    unsigned char *all_in[3];
};

/* Where one particle lands on one axis (the 1-D four-step: on the mesh):
 * p cells, their weights, whether each is in the box, its offset there. */
typedef struct stencil {
    int np[3];
    double w[3][MAX_P];
    int64_t idx[3][MAX_P];               /* the cell's index in the mesh (fold: j) */
    int64_t off[3][MAX_P];
    int in[3][MAX_P];
    int all_in;
} stencil;

static int64_t wrap(int64_t i, int64_t n)
{
    if (i >= 0 && i < n)
        return i;
    i %= n;
    return i < 0 ? i + n : i;
}

/* A coordinate in mesh units, u = x n / L (computed once per particle:
 * the owner and the painting must agree on it to the last bit). */
static double cell_units(const fs_paint_mesh *m, double x, int a)
{
    return x * m->nd[a] / m->L[a];
}

/* The leftmost cell of a particle at u mesh units (not wrapped), and its
 * distance d from the central cell of an odd window, from the cell on its
 * left of an even one. */
static int64_t base_of(const fs_paint_mesh *m, double u, double *d)
{
    double c = floor(m->odd ? u + 0.5 : u);
    *d = u - c;
    return (int64_t)c - m->left;
}

/* The window's weights at distance d (pmesh's B-splines); inlined with
 * a constant p by the fast kernels. */
static inline void weights(int p, double d, double *w)
{
    double e = 1.0 - d;
    switch (p) {
    case 1:
        w[0] = 1.0;
        break;
    case 2:
        w[0] = e;
        w[1] = d;
        break;
    case 3:
        w[0] = 0.5 * (0.5 - d) * (0.5 - d);
        w[1] = 0.75 - d * d;
        w[2] = 0.5 * (0.5 + d) * (0.5 + d);
        break;
    default:
        w[0] = e * e * e / 6.0;
        w[1] = (4.0 - 6.0 * d * d + 3.0 * d * d * d) / 6.0;
        w[2] = (4.0 - 6.0 * e * e + 3.0 * e * e * e) / 6.0;
        w[3] = d * d * d / 6.0;
        break;
    }
}

/* The particle at u (mesh units) on the mesh shifted by `shift` cells. */
static void stencil_of(const fs_paint_mesh *m, const double *u, double shift, stencil *s)
{
    s->all_in = 1;
    for (int a = 0; a < 3; a++) {
        if (a >= (m->fold ? 1 : m->ndim)) {
            s->np[a] = 1;
            s->w[a][0] = 1.0;
            s->idx[a][0] = s->off[a][0] = 0;
            s->in[a][0] = 1;
            continue;
        }
        double d;
        int64_t base = base_of(m, u[a] + shift, &d);
        s->np[a] = m->p;
        weights(m->p, d, s->w[a]);
        for (int k = 0; k < m->p; k++) {
            int64_t i = wrap(base + k, m->n[a]), off = 0;
            int in;
            if (m->fold) {
                int64_t row = i / m->inner, r0 = row - m->start[0];
                int64_t r1 = i - row * m->inner - m->start[1];
                in = (uint64_t)r0 < (uint64_t)m->count[0] && (uint64_t)r1 < (uint64_t)m->count[1];
                off = in ? m->off[0][r0] + m->off[1][r1] : 0;
            } else {
                int64_t r = i - m->start[a];
                in = (uint64_t)r < (uint64_t)m->count[a];
                off = in ? m->off[a][r] : 0;
            }
            s->idx[a][k] = i;
            s->in[a][k] = in;
            s->off[a][k] = off;
            s->all_in &= in;
        }
    }
}

static int ghost_add(ghosts *g, int64_t key, double v)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    int64_t i = (int64_t)(h >> 17) & (g->cap - 1);
    while (g->key[i] != key && g->key[i] != -1)
        i = (i + 1) & (g->cap - 1);
    if (g->key[i] == -1) {
        if (g->used + 1 >= g->cap)
            return -1;
        g->key[i] = key;
        g->val[i] = 0.0;
        g->used++;
    }
    g->val[i] += v;
    return 0;
}

/* The weights of one particle added, mass times the window's: into the
 * mesh where the cell is this rank's, into the ghost table where not. */
#define ADD_PARTICLE(NAME, T)                                                                      \
    static int NAME(fs_paint_mesh *m, int k, const stencil *s, double mass)                        \
    {                                                                                              \
        T *data = m->data[k];                                                                      \
        for (int i0 = 0; i0 < s->np[0]; i0++) {                                                    \
            double w0 = mass * s->w[0][i0];                                                        \
            for (int i1 = 0; i1 < s->np[1]; i1++) {                                                \
                double w1 = w0 * s->w[1][i1];                                                      \
                int64_t o1 = s->off[0][i0] + s->off[1][i1];                                        \
                for (int i2 = 0; i2 < s->np[2]; i2++) {                                            \
                    double v = w1 * s->w[2][i2];                                                   \
                    if (s->all_in || (s->in[0][i0] && s->in[1][i1] && s->in[2][i2]))               \
                        data[o1 + s->off[2][i2]] += (T)v;                                          \
                    else if (ghost_add(&m->g[k], (s->idx[0][i0] * m->n[1] + s->idx[1][i1]) *       \
                                       m->n[2] + s->idx[2][i2], v) != 0)                           \
                        return -1;                                                                 \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        return 0;                                                                                  \
    }
ADD_PARTICLE(add_double, double)
ADD_PARTICLE(add_float, float)
#undef ADD_PARTICLE

/* One particle at u (mesh units) of mass `mass` painted on mesh k, any
 * layout, its cells this rank's or ghosts: the general path. */
static int paint_one(fs_paint_mesh *m, int k, const double *u, double mass)
{
    stencil s;
    stencil_of(m, u, 0.5 * k, &s);
    return (m->single ? add_float : add_double)(m, k, &s, mass);
}

/* A row's bucket: its cell along the first axis, and along the second. */
static int64_t bucket_of(const fs_paint_mesh *m, const double *u)
{
    int64_t b0 = (int64_t)(u[0] * m->per[0]), b1 = (int64_t)(u[m->ndim > 1] * m->per[1]);
    b0 = b0 < m->nb[0] ? b0 : m->nb[0] - 1; /* u = n: x just below L rounded up */
    b1 = b1 < m->nb[1] ? b1 : m->nb[1] - 1;
    return b0 * m->nb[1] + b1;
}

/* The pending rows ordered by the cell of the first two axes they fall
 * in (a 1-D mesh's: of its axis), a counting sort into m->sorted. Sorting
 * them in place would chain one cache miss to the next, and painting them
 * through a sorted index would miss on every row; the scatter's stores do
 * not wait for each other. */
static void sort_pending(fs_paint_mesh *m)
{
    int s = m->stride;
    int64_t nb = m->nb[0] * m->nb[1], *at = m->at;
    memset(at, 0, sizeof *at * (size_t)(nb + 1));
    for (int64_t j = 0; j < m->pend_n; j++)
        at[bucket_of(m, m->pend + j * s) + 1]++;
    for (int64_t b = 1; b <= nb; b++)
        at[b] += at[b - 1];
    for (int64_t j = 0; j < m->pend_n; j++) {
        const double *r = m->pend + j * s;
        double *q = m->sorted + at[bucket_of(m, r)]++ * s;
        for (int a = 0; a < s; a++)
            q[a] = r[a];
    }
}

/* The fast kernels of a 3-D mesh, one per window and element type: rows
 * in mesh units; each axis's weights computed once per particle and mesh,
 * the cells' offsets looked up in the tables (the box's start, the
 * wrapping and the layout in them), both meshes painted in the one pass.
 * A particle with a cell outside the box takes the general path. */
#define KERNEL(NAME, T, P)                                                                         \
    static int NAME(fs_paint_mesh *m, const double *rows, int64_t n, int stride, int weighted)     \
    {                                                                                              \
        const int64_t *o0 = m->cell_off[0], *o1 = m->cell_off[1], *o2 = m->cell_off[2];            \
        const unsigned char *in0 = m->all_in[0], *in1 = m->all_in[1], *in2 = m->all_in[2];         \
        for (int64_t j = 0; j < n; j++) {                                                          \
            const double *u = rows + j * stride;                                                   \
            double mass = weighted ? u[3] : 1.0;                                                   \
            for (int k = 0; k < m->nmesh; k++) {                                                   \
                double w[3][P];                                                                    \
                int64_t b[3];                                                                      \
                for (int a = 0; a < 3; a++) {                                                      \
                    double v = u[a] + 0.5 * k, c = floor((P) % 2 ? v + 0.5 : v);                   \
                    weights(P, v - c, w[a]);                                                       \
                    b[a] = (int64_t)c - ((P) - 1) / 2 + PAD;                                       \
                }                                                                                  \
                if (!(in0[b[0]] & in1[b[1]] & in2[b[2]])) {                                        \
                    if (paint_one(m, k, u, mass) != 0)                                             \
                        return -1;                                                                 \
                    continue;                                                                      \
                }                                                                                  \
                T *data = m->data[k];                                                              \
                for (int i0 = 0; i0 < (P); i0++) {                                                 \
                    double w0 = mass * w[0][i0];                                                   \
                    for (int i1 = 0; i1 < (P); i1++) {                                             \
                        double w1 = w0 * w[1][i1];                                                 \
                        T *row = data + o0[b[0] + i0] + o1[b[1] + i1];                             \
                        for (int i2 = 0; i2 < (P); i2++)                                           \
                            row[o2[b[2] + i2]] += (T)(w1 * w[2][i2]);                              \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        return 0;                                                                                  \
    }
KERNEL(ngp_double, double, 1)
KERNEL(cic_double, double, 2)
KERNEL(tsc_double, double, 3)
KERNEL(pcs_double, double, 4)
KERNEL(ngp_float, float, 1)
KERNEL(cic_float, float, 2)
KERNEL(tsc_float, float, 3)
KERNEL(pcs_float, float, 4)
#undef KERNEL

typedef int (*kernel_fn)(fs_paint_mesh *, const double *, int64_t, int, int);
static const kernel_fn kernels[2][MAX_P] = {
    {ngp_double, cic_double, tsc_double, pcs_double},
    {ngp_float, cic_float, tsc_float, pcs_float},
};

/* The pending rows ordered and painted. */
static fs_status flush(fs_paint_mesh *m)
{
    sort_pending(m);
    int bad = 0, w = m->weighted, s = m->stride;
    if (m->cell_off[0])
        bad = kernels[m->single][m->p - 1](m, m->sorted, m->pend_n, s, w);
    for (int64_t j = 0; !m->cell_off[0] && j < m->pend_n && !bad; j++) {
        const double *u = m->sorted + j * s;
        for (int k = 0; k < m->nmesh && !bad; k++)
            bad = paint_one(m, k, u, w ? u[m->ndim] : 1.0);
    }
    m->pend_n = 0;
    if (bad)
        return fs_error_set(FS_ERR_RUNTIME, "painting: a particle outside this rank's "
                            "part of the mesh (more ghost cells than planned)");
    return FS_OK;
}

int64_t fs_paint_mesh_room(const fs_paint_mesh *m)
{
    return m->pend_cap - m->pend_n;
}

fs_status fs_paint_mesh_flush(fs_paint_mesh *m)
{
    return m->pend_n ? flush(m) : FS_OK;
}

int64_t fs_paint_mesh_capacity(const fs_paint_mesh *m)
{
    return m->pend_cap;
}

double *fs_paint_mesh_reserve(fs_paint_mesh *m, int64_t n, fs_status *st)
{
    *st = m->pend_cap - m->pend_n < n ? flush(m) : FS_OK; /* empty even when it fails */
    return m->pend + m->pend_n * m->stride;
}

fs_status fs_paint_mesh_add(fs_paint_mesh *m, int64_t n)
{
    for (int64_t j = 0; j < n; j++) { /* in place: u = x n / L */
        double *u = m->pend + (m->pend_n + j) * m->stride;
        for (int a = 0; a < m->ndim; a++)
            u[a] = cell_units(m, u[a], a);
    }
    m->pend_n += n;
    return m->pend_n == m->pend_cap ? flush(m) : FS_OK;
}

int fs_paint_mesh_owner(const fs_paint_mesh *m, const double *x)
{
    double d;
    int64_t j = wrap(base_of(m, cell_units(m, x[0], 0), &d), m->n[0]), v[3] = {j, 0, 0};
    if (m->fold) {
        v[0] = j / m->inner;
        v[1] = j - v[0] * m->inner;
    }
    for (int a = 1; !m->fold && a < m->ndim; a++)
        if (a == m->split[0] || a == m->split[1])
            v[a] = wrap(base_of(m, cell_units(m, x[a], a), &d), m->n[a]);
    int c0 = m->split[0] >= 0 ? m->owner[0][v[m->split[0]]] : 0;
    int c1 = m->split[1] >= 0 ? m->owner[1][v[m->split[1]]] : 0;
    return c0 * m->P2 + c1;
}

/* A cell of the mesh (its flat index) in the view: v (out). */
static void view_of(const fs_paint_mesh *m, int64_t key, int64_t *v)
{
    if (m->fold) {
        v[0] = key / m->inner;
        v[1] = key - v[0] * m->inner;
        return;
    }
    for (int a = m->ndim - 1; a >= 0; a--) {
        v[a] = key % m->n[a];
        key /= m->n[a];
    }
}

/* The rank owning a cell of the view. */
static int owner_of_cell(const fs_paint_mesh *m, const int64_t *v)
{
    int c0 = m->split[0] >= 0 ? m->owner[0][v[m->split[0]]] : 0;
    int c1 = m->split[1] >= 0 ? m->owner[1][v[m->split[1]]] : 0;
    return c0 * m->P2 + c1;
}

/* A ghost cell's value added to this rank's mesh k (it owns the cell). */
static void add_owned(fs_paint_mesh *m, int k, int64_t key, double v)
{
    int64_t c[3];
    view_of(m, key, c);
    int64_t off = 0;
    for (int a = 0; a < m->vdim; a++)
        off += m->off[a][c[a] - m->start[a]];
    if (m->single)
        ((float *)m->data[k])[off] += (float)v;
    else
        ((double *)m->data[k])[off] += v;
}

/* One mesh's ghost cells to their owners: counts, then (key, value)
 * pairs; a cell of this rank's own (a small mesh wrapping around) added
 * here. */
static fs_status send_ghosts(fs_paint_mesh *m, int k, MPI_Comm comm, int nranks, int rank,
                             int64_t *bytes_sent)
{
    ghosts *g = &m->g[k];
    int *counts = calloc((size_t)nranks * 4, sizeof *counts);
    double *pairs = malloc(sizeof(double) * 2 * (size_t)(g->used + 1));
    double *in = NULL;
    int *rcounts = counts + nranks, *sdispl = counts + 2 * nranks, *rdispl = counts + 3 * nranks;
    fs_status st = counts && pairs ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory");
    for (int64_t i = 0; st == FS_OK && i < g->cap; i++)
        if (g->key[i] >= 0) {
            int64_t v[3];
            view_of(m, g->key[i], v);
            counts[owner_of_cell(m, v)] += 2;
        }
    for (int r = 1; st == FS_OK && r < nranks; r++)
        sdispl[r] = sdispl[r - 1] + counts[r - 1];
    for (int64_t i = 0; st == FS_OK && i < g->cap; i++)
        if (g->key[i] >= 0) {
            int64_t v[3];
            view_of(m, g->key[i], v);
            int r = owner_of_cell(m, v);
            memcpy(&pairs[sdispl[r]], &g->key[i], sizeof(double)); /* the key's bits */
            pairs[sdispl[r] + 1] = g->val[i];
            sdispl[r] += 2;
        }
    for (int r = 0; st == FS_OK && r < nranks; r++)
        sdispl[r] -= counts[r];
    if (st == FS_OK && MPI_Alltoall(counts, 1, MPI_INT, rcounts, 1, MPI_INT, comm) != MPI_SUCCESS)
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Alltoall of the ghost cells' counts failed");
    int64_t total = 0;
    for (int r = 0; st == FS_OK && r < nranks; r++) {
        rdispl[r] = (int)total;
        total += rcounts[r];
        *bytes_sent += r != rank ? (int64_t)counts[r] * (int64_t)sizeof(double) : 0;
    }
    if (st == FS_OK && !(in = malloc(sizeof(double) * (size_t)(total + 1))))
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
    if (st == FS_OK && MPI_Alltoallv(pairs, counts, sdispl, MPI_DOUBLE, in, rcounts, rdispl,
                                     MPI_DOUBLE, comm) != MPI_SUCCESS)
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Alltoallv of the ghost cells failed");
    for (int64_t i = 0; st == FS_OK && i < total; i += 2) {
        int64_t key;
        memcpy(&key, &in[i], sizeof key);
        add_owned(m, k, key, in[i + 1]);
    }
    free(in);
    free(pairs);
    free(counts);
    return st;
}

fs_status fs_paint_mesh_ghosts(fs_paint_mesh *m, MPI_Comm comm, int64_t *bytes_sent)
{
    int nranks = 1, rank = 0;
    fs_status st = fs_error_agree_shared(comm, fs_paint_mesh_flush(m));
    if (MPI_Comm_size(comm, &nranks) != MPI_SUCCESS || MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_size failed");
    for (int k = 0; k < m->nmesh && st == FS_OK; k++)
        st = send_ghosts(m, k, comm, nranks, rank, bytes_sent);
    return st;
}

void fs_paint_mesh_scale(fs_paint_mesh *m, double a, double b)
{
    int64_t c[3] = {1, 1, 1};
    const int64_t zero = 0, *off[3] = {&zero, &zero, &zero};
    for (int d = 0; d < m->vdim; d++) {
        c[d] = m->count[d];
        off[d] = m->off[d];
    }
    for (int k = 0; k < m->nmesh; k++)
        for (int64_t i0 = 0; i0 < c[0]; i0++)
            for (int64_t i1 = 0; i1 < c[1]; i1++) {
                int64_t o = off[0][i0] + off[1][i1];
                if (m->single) {
                    float *x = (float *)m->data[k] + o;
                    for (int64_t i2 = 0; i2 < c[2]; i2++)
                        x[off[2][i2]] = (float)(x[off[2][i2]] * a + b);
                } else {
                    double *x = (double *)m->data[k] + o;
                    for (int64_t i2 = 0; i2 < c[2]; i2++)
                        x[off[2][i2]] = x[off[2][i2]] * a + b;
                }
            }
}

/* ------------------------------------------------------------- planning */

/* Ghost cells past a box of `count` (view shape vn, the split axes those
 * whose count is short), g cells deep. */
static int64_t ghost_cells(const fs_transform *t, const int64_t *count, int g)
{
    if (t->fold) /* one run of g cells after each row's columns, or after the rows */
        return (count[1] < t->shape[1] ? count[0] : 1) * g;
    int64_t ext = 1, own = 1;
    for (int a = 0; a < t->in_ndim; a++) {
        int64_t n = t->in_shape[a], e = count[a] < n ? count[a] + g : n;
        ext *= e < n ? e : n;
        own *= count[a];
    }
    return ext - own;
}

/* The slots of a ghost table for `bound` cells: never more than half full. */
static int64_t table_slots(int64_t bound)
{
    int64_t cap = 16;
    while (cap < 2 * bound + 2)
        cap *= 2;
    return cap;
}

/* The pending rows of a rank whose box has `cells` cells: a row per
 * PEND_CELLS cells, so that each cache line of the meshes read when they
 * are painted serves several particles (fewer rows cost a sweep of the
 * meshes per few particles); at least a round's (min_rows) or
 * PEND_MIN_ROWS, whichever is less, and a row from each of the nranks
 * ranks (what they send is received here), at most PEND_MAX_BYTES; more
 * than a round, whole rounds (what one rank reads comes a round at a time:
 * a part of one past the last whole would never be filled). */
static int64_t pending_rows(int64_t cells, int stride, int64_t min_rows, int nranks)
{
    int64_t rows = cells / PEND_CELLS, most = PEND_MAX_BYTES / (8 * stride);
    int64_t least = min_rows < PEND_MIN_ROWS ? min_rows : PEND_MIN_ROWS;
    least = least > nranks ? least : nranks;
    rows = rows < most ? rows : most;
    if (min_rows > 0 && rows > min_rows)
        rows -= rows % min_rows;
    return rows > least ? rows : least;
}

int64_t fs_paint_mesh_bytes(const fs_transform *t, int window, int shifted, int stride,
                            int64_t min_rows, int64_t received)
{
    int64_t most = 0, rows = 0;
    for (int c1 = 0; c1 < t->grid[0]; c1++)
        for (int c2 = 0; c2 < t->grid[1]; c2++) {
            fs_box b = fs_transform_box(t, 0, c1, c2);
            fs_io_map map = fs_transform_read_map(t, &b);
            int64_t n = ghost_cells(t, map.file_box.count, window - 1 + shifted), cells = 1;
            most = n > most ? n : most;
            for (int a = 0; a < map.file_box.ndim; a++)
                cells *= map.file_box.count[a];
            n = pending_rows(cells, stride, min_rows, t->grid[0] * t->grid[1]);
            n = n < received ? n : received;
            rows = n > rows ? n : rows;
        }
    int64_t tables = table_slots(most) * (int64_t)(sizeof(int64_t) + sizeof(double)) * (1 + shifted);
    return tables + 2 * rows * stride * (int64_t)sizeof(double) +
           (int64_t)sizeof(int64_t) * (SORT_BUCKETS + 1);
}

/* The offsets of every index of the box along each view axis. */
static fs_status take_view(fs_paint_mesh *m, const fs_io_map *map)
{
    int64_t mstride[FS_LAYOUT_MAX_DIMS];
    m->vdim = map->file_box.ndim;
    for (int a = m->vdim - 1; a >= 0; a--)
        mstride[a] = a == m->vdim - 1 ? 1 : mstride[a + 1] * map->mem_dims[a + 1];
    for (int a = 0; a < m->vdim; a++) {
        m->start[a] = map->file_box.start[a];
        m->count[a] = map->file_box.count[a];
        int64_t step = a == m->vdim - 1 ? map->mem_stride_last : 1;
        m->off[a] = malloc(sizeof(int64_t) * (size_t)(m->count[a] > 0 ? m->count[a] : 1));
        if (!m->off[a])
            return fs_error_set(FS_ERR_RUNTIME, "out of memory");
        for (int64_t i = 0; i < m->count[a]; i++)
            m->off[a][i] = (map->mem_start[a] + i * step) * mstride[a];
    }
    return FS_OK;
}

/* The fast kernels' tables, the pending rows and their buckets. The
 * kernels' leftmost cell b - PAD lies in [-1, n + 1] (u in [0, n],
 * shifted by at most 1), its window's last at most p - 1 further: the
 * tables reach n + PAD + 8. */
static fs_status take_tables(fs_paint_mesh *m, int64_t min_rows, int nranks)
{
    int64_t cells = 1;
    for (int a = 0; a < m->vdim; a++)
        cells *= m->count[a];
    m->nb[0] = m->n[0] < SORT_BUCKETS ? m->n[0] : SORT_BUCKETS;
    m->nb[1] = m->ndim > 1 && !m->fold ? SORT_BUCKETS / m->nb[0] : 1;
    m->nb[1] = m->nb[1] < m->n[1] ? m->nb[1] : m->n[1];
    m->per[0] = (double)m->nb[0] / m->nd[0];
    m->per[1] = m->nb[1] > 1 ? (double)m->nb[1] / m->nd[1] : 0.0;
    m->at = malloc(sizeof(int64_t) * (size_t)(m->nb[0] * m->nb[1] + 1));
    m->pend_cap = pending_rows(cells, m->stride, min_rows, nranks);
    m->pend = malloc(sizeof(double) * (size_t)(m->pend_cap * m->stride));
    m->sorted = malloc(sizeof(double) * (size_t)(m->pend_cap * m->stride));
    if (!m->at || !m->pend || !m->sorted)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory for the particles' rows");
    for (int a = 0; a < 3 && m->ndim == 3 && !m->fold; a++) {
        int64_t size = m->n[a] + PAD + 8;
        m->cell_off[a] = malloc(sizeof(int64_t) * (size_t)size);
        m->all_in[a] = malloc((size_t)size);
        if (!m->cell_off[a] || !m->all_in[a])
            return fs_error_set(FS_ERR_RUNTIME, "out of memory");
        for (int64_t e = 0; e < size; e++) {
            int64_t r = wrap(e - PAD, m->n[a]) - m->start[a];
            m->cell_off[a][e] = (uint64_t)r < (uint64_t)m->count[a] ? m->off[a][r] : -1;
        }
        for (int64_t e = 0; e < size; e++) {
            m->all_in[a][e] = 1;
            for (int k = 0; k < m->p; k++)
                m->all_in[a][e] &= e + k < size && m->cell_off[a][e + k] >= 0;
        }
    }
    return FS_OK;
}

/* Each grid coordinate's range along the view axis it splits. */
static fs_status take_owners(fs_paint_mesh *m, const fs_transform *t)
{
    m->P2 = t->grid[1];
    for (int g = 0; g < 2; g++) {
        int a = m->split[g] = t->split[0][g];
        if (a < 0)
            continue;
        m->vn[a] = t->shape[a];
        m->owner[g] = malloc(sizeof(int) * (size_t)m->vn[a]);
        if (!m->owner[g])
            return fs_error_set(FS_ERR_RUNTIME, "out of memory");
        for (int c = 0; c < t->grid[g]; c++) {
            fs_box b = fs_transform_box(t, 0, g == 0 ? c : 0, g == 1 ? c : 0);
            fs_io_map map = fs_transform_read_map(t, &b);
            for (int64_t i = 0; i < map.file_box.count[a]; i++)
                m->owner[g][map.file_box.start[a] + i] = c;
        }
    }
    return FS_OK;
}

fs_status fs_paint_mesh_new(const fs_paint_mesh_args *a, fs_paint_mesh **out)
{
    fs_paint_mesh *m = *out = calloc(1, sizeof *m);
    if (!m)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    const fs_transform *t = a->t;
    m->ndim = a->ndim;
    m->p = a->window;
    m->left = (a->window - 1) / 2;
    m->odd = a->window % 2;
    for (int d = 0; d < 3; d++) {
        m->n[d] = d < a->ndim ? a->n[d] : 1;
        m->nd[d] = (double)m->n[d];
        m->L[d] = d < a->ndim ? a->box[d] : 1.0;
    }
    m->nmesh = a->data[1] ? 2 : 1;
    m->weighted = a->weighted;
    m->stride = a->ndim + a->weighted;
    m->data[0] = a->data[0];
    m->data[1] = a->data[1];
    m->single = t->prec == FS_SINGLE;
    m->fold = t->fold;
    m->inner = t->fold ? t->n1 : 0;
    fs_io_map map = fs_transform_read_map(t, fs_decomposition_first(a->d));
    fs_status st = take_view(m, &map);
    if (st == FS_OK)
        st = take_owners(m, t);
    if (st == FS_OK)
        st = take_tables(m, a->min_rows, t->grid[0] * t->grid[1]);
    int64_t bound = ghost_cells(t, m->count, m->p - 1 + (m->nmesh > 1));
    for (int k = 0; k < m->nmesh && st == FS_OK; k++) {
        ghosts *g = &m->g[k];
        g->cap = table_slots(bound);
        g->key = malloc(sizeof(int64_t) * (size_t)g->cap);
        g->val = malloc(sizeof(double) * (size_t)g->cap);
        if (!g->key || !g->val)
            st = fs_error_set(FS_ERR_RUNTIME, "out of memory for the ghost cells");
        else
            memset(g->key, 0xff, sizeof(int64_t) * (size_t)g->cap);
    }
    return st;
}

void fs_paint_mesh_free(fs_paint_mesh **m)
{
    if (!*m)
        return;
    for (int a = 0; a < 3; a++) {
        free((*m)->off[a]);
        free((*m)->cell_off[a]);
        free((*m)->all_in[a]);
    }
    free((*m)->at);
    for (int g = 0; g < 2; g++) {
        free((*m)->owner[g]);
        free((*m)->g[g].key);
        free((*m)->g[g].val);
    }
    free((*m)->pend);
    free((*m)->sorted);
    free(*m);
    *m = NULL;
}
