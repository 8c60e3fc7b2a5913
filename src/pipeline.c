/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pipeline: see pipeline.h. Each phase below is one section of the man
 * page's account of a run; the policy of each lives in its own module:
 * planner (what is computed, which strategy), decomp (who holds what),
 * compute (the FFTs and exchanges), output (what is written and when it
 * becomes visible), check (--check) and report_run (what the run says).
 * Several inputs go through the same stages one dataset after the other,
 * into one output file committed once; the compute plan and the working
 * buffer stay while the next dataset asks for the same transform. */
#include "config.h"

#include "pipeline.h"
#include "core/collective.h"

#include <stdio.h>
#include <stdlib.h>

#include "analysis/combine.h"
#include "analysis/operators.h"
#include "analysis/spectrum.h"
#include "compute/check.h"
#include "compute/compute.h"
#include "compute/overlap.h"
#include "core/signals.h"
#include "io/shards.h"
#include "output/output.h"
#include "plan/decomp.h"
#include "plan/planner.h"
#include "plan/wisdom.h"
#include "core/progress.h"
#include "report/report.h"
#include "report/report_run.h"

/* One INPUT and what is computed from it. */
typedef struct dataset {
    const char *file;             /* the INPUT file (the pattern or list with --shards) */
    const fs_input_info *info;    /* the probed input (in run.infos) */
    char name[FS_INPUT_NAME_MAX]; /* FILE:/DATASET[SLICE], for messages (rq.in_name) */
    fs_transform_request rq;      /* what the compute plan is planned for */
    fs_planned planned;           /* the transform, per capability */
    const fs_transform *t;        /* the one the chosen strategy runs */
    fs_strategy_choice strategy;
    fs_timers timers;             /* its own phases */
    fs_check_result check;
    fs_exchange_stats exchange_before; /* the reused compute plan's count before it */
    int64_t plans_before[2];      /* FFTW's plan counts before it */
} dataset;

typedef struct run {
    MPI_Comm comm;
    int rank, nranks;
    const fs_run_config *opts;
    int n;                        /* datasets */
    fs_input_info *infos;         /* each INPUT as probed */
    dataset *ds;
    dataset *cur;                 /* the one being worked on */
    fs_shard_set shards;          /* --shards: the files (n 0 for one file) */
    const fs_shard_set *in_shards; /* &shards with --shards, else NULL */
    /* The compute plan, kept across datasets that ask for the same. */
    const dataset *planned_for;   /* NULL: none */
    fs_decomposition *d;
    fs_exchange_params params;
    fs_compute *c;
    fs_wisdom *wisdom;
    fs_workbuf buf;               /* the local array */
    fs_output out;
    fs_timers timers;             /* the run's own phases (opening, closing, commit, total) */
    fs_progress progress;
    fs_report_sections *sections; /* several inputs */
    fs_spectrum *spectrum;        /* NULL: none asked for */
    fs_operators ops;             /* --apply (n 0: none), with each dataset's grid */
    fs_combine *combine;          /* --correlate ... (NULL: none) */
    fs_node node;                 /* the facts of the node, found once */
    fs_overlap *overlap;          /* the current dataset's overlapped I/O (NULL: none) */
} run;

/* The current dataset as the report sees it; timers NULL: its own. */
static fs_run_view view(const run *r, const fs_timers *timers)
{
    const dataset *ds = r->cur;
    return (fs_run_view){
        .opts = r->opts, .info = ds->info, .t = ds->t, .nranks = r->nranks,
        .strategy = ds->strategy.name, .strategy_note = ds->strategy.note,
        .strategy_reason = ds->strategy.reason, .params = &r->params, .c = r->c,
        .tmp_path = r->out.tmp_path, .data_elems = r->buf.elems,
        .first = fs_decomposition_first(r->d), /* a round trip writes the field from it */
        .last = ds->t->round_trip ? fs_decomposition_first(r->d) : fs_decomposition_last(r->d),
        .timers = timers ? timers : &ds->timers, .check = &ds->check, .input_file = ds->file,
        .output_dataset = r->out.dataset, .exchange_before = &ds->exchange_before,
        .plans_before = ds->plans_before, .spectrum = r->spectrum, .combine = r->combine,
        .operation = r->opts->apply ? r->opts->apply : fs_combine_name(r->opts->combine),
    };
}

