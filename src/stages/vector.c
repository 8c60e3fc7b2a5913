/* SPDX-License-Identifier: GPL-3.0-or-later */
/* vector: see vector.h. */
#include "config.h"

#include "stages/vector.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/collective.h"
#include "core/dtype.h"
#include "stages/kgrid.h"
#include "stages/stage.h"

/* The INPUTs op takes on a D-axis transform. */
static int inputs_of(fs_vector_op op, int D)
{
    return op == FS_VECTOR_GRADIENT ? 1 : op == FS_VECTOR_CURL ? 3 : D;
}

/* The kept spectra of a run of op with n INPUTs on a D-axis transform (what
 * the footprint counts): the gradient of one axis is made in place. */
static int slots_of(fs_vector_op op, int n, int D)
{
    switch (op) {
    case FS_VECTOR_GRADIENT: return D > 1;
    case FS_VECTOR_CURL: return 2;
    case FS_VECTOR_DIVERGENCE: return n > 1 ? n - 1 : 0;
    case FS_VECTOR_HELMHOLTZ: return n;
    default: return 0;
    }
}

/* Its results on a D-axis transform, and the name of result k ("grad_x"). */
static int results_of(fs_vector_op op, int D)
{
    switch (op) {
    case FS_VECTOR_GRADIENT: return D;
    case FS_VECTOR_CURL: return 3;
    case FS_VECTOR_DIVERGENCE: return 1;
    case FS_VECTOR_HELMHOLTZ: return 2 * D;
    default: return 0;
    }
}

static void result_name(fs_vector_op op, int D, int k, char *buf, size_t size)
{
    static const char xyz[] = "xyz";
    switch (op) {
    case FS_VECTOR_GRADIENT: snprintf(buf, size, "grad_%c", xyz[k % 3]); break;
    case FS_VECTOR_CURL: snprintf(buf, size, "curl_%c", xyz[k % 3]); break;
    case FS_VECTOR_HELMHOLTZ:
        snprintf(buf, size, "%s_%c", k < D ? "solenoidal" : "compressive", xyz[(k % D) % 3]);
        break;
    default: snprintf(buf, size, "divergence"); break;
    }
}

/* k' along the transformed axes of every element of a rank's box, row by
 * row: the per-axis tables, or the four-step's frequency index (kgrid.h). */
typedef struct kwalk {
    const fs_kgrid *g;
    const fs_transform *t;
    const fs_box *b;
    int D, axis[FS_VECTOR_MAX_AXES];
    double *kd[FS_LAYOUT_MAX_DIMS];
    int64_t idx[FS_LAYOUT_MAX_DIMS];
    int64_t e;                     /* the four-step's element [k1, i2] = k1 count[0] + i2 */
} kwalk;

static void kwalk_free(kwalk *w)
{
    for (int a = 0; a < FS_LAYOUT_MAX_DIMS; a++)
        free(w->kd[a]);
}

static fs_status kwalk_init(kwalk *w, const fs_kgrid *g, const fs_transform *t, const fs_box *b)
{
    memset(w, 0, sizeof *w);
    w->g = g;
    w->t = t;
    w->b = b;
    for (int a = 0; a < g->ndim && w->D < FS_VECTOR_MAX_AXES; a++)
        if (g->transformed[a])
            w->axis[w->D++] = a;
    for (int a = 0; a < b->ndim && !t->fold; a++) {
        w->kd[a] = malloc(sizeof(double) * (size_t)(b->count[a] > 0 ? b->count[a] : 1));
        if (!w->kd[a]) {
            kwalk_free(w);
            return fs_error_set(FS_ERR_RUNTIME, "out of memory");
        }
        for (int64_t i = 0; i < b->count[a]; i++)
            w->kd[a][i] = fs_kgrid_deriv_k(g, a, b->start[a] + i);
    }
    return FS_OK;
}

