/* SPDX-License-Identifier: GPL-3.0-or-later */
/* report: see report.h. */
#include "config.h"

#include "report/report.h"
#include "core/collective.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/prefix.h"
#include "core/signals.h"

int fs_report_to_stdout(const char *path)
{
    return path && strcmp(path, FS_REPORT_STDOUT) == 0;
}

/* ------------------------------------------------------------------ figures */

/* One pass over all ranks: the bytes every rank moved, the slowest rank's
 * seconds, and the seconds the bytes take at the disk's rate. */
typedef struct pass_total {
    double read_bytes, written_bytes, read_ranges, written_ranges, seconds, disk_s;
} pass_total;

/* What rank 0 derives from all the records. */
typedef struct totals {
    double min[FS_NPHASES], mean[FS_NPHASES], max[FS_NPHASES];
    int64_t bytes_sent, bytes_received, messages, wire_bytes, peak_max, exchanges;
    int64_t fftw_plans, fftw_plans_from_wisdom;
    double pack_max, comm_max, unpack_max, hooks, hooks_overlapped;
    fs_io_overlap io;   /* the most seconds of I/O, the fewest hidden, of any rank */
    double gflops, gflops_total, bandwidth_gbs;
    pass_total passes[FS_OOC_MAX_PASSES]; /* out of core */
} totals;

static double max2(double a, double b)
{
    return a > b ? a : b;
}

/* The I/O overlap of the rank that hid least of it. */
static void io_totals(const fs_rank_record *all, int P, fs_io_overlap *io)
{
    *io = all[0].io;
    for (int p = 1; p < P; p++) {
        const fs_io_overlap *r = &all[p].io;
        io->read_s = max2(io->read_s, r->read_s);
        io->write_s = max2(io->write_s, r->write_s);
        io->read_hidden_s = r->read_hidden_s < io->read_hidden_s ? r->read_hidden_s : io->read_hidden_s;
        io->write_hidden_s =
            r->write_hidden_s < io->write_hidden_s ? r->write_hidden_s : io->write_hidden_s;
    }
}

static void pass_totals(const fs_report_info *info, const fs_rank_record *all, int P,
                        pass_total *pt);

static void compute_totals(const fs_report_info *info, const fs_rank_record *all, int P, totals *t)
{
    memset(t, 0, sizeof *t);
    for (int ph = 0; ph < FS_NPHASES; ph++) {
        t->min[ph] = t->max[ph] = all[0].t_s[ph];
        double sum = 0;
        for (int p = 0; p < P; p++) {
            double v = all[p].t_s[ph];
            sum += v;
            t->min[ph] = v < t->min[ph] ? v : t->min[ph];
            t->max[ph] = v > t->max[ph] ? v : t->max[ph];
        }
        t->mean[ph] = sum / P;
    }
    for (int p = 0; p < P; p++) {
        const fs_rank_record *r = &all[p];
        t->bytes_sent += r->bytes_sent;
        t->bytes_received += r->bytes_received;
        t->messages += r->messages_sent;
        t->wire_bytes += r->wire_bytes_sent;
        t->exchanges = r->exchanges > t->exchanges ? r->exchanges : t->exchanges;
        t->fftw_plans += r->fftw_plans;
        t->fftw_plans_from_wisdom += r->fftw_plans_from_wisdom;
        t->peak_max = r->peak_memory_bytes > t->peak_max ? r->peak_memory_bytes : t->peak_max;
        t->pack_max = r->t_pack_s > t->pack_max ? r->t_pack_s : t->pack_max;
        t->comm_max = r->t_comm_s > t->comm_max ? r->t_comm_s : t->comm_max;
        t->unpack_max = r->t_unpack_s > t->unpack_max ? r->t_unpack_s : t->unpack_max;
        t->hooks += r->t_hooks_s;
        t->hooks_overlapped += r->t_hooks_overlapped_s;
    }
    io_totals(all, P, &t->io);
    if (info->ooc)
        pass_totals(info, all, P, t->passes);
    double t_transform = t->max[FS_PHASE_FFT] + t->max[FS_PHASE_EXCHANGE];
    t->gflops = t_transform > 0 ? info->flops / t_transform / 1e9 : 0;
    t->gflops_total = t->max[FS_PHASE_TOTAL] > 0 ? info->flops / t->max[FS_PHASE_TOTAL] / 1e9 : 0;
    t->bandwidth_gbs = t->max[FS_PHASE_EXCHANGE] > 0
                           ? (double)t->bytes_sent / t->max[FS_PHASE_EXCHANGE] / 1e9
                           : 0;
}