/* Rank 0 probes every input; every rank plans every transform from what it
 * found (into ts), and rank 0 speaks for all when the options do not fit one. */
static fs_status stage_probe(run *r, const fs_transform *const *ts)
{
    const fs_run_config *o = r->opts;
    fs_status st = FS_OK;
    for (int i = 0; i < r->n && st == FS_OK && r->rank == 0; i++)
        st = fs_input_probe(o->shards, o->inputs[i].file, o->inputs[i].dataset,
                            &o->inputs[i].slice, &r->infos[i], &r->shards);
    st = fs_error_agree(r->comm, st);
    if (st != FS_OK)
        return st;
    if ((st = fs_bcast_bytes(r->comm, 0, r->infos, (int64_t)sizeof *r->infos * r->n)) != FS_OK ||
        (o->shards && (st = fs_shards_bcast(r->comm, &r->shards)) != FS_OK))
        return st;
    r->in_shards = r->infos[0].nshards ? &r->shards : NULL;
    fs_planner_notes *notes = calloc((size_t)r->n, sizeof *notes);
    if (!notes)
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
    for (int i = 0; i < r->n && st == FS_OK; i++) {
        dataset *ds = &r->ds[i];
        ds->file = o->inputs[i].file;
        ds->info = &r->infos[i];
        fs_input_name(ds->file, ds->info, ds->name, sizeof ds->name);
        st = fs_planner_request_noted(o, ds->info, ds->name, r->nranks, &ds->rq, &notes[i]);
        if (st == FS_OK)
            st = fs_planner_transforms(&ds->rq, &ds->planned);
        ds->t = &ds->planned.plain;
    }
    if (st == FS_OK)
        st = fs_spectrum_new(o, ts, r->n, &r->spectrum);
    if (st == FS_OK)
        st = fs_combine_new(o, ts, r->n, &r->combine);
    /* Warnings are for a run that goes on: a refusal says it all. */
    for (int i = 0; i < r->n && st == FS_OK && r->rank == 0; i++)
        fs_planner_print_notes(&notes[i], o->quiet, o->verbose);
    free(notes);
    return fs_error_agree(r->comm, r->rank == 0 ? st : FS_OK);
}

/* --transpose=auto's trial of one strategy: planned on the working buffer,
 * run once on zeros. */
typedef struct trial_ctx {
    run *r;
    const fs_planned *planned;
    unsigned flags;
} trial_ctx;

static fs_status time_strategy(void *ctx, const fs_exchange_ops *ops, double *slowest)
{
    trial_ctx *tc = ctx;
    fs_compute_args ca = {tc->r->comm, fs_planned_for(tc->planned, ops), tc->r->d, ops,
                          &tc->r->params, tc->flags, 0, 0};
    return fs_compute_trial(&ca, &tc->r->buf, slowest);
}

/* Who holds what, the strategy and the compute plan of the current
 * dataset: those of the previous one when it asked for the same. */
