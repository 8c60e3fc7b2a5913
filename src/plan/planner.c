/* SPDX-License-Identifier: GPL-3.0-or-later */
/* planner: see planner.h. */
#include "config.h"

#include "plan/planner.h"
#include "core/collective.h"

#include <fftw3.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "plan/footprint.h"

static void add_note(fs_planner_notes *notes, int warning, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void add_note(fs_planner_notes *notes, int warning, const char *fmt, ...)
{
    if (!notes || notes->n == FS_PLANNER_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(notes->text[notes->n], sizeof notes->text[0], fmt, ap);
    va_end(ap);
    notes->warning[notes->n++] = warning;
}

/* "1,2" */
static const char *axes_text(int n, const int *axes, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, i ? ",%d" : "%d", axes[i]);
    return buf;
}

/* The recorded axes (the probe judged them: fs_recorded): their count,
 * copied in order to axes. */
static int recorded_axes(const fs_recorded *rec, int *axes)
{
    for (int i = 0; i < rec->naxes; i++)
        axes[i] = (int)rec->axes[i];
    return rec->naxes;
}

/* An inverse refuses a recorded attribute it would take (no option given
 * in its place) that fftshard cannot have written: the file was edited or
 * damaged, and the round trip would not give the forward's input back. */
static fs_status check_recorded(const fs_transform_options *o, const fs_input_info *in,
                                const char *name)
{
    const fs_recorded *rec = &in->recorded;
    struct {
        const char *why, *option;
        int taken;
    } uses[] = {
        {rec->transform_bad, NULL, rec->forward},
        {rec->axes_bad, "--axes", rec->forward && !o->naxes},
        {rec->norm_bad, "--norm", rec->forward && !o->norm_given},
        {rec->kinds_bad, "--dct, --dst or --r2r", rec->forward && !o->r2r_given},
        {in->last_size_bad, "--last-size", o->real && !o->last_size},
    };
    for (size_t i = 0; i < sizeof uses / sizeof uses[0]; i++)
        if (uses[i].taken && uses[i].why[0])
            return fs_error_set(FS_ERR_INPUT,
                                "%s: --inverse: %s (fftshard cannot have written that; correct "
                                "or delete the attribute%s%s)",
                                name, uses[i].why, uses[i].option ? ", or give " : "",
                                uses[i].option ? uses[i].option : "");
    return FS_OK;
}

/* The axis the forward run halved, or -1 (a complex forward run, or no
 * usable record): its real_axis, or, in files written before real_axis,
 * the last of the axes as numpy's rfftn takes it. */
static int recorded_halved(const fs_recorded *rec, int n, const int *axes)
{
    if (strcmp(rec->transform, "r2c") != 0 || n == 0)
        return -1;
    if (rec->real_axis < 0)
        return axes[n - 1];
    for (int i = 0; i < n; i++)
        if (axes[i] == rec->real_axis)
            return axes[i];
    return -1;
}

/* The axes of an inverse: the recorded ones unless --axes was given. */
static void take_axes(const fs_transform_options *o, const fs_input_info *in, fs_transform_request *rq,
                      fs_planner_notes *notes)
{
    int axes[FS_LAYOUT_MAX_DIMS], n = recorded_axes(&in->recorded, axes);
    int halved = recorded_halved(&in->recorded, n, axes);
    char mine[64], theirs[64];
    if (n == 0)
        return;
    if (!o->naxes) {
        /* The halved axis last, as c2r takes it (files of this version
         * record it so already). */
        rq->naxes = 0;
        for (int i = 0; i < n; i++)
            if (axes[i] != halved)
                rq->axes[rq->naxes++] = axes[i];
        if (halved >= 0)
            rq->axes[rq->naxes++] = halved;
        memset(rq->transform_axis, 0, sizeof rq->transform_axis);
        for (int i = 0; i < n; i++)
            rq->transform_axis[rq->axes[i]] = 1;
        rq->real_axis = rq->axes[n - 1];
        add_note(notes, 0, "--inverse: axes %s, as the forward run recorded on the input",
                 axes_text(n, rq->axes, mine, sizeof mine));
        return;
    }
    int same = n == rq->naxes;
    for (int i = 0; i < n && same; i++)
        same = rq->transform_axis[axes[i]] != 0;
    axes_text(rq->naxes, rq->axes, mine, sizeof mine);
    if (!same)
        add_note(notes, 1, "--axes: transforming axes %s as asked, but the forward run transformed "
                 "axes %s: the round trip will not give its input back", mine,
                 axes_text(n, axes, theirs, sizeof theirs));
    else if (o->real && halved >= 0 && halved != rq->real_axis)
        add_note(notes, 1, "--axes: restoring axis %d (the last of --axes) as asked, but the "
                 "forward run halved axis %d: the round trip will not give its input back",
                 rq->real_axis, halved);
}

/* The norm of an inverse: the recorded one unless --norm was given. */
static void take_norm(const fs_transform_options *o, const fs_recorded *rec, fs_transform_request *rq,
                      fs_planner_notes *notes)
{
    const fs_norm all[] = {FS_NORM_BACKWARD, FS_NORM_ORTHO, FS_NORM_FORWARD};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(rec->norm, fs_norm_name(all[i])) != 0)
            continue;
        if (!o->norm_given) {
            rq->norm = all[i];
            add_note(notes, 0, "--inverse: --norm=%s, as the forward run recorded on the input",
                     rec->norm);
        } else if (o->norm != all[i]) {
            add_note(notes, 1, "--norm=%s: scaling as asked, but the forward run used --norm=%s: "
                     "the round trip will not give its input back", fs_norm_name(o->norm),
                     rec->norm);
        }
    }
}

