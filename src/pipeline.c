/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pipeline: see pipeline.h. Each phase below is one section of the man
 * page's account of a run; its policy lives in its own module (planner,
 * decomp, compute, the stages through their driver, output, check,
 * report_run). Several inputs go through the phases one dataset after the
 * other, into one output file committed once; the compute plan and the
 * working buffer stay while the next dataset asks for the same transform. */
#include "config.h"

#include "pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compute/check.h"
#include "core/collective.h"
#include "core/signals.h"
#include "pipeline_state.h"

/* The current dataset as the report sees it; timers NULL: its own. Its
 * output is its result, or on a turn without one the run's, or the first
 * group. */
static fs_run_view view(const run *r, const fs_timers *timers)
{
    const dataset *ds = r->cur;
    int i = (int)(ds - r->ds);
    const char *written = r->lay.count[i] ? r->lay.paths[r->lay.first[i]]
                          : r->lay.paths[0] ? r->lay.paths[0]
                                            : ds->info->dataset;
    const fs_box *first = r->d ? fs_decomposition_first(r->d) : NULL;
    fs_run_view v = {
        .asked = &r->asked, .info = ds->info, .t = ds->t, .nranks = r->nranks,
        .strategy = ds->strategy.name, .strategy_note = ds->strategy.note,
        .strategy_reason = ds->strategy.reason, .params = &r->params, .c = r->c,
        .tmp_path = r->out.tmp_path, .data_elems = r->buf.elems,
        .first = first, /* a round trip writes the field from it (none out of core) */
        .last = ds->t->round_trip || !r->d ? first : fs_decomposition_last(r->d),
        .timers = timers ? timers : &ds->timers, .check = &ds->check, .input_file = ds->file,
        .written = written ? written : ds->info->dataset, .exchange_before = &ds->exchange_before,
        .plans_before = ds->plans_before,
    };
    if (ds->ooc->plan.on)
        fs_ooc_run_view(ds->ooc, &r->scratch, &v);
    return v;
}

/* Rank 0 probes every input; every rank plans every transform from what it
 * found, and rank 0 speaks for all when the options do not fit one. */
static fs_status stage_probe(run *r)
{
    const fs_run_config *o = r->cfg;
    const fs_stage_shared *sh = &o->stages.shared;
    fs_particles_args pa = {r->comm, &sh->particles, r->n, o->inputs, r->infos, o->shards,
                            &r->shards, sh->box.n, sh->box.L, o->allow_nonfinite};
    fs_status st = fs_particles_probe(&pa, &r->particles); /* particle tables: their meshes */
    if (st != FS_OK)
        return st;
    r->in_shards = r->infos[0].nshards ? &r->shards : NULL;
    fs_planner_notes *notes = calloc((size_t)r->n, sizeof *notes);
    if (!notes)
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
    for (int i = 0; i < r->n && st == FS_OK; i++) {
        dataset *ds = &r->ds[i];
        ds->file = o->inputs[i].file;
        ds->info = &r->infos[i];
        ds->ooc = &r->ooc[i];
        fs_transform_options to = o->transform; /* a first INPUT broadcast over the last's */
        int lead = r->needs.broadcasts && i == 0 ? r->infos[r->n - 1].ndim - ds->info->ndim : 0;
        if (lead > 0)
            st = fs_transform_options_aligned(&o->transform, lead, &to);
        if (st == FS_OK)
            st = fs_planner_request_noted(&to, r->needs.field, ds->file, ds->info, r->nranks,
                                          &ds->rq, &notes[i]);
        if (st == FS_OK && (st = fs_stages_domain(&o->stages, r->n, r->infos, &ds->rq)) == FS_OK)
            st = fs_planner_transforms(&ds->rq, &ds->planned);
        ds->t = r->ts[i] = &ds->planned.plain;
        fs_options_ooc_args(o, &ds->rq, &r->node, &ds->ooc_params, &ds->ooc_args);
    }
    st = fs_error_agree(r->comm, r->rank == 0 ? st : FS_OK);
    /* INPUTs not alike: the stages' usage error, before out of core plans each */
    if (st == FS_OK)
        st = fs_stages_create(&o->stages, &(fs_stage_run){.comm = r->comm, .n = r->n,
                              .inputs = o->inputs, .infos = r->infos, .ts = r->ts,
                              .facts = &r->facts}, &r->stages); /* agreed */
    int said = st != FS_OK;
    for (int i = 0; i < r->n && st == FS_OK; i++)
        st = fs_ooc_run_decide(&r->ds[i].ooc_args, r->ooc, i, &notes[i]);
    /* Warnings are for a run that goes on: a refusal says it all. */
    for (int i = 0; i < r->n && st == FS_OK && r->rank == 0; i++)
        fs_planner_print_notes(&notes[i], o->quiet, o->verbose);
    free(notes);
    return said ? st : fs_error_agree(r->comm, r->rank == 0 ? st : FS_OK);
}

