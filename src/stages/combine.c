/* SPDX-License-Identifier: GPL-3.0-or-later */
/* combine: see combine.h. */
#include "config.h"

#include "stages/combine.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/collective.h"
#include "core/dtype.h"
#include "stages/peaks.h"
#include "stages/stage.h"

typedef struct fs_combine {
    fs_combine_op op;
    int n;                         /* INPUTs: 1 or 2 */
    char path[FS_PATH_MAX];        /* the result's path in OUTPUT */
    double inv_points;             /* 1 / N, N the points of the transformed axes (the
                                      inverse that follows leaves the 1 / N to the caller) */
    fs_peaks *phase;               /* --phase-correlate: every frame's peak */
    int transformed[FS_LAYOUT_MAX_DIMS];
    /* the linear modes: the field from the circular one's element shift[a]
     * along each transformed axis (mod its length) */
    fs_combine_mode mode;
    int64_t shift[FS_LAYOUT_MAX_DIMS];
    /* --phase-correlate of a reference without the stack's first `broadcast`
     * axes (0: the INPUTs alike): the reference's part on this rank */
    int broadcast;
    fs_box ref_box;
} fs_combine;

static const char *const names[] = {NULL, "correlate", "convolve", "phase-correlate"};
static const char *const paths[] = {NULL, "/correlation", "/convolution", "/phase_correlation"};
static const fs_opt_name modes[] = {{"circular", FS_COMBINE_CIRCULAR}, {"full", FS_COMBINE_FULL},
                                    {"same", FS_COMBINE_SAME},         {"valid", FS_COMBINE_VALID},
                                    {NULL, 0}};

/* ------------------------------------------------------ the linear modes */

/* The length a mode keeps of the full n_a + n_b - 1 (scipy's: same keeps
 * the first INPUT's, valid |n_a - n_b| + 1, of the centre). */
static int64_t kept_length(fs_combine_mode mode, int64_t na, int64_t nb)
{
    return mode == FS_COMBINE_SAME ? na : mode == FS_COMBINE_VALID ? llabs(na - nb) + 1
                                                                   : na + nb - 1;
}

/* Where the kept part starts in the circular result on L points: its start
 * in the full result (scipy's centre), less n_b - 1 for a correlation
 * (correlate(a, b) = convolve(a, b reversed and conjugated)), mod L. */
static int64_t start_of(fs_combine_op op, fs_combine_mode mode, int64_t na, int64_t nb, int64_t L)
{
    int64_t full = na + nb - 1, c = (full - kept_length(mode, na, nb)) / 2;
    if (op == FS_COMBINE_CORRELATE)
        c -= nb - 1;
    return ((c % L) + L) % L;
}

static const char *mode_name(fs_combine_mode mode)
{
    return modes[mode].name;
}

/* The stage's domain (stage.h): a linear mode pads every transformed axis
 * to the FFT-friendly length of at least n_a + n_b - 1 and keeps its
 * mode's part; batch axes must agree; valid needs one INPUT as large as
 * the other along every transformed axis (axes of length 1 aside, as
 * scipy's). */
static fs_status domain(const void *opts, int n, const fs_input_info *infos,
                        fs_transform_request *rq)
{
    const fs_combine_options *o = opts;
    if (o->mode == FS_COMBINE_CIRCULAR)
        return FS_OK;
    const fs_input_info *a = &infos[0], *b = &infos[n > 1 ? 1 : 0];
    char what[64];
    snprintf(what, sizeof what, "--%s --mode=%s", names[o->op], mode_name(o->mode));
    if (a->ndim != b->ndim)
        return fs_error_set(FS_ERR_USAGE, "%s: the INPUTs have %d and %d axes", what, a->ndim,
                            b->ndim);
    int smaller = 0, larger = 0;
    for (int k = 0; k < a->ndim; k++) {
        int64_t na = a->shape[k], nb = b->shape[k];
        if (!rq->transform_axis[k] && na != nb)
            return fs_error_set(FS_ERR_USAGE, "%s: axis %d is not transformed, and the INPUTs' "
                                "lengths along it differ (%lld and %lld)", what, k, (long long)na,
                                (long long)nb);
        if (!rq->transform_axis[k])
            continue;
        smaller |= na > 1 && nb > 1 && na < nb;
        larger |= na > 1 && nb > 1 && na > nb;
        rq->shape[k] = fs_fast_length(na + nb - 1);
        rq->keep_shape[k] = kept_length(o->mode, na, nb);
    }
    if (o->mode == FS_COMBINE_VALID && smaller && larger)
        return fs_error_set(FS_ERR_USAGE, "%s: one INPUT must be at least as large as the other "
                            "along every transformed axis", what);
    if (fs_shape_elems(rq->ndim, rq->shape) < 0)
        return fs_error_set(FS_ERR_USAGE, "%s: the padded array would have more than %s "
                            "elements", what, FS_MAX_ELEMS_TEXT);
    return FS_OK;
}