/* ------------------------------------------------------------ out of core */

static void pass_totals(const fs_report_info *info, const fs_rank_record *all, int P,
                        pass_total *pt)
{
    const fs_ooc_plan *p = info->ooc;
    for (int i = 0; i < p->npasses; i++) {
        pass_total *x = &pt[i];
        memset(x, 0, sizeof *x);
        for (int r = 0; r < P; r++) {
            const fs_exec_pass_stats *s = &all[r].passes.pass[i];
            x->read_bytes += s->read_bytes;
            x->written_bytes += s->written_bytes;
            x->read_ranges += s->read_ranges;
            x->written_ranges += s->written_ranges;
            x->seconds = max2(x->seconds, s->seconds);
        }
        if (p->read_rate > 0 && p->write_rate > 0)
            x->disk_s = x->read_bytes / p->read_rate + x->written_bytes / p->write_rate;
    }
}

/* The summary's lines of the passes. */
static void print_passes(FILE *out, const fs_report_info *info, const totals *t)
{
    const fs_ooc_plan *p = info->ooc;
    const pass_total *pt = t->passes;
    fprintf(out, "  %s\n", p->reason);
    fprintf(out, "  out of core: %d pass%s over %d blocks (%d per rank, up to %.1f MiB each), "
            "scratch %d x %.1f MiB in %s\n", p->npasses, p->npasses == 1 ? "" : "es", p->blocks,
            p->per_rank, (double)p->buffer_bytes / 1048576.0, fs_ooc_files_held(p),
            (double)p->scratch_bytes / 1048576.0, info->scratch_dir ? info->scratch_dir : "-");
    for (int i = 0; i < p->npasses; i++) {
        char text[128];
        fs_ooc_pass_text(p, i, text, sizeof text);
        double moved = pt[i].read_bytes + pt[i].written_bytes;
        char runs[32] = "";
        if (p->pass[i].runs > 1)
            snprintf(runs, sizeof runs, " (%d runs)", p->pass[i].runs);
        fprintf(out, "  %s%s, %s: read %.1f MB, wrote %.1f MB in %.3f s, %.3f GB/s",
                fs_ooc_pass_name(i), runs, text, pt[i].read_bytes / 1e6,
                pt[i].written_bytes / 1e6, pt[i].seconds,
                pt[i].seconds > 0 ? moved / pt[i].seconds / 1e9 : 0.0);
        if (pt[i].disk_s > 0)
            fprintf(out, "; %.2f x the disk's time (%.3f s)", pt[i].seconds / pt[i].disk_s,
                    pt[i].disk_s);
        fputc('\n', out);
    }
    if (p->read_rate > 0)
        fprintf(out, "  disk: read %.1f MB/s, write %.1f MB/s (%s)\n", p->read_rate / 1e6,
                p->write_rate / 1e6, p->rates_probed ? "probed" : "--disk-rate");
}