static fs_status stage_plan(run *r)
{
    const fs_run_config *o = r->opts;
    dataset *ds = r->cur;
    if (r->planned_for && fs_planner_same_request(&r->planned_for->rq, &ds->rq)) {
        ds->strategy = r->planned_for->strategy;
        ds->t = fs_planned_for(&ds->planned, ds->strategy.ops);
        return FS_OK;
    }
    r->planned_for = NULL;
    fs_compute_free(&r->c); /* it borrows the decomposition */
    fs_decomposition_free(&r->d);
    int undo = o->check || o->correlation || ds->planned.plain.round_trip; /* as --apply's */
    fs_status st = fs_error_agree(r->comm, fs_decomposition_new(r->comm, &ds->planned.plain,
                                                                undo, &r->d));
    if (st != FS_OK)
        return st;
    unsigned flags = fs_planner_fftw_flags(o);
    trial_ctx tc = {r, &ds->planned, flags};
    fs_trial_args trial = {r->comm, &ds->planned, &r->params, time_strategy, &tc, o->inverse,
                           o->verbose, r->wisdom, &ds->rq, {o->check, o->keep_first, o->correlation},
                           &r->node};
    st = fs_planner_choose(&o->strategy, &trial, &ds->strategy); /* agreed */
    ds->t = fs_planned_for(&ds->planned, ds->strategy.ops);
    if (st != FS_OK)
        return st;
    fs_compute_args ca = {r->comm, ds->t, r->d, ds->strategy.ops, &r->params, flags, undo,
                          o->apply && !r->spectrum && !o->check}; /* --apply's round trip */
    st = fs_error_agree(r->comm, fs_compute_new(&ca, &r->buf, &r->c));
    if (st == FS_OK)
        r->planned_for = ds;
    return st;
}

/* Which I/O of the current dataset overlaps its FFTs, and the plans of
 * their pieces, made before the read as every plan is. */
static fs_status plan_overlap(run *r)
{
    const fs_run_config *o = r->opts;
    fs_overlap_free(&r->overlap);
    fs_overlap_args a = {
        .comm = r->comm, .t = r->cur->t, .d = r->d, .c = r->c, .buf = &r->buf,
        .input_file = r->cur->file, .info = r->cur->info, .shards = r->in_shards,
        .h5 = fs_output_h5(&r->out), .keep = o->check, .io_thread = r->node.io_thread,
        .refuse_nonfinite = !o->allow_nonfinite && r->cur->info->dtype != FS_DTYPE_INTEGER,
        /* spectra bin, round trips operate on, the whole result before the write */
        .whole_result = o->shard_output || r->spectrum || r->cur->t->round_trip,
    };
    return fs_overlap_plan(&a, &r->overlap); /* agreed */
}

/* In pieces with the first FFTs, or as a whole; NaN and Inf refused there. */
static fs_status stage_read(run *r)
{
    return fs_overlap_read(r->overlap, &r->cur->timers, &r->progress);
}

static fs_status stage_check(run *r)
{
    dataset *ds = r->cur;
    fs_check_args a = {.comm = r->comm, .t = ds->t, .c = r->c, .data = r->buf.data,
        .first = fs_decomposition_first(r->d), .last = fs_decomposition_last(r->d),
        .input_file = ds->file, .info = ds->info, .shards = r->in_shards,
        .tolerance = r->opts->check_tolerance};
    fs_timer_start(&ds->timers, FS_PHASE_CHECK); /* agreed and said inside: not again */
    fs_status st = fs_check_run(&a, &ds->check);
    fs_timer_stop(&ds->timers, FS_PHASE_CHECK);
    return st;
}

/* A phase of the current dataset, timed, its status agreed by every rank. */
static fs_status phase(run *r, fs_phase p, fs_status (*fn)(run *))
{
    fs_timer_start(&r->cur->timers, p);
    fs_status st = fs_error_agree(r->comm, fn(r));
    fs_timer_stop(&r->cur->timers, p);
    return st;
}

/* The current dataset's plan, begun with FFTW's count of plans. */
static fs_status plan_dataset(run *r)
{
    fs_fft_plan_counts(&r->cur->plans_before[0], &r->cur->plans_before[1]);
    fs_timer_start(&r->cur->timers, FS_PHASE_PLAN);
    fs_status st = stage_plan(r); /* agreed */
    fs_timer_stop(&r->cur->timers, FS_PHASE_PLAN);
    r->cur->exchange_before = fs_compute_exchange_totals(r->c);
    return st;
}

/* --apply or the combined spectra (result k) on the forward result in its last
 * layout, then (unless it is kept) the inverse back to the first, for the write. */