/* exp(2 pi i f c / L), the exponent reduced exactly. */
static void phase(int64_t f, int64_t c, int64_t L, double *re, double *im)
{
    int64_t e = (int64_t)(((__int128)f * c) % L);
    double ang = 2.0 * M_PI * (double)e / (double)L;
    *re = cos(ang);
    *im = sin(ang);
}

static void rotate(fs_precision prec, void *data, int64_t e, double re, double im)
{
    if (prec == FS_SINGLE) {
        float *d = (float *)data + 2 * e, x = d[0], y = d[1];
        d[0] = (float)(x * re - y * im);
        d[1] = (float)(x * im + y * re);
    } else {
        double *d = (double *)data + 2 * e, x = d[0], y = d[1];
        d[0] = x * re - y * im;
        d[1] = x * im + y * re;
    }
}

/* The product on this rank's last-stage box b times exp(2 pi i f_a c_a /
 * L_a) over the transformed axes (f_a the frequency index): the inverse's
 * field then begins at the circular result's element c (the shift
 * theorem), where the mode's part starts. */
static fs_status shift_product(const fs_combine *cb, const fs_transform *t, const fs_box *b,
                               void *data)
{
    if (fs_box_elems(b) == 0)
        return FS_OK;
    if (t->fold) {
        for (int64_t k1 = 0, e = 0; k1 < t->n1; k1++)
            for (int64_t i2 = 0; i2 < b->count[0]; i2++, e++) {
                double re, im;
                phase(fs_kgrid_fold_index(t, b, k1, i2), cb->shift[0], t->in_shape[0], &re, &im);
                rotate(t->prec, data, e, re, im);
            }
        return FS_OK;
    }
    double *tab[FS_LAYOUT_MAX_DIMS] = {NULL};
    fs_status st = FS_OK;
    for (int k = 0; k < b->ndim && st == FS_OK; k++) {
        if (!cb->transformed[k] || cb->shift[k] == 0)
            continue;
        tab[k] = malloc(2 * sizeof(double) * (size_t)b->count[k]);
        if (!tab[k])
            st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
        for (int64_t j = 0; tab[k] && j < b->count[k]; j++)
            phase(b->start[k] + j, cb->shift[k], t->in_shape[k], &tab[k][2 * j], &tab[k][2 * j + 1]);
    }
    int64_t at[FS_LAYOUT_MAX_DIMS] = {0}, n = fs_box_elems(b);
    for (int64_t e = 0; e < n && st == FS_OK; e++) {
        double re = 1, im = 0;
        for (int k = 0; k < b->ndim; k++)
            if (tab[k]) {
                double x = tab[k][2 * at[k]], y = tab[k][2 * at[k] + 1], r = re * x - im * y;
                im = re * y + im * x;
                re = r;
            }
        rotate(t->prec, data, e, re, im);
        for (int k = b->ndim - 1; k >= 0 && ++at[k] == b->count[k]; k--)
            at[k] = 0;
    }
    for (int k = 0; k < b->ndim; k++)
        free(tab[k]);
    return st;
}

/* ------------------------------------------------- a broadcast reference */

/* Whether the reference (a) lies as the stack (b) without its first
 * b->in_ndim - a->in_ndim axes, batch axes all (numpy's broadcasting of a
 * over them): its shape, transformed axes and working shape b's last ones,
 * transformed alike; the number of those axes (0: a is not b's shape with
 * fewer axes), or -1 with the usage error set. */