/* "0:dct2,2:fft": the kinds of axes[0..n), into buf. */
static const char *kinds_text(int n, const int *axes, const fs_r2r *r2r, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%d:%s", i ? "," : "", axes[i],
                                 fs_r2r_name(r2r[axes[i]]));
    return buf;
}

/* The kinds of an inverse: the recorded ones (axis_kinds) unless --dct,
 * --dst or --r2r was given. */
static void take_kinds(const fs_transform_options *o, const fs_recorded *rec,
                       fs_transform_request *rq, fs_planner_notes *notes)
{
    fs_r2r theirs[FS_LAYOUT_MAX_DIMS] = {FS_AXIS_FFT};
    int axes[FS_LAYOUT_MAX_DIMS], n = recorded_axes(rec, axes), differ = 0;
    for (int i = 0; i < rec->nkinds; i++)
        theirs[axes[i]] = rec->kinds[i];
    for (int k = 0; k < rq->ndim; k++)
        differ = differ || (rq->transform_axis[k] && rq->r2r[k] != theirs[k]);
    char mine[128], recorded[128];
    kinds_text(n, axes, theirs, recorded, sizeof recorded);
    if (!o->r2r_given && fs_r2r_any(theirs, FS_LAYOUT_MAX_DIMS)) {
        for (int k = 0; k < rq->ndim; k++)
            rq->r2r[k] = rq->transform_axis[k] ? theirs[k] : FS_AXIS_FFT;
        add_note(notes, 0, "--inverse: --r2r=%s, as the forward run recorded on the input",
                 recorded);
    } else if (o->r2r_given && differ) {
        add_note(notes, 1, "%s: transforming axes %s as asked, but the forward run's were %s: the "
                 "round trip will not give its input back", fs_transform_options_kinds_name(o),
                 kinds_text(rq->naxes, rq->axes, rq->r2r, mine, sizeof mine),
                 rec->nkinds ? recorded : "Fourier axes");
    }
}

/* What the forward run's windows and zero padding leave in the inverse:
 * the windows recorded (the result's "window"), said. */
