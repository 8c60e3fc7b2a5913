/* SPDX-License-Identifier: GPL-3.0-or-later */
/* vector: see vector.h. */
#include "config.h"

#include "analysis/vector.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"

int fs_vector_is(fs_combine_op op)
{
    return op >= FS_COMBINE_GRADIENT && op <= FS_COMBINE_HELMHOLTZ;
}

int fs_vector_inputs(fs_combine_op op, int D)
{
    return op == FS_COMBINE_GRADIENT ? 1 : op == FS_COMBINE_CURL ? 3 : D;
}

int fs_vector_slots(fs_combine_op op, int n)
{
    switch (op) {
    case FS_COMBINE_GRADIENT: return 1;
    case FS_COMBINE_CURL: return 2;
    case FS_COMBINE_DIVERGENCE: return n > 1 ? n - 1 : 0;
    case FS_COMBINE_HELMHOLTZ: return n;
    default: return 0;
    }
}

int fs_vector_results(fs_combine_op op, int D)
{
    switch (op) {
    case FS_COMBINE_GRADIENT: return D;
    case FS_COMBINE_CURL: return 3;
    case FS_COMBINE_DIVERGENCE: return 1;
    case FS_COMBINE_HELMHOLTZ: return 2 * D;
    default: return 0;
    }
}

void fs_vector_result_name(fs_combine_op op, int D, int k, char *buf, size_t size)
{
    static const char xyz[] = "xyz";
    switch (op) {
    case FS_COMBINE_GRADIENT: snprintf(buf, size, "grad_%c", xyz[k % 3]); break;
    case FS_COMBINE_CURL: snprintf(buf, size, "curl_%c", xyz[k % 3]); break;
    case FS_COMBINE_HELMHOLTZ:
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

/* Result k of op at every element (first: the last turn's first result). */
static fs_status each_element(fs_combine_op op, const fs_kgrid *g, const fs_transform *t,
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
    if (first && op == FS_COMBINE_GRADIENT)
        memcpy(slots[0], data, bytes);
    if (first && op == FS_COMBINE_HELMHOLTZ)
        memcpy(slots[D - 1], data, bytes);
    double kv[FS_VECTOR_MAX_AXES] = {0};
    cplx v[FS_VECTOR_MAX_AXES];
    for (int64_t e = 0; e < n; e++) {
        kwalk_step(&w, kv);
        switch (op) {
        case FS_COMBINE_GRADIENT:
            store(data, single, e, times_i(load(slots[0], single, e), kv[k] * scale));
            break;
        case FS_COMBINE_DIVERGENCE: {
            components(slots, data, D, single, e, v);
            cplx s = {0, 0};
            for (int a = 0; a < D; a++) {
                s.re += kv[a] * v[a].re;
                s.im += kv[a] * v[a].im;
            }
            store(data, single, e, times_i(s, scale));
            break;
        }
        case FS_COMBINE_CURL: {
            components(slots, data, 3, single, e, v);
            cplx c[3];
            for (int a = 0; a < 3; a++) {
                int b = (a + 1) % 3, d = (a + 2) % 3; /* c_a = i (k_b V_d - k_d V_b) */
                c[a] = times_i((cplx){kv[b] * v[d].re - kv[d] * v[b].re,
                                      kv[b] * v[d].im - kv[d] * v[b].im}, scale);
            }
            store(data, single, e, c[0]);
            store(slots[0], single, e, c[1]);
            store(slots[1], single, e, c[2]);
            break;
        }
        case FS_COMBINE_HELMHOLTZ:
            for (int a = 0; a < D; a++)
                v[a] = load(slots[a], single, e);
            store(data, single, e, helmholtz_one(v, kv, D, k, scale));
            break;
        default:
            break;
        }
    }
    kwalk_free(&w);
    return FS_OK;
}

fs_status fs_vector_first(fs_combine_op op, const fs_kgrid *g, const fs_transform *t,
                          const fs_box *last, void **slots, void *data, double scale)
{
    return each_element(op, g, t, last, slots, data, 0, 1, scale);
}

fs_status fs_vector_next(fs_combine_op op, const fs_kgrid *g, const fs_transform *t,
                         const fs_box *last, void **slots, void *data, int k, double scale)
{
    if (op == FS_COMBINE_CURL) { /* computed on the last turn */
        memcpy(data, slots[k - 1], (size_t)fs_box_elems(last) * fs_complex_bytes(t->prec));
        return FS_OK;
    }
    return each_element(op, g, t, last, slots, data, k, 0, scale);
}