static int broadcast_of(const fs_transform *a, const fs_transform *b)
{
    int off = b->in_ndim - a->in_ndim, ok = off > 0 && !a->fold && !b->fold &&
                                           a->ndim == a->in_ndim && b->ndim == b->in_ndim;
    if (a->in_ndim == b->in_ndim && memcmp(a->in_shape, b->in_shape, sizeof a->in_shape) == 0)
        return 0;
    for (int k = 0; ok && k < b->in_ndim; k++)
        ok = k < off ? !b->transform_axis[k]
                     : a->in_shape[k - off] == b->in_shape[k] &&
                           a->data_shape[k - off] == b->data_shape[k] &&
                           a->shape[k - off] == b->shape[k] &&
                           !a->transform_axis[k - off] == !b->transform_axis[k] &&
                           !memcmp(&a->window[k - off], &b->window[k], sizeof a->window[k]) && a->r2r[k - off] == b->r2r[k];
    ok = ok && a->kind == b->kind && a->prec == b->prec && a->padded == b->padded &&
         (a->real_axis < 0 ? b->real_axis < 0 : a->real_axis + off == b->real_axis);
    if (ok)
        return off;
    char sa[256], sb[256];
    fs_format_shape(a->in_ndim, a->in_shape, sa, sizeof sa);
    fs_format_shape(b->in_ndim, b->in_shape, sb, sizeof sb);
    fs_error_set(FS_ERR_USAGE, "--phase-correlate: the first INPUT (%s) must have the second's "
                 "shape (%s) or its last axes, transformed alike (the others batch axes)", sa, sb);
    return -1;
}

/* One complex element of the box `of`'s storage as an MPI type, inner
 * (inside of) as a subarray of it (MPI_BYTE, count 0: empty). */
static int subarray(const fs_box *inner, const fs_box *of, MPI_Datatype el, MPI_Datatype *type)
{
    if (fs_box_elems(inner) == 0) {
        *type = MPI_BYTE;
        return 0;
    }
    int sizes[FS_LAYOUT_MAX_DIMS], sub[FS_LAYOUT_MAX_DIMS], starts[FS_LAYOUT_MAX_DIMS];
    for (int k = 0; k < of->ndim; k++) {
        sizes[k] = (int)of->count[k];
        sub[k] = (int)inner->count[k];
        starts[k] = (int)(inner->start[k] - of->start[k]);
    }
    MPI_Type_create_subarray(of->ndim, sizes, sub, starts, MPI_ORDER_C, el, type);
    MPI_Type_commit(type);
    return 1;
}

/* Collective: the reference's part this rank's frames need (its last-stage
 * box without the batch axes, row-major at *out, malloc'ed) from the ranks
 * that hold it (their parts of its transform, kept by the run), moved
 * straight between the two (MPI subarrays, no buffers). Agreed. */
static fs_status fetch_reference(const fs_combine *cb, const fs_stage_turn *turn, void **out)
{
    int P = 1, rank = 0, off = cb->broadcast;
    MPI_Comm_size(turn->comm, &P);
    MPI_Comm_rank(turn->comm, &rank);
    const fs_box *last = fs_decomposition_last(turn->d);
    fs_box mine[2] = {cb->ref_box, {.ndim = last->ndim - off}};
    int fits = 1;
    for (int k = 0; k < last->ndim; k++) {
        fits &= last->count[k] <= INT_MAX;
        if (k >= off) {
            mine[1].start[k - off] = last->start[k];
            mine[1].count[k - off] = last->count[k];
        }
    }
    size_t eb = fs_dtype_bytes(turn->t->work_type);
    fs_box *all = malloc(2 * sizeof(fs_box) * (size_t)P);
    int *counts = malloc(4 * sizeof(int) * (size_t)P);
    MPI_Datatype *types = malloc(2 * sizeof(MPI_Datatype) * (size_t)P);
    *out = malloc(eb * (size_t)(fs_box_elems(&mine[1]) ? fs_box_elems(&mine[1]) : 1));
    fs_status st = !all || !counts || !types || !*out ? fs_error_set(FS_ERR_RUNTIME, "out of memory")
                   : !fits ? fs_error_set(FS_ERR_RUNTIME, "--phase-correlate: an axis of a "
                                          "rank's part longer than %d", INT_MAX)
                           : FS_OK;
    st = fs_error_agree(turn->comm, st);
    if (st == FS_OK) {
        MPI_Datatype el;
        MPI_Type_contiguous((int)eb, MPI_BYTE, &el);
        MPI_Type_commit(&el);
        MPI_Allgather(mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE,
                      turn->comm);
        int *sc = counts, *rc = counts + P, *sd = counts + 2 * P, *rd = counts + 3 * P;
        for (int q = 0; q < P; q++) {
            fs_box send = fs_box_intersect(&cb->ref_box, &all[2 * q + 1]);
            fs_box recv = fs_box_intersect(&all[2 * q], &mine[1]);
            sc[q] = subarray(&send, &cb->ref_box, el, &types[q]);
            rc[q] = subarray(&recv, &mine[1], el, &types[P + q]);
            sd[q] = rd[q] = 0;
        }
        int mpi = MPI_Alltoallw(turn->kept, sc, sd, types, *out, rc, rd, types + P, turn->comm);
        for (int q = 0; q < 2 * P; q++)
            if (types[q] != MPI_BYTE)
                MPI_Type_free(&types[q]);
        MPI_Type_free(&el);
        st = fs_error_agree(turn->comm, mpi == MPI_SUCCESS ? FS_OK
                                        : fs_error_set(FS_ERR_RUNTIME, "MPI_Alltoallw failed"));
    }
    free(all);
    free(counts);
    free(types);
    return st;
}

