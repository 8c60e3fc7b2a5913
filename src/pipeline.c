/* pipeline: see pipeline.h. Each phase below is one section of the man
 * page's account of a run; the policy of each lives in its own module:
 * planner (what is computed, which strategy), decomp (who holds what),
 * compute (the FFTs and exchanges), output (what is written and when it
 * becomes visible), check (--check) and report_run (what the run says). */
#include "config.h"

#include "pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic.h"
#include "check.h"
#include "compute.h"
#include "decomp.h"
#include "h5io.h"
#include "output.h"
#include "planner.h"
#include "progress.h"
#include "report.h"
#include "report_run.h"
#include "shards.h"
#include "signals.h"
#include "wisdom.h"

typedef struct run {
    MPI_Comm comm;
    int rank, nranks;
    const fs_options *opts;
    fs_input_info info;
    fs_shard_set shards;          /* --shards: the files (n 0 for one file) */
    fs_planned planned;           /* the transform, per capability */
    const fs_transform *t;        /* the one the chosen strategy runs */
    fs_decomposition *d;
    fs_exchange_params params;
    fs_strategy_choice strategy;
    fs_compute *c;
    fs_wisdom *wisdom;
    fs_workbuf buf;               /* the local array */
    fs_output out;
    fs_timers timers;
    fs_progress progress;
    fs_check_result check;
} run;

static fs_run_view view(const run *r)
{
    return (fs_run_view){
        .opts = r->opts,
        .info = &r->info,
        .t = r->t,
        .nranks = r->nranks,
        .strategy = r->strategy.name,
        .strategy_note = r->strategy.note,
        .params = &r->params,
        .c = r->c,
        .tmp_path = r->out.tmp_path,
        .data_elems = r->buf.elems,
        .first = fs_decomposition_first(r->d),
        .last = fs_decomposition_last(r->d),
        .timers = &r->timers,
        .check = &r->check,
    };
}

static const fs_shard_set *input_shards(const run *r)
{
    return r->info.nshards ? &r->shards : NULL;
}

/* Rank 0 probes the input; every rank plans the transform from what it
 * found, and rank 0 speaks for all when the options do not fit it. */