static fs_status operate(run *r, int i, int k)
{
    dataset *ds = r->cur;
    const fs_box *last = fs_decomposition_last(r->d);
    if (!r->combine) /* --apply */
        return fs_operators_round_trip(&r->ops, i, ds->t, last, r->c, r->buf.data, &ds->timers,
                                       &r->progress);
    fs_timer_start(&ds->timers, FS_PHASE_OPERATE);
    fs_status st = k > 0 ? fs_combine_next(r->combine, k, ds->t, last, r->buf.data)
                         : fs_combine_apply(r->combine, i, ds->t, last, r->buf.data);
    fs_timer_stop(&ds->timers, FS_PHASE_OPERATE);
    if ((st = fs_error_agree(r->comm, st)) != FS_OK || !fs_combine_writes(r->combine, i))
        return st;
    st = fs_error_agree(r->comm,
                        fs_compute_undo_timed(r->c, r->buf.data, &ds->timers, &r->progress));
    const fs_box *first = fs_decomposition_first(r->d); /* the peak's search is agreed */
    return st == FS_OK ? fs_combine_peak(r->combine, r->comm, ds->t, first, r->buf.data) : st;
}

/* Everything before any data moves: the inputs, the destinations, the
 * first dataset's plan, the output's storage and space for them all. */
static fs_status prepare(run *r)
{
    const fs_run_config *o = r->opts;
    r->cur = &r->ds[0];
    fs_status st = fs_node_facts(r->comm, o->mem_per_rank, 0, &r->node); /* agreed */
    r->params = (fs_exchange_params){.seed = o->seed, .packet_bytes = o->packet_bytes,
                                     .queues = o->queues, .crowded = r->node.crowded};
    fs_collective_yield(st == FS_OK && r->node.crowded);
    const fs_transform *ts[r->n]; /* every dataset's, as planned */
    for (int i = 0; i < r->n; i++)
        ts[i] = &r->ds[i].planned.plain;
    if (st == FS_OK)
        st = stage_probe(r, ts);
    if (st == FS_OK && o->apply) /* the operators, checked against each grid */
        st = fs_operators_prepare(r->comm, o->apply, o->box, o->nbox, ts, r->n, &r->ops);
    if (st == FS_OK)
        st = fs_output_begin(r->comm, o, r->infos, r->n, r->in_shards, &r->out);
    if (st == FS_OK && r->n > 1)
        st = fs_error_agree(r->comm, fs_report_sections_new(r->n, &r->sections));
    if (st == FS_OK)
        st = fs_wisdom_load(r->comm, o->wisdom_file, &r->wisdom); /* agreed */
    if (st == FS_OK)
        st = plan_dataset(r);
    fs_timer_start(&r->cur->timers, FS_PHASE_PLAN);
    if (st == FS_OK)
        st = fs_output_plan(&r->out, ts, o->spectrum_only ? 0 : r->n); /* agreed */
    fs_timer_stop(&r->cur->timers, FS_PHASE_PLAN);
    return st;
}

static fs_status create_output(run *r)
{
    return fs_output_create(&r->out, r->cur->t);
}

static fs_status write_output(run *r)
{
    if (fs_overlap_writes(r->overlap)) {
        fs_status st = fs_overlap_write(r->overlap, &r->cur->timers, &r->progress); /* agreed */
        return st == FS_OK ? fs_output_write_attributes(&r->out, r->cur->t) : st;
    }
    const fs_transform *t = r->cur->t;
    const fs_box *box = t->round_trip ? fs_decomposition_first(r->d) : fs_decomposition_last(r->d);
    return fs_output_write(&r->out, t, box, r->buf.data, &r->progress);
}

/* Result k of the current dataset (k > 0: --vector's others): made, then written. */
static fs_status make_result(run *r, int i, int k, int writes, int *write_failed)
{
    fs_output_select_result(&r->out, k);
    fs_status st = k > 0 ? phase(r, FS_PHASE_WRITE, create_output) : FS_OK;
    if (st == FS_OK && r->cur->t->round_trip)
        st = operate(r, i, k); /* agreed */
    if (st == FS_OK && writes) {
        st = phase(r, FS_PHASE_WRITE, write_output);
        *write_failed = st != FS_OK;
    }
    return st;
}

