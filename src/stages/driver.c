/* SPDX-License-Identifier: GPL-3.0-or-later */
/* driver: see driver.h. */
#include "config.h"

#include "stages/driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/collective.h"

struct fs_stages {
    int n;                                  /* active stages */
    const fs_stage_ops *ops[FS_MAX_STAGE_OPS];
    void *state[FS_MAX_STAGE_OPS];
    int first[FS_MAX_STAGE_OPS];            /* needs.first: runs before the others */
    int field;                              /* the one that makes the result (-1: none) */
    int spectrum_only;                      /* no transformed array written */
    int ninputs;
    fs_stage_run run;                       /* what the stages see of the run */
    fs_stage_facts facts;                   /* the run's, with shared and the field stage's option */
    fs_stage_shared shared;                 /* the options', the box resolved */
    char box_from[FS_INPUT_NAME_MAX + 64];  /* whence the box ("": none) */
    fs_stage_needs need;
    void *kept;                             /* need.keep_first: the first INPUT's result */
    char operation[4200];                   /* the report's with weights ("": the field's) */
    fs_json_part parts[FS_MAX_STAGE_OPS + 1];
};

/* The box of every stage's grid, when a stage has one: --box-size, or the
 * INPUTs' box_size attribute (kgrid.h), decided alike on every rank. */
static fs_status take_box(fs_stages *s, const fs_stage_config *sc, const fs_stage_run *r)
{
    int grid = 0;
    for (int k = 0; k < sc->n; k++)
        grid |= fs_stage_active(sc, k) && fs_stage_table[k]->grid_options != NULL;
    s->shared = sc->shared;
    memset(&s->shared.box, 0, sizeof s->shared.box);
    s->facts = *r->facts;
    s->facts.shared = &s->shared;
    s->run = *r;
    s->run.facts = &s->facts;
    if (!grid)
        return FS_OK;
    return fs_box_lengths_resolve(&sc->shared.box, r->n, r->inputs, r->infos, r->ts,
                                  &s->shared.box, s->box_from, sizeof s->box_from);
}

/* Stage k of the table made as the i-th active one. */
static fs_status create_one(fs_stages *s, const fs_stage_config *sc, int k, int naxes, int rank)
{
    int i = s->n++;
    s->ops[i] = fs_stage_table[k];
    fs_stage_needs need;
    memset(&need, 0, sizeof need);
    if (s->ops[i]->needs)
        s->ops[i]->needs(sc->opts[k], &s->facts, naxes, &need);
    if (need.field)
        s->field = i;
    s->first[i] = need.first;
    fs_status st = FS_OK;
    if (s->ops[i]->create)
        st = s->ops[i]->create(sc->opts[k], &s->run, &s->state[i]);
    /* the stages that read files agree themselves; the others decide
     * alike: rank 0 speaks, unless out of memory */
    if (!s->ops[i]->create_collective)
        st = fs_error_agree(s->run.comm, rank == 0 || st == FS_ERR_RUNTIME ? st : FS_OK);
    return st;
}

/* The spectra the field stage's results make: the families their records
 * name, in order of first appearance. */
static void take_families(fs_stages *s)
{
    fs_stage_run *r = &s->run;
    for (int i = 0; i < r->n; i++)
        for (int k = 0; k < s->ops[s->field]->results(s->state[s->field], i); k++) {
            fs_stage_record rec;
            fs_stages_record(s, i, k, &rec);
            int f = 0;
            while (f < r->nfamilies && !(r->families[f] == rec.family ||
                   (r->families[f] && rec.family && strcmp(r->families[f], rec.family) == 0)))
                f++;
            if (f == r->nfamilies && f < FS_MAX_FAMILIES)
                r->families[r->nfamilies++] = rec.family;
        }
}