static void take_domain_record(const fs_recorded *rec, fs_transform_request *rq,
                               fs_planner_notes *notes)
{
    fs_window_list w;
    if (rec->window[0] && rec->naxes > 0) {
        if (fs_window_parse("window", rec->window, &w) == FS_OK && w.n == rec->naxes) {
            for (int i = 0; i < w.n; i++)
                rq->window[rec->axes[i]] = w.w[i];
            rq->window_sym = rec->window_sym;
            add_note(notes, 1, "--inverse: the forward run windowed its input (window %s): the "
                     "inverse gives the windowed field", rec->window);
        }
        fs_error_clear();
    }
    if (rec->nshape == rq->ndim) {
        char from[256], to[256];
        fs_format_shape(rec->nshape, rec->input_shape, from, sizeof from);
        fs_format_shape(rec->nshape, rec->padded_shape, to, sizeof to);
        add_note(notes, 0, "--inverse: the forward run padded its input of shape %s to %s: the "
                 "inverse gives the %s array, the input its first elements", from, to, to);
    }
}

/* An inverse of a forward result of fftshard: its defaults and where the
 * options contradict them. */
static void take_recorded(const fs_transform_options *o, const fs_input_info *in, fs_transform_request *rq,
                          fs_planner_notes *notes)
{
    const fs_recorded *rec = &in->recorded;
    int was_real = strcmp(rec->transform, "r2c") == 0;
    take_axes(o, in, rq, notes);
    take_norm(o, rec, rq, notes);
    take_kinds(o, rec, rq, notes);
    take_domain_record(rec, rq, notes);
    if (was_real && !o->real)
        add_note(notes, 1, "--inverse: the input is the half spectrum of a --real forward run; "
                 "without --real the inverse is a complex transform of it, not that run's input");
    else if (!was_real && rec->transform[0] && o->real)
        add_note(notes, 1, "--inverse --real: the forward run was not --real (transform %s): "
                 "the input is taken as a half spectrum", rec->transform);
    if (o->real && o->last_size && in->last_size_attr && o->last_size != in->last_size_attr)
        add_note(notes, 1, "--last-size=%lld: as asked, but the forward run recorded last_size "
                 "%lld: the round trip will not give its input back", (long long)o->last_size,
                 (long long)in->last_size_attr);
}

/* --real halves the last Fourier axis of the axes (numpy's rfftn the last
 * of its axes); a cosine or sine axis must be transformed (an inverse may
 * have taken other axes from the record). */
static fs_status halve_fourier_axis(const fs_transform_options *o, fs_transform_request *rq)
{
    for (int k = 0; k < rq->ndim; k++)
        if (rq->r2r[k] != FS_AXIS_FFT && !rq->transform_axis[k])
            return fs_error_set(FS_ERR_USAGE, "%s: axis %d is not transformed (the forward run "
                                "recorded other axes); give --axes",
                                o->r2r_given ? fs_transform_options_kinds_name(o) : "--r2r", k);
    for (int i = rq->naxes - 1; i >= 0; i--)
        if (rq->r2r[rq->axes[i]] == FS_AXIS_FFT) {
            rq->real_axis = rq->axes[i];
            break;
        }
    return FS_OK;
}

/* --boundary=free: every transformed axis (1 to 3 of them) free, the
 * domain zero padded to twice its length (not with --pad, whose lengths
 * it chooses). */
static fs_status take_free_space(const fs_transform_options *o, fs_transform_request *rq)
{
    int nfree = 0;
    for (int i = 0; i < o->boundary.n; i++)
        nfree += o->boundary.b[i] == FS_BOUNDARY_FREE;
    if (!nfree)
        return FS_OK;
    if (nfree != o->boundary.n)
        return fs_error_set(FS_ERR_USAGE, "--boundary: free space is of every transformed axis "
                            "(--boundary=free); it does not mix with periodic, dirichlet or "
                            "neumann axes");
    if (rq->naxes > 3)
        return fs_error_set(FS_ERR_USAGE, "--boundary=free: %d transformed axes; free space "
                            "has a Green's function in 1 to 3 dimensions", rq->naxes);
    if (o->pad.n)
        return fs_error_set(FS_ERR_USAGE, "--boundary=free, --pad: free space pads the domain "
                            "to twice its length itself");
    for (int i = 0; i < rq->naxes; i++)
        rq->shape[rq->axes[i]] = 2 * rq->data_shape[rq->axes[i]];
    rq->free_space = 1;
    return FS_OK;
}

