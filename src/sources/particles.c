/* SPDX-License-Identifier: GPL-3.0-or-later */
/* particles: see particles.h. The probe is rank 0's (the Headers, the weights'
 * datasets), broadcast as plain data; the fill is route.c's rounds onto
 * mesh.c's boxes, then the ghost cells and the field's scale. */
#include "config.h"

#include "sources/particles.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buffer.h"
#include "core/collective.h"
#include "core/dtype.h"
#include "io/snapshot.h"
#include "sources/mesh.h"
#include "sources/route.h"

/* One INPUT's particle table, the same on every rank (sent as bytes). */
typedef struct table {
    fs_input_info pos;                /* the positions as probed */
    fs_input_info wts;                /* the weights' whole dataset (weighted) */
    int weighted;
    int ndim;
    int64_t mesh[FS_PAINT_MAX_DIMS];
    double box[FS_PAINT_MAX_DIMS];
    int box_from_header;
    char positions[FS_INPUT_NAME_MAX];
} table;

struct fs_particles {
    MPI_Comm comm;
    const fs_particles_options *o;
    int n;
    const fs_location *inputs;
    table *tab;
    fs_shard_set pos_shards, wts_shards; /* INPUT 0 with --shards */
    fs_painted *done;
    int *filled;
    int allow_nonfinite;
    void *shifted;                       /* --interlace's second mesh, and its bytes */
    size_t shifted_bytes;
};

/* ------------------------------------------------------------------ probe */

/* What rank 0 looks at. */
typedef struct probe {
    const fs_particles_args *a;
    fs_particles *p;
} probe;

/* The group of a dataset path ("/PartType1" of "/PartType1/Coordinates",
 * "" at the root), into buf. */
static void group_of(const char *dataset, char *buf, size_t size)
{
    const char *slash = strrchr(dataset, '/');
    snprintf(buf, size, "%.*s", slash ? (int)(slash - dataset) : 0, dataset);
}

/* The positions' columns and the mesh. */
static fs_status take_shape(const fs_particles_options *o, const char *name, table *tb)
{
    return fs_particles_mesh_shape(o, &tb->pos, name, &tb->ndim, tb->mesh);
}

/* Every file's Header against the first's and the tables' rows. */
static fs_status check_headers(const char *const *files, const int64_t *rows, int64_t nfiles,
                               const table *tb, fs_snapshot_header *first)
{
    int k = fs_snapshot_part_type(tb->pos.dataset);
    memset(first, 0, sizeof *first);
    first->nfiles = -1;
    for (int64_t f = 0; f < nfiles; f++) {
        fs_snapshot_header h;
        fs_status st = fs_snapshot_header_read(files[f], &h);
        if (st != FS_OK)
            return st;
        if (f == 0)
            *first = h;
        const char *differs = h.present != first->present ? "Header"
                              : h.nbox != first->nbox || memcmp(h.box, first->box, sizeof h.box)
                                  ? "BoxSize"
                              : memcmp(h.total, first->total, sizeof h.total) ? "NumPart_Total"
                              : h.nfiles != first->nfiles ? "NumFilesPerSnapshot" : NULL;
        if (differs)
            return fs_error_set(FS_ERR_INPUT, "%s: its /Header %s differs from %s's: not a file "
                                "of the same snapshot", files[f], differs, files[0]);
        if (k >= 0 && h.this_file[k] >= 0 && h.this_file[k] != rows[f])
            return fs_error_set(FS_ERR_INPUT, "%s: /Header NumPart_ThisFile[%d] is %" PRId64
                                " but %s has %" PRId64 " rows", files[f], k, h.this_file[k],
                                tb->pos.dataset, rows[f]);
    }
    if (first->nfiles >= 0 && first->nfiles != nfiles)
        return fs_error_set(FS_ERR_INPUT, "%s: /Header NumFilesPerSnapshot is %" PRId64 " but %"
                            PRId64 " file%s given%s", files[0], first->nfiles, nfiles,
                            nfiles > 1 ? "s were" : " was",
                            nfiles == 1 ? ": name them all with --shards (snap.%d.hdf5)"
                                        : ": one is missing");
    if (k >= 0 && first->total[k] >= 0 && first->total[k] != tb->pos.shape[0])
        return fs_error_set(FS_ERR_INPUT, "%s: /Header NumPart_Total[%d] is %" PRId64 " but the "
                            "%" PRId64 " file%s %" PRId64 " rows of %s", files[0], k,
                            first->total[k], nfiles, nfiles > 1 ? "s hold" : " holds", tb->pos.shape[0],
                            tb->pos.dataset);
    return FS_OK;
}

