/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ooc_run: see ooc_run.h. */
#include "config.h"

#include "ooc_run.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/testhooks.h"
#include "io/diskrate.h"

fs_status fs_ooc_run_decide(const fs_ooc_args *a, fs_ooc_dataset *ds, int i,
                            fs_planner_notes *notes)
{
    fs_ooc_args mine = *a;
    fs_ooc_dataset *d = &ds[i];
    int follows = a->kept && i > 0 && ds[0].plan.on && !a->forced;
    mine.input = i;
    mine.forced |= follows;
    mine.per_rank = a->kept && i > 0 && ds[0].plan.on ? ds[0].plan.per_rank : 0;
    fs_status st = fs_ooc_plan_make(&mine, &d->plan);
    if (st == FS_OK && follows)
        snprintf(d->plan.reason, sizeof d->plan.reason, "out of core: as the first INPUT, "
                 "whose forward result is kept on the disk beside this one's");
    const fs_ooc_plan *p0 = &ds[0].plan, *p = &d->plan;
    if (st == FS_OK && a->kept && i > 0 && p->on && !p0->on)
        st = fs_error_set(FS_ERR_USAGE, "%s, and the first INPUT's fits in memory: give "
                          "--out-of-core to take both out of core", p->reason);
    /* the kept files are read in the first's blocks (alike transforms: alike blocks) */
    if (st == FS_OK && a->kept && i > 0 && p->on &&
        (p->blocks != p0->blocks || p->per_rank != p0->per_rank ||
         p->scratch_bytes != p0->scratch_bytes || p->buffer_bytes != p0->buffer_bytes))
        st = fs_error_set(FS_ERR_RUNTIME, "out of core: the INPUTs' blocks differ");
    if (st == FS_OK && notes->n < FS_PLANNER_MAX_NOTES) {
        notes->warning[notes->n] = d->plan.why == FS_OOC_CANNOT;
        snprintf(notes->text[notes->n++], sizeof notes->text[0], "%.300s", d->plan.reason);
    }
    return st;
}

void fs_ooc_run_free(fs_ooc_dataset *ds, int n)
{
    for (int i = 0; ds && i < n; i++)
        fs_exec_buffers_free(&ds[i].buffers);
    free(ds);
}

int fs_ooc_run_strategy(const fs_ooc_dataset *d, fs_strategy_choice *s)
{
    if (!d->plan.on)
        return 0;
    snprintf(s->reason, sizeof s->reason, "out of core: no exchange");
    s->name = "none";
    return 1;
}

fs_status fs_ooc_run_scratch(MPI_Comm comm, const char *output_file, const fs_ooc_options *o,
                             fs_ooc_dataset *ds, int n, fs_scratch *scratch, fs_output *out)
{
    int files = -1;
    double bytes = 0, rates[2] = {o->read_rate, o->write_rate};
    for (int i = 0; i < n; i++)
        if (ds[i].plan.on) {
            const fs_ooc_plan *p = &ds[i].plan;
            double b = (double)fs_ooc_files_held(p) * (double)p->scratch_bytes;
            files = fs_ooc_files(p) > files ? fs_ooc_files(p) : files;
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
        .check = turn->check, .buffers = &d->buffers, .result = turn->result,
        .results = turn->writes,
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

static double mib(double bytes)
{
    return bytes / 1048576.0;
}

/* Out of core: the decision, the blocks, each pass, the memory per rank,
 * the scratch and the predicted time (at --disk-rate's rates: a dry run
 * probes nothing). In memory, only a run that cannot go out of core. */
void fs_ooc_run_print(FILE *out, const fs_ooc_plan *o, const char *dir)
{
    if (o->why == FS_OOC_CANNOT || o->why == FS_OOC_NEITHER)
        fprintf(out, "%s\n", o->reason);
    if (!o->on)
        return;
    fprintf(out, "%s\n", o->reason);
    fprintf(out, "out of core: %d pass%s over %d blocks (%s, %d per rank), up to %.1f MiB each\n",
            o->npasses, o->npasses == 1 ? "" : "es", o->blocks, o->vt.pencil ? "pencils" : "slabs",
            o->per_rank, mib((double)o->buffer_bytes));
    for (int i = 0; i < o->npasses; i++) {
        char text[128], predicted[64] = "", runs[48] = "";
        fs_ooc_pass_text(o, i, text, sizeof text);
        if (o->pass[i].predicted_s > 0)
            snprintf(predicted, sizeof predicted, ", about %.1f s", o->pass[i].predicted_s);
        if (i >= o->first_result)
            snprintf(runs, sizeof runs, " (%d run%s, one per result)", o->pass[i].runs,
                     o->pass[i].runs == 1 ? "" : "s");
        fprintf(out, "%s%s: %s, read %.1f MB, write %.1f MB%s\n", fs_ooc_pass_name(i), runs, text,
                o->pass[i].read_bytes / 1e6, o->pass[i].written_bytes / 1e6, predicted);
    }
    /* --vector: the other INPUTs' turns (a kept file each), their forward passes alone */
    int others_n = o->keeps == FS_OOC_KEEP_EACH ? o->nkept - 1 : 0;
    double others = 0;
    for (int i = 0; i < o->first_result; i++)
        others += others_n * o->pass[i].predicted_s;
    if (others_n > 1)
        fprintf(out, "the other %d INPUTs: passes 1 to %d each, their forward results kept\n",
                others_n, o->first_result);
    else if (others_n == 1)
        fprintf(out, "the other INPUT: passes 1 to %d, its forward result kept\n",
                o->first_result);
    fprintf(out, "memory per rank (out of core): %d blocks %.1f MiB + plans and I/O ~%.1f MiB + "
            "libraries ~%.0f MiB = about %.1f MiB\n", o->nbuffers, mib((double)o->buffers_bytes),
            mib((double)o->plans_io_bytes), mib((double)o->library_bytes),
            mib((double)o->total_bytes));
    int files = fs_ooc_files_held(o);
    char kept[96] = "", some[16] = "one";
    if (o->nkept > 1)
        snprintf(some, sizeof some, "%d", o->nkept);
    if (o->nkept)
        snprintf(kept, sizeof kept, ", %s of them kept: %s", some,
                 o->keeps == FS_OOC_KEEP_EACH ? "each INPUT's forward result"
                                              : "the first INPUT's forward result");
    fprintf(out, "scratch: %d file%s of %" PRId64 " bytes (%.1f MiB) %s%s%s\n", files,
            files == 1 ? "" : "s", o->scratch_bytes, mib((double)o->scratch_bytes),
            dir ? "in " : "beside OUTPUT", dir ? dir : "", kept);
    if (o->predicted_s > 0)
        fprintf(out, "predicted time: about %.1f s at %.0f MB/s read, %.0f MB/s write "
                "(--disk-rate)\n", o->predicted_s + others, o->read_rate / 1e6,
                o->write_rate / 1e6);
    else
        fprintf(out, "predicted time: give --disk-rate (a run probes the disk)\n");
}
