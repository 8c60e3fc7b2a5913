/* SPDX-License-Identifier: GPL-3.0-or-later */
/* painted: the stage of the particles painted instead of a field read
 * (--paint, sources/particles.h): the interlaced meshes combined after
 * the transform, --write-mesh, and the painting's part of the report.
 *
 * --interlace (nbodykit's scheme): the source painted a second mesh of the
 * particles shifted by half a cell, u + 1/2 in mesh units; once the first
 * is transformed, its result is kept in the second's memory (the two
 * swapped), the second is transformed by the same compute plan, and each
 * mode of the result becomes
 *     X = (X_1 + X_2 exp(i pi sum_a f_a / n_a)) / 2,
 * f_a the integer frequency of the transformed axis a (fftfreq, kgrid.h),
 * before any other stage sees it (needs.first): the aliases of odd order
 * cancel. --write-mesh writes the painted field itself: the result (the
 * combined one with --interlace) divided by N and brought back by the
 * compute plan's inverse, a field of the mesh's shape with the
 * coordinates x = i L / n.
 *
 * The report's member "paint" and the summary's line say, per INPUT, the
 * particles, the window, the box and whence, and the paint phase: the
 * particles per second per rank and the bytes the ranks exchanged.
 * Owns its figures and the recorded text. */
#include "config.h"

#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/collective.h"
#include "core/dtype.h"
#include "sources/particles.h"
#include "stages/kgrid.h"
#include "stages/stage.h"

typedef struct painted_options {
    int write_mesh;                 /* --write-mesh */
} painted_options;

/* One INPUT's painting, with the figures reduced over the ranks. */
typedef struct seen {
    fs_painted p;
    double read_max, paint_max;     /* the slowest rank's seconds */
    int64_t bytes;                  /* every rank's, added */
} seen;

typedef struct painted {
    const fs_particles_options *o;
    int write_mesh, n, nranks;
    fs_kgrid g;                     /* the mesh's wave vectors and box lengths */
    seen *in;
    char text[160];                 /* what --write-mesh records */
} painted;

/* ----------------------------------------------------------- interlacing */

/* exp(i pi f / n) of index j along axis a of the grid (the 1-D
 * four-step's: of a frequency index): f numpy's fftfreq, but the Nyquist
 * frequency of the halved axis of a real transform positive (rfftfreq's),
 * as nbodykit's r2c meshes have it. */
static double complex phase_of(const fs_kgrid *g, const fs_transform *t, int a, int64_t j)
{
    int64_t f = a == t->real_axis && 2 * j == g->n[a] ? j : fs_kgrid_freq(j, g->n[a]);
    return cexp(I * M_PI * (double)f / (double)g->n[a]);
}

/* X_1 (in kept) and X_2 (in data) combined into data, element e of the
 * box having the phase ph[e]. */
static void combine(void *data, const void *kept, fs_precision prec, int64_t i0,
                    const double complex *ph, int64_t n)
{
    for (int64_t j = 0; j < n; j++) {
        int64_t e = 2 * (i0 + j);
        double complex x2, x1;
        if (prec == FS_SINGLE) {
            const float *k = kept;
            float *d = data;
            x1 = k[e] + I * k[e + 1];
            x2 = (d[e] + I * d[e + 1]) * ph[j];
            d[e] = (float)(0.5 * creal(x1 + x2));
            d[e + 1] = (float)(0.5 * cimag(x1 + x2));
        } else {
            const double *k = kept;
            double *d = data;
            x1 = k[e] + I * k[e + 1];
            x2 = (d[e] + I * d[e + 1]) * ph[j];
            d[e] = 0.5 * creal(x1 + x2);
            d[e + 1] = 0.5 * cimag(x1 + x2);
        }
    }
}

/* The last-stage box row by row (the four-step's: one row per k1), the
 * outer axes' phases multiplied along. */