/* The box: --box-size, else the Header's BoxSize. */
static fs_status take_box(const fs_particles_args *a, const fs_snapshot_header *h,
                          const char *name, table *tb)
{
    int D = tb->ndim, given = a->nbox > 0 ? a->nbox : 0; /* --box-size=grid: not a box */
    if (given) {
        if (given != 1 && given != D)
            return fs_error_set(FS_ERR_USAGE, "--box-size: %d lengths for a mesh of %d axes",
                                given, D);
        for (int k = 0; k < D; k++)
            tb->box[k] = a->box[given == 1 ? 0 : k];
        return FS_OK;
    }
    if (!h->nbox || (h->nbox > 1 && h->nbox < D))
        return fs_error_set(FS_ERR_USAGE, "%s: %s; give the box's length with --box-size", name,
                            h->nbox ? "/Header BoxSize has fewer lengths than the positions"
                                    : "no /Header BoxSize");
    for (int k = 0; k < D; k++)
        tb->box[k] = h->box[h->nbox == 1 ? 0 : k];
    tb->box_from_header = 1;
    return FS_OK;
}

/* The weights' dataset in every file: one per row. */
static fs_status take_weights(probe *pr, int i, const char *const *files, const int64_t *rows,
                              int64_t nfiles)
{
    fs_particles *p = pr->p;
    table *tb = &p->tab[i];
    char path[2 * FS_PATH_MAX + 2], group[FS_PATH_MAX];
    group_of(tb->pos.dataset, group, sizeof group);
    const char *w = p->o->weights;
    snprintf(path, sizeof path, "%s%s%s", w[0] == '/' ? "" : group, w[0] == '/' ? "" : "/", w);
    if (strlen(path) >= FS_PATH_MAX)
        return fs_error_set(FS_ERR_USAGE, "--weights=%s: path too long", w);
    fs_shard_set *set = &p->wts_shards;
    if (nfiles > 1 && !(set->files = calloc((size_t)nfiles, sizeof *set->files)))
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    if (nfiles > 1 && !(set->boxes = calloc((size_t)nfiles, sizeof *set->boxes)))
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    int64_t at = 0;
    for (int64_t f = 0; f < nfiles; f++) {
        fs_input_info wi;
        fs_status st = fs_h5_probe(files[f], path, &wi);
        if (st != FS_OK)
            return st;
        if (wi.ndim > 2 || (wi.ndim == 2 && wi.shape[1] != 1) || wi.shape[0] != rows[f] ||
            !fs_dtype_is_real(wi.dtype))
            return fs_error_set(FS_ERR_INPUT, "%s:%s: %s of shape %" PRId64 "%s for %" PRId64
                                " particles (expected one real number per particle)", files[f],
                                wi.dataset, wi.type_name, wi.shape[0], wi.ndim == 2 ? " x ..." : "",
                                rows[f]);
        if (f == 0)
            tb->wts = wi;
        if (nfiles > 1) {
            if (!(set->files[f] = strdup(files[f])))
                return fs_error_set(FS_ERR_RUNTIME, "out of memory");
            set->n = f + 1;
            set->boxes[f] = (fs_box){.ndim = wi.ndim, .start = {at}, .count = {rows[f], 1}};
        }
        at += rows[f];
    }
    tb->wts.shape[0] = at;
    tb->wts.nshards = nfiles > 1 ? nfiles : 0;
    tb->wts.stamp.known = nfiles == 1; /* a set has no one file to stamp (shards.h) */
    tb->weighted = 1;
    return FS_OK;
}