/* The report's member of the passes. */
static void json_passes(fs_json *j, const fs_report_info *info, const totals *t)
{
    const fs_ooc_plan *p = info->ooc;
    const pass_total *pt = t->passes;
    fs_json_open(j, "out_of_core", '{');
    fs_json_text(j, "reason", p->reason);
    fs_json_int(j, "blocks", p->blocks);
    fs_json_int(j, "blocks_per_rank", p->per_rank);
    fs_json_int(j, "block_bytes", p->buffer_bytes);
    fs_json_int(j, "scratch_files", fs_ooc_files_held(p));
    fs_json_int(j, "scratch_bytes", p->scratch_bytes);
    fs_json_str(j, "scratch_dir", info->scratch_dir);
    fs_json_open(j, "memory_per_rank", '{');
    fs_json_int(j, "buffers_bytes", p->buffers_bytes);
    fs_json_int(j, "plans_and_io_bytes", p->plans_io_bytes);
    fs_json_int(j, "libraries_bytes", p->library_bytes);
    fs_json_int(j, "total_bytes", p->total_bytes);
    fs_json_close(j, '}');
    fs_json_open(j, "disk", '{');
    fs_json_num(j, "read_bytes_per_second", p->read_rate > 0 ? p->read_rate : NAN);
    fs_json_num(j, "write_bytes_per_second", p->write_rate > 0 ? p->write_rate : NAN);
    fs_json_str(j, "source", p->read_rate > 0 ? p->rates_probed ? "probe" : "--disk-rate" : NULL);
    fs_json_close(j, '}');
    fs_json_num(j, "predicted_seconds", p->predicted_s > 0 ? p->predicted_s : NAN);
    fs_json_open(j, "passes", '[');
    for (int i = 0; i < p->npasses; i++) {
        char text[128];
        fs_ooc_pass_text(p, i, text, sizeof text);
        double moved = pt[i].read_bytes + pt[i].written_bytes;
        fs_json_open(j, NULL, '{');
        fs_json_text(j, "name", fs_ooc_pass_name(i));
        fs_json_int(j, "stage", p->pass[i].stage);
        fs_json_text(j, "moves", text);
        fs_json_int(j, "runs", p->pass[i].runs);
        fs_json_num(j, "read_bytes", pt[i].read_bytes);
        fs_json_num(j, "written_bytes", pt[i].written_bytes);
        fs_json_num(j, "read_ranges", pt[i].read_ranges);
        fs_json_num(j, "written_ranges", pt[i].written_ranges);
        fs_json_num(j, "seconds", pt[i].seconds);
        fs_json_num(j, "gbs", pt[i].seconds > 0 ? moved / pt[i].seconds / 1e9 : 0);
        fs_json_num(j, "disk_seconds", pt[i].disk_s > 0 ? pt[i].disk_s : NAN);
        fs_json_num(j, "over_disk", pt[i].disk_s > 0 ? pt[i].seconds / pt[i].disk_s : NAN);
        fs_json_num(j, "predicted_seconds", p->pass[i].predicted_s > 0 ? p->pass[i].predicted_s : NAN);
        fs_json_close(j, '}');
    }
    fs_json_close(j, ']');
    fs_json_close(j, '}');
}

/* ------------------------------------------------------------------ summary */

static void print_summary(FILE *out, const fs_report_info *info, const totals *t, int P)
{
    for (int i = 0; i < info->ndatasets; i++)
        if (info->dataset_lines[i])
            fputs(info->dataset_lines[i], out);
    fprintf(out, "fftshard: %s\n", info->title);
    fprintf(out, "  %-9s %10s %10s %10s %7s\n", "phase", "min s", "mean s", "max s", "max/mean");
    for (int p = 0; p < FS_NPHASES; p++)
        if (p != FS_PHASE_OPERATE || info->operation)
            fprintf(out, "  %-9s %10.4f %10.4f %10.4f %7.2f\n", fs_phase_name(p), t->min[p],
                    t->mean[p], t->max[p], t->mean[p] > 0 ? t->max[p] / t->mean[p] : 1.0);
    fprintf(out, "  transform %.2f GFlop/s (5 N log2 N / max fft + exchange time)\n", t->gflops);
    if (t->max[FS_PHASE_EXCHANGE] > 0 && t->bytes_sent > 0)
        fprintf(out, "  exchange %.3f GB/s (bytes sent by all ranks / max exchange time)\n",
                t->bandwidth_gbs);
    if (t->hooks > 0)
        fprintf(out,
                "  overlap: %.4f s of %.4f s block FFT work ran with messages in flight (%.0f%%, "
                "all ranks)\n",
                t->hooks_overlapped, t->hooks, 100.0 * t->hooks_overlapped / t->hooks);
    if (t->io.read_s > 0 || t->io.write_s > 0)
        fprintf(out,
                "  background I/O: read %.4f s, %.4f s of it hidden by FFTs; write %.4f s, %.4f s "
                "hidden (max, least hidden of the ranks)\n",
                t->io.read_s, t->io.read_hidden_s, t->io.write_s, t->io.write_hidden_s);
    if (info->check)
        fprintf(out, "  check: round trip error %.3g, Parseval error %.3g, tolerance %.3g: %s\n",
                info->check->roundtrip_error, info->check->parseval_error, info->check->tolerance,
                info->check->passed ? "passed" : "FAILED");
    if (info->operation)
        fprintf(out, "  operation: %s in Fourier space%s; %lld exchange%s in all\n",
                info->operation, info->operation_in_pass > 0 ? ", inside the last FFT pass" : "",
                (long long)t->exchanges, t->exchanges == 1 ? "" : "s");
    if (info->ooc)
        print_passes(out, info, t);
    if (info->extra_lines)
        fputs(info->extra_lines, out);
    fprintf(out, "  peak memory %.1f MiB per rank (max), %.2f x the rank's share of the array\n",
            (double)t->peak_max / 1048576.0,
            info->array_bytes > 0 ? (double)t->peak_max * P / (double)info->array_bytes : 0.0);
    fflush(out);
}