/* k' of the current element into kv, then on to the next. */
static void kwalk_step(kwalk *w, double *kv)
{
    const fs_box *b = w->b;
    if (w->t->fold) {
        int64_t cnt = b->count[0];
        kv[0] = fs_kgrid_deriv_k(w->g, 0, fs_kgrid_fold_index(w->t, b, w->e / cnt, w->e % cnt));
        w->e++;
        return;
    }
    for (int d = 0; d < w->D; d++)
        kv[d] = w->kd[w->axis[d]][w->idx[w->axis[d]]];
    for (int a = b->ndim - 1; a >= 0 && ++w->idx[a] == b->count[a]; a--)
        w->idx[a] = 0;
}

/* Complex element e of an array of either precision. */
typedef struct cplx {
    double re, im;
} cplx;

static cplx load(const void *p, int single, int64_t e)
{
    if (single)
        return (cplx){((const float *)p)[2 * e], ((const float *)p)[2 * e + 1]};
    return (cplx){((const double *)p)[2 * e], ((const double *)p)[2 * e + 1]};
}

static void store(void *p, int single, int64_t e, cplx v)
{
    if (single) {
        ((float *)p)[2 * e] = (float)v.re;
        ((float *)p)[2 * e + 1] = (float)v.im;
    } else {
        ((double *)p)[2 * e] = v.re;
        ((double *)p)[2 * e + 1] = v.im;
    }
}

/* i f v */
static cplx times_i(cplx v, double f)
{
    return (cplx){-v.im * f, v.re * f};
}

/* The components V_a of element e: slots a < D - 1, the last from `lastv`. */
static void components(void **slots, const void *lastv, int D, int single, int64_t e, cplx *v)
{
    for (int a = 0; a < D - 1; a++)
        v[a] = load(slots[a], single, e);
    v[D - 1] = load(lastv, single, e);
}

/* The helmholtz parts of element v: S_a or C_a for result k. */
static cplx helmholtz_one(const cplx *v, const double *kv, int D, int k, double scale)
{
    double k2 = 0;
    cplx dot = {0, 0};
    for (int a = 0; a < D; a++) {
        k2 += kv[a] * kv[a];
        dot.re += kv[a] * v[a].re;
        dot.im += kv[a] * v[a].im;
    }
    int a = k % D;
    double f = k2 > 0 ? kv[a] / k2 : 0.0;
    cplx c = {dot.re * f, dot.im * f};
    if (k >= D)
        return (cplx){c.re * scale, c.im * scale};
    return (cplx){(v[a].re - c.re) * scale, (v[a].im - c.im) * scale};
}

/* Result k of op at one element, from its components v (the gradient's
 * one) and its k' (kv). */
static cplx result_at(fs_vector_op op, const cplx *v, const double *kv, int D, int k, double scale)
{
    switch (op) {
    case FS_VECTOR_GRADIENT:
        return times_i(v[0], kv[k] * scale);
    case FS_VECTOR_DIVERGENCE: {
        cplx s = {0, 0};
        for (int a = 0; a < D; a++) {
            s.re += kv[a] * v[a].re;
            s.im += kv[a] * v[a].im;
        }
        return times_i(s, scale);
    }
    case FS_VECTOR_CURL: {
        int b = (k + 1) % 3, d = (k + 2) % 3; /* c_k = i (k_b V_d - k_d V_b) */
        return times_i((cplx){kv[b] * v[d].re - kv[d] * v[b].re,
                              kv[b] * v[d].im - kv[d] * v[b].im}, scale);
    }
    case FS_VECTOR_HELMHOLTZ:
        return helmholtz_one(v, kv, D, k, scale);
    default:
        return (cplx){0, 0};
    }
}