/* Rank 0: INPUT i's files, Headers, box and weights. */
static fs_status probe_one(probe *pr, int i)
{
    const fs_particles_args *a = pr->a;
    fs_particles *p = pr->p;
    table *tb = &p->tab[i];
    tb->pos = a->infos[i];
    fs_input_name(a->inputs[i].file, &tb->pos, tb->positions, sizeof tb->positions);
    if (tb->pos.slice.given)
        return fs_error_set(FS_ERR_USAGE, "%s: --paint reads whole particle tables (no slice)",
                            tb->positions);
    fs_status st = take_shape(p->o, tb->positions, tb);
    const fs_shard_set *sh = i == 0 && a->sharded ? a->shards : NULL;
    int64_t nfiles = sh ? sh->n : 1, one = tb->pos.shape[0];
    const char *single = a->inputs[i].file;
    const char *const *files = sh ? (const char *const *)sh->files : &single;
    int64_t *rows = malloc(sizeof(int64_t) * (size_t)nfiles);
    if (st == FS_OK && !rows)
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
    for (int64_t f = 0; st == FS_OK && f < nfiles; f++)
        rows[f] = sh ? sh->boxes[f].count[0] : one;
    fs_snapshot_header h;
    if (st == FS_OK)
        st = check_headers(files, rows, nfiles, tb, &h);
    if (st == FS_OK)
        st = take_box(a, &h, tb->positions, tb);
    if (st == FS_OK && p->o->weights)
        st = take_weights(pr, i, files, rows, nfiles);
    free(rows);
    return st;
}

static fs_status probe_all(void *arg)
{
    probe *pr = arg;
    fs_status st = FS_OK;
    for (int i = 0; i < pr->a->n && st == FS_OK; i++)
        st = probe_one(pr, i);
    for (int i = 1; i < pr->a->n && st == FS_OK; i++)
        if (pr->p->tab[i].ndim != pr->p->tab[0].ndim ||
            memcmp(pr->p->tab[i].box, pr->p->tab[0].box, sizeof pr->p->tab[0].box) != 0)
            st = fs_error_set(FS_ERR_INPUT, "%s, %s: painted on one mesh, the particles must "
                              "have the same dimensions and box", pr->p->tab[0].positions,
                              pr->p->tab[i].positions);
    return st;
}

/* INPUT i's mesh, as the planner and the output see an input. */
static void mesh_info(const fs_particles *p, int i, fs_input_info *info)
{
    const table *tb = &p->tab[i];
    char group[FS_PATH_MAX - 16];
    group_of(tb->pos.dataset, group, sizeof group);
    memset(info, 0, sizeof *info);
    info->stamp = tb->pos.stamp;
    info->ndim = tb->ndim;
    memcpy(info->shape, tb->mesh, sizeof tb->mesh);
    info->dtype = FS_DTYPE_FLOAT64;
    snprintf(info->type_name, sizeof info->type_name, "float64");
    snprintf(info->dataset, sizeof info->dataset, "%s/%s", group, fs_paint_field_name(p->o->field));
    info->painted = 1;
    snprintf(info->painted_from, sizeof info->painted_from, "%s", tb->pos.dataset);
    info->recorded.real_axis = -1;
    info->box_n = tb->ndim; /* the box the particles wrap in, the stages' (kgrid.h) */
    memcpy(info->box_size, tb->box, sizeof(double) * (size_t)tb->ndim);
}