/* --pad and --window on the transformed axes: one item for all, or one
 * per axis in the order of rq->axes (numpy's s and axes). */
static fs_status take_domain(const fs_transform_options *o, fs_transform_request *rq)
{
    int n = rq->naxes;
    const char *which = o->pad.n && o->pad.n != 1 && o->pad.n != n ? "--pad"
                        : o->window.n && o->window.n != 1 && o->window.n != n ? "--window"
                        : o->boundary.n && o->boundary.n != 1 && o->boundary.n != n ? "--boundary"
                                                                                   : NULL;
    if (which)
        return fs_error_set(FS_ERR_USAGE, "%s: %d given for %d transformed axes (give one, or "
                            "one per transformed axis in the order of --axes)", which,
                            which[2] == 'p' ? o->pad.n : which[2] == 'w' ? o->window.n
                                                                       : o->boundary.n, n);
    for (int i = 0; i < n; i++) {
        int a = rq->axes[i];
        if (o->pad.n)
            rq->shape[a] = fs_pad_length(&o->pad.p[o->pad.n == 1 ? 0 : i], rq->data_shape[a]);
        if (o->window.n)
            rq->window[a] = o->window.w[o->window.n == 1 ? 0 : i];
        if (o->boundary.n)
            rq->r2r[a] = fs_boundary_kind(o->boundary.b[o->boundary.n == 1 ? 0 : i]);
    }
    fs_status st = take_free_space(o, rq);
    if (st != FS_OK)
        return st;
    rq->window_sym = o->window_sym;
    if (fs_shape_elems(rq->ndim, rq->shape) < 0)
        return fs_error_set(FS_ERR_USAGE, "%s: the padded array would have more than %s "
                            "elements", rq->free_space ? "--boundary=free" : "--pad",
                            FS_MAX_ELEMS_TEXT);
    return FS_OK;
}

fs_status fs_planner_request_noted(const fs_transform_options *o, int round_trip,
                                   const char *file, const fs_input_info *in, int nranks,
                                   fs_transform_request *rq, fs_planner_notes *notes)
{
    memset(rq, 0, sizeof *rq);
    if (notes)
        memset(notes, 0, sizeof *notes);
    rq->ndim = in->ndim;
    memcpy(rq->shape, in->shape, sizeof rq->shape);
    memcpy(rq->data_shape, in->shape, sizeof rq->data_shape);
    rq->in_dtype = in->dtype;
    fs_input_name(file, in, rq->in_name, sizeof rq->in_name);
    rq->in_type_name = in->type_name;
    fs_status st = fs_transform_options_axes(o, in->ndim, rq->transform_axis);
    if (st == FS_OK)
        st = fs_transform_options_kinds(o, in->ndim, rq->transform_axis, rq->r2r);
    if (st != FS_OK)
        return st;
    rq->naxes = o->naxes ? o->naxes : in->ndim;
    for (int i = 0; i < rq->naxes; i++)
        rq->axes[i] = !o->naxes ? i : o->axes[i] < 0 ? o->axes[i] + in->ndim : o->axes[i];
    /* numpy: the last axis of `axes` is the real one. */
    rq->real_axis = rq->axes[rq->naxes - 1];
    if ((st = take_domain(o, rq)) != FS_OK)
        return st;
    rq->real = o->real;
    rq->inverse = o->inverse;
    /* auto: the input's precision class; integers of up to 16 bits are
     * exact in float32, as an image's pixels are */
    int small_int = in->dtype == FS_DTYPE_INTEGER && in->element_bytes <= 2;
    rq->prec = o->precision == FS_PRECISION_SINGLE              ? FS_SINGLE
               : o->precision == FS_PRECISION_DOUBLE            ? FS_DOUBLE
               : fs_dtype_is_single(in->dtype) || small_int ? FS_SINGLE
                                                                : FS_DOUBLE;
    rq->norm = o->norm;
    /* a stage's round trip: the inverse that follows undoes any scaling, so
     * none is made */
    rq->round_trip = round_trip;
    if (rq->round_trip)
        rq->norm = FS_NORM_BACKWARD;
    rq->last_size = o->last_size ? o->last_size : in->last_size_attr;
    rq->last_size_given = o->last_size != 0;
    rq->decomp = o->decomp;
    rq->grid[0] = o->grid[0];
    rq->grid[1] = o->grid[1];
    rq->nranks = nranks;
    if (o->inverse && (st = check_recorded(o, in, rq->in_name)) != FS_OK)
        return st;
    if (o->inverse && in->recorded.forward)
        take_recorded(o, in, rq, notes);
    if (in->particle_table)
        add_note(notes, 1, "%s: a snapshot's particle table (%lld x %lld beside /Header), "
                 "transformed as an array; give --paint=cic --mesh=N to paint its particles on a "
                 "mesh", rq->in_name, (long long)in->shape[0], (long long)in->shape[1]);
    return halve_fourier_axis(o, rq);
}

