/* SPDX-License-Identifier: GPL-3.0-or-later */
/* stage: see stage.h. The table below is the one place that lists the
 * stages; the checks among them speak of what stages need, not of which
 * stages they are. */
#include "config.h"

#include "stages/stage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const fs_stage_ops fs_stage_operators, fs_stage_combine, fs_stage_vector,
    fs_stage_spectrum, fs_stage_correlation, fs_stage_painted;

/* The order hooks run in, and --help's and the summary's: the painted
 * particles' first, which makes the result the others read. */
const fs_stage_ops *const fs_stage_table[] = {
    &fs_stage_painted,
    &fs_stage_spectrum,
    &fs_stage_correlation,
    &fs_stage_operators,
    &fs_stage_combine,
    &fs_stage_vector,
    NULL,
};

fs_status fs_stage_config_init(fs_stage_config *sc)
{
    memset(sc, 0, sizeof *sc);
    for (int s = 0; fs_stage_table[s]; s++) {
        if (s == FS_MAX_STAGE_OPS)
            return fs_error_set(FS_ERR_RUNTIME, "more stages than FS_MAX_STAGE_OPS");
        sc->opts[s] = calloc(1, fs_stage_table[s]->options_bytes ? fs_stage_table[s]->options_bytes : 1);
        if (!sc->opts[s])
            return fs_error_set(FS_ERR_RUNTIME, "out of memory");
        sc->n = s + 1;
        if (fs_stage_table[s]->defaults)
            fs_stage_table[s]->defaults(sc->opts[s]);
    }
    return FS_OK;
}

void fs_stage_config_free(fs_stage_config *sc)
{
    for (int s = 0; s < sc->n; s++) {
        if (sc->opts[s] && fs_stage_table[s]->release)
            fs_stage_table[s]->release(sc->opts[s]);
        free(sc->opts[s]);
    }
    fs_particles_options_free(&sc->shared.particles);
    memset(sc, 0, sizeof *sc);
}

int fs_stage_active(const fs_stage_config *sc, int s)
{
    return s < sc->n && sc->opts[s] && fs_stage_table[s]->active(sc->opts[s], &sc->shared);
}

static void needs_of(const fs_stage_config *sc, int s, const fs_stage_facts *f, int naxes,
                     fs_stage_needs *n)
{
    memset(n, 0, sizeof *n);
    if (fs_stage_table[s]->needs)
        fs_stage_table[s]->needs(sc->opts[s], f, naxes, n);
}

/* "--power-spectrum, --correlation-function or --apply": the options that
 * make a stage use --box-size (los: that make it read --los). */
static const char *users_of(const fs_stage_ops *ops, int los)
{
    return los ? ops->los_options : ops->grid_options;
}

static void option_users(char *buf, size_t size, int los)
{
    int n = 0, k = 0;
    for (int s = 0; fs_stage_table[s]; s++)
        n += users_of(fs_stage_table[s], los) != NULL;
    buf[0] = '\0';
    for (int s = 0; fs_stage_table[s]; s++) {
        if (!users_of(fs_stage_table[s], los))
            continue;
        size_t used = strlen(buf);
        snprintf(buf + used, size - used, "%s%s", k == 0 ? "" : k == n - 1 ? " or " : ", ",
                 users_of(fs_stage_table[s], los));
        k++;
    }
}

/* --box-size, --los and --multipoles given with no active stage that
 * reads them. */
static fs_status check_users(const fs_stage_config *sc, int uses_grid, int uses_los)
{
    char users[512];
    const fs_los_options *los = &sc->shared.los;
    if (sc->shared.box.n && !uses_grid) {
        option_users(users, sizeof users, 0);
        return fs_error_set(FS_ERR_USAGE, "--box-size: only with %s", users);
    }
    if ((los->given || los->npoles) && !uses_los) {
        option_users(users, sizeof users, 1);
        return fs_error_set(FS_ERR_USAGE, "%s: only with %s",
                            los->given && los->npoles ? "--los, --multipoles"
                            : los->given              ? "--los"
                                                      : "--multipoles", users);
    }
    return fs_los_check(los);
}