/* The reference's first turn: where its part lies on this rank. */
static fs_status forward(void *state, const fs_stage_turn *turn)
{
    fs_combine *cb = state;
    if (turn->i == 0)
        cb->ref_box = *fs_decomposition_last(turn->d);
    return FS_OK;
}

/* ------------------------------------------------------------ the stage */

/* The INPUTs' results lie in the same boxes: the same transform (of one
 * padded shape in a linear mode, whatever their own). */
static fs_status create(const void *opts, const fs_stage_run *r, void **state)
{
    const fs_combine_options *o = opts;
    char what[40];
    snprintf(what, sizeof what, "--%s", names[o->op]);
    int broadcast = o->op == FS_COMBINE_PHASE && r->n == 2 ? broadcast_of(r->ts[0], r->ts[1]) : 0;
    if (broadcast < 0)
        return FS_ERR_USAGE;
    fs_status st = broadcast ? FS_OK
                             : fs_stage_check_alike(what, r->ts, r->n, 1,
                                                    o->mode != FS_COMBINE_CIRCULAR,
                                                    "all real or all complex; give "
                                                    "--precision= when one is single precision");
    if (st != FS_OK)
        return st;
    fs_combine *cb = calloc(1, sizeof *cb);
    if (!cb)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    *state = cb;
    const fs_transform *t = r->ts[0];
    double points = 1;
    for (int k = 0; k < t->in_ndim; k++)
        if (t->transform_axis[k])
            points *= (double)t->in_shape[k];
    cb->op = o->op;
    cb->n = r->n;
    cb->broadcast = broadcast;
    snprintf(cb->path, sizeof cb->path, "%s",
             r->facts->output_dataset ? r->facts->output_dataset : paths[o->op]);
    cb->inv_points = 1.0 / points;
    memcpy(cb->transformed, t->transform_axis, sizeof cb->transformed);
    cb->mode = o->mode;
    const fs_transform *second = r->ts[r->n > 1 ? 1 : 0];
    for (int k = 0; k < t->in_ndim && cb->mode != FS_COMBINE_CIRCULAR; k++)
        if (t->transform_axis[k])
            cb->shift[k] = start_of(cb->op, cb->mode, t->data_shape[k], second->data_shape[k],
                                    t->in_shape[k]);
    char group[FS_PATH_MAX];
    fs_stage_group_path(r->facts, "phase_shifts", group, sizeof group);
    if (cb->op == FS_COMBINE_PHASE && !(cb->phase = fs_peaks_new(r->ts[r->n - 1], o->upsample, group)))
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    return FS_OK;
}

static void destroy(void *state)
{
    fs_combine *cb = state;
    if (cb)
        fs_peaks_free(&cb->phase);
    free(state);
}

/* The last INPUT's turn writes the result. */
static int results(const void *state, int i)
{
    const fs_combine *cb = state;
    return i == cb->n - 1;
}

static const char *result_path(const void *state, int k)
{
    const fs_combine *cb = state;
    return k == 0 ? cb->path : NULL;
}