fs_status fs_stages_create(const fs_stage_config *sc, const fs_stage_run *r, fs_stages **out)
{
    int rank = 0;
    MPI_Comm_rank(r->comm, &rank);
    fs_stages *s = *out = calloc(1, sizeof **out);
    fs_status st = fs_error_agree(r->comm, s ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory"));
    if (st != FS_OK)
        return st;
    s->field = -1;
    fs_status boxed = take_box(s, sc, r); /* alike everywhere: rank 0 speaks */
    st = fs_error_agree(r->comm, rank == 0 ? boxed : FS_OK);
    s->facts.weighed = fs_stages_weighed(sc, &s->facts);
    s->facts.field = fs_stages_field(sc, &s->facts);
    s->spectrum_only = sc->shared.spectrum_only;
    s->ninputs = r->n;
    int naxes = 0;
    for (int a = 0; r->n > 0 && a < r->ts[0]->in_ndim; a++)
        naxes += r->ts[0]->transform_axis[a] != 0;
    fs_stages_needs(sc, r->facts, naxes, &s->need);
    /* the field stage first: the others see the spectra its results make */
    for (int pass = 0; pass < 2 && st == FS_OK; pass++) {
        for (int k = 0; k < sc->n && st == FS_OK; k++) {
            fs_stage_needs need;
            memset(&need, 0, sizeof need);
            if (fs_stage_table[k]->needs)
                fs_stage_table[k]->needs(sc->opts[k], &s->facts, naxes, &need);
            if (fs_stage_active(sc, k) && need.field == (pass == 0))
                st = create_one(s, sc, k, naxes, rank);
        }
        if (pass == 0 && st == FS_OK && s->field >= 0 && s->ops[s->field]->results)
            take_families(s);
    }
    return st;
}

void fs_stages_free(fs_stages **s)
{
    if (!*s)
        return;
    for (int i = 0; i < (*s)->n; i++)
        if ((*s)->ops[i]->destroy)
            (*s)->ops[i]->destroy((*s)->state[i]);
    free((*s)->kept);
    free(*s);
    *s = NULL;
}

int fs_stages_made(const fs_stages *s, int i)
{
    if (s->field >= 0 && s->ops[s->field]->results)
        return s->ops[s->field]->results(s->state[s->field], i);
    return s->field >= 0 || !s->spectrum_only ? 1 : 0;
}

int fs_stages_results(const fs_stages *s, int i)
{
    if (s->spectrum_only)
        return 0;
    if (s->field >= 0 && s->ops[s->field]->results)
        return s->ops[s->field]->results(s->state[s->field], i);
    return 1;
}

const char *fs_stages_result_path(const fs_stages *s, int i, int k)
{
    (void)i;
    if (s->field < 0 || !s->ops[s->field]->result_path)
        return NULL;
    return s->ops[s->field]->result_path(s->state[s->field], k);
}

/* What the stage that weighs the field's product records of result k of
 * input i's turn (its operation, its grid): 0 when none weighs. */
static int weighing_record(const fs_stages *s, int i, int k, fs_stage_record *w)
{
    memset(w, 0, sizeof *w);
    for (int j = 0; j < s->n && s->facts.weighed; j++)
        if (s->ops[j]->weigh && s->ops[j]->record) {
            s->ops[j]->record(s->state[j], i, k, w);
            return 1;
        }
    return 0;
}

void fs_stages_record(const fs_stages *s, int i, int k, fs_stage_record *rec)
{
    memset(rec, 0, sizeof *rec);
    rec->input = i;
    rec->second = -1;
    if (s->field >= 0 && s->ops[s->field]->record)
        s->ops[s->field]->record(s->state[s->field], i, k, rec);
    fs_stage_record w;
    if (weighing_record(s, i, k, &w)) { /* the weights in their grid's units */
        rec->weighed_by = w.operation;
        rec->nbox = w.nbox;
        memcpy(rec->box, w.box, sizeof rec->box);
    }
}

const char *fs_stages_group(const fs_stages *s, int g)
{
    for (int i = 0; i < s->n; i++) {
        for (int k = 0; s->ops[i]->group; k++, g--) {
            const char *path = s->ops[i]->group(s->state[i], k);
            if (!path)
                break;
            if (g == 0)
                return path;
        }
    }
    return NULL;
}

fs_status fs_stages_lay_out(const fs_stages *s, const char *output_dataset, fs_stages_layout *l)
{
    int n = s->run.n, total = 0, ngroups = 0;
    memset(l, 0, sizeof *l);
    l->first = calloc((size_t)n + 1, sizeof *l->first);
    l->count = calloc((size_t)n + 1, sizeof *l->count);
    for (int i = 0; l->count && i < n; i++)
        total += l->count[i] = fs_stages_results(s, i);
    while (fs_stages_group(s, ngroups))
        ngroups++;
    l->paths = calloc((size_t)(total + ngroups + 1), sizeof *l->paths);
    l->input = calloc((size_t)(total + 1), sizeof *l->input);
    if (!l->first || !l->count || !l->paths || !l->input)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    for (int i = 0, p = 0; i < n; i++) {
        l->first[i] = p;
        for (int k = 0; k < l->count[i]; k++, p++) {
            const char *named = fs_stages_result_path(s, i, k);
            l->paths[p] = named ? named : output_dataset ? output_dataset : s->run.infos[i].dataset;
            l->input[p] = i;
        }
    }
    l->nresults = total;
    l->ngroups = ngroups;
    for (int g = 0; g < ngroups; g++)
        l->paths[total + g] = fs_stages_group(s, g);
    return FS_OK;
}

void fs_stages_layout_free(fs_stages_layout *l)
{
    free(l->paths);
    free(l->input);
    free(l->first);
    free(l->count);
    memset(l, 0, sizeof *l);
}

/* The first INPUT's forward result, for the later turns. */
static fs_status keep_first(fs_stages *s, const fs_stage_turn *turn)
{
    size_t bytes = (size_t)fs_box_elems(fs_decomposition_last(turn->d)) *
                   fs_dtype_bytes(turn->t->work_type);
    free(s->kept);
    s->kept = malloc(bytes ? bytes : 1);
    if (!s->kept)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory keeping the first INPUT's transform "
                            "(%zu bytes)", bytes);
    memcpy(s->kept, turn->data, bytes);
    return FS_OK;
}

