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
#define SORT_BUCKETS 4096 /* planes the rows are ordered by (by_plane) */

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
    double *sorted;                      /* the rows ordered by plane (by_plane) */
    int64_t sorted_rows;
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

/* The leftmost cell of a particle at u mesh units (not wrapped), and its
 * distance d from the central cell of an odd window, from the cell on its
 * left of an even one. */
static int64_t base_of(const fs_paint_mesh *m, double u, double *d)
{
    double c = floor(m->odd ? u + 0.5 : u);
    *d = u - c;
    return (int64_t)c - m->left;
}

/* The window's weights at distance d (pmesh's B-splines). */
static void weights(int p, double d, double *w)
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

/* The particle at x on the mesh shifted by `shift` cells. */
static void stencil_of(const fs_paint_mesh *m, const double *x, double shift, stencil *s)
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
        int64_t base = base_of(m, x[a] * m->nd[a] / m->L[a] + shift, &d);
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

/* The rows ordered by their plane along the first axis (a counting sort
 * into m->sorted): the particles of a snapshot come in any order, and
 * painting them in the order of the planes they touch keeps the cells in
 * the cache instead of missing it on every particle. Returns the rows to
 * paint (the given ones when out of memory: slower, not wrong). */
static const double *by_plane(fs_paint_mesh *m, const double *rows, int64_t n, int stride)
{
    int64_t nb = m->n[0] < SORT_BUCKETS ? m->n[0] : SORT_BUCKETS;
    if (n < 2 * nb || nb < 2)
        return rows;
    if (m->sorted_rows < n) {
        free(m->sorted);
        m->sorted = malloc(sizeof(double) * (size_t)(n * stride));
        m->sorted_rows = m->sorted ? n : 0;
    }
    int64_t *at = calloc((size_t)nb + 1, sizeof *at);
    if (!m->sorted || !at) {
        free(at);
        return rows;
    }
    double per = (double)nb / m->L[0];
    for (int64_t j = 0; j < n; j++) {
        int64_t b = (int64_t)(rows[j * stride] * per);
        at[(b < nb ? b : nb - 1) + 1]++;
    }
    for (int64_t b = 1; b <= nb; b++)
        at[b] += at[b - 1];
    for (int64_t j = 0; j < n; j++) {
        int64_t b = (int64_t)(rows[j * stride] * per);
        memcpy(m->sorted + at[b < nb ? b : nb - 1]++ * stride, rows + j * stride,
               sizeof(double) * (size_t)stride);
    }
    free(at);
    return m->sorted;
}

fs_status fs_paint_mesh_paint(fs_paint_mesh *m, const double *rows, int64_t n, int stride,
                              int weighted)
{
    stencil s;
    rows = by_plane(m, rows, n, stride);
    for (int64_t j = 0; j < n; j++) {
        const double *x = rows + j * stride;
        double mass = weighted ? x[m->ndim] : 1.0;
        for (int k = 0; k < m->nmesh; k++) {
            stencil_of(m, x, 0.5 * k, &s);
            if ((m->single ? add_float : add_double)(m, k, &s, mass) != 0)
                return fs_error_set(FS_ERR_RUNTIME, "painting: a particle outside this rank's "
                                    "part of the mesh (more ghost cells than planned)");
        }
    }
    return FS_OK;
}

int fs_paint_mesh_owner(const fs_paint_mesh *m, const double *x)
{
    double d;
    int64_t j = wrap(base_of(m, x[0] * m->nd[0] / m->L[0], &d), m->n[0]), v[3] = {j, 0, 0};
    if (m->fold) {
        v[0] = j / m->inner;
        v[1] = j - v[0] * m->inner;
    }
    for (int a = 1; !m->fold && a < m->ndim; a++)
        if (a == m->split[0] || a == m->split[1])
            v[a] = wrap(base_of(m, x[a] * m->nd[a] / m->L[a], &d), m->n[a]);
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
    fs_status st = FS_OK;
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

int64_t fs_paint_mesh_ghost_bytes(const fs_transform *t, int window, int shifted)
{
    int64_t most = 0;
    for (int c1 = 0; c1 < t->grid[0]; c1++)
        for (int c2 = 0; c2 < t->grid[1]; c2++) {
            fs_box b = fs_transform_box(t, 0, c1, c2);
            fs_io_map map = fs_transform_read_map(t, &b);
            int64_t n = ghost_cells(t, map.file_box.count, window - 1 + shifted);
            most = n > most ? n : most;
        }
    return table_slots(most) * (int64_t)(sizeof(int64_t) + sizeof(double)) * (1 + shifted);
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
    m->data[0] = a->data[0];
    m->data[1] = a->data[1];
    m->single = t->prec == FS_SINGLE;
    m->fold = t->fold;
    m->inner = t->fold ? t->n1 : 0;
    fs_io_map map = fs_transform_read_map(t, fs_decomposition_first(a->d));
    fs_status st = take_view(m, &map);
    if (st == FS_OK)
        st = take_owners(m, t);
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
    for (int a = 0; a < 3; a++)
        free((*m)->off[a]);
    for (int g = 0; g < 2; g++) {
        free((*m)->owner[g]);
        free((*m)->g[g].key);
        free((*m)->g[g].val);
    }
    free((*m)->sorted);
    free(*m);
    *m = NULL;
}