static fs_status combine_box(const painted *s, const fs_transform *t, const fs_box *b, void *data,
                             const void *kept)
{
    int last = b->ndim - 1;
    int64_t len = fs_box_elems(b) ? b->count[t->fold ? 0 : last] : 0, longest = len;
    for (int a = 0; a < last; a++)
        longest = b->count[a] > longest ? b->count[a] : longest;
    double complex *tab = malloc(sizeof *tab * (size_t)(longest + 1) * (size_t)(b->ndim + 1));
    if (!tab)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    double complex *row = tab + (size_t)(longest + 1) * (size_t)b->ndim;
    if (t->fold) {
        for (int64_t k1 = 0; len && k1 < t->n1; k1++) {
            for (int64_t i = 0; i < len; i++)
                row[i] = phase_of(&s->g, t, 0, fs_kgrid_fold_index(t, b, k1, i));
            combine(data, kept, t->prec, k1 * len, row, len);
        }
        free(tab);
        return FS_OK;
    }
    for (int a = 0; a < b->ndim; a++)
        for (int64_t i = 0; i < b->count[a]; i++)
            tab[(size_t)a * (size_t)(longest + 1) + (size_t)i] =
                s->g.transformed[a] ? phase_of(&s->g, t, a, b->start[a] + i) : 1.0;
    int64_t idx[FS_LAYOUT_MAX_DIMS] = {0}, rows = len ? fs_box_elems(b) / len : 0;
    const double complex *lastph = tab + (size_t)last * (size_t)(longest + 1);
    for (int64_t r = 0; r < rows; r++) {
        double complex f = 1.0;
        for (int a = 0; a < last; a++)
            f *= tab[(size_t)a * (size_t)(longest + 1) + (size_t)idx[a]];
        for (int64_t i = 0; i < len; i++)
            row[i] = f * lastph[i];
        combine(data, kept, t->prec, r * len, row, len);
        for (int a = last - 1; a >= 0 && ++idx[a] == b->count[a]; a--)
            idx[a] = 0;
    }
    free(tab);
    return FS_OK;
}

/* The second mesh's turn: the first's result swapped into the second's
 * memory, the second transformed, the two combined. Collective; this
 * rank's status (the driver agrees it). */
static fs_status interlace(painted *s, const fs_stage_turn *turn)
{
    const fs_transform *t = turn->t;
    int64_t nf = fs_box_elems(fs_decomposition_first(turn->d));
    int64_t nl = fs_box_elems(fs_decomposition_last(turn->d));
    size_t words = (size_t)(nf > nl ? nf : nl) * fs_complex_bytes(t->prec) / sizeof(uint64_t);
    uint64_t *a = fs_compute_data(turn->c), *b = turn->source->shifted;
    for (size_t i = 0; i < words; i++) {
        uint64_t x = a[i];
        a[i] = b[i];
        b[i] = x;
    }
    fs_status st = fs_compute_run(turn->c, a, turn->timers, turn->progress);
    if (st == FS_OK) {
        fs_timer_start(turn->timers, FS_PHASE_PAINT);
        st = combine_box(s, t, fs_decomposition_last(turn->d), fs_compute_data(turn->c), b);
        fs_timer_stop(turn->timers, FS_PHASE_PAINT);
    }
    return st;
}

/* ------------------------------------------------------------- the stage */

static fs_status create(const void *opts, const fs_stage_run *r, void **state)
{
    const painted_options *o = opts;
    painted *s = calloc(1, sizeof *s);
    if (!s)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    *state = s;
    s->o = &r->facts->shared->particles;
    s->write_mesh = o->write_mesh;
    s->n = r->n;
    MPI_Comm_size(r->comm, &s->nranks);
    s->in = calloc((size_t)(r->n > 0 ? r->n : 1), sizeof *s->in);
    if (!s->in)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    snprintf(s->text, sizeof s->text, "paint %s%s, %s", fs_paint_window_name(s->o->window),
             s->o->interlace ? " interlaced" : "", fs_paint_field_name(s->o->field));
    return fs_kgrid_init(&s->g, r->ts[0], &r->facts->shared->box);
}

static void destroy(void *state)
{
    painted *s = state;
    if (s)
        free(s->in);
    free(s);
}

static fs_status forward(void *state, const fs_stage_turn *turn)
{
    painted *s = state;
    if (!turn->source)
        return FS_OK;
    s->in[turn->i].p = *turn->source;
    return s->o->interlace ? interlace(s, turn) : FS_OK;
}

static int results(const void *state, int i)
{
    (void)state, (void)i;
    return 1;
}

static void record(const void *state, int i, int k, fs_stage_record *rec)
{
    const painted *s = state;
    (void)k;
    rec->operation = s->text;
    rec->nbox = fs_kgrid_lengths(&s->g, rec->box);
    rec->input = i;
}