/* One dataset through the man page's phases: plan (kept from the one
 * before when the same), create its dataset, read, FFT and exchange,
 * write, check. *write_failed (out) when a collective write failed. */
static fs_status run_dataset(run *r, int i, int *write_failed)
{
    const fs_run_config *o = r->opts;
    dataset *ds = r->cur = &r->ds[i];
    fs_signals_set_dataset(r->n > 1 ? i + 1 : 0);
    fs_timer_start(&ds->timers, FS_PHASE_TOTAL);
    fs_status st = i > 0 ? plan_dataset(r) : FS_OK; /* the first in prepare() */
    fs_output_select(&r->out, i, ds->info, ds->file, ds->strategy.name, r->nranks);
    double box[FS_LAYOUT_MAX_DIMS]; /* --apply, --vector: what the results record */
    const fs_kgrid *g = o->apply ? fs_operators_grid(&r->ops, i) : fs_combine_grid(r->combine);
    if (g)
        fs_output_set_operation(&r->out, o->apply ? r->ops.text : fs_combine_name(o->combine),
                                fs_kgrid_lengths(g, box), box);
    if (st == FS_OK && o->verbose && r->rank == 0)
        fs_report_verbose_plan((const fs_run_view[]){view(r, NULL)});
    int writes = !o->spectrum_only && fs_combine_writes(r->combine, i);
    if (st == FS_OK && writes)
        st = phase(r, FS_PHASE_WRITE, create_output);
    if (st == FS_OK)
        st = phase(r, FS_PHASE_PLAN, plan_overlap);
    if (st == FS_OK)
        st = phase(r, FS_PHASE_READ, stage_read);
    if (st == FS_OK) /* the FFTs and exchanges (the overlapped ones aside) */
        st = fs_error_agree(r->comm, fs_compute_run_part(r->c, r->buf.data,
                                                         fs_overlap_reads(r->overlap),
                                                         fs_overlap_writes(r->overlap),
                                                         &ds->timers, &r->progress));
    if (st == FS_OK && r->spectrum) /* the result into the spectra */
        st = fs_error_agree(r->comm, fs_spectrum_add(r->spectrum, i, ds->t,
                                                     fs_decomposition_last(r->d), r->buf.data));
    for (int k = 0; st == FS_OK && (k == 0 || k < fs_combine_count(r->combine, i)); k++)
        st = make_result(r, i, k, writes, write_failed);
    if (st == FS_OK && (o->check || o->correlation)) /* the result undone: one or the other */
        st = o->check ? stage_check(r) /* timed and agreed; xi(r): the result its own product */
                      : fs_spectrum_correlate(r->spectrum, i, &(fs_correlation_args){r->comm,
                            ds->t, r->c, r->d, r->buf.data, &ds->timers, &r->progress});
    fs_timer_stop(&ds->timers, FS_PHASE_TOTAL);
    if (st == FS_OK && r->sections) /* agreed */
        st = fs_report_add_section(r->comm, (const fs_run_view[]){view(r, NULL)}, r->sections);
    return st;
}

/* The wisdom and the report into their temporaries, then the result, the report and
 * the wisdom into place in one commit: a report or wisdom that cannot be written fails
 * the run with OUTPUT untouched. The figures are taken before the commit (commit: the
 * wisdom's merge and write; total: up to the report's write). summary (out, rank 0):
 * the summary, printed once the result is in place. */