/* The forward hooks of the stages that are `first` (or the others'), each
 * given the working array where the one before left it. */
static fs_status forward_hooks(fs_stages *s, fs_stage_turn *turn, int first)
{
    fs_status st = FS_OK;
    for (int i = 0; i < s->n && st == FS_OK; i++)
        if (s->ops[i]->forward && s->first[i] == first) {
            st = s->ops[i]->forward(s->state[i], turn);
            turn->data = fs_compute_data(turn->c);
        }
    return st;
}

fs_status fs_stages_forward(fs_stages *s, fs_stage_turn *turn)
{
    fs_status st = forward_hooks(s, turn, 1);
    if (st == FS_OK && s->need.keep_first && s->ninputs > 1 && turn->i == 0)
        st = keep_first(s, turn);
    turn->kept = turn->i > 0 ? s->kept : NULL;
    if (st == FS_OK)
        st = forward_hooks(s, turn, 0);
    return fs_error_agree(turn->comm, st);
}

/* Result k in Fourier space to the stages that bin the field's results. */
static fs_status made(void *ctx, const fs_stage_turn *turn, int k, const void *fourier,
                      double scale)
{
    fs_stages *s = ctx;
    fs_stage_record rec;
    fs_stages_record(s, turn->i, k, &rec);
    fs_status st = FS_OK;
    for (int i = 0; i < s->n && st == FS_OK; i++)
        if (s->ops[i]->result && s->need.sees_results)
            st = s->ops[i]->result(s->state[i], turn, k, &rec, fourier, scale);
    return st;
}

/* The field's product on box times every weighing stage's factors. */
static fs_status weigh(void *ctx, const fs_stage_turn *turn, const fs_box *box, void *data)
{
    fs_stages *s = ctx;
    fs_status st = FS_OK;
    for (int i = 0; i < s->n && st == FS_OK; i++)
        if (s->ops[i]->weigh && s->facts.weighed)
            st = s->ops[i]->weigh(s->state[i], turn, box, data);
    return st;
}

fs_status fs_stages_operate(fs_stages *s, const fs_stage_turn *turn, int k)
{
    fs_stage_turn now = *turn;
    now.made = s->need.sees_results ? made : NULL;
    now.made_ctx = s;
    now.weigh = s->facts.weighed ? weigh : NULL;
    now.weigh_ctx = s;
    now.no_inverse = fs_stages_results(s, turn->i) == 0; /* nothing written */
    return s->ops[s->field]->operate(s->state[s->field], &now, k); /* agreed */
}