/* The checks among the active stages, by what they need. */
static fs_status check_among(const fs_stage_config *sc, const fs_stage_facts *f)
{
    int field = -1, reader = -1, uses_grid = 0, uses_los = 0;
    for (int s = 0; s < sc->n; s++) {
        if (!fs_stage_active(sc, s))
            continue;
        fs_stage_needs n;
        needs_of(sc, s, f, 0, &n);
        const char *name = fs_stage_table[s]->option(sc->opts[s]);
        uses_grid |= fs_stage_table[s]->grid_options != NULL;
        uses_los |= fs_stage_table[s]->los_options != NULL;
        int sees = n.sees_results && f->field;
        if (n.field && field >= 0)
            return fs_error_set(FS_ERR_USAGE, "%s, %s: one operation per run",
                                fs_stage_table[field]->option(sc->opts[field]), name);
        if (n.field && (f->inverse || f->check))
            return fs_error_set(FS_ERR_USAGE, "%s: runs the forward transform and its inverse "
                                "itself (no %s)", name, f->inverse ? "--inverse" : "--check");
        if (n.forward && !n.field && f->inverse)
            return fs_error_set(FS_ERR_USAGE, "--inverse: %s is of the forward transform", name);
        /* their wave numbers are the Fourier transform's (kgrid.h) */
        if ((n.forward || n.field) && f->r2r)
            return fs_error_set(FS_ERR_USAGE, "%s, %s: the analyses work on Fourier transforms, "
                                "not on cosine and sine axes", name, f->r2r);
        if (f->boundary && !n.walls && f->weighed)
            return fs_error_set(FS_ERR_USAGE, "--boundary, %s: --boundary is for --apply's own "
                                "field, not for %s's weights", f->weighed, f->weighed);
        if (f->boundary && !n.walls)
            return fs_error_set(FS_ERR_USAGE, "--boundary, %s: --boundary is --apply's alone (%s "
                                "takes the Fourier transform's wave numbers)", name, name);
        if ((f->pad && !n.pads) || (f->window && !n.windows))
            return fs_error_set(FS_ERR_USAGE, "%s: not with %s, whose definition is of the "
                                "periodic input as it is", f->pad && !n.pads ? "--pad" : "--window",
                                name);
        if ((n.field || n.groups) && f->shard_output)
            return fs_error_set(FS_ERR_USAGE, "%s, --shard-output: written into OUTPUT itself; "
                                "compute it in a run without --shard-output", name);
        field = n.field ? s : field;
        reader = n.forward && !n.field && !sees ? s : reader;
    }
    if (field >= 0 && reader >= 0)
        return fs_error_set(FS_ERR_USAGE, "%s: writes a field, not a spectrum (%s); compute the "
                            "spectrum in a run of its own",
                            fs_stage_table[field]->option(sc->opts[field]),
                            fs_stage_table[reader]->option(sc->opts[reader]));
    return check_users(sc, uses_grid, uses_los);
}

/* The longest name of a group the active stages write. */
static size_t longest_group(const fs_stage_config *sc, const fs_stage_facts *f)
{
    size_t longest = 0;
    for (int s = 0; s < sc->n; s++)
        if (fs_stage_active(sc, s)) {
            fs_stage_needs n;
            needs_of(sc, s, f, 0, &n);
            if (n.groups && strlen(n.longest_group) > longest)
                longest = strlen(n.longest_group);
        }
    return longest;
}

const char *fs_stages_weighed(const fs_stage_config *sc, const fs_stage_facts *f)
{
    for (int s = 0; s < sc->n; s++)
        if (fs_stage_active(sc, s)) {
            fs_stage_needs n;
            needs_of(sc, s, f, 0, &n);
            if (n.field && n.takes_weights)
                return fs_stage_table[s]->option(sc->opts[s]);
        }
    return NULL;
}

/* f as the stages see it: the stage that takes weights first (the stages
 * of factors need it to say whether they make a field), then the field. */
static fs_stage_facts completed(const fs_stage_config *sc, const fs_stage_facts *f)
{
    fs_stage_facts mine = *f;
    mine.shared = f->shared ? f->shared : &sc->shared;
    mine.weighed = fs_stages_weighed(sc, &mine);
    mine.field = fs_stages_field(sc, &mine);
    return mine;
}

