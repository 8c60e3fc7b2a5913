/* SPDX-License-Identifier: GPL-3.0-or-later */
/* combine: see combine.h. */
#include "config.h"

#include "stages/combine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/collective.h"
#include "core/dtype.h"
#include "stages/stage.h"

typedef struct fs_combine {
    fs_combine_op op;
    int n;                         /* INPUTs: 1 or 2 */
    char path[FS_PATH_MAX];        /* the result's path in OUTPUT */
    double inv_points;             /* 1 / N, N the points of the transformed axes (the
                                      inverse that follows leaves the 1 / N to the caller) */
    /* --phase-correlate: the peak, the same on every rank once found */
    int found;
    int ndim;
    double peak;
    int64_t index[FS_LAYOUT_MAX_DIMS];
    int64_t shape[FS_LAYOUT_MAX_DIMS];
    int transformed[FS_LAYOUT_MAX_DIMS];
    /* the linear modes: the field from the circular one's element shift[a]
     * along each transformed axis (mod its length) */
    fs_combine_mode mode;
    int64_t shift[FS_LAYOUT_MAX_DIMS];
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

/* ------------------------------------------------------------ the stage */

/* The INPUTs' results lie in the same boxes: the same transform (of one
 * padded shape in a linear mode, whatever their own). */
static fs_status create(const void *opts, const fs_stage_run *r, void **state)
{
    const fs_combine_options *o = opts;
    char what[40];
    snprintf(what, sizeof what, "--%s", names[o->op]);
    fs_status st = fs_stage_check_alike(what, r->ts, r->n, 1, o->mode != FS_COMBINE_CIRCULAR,
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
    snprintf(cb->path, sizeof cb->path, "%s",
             r->facts->output_dataset ? r->facts->output_dataset : paths[o->op]);
    cb->inv_points = 1.0 / points;
    cb->ndim = t->in_ndim;
    memcpy(cb->shape, t->in_shape, sizeof cb->shape);
    memcpy(cb->transformed, t->transform_axis, sizeof cb->transformed);
    cb->mode = o->mode;
    const fs_transform *second = r->ts[r->n > 1 ? 1 : 0];
    for (int k = 0; k < t->in_ndim && cb->mode != FS_COMBINE_CIRCULAR; k++)
        if (t->transform_axis[k])
            cb->shift[k] = start_of(cb->op, cb->mode, t->data_shape[k], second->data_shape[k],
                                    t->in_shape[k]);
    return FS_OK;
}

static void destroy(void *state)
{
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

/* The first INPUT's name, attributes and coordinates, the second's name. */
static void record(const void *state, int i, int k, fs_stage_record *rec)
{
    const fs_combine *cb = state;
    (void)i, (void)k;
    rec->operation = names[cb->op];
    rec->input = 0;
    rec->second = cb->n > 1 ? 1 : -1;
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

static fs_status peak_of(fs_combine *cb, MPI_Comm comm, const fs_transform *t,
                         const fs_box *first, const void *data);

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
    combine_all(cb->op, scale, t->prec, cb->n > 1 ? turn->kept : turn->data, turn->data, n);
    fs_status shifted = cb->mode == FS_COMBINE_CIRCULAR
                            ? FS_OK
                            : shift_product(cb, t, fs_decomposition_last(turn->d), turn->data);
    fs_timer_stop(turn->timers, FS_PHASE_OPERATE);
    fs_status st = fs_error_agree(turn->comm, shifted);
    if (st == FS_OK)
        st = fs_error_agree(turn->comm, fs_compute_undo_timed(turn->c, turn->data, turn->timers,
                                                              turn->progress));
    const fs_box *first = fs_decomposition_first(turn->d); /* the peak's search is agreed */
    return st == FS_OK ? peak_of(cb, turn->comm, t, first, fs_compute_data(turn->c)) : st;
}

/* ------------------------------------------------------------------ peak */

/* The largest value of a rank: its value and its position in numpy's
 * order (the row-major index in the input's shape). */
typedef struct peak {
    double value;
    double at;      /* < 0: none on this rank */
} peak;

/* The real part of element `off` of memory of type mt. */
static double real_at(const void *data, fs_dtype mt, int64_t off)
{
    int complex_ = !fs_dtype_is_real(mt);
    int64_t o = complex_ ? 2 * off : off;
    return fs_dtype_is_single(mt) ? (double)((const float *)data)[o] : ((const double *)data)[o];
}

/* The largest real part of this rank's box, through the write map m (its
 * elements' file positions and where they lie in memory). */
static peak local_peak(const fs_transform *t, const fs_io_map *m, const void *data)
{
    peak p = {-INFINITY, -1};
    const fs_box *fb = &m->file_box;
    int64_t n = fs_box_elems(fb);
    int nd = fb->ndim, last = nd - 1;
    int64_t step = m->mem_stride_last > 1 ? m->mem_stride_last : 1;
    int64_t j[FS_LAYOUT_MAX_DIMS] = {0};
    for (int64_t e = 0; e < n; e++) {
        int64_t off = 0, pos = 0;
        for (int k = 0; k < nd; k++) {
            off = off * m->mem_dims[k] + m->mem_start[k] + j[k] * (k == last ? step : 1);
            pos = m->fold_inner > 0 ? (fb->start[0] + j[0]) * m->fold_inner + fb->start[1] + j[1]
                                    : pos * t->in_shape[k] + fb->start[k] + j[k];
        }
        double v = real_at(data, m->mem_type, off);
        if (v > p.value || (v == p.value && (double)pos < p.at) || p.at < 0) {
            p.value = v;
            p.at = (double)pos;
        }
        for (int k = last; k >= 0 && ++j[k] == fb->count[k]; k--)
            j[k] = 0;
    }
    return p;
}

/* Collective, after the inverse (--phase-correlate; nothing else): the
 * largest real part of the field in the first-stage boxes `first` at data,
 * the first in numpy's order when several are equal, and its index. The
 * status is agreed. */
static fs_status peak_of(fs_combine *cb, MPI_Comm comm, const fs_transform *t,
                         const fs_box *first, const void *data)
{
    if (cb->op != FS_COMBINE_PHASE)
        return FS_OK;
    int nranks;
    if (MPI_Comm_size(comm, &nranks) != MPI_SUCCESS)
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_size failed"));
    fs_io_map m = fs_transform_write_map(t, first);
    peak mine = local_peak(t, &m, data);
    peak *all = malloc((size_t)nranks * sizeof *all);
    fs_status st = fs_error_agree(comm, all ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory"));
    if (st != FS_OK) {
        free(all);
        return st;
    }
    if (MPI_Allgather(&mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, comm) != MPI_SUCCESS)
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Allgather of the phase correlation's peak failed");
    st = fs_error_agree(comm, st);
    peak best = {-INFINITY, -1};
    for (int r = 0; r < nranks && st == FS_OK; r++)
        if (all[r].at >= 0 && (best.at < 0 || all[r].value > best.value ||
                               (all[r].value == best.value && all[r].at < best.at)))
            best = all[r];
    free(all);
    if (st != FS_OK || best.at < 0)
        return st;
    int64_t pos = (int64_t)best.at;
    for (int k = cb->ndim - 1; k >= 0; k--) {
        cb->index[k] = pos % cb->shape[k];
        pos /= cb->shape[k];
    }
    cb->peak = best.value;
    cb->found = 1;
    return FS_OK;
}

/* numpy's signed shift along a transformed axis: indices above n/2 are
 * negative. */
static int64_t shift_of(const fs_combine *cb, int k)
{
    return cb->index[k] > cb->shape[k] / 2 ? cb->index[k] - cb->shape[k] : cb->index[k];
}

static void json(fs_json *j, const void *state)
{
    const fs_combine *cb = state;
    fs_json_open(j, "combine", '{');
    fs_json_str(j, "operation", names[cb->op]);
    fs_json_str(j, "mode", mode_name(cb->mode));
    fs_json_int(j, "inputs", cb->n);
    if (cb->found) {
        int64_t shift[FS_LAYOUT_MAX_DIMS], axes[FS_LAYOUT_MAX_DIMS];
        int na = 0;
        for (int k = 0; k < cb->ndim; k++)
            if (cb->transformed[k]) {
                axes[na] = k;
                shift[na++] = shift_of(cb, k);
            }
        fs_json_open(j, "peak", '{');
        fs_json_num(j, "value", cb->peak);
        fs_json_ints(j, "index", cb->ndim, cb->index);
        fs_json_ints(j, "axes", na, axes);
        fs_json_ints(j, "shift", na, shift);
        fs_json_close(j, '}');
    }
    fs_json_close(j, '}');
}

static void summary(const void *state, const char *output, char *buf, size_t size)
{
    const fs_combine *cb = state;
    int used = snprintf(buf, size, "  %s: %s%s%s of %d INPUT%s in %s:%s", names[cb->op],
                        cb->op == FS_COMBINE_CONVOLVE ? "the convolution" : "the correlation",
                        cb->mode ? " " : "", cb->mode ? mode_name(cb->mode) : "", cb->n,
                        cb->n == 1 ? "" : "s", output, cb->path);
    for (int k = 0, na = 0; cb->found && k < cb->ndim && used > 0 && (size_t)used < size; k++) {
        if (!cb->transformed[k])
            continue;
        used += snprintf(buf + used, size - (size_t)used, "%s%lld", na++ ? ", " : "; shift (",
                         (long long)shift_of(cb, k));
    }
    if (used > 0 && (size_t)used < size && cb->found)
        used += snprintf(buf + used, size - (size_t)used, ") at peak %.6g", cb->peak);
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
    (void)opts, (void)naxes;
    n->forward = 1;
    n->field = 1;
    n->keep_first = f->ninputs > 1 || f->dry_run;
    n->kept = "the first INPUT's copy";
    n->pads = 1; /* its own: check refuses --pad */
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
     .help = "      --phase-correlate   ifftn(R / |R|), R = X_a conj X_b (/phase_correlation);\n"
             "                          the peak's shift in the summary and the report\n"},
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
    .results = results,
    .result_path = result_path,
    .record = record,
    .operate = operate,
    .json = json,
    .summary = summary,
    .destroy = destroy,
};