fs_status fs_particles_probe(const fs_particles_args *a, fs_particles **out)
{
    *out = NULL;
    fs_status st = fs_inputs_probe(a->comm, a->sharded, a->inputs, a->n, a->infos, a->shards);
    if (st != FS_OK || !a->opts->window)
        return st;
    fs_particles *p = *out = calloc(1, sizeof *p);
    st = p ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory");
    if (p) {
        p->comm = a->comm;
        p->o = a->opts;
        p->allow_nonfinite = a->allow_nonfinite;
        p->n = a->n;
        p->inputs = a->inputs;
        p->tab = calloc((size_t)a->n, sizeof *p->tab);
        p->done = calloc((size_t)a->n, sizeof *p->done);
        p->filled = calloc((size_t)a->n, sizeof *p->filled);
        if (!p->tab || !p->done || !p->filled)
            st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    if ((st = fs_error_agree(a->comm, st)) != FS_OK)
        return st;
    probe pr = {a, p};
    st = fs_root_decides(a->comm, probe_all, &pr); /* agreed */
    if (st == FS_OK)
        st = fs_error_agree(a->comm, fs_bcast_bytes(a->comm, 0, p->tab,
                                                    (int64_t)sizeof *p->tab * a->n));
    if (st == FS_OK && p->o->weights)
        st = fs_shards_bcast(a->comm, &p->wts_shards); /* agreed */
    if (st != FS_OK)
        return st;
    if (a->sharded) { /* the positions' files are the painting's now */
        p->pos_shards = *a->shards;
        memset(a->shards, 0, sizeof *a->shards);
    }
    for (int i = 0; i < a->n; i++)
        mesh_info(p, i, &a->infos[i]);
    return FS_OK;
}

void fs_particles_free(fs_particles **p)
{
    if (!*p)
        return;
    fs_shard_set_free(&(*p)->pos_shards);
    fs_shard_set_free(&(*p)->wts_shards);
    fs_buffer_free((*p)->shifted);
    free((*p)->tab);
    free((*p)->done);
    free((*p)->filled);
    free(*p);
    *p = NULL;
}

const fs_painted *fs_particles_result(const fs_particles *p, int i)
{
    return p && i >= 0 && i < p->n && p->filled[i] ? &p->done[i] : NULL;
}

int64_t fs_particles_bytes(int window, int ndim, int weighted, int interlace, int64_t rows,
                           const fs_transform *t)
{
    int stride = ndim + weighted;
    int64_t received;
    int64_t route = fs_paint_route_bytes(stride, t->grid[0] * t->grid[1], rows, &received);
    return route + fs_paint_mesh_bytes(t, window, interlace, stride, fs_paint_route_rows(stride),
                                       received);
}

/* ------------------------------------------------------------------- fill */

/* The field from the weighted sums: v a + b (particles.h, fs_paint_field). */
static fs_status field_scale(const fs_particles *p, const table *tb, double sum_w, double *a,
                             double *b)
{
    double N = 1, V = 1;
    for (int k = 0; k < tb->ndim; k++) {
        N *= (double)tb->mesh[k];
        V *= tb->box[k];
    }
    *a = p->o->field == FS_PAINT_DENSITY ? N / V : 1.0;
    *b = 0.0;
    if (p->o->field != FS_PAINT_DELTA)
        return FS_OK;
    if (!(sum_w != 0))
        return fs_error_set(FS_ERR_INPUT, "%s: the weights of the particles add up to %g: delta "
                            "= rho / mean(rho) - 1 is undefined; give --paint-field=sum",
                            tb->positions, sum_w);
    *a = N / sum_w;
    *b = -1.0;
    return FS_OK;
}

/* The shifted mesh, as large as the working buffer, zeroed. */
static fs_status take_shifted(fs_particles *p, size_t bytes)
{
    if (p->shifted_bytes < bytes) {
        fs_buffer_free(p->shifted);
        p->shifted = fs_buffer_alloc(bytes);
        p->shifted_bytes = p->shifted ? bytes : 0;
        if (!p->shifted)
            return fs_error_set(FS_ERR_RUNTIME, "out of memory for the shifted mesh of "
                                "--interlace (%zu bytes)", bytes);
    }
    memset(p->shifted, 0, bytes);
    return FS_OK;
}

/* The ghost cells to their owners, the sums over the ranks, the field's
 * scale: what the rounds left, made the field and its figures. */
static fs_status finish(fs_particles *p, int i, fs_paint_mesh *mesh, const fs_paint_route_stats *rs)
{
    table *tb = &p->tab[i];
    fs_painted *res = &p->done[i];
    int64_t ghost_bytes = 0;
    fs_status st = fs_error_agree_shared(p->comm, fs_paint_mesh_ghosts(mesh, p->comm, &ghost_bytes));
    double sums[2] = {rs->sum_w, rs->sum_w2};
    int64_t counts[2] = {rs->kept, rs->skipped};
    if (st == FS_OK)
        st = fs_allreduce(p->comm, MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM);
    if (st == FS_OK)
        st = fs_allreduce(p->comm, MPI_IN_PLACE, counts, 2, MPI_INT64_T, MPI_SUM);
    st = fs_error_agree_shared(p->comm, st);
    double a = 1, b = 0, N = 1, V = 1;
    if (st == FS_OK)
        st = field_scale(p, tb, sums[0], &a, &b); /* the same on every rank */
    if (st != FS_OK)
        return st;
    fs_paint_mesh_scale(mesh, a, b);
    for (int k = 0; k < tb->ndim; k++) {
        N *= (double)tb->mesh[k];
        V *= tb->box[k];
        res->box[k] = tb->box[k];
    }
    res->particles = counts[0];
    res->skipped = counts[1];
    res->weight_sum = sums[0];
    res->weight_sum2 = sums[1];
    res->shot_noise = V / (N * N) * a * a * sums[1];
    res->field = p->o->field;
    res->box_from = tb->box_from_header ? "the Header's BoxSize" : "--box-size";
    res->positions = tb->positions;
    res->bytes_sent = rs->bytes_sent + ghost_bytes;
    res->received = rs->received;
    res->rounds = rs->rounds;
    res->read_s = rs->read_s;
    return FS_OK;
}

fs_status fs_particles_fill(fs_particles *p, int i, const fs_transform *t,
                            const fs_decomposition *d, void *data, int64_t elems,
                            fs_timers *timers, fs_progress *progress)
{
    table *tb = &p->tab[i];
    size_t bytes = (size_t)elems * fs_complex_bytes(t->prec);
    memset(data, 0, bytes);
    fs_status st = p->o->interlace ? take_shifted(p, bytes) : FS_OK;
    fs_paint_mesh *mesh = NULL;
    fs_paint_mesh_args ma = {t, d, p->o->window, tb->ndim, tb->mesh, tb->box,
                             {data, p->o->interlace ? p->shifted : NULL}, tb->weighted,
                             fs_paint_route_rows(tb->ndim + tb->weighted)};
    if (st == FS_OK)
        st = fs_paint_mesh_new(&ma, &mesh);
    st = fs_error_agree_shared(p->comm, st);
    fs_paint_table tab = {p->inputs[i].file, &tb->pos, i == 0 && p->pos_shards.n ? &p->pos_shards : NULL,
                          tb->weighted ? &tb->wts : NULL,
                          tb->weighted && p->wts_shards.n ? &p->wts_shards : NULL, tb->ndim,
                          tb->pos.shape[0], tb->box};
    fs_paint_route_stats rs;
    memset(&rs, 0, sizeof rs);
    if (st == FS_OK)
        st = fs_paint_route(p->comm, &tab, mesh, p->allow_nonfinite, progress, &rs);
    double t0 = MPI_Wtime();
    if (st == FS_OK)
        st = finish(p, i, mesh, &rs);
    fs_paint_mesh_free(&mesh);
    /* the caller timed all of it as the read: the rest is the paint phase */
    double paint_s = rs.paint_s + (MPI_Wtime() - t0);
    timers->t_s[FS_PHASE_PAINT] += paint_s;
    timers->t_s[FS_PHASE_READ] -= paint_s;
    p->done[i].paint_s = paint_s;
    p->done[i].shifted = p->o->interlace ? p->shifted : NULL;
    p->filled[i] = st == FS_OK;
    return st;
}