const char *fs_stages_field(const fs_stage_config *sc, const fs_stage_facts *f)
{
    fs_stage_facts mine = *f;
    mine.weighed = fs_stages_weighed(sc, f);
    for (int s = 0; s < sc->n; s++)
        if (fs_stage_active(sc, s)) {
            fs_stage_needs n;
            needs_of(sc, s, &mine, 0, &n);
            if (n.field && n.hands_results)
                return fs_stage_table[s]->option(sc->opts[s]);
        }
    return NULL;
}

fs_status fs_stages_check(fs_stage_config *sc, const fs_stage_facts *f)
{
    fs_stage_facts mine = *f;
    mine.shared = &sc->shared;
    mine = completed(sc, &mine);
    int groups = 0;
    for (int s = 0; s < sc->n; s++)
        if (fs_stage_active(sc, s)) {
            fs_stage_needs n;
            needs_of(sc, s, &mine, 0, &n);
            groups += n.groups;
        }
    for (int s = 0; s < sc->n; s++) {
        if (!fs_stage_table[s]->check)
            continue;
        int active = fs_stage_active(sc, s);
        fs_stage_needs n;
        needs_of(sc, s, &mine, 0, &n);
        mine.others_with_groups = groups - (active && n.groups);
        if (fs_stage_table[s]->check(sc->opts[s], &mine, active) != FS_OK)
            return fs_error_status();
    }
    if (sc->shared.cross && !f->dry_run && f->ninputs != 2)
        return fs_error_set(FS_ERR_USAGE, "--cross: expected two INPUTs (got %d)", f->ninputs);
    size_t longest = longest_group(sc, &mine); /* the checks may have made stages active */
    /* --spectrum-only: OUTPUT's path is the group the stages' groups go in. */
    if (sc->shared.spectrum_only && f->output_dataset && longest &&
        strlen(f->output_dataset) + longest + 2 > FS_PATH_MAX)
        return fs_error_set(FS_ERR_USAGE, "%s:%s: group path too long (at most %d bytes)",
                            f->output_file, f->output_dataset,
                            (int)(FS_PATH_MAX - longest - 2));
    return check_among(sc, &mine);
}

fs_stage_bytes fs_stages_footprint(const fs_stage_config *sc, const fs_stage_facts *f,
                                   const fs_transform_request *rq)
{
    fs_stage_bytes all = {0, 0, 0};
    fs_stage_facts mine = *f;
    mine.shared = &sc->shared;
    mine.field = fs_stages_field(sc, &mine);
    fs_transform t;
    fs_status pending = fs_error_status(); /* a plan refused already keeps its message */
    if (fs_transform_plan(rq, &t) != FS_OK) {
        if (pending == FS_OK)
            fs_error_clear(); /* the run's planning says why */
        return all;
    }
    for (int s = 0; s < sc->n; s++)
        if (fs_stage_active(sc, s) && fs_stage_table[s]->footprint) {
            fs_stage_bytes b = fs_stage_table[s]->footprint(sc->opts[s], &mine, &t);
            all.held += b.held;
            all.sums += b.sums;
            all.end = b.end > all.end ? b.end : all.end;
        }
    return all;
}

const char *fs_stages_block_wise(const fs_stage_config *sc, const fs_stage_facts *f)
{
    fs_stage_facts mine = completed(sc, f);
    for (int s = 0; s < sc->n; s++) {
        if (!fs_stage_active(sc, s))
            continue;
        const fs_stage_ops *ops = fs_stage_table[s];
        fs_stage_needs n;
        needs_of(sc, s, &mine, 0, &n);
        /* a field's results are binned whole, after the operation; the kept
         * first result goes through the disk for the bin hooks alone */
        if ((n.keep_first && n.field) || n.reread || n.undo || (n.buffers && !n.keeps_each) ||
            (n.sees_results && mine.field) ||
            (ops->forward && !ops->forward_block && !n.keeps_each) ||
            (n.field && !ops->operate_block) ||
            ops->written)
            return ops->option(sc->opts[s]);
    }
    return NULL;
}