/* Result k of op at every element (first: the last turn's first result). */
static fs_status each_element(fs_vector_op op, const fs_kgrid *g, const fs_transform *t,
                              const fs_box *last, void **slots, void *data, int k, int first,
                              double scale)
{
    int64_t n = fs_box_elems(last);
    if (n == 0)
        return FS_OK;
    kwalk w;
    fs_status st = kwalk_init(&w, g, t, last);
    if (st != FS_OK)
        return st;
    int single = t->prec == FS_SINGLE, D = w.D;
    size_t bytes = (size_t)n * fs_complex_bytes(t->prec);
    if (first && op == FS_VECTOR_GRADIENT && slots[0])
        memcpy(slots[0], data, bytes);
    const void *spectrum = slots[0] ? slots[0] : data; /* the gradient's */
    if (first && op == FS_VECTOR_HELMHOLTZ)
        memcpy(slots[D - 1], data, bytes);
    double kv[FS_VECTOR_MAX_AXES] = {0};
    cplx v[FS_VECTOR_MAX_AXES];
    for (int64_t e = 0; e < n; e++) {
        kwalk_step(&w, kv);
        if (op == FS_VECTOR_GRADIENT)
            v[0] = load(spectrum, single, e);
        else if (op == FS_VECTOR_HELMHOLTZ)
            for (int a = 0; a < D; a++)
                v[a] = load(slots[a], single, e);
        else
            components(slots, data, op == FS_VECTOR_CURL ? 3 : D, single, e, v);
        if (op == FS_VECTOR_CURL) { /* the three at once: the slots take the others */
            cplx c1 = result_at(op, v, kv, 3, 1, scale), c2 = result_at(op, v, kv, 3, 2, scale);
            store(data, single, e, result_at(op, v, kv, 3, 0, scale));
            store(slots[0], single, e, c1);
            store(slots[1], single, e, c2);
        } else {
            store(data, single, e, result_at(op, v, kv, D, k, scale));
        }
    }
    kwalk_free(&w);
    return FS_OK;
}

/* The last turn: result 0 into data (which holds the last INPUT's spectrum),
 * slots prepared for the others. */
static fs_status vector_first(fs_vector_op op, const fs_kgrid *g, const fs_transform *t,
                              const fs_box *last, void **slots, void *data, double scale)
{
    return each_element(op, g, t, last, slots, data, 0, 1, scale);
}

/* Result k (k >= 1) into data from the slots. */
static fs_status vector_next(fs_vector_op op, const fs_kgrid *g, const fs_transform *t,
                             const fs_box *last, void **slots, void *data, int k, double scale)
{
    if (op == FS_VECTOR_CURL) { /* computed on the last turn */
        memcpy(data, slots[k - 1], (size_t)fs_box_elems(last) * fs_complex_bytes(t->prec));
        return FS_OK;
    }
    return each_element(op, g, t, last, slots, data, k, 0, scale);
}

/* ------------------------------------------------------------ the stage */

typedef struct vector_state {
    fs_vector_op op;
    int n;                                     /* INPUTs */
    fs_kgrid grid;
    double scale;                              /* 1 / N (the inverse is unscaled) */
    int nslots, nresults;
    void *slot[FS_VECTOR_MAX_AXES];
    char paths[FS_VECTOR_MAX_RESULTS][FS_PATH_MAX + 32];
    char components[FS_VECTOR_MAX_AXES * (2 * FS_PATH_MAX + 4)];
} vector_state;

static const char *const names[] = {NULL, "gradient", "curl", "divergence", "helmholtz"};

/* The grid, and the INPUTs the operation takes on it. */
static fs_status check_grid(fs_vector_op op, const fs_kgrid *g, int n)
{
    const char *name = names[op];
    int D = g->naxes;
    if (D > FS_VECTOR_MAX_AXES)
        return fs_error_set(FS_ERR_USAGE, "--vector=%s: takes one to three transformed axes (%d "
                            "here; choose them with --axes)", name, D);
    if (op == FS_VECTOR_CURL && D != 3)
        return fs_error_set(FS_ERR_USAGE, "--vector=curl: needs a 3-D transform (%d transformed "
                            "axes here)", D);
    int need = inputs_of(op, D);
    if (n != need)
        return fs_error_set(FS_ERR_USAGE, "--vector=%s: expected %d INPUT%s, the components along "
                            "the %d transformed axes (got %d)", name, need, need == 1 ? "" : "s",
                            D, n);
    return FS_OK;
}