/* ------------------------------------------------------------------ JSON */

/* What ran: the format, the program, the command and the ranks. */
static void json_header(fs_json *j, const fs_report_info *info, int P)
{
    fs_json_text(j, "schema", FS_REPORT_SCHEMA);
    fs_json_text(j, "version", PACKAGE_VERSION);
    fs_json_text(j, "command_line", info->command_line);
    fs_json_int(j, "ranks", P);
}

/* What was computed: the array, the split and the strategy. */
static void json_dataset(fs_json *j, const fs_report_info *info)
{
    fs_json_text(j, "input", info->input);
    fs_json_text(j, "output", info->output);
    fs_json_ints_strided(j, "shape", info->ndim, info->shape, 1);
    fs_json_text(j, "dtype", info->dtype);
    fs_json_text(j, "precision", info->precision);
    fs_json_text(j, "transform", info->transform);
    fs_json_text(j, "direction", info->direction);
    fs_json_text(j, "norm", info->norm);
    fs_json_str(j, "operation", info->operation);
    if (info->operation && info->operation_in_pass >= 0)
        fs_json_bool(j, "operation_in_pass", info->operation_in_pass);
    int64_t axes[FS_LAYOUT_MAX_DIMS];
    for (int i = 0; i < info->naxes; i++)
        axes[i] = info->axes[i];
    fs_json_ints_strided(j, "axes", info->naxes, axes, 1);
    fs_json_open(j, "axis_kinds", '[');
    for (int i = 0; i < info->naxes; i++)
        fs_json_str(j, NULL, fs_r2r_name(info->r2r[info->axes[i]]));
    fs_json_close(j, ']');

    fs_json_open(j, "decomposition", '{');
    fs_json_text(j, "type", info->decomposition);
    fs_json_int(j, "split_axis_before", info->split_from);
    fs_json_int(j, "split_axis_after", info->split_to);
    int64_t grid[2] = {info->grid[0], info->grid[1]};
    fs_json_ints_strided(j, "grid", 2, grid, 1);
    fs_json_open(j, "stages", '[');
    for (int s = 0; s < info->nstages; s++) {
        int64_t sp[2] = {info->split[s][0], info->split[s][1]};
        fs_json_ints_strided(j, NULL, 2, sp, 1);
    }
    fs_json_close(j, ']');
    fs_json_close(j, '}');

    fs_json_open(j, "strategy", '{');
    fs_json_text(j, "name", info->strategy);
    fs_json_text(j, "requested", info->strategy_requested);
    fs_json_text(j, "reason", info->strategy_reason);
    fs_json_int(j, "seed", (int64_t)info->seed);
    fs_json_int(j, "packet_bytes", (int64_t)info->packet_bytes);
    fs_json_int(j, "queues", info->queues);
    fs_json_text(j, "waits", info->crowded ? "yield" : "spin");
    fs_json_close(j, '}');
}

/* Where the time went, the exchange's figures, the check and the memory. */
/* The I/O a helper thread did during the FFTs (fs_io_overlap). */
static void json_io_overlap(fs_json *j, const fs_io_overlap *io)
{
    fs_json_open(j, "io_overlap", '{');
    fs_json_num(j, "read_seconds", io->read_s);
    fs_json_num(j, "read_hidden_seconds", io->read_hidden_s);
    fs_json_num(j, "write_seconds", io->write_s);
    fs_json_num(j, "write_hidden_seconds", io->write_hidden_s);
    fs_json_close(j, '}');
}