fs_status fs_stages_forward_block(fs_stages *s, const fs_stage_turn *turn, const fs_box *box,
                                  const void *data)
{
    fs_status st = FS_OK;
    for (int i = 0; i < s->n && st == FS_OK; i++)
        if (s->ops[i]->forward_block)
            st = s->ops[i]->forward_block(s->state[i], turn, box, data);
    return st;
}

fs_status fs_stages_operate_block(fs_stages *s, const fs_stage_turn *turn, int k,
                                  const fs_box *box, void *data)
{
    return s->ops[s->field]->operate_block(s->state[s->field], turn, k, box, data);
}

fs_status fs_stages_written(fs_stages *s, const fs_stage_turn *turn)
{
    fs_status st = FS_OK;
    for (int i = 0; i < s->n && st == FS_OK; i++)
        if (s->ops[i]->written)
            st = s->ops[i]->written(s->state[i], turn); /* agreed */
    if (turn->i == s->ninputs - 1) {
        free(s->kept);
        s->kept = NULL;
    }
    return st;
}

fs_status fs_stages_finish(fs_stages *s, MPI_Comm comm, const fs_stage_out *out)
{
    fs_status st = FS_OK;
    for (int i = 0; i < s->n && st == FS_OK; i++)
        if (s->ops[i]->finish)
            st = s->ops[i]->finish(s->state[i], comm, &s->run, out); /* agreed */
    return st;
}

const fs_box_lengths *fs_stages_box(const fs_stages *s)
{
    return &s->shared.box;
}

/* The report's "box": the lengths of the grids and whence they came. */
static void box_json(fs_json *j, const void *arg)
{
    const fs_stages *s = arg;
    fs_json_open(j, "box", '{');
    fs_json_open(j, "lengths", '[');
    for (int i = 0; i < s->shared.box.n; i++)
        fs_json_num(j, NULL, s->shared.box.L[i]);
    fs_json_close(j, ']');
    fs_json_str(j, "from", s->box_from);
    fs_json_close(j, '}');
}

/* The summary's line of a box taken from the inputs (nothing asked it). */
static void box_line(const fs_stages *s, FILE *f)
{
    if (strncmp(s->box_from, "the ", 4) != 0)
        return;
    fputs("  box:", f);
    for (int i = 0; i < s->shared.box.n; i++)
        fprintf(f, "%s%.10g", i ? " x " : " ", s->shared.box.L[i]);
    fprintf(f, " from %s\n", s->box_from);
}

const fs_json_part *fs_stages_report(fs_stages *s, const char *output, int *n, char **lines)
{
    char *text = NULL;
    size_t bytes = 0;
    FILE *f = open_memstream(&text, &bytes);
    *n = 0;
    if (s->shared.box.n > 0)
        s->parts[(*n)++] = (fs_json_part){NULL, box_json, s};
    if (f)
        box_line(s, f);
    for (int i = 0; i < s->n; i++) {
        if (s->ops[i]->json)
            s->parts[(*n)++] = (fs_json_part){s->ops[i]->report_member, s->ops[i]->json,
                                              s->state[i]};
        if (s->ops[i]->summary && f) {
            char line[3 * FS_PATH_MAX + 512];
            s->ops[i]->summary(s->state[i], output, line, sizeof line);
            fputs(line, f);
        }
    }
    if (f && fclose(f) != 0) {
        free(text);
        text = NULL;
    }
    *lines = text && bytes ? text : (free(text), NULL);
    return s->parts;
}

const char *fs_stages_operation(const fs_stages *s)
{
    if (s->field < 0)
        return NULL;
    fs_stage_record rec, w;
    int last = s->ninputs > 0 ? s->ninputs - 1 : 0;
    fs_stages_record(s, last, 0, &rec);
    if (!weighing_record(s, last, 0, &w))
        return rec.asked ? rec.asked : rec.operation;
    if (!s->operation[0]) /* once: the text lives with the stages */
        snprintf(((fs_stages *)s)->operation, sizeof s->operation, "%s weighed by %s",
                 rec.asked ? rec.asked : rec.operation, w.asked ? w.asked : w.operation);
    return s->operation;
}