static fs_status stage_probe(run *r)
{
    const fs_options *o = r->opts;
    fs_status st = FS_OK;
    if (r->rank == 0)
        st = fs_input_probe(o->shards, o->input_file, o->input_dataset, &r->info, &r->shards);
    st = fs_error_agree(r->comm, st);
    if (st != FS_OK)
        return st;
    if (MPI_Bcast(&r->info, (int)sizeof r->info, MPI_BYTE, 0, r->comm) != MPI_SUCCESS)
        return fs_error_agree(r->comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Bcast failed"));
    if (o->shards && (st = fs_shards_bcast(r->comm, &r->shards)) != FS_OK)
        return st;
    fs_transform_request rq;
    fs_planner_notes notes;
    st = fs_planner_request_noted(o, &r->info, r->nranks, &rq, &notes);
    if (st == FS_OK)
        st = fs_planner_transforms(&rq, &r->planned);
    /* Warnings are for a run that goes on: a refusal says it all. */
    if (st == FS_OK && r->rank == 0)
        fs_planner_print_notes(&notes, o->quiet, o->verbose);
    r->t = &r->planned.plain;
    return fs_error_agree(r->comm, r->rank == 0 ? st : FS_OK);
}

/* Who holds what, the strategy and the compute plan. */
static fs_status stage_plan(run *r)
{
    const fs_options *o = r->opts;
    r->params = (fs_exchange_params){
        .seed = o->seed,
        .packet_bytes = o->packet_bytes,
        .queues = o->queues,
    };
    fs_status st = fs_wisdom_load(r->comm, o->wisdom_file, &r->wisdom); /* agreed */
    if (st == FS_OK)
        st = fs_error_agree(r->comm,
                            fs_decomposition_new(r->comm, &r->planned.plain, o->check, &r->d));
    if (st != FS_OK)
        return st;
    unsigned flags = fs_planner_fftw_flags(o);
    fs_trial_args trial = {r->comm, &r->planned, r->d, &r->params, flags, o->inverse, o->verbose,
                           r->wisdom};
    st = fs_planner_choose(o->transpose, &trial, &r->buf, &r->strategy); /* agreed */
    r->t = fs_planned_for(&r->planned, r->strategy.ops);
    if (st != FS_OK)
        return st;
    fs_compute_args ca = {r->comm, r->t, r->d, r->strategy.ops, &r->params, flags, o->check};
    return fs_error_agree(r->comm, fs_compute_new(&ca, &r->buf, &r->c));
}

static fs_status stage_read(run *r)
{
    fs_io_map m = fs_transform_read_map(r->t, fs_decomposition_first(r->d));
    /* Slots the read leaves alone (the imaginary parts of real input, the
     * padding, the missing half of a c2r) start as zeros. */
    memset(r->buf.data, 0, (size_t)r->buf.elems * fs_complex_bytes(r->t->prec));
    /* Progress in the bytes read into memory, as h5io counts them. */
    fs_progress_begin(&r->progress, "read",
                      (double)fs_box_elems(&m.file_box) * (double)fs_dtype_bytes(m.mem_type), "B");
    fs_status st = fs_h5_read(r->comm, r->opts->input_file, &r->info, input_shards(r), &m,
                              r->buf.data, fs_progress_callback, &r->progress);
    fs_progress_end(&r->progress);
    return st;
}

static fs_status stage_check(run *r)
{
    fs_check_args a = {
        .comm = r->comm,
        .t = r->t,
        .c = r->c,
        .first = fs_decomposition_first(r->d),
        .last = fs_decomposition_last(r->d),
        .data = r->buf.data,
        .input_file = r->opts->input_file,
        .info = &r->info,
        .shards = input_shards(r),
        .tolerance = r->opts->check_tolerance,
    };
    return fs_check_run(&a, &r->check);
}

/* Everything before any data moves: the input, the destinations, the plan
 * and the output's storage and space. */
static fs_status prepare(run *r)
{
    fs_status st = stage_probe(r);
    if (st == FS_OK)
        st = fs_output_begin(r->comm, r->opts, &r->info, input_shards(r), &r->out);
    if (st != FS_OK)
        return st;
    fs_timer_start(&r->timers, FS_PHASE_PLAN);
    st = stage_plan(r);
    r->out.attrs = (fs_output_attrs){r->opts->input_file, r->info.dataset, r->strategy.name,
                                     r->nranks};
    if (st == FS_OK)
        st = fs_output_plan(&r->out, r->t);
    fs_timer_stop(&r->timers, FS_PHASE_PLAN);
    return st;
}

/* A phase of the run, timed, its status agreed by every rank. */
static fs_status phase(run *r, fs_phase p, fs_status (*fn)(run *))
{
    fs_timer_start(&r->timers, p);
    fs_status st = fs_error_agree(r->comm, fn(r));
    fs_timer_stop(&r->timers, p);
    return st;
}

static fs_status create_output(run *r)
{
    return fs_output_create(&r->out, r->t);
}

static fs_status compute(run *r)
{
    return fs_compute_run(r->c, r->buf.data, &r->timers, &r->progress);
}

static fs_status write_output(run *r)
{
    return fs_output_write(&r->out, r->t, fs_decomposition_last(r->d), r->buf.data, &r->progress);
}

static fs_status close_output(run *r)
{
    return fs_output_close(&r->out);
}

/* The wisdom and the report into their temporaries, then the result, the
 * report and the wisdom into place in one commit: a report or wisdom that
 * cannot be written fails the run with OUTPUT untouched. The figures are
 * taken before the commit, so the renames are not counted (commit: the
 * wisdom's merge and write; total: up to the report's write). summary
 * (out, rank 0): the summary, printed once the result is in place. */
static fs_status commit(run *r, char **summary)
{
    fs_timer_start(&r->timers, FS_PHASE_COMMIT);
    fs_status st = fs_wisdom_save(r->comm, r->wisdom, &r->out.wisdom_tmp); /* agreed */
    fs_timer_stop(&r->timers, FS_PHASE_COMMIT);
    fs_timer_stop(&r->timers, FS_PHASE_TOTAL);
    if (st == FS_OK) {
        fs_run_view v = view(r);
        st = fs_report_run(r->comm, &v, r->out.report_tmp, summary);
    }
    if (st == FS_OK)
        st = fs_output_commit(&r->out, r->t);
    return st;
}

/* The phases of the man page in order: probe, plan, create, read, FFT and
 * exchange, write, check, close, commit (with the report's write), report. */
static fs_status run_phases(run *r)
{
    int created = 0, write_failed = 0; /* the same on every rank */
    fs_status st = prepare(r);
    if (st == FS_OK && r->opts->verbose && r->rank == 0) {
        fs_run_view v = view(r);
        fs_report_verbose_plan(&v);
    }
    if (st == FS_OK) {
        st = phase(r, FS_PHASE_WRITE, create_output);
        created = st == FS_OK;
    }
    if (st == FS_OK)
        st = phase(r, FS_PHASE_READ, stage_read);
    if (st == FS_OK)
        st = fs_error_agree(r->comm, compute(r));
    if (st == FS_OK) {
        st = phase(r, FS_PHASE_WRITE, write_output);
        write_failed = st != FS_OK;
    }
    if (st == FS_OK && r->opts->check) {
        fs_timer_start(&r->timers, FS_PHASE_CHECK);
        st = stage_check(r); /* agreed */
        fs_timer_stop(&r->timers, FS_PHASE_CHECK);
    }
    if (created && !write_failed) {
        fs_status closed = phase(r, FS_PHASE_WRITE, close_output);
        write_failed = closed != FS_OK;
        st = st != FS_OK ? st : closed;
    }
    if (write_failed)
        fs_output_abandon(&r->out, st);
    char *summary = NULL;
    if (st == FS_OK)
        st = commit(r, &summary);
    if (st == FS_OK) {
        /* The result is in place: a signal from here on says so. */
        fs_signals_set_phase("report");
        if (summary) {
            fputs(summary, stderr);
            fflush(stderr);
        }
    }
    free(summary);
    return st;
}

fs_status fs_pipeline_run(MPI_Comm comm, const fs_options *opts)
{
    run r;
    memset(&r, 0, sizeof r);
    r.comm = comm;
    r.opts = opts;
    r.out.so.comm = MPI_COMM_NULL;
    if (MPI_Comm_rank(comm, &r.rank) != MPI_SUCCESS || MPI_Comm_size(comm, &r.nranks) != MPI_SUCCESS)
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed"));
    fs_timer_start(&r.timers, FS_PHASE_TOTAL);
    fs_progress_init(&r.progress, r.rank == 0 && !opts->quiet && opts->progress);

    fs_status st = run_phases(&r);

    /* One cleanup path: every rank closes its handles; a failed run leaves
     * no temporary behind. The compute plan borrows the decomposition. */
    fs_output_finish(&r.out, st);
    fs_shard_set_free(&r.shards);
    fs_compute_free(&r.c);
    fs_decomposition_free(&r.d);
    fs_wisdom_free(&r.wisdom);
    fs_workbuf_release(&r.buf);
    return st;
}