static void json_figures(fs_json *j, const fs_report_info *info, const totals *t, int P)
{
    fs_json_open(j, "phases", '{');
    for (int p = 0; p < FS_NPHASES; p++) {
        fs_json_open(j, fs_phase_name(p), '{');
        fs_json_num(j, "min", t->min[p]);
        fs_json_num(j, "mean", t->mean[p]);
        fs_json_num(j, "max", t->max[p]);
        fs_json_num(j, "imbalance", t->mean[p] > 0 ? t->max[p] / t->mean[p] : 1.0);
        fs_json_close(j, '}');
    }
    fs_json_close(j, '}');

    fs_json_num(j, "flops", info->flops);
    fs_json_num(j, "gflops", t->gflops);
    fs_json_num(j, "gflops_file_to_file", t->gflops_total);

    fs_json_open(j, "fftw_plans", '{');
    fs_json_int(j, "made", t->fftw_plans);
    fs_json_int(j, "from_wisdom", t->fftw_plans_from_wisdom);
    fs_json_close(j, '}');

    fs_json_open(j, "exchange", '{');
    fs_json_int(j, "bytes_sent", t->bytes_sent);
    fs_json_int(j, "bytes_received", t->bytes_received);
    fs_json_int(j, "messages", t->messages);
    fs_json_int(j, "count", t->exchanges);
    fs_json_int(j, "wire_bytes", t->wire_bytes);
    fs_json_num(j, "seconds_max", t->max[FS_PHASE_EXCHANGE]);
    fs_json_num(j, "bandwidth_gbs", t->bandwidth_gbs);
    fs_json_num(j, "pack_seconds_max", t->pack_max);
    fs_json_num(j, "communication_seconds_max", t->comm_max);
    fs_json_num(j, "unpack_seconds_max", t->unpack_max);
    fs_json_num(j, "block_fft_seconds", t->hooks);
    fs_json_num(j, "block_fft_overlapped_seconds", t->hooks_overlapped);
    fs_json_close(j, '}');

    json_io_overlap(j, &t->io);
    if (info->ooc)
        json_passes(j, info, t);

    if (info->check) {
        fs_json_open(j, "check", '{');
        fs_json_num(j, "roundtrip_error", info->check->roundtrip_error);
        fs_json_num(j, "parseval_error", info->check->parseval_error);
        fs_json_num(j, "tolerance", info->check->tolerance);
        fs_json_bool(j, "passed", info->check->passed);
        fs_json_close(j, '}');
    }

    fs_json_open(j, "memory", '{');
    fs_json_int(j, "peak_bytes_max", t->peak_max);
    fs_json_int(j, "array_bytes", info->array_bytes);
    fs_json_num(j, "peak_over_rank_share", info->array_bytes > 0
                                             ? (double)t->peak_max * P / (double)info->array_bytes
                                             : 0.0);
    fs_json_close(j, '}');
}