fs_status fs_planner_request(const fs_transform_options *o, int round_trip, const char *file,
                             const fs_input_info *in, int nranks, fs_transform_request *rq)
{
    return fs_planner_request_noted(o, round_trip, file, in, nranks, rq, NULL);
}

void fs_planner_print_notes(const fs_planner_notes *notes, int quiet, int verbose)
{
    for (int i = 0; i < notes->n; i++)
        if (notes->warning[i] ? !quiet : verbose)
            fs_note("%s%s", notes->warning[i] ? "warning: " : "", notes->text[i]);
}

unsigned fs_planner_fftw_flags(fs_plan_effort plan)
{
    return plan == FS_PLAN_PATIENT   ? FFTW_PATIENT
           : plan == FS_PLAN_MEASURE ? FFTW_MEASURE
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

void fs_planner_auto_key(const fs_transform *t, const fs_exchange_params *params, int inverse,
                         char *key, size_t size)
{
    char shape[256], axes[64] = "";
    fs_format_shape(t->in_ndim, t->in_shape, shape, sizeof shape);
    size_t used = 0;
    /* a cosine or sine axis is named with its kind: "0:dct2,1" */
    for (int k = 0; k < t->in_ndim; k++)
        if (t->transform_axis[k])
            used += (size_t)snprintf(axes + used, sizeof axes - used, "%s%d%s%s", used ? "," : "",
                                     k, t->r2r[k] ? ":" : "", t->r2r[k] ? fs_r2r_name(t->r2r[k]) : "");
    snprintf(key, size, "%s/%s/%s/axes=%s/ranks=%d/%s/%s%dx%d/packet=%zu/queues=%d",
             fs_kind_name(t->kind), fs_precision_name(t->prec), shape, axes,
             t->grid[0] * t->grid[1], inverse ? "inverse" : "forward",
             t->pencil ? "pencil" : "slab", t->grid[0], t->grid[1], params->packet_bytes,
             params->queues);
}

/* The key of one strategy's own time among auto's (beside its choice). */
static void timed_key(const char *key, const fs_exchange_ops *ops, char *out, size_t size)
{
    snprintf(out, size, "%s/timed=%s", key, ops->name);
}

/* --transpose=auto without a remembered choice: time every strategy; the
 * wisdom keeps every time under key, for the default to choose by. */
static fs_status trial(const fs_trial_args *a, const char *key, const fs_exchange_ops **chosen,
                       double *best)
{
    int rank = 0;
    MPI_Comm_rank(a->comm, &rank);
    *chosen = NULL;
    for (int i = 0; fs_exchange_strategies[i]; i++) {
        double slowest = 0;
        fs_status st = a->time(a->time_ctx, fs_exchange_strategies[i], &slowest);
        if (st != FS_OK)
            return st;
        if (a->verbose && rank == 0)
            fs_note("auto: %s takes %.4f s", fs_exchange_strategies[i]->name, slowest);
        char timed[600];
        timed_key(key, fs_exchange_strategies[i], timed, sizeof timed);
        st = fs_error_agree(a->comm, fs_wisdom_set(a->wisdom, timed,
                                                   fs_exchange_strategies[i]->name, slowest));
        if (st != FS_OK)
            return st;
        if (!*chosen || slowest < *best) {
            *best = slowest;
            *chosen = fs_exchange_strategies[i];
        }
    }
    return FS_OK;
}

static double mib(int64_t bytes)
{
    return (double)bytes / 1048576.0;
}

/* The strategies that do not fit, for the reason: "; too large: alltoall
 * 300.0 MiB, random ...", or "" when all fit. */
static void excluded_text(const fs_footprint *fp, const int *fits, int n, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < size; i++)
        if (!fits[i])
            used += (size_t)snprintf(buf + used, size - used, "%s%s %.1f MiB",
                                     used ? ", " : "; too large: ", fp[i].ops->name,
                                     mib(fp[i].total_bytes));
}