/* --phase-correlate's group of every frame's shift. */
static const char *group(const void *state, int g)
{
    const fs_combine *cb = state;
    return g == 0 && cb->phase ? fs_peaks_group(cb->phase) : NULL;
}

/* Collective: the phase correlation's group, timed as the write phase. */
static fs_status finish(void *state, MPI_Comm comm, const fs_stage_run *r, const fs_stage_out *out)
{
    fs_combine *cb = state;
    (void)r;
    if (!cb->phase)
        return FS_OK;
    fs_timer_start(out->timers, FS_PHASE_WRITE);
    fs_status st = fs_error_agree(comm, fs_peaks_write(cb->phase, out->h5, out->replace));
    fs_timer_stop(out->timers, FS_PHASE_WRITE);
    return st;
}

/* The first INPUT's name, attributes and coordinates, the second's name. */
static void record(const void *state, int i, int k, fs_stage_record *rec)
{
    const fs_combine *cb = state;
    (void)i, (void)k;
    rec->operation = names[cb->op];
    rec->input = cb->broadcast ? 1 : 0; /* the stack's shape */
    rec->second = cb->n > 1 ? 1 - rec->input : -1;
    rec->crop = cb->mode != FS_COMBINE_CIRCULAR ? mode_name(cb->mode) : NULL;
}

/* One element: b becomes op(a, b) (a == b for one INPUT) times scale (the
 * phase: times scale / |R|). */
static inline void combine_one(fs_combine_op op, double scale, double ar, double ai, double *br,
                               double *bi)
{
    double xr = *br, xi = *bi, rr, ri;
    if (op == FS_COMBINE_CONVOLVE) {
        rr = ar * xr - ai * xi;
        ri = ar * xi + ai * xr;
    } else { /* a conj b */
        rr = ar * xr + ai * xi;
        ri = ai * xr - ar * xi;
    }
    if (op == FS_COMBINE_PHASE) {
        double m = hypot(rr, ri);
        scale = m > 0 ? scale / m : 0.0;
    }
    *br = rr * scale;
    *bi = ri * scale;
}

/* b = op(a, b) over n complex elements of either precision. */
#define COMBINE_LOOP(type)                                                                     \
    do {                                                                                       \
        const type *a = a_;                                                                    \
        type *b = b_;                                                                          \
        for (int64_t e = 0; e < n; e++) {                                                      \
            double br = b[2 * e], bi = b[2 * e + 1];                                           \
            combine_one(op, scale, a[2 * e], a[2 * e + 1], &br, &bi);                          \
            b[2 * e] = (type)br;                                                               \
            b[2 * e + 1] = (type)bi;                                                           \
        }                                                                                      \
    } while (0)

static void combine_all(fs_combine_op op, double scale, fs_precision prec, const void *a_,
                        void *b_, int64_t n)
{
    if (prec == FS_SINGLE)
        COMBINE_LOOP(float);
    else
        COMBINE_LOOP(double);
}

/* The elements of a frame's part of box: its count over the axes it has
 * besides the stack's batch axes. */
static int64_t broadcast_elems(const fs_combine *cb, const fs_box *b)
{
    int64_t e = 1;
    for (int k = cb->broadcast; k < b->ndim; k++)
        e *= b->count[k];
    return e;
}

/* Collective, on the last INPUT's turn: its result times the kept first's
 * (or its own), the inverse, and --phase-correlate's peak. */