/* Each rank's share, and the prefix broadcast's running sums over them. */
static void json_ranks(fs_json *j, const fs_report_info *info, const fs_rank_record *all,
                       const int64_t *prefix, int P)
{
    fs_json_open(j, "per_rank", '[');
    int a = info->split_from >= 0 ? info->split_from : 0;
    for (int p = 0; p < P; p++) {
        const fs_rank_record *r = &all[p];
        fs_json_open(j, NULL, '{');
        fs_json_int(j, "rank", p);
        fs_json_int(j, "elements", r->in_elems);
        /* The totals of several datasets have no hyperslabs. */
        int boxes = !info->ndatasets;
        if (boxes)
            fs_json_int(j, "offset", r->in.start[a]);
        fs_json_int(j, "element_offset", p ? prefix[(size_t)(p - 1) * 4] : 0);
        fs_json_int(j, "prefix", prefix[(size_t)p * 4]);
        if (boxes) {
            fs_json_ints_strided(j, "input_start", r->in.ndim, r->in.start, 1);
            fs_json_ints_strided(j, "input_count", r->in.ndim, r->in.count, 1);
        }
        fs_json_int(j, "output_elements", r->out_elems);
        if (boxes) {
            fs_json_ints_strided(j, "output_start", r->out.ndim, r->out.start, 1);
            fs_json_ints_strided(j, "output_count", r->out.ndim, r->out.count, 1);
        }
        fs_json_int(j, "bytes_sent", r->bytes_sent);
        fs_json_int(j, "bytes_received", r->bytes_received);
        fs_json_int(j, "messages_sent", r->messages_sent);
        fs_json_open(j, "seconds", '{');
        for (int ph = 0; ph < FS_NPHASES; ph++)
            fs_json_num(j, fs_phase_name(ph), r->t_s[ph]);
        fs_json_close(j, '}');
        json_io_overlap(j, &r->io);
        fs_json_int(j, "peak_memory_bytes", r->peak_memory_bytes);
        fs_json_close(j, '}');
    }
    fs_json_close(j, ']');

    fs_json_open(j, "prefix", '{');
    fs_json_text(j, "method",
             "parallel prefix broadcast: a results buffer with one position per rank; for "
             "position p each rank contributes its values if p >= its rank and the identity "
             "(0) otherwise; one MPI_Allreduce(MPI_SUM) over the ranks x 4 buffer fills every "
             "position on every rank");
    fs_json_text(j, "operation", "sum");
    fs_json_ints_strided(j, "elements", P, prefix, 4);
    fs_json_ints_strided(j, "output_elements", P, prefix + 1, 4);
    fs_json_ints_strided(j, "bytes_sent", P, prefix + 2, 4);
    fs_json_ints_strided(j, "bytes_received", P, prefix + 3, 4);
    fs_json_close(j, '}');
}

/* Several inputs: what was read, and where it all went. */
static void json_inputs(fs_json *j, const fs_report_info *info)
{
    fs_json_open(j, "inputs", '[');
    for (int i = 0; i < info->ndatasets; i++)
        fs_json_text(j, NULL, info->dataset_inputs[i]);
    fs_json_close(j, ']');
    fs_json_text(j, "output", info->output);
}

/* Several inputs: the sections made by fs_report_section, as they are. */
static void json_datasets(fs_json *j, const fs_report_info *info)
{
    fs_json_open(j, "datasets", '[');
    for (int i = 0; i < info->ndatasets; i++)
        fs_json_raw(j, info->dataset_json[i]);
    fs_json_close(j, ']');
}

/* What the report's body is written from. */
typedef struct report_body {
    const fs_report_info *info;
    const totals *t;
    const fs_rank_record *all;
    const int64_t *prefix;
    int P;
} report_body;

static void json_report(fs_json *j, void *arg)
{
    const report_body *b = arg;
    json_header(j, b->info, b->P);
    if (b->info->ndatasets)
        json_inputs(j, b->info);
    else
        json_dataset(j, b->info);
    json_figures(j, b->info, b->t, b->P);
    json_ranks(j, b->info, b->all, b->prefix, b->P);
    if (b->info->ndatasets)
        json_datasets(j, b->info);
    fs_json_parts(j, b->info->extras, b->info->nextras);
}

/* The report into its temporary; the commit renames it with the result. */
static fs_status write_json_file(const char *path, const char *tmp, const report_body *b)
{
    FILE *f = fopen(tmp, "w");
    if (!f)
        return fs_error_set(FS_ERR_OUTPUT, "%s: cannot write the report: %s", path, strerror(errno));
    int e = fs_json_document(f, json_report, (void *)b);
    if (e)
        return fs_error_set(FS_ERR_RUNTIME, "%s: writing the report failed: %s", path, strerror(e));
    return FS_OK;
}

/* ------------------------------------------------------------------ stdout */

/* Rank 0: the report bound for standard output, from its write (before the
 * commit) until the result is in place. */
static char *stdout_report;
static size_t stdout_report_bytes;

/* text to standard output; 0 or the errno of the failure. A closed pipe is
 * an error to report like any other, not a signal that ends this rank
 * alone: SIGPIPE is ignored while writing. */