/* The results' paths: /NAME, under OUTPUT's path as a group when given. */
static void take_paths(vector_state *v, const char *given)
{
    size_t len = given ? strlen(given) : 0;
    while (len > 0 && given[len - 1] == '/') /* OUTPUT:/group/ */
        len--;
    for (int k = 0; k < v->nresults; k++) {
        char name[32];
        result_name(v->op, v->grid.naxes, k, name, sizeof name);
        snprintf(v->paths[k], sizeof v->paths[k], "%.*s/%s", (int)len, given ? given : "", name);
    }
}

static fs_status create(const void *opts, const fs_stage_run *r, void **state)
{
    const fs_vector_options *o = opts;
    char what[40];
    snprintf(what, sizeof what, "--vector=%s", names[o->op]);
    fs_status st = fs_stage_check_alike(what, r->ts, r->n, 1, 0, "all real or all complex; give "
                                        "--precision= when one is single precision");
    vector_state *v = st == FS_OK ? calloc(1, sizeof *v) : NULL;
    if (st != FS_OK)
        return st;
    if (!v)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    *state = v;
    v->op = o->op;
    v->n = r->n;
    if ((st = fs_kgrid_init(&v->grid, r->ts[0], &r->facts->shared->box)) != FS_OK ||
        (st = check_grid(v->op, &v->grid, r->n)) != FS_OK)
        return st;
    double points = 1;
    for (int a = 0; a < v->grid.ndim; a++)
        if (v->grid.transformed[a])
            points *= (double)v->grid.n[a];
    v->scale = 1.0 / points;
    v->nslots = slots_of(v->op, r->n, v->grid.naxes);
    v->nresults = results_of(v->op, v->grid.naxes);
    take_paths(v, r->facts->output_dataset);
    for (int i = 0, used = 0; r->n > 1 && i < r->n && i < FS_VECTOR_MAX_AXES; i++)
        used += snprintf(v->components + used, sizeof v->components - (size_t)used, "%s%s:%s",
                         i ? ", " : "", r->inputs[i].file, r->infos[i].dataset);
    return FS_OK;
}

static void free_slots(vector_state *v)
{
    for (int s = 0; s < FS_VECTOR_MAX_AXES; s++) {
        free(v->slot[s]);
        v->slot[s] = NULL;
    }
}

static void destroy(void *state)
{
    vector_state *v = state;
    if (!v)
        return;
    free_slots(v);
    free(v);
}

/* An earlier INPUT's spectrum kept in its slot. */
static fs_status forward(void *state, const fs_stage_turn *turn)
{
    vector_state *v = state;
    int i = turn->i;
    if (i == v->n - 1)
        return FS_OK;
    size_t bytes = (size_t)fs_box_elems(fs_decomposition_last(turn->d)) *
                   fs_complex_bytes(turn->t->prec);
    free(v->slot[i]);
    if (!(v->slot[i] = malloc(bytes ? bytes : 1)))
        return fs_error_set(FS_ERR_RUNTIME, "out of memory keeping the spectra for --vector=%s "
                            "(%zu bytes)", names[v->op], bytes);
    memcpy(v->slot[i], turn->data, bytes);
    return FS_OK;
}

static int results(const void *state, int i)
{
    const vector_state *v = state;
    return i == v->n - 1 ? v->nresults : 0;
}

static const char *result_path(const void *state, int k)
{
    const vector_state *v = state;
    return k >= 0 && k < v->nresults ? v->paths[k] : NULL;
}

static void record(const void *state, int i, int k, fs_stage_record *rec)
{
    const vector_state *v = state;
    (void)i, (void)k;
    rec->operation = names[v->op];
    rec->nbox = fs_kgrid_lengths(&v->grid, rec->box);
    rec->input = 0;
    rec->second = -1;
    rec->components = v->n > 1 ? v->components : NULL;
    /* the two parts' spectra apart */
    if (v->op == FS_VECTOR_HELMHOLTZ)
        rec->family = k < v->grid.naxes ? "solenoidal" : "compressive";
}

