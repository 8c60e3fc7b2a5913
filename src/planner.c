/* planner: see planner.h. */
#include "config.h"

#include "planner.h"

#include <fftw3.h>
#include <stdio.h>
#include <string.h>

#include "report.h"

fs_status fs_planner_request(const fs_options *o, const fs_input_info *in, int nranks,
                             fs_transform_request *rq)
{
    memset(rq, 0, sizeof *rq);
    rq->ndim = in->ndim;
    memcpy(rq->shape, in->shape, sizeof rq->shape);
    rq->in_dtype = in->dtype;
    rq->in_name = in->dataset;
    rq->in_type_name = in->type_name;
    fs_status st = fs_options_resolve_axes(o, in->ndim, rq->transform_axis);
    if (st != FS_OK)
        return st;
    /* numpy: the last axis of `axes` is the real one. */
    rq->real_axis = in->ndim - 1;
    if (o->naxes)
        rq->real_axis = o->axes[o->naxes - 1] < 0 ? o->axes[o->naxes - 1] + in->ndim
                                                  : o->axes[o->naxes - 1];
    rq->real = o->real;
    rq->inverse = o->inverse;
    rq->prec = o->precision == FS_PRECISION_SINGLE   ? FS_SINGLE
               : o->precision == FS_PRECISION_DOUBLE ? FS_DOUBLE
               : fs_dtype_is_single(in->dtype)       ? FS_SINGLE
                                                     : FS_DOUBLE;
    rq->norm = o->norm;
    rq->last_size = o->last_size ? o->last_size : in->last_size_attr;
    rq->last_size_given = o->last_size != 0;
    rq->decomp = o->decomp;
    rq->grid[0] = o->grid[0];
    rq->grid[1] = o->grid[1];
    rq->nranks = nranks;
    return FS_OK;
}

unsigned fs_planner_fftw_flags(const fs_options *o)
{
    return o->plan == FS_PLAN_PATIENT   ? FFTW_PATIENT
           : o->plan == FS_PLAN_MEASURE ? FFTW_MEASURE
                                        : FFTW_ESTIMATE;
}

fs_status fs_planner_transforms(const fs_transform_request *rq, fs_planned *p)
{
    fs_transform_request with_hooks = *rq;
    with_hooks.hooks = 1;
    fs_status st = fs_transform_plan(rq, &p->plain);
    if (st == FS_OK)
        st = fs_transform_plan(&with_hooks, &p->hooked);
    return st;
}

const fs_transform *fs_planned_for(const fs_planned *p, const fs_exchange_ops *ops)
{
    return ops && ops->uses_hooks ? &p->hooked : &p->plain;
}

/* The key under which `auto` remembers its choice in the wisdom file. */
static void auto_key(const fs_trial_args *a, char *key, size_t size)
{
    const fs_transform *t = &a->planned->plain;
    char shape[256], axes[64] = "";
    fs_format_shape(t->in_ndim, t->in_shape, shape, sizeof shape);
    size_t used = 0;
    for (int k = 0; k < t->in_ndim; k++)
        if (t->transform_axis[k])
            used += (size_t)snprintf(axes + used, sizeof axes - used, used ? ",%d" : "%d", k);
    snprintf(key, size, "%s/%s/%s/axes=%s/ranks=%d/%s/%s%dx%d/packet=%zu/queues=%d",
             fs_kind_name(t->kind), fs_precision_name(t->prec), shape, axes,
             t->grid[0] * t->grid[1], a->inverse ? "inverse" : "forward",
             t->pencil ? "pencil" : "slab", t->grid[0], t->grid[1], a->params->packet_bytes,
             a->params->queues);
}

/* One candidate of the trial: planned, run on zeros, freed; *slowest is the
 * time of the slowest rank. */
static fs_status time_strategy(const fs_trial_args *a, const fs_exchange_ops *ops, fs_workbuf *buf,
                               double *slowest)
{
    fs_compute_args ca = {a->comm, fs_planned_for(a->planned, ops), a->d, ops, a->params,
                          a->fftw_flags, 0};
    fs_compute *c = NULL;
    fs_status st = fs_error_agree(a->comm, fs_compute_new(&ca, buf, &c));
    if (st != FS_OK)
        return st;
    memset(buf->data, 0, (size_t)buf->elems * fs_complex_bytes(buf->prec));
    fs_timers ignored;
    memset(&ignored, 0, sizeof ignored);
    double t0 = 0, t = 0;
    if (MPI_Barrier(a->comm) != MPI_SUCCESS)
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Barrier failed");
    t0 = MPI_Wtime();
    if (st == FS_OK)
        st = fs_compute_run(c, buf->data, &ignored, NULL);
    t = MPI_Wtime() - t0;
    fs_compute_free(&c);
    if ((st = fs_error_agree(a->comm, st)) != FS_OK)
        return st;
    if (MPI_Allreduce(&t, slowest, 1, MPI_DOUBLE, MPI_MAX, a->comm) != MPI_SUCCESS)
        return fs_error_agree(a->comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Allreduce failed"));
    return FS_OK;
}

/* --transpose=auto without a remembered choice: time every strategy. */
static fs_status trial(const fs_trial_args *a, fs_workbuf *buf, const fs_exchange_ops **chosen,
                       double *best)
{
    int rank = 0;
    MPI_Comm_rank(a->comm, &rank);
    *chosen = NULL;
    for (int i = 0; fs_exchange_strategies[i]; i++) {
        double slowest = 0;
        fs_status st = time_strategy(a, fs_exchange_strategies[i], buf, &slowest);
        if (st != FS_OK)
            return st;
        if (a->verbose && rank == 0)
            fs_note("auto: %s takes %.4f s", fs_exchange_strategies[i]->name, slowest);
        if (!*chosen || slowest < *best) {
            *best = slowest;
            *chosen = fs_exchange_strategies[i];
        }
    }
    return FS_OK;
}

fs_status fs_planner_choose(const char *requested, const fs_trial_args *a, fs_workbuf *buf,
                            fs_strategy_choice *out)
{
    memset(out, 0, sizeof *out);
    out->name = "none";
    if (!a->planned->plain.exchanges)
        return FS_OK;
    if (strcmp(requested, "auto") != 0) {
        out->ops = fs_exchange_find(requested);
        out->name = out->ops->name;
        return FS_OK;
    }
    char key[512];
    auto_key(a, key, sizeof key);
    const char *known = fs_wisdom_lookup(a->wisdom, key);
    if (known && fs_exchange_find(known)) {
        out->ops = fs_exchange_find(known);
        out->name = out->ops->name;
        out->note = "auto: taken from the wisdom file";
        return FS_OK;
    }
    double best = 0;
    fs_status st = trial(a, buf, &out->ops, &best);
    if (st != FS_OK)
        return st;
    out->name = out->ops->name;
    out->note = "auto: timed every strategy on these sizes";
    return fs_error_agree(a->comm, fs_wisdom_set(a->wisdom, key, out->ops->name, best));
}