static int write_stdout(const char *text, size_t bytes)
{
    struct sigaction ignore = {.sa_handler = SIG_IGN}, old;
    int ignored = sigaction(SIGPIPE, &ignore, &old) == 0;
    errno = 0;
    int e = 0;
    if (fwrite(text, 1, bytes, stdout) != bytes || fflush(stdout) != 0)
        e = errno ? errno : EIO;
    if (ignored)
        sigaction(SIGPIPE, &old, NULL);
    return e;
}

static fs_status keep_for_stdout(const report_body *b)
{
    fs_report_discard_stdout();
    FILE *f = open_memstream(&stdout_report, &stdout_report_bytes);
    if (!f)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory for the report");
    if (fs_json_document(f, json_report, (void *)b) != 0) {
        fs_report_discard_stdout();
        return fs_error_set(FS_ERR_RUNTIME, "out of memory for the report");
    }
    return FS_OK;
}

fs_status fs_report_flush_stdout(void)
{
    if (!stdout_report)
        return FS_OK;
    int e = write_stdout(stdout_report, stdout_report_bytes);
    fs_report_discard_stdout();
    if (e)
        return fs_error_set(FS_ERR_RUNTIME, "standard output: writing the report failed: %s",
                            strerror(e));
    return FS_OK;
}

void fs_report_discard_stdout(void)
{
    free(stdout_report);
    stdout_report = NULL;
    stdout_report_bytes = 0;
}

/* The summary as text, printed once the result is in place. */
static fs_status summary_text(const fs_report_info *info, const totals *t, int P, char **text)
{
    size_t size = 0;
    FILE *f = open_memstream(text, &size);
    if (!f)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory for the summary");
    print_summary(f, info, t, P);
    if (fclose(f) != 0) {
        free(*text);
        *text = NULL;
        return fs_error_set(FS_ERR_RUNTIME, "out of memory for the summary");
    }
    return FS_OK;
}

/* Collective: every rank's record on rank 0 (*all, malloc'ed there, NULL
 * elsewhere) and the running sums of its four counts on every rank
 * (*prefix, P x 4, malloc'ed). Returns the agreed status; on failure
 * nothing is left allocated. */
static fs_status gather_records(MPI_Comm comm, const fs_rank_record *mine, int *rank, int *P,
                                fs_rank_record **all, int64_t **prefix)
{
    *all = NULL;
    *prefix = NULL;
    int err = MPI_Comm_rank(comm, rank);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_size(comm, P);
    if (err != MPI_SUCCESS)
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "report: cannot learn the ranks: %s",
                                                 fs_mpi_strerror(err)));
    fs_status st = FS_OK;
    *all = *rank == 0 ? malloc((size_t)*P * sizeof **all) : NULL;
    *prefix = malloc((size_t)*P * 4 * sizeof **prefix);
    if ((*rank == 0 && !*all) || !*prefix)
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory for the report");
    if ((st = fs_error_agree(comm, st)) == FS_OK) {
        err = MPI_Gather(mine, (int)sizeof *mine, MPI_BYTE, *all, (int)sizeof *mine, MPI_BYTE, 0,
                         comm);
        if (err != MPI_SUCCESS)
            st = fs_error_set(FS_ERR_RUNTIME, "MPI_Gather of the report failed: %s",
                              fs_mpi_strerror(err));
        /* The running sums of the report: one prefix broadcast for four columns. */
        int64_t cols[4] = {mine->in_elems, mine->out_elems, mine->bytes_sent,
                           mine->bytes_received};
        if (st == FS_OK)
            st = fs_prefix_broadcast_int64(comm, cols, 4, FS_PREFIX_SUM, *prefix);
        st = fs_error_agree(comm, st);
    }
    if (st != FS_OK) {
        free(*all);
        free(*prefix);
        *all = NULL;
        *prefix = NULL;
    }
    return st;
}