/* Who holds what, the strategy and the compute plan of the current
 * dataset: those of the previous one when it asked for the same. */
static fs_status stage_plan(run *r)
{
    const fs_run_config *o = r->cfg;
    dataset *ds = r->cur;
    if (fs_ooc_run_strategy(ds->ooc, &ds->strategy)) /* the executor plans its blocks */
        return FS_OK;
    if (r->planned_for && fs_planner_same_request(&r->planned_for->rq, &ds->rq)) {
        ds->strategy = r->planned_for->strategy;
        ds->t = fs_planned_for(&ds->planned, ds->strategy.ops);
        return FS_OK;
    }
    r->planned_for = NULL;
    fs_compute_free(&r->c); /* it borrows the decomposition */
    fs_decomposition_free(&r->d);
    int undo = o->check.on || r->needs.undo || ds->planned.plain.round_trip;
    fs_status st = fs_error_agree(r->comm, fs_decomposition_new(r->comm, &ds->planned.plain,
                                                                undo, &r->d));
    if (st != FS_OK)
        return st;
    unsigned flags = fs_planner_fftw_flags(o->transform.plan);
    fs_compute_trial tc = {r->comm, &ds->planned, r->d, &r->params, flags, &r->buf};
    fs_footprint_keeps keeps = fs_options_keeps(o, &ds->rq);
    fs_trial_args trial = {r->comm, &ds->planned, &r->params, fs_compute_time, &tc,
                           o->transform.inverse, o->verbose, r->wisdom, &ds->rq, keeps, &r->node};
    st = fs_planner_choose(&o->strategy.strategy, &trial, &ds->strategy); /* agreed */
    ds->t = fs_planned_for(&ds->planned, ds->strategy.ops);
    if (st != FS_OK)
        return st;
    fs_compute_args ca = {r->comm, ds->t, r->d, ds->strategy.ops, &r->params, flags, undo,
                          r->needs.in_pass && !o->check.on};
    st = fs_error_agree(r->comm, fs_compute_new(&ca, &r->buf, &r->c));
    if (st == FS_OK)
        r->planned_for = ds;
    return st;
}

/* Which I/O of the current dataset overlaps its FFTs, and the plans of
 * their pieces, made before the read as every plan is. */