static fs_status operate(void *state, const fs_stage_turn *turn, int k)
{
    fs_combine *cb = state;
    const fs_transform *t = turn->t;
    int64_t n = fs_box_elems(fs_decomposition_last(turn->d));
    (void)k;
    fs_timer_start(turn->timers, FS_PHASE_OPERATE);
    /* the inverse is unscaled: ifftn is 1 / N of it; the circular
     * correlation is a mean over the N points */
    double scale = cb->op == FS_COMBINE_CORRELATE && cb->mode == FS_COMBINE_CIRCULAR
                       ? cb->inv_points * cb->inv_points
                       : cb->inv_points;
    void *ref = NULL;
    if (cb->broadcast) {
        fs_status got = fetch_reference(cb, turn, &ref); /* agreed */
        if (got != FS_OK) {
            free(ref);
            fs_timer_stop(turn->timers, FS_PHASE_OPERATE);
            return got;
        }
    }
    /* a broadcast reference: the same part for every frame of the box */
    int64_t each = ref ? broadcast_elems(cb, fs_decomposition_last(turn->d)) : n;
    size_t eb = fs_dtype_bytes(t->work_type);
    for (int64_t e = 0; each > 0 && e < n; e += each)
        combine_all(cb->op, scale, t->prec, ref ? ref : cb->n > 1 ? turn->kept : turn->data,
                    (char *)turn->data + eb * (size_t)e, each);
    free(ref);
    fs_status shifted = cb->mode == FS_COMBINE_CIRCULAR
                            ? FS_OK
                            : shift_product(cb, t, fs_decomposition_last(turn->d), turn->data);
    const fs_box *last = fs_decomposition_last(turn->d);
    if (shifted == FS_OK && cb->phase) /* --apply's weights on R / |R| */
        shifted = fs_stage_weigh(turn, last, turn->data);
    if (shifted == FS_OK && cb->phase)
        shifted = fs_peaks_keep(cb->phase, t, last, turn->data);
    fs_timer_stop(turn->timers, FS_PHASE_OPERATE);
    fs_status st = fs_error_agree(turn->comm, shifted);
    if (st == FS_OK)
        st = fs_error_agree(turn->comm, fs_compute_undo_timed(turn->c, turn->data, turn->timers,
                                                              turn->progress));
    if (st != FS_OK || !cb->phase)
        return st;
    fs_timer_start(turn->timers, FS_PHASE_OPERATE); /* the peaks' search is agreed */
    st = fs_peaks_find(cb->phase, turn->comm, t, fs_decomposition_first(turn->d), last,
                       fs_compute_data(turn->c));
    fs_timer_stop(turn->timers, FS_PHASE_OPERATE);
    return st;
}

static void json(fs_json *j, const void *state)
{
    const fs_combine *cb = state;
    fs_json_open(j, "combine", '{');
    fs_json_str(j, "operation", names[cb->op]);
    fs_json_str(j, "mode", mode_name(cb->mode));
    fs_json_int(j, "inputs", cb->n);
    fs_peaks_json(j, cb->phase);
    fs_json_close(j, '}');
}

static void summary(const void *state, const char *output, char *buf, size_t size)
{
    const fs_combine *cb = state;
    int used = snprintf(buf, size, "  %s: %s%s%s of %d INPUT%s in %s:%s", names[cb->op],
                        cb->op == FS_COMBINE_CONVOLVE ? "the convolution" : "the correlation",
                        cb->mode ? " " : "", cb->mode ? mode_name(cb->mode) : "", cb->n,
                        cb->n == 1 ? "" : "s", output, cb->path);
    if (used > 0 && (size_t)used < size)
        fs_peaks_summary(cb->phase, output, buf + used, size - (size_t)used);
    used += used > 0 && (size_t)used < size ? (int)strlen(buf + used) : 0;
    if (used > 0 && (size_t)used < size)
        snprintf(buf + used, size - (size_t)used, "\n");
}

/* ---------------------------------------------------------- the options */

static int active(const void *opts, const fs_stage_shared *shared)
{
    (void)shared;
    return ((const fs_combine_options *)opts)->op != FS_COMBINE_NONE;
}

static const char *option(const void *opts)
{
    static const char *const options[] = {NULL, "--correlate", "--convolve", "--phase-correlate"};
    return options[((const fs_combine_options *)opts)->op];
}

/* One or two INPUTs: --correlate takes one (its autocorrelation) or two,
 * the others two. */
static fs_status check(void *opts, const fs_stage_facts *f, int on)
{
    const fs_combine_options *o = opts;
    if (o->mode_given && (!on || o->op == FS_COMBINE_PHASE))
        return fs_error_set(FS_ERR_USAGE, "--mode: only with --convolve or --correlate");
    if (o->upsample && (!on || o->op != FS_COMBINE_PHASE))
        return fs_error_set(FS_ERR_USAGE, "--upsample: only with --phase-correlate");
    if (on && f->pad)
        return fs_error_set(FS_ERR_USAGE, "%s: zero pads its INPUTs itself with --mode=full, "
                            "same or valid (not --pad)", option(opts));
    if (!on || f->dry_run)
        return FS_OK;
    int need = o->op == FS_COMBINE_CORRELATE ? 0 : 2;
    if (need ? f->ninputs != need : f->ninputs > 2)
        return fs_error_set(FS_ERR_USAGE, "%s: expected %s INPUTs (got %d)", option(opts),
                            need ? "two" : "one or two", f->ninputs);
    return FS_OK;
}