fs_status fs_report_finish(MPI_Comm comm, const fs_report_info *info, const fs_rank_record *mine,
                           char **summary, const char *json_path, const char *json_tmp)
{
    if (summary)
        *summary = NULL;
    int rank = 0, P = 1;
    fs_rank_record *all = NULL;
    int64_t *prefix = NULL;
    fs_status st = gather_records(comm, mine, &rank, &P, &all, &prefix);
    if (st != FS_OK)
        goto done;
    if (rank == 0) {
        totals t;
        compute_totals(info, all, P, &t);
        if (summary)
            st = summary_text(info, &t, P, summary);
        report_body b = {info, &t, all, prefix, P};
        if (st == FS_OK && fs_report_to_stdout(json_path))
            st = keep_for_stdout(&b);
        else if (st == FS_OK && json_path && json_tmp)
            st = write_json_file(json_path, json_tmp, &b);
    }
    st = fs_error_agree(comm, st);
done:
    free(all);
    free(prefix);
    return st;
}

fs_status fs_json_write(const char *path, const char *tmp_path,
                        void (*body)(fs_json *j, void *arg), void *arg)
{
    if (fs_report_to_stdout(path)) {
        /* Whole or not at all on standard output too: a failure while the
         * text is made prints nothing. */
        char *text = NULL;
        size_t bytes = 0;
        FILE *f = open_memstream(&text, &bytes);
        int e = f ? fs_json_document(f, body, arg) : ENOMEM;
        if (e) {
            free(text);
            return fs_error_set(FS_ERR_RUNTIME, "out of memory for the report");
        }
        e = write_stdout(text, bytes);
        free(text);
        if (e)
            return fs_error_set(FS_ERR_RUNTIME, "standard output: writing the report failed: %s",
                                strerror(e));
        return FS_OK;
    }
    FILE *f = fopen(tmp_path, "w");
    if (!f)
        return fs_error_set(FS_ERR_OUTPUT, "%s: cannot write the report: %s", path, strerror(errno));
    int e = fs_json_document(f, body, arg);
    if (e)
        return fs_error_set(FS_ERR_RUNTIME, "%s: writing the report failed: %s", path, strerror(e));
    return FS_OK;
}

/* Rank 0: one dataset's summary line: what, how long, how fast. */
static void section_line(FILE *f, const fs_report_info *info, const totals *t)
{
    fprintf(f, "fftshard: %s: %s: %.4f s (read %.4f, fft %.4f, exchange %.4f, write %.4f), "
            "%.2f GFlop/s\n", info->input, info->title, t->max[FS_PHASE_TOTAL],
            t->max[FS_PHASE_READ], t->max[FS_PHASE_FFT], t->max[FS_PHASE_EXCHANGE],
            t->max[FS_PHASE_WRITE], t->gflops);
}

/* One dataset's object in the report's "datasets" array. */
static void json_section(fs_json *j, void *arg)
{
    const report_body *b = arg;
    fs_json_open(j, NULL, '{');
    json_dataset(j, b->info);
    json_figures(j, b->info, b->t, b->P);
    json_ranks(j, b->info, b->all, b->prefix, b->P);
    fs_json_close(j, '}');
}

/* Rank 0: the section's JSON object and summary line as text. */
static fs_status section_text(const fs_report_info *info, const fs_rank_record *all,
                              const int64_t *prefix, int P, char **json_text, char **line)
{
    totals t;
    compute_totals(info, all, P, &t);
    report_body b = {info, &t, all, prefix, P};
    size_t size = 0;
    FILE *f = open_memstream(json_text, &size);
    if (!f)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory for the report");
    /* at the depth of an element of the report's "datasets" array */
    int failed = fs_json_fragment(f, 2, json_section, &b) != 0;
    if (!failed && line) {
        f = open_memstream(line, &size);
        failed = !f;
        if (f) {
            section_line(f, info, &t);
            failed = fclose(f) != 0;
        }
    }
    return failed ? fs_error_set(FS_ERR_RUNTIME, "out of memory for the report") : FS_OK;
}

fs_status fs_report_section(MPI_Comm comm, const fs_report_info *info, const fs_rank_record *mine,
                            char **json_text, char **line)
{
    *json_text = NULL;
    if (line)
        *line = NULL;
    int rank = 0, P = 1;
    fs_rank_record *all = NULL;
    int64_t *prefix = NULL;
    fs_status st = gather_records(comm, mine, &rank, &P, &all, &prefix); /* agreed */
    if (st != FS_OK)
        return st;
    if (rank == 0)
        st = section_text(info, all, prefix, P, json_text, line);
    free(all);
    free(prefix);
    return fs_error_agree(comm, st);
}