/* --write-mesh: the result over N, brought back. */
typedef struct scaling {
    double f;
    fs_precision prec;
    int64_t n;                       /* the box's elements */
} scaling;

static void scale_run(double f, fs_precision prec, void *data, int64_t n)
{
    for (int64_t i = 0; i < 2 * n; i++)
        if (prec == FS_SINGLE)
            ((float *)data)[i] = (float)(((float *)data)[i] * f);
        else
            ((double *)data)[i] *= f;
}

static void scale_whole(void *ctx, void *data)
{
    const scaling *sc = ctx;
    scale_run(sc->f, sc->prec, data, sc->n);
}

static void scale_lines(void *ctx, const fs_lines *l)
{
    const scaling *sc = ctx;
    size_t eb = fs_complex_bytes(sc->prec);
    for (int64_t j = 0; j < l->count; j++)
        scale_run(sc->f, sc->prec, (char *)l->buf + (size_t)(j * l->dist) * eb, l->n);
}

static fs_status operate(void *state, const fs_stage_turn *turn, int k)
{
    const painted *s = state;
    (void)k;
    scaling sc = {1.0, turn->t->prec, fs_box_elems(fs_decomposition_last(turn->d))};
    for (int a = 0; a < s->g.ndim; a++)
        sc.f /= (double)s->g.n[a];
    fs_compute_middle m = {scale_whole, scale_lines, &sc};
    return fs_compute_round_trip(turn->c, turn->data, &m, turn->timers, turn->progress);
}

/* The figures of every INPUT over the ranks. */
static fs_status finish(void *state, MPI_Comm comm, const fs_stage_run *r, const fs_stage_out *out)
{
    painted *s = state;
    (void)r, (void)out;
    fs_status st = FS_OK;
    for (int i = 0; i < s->n && st == FS_OK; i++) {
        seen *e = &s->in[i];
        double t[2] = {e->p.read_s, e->p.paint_s};
        e->bytes = e->p.bytes_sent;
        st = fs_allreduce(comm, MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX);
        if (st == FS_OK)
            st = fs_allreduce(comm, MPI_IN_PLACE, &e->bytes, 1, MPI_INT64_T, MPI_SUM);
        e->read_max = t[0];
        e->paint_max = t[1];
    }
    return fs_error_agree(comm, st);
}

static double rate(const painted *s, const seen *e)
{
    return e->paint_max > 0 ? (double)e->p.particles / s->nranks / e->paint_max : 0.0;
}

static void json(fs_json *j, const void *state)
{
    const painted *s = state;
    fs_json_str(j, "window", fs_paint_window_name(s->o->window));
    fs_json_int(j, "interlaced", s->o->interlace);
    fs_json_str(j, "field", fs_paint_field_name(s->o->field));
    fs_json_open(j, "inputs", '[');
    for (int i = 0; i < s->n; i++) {
        const seen *e = &s->in[i];
        fs_json_open(j, NULL, '{');
        fs_json_str(j, "positions", e->p.positions ? e->p.positions : "");
        fs_json_int(j, "particles", e->p.particles);
        fs_json_int(j, "skipped_nonfinite", e->p.skipped);
        fs_json_num(j, "weight_sum", e->p.weight_sum);
        fs_json_num(j, "shot_noise", e->p.shot_noise);
        fs_json_open(j, "box_size", '[');
        for (int a = 0; a < s->g.ndim; a++)
            fs_json_num(j, NULL, e->p.box[a]);
        fs_json_close(j, ']');
        fs_json_str(j, "box_from", e->p.box_from ? e->p.box_from : "");
        fs_json_int(j, "rounds", e->p.rounds);
        fs_json_int(j, "bytes_exchanged", e->bytes);
        fs_json_num(j, "seconds_read_max", e->read_max);
        fs_json_num(j, "seconds_paint_max", e->paint_max);
        fs_json_num(j, "particles_per_second_per_rank", rate(s, e));
        fs_json_close(j, '}');
    }
    fs_json_close(j, ']');
}