fs_status fs_planner_default(const fs_default_args *a, fs_strategy_choice *out)
{
    memset(out, 0, sizeof *out);
    out->name = "none";
    /* The table's order is the order of expected speed (exchange.c). */
    const fs_exchange_ops *const *order = fs_exchange_strategies;
    fs_footprint fp[FS_EXCHANGE_MAX_STRATEGIES];
    int fits[FS_EXCHANGE_MAX_STRATEGIES], nfit = 0, least = 0, n = 0;
    for (int i = 0; order[i] && i < FS_EXCHANGE_MAX_STRATEGIES; i++, n++) {
        fs_status st = fs_footprint_of(a->rq, order[i], a->params, &a->keeps, a->io_thread, &fp[i]);
        if (st != FS_OK)
            return st;
        if (!fp[i].ops) {
            snprintf(out->reason, sizeof out->reason, "no exchange");
            return FS_OK;
        }
        fits[i] = !a->mem_per_rank || (uint64_t)fp[i].total_bytes <= a->mem_per_rank;
        nfit += fits[i];
        if (fp[i].total_bytes < fp[least].total_bytes)
            least = i;
    }
    char excluded[256];
    excluded_text(fp, fits, n, excluded, sizeof excluded);
    int pick = -1;
    const char *how = NULL;
    double best = 0;
    char timed_how[128];
    for (int i = 0; i < n; i++) {
        char timed[600];
        double seconds;
        timed_key(a->wisdom_key, order[i], timed, sizeof timed);
        if (fits[i] && fs_wisdom_lookup_seconds(a->wisdom, timed, &seconds) &&
            (pick < 0 || seconds < best)) {
            pick = i;
            best = seconds;
            snprintf(timed_how, sizeof timed_how, "the fastest that fits by auto's times in the "
                     "wisdom file (%.4f s)", best);
            how = timed_how;
        }
    }
    const char *known = pick < 0 ? fs_wisdom_lookup(a->wisdom, a->wisdom_key) : NULL;
    for (int i = 0; known && i < n; i++)
        if (fits[i] && strcmp(order[i]->name, known) == 0) {
            pick = i;
            how = "auto's choice in the wisdom file, which fits";
        }
    for (int i = 0; pick < 0 && i < n; i++)
        if (fits[i]) {
            pick = i;
            how = "the fastest by expected speed that fits";
        }
    if (pick < 0) {
        pick = least;
        how = "none fits: the one that needs least";
    }
    if (a->mem_per_rank)
        snprintf(out->reason, sizeof out->reason, "%s: needs %.1f of %.1f MiB per rank (%s)%s",
                 how, mib(fp[pick].total_bytes), mib((int64_t)a->mem_per_rank), a->mem_source,
                 excluded);
    else
        snprintf(out->reason, sizeof out->reason, "%s: needs %.1f MiB per rank (%s: no figure)",
                 how, mib(fp[pick].total_bytes), a->mem_source);
    out->ops = order[pick];
    out->name = out->ops->name;
    out->note = "default";
    return FS_OK;
}