static fs_status commit(run *r, char **summary)
{
    fs_timer_start(&r->timers, FS_PHASE_COMMIT);
    fs_status st = fs_wisdom_save(r->comm, r->wisdom, &r->out.wisdom_tmp); /* agreed */
    fs_timer_stop(&r->timers, FS_PHASE_COMMIT);
    fs_timer_stop(&r->timers, FS_PHASE_TOTAL);
    fs_timers all = r->timers; /* the run's phases with every dataset's */
    for (int i = 0; i < r->n; i++)
        fs_timers_add(&all, &r->ds[i].timers);
    if (st == FS_OK && r->sections)
        st = fs_report_run_many(r->comm, r->opts, r->nranks, r->sections, r->spectrum,
                                r->combine, &all, r->out.report_tmp, summary);
    else if (st == FS_OK) {
        fs_run_view v = view(r, &all);
        st = fs_report_run(r->comm, &v, r->out.report_tmp, summary);
    }
    if (st == FS_OK)
        st = fs_output_commit(&r->out, r->cur->t);
    return st;
}

/* Timed as the write phase of the run, its status agreed. */
static fs_status output_step(run *r, fs_status (*fn)(fs_output *))
{
    fs_timer_start(&r->timers, FS_PHASE_WRITE);
    fs_status st = fs_error_agree(r->comm, fn(&r->out));
    fs_timer_stop(&r->timers, FS_PHASE_WRITE);
    return st;
}

/* The phases of the man page in order: probe, plan, create, then for every
 * dataset read, FFT and exchange, write, check; close, commit (with the
 * report's write), report. */
static fs_status run_phases(run *r)
{
    int opened = 0, write_failed = 0; /* the same on every rank */
    fs_status st = prepare(r);
    if (st == FS_OK)
        opened = (st = output_step(r, fs_output_open)) == FS_OK;
    for (int i = 0; i < r->n && st == FS_OK; i++)
        st = run_dataset(r, i, &write_failed);
    fs_signals_set_dataset(0);
    fs_spectrum_inputs in = {r->opts->inputs, r->infos, r->out.input_attrs, r->n};
    if (st == FS_OK && r->spectrum) /* agreed */
        st = fs_spectrum_finish(r->spectrum, r->comm, fs_output_h5(&r->out), &in,
                                r->opts->add && r->opts->force, &r->timers);
    if (opened && !write_failed) {
        fs_status closed = output_step(r, fs_output_close);
        write_failed = closed != FS_OK;
        st = st != FS_OK ? st : closed;
    }
    if (write_failed)
        fs_output_abandon(&r->out, st);
    char *summary = NULL;
    if (st == FS_OK)
        st = commit(r, &summary);
    if (st == FS_OK) /* the result is in place: a signal from here on says so */
        fs_signals_set_phase("report");
    if (st == FS_OK && summary)
        fputs(summary, stderr); /* unbuffered */
    free(summary);
    return st;
}

fs_status fs_pipeline_run(MPI_Comm comm, const fs_run_config *opts)
{
    run r = {.comm = comm, .opts = opts, .n = opts->ninputs};
    fs_output_init(&r.out);
    if (MPI_Comm_rank(comm, &r.rank) != MPI_SUCCESS || MPI_Comm_size(comm, &r.nranks) != MPI_SUCCESS)
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed"));
    r.infos = calloc((size_t)r.n, sizeof *r.infos);
    r.ds = calloc((size_t)r.n, sizeof *r.ds);
    int ok = r.n > 0 && r.infos && r.ds;
    fs_status st = fs_error_agree(comm, ok ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory"));
    fs_timer_start(&r.timers, FS_PHASE_TOTAL);
    fs_progress_init(&r.progress, r.rank == 0 && !opts->quiet && opts->progress);
    if (st == FS_OK)
        st = run_phases(&r);
    /* One cleanup path: every rank closes its handles; a failed run leaves
     * no temporary behind. The compute plan borrows the decomposition. */
    fs_output_finish(&r.out, st);
    fs_overlap_free(&r.overlap);
    fs_shard_set_free(&r.shards);
    fs_compute_free(&r.c);
    fs_decomposition_free(&r.d);
    fs_wisdom_free(&r.wisdom);
    fs_workbuf_release(&r.buf);
    fs_report_sections_free(&r.sections);
    fs_spectrum_free(&r.spectrum);
    fs_operators_free(&r.ops);
    fs_combine_free(&r.combine);
    free(r.ds);
    free(r.infos);
    return st;
}