static void summary(const void *state, const char *output, char *buf, size_t size)
{
    const painted *s = state;
    size_t used = 0;
    (void)output;
    buf[0] = '\0';
    for (int i = 0; i < s->n && used < size; i++) {
        const seen *e = &s->in[i];
        char shape[128];
        fs_format_shape(s->g.ndim, s->g.n, shape, sizeof shape);
        used += (size_t)snprintf(buf + used, size - used, "  paint: %lld particles of %s, %s%s "
                                 "onto %s (%s), box %g (%s); %.3g M particles/s per rank, %.1f MB "
                                 "exchanged\n", (long long)e->p.particles,
                                 e->p.positions ? e->p.positions : "",
                                 fs_paint_window_name(s->o->window),
                                 s->o->interlace ? " interlaced" : "", shape,
                                 fs_paint_field_name(s->o->field), e->p.box[0],
                                 e->p.box_from ? e->p.box_from : "", rate(s, e) / 1e6,
                                 (double)e->bytes / 1e6);
    }
}

/* ---------------------------------------------------------- the options */

static int active(const void *opts, const fs_stage_shared *shared)
{
    (void)opts;
    return shared->particles.window > 0;
}

static const char *option(const void *opts)
{
    return ((const painted_options *)opts)->write_mesh ? "--write-mesh" : "--paint";
}

static fs_status check(void *opts, const fs_stage_facts *f, int on)
{
    const painted_options *o = opts;
    if (o->write_mesh && !on)
        return fs_error_set(FS_ERR_USAGE, "--write-mesh: only with --paint");
    return fs_particles_options_check(&f->shared->particles, f->inverse, f->check);
}

static void needs(const void *opts, const fs_stage_facts *f, int naxes, fs_stage_needs *n)
{
    const painted_options *o = opts;
    (void)naxes;
    n->forward = o->write_mesh;
    n->field = o->write_mesh;
    n->first = f->shared->particles.interlace;
    n->whole = f->shared->particles.interlace;
    n->buffers = f->shared->particles.interlace;
    n->kept = "--interlace's shifted mesh";
}

#define S fs_stage_shared
static const fs_opt lines[] = {
    {FS_OPT("paint", 0, FS_OPT_ARG, fs_opt_enum, S, particles.window), .names = fs_paint_windows,
     .shared = 1,
     .help = "      --paint=ngp|cic|tsc|pcs  INPUT is a table of particle positions (N x D,\n"
             "                          a snapshot's /PartType1/Coordinates): paint them\n"
             "                          with this window and transform the mesh\n"},
    {FS_OPT("mesh", 0, FS_OPT_ARG, fs_paint_mesh_option, S, particles), .shared = 1,
     .help = "      --mesh=N|NxNxN      the mesh's points (mesh point i at x = i L / N)\n"},
    {FS_OPT("weights", 0, FS_OPT_ARG, fs_opt_string, S, particles.weights), .shared = 1,
     .help = "      --weights=DATASET   each particle's weight (e.g. Masses, beside the\n"
             "                          positions; default 1)\n"},
    {FS_OPT("paint-field", 0, FS_OPT_ARG, fs_opt_enum, S, particles.field),
     .names = fs_paint_fields, .shared = 1,
     .help = "      --paint-field=F     delta (default: rho / mean - 1), density (per\n"
             "                          unit volume) or sum (the weights per cell)\n"},
    {FS_OPT("interlace", 0, FS_OPT_NO_ARG, fs_opt_flag, S, particles.interlace), .shared = 1,
     .help = "      --interlace         also paint the particles shifted by half a cell\n"
             "                          and combine the two transforms (less aliasing)\n"},
    {FS_OPT("write-mesh", 0, FS_OPT_NO_ARG, fs_opt_flag, painted_options, write_mesh),
     .help = "      --write-mesh        write the painted field (real space) instead of\n"
             "                          its transform\n"},
    {.long_name = NULL},
};
#undef S

const fs_stage_ops fs_stage_painted = {
    .name = "painted",
    .report_member = "paint",
    .options = lines,
    .options_bytes = sizeof(painted_options),
    .help_heading = "Particles (painted on the ranks' mesh instead of reading a field):\n",
    .grid_options = "--paint",
    .active = active,
    .option = option,
    .check = check,
    .needs = needs,
    .create = create,
    .forward = forward,
    .results = results,
    .record = record,
    .operate = operate,
    .finish = finish,
    .json = json,
    .summary = summary,
    .destroy = destroy,
};