static fs_status plan_overlap(run *r)
{
    const fs_run_config *o = r->cfg;
    fs_overlap_free(&r->overlap);
    fs_overlap_args a = {
        .comm = r->comm, .t = r->cur->t, .d = r->d, .c = r->c, .buf = &r->buf,
        .input_file = r->cur->file, .info = r->cur->info, .shards = r->in_shards,
        .h5 = fs_output_h5(&r->out), .keep = o->check.on, .io_thread = r->node.io_thread,
        .refuse_nonfinite = !o->allow_nonfinite && r->cur->info->dtype != FS_DTYPE_INTEGER,
        /* stages bin, keep or operate on the whole result before the write */
        .whole_result = o->output.shard_output || r->needs.whole || r->cur->t->round_trip,
        .particles = r->particles, .dataset = (int)(r->cur - r->ds), /* made, not read */
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
        .first = fs_decomposition_first(r->d), .last = fs_decomposition_last(r->d), .info = ds->info,
        .input_file = ds->file, .shards = r->in_shards, .tolerance = r->cfg->check.tolerance};
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

/* Everything before any data moves: the inputs, the stages, the
 * destinations, the first dataset's plan, the output's storage and space. */
static fs_status prepare(run *r)
{
    const fs_run_config *o = r->cfg;
    r->cur = &r->ds[0];
    fs_status st = fs_node_facts(r->comm, o->strategy.mem_per_rank, 0, &r->node); /* agreed */
    r->params = (fs_exchange_params){o->strategy.seed, o->strategy.packet_bytes,
                                     o->strategy.queues, r->node.crowded};
    fs_collective_yield(st == FS_OK && r->node.crowded);
    if (st == FS_OK)
        st = stage_probe(r);
    if (st == FS_OK)
        st = fs_error_agree(r->comm, fs_stages_lay_out(r->stages, o->output.dataset, &r->lay));
    const fs_box_lengths *box = st == FS_OK ? fs_stages_box(r->stages) : &(fs_box_lengths){0};
    fs_output_layout lay = {r->lay.nresults, r->lay.paths, r->lay.input, r->lay.ngroups,
                            r->lay.paths + r->lay.nresults, box->n, box->L};
    r->asked = fs_options_asked(o);
    r->asked.operation = st == FS_OK ? fs_stages_operation(r->stages) : NULL;
    fs_output_inputs in = {r->n, o->inputs, r->infos, r->in_shards,
                           r->lay.nresults + r->lay.ngroups > 0,
                           (const fs_transform *const *)r->ts, o->verbose, o->quiet};
    if (st == FS_OK)
        st = fs_output_begin(r->comm, &o->output, &in, &lay, &r->out);
    if (st == FS_OK) /* out of core: the scratch, its space counted in OUTPUT's */
        st = fs_ooc_run_scratch(r->comm, o->output.file, &o->ooc, r->ooc, r->n, &r->scratch,
                                &r->out);
    if (st == FS_OK && r->n > 1)
        st = fs_error_agree(r->comm, fs_report_sections_new(r->n, &r->sections));
    if (st == FS_OK)
        st = fs_wisdom_load(r->comm, o->output.wisdom_file, &r->wisdom); /* agreed */
    if (st == FS_OK)
        st = plan_dataset(r);
    fs_timer_start(&r->cur->timers, FS_PHASE_PLAN);
    if (st == FS_OK)
        st = fs_output_plan(&r->out, r->ts); /* agreed */
    fs_timer_stop(&r->cur->timers, FS_PHASE_PLAN);
    return st;
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

/* Result k of input i's turn selected for the output, with what it
 * records, and its dataset created. */
static fs_status begin_result(run *r, int i, int k)
{
    fs_stage_record rec;
    fs_stages_record(r->stages, i, k, &rec);
    fs_output_result res = {r->lay.paths[r->lay.first[i] + k], rec.input, r->cur->strategy.name,
                            r->nranks, r->cfg->transform.inverse,
                            r->cfg->check.on || r->needs.reread || k + 1 < r->lay.count[i],
                            rec.operation, rec.nbox, {0}, rec.second, rec.components, rec.crop,
                            rec.weighed_by};
    memcpy(res.box, rec.box, sizeof res.box);
    fs_output_select(&r->out, &res);
    fs_timer_start(&r->cur->timers, FS_PHASE_WRITE); /* its dataset created */
    fs_status st = fs_error_agree(r->comm, fs_output_create(&r->out, r->cur->t));
    fs_timer_stop(&r->cur->timers, FS_PHASE_WRITE);
    return st;
}

/* Result k of input i's turn: made by the field stage (a round trip),
 * written unless only the stages take it (no result written). *write_failed
 * (out) when a collective write failed. */
static fs_status make_result(run *r, int i, int k, const fs_stage_turn *turn, int *write_failed)
{
    int written = k < r->lay.count[i]; /* the first begun before the read */
    fs_status st = written && k > 0 ? begin_result(r, i, k) : FS_OK;
    fs_stage_turn now = *turn;
    now.data = r->buf.data; /* an inverse may have moved it */
    if (st == FS_OK && r->cur->t->round_trip)
        st = fs_stages_operate(r->stages, &now, k); /* agreed */
    if (st == FS_OK && written) {
        st = phase(r, FS_PHASE_WRITE, write_output);
        *write_failed = st != FS_OK;
    }
    return st;
}

/* In memory: read, FFT and exchange, the stages, each result written,
 * check. */
static fs_status run_in_memory(run *r, int i, int *write_failed)
{
    dataset *ds = r->cur;
    fs_status st = phase(r, FS_PHASE_PLAN, plan_overlap);
    if (st == FS_OK)
        st = phase(r, FS_PHASE_READ, stage_read);
    int reads = fs_overlap_reads(r->overlap), writes = fs_overlap_writes(r->overlap);
    if (st == FS_OK) /* the FFTs and exchanges (the overlapped ones aside) */
        st = fs_error_agree(r->comm, fs_compute_run_part(r->c, r->buf.data, reads, writes,
                                                         &ds->timers, &r->progress));
    fs_stage_turn turn = {.comm = r->comm, .i = i, .t = ds->t, .d = r->d, .c = r->c,
                          .data = r->buf.data, .source = fs_particles_result(r->particles, i),
                          .timers = &ds->timers, .progress = &r->progress};
    if (st == FS_OK) /* the result binned or kept */
        st = fs_stages_forward(r->stages, &turn); /* agreed */
    for (int k = 0; st == FS_OK && k < fs_stages_made(r->stages, i); k++)
        st = make_result(r, i, k, &turn, write_failed);
    turn.data = r->buf.data;
    if (st == FS_OK) /* the result read again: --check, or the stages' */
        st = r->cfg->check.on ? stage_check(r) : fs_stages_written(r->stages, &turn);
    return st;
}

/* Out of core: the passes through the disk (ooc_run.h), which write each
 * result (several: each its own passes) or bin it block by block. */
static fs_status run_out_of_core(run *r, int i)
{
    dataset *ds = r->cur;
    const fs_run_config *o = r->cfg;
    fs_ooc_turn turn = {r->comm, fs_planner_fftw_flags(o->transform.plan), !o->allow_nonfinite,
                        o->check.tolerance, ds->ooc, ds->file, ds->info, r->in_shards, ds->t,
                        &r->out, r->lay.count[i], &r->scratch, r->stages, i,
                        o->check.on ? &ds->check : NULL, &ds->timers, &r->progress, 0};
    fs_status st = fs_ooc_run_dataset(&turn); /* agreed */
    while (st == FS_OK && ++turn.result < r->lay.count[i])
        if ((st = begin_result(r, i, turn.result)) == FS_OK)
            st = fs_ooc_run_dataset(&turn);
    return st;
}

/* One dataset through the man page's phases: plan (kept from the one
 * before when the same), create its dataset, then in memory or out of
 * core. */
static fs_status run_dataset(run *r, int i, int *write_failed)
{
    dataset *ds = r->cur = &r->ds[i];
    fs_signals_set_dataset(r->n > 1 ? i + 1 : 0);
    fs_timer_start(&ds->timers, FS_PHASE_TOTAL);
    fs_status st = i > 0 ? plan_dataset(r) : FS_OK; /* the first in prepare() */
    if (st == FS_OK && r->cfg->verbose && r->rank == 0)
        fs_report_verbose_plan((const fs_run_view[]){view(r, NULL)});
    if (st == FS_OK && r->lay.count[i])
        st = begin_result(r, i, 0);
    if (st == FS_OK)
        st = ds->ooc->plan.on ? run_out_of_core(r, i) : run_in_memory(r, i, write_failed);
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
    char *lines = NULL;
    r->asked.extras = fs_stages_report(r->stages, r->cfg->output.file, &r->asked.nextras, &lines);
    r->asked.extra_lines = lines;
    if (st == FS_OK && r->sections)
        st = fs_report_run_many(r->comm, &r->asked, r->nranks, r->sections, &all,
                                r->out.report_tmp, summary);
    else if (st == FS_OK)
        st = fs_report_run(r->comm, (const fs_run_view[]){view(r, &all)}, r->out.report_tmp,
                           summary);
    free(lines);
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
 * dataset read, FFT and exchange, the stages, write, check; the stages'
 * groups, close, commit (with the report's write), report. */
static fs_status run_phases(run *r)
{
    int opened = 0, write_failed = 0; /* the same on every rank */
    fs_status st = prepare(r);
    if (st == FS_OK)
        opened = (st = output_step(r, fs_output_open)) == FS_OK;
    for (int i = 0; i < r->n && st == FS_OK; i++)
        st = run_dataset(r, i, &write_failed);
    fs_signals_set_dataset(0);
    fs_stage_out so = {fs_output_h5(&r->out), fs_output_input_attrs(&r->out),
                       fs_output_input_coords(&r->out), r->cfg->output.add && r->cfg->output.force,
                       &r->timers};
    if (st == FS_OK) /* agreed */
        st = fs_stages_finish(r->stages, r->comm, &so);
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

fs_status fs_pipeline_run(MPI_Comm comm, const fs_run_config *cfg)
{
    run r = {.comm = comm, .cfg = cfg, .n = cfg->ninputs, .facts = fs_options_facts(cfg)};
    fs_output_init(&r.out);
    if (MPI_Comm_rank(comm, &r.rank) != MPI_SUCCESS || MPI_Comm_size(comm, &r.nranks) != MPI_SUCCESS)
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed"));
    fs_stages_needs(&cfg->stages, &r.facts, 0, &r.needs);
    r.infos = calloc((size_t)r.n, sizeof *r.infos);
    r.ds = calloc((size_t)r.n, sizeof *r.ds);
    r.ts = calloc((size_t)r.n, sizeof *r.ts);
    r.ooc = calloc((size_t)r.n, sizeof *r.ooc);
    int ok = r.n > 0 && r.infos && r.ds && r.ts && r.ooc;
    fs_status st = fs_error_agree(comm, ok ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory"));
    fs_timer_start(&r.timers, FS_PHASE_TOTAL);
    fs_progress_init(&r.progress, r.rank == 0 && !cfg->quiet && cfg->progress);
    if (st == FS_OK)
        st = run_phases(&r);
    /* One cleanup path: every rank closes its handles; a failed run leaves
     * no temporary behind. The compute plan borrows the decomposition. */
    fs_output_finish(&r.out, st);
    fs_scratch_end(&r.scratch, r.rank);
    fs_overlap_free(&r.overlap);
    fs_shard_set_free(&r.shards);
    fs_particles_free(&r.particles);
    fs_compute_free(&r.c);
    fs_decomposition_free(&r.d);
    fs_wisdom_free(&r.wisdom);
    fs_workbuf_release(&r.buf);
    fs_report_sections_free(&r.sections);
    fs_stages_free(&r.stages);
    fs_stages_layout_free(&r.lay);
    free(r.ts);
    free(r.ds);
    fs_ooc_run_free(r.ooc, r.n);
    free(r.infos);
    return st;
}