void fs_stages_needs(const fs_stage_config *sc, const fs_stage_facts *f, int naxes,
                     fs_stage_needs *out)
{
    memset(out, 0, sizeof *out);
    fs_stage_facts mine = *f;
    mine.shared = &sc->shared;
    mine = completed(sc, &mine);
    for (int s = 0; s < sc->n; s++) {
        if (!fs_stage_active(sc, s))
            continue;
        fs_stage_needs n;
        needs_of(sc, s, &mine, naxes, &n);
        out->forward |= n.forward;
        out->field |= n.field;
        out->in_pass |= n.in_pass;
        out->whole |= n.whole;
        out->undo |= n.undo;
        out->reread |= n.reread;
        out->keep_first |= n.keep_first;
        out->broadcasts |= n.broadcasts;
        out->first |= n.first;
        out->buffers += n.buffers;
        out->buffers_gone += n.buffers_gone ? n.buffers : 0;
        out->keeps_each |= n.keeps_each;
        out->inputs = n.inputs > out->inputs ? n.inputs : out->inputs;
        out->results = n.results > out->results ? n.results : out->results;
        if (!out->kept && (n.keep_first || n.buffers))
            out->kept = n.kept;
        out->groups += n.groups;
        out->sees_results |= n.sees_results && mine.field;
    }
    out->in_pass &= !out->first; /* the field's work follows the whole forward result */
    if (out->sees_results) /* the results whole in Fourier space */
        out->in_pass = 0;
}

fs_status fs_stage_made(const fs_stage_turn *turn, int k, const void *fourier, double scale)
{
    return turn->made ? turn->made(turn->made_ctx, turn, k, fourier, scale) : FS_OK;
}

fs_status fs_stage_weigh(const fs_stage_turn *turn, const fs_box *box, void *data)
{
    return turn->weigh ? turn->weigh(turn->weigh_ctx, turn, box, data) : FS_OK;
}

void fs_stage_group_path(const fs_stage_facts *f, const char *name, char *buf, size_t size)
{
    /* OUTPUT's path, resolved as HDF5 does (no trailing '/', never "/") */
    const char *under = f->shared->spectrum_only && f->output_dataset ? f->output_dataset : "";
    snprintf(buf, size, "%s/%s", under, name);
}

fs_status fs_stages_domain(const fs_stage_config *sc, int n, const fs_input_info *infos,
                           fs_transform_request *rq)
{
    fs_status st = FS_OK;
    for (int s = 0; s < sc->n && st == FS_OK; s++)
        if (fs_stage_active(sc, s) && fs_stage_table[s]->domain)
            st = fs_stage_table[s]->domain(sc->opts[s], n, infos, rq);
    return st;
}

fs_status fs_stage_check_alike(const char *what, const fs_transform *const *ts, int n,
                               int same_boxes, int own_shapes_differ, const char *why)
{
    const char *count = n == 2 ? "two " : "";
    for (int i = 1; i < n; i++) {
        const fs_transform *a = ts[0], *b = ts[i];
        int same = a->in_ndim == b->in_ndim &&
                   memcmp(a->in_shape, b->in_shape, sizeof a->in_shape) == 0 &&
                   (own_shapes_differ ||
                    memcmp(a->data_shape, b->data_shape, sizeof a->data_shape) == 0) &&
                   memcmp(a->transform_axis, b->transform_axis, sizeof a->transform_axis) == 0;
        if (!same)
            return fs_error_set(FS_ERR_USAGE, "%s: the %sINPUTs must have one shape and the "
                                "same transformed axes", what, count);
        if (a->kind != b->kind || (same_boxes &&
            (a->prec != b->prec || a->ndim != b->ndim || a->padded != b->padded ||
             a->out_type != b->out_type || memcmp(a->shape, b->shape, sizeof a->shape) != 0 ||
             memcmp(a->split, b->split, sizeof a->split) != 0 || a->grid[0] != b->grid[0] ||
             a->grid[1] != b->grid[1])))
            return fs_error_set(FS_ERR_USAGE, "%s: the %sINPUTs must be transformed alike (%s)",
                                what, count, why);
    }
    return FS_OK;
}

char *fs_stage_inputs_text(const fs_location *inputs, const fs_input_info *infos, int n)
{
    size_t len = 1;
    for (int i = 0; i < n; i++)
        len += strlen(inputs[i].file) + 1 + strlen(infos[i].dataset) +
               strlen(infos[i].slice.text) + 2;
    char *fields = malloc(len);
    if (!fields)
        return NULL;
    fields[0] = '\0';
    for (int i = 0, used = 0; i < n; i++)
        used += snprintf(fields + used, len - (size_t)used, "%s%s:%s%s", i ? ", " : "",
                         inputs[i].file, infos[i].dataset, infos[i].slice.text);
    return fields;
}