/* --transpose=default: the memory per rank, then fs_planner_default. */
static fs_status choose_default(const fs_trial_args *a, fs_strategy_choice *out)
{
    const fs_node *node = a->node;
    char key[512];
    fs_planner_auto_key(&a->planned->plain, a->params, a->inverse, key, sizeof key);
    fs_default_args da = {a->rq,            a->params, a->keeps, node->mem_per_rank,
                          node->mem_source, a->wisdom, key,      node->io_thread};
    return fs_error_agree(a->comm, fs_planner_default(&da, out));
}

/* Collective: the plan against the memory of a job whose cgroup limits it
 * (the node's figure is the cgroup's): one that needs more per rank than
 * its share (the dry run's figure) is refused before anything is
 * allocated or written, instead of being killed by the out-of-memory
 * killer halfway, without a word and its temporary left behind. ops NULL:
 * the most any strategy needs (auto may time them all). */
static fs_status fits_node(const fs_trial_args *a, const fs_exchange_ops *ops)
{
    const fs_node *node = a->node;
    if (!node->mem_hard || !node->mem_per_rank)
        return FS_OK;
    int64_t most = 0;
    fs_status st = FS_OK;
    for (int i = 0; st == FS_OK && (ops ? i == 0 : fs_exchange_strategies[i] != NULL); i++) {
        fs_footprint fp;
        st = fs_footprint_of(a->rq, ops ? ops : fs_exchange_strategies[i], a->params, &a->keeps,
                             node->io_thread, &fp);
        most = st == FS_OK && fp.total_bytes > most ? fp.total_bytes : most;
    }
    if (st == FS_OK && (uint64_t)most > node->mem_per_rank)
        st = fs_error_set(FS_ERR_RUNTIME, "not enough memory: the plan needs about %.1f MiB per "
                          "rank (fftshard --dry-run shows it), more than the %.1f MiB of %s",
                          mib(most), mib((int64_t)node->mem_per_rank), node->mem_source);
    int rank = 0;
    MPI_Comm_rank(a->comm, &rank);
    return fs_error_agree(a->comm, rank == 0 ? st : FS_OK);
}

fs_status fs_planner_choose(const fs_strategy_request *requested, const fs_trial_args *a,
                            fs_strategy_choice *out)
{
    memset(out, 0, sizeof *out);
    out->name = "none";
    snprintf(out->reason, sizeof out->reason, "no exchange");
    if (!a->planned->plain.exchanges)
        return fits_node(a, NULL);
    if (requested->kind == FS_STRATEGY_DEFAULT) {
        fs_status st = choose_default(a, out);
        return st == FS_OK ? fits_node(a, out->ops) : st;
    }
    if (requested->kind == FS_STRATEGY_NAMED) {
        out->ops = requested->ops;
        out->name = out->ops->name;
        snprintf(out->reason, sizeof out->reason, "named by --transpose");
        return fits_node(a, out->ops);
    }
    fs_status fit = fits_node(a, NULL);
    if (fit != FS_OK)
        return fit;
    char key[512];
    fs_planner_auto_key(&a->planned->plain, a->params, a->inverse, key, sizeof key);
    const char *known = fs_wisdom_lookup(a->wisdom, key);
    if (known && fs_exchange_find(known)) {
        out->ops = fs_exchange_find(known);
        out->name = out->ops->name;
        out->note = "auto: taken from the wisdom file";
        snprintf(out->reason, sizeof out->reason, "%s", out->note);
        return FS_OK;
    }
    double best = 0;
    fs_status st = trial(a, key, &out->ops, &best);
    if (st != FS_OK)
        return st;
    out->name = out->ops->name;
    out->note = "auto: timed every strategy on these sizes";
    snprintf(out->reason, sizeof out->reason, "%s (%.4f s)", out->note, best);
    return fs_error_agree(a->comm, fs_wisdom_set(a->wisdom, key, out->ops->name, best));
}

int fs_planner_same_request(const fs_transform_request *a, const fs_transform_request *b)
{
    fs_transform_request x = *a, y = *b;
    memset(x.in_name, 0, sizeof x.in_name);
    memset(y.in_name, 0, sizeof y.in_name);
    x.in_type_name = y.in_type_name = NULL;
    return memcmp(&x, &y, sizeof x) == 0;
}