/* A dry run names one INPUT for the two. */
static void needs(const void *opts, const fs_stage_facts *f, int naxes, fs_stage_needs *n)
{
    const fs_combine_options *o = opts;
    (void)naxes;
    n->forward = 1;
    n->field = 1;
    n->keep_first = f->ninputs > 1 || f->dry_run;
    n->kept = "the first INPUT's copy";
    n->pads = 1; /* its own: check refuses --pad */
    if (o->op == FS_COMBINE_PHASE) {
        n->groups = 1;
        n->longest_group = "phase_shifts";
        n->buffers = o->upsample > 1; /* the cross-power spectrum kept through the inverse */
        n->windows = 1;               /* of the windowed INPUTs (the edges not periodic) */
        n->takes_weights = 1;         /* --apply's factors on R / |R| */
        n->broadcasts = 1;            /* a reference over the frames */
    }
}

/* --correlate, --convolve, --phase-correlate: one of them, by the option's name. */
static fs_status set_op(const fs_opt *opt, const char *arg, void *section)
{
    fs_combine_options *o = section;
    (void)arg;
    fs_combine_op op = FS_COMBINE_CORRELATE;
    while (op < FS_COMBINE_PHASE && strcmp(names[op], opt->long_name) != 0)
        op++;
    if (o->op && o->op != op)
        return fs_error_set(FS_ERR_USAGE, "--%s, --%s: one operation per run", names[o->op],
                            names[op]);
    o->op = op;
    return FS_OK;
}

static fs_status set_mode(const fs_opt *opt, const char *arg, void *section)
{
    fs_status st = fs_opt_enum(opt, arg, section);
    ((fs_combine_options *)section)->mode_given = st == FS_OK;
    return st;
}

#define O fs_combine_options
static const fs_opt lines[] = {
    {FS_OPT("correlate", 0, FS_OPT_NO_ARG, set_op, O, op),
     .help = "      --correlate         ifftn(X_a conj X_b) / N (/correlation); one INPUT:\n"
             "                          its autocorrelation\n"},
    {FS_OPT("convolve", 0, FS_OPT_NO_ARG, set_op, O, op),
     .help = "      --convolve          ifftn(X_a X_b), circular (/convolution)\n"},
    {FS_OPT("phase-correlate", 0, FS_OPT_NO_ARG, set_op, O, op),
     .help = "      --phase-correlate   ifftn(W R / |R|), R = X_a conj X_b, W --apply's\n"
             "                          factors (default 1) (/phase_correlation); each\n"
             "                          frame's shift (an index of the batch axes) in the\n"
             "                          summary, the report and /phase_shifts; a may be\n"
             "                          one frame, broadcast over b's frames\n"},
    {FS_OPT("upsample", 0, FS_OPT_ARG, fs_opt_long, O, upsample), .lo = 1, .hi = 1000,
     .expected = "an upsampling factor from 1 to 1000",
     .help = "      --upsample=U        --phase-correlate's shifts to 1/U pixel: the peak\n"
             "                          of ifftn(R / |R|) on a grid of spacing 1/U over\n"
             "                          1.5 pixels around the integer one (default 1)\n"},
    {FS_OPT("mode", 0, FS_OPT_ARG, set_mode, O, mode), .names = modes,
     .help = "      --mode=M            circular (default), or full, same or valid: linear,\n"
             "                          as scipy.signal.fftconvolve and correlate (the\n"
             "                          INPUTs may differ in shape)\n"},
    {.long_name = NULL},
};
#undef O

const fs_stage_ops fs_stage_combine = {
    .name = "combine",
    .options = lines,
    .options_bytes = sizeof(fs_combine_options),
    .help_heading = "Combined spectra (two INPUTs a, b of one shape; N points transformed):\n",
    .active = active,
    .option = option,
    .check = check,
    .needs = needs,
    .domain = domain,
    .create = create,
    .forward = forward,
    .results = results,
    .result_path = result_path,
    .record = record,
    .operate = operate,
    .group = group,
    .finish = finish,
    .json = json,
    .summary = summary,
    .destroy = destroy,
};
