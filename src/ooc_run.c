/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ooc_run: see ooc_run.h. */
#include "config.h"

#include "ooc_run.h"

#include <stdio.h>

#include "core/testhooks.h"
#include "io/diskrate.h"

fs_status fs_ooc_run_decide(const fs_ooc_args *a, fs_ooc_dataset *d, fs_planner_notes *notes)
{
    fs_status st = fs_ooc_plan_make(a, &d->plan);
    if (st == FS_OK && notes->n < FS_PLANNER_MAX_NOTES) {
        notes->warning[notes->n] = d->plan.why == FS_OOC_CANNOT;
        snprintf(notes->text[notes->n++], sizeof notes->text[0], "%.300s", d->plan.reason);
    }
    return st;
}

fs_status fs_ooc_run_scratch(MPI_Comm comm, const char *output_file, const fs_ooc_options *o,
                             fs_ooc_dataset *ds, int n, fs_scratch *scratch, fs_output *out)
{
    int files = -1;
    double bytes = 0, rates[2] = {o->read_rate, o->write_rate};
    for (int i = 0; i < n; i++)
        if (ds[i].plan.on) {
            const fs_ooc_plan *p = &ds[i].plan;
            double b = (double)p->nscratch * (double)p->scratch_bytes;
            files = p->nscratch > files ? p->nscratch : files;
            bytes = b > bytes ? b : bytes;
        }
    if (files < 0)
        return FS_OK;
    fs_status st = fs_scratch_begin(comm, output_file, o->scratch_dir, files, scratch);
    int probe = !rates[0];
    if (st == FS_OK && probe) /* agreed */
        st = fs_diskrate_probe(comm, scratch->final, (int64_t)(bytes / 16), &rates[0], &rates[1]);
    for (int i = 0; i < n; i++)
        fs_ooc_plan_rates(&ds[i].plan, rates[0], rates[1], probe);
    out->scratch_path = files ? scratch->path[0] : NULL;
    out->scratch_bytes = bytes;
    return st;
}

fs_status fs_ooc_run_dataset(const fs_ooc_turn *turn)
{
    fs_ooc_dataset *d = turn->d;
    int rank = 0;
    MPI_Comm_rank(turn->comm, &rank);
    d->boxes[0] = fs_ooc_rank_box(&d->plan, rank, 0);
    d->boxes[1] = fs_ooc_rank_box(&d->plan, rank, turn->t->round_trip ? 0 : d->plan.vt.nstages - 1);
    fs_exec_args a = {.comm = turn->comm, .plan = &d->plan, .input_file = turn->input_file,
        .info = turn->info, .shards = turn->shards,
        .h5 = turn->writes ? fs_output_h5(turn->out) : NULL, .scratch = turn->scratch,
        .stages = turn->stages, .input = turn->input,
        .fftw_flags = turn->fftw_flags, .refuse_nonfinite = turn->refuse_nonfinite,
        .overlap = fs_testhooks_io_thread() != 0, .tolerance = turn->tolerance,
        .check = turn->check,
        .timers = turn->timers, .progress = turn->progress};
    fs_status st = fs_exec_run(&a, &d->passes); /* agreed */
    if (st != FS_OK || !turn->writes)
        return st;
    fs_timer_start(turn->timers, FS_PHASE_WRITE);
    st = fs_error_agree(turn->comm, fs_output_write_attributes(turn->out, turn->t));
    fs_timer_stop(turn->timers, FS_PHASE_WRITE);
    return st;
}

void fs_ooc_run_view(const fs_ooc_dataset *d, const fs_scratch *scratch, fs_run_view *v)
{
    v->c = NULL;
    v->data_elems = 0;
    v->first = &d->boxes[0];
    v->last = &d->boxes[1];
    v->ooc = &d->plan;
    v->passes = &d->passes;
    v->scratch_dir = scratch->dir;
}