/* Result k made from the slots (the first: with the last INPUT's spectrum,
 * the slots it needs allocated first), then the inverse. */
static fs_status make(vector_state *v, const fs_stage_turn *turn, int k)
{
    const fs_box *last = fs_decomposition_last(turn->d);
    if (k > 0)
        return vector_next(v->op, &v->grid, turn->t, last, v->slot, turn->data, k, v->scale);
    size_t bytes = (size_t)fs_box_elems(last) * fs_complex_bytes(turn->t->prec);
    for (int s = v->n - 1; s < v->nslots; s++) {
        free(v->slot[s]);
        if (!(v->slot[s] = malloc(bytes ? bytes : 1)))
            return fs_error_set(FS_ERR_RUNTIME, "out of memory keeping the spectra for "
                                "--vector=%s (%zu bytes)", names[v->op], bytes);
    }
    return vector_first(v->op, &v->grid, turn->t, last, v->slot, turn->data, v->scale);
}

/* Out of core: result k on one block of the last INPUT's forward result,
 * in place, the earlier INPUTs' blocks of the same box beside it
 * (turn->kept_each); the executor runs the inverse. */
static fs_status operate_block(void *state, const fs_stage_turn *turn, int k, const fs_box *box,
                               void *data)
{
    const vector_state *v = state;
    int64_t n = fs_box_elems(box);
    kwalk w;
    fs_status st = n ? kwalk_init(&w, &v->grid, turn->t, box) : FS_OK;
    if (st != FS_OK || n == 0)
        return st;
    int single = turn->t->prec == FS_SINGLE;
    double kv[FS_VECTOR_MAX_AXES] = {0};
    cplx c[FS_VECTOR_MAX_AXES];
    for (int64_t e = 0; e < n; e++) {
        kwalk_step(&w, kv);
        for (int a = 0; a < v->n && a < FS_VECTOR_MAX_AXES; a++)
            c[a] = load(a < v->n - 1 ? turn->kept_each[a] : data, single, e);
        store(data, single, e, result_at(v->op, c, kv, w.D, k, v->scale));
    }
    kwalk_free(&w);
    return FS_OK;
}

static fs_status operate(void *state, const fs_stage_turn *turn, int k)
{
    vector_state *v = state;
    fs_timer_start(turn->timers, FS_PHASE_OPERATE);
    fs_status st = make(v, turn, k);
    if (k == v->nresults - 1)
        free_slots(v); /* the last result made */
    /* the result handed to the stages that bin it: its forward transform
     * is the product without the inverse's 1 / N */
    if (st == FS_OK)
        st = fs_stage_made(turn, k, turn->data, 1.0 / v->scale);
    fs_timer_stop(turn->timers, FS_PHASE_OPERATE);
    if ((st = fs_error_agree(turn->comm, st)) != FS_OK || turn->no_inverse)
        return st;
    return fs_error_agree(turn->comm, fs_compute_undo_timed(turn->c, turn->data, turn->timers,
                                                            turn->progress));
}

/* --vector's results, comma separated, into buf. */
static void results_text(const vector_state *v, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < v->nresults && used < size; k++) {
        int w = snprintf(buf + used, size - used, "%s%s", k ? ", " : "", v->paths[k]);
        used += w > 0 ? (size_t)w : 0;
    }
}

static void json(fs_json *j, const void *state)
{
    const vector_state *v = state;
    char text[FS_VECTOR_MAX_RESULTS * (FS_PATH_MAX + 34)];
    results_text(v, text, sizeof text);
    fs_json_open(j, "combine", '{');
    fs_json_str(j, "operation", names[v->op]);
    fs_json_int(j, "inputs", v->n);
    fs_json_str(j, "results", text);
    fs_json_close(j, '}');
}

static void summary(const void *state, const char *output, char *buf, size_t size)
{
    const vector_state *v = state;
    char text[FS_VECTOR_MAX_RESULTS * 64];
    results_text(v, text, sizeof text);
    snprintf(buf, size, "  %s of %d INPUT%s in %s: %s\n", names[v->op], v->n,
             v->n == 1 ? "" : "s", output, text);
}

/* ---------------------------------------------------------- the options */

static int active(const void *opts, const fs_stage_shared *shared)
{
    (void)shared;
    return ((const fs_vector_options *)opts)->op != FS_VECTOR_NONE;
}

static const char *option(const void *opts)
{
    static const char *const options[] = {NULL, "--vector=gradient", "--vector=curl",
                                          "--vector=divergence", "--vector=helmholtz"};
    return options[((const fs_vector_options *)opts)->op];
}

/* gradient takes one INPUT, curl three; divergence and helmholtz one per
 * transformed axis (checked against the grid). */
static fs_status check(void *opts, const fs_stage_facts *f, int on)
{
    const fs_vector_options *o = opts;
    int need = on ? inputs_of(o->op, -1) : 0;
    if (need > 0 && !f->dry_run && f->ninputs != need)
        return fs_error_set(FS_ERR_USAGE, "%s: expected %s (got %d)", option(opts),
                            need == 1 ? "one INPUT" : "three INPUTs, the components x, y, z",
                            f->ninputs);
    return FS_OK;
}

/* The kept spectra: a dry run names one INPUT for the D components. */
static void needs(const void *opts, const fs_stage_facts *f, int naxes, fs_stage_needs *n)
{
    const fs_vector_options *o = opts;
    int inputs = f->dry_run ? inputs_of(o->op, naxes) : f->ninputs;
    n->forward = 1;
    n->field = 1;
    n->hands_results = 1;
    n->buffers = slots_of(o->op, inputs, naxes);
    n->buffers_gone = results_of(o->op, naxes) == 1; /* freed as the last result is made */
    n->kept = "the kept spectra";
    n->keeps_each = 1;
    n->inputs = inputs_of(o->op, naxes);
    n->results = results_of(o->op, naxes);
}

static fs_status set_vector(const fs_opt *opt, const char *arg, void *section)
{
    fs_vector_options *o = section;
    (void)opt;
    fs_vector_op op = FS_VECTOR_GRADIENT;
    while (op <= FS_VECTOR_HELMHOLTZ && strcmp(names[op], arg) != 0)
        op++;
    if (op > FS_VECTOR_HELMHOLTZ)
        return fs_error_set(FS_ERR_USAGE, "--vector=%s: expected gradient, curl, divergence or "
                            "helmholtz", arg);
    if (o->op && o->op != op)
        return fs_error_set(FS_ERR_USAGE, "--vector: one operation per run (with another "
                            "--vector)");
    o->op = op;
    return FS_OK;
}

static const fs_opt lines[] = {
    {FS_OPT("vector", 0, FS_OPT_ARG, set_vector, fs_vector_options, op),
     .help = "      --vector=OP         of the components along the transformed axes x, y, z\n"
             "                          (one INPUT each): gradient (one INPUT: grad_x ..),\n"
             "                          curl (three: curl_x ..), divergence (divergence),\n"
             "                          helmholtz (solenoidal_x .., compressive_x ..);\n"
             "                          i k' with the Nyquist plane of an even axis 0\n"},
    {.long_name = NULL},
};

const fs_stage_ops fs_stage_vector = {
    .name = "vector",
    .options = lines,
    .options_bytes = sizeof(fs_vector_options),
    .grid_options = "--vector",
    .active = active,
    .option = option,
    .check = check,
    .needs = needs,
    .create = create,
    .forward = forward,
    .results = results,
    .result_path = result_path,
    .record = record,
    .operate = operate,
    .operate_block = operate_block,
    .json = json,
    .summary = summary,
    .destroy = destroy,
};
