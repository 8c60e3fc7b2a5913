/* SPDX-License-Identifier: GPL-3.0-or-later */
/* outofcore: see outofcore.h. */
#include "config.h"

#include "plan/outofcore.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/h5io.h"
#include "plan/pieces.h"

/* The most virtual ranks tried: past this no block gets smaller. */
#define MAX_BLOCKS ((int64_t)1 << 24)

static double mib(double bytes)
{
    return bytes / 1048576.0;
}

/* rq planned for V virtual ranks: the run's own decomposition choice
 * (--decomp), its own grid left to the planner, no block hooks; a slab
 * ends in blocks of whole planes (OUTPUT written in long runs; outofcore.h)
 * but a 2-D real forward's, whose halved axis 1 must be whole first. */
static fs_status plan_virtual(const fs_transform_request *rq, int64_t V, fs_transform *vt)
{
    fs_transform_request v = *rq;
    v.nranks = (int)V;
    v.grid[0] = v.grid[1] = 0;
    v.hooks = 0;
    v.planes_last = rq->ndim >= 3 || !rq->real;
    return fs_transform_plan(&v, vt);
}

/* The largest block of any pass: the boxes at grid coordinates (0, 0)
 * (fs_split_block gives the first parts the extra indices). */
static int64_t largest_block(const fs_transform *vt)
{
    int64_t most = 0;
    for (int s = 0; s < vt->nstages; s++) {
        fs_box b = fs_transform_box(vt, s, 0, 0);
        most = fs_box_elems(&b) > most ? fs_box_elems(&b) : most;
    }
    return most;
}

/* The memory per rank besides the two block buffers: FFTW's plans and the
 * gathered lines of their strided passes, HDF5's staging of real values in
 * complex memory (real input, real output), and with --check the input
 * read again in pieces. */
static int64_t plans_io_bytes(const fs_ooc_args *a, const fs_transform *vt, int64_t buffer_bytes)
{
    int64_t check = buffer_bytes < FS_CHECK_PIECE_BYTES ? buffer_bytes : FS_CHECK_PIECE_BYTES;
    /* with kept results every INPUT counts it, so that their blocks are alike */
    int staged = fs_dtype_is_real(vt->in_dtype) || fs_dtype_is_real(vt->out_type) || a->kept;
    return fs_footprint_plans_bytes() + (staged ? FS_IO_STAGE_BYTES : 0) + (a->check ? check : 0);
}

/* The plan of k blocks per rank, its memory in p. */
static fs_status plan_blocks(const fs_ooc_args *a, int64_t k, fs_ooc_plan *p)
{
    int64_t V = k * a->rq->nranks;
    fs_status st = plan_virtual(a->rq, V, &p->vt);
    if (st != FS_OK)
        return st;
    p->blocks = (int)V;
    p->per_rank = (int)k;
    p->buffer_bytes = largest_block(&p->vt) * (int64_t)fs_complex_bytes(p->vt.prec);
    /* the INPUTs' blocks alike: each plan counts those of the most kept files read */
    p->nbuffers = 2 + 2 * (a->kept == FS_OOC_KEEP_EACH ? a->inputs - 1 : a->kept ? 1 : 0);
    p->buffers_bytes = p->nbuffers * fs_footprint_resident(p->buffer_bytes);
    p->plans_io_bytes = plans_io_bytes(a, &p->vt, p->buffer_bytes);
    p->library_bytes = fs_footprint_library_bytes();
    p->total_bytes = p->buffers_bytes + p->plans_io_bytes + p->library_bytes;
    p->fits = !a->mem_per_rank || (uint64_t)p->total_bytes <= a->mem_per_rank;
    return FS_OK;
}

/* The least k whose plan fits (doubling, then halving the interval); when
 * none does (p->fits 0), the least whose blocks are as small as they get
 * (more virtual ranks than the array has rows to split leave some empty)
 * down to LEAST_BLOCK_BYTES: a budget below every plan's made blocks of one
 * 4 KiB pencil, 65536 of them for 256^3 complex128 on 2 ranks, whose I/O
 * records outgrew the plan eight times over while the run crawled (1 MiB
 * blocks: 7.3 s, the peak within the plan). */
#define LEAST_BLOCK_BYTES ((int64_t)1 << 20)
static fs_status least_blocks(const fs_ooc_args *a, fs_ooc_plan *p)
{
    int64_t hi = 1, lo = 0, P = a->rq->nranks;
    fs_status st = plan_blocks(a, hi, p);
    fs_ooc_plan least = *p; /* the last of blocks no smaller than LEAST_BLOCK_BYTES */
    while (st == FS_OK && !p->fits && 2 * hi * P <= MAX_BLOCKS) {
        fs_ooc_plan more = *p;
        if ((st = plan_blocks(a, 2 * hi, &more)) != FS_OK || more.buffer_bytes >= p->buffer_bytes)
            break;
        *p = more;
        if (more.buffer_bytes >= LEAST_BLOCK_BYTES)
            least = more;
        lo = hi;
        hi *= 2;
    }
    if (st == FS_OK && !p->fits)
        *p = least;
    if (st != FS_OK || !p->fits)
        return st;
    while (hi - lo > 1) { /* hi fits, lo does not (or is 0) */
        int64_t mid = lo + (hi - lo) / 2;
        if ((st = plan_blocks(a, mid, p)) != FS_OK)
            return st;
        *(p->fits ? &hi : &lo) = mid;
    }
    return plan_blocks(a, hi, p);
}

/* k: as given (a->per_rank), else the least that fits, or
 * FS_OOC_MIN_BLOCKS when that fits too and costs no more passes (the I/O
 * of a pass overlaps its FFTs block by block: one block per rank would
 * overlap nothing). */
static fs_status choose_blocks(const fs_ooc_args *a, fs_ooc_plan *p)
{
    if (a->per_rank)
        return plan_blocks(a, a->per_rank, p);
    fs_status st = least_blocks(a, p);
    if (st != FS_OK || !p->fits || p->per_rank >= FS_OOC_MIN_BLOCKS)
        return st;
    fs_ooc_plan more = *p;
    st = plan_blocks(a, FS_OOC_MIN_BLOCKS, &more);
    if (st == FS_OK && more.fits && more.vt.nstages == p->vt.nstages && !more.vt.fold)
        *p = more;
    return st;
}

/* The inverse passes after pass n - 1 (of the last stage, which undid its
 * own): the stages back to the first, which writes the field or compares
 * with INPUT; the passes made so far (scratch files alternate: a pass reads
 * one and writes the other). */
static int undo_passes(fs_ooc_plan *p, int n, int *scratch, int field, int compare)
{
    int L = p->vt.nstages;
    for (int s = L - 1; s >= 0; s--) {
        fs_ooc_pass *x = s == L - 1 ? &p->pass[n - 1] : &p->pass[n++];
        if (s < L - 1)
            *x = (fs_ooc_pass){.stage = s, .from = (*scratch + 1) % 2, .from_stage = s + 1,
                               .inverse = 1, .to = FS_OOC_NONE, .keep_to = FS_OOC_NONE,
                               .runs = 1};
        if (s > 0) {
            x->to = *scratch;
            *scratch = (*scratch + 1) % 2;
        } else {
            x->write_field = field;
            x->compare = compare;
        }
    }
    return n;
}

/* The passes of p->vt for INPUT a->input: the forward stages; the last one
 * binned, kept, written, operated on and undone as asked; the inverse
 * stages back to the first (a round trip's field, or --check's
 * comparison); on the last INPUT's turn of --vector, the results' passes. */
static void make_passes(const fs_ooc_args *a, fs_ooc_plan *p)
{
    int L = p->vt.nstages, each = a->kept == FS_OOC_KEEP_EACH, n = 0, scratch = 0;
    int field = a->round_trip && !each, back = field || a->check;
    for (int s = 0; s < L; s++, n++) {
        fs_ooc_pass *x = &p->pass[n];
        *x = (fs_ooc_pass){.stage = s, .from = s == 0 ? FS_OOC_INPUT : (scratch + 1) % 2,
                           .from_stage = s - 1, .forward = 1, .to = FS_OOC_NONE,
                           .keep_to = FS_OOC_NONE, .runs = 1};
        if (s + 1 < L) {
            x->to = scratch;
            scratch = (scratch + 1) % 2;
            continue;
        }
        x->bin = a->bins;
        if (each || (a->kept && a->input == 0))
            x->keep_to = FS_OOC_KEPT_FILE + (each ? a->input : 0);
        x->with_kept = a->kept == FS_OOC_KEEP_FIRST && a->input > 0;
        x->write_output = a->writes_transform && !a->round_trip;
        x->operate = field;
        x->inverse = back;
    }
    if (back)
        n = undo_passes(p, n, &scratch, field, a->check);
    p->first_result = n;
    if (each && a->input == a->inputs - 1) {
        scratch = 0; /* the forward passes' scratch is done with */
        p->pass[n++] = (fs_ooc_pass){.stage = L - 1, .from = FS_OOC_KEPT_FILE + a->input,
                                     .from_stage = L - 1, .with_kept = a->input, .operate = 1,
                                     .inverse = 1, .to = FS_OOC_NONE, .keep_to = FS_OOC_NONE};
        n = undo_passes(p, n, &scratch, 1, 0);
        for (int i = p->first_result; i < n; i++)
            p->pass[i].runs = a->results > 1 ? a->results : 1;
    }
    p->npasses = n;
    p->nscratch = 0;
    for (int i = 0; i < n; i++)
        if (p->pass[i].to != FS_OOC_NONE && p->pass[i].to + 1 > p->nscratch)
            p->nscratch = p->pass[i].to + 1;
    p->keeps = a->kept;
    p->nkept = each ? a->inputs : a->kept ? 1 : 0;
}

/* Each pass's bytes, and its time at the disk's rate. */
static void count_bytes(const fs_ooc_plan *p, fs_ooc_pass *x)
{
    const fs_transform *t = &p->vt;
    double in = (double)fs_shape_elems(t->in_ndim, t->in_shape) * (double)fs_dtype_bytes(t->in_dtype);
    double out = (double)fs_shape_elems(t->out_ndim, t->out_shape) * (double)fs_dtype_bytes(t->out_type);
    double work = (double)p->scratch_bytes;
    x->read_bytes = x->runs * ((x->from == FS_OOC_INPUT ? in : work) + (x->compare ? in : 0) +
                               x->with_kept * work);
    x->written_bytes = x->runs * ((x->to != FS_OOC_NONE ? work : 0) +
                                  (x->keep_to != FS_OOC_NONE ? work : 0) +
                                  (x->write_output || x->write_field ? out : 0));
}

void fs_ooc_plan_rates(fs_ooc_plan *p, double read_rate, double write_rate, int probed)
{
    p->rates_probed = probed;
    p->read_rate = read_rate;
    p->write_rate = write_rate;
    p->predicted_s = 0;
    for (int i = 0; i < p->npasses; i++) {
        fs_ooc_pass *x = &p->pass[i];
        x->predicted_s = read_rate > 0 && write_rate > 0
                             ? x->read_bytes / read_rate + x->written_bytes / write_rate
                             : 0;
        p->predicted_s += x->predicted_s;
    }
}

/* The in-memory plan's need per rank: the named strategy's, or for the
 * default and auto the least of any (the default takes it when none
 * fits). */
static fs_status in_memory_need(const fs_ooc_args *a, int64_t *bytes)
{
    *bytes = -1;
    for (int i = 0; fs_exchange_strategies[i]; i++) {
        const fs_exchange_ops *ops = fs_exchange_strategies[i];
        if (a->strategy->kind == FS_STRATEGY_NAMED && ops != a->strategy->ops)
            continue;
        fs_footprint fp;
        fs_status st = fs_footprint_of(a->rq, ops, a->params, &a->keeps, a->io_thread, &fp);
        if (st != FS_OK)
            return st;
        if (*bytes < 0 || fp.total_bytes < *bytes)
            *bytes = fp.total_bytes;
    }
    return FS_OK;
}

/* The out-of-core plan; *cannot (out) why there is none (NULL: there is). */
static fs_status plan_out_of_core(const fs_ooc_args *a, fs_ooc_plan *p, const char **cannot)
{
    *cannot = a->cannot[0] ? a->cannot : NULL;
    if (*cannot)
        return FS_OK;
    fs_status st = choose_blocks(a, p);
    if (st != FS_OK)
        return st;
    if (p->vt.fold || p->vt.split[p->vt.nstages - 1][0] == FS_GATHER) {
        *cannot = "cannot run a 1-D transform (its four steps)";
        return FS_OK;
    }
    if (p->vt.resized || p->vt.windowed) {
        *cannot = "cannot read an input padded, cut or windowed (--pad, --window, "
                  "--boundary=free)";
        return FS_OK;
    }
    for (int x = 0; x < p->vt.ndim; x++)
        if (p->vt.r2r[x] != FS_AXIS_FFT) {
            *cannot = "cannot compute cosine or sine transforms (--dct, --dst, --r2r, "
                      "--boundary's walls)";
            return FS_OK;
        }
    p->scratch_bytes = fs_shape_elems(p->vt.ndim, p->vt.shape) * (int64_t)fs_complex_bytes(p->vt.prec);
    make_passes(a, p);
    for (int i = 0; i < p->npasses; i++)
        count_bytes(p, &p->pass[i]);
    fs_ooc_plan_rates(p, a->read_rate, a->write_rate, 0);
    return FS_OK;
}

/* The decision in words. */
static void say_why(const fs_ooc_args *a, const char *cannot, fs_ooc_plan *p)
{
    char limit[200];
    if (a->mem_per_rank)
        snprintf(limit, sizeof limit, "%.1f MiB (%s)", mib((double)a->mem_per_rank), a->mem_source);
    else
        snprintf(limit, sizeof limit, "an unknown memory (%s: no figure)", a->mem_source);
    double need = mib((double)p->in_memory_bytes);
    switch (p->why) {
    case FS_OOC_FITS:
        snprintf(p->reason, sizeof p->reason, "in memory: the plan needs %.1f MiB per rank, "
                 "within %s", need, limit);
        break;
    case FS_OOC_KEPT:
        snprintf(p->reason, sizeof p->reason, "in memory: --in-memory (the plan needs %.1f MiB "
                 "per rank)", need);
        break;
    case FS_OOC_ASKED:
        snprintf(p->reason, sizeof p->reason, "out of core: --out-of-core");
        break;
    case FS_OOC_TOO_LARGE:
        snprintf(p->reason, sizeof p->reason, "out of core: the in-memory plan needs %.1f MiB per "
                 "rank, more than %s", need, limit);
        break;
    case FS_OOC_CANNOT:
        snprintf(p->reason, sizeof p->reason, "out of core: the plan needs %.1f MiB per rank, "
                 "more than %s, and fftshard %s out of core (--in-memory tries it in memory)",
                 need, limit, cannot);
        break;
    case FS_OOC_NEITHER:
        snprintf(p->reason, sizeof p->reason, "in memory although the plan needs %.1f MiB per "
                 "rank, more than %s: out of core needs %.1f MiB per rank, more too", need,
                 limit, mib((double)p->total_bytes));
        break;
    }
}

fs_status fs_ooc_plan_make(const fs_ooc_args *a, fs_ooc_plan *p)
{
    memset(p, 0, sizeof *p);
    fs_status st = in_memory_need(a, &p->in_memory_bytes);
    int fits = !a->mem_per_rank || p->in_memory_bytes < 0 ||
               (uint64_t)p->in_memory_bytes <= a->mem_per_rank;
    const char *cannot = NULL;
    if (a->forced && a->in_memory)
        return fs_error_set(FS_ERR_USAGE, "--out-of-core, --in-memory: the two contradict each "
                            "other");
    if (st == FS_OK && (a->forced || (!fits && !a->in_memory)))
        st = plan_out_of_core(a, p, &cannot);
    if (st != FS_OK)
        return st;
    if (a->forced && cannot)
        return fs_error_set(FS_ERR_USAGE, "--out-of-core: fftshard %s out of core", cannot);
    p->why = a->forced      ? FS_OOC_ASKED
             : fits         ? FS_OOC_FITS
             : a->in_memory ? FS_OOC_KEPT
             : cannot  ? FS_OOC_CANNOT
             : !p->fits ? FS_OOC_NEITHER
                        : FS_OOC_TOO_LARGE;
    p->on = p->why == FS_OOC_ASKED || p->why == FS_OOC_TOO_LARGE;
    say_why(a, cannot, p);
    /* needed and impossible: refused, never a run that the memory kills */
    return p->why == FS_OOC_CANNOT ? fs_error_set(FS_ERR_USAGE, "%s", p->reason) : FS_OK;
}

fs_box fs_ooc_rank_box(const fs_ooc_plan *p, int rank, int s)
{
    const fs_transform *vt = &p->vt;
    fs_box all = {vt->ndim, {0}, {0}};
    int64_t end[FS_LAYOUT_MAX_DIMS] = {0};
    int any = 0;
    for (int j = 0; j < p->per_rank; j++) {
        int v = rank * p->per_rank + j;
        fs_box b = fs_transform_box(vt, s, v / vt->grid[1], v % vt->grid[1]);
        if (fs_box_elems(&b) == 0)
            continue;
        for (int a = 0; a < vt->ndim; a++) {
            int64_t e = b.start[a] + b.count[a];
            all.start[a] = any && all.start[a] < b.start[a] ? all.start[a] : b.start[a];
            end[a] = any && end[a] > e ? end[a] : e;
        }
        any = 1;
    }
    for (int a = 0; a < vt->ndim; a++)
        all.count[a] = end[a] - all.start[a];
    return all;
}

const char *fs_ooc_pass_name(int i)
{
    static const char *const names[FS_OOC_MAX_PASSES] = {"pass 1", "pass 2", "pass 3",
                                                         "pass 4", "pass 5", "pass 6",
                                                         "pass 7", "pass 8", "pass 9"};
    return i >= 0 && i < FS_OOC_MAX_PASSES ? names[i] : "pass";
}

int fs_ooc_files(const fs_ooc_plan *p)
{
    return p->nkept ? FS_OOC_KEPT_FILE + p->nkept : p->nscratch;
}

int fs_ooc_files_held(const fs_ooc_plan *p)
{
    return p->nscratch + p->nkept;
}

void fs_ooc_pass_text(const fs_ooc_plan *p, int i, char *buf, size_t size)
{
    const fs_ooc_pass *x = &p->pass[i];
    const char *to[3] = {"nothing written", "", ""};
    int n = 0;
    if (x->write_output || x->write_field)
        to[n++] = "OUTPUT";
    if (x->to != FS_OOC_NONE)
        to[n++] = "the scratch";
    if (x->keep_to != FS_OOC_NONE)
        to[n++] = "a kept file";
    const char *from = x->from == FS_OOC_INPUT ? "INPUT"
                       : x->from < FS_OOC_KEPT_FILE ? "the scratch"
                       : x->with_kept               ? "the kept files"
                                                    : "the kept file";
    int used = snprintf(buf, size, "%s%s", from, x->with_kept && x->from < FS_OOC_KEPT_FILE
                                                     ? " and the kept file" : "");
    size_t at = used > 0 && (size_t)used < size ? (size_t)used : 0;
    if (x->compare)
        snprintf(buf + at, size - at, ", compared with INPUT");
    else
        snprintf(buf + at, size - at, " -> %s%s%s%s%s", to[0], n > 2 ? ", " : n > 1 ? " and " : "",
                 to[1], n > 2 ? " and " : "", to[2]);
}

/* ---------------------------------------------------------- the options */

void fs_ooc_options_free(fs_ooc_options *o)
{
    free(o->scratch_dir);
    o->scratch_dir = NULL;
}

/* --disk-rate=READ[,WRITE]: bytes per second with K, M, G suffixes (the
 * write rate as the read rate when one is given). */
static fs_status set_disk_rate(const fs_opt *opt, const char *arg, void *section)
{
    fs_ooc_options *o = section;
    (void)opt;
    char text[128];
    snprintf(text, sizeof text, "%s", arg);
    char *comma = strchr(text, ',');
    if (comma)
        *comma = '\0';
    uint64_t r = 0, w = 0;
    if (strlen(arg) >= sizeof text || fs_parse_bytes(text, &r) != 0 || r == 0 ||
        (comma && (fs_parse_bytes(comma + 1, &w) != 0 || w == 0)))
        return fs_error_set(FS_ERR_USAGE, "--disk-rate=%s: expected bytes per second, READ or "
                            "READ,WRITE, like 500M,110M", arg);
    o->read_rate = (double)r;
    o->write_rate = comma ? (double)w : (double)r;
    return FS_OK;
}

#define O fs_ooc_options
const fs_opt fs_ooc_option_lines[] = {
    {FS_OPT("out-of-core", 0, FS_OPT_NO_ARG, fs_opt_flag, O, forced),
     .help = "      --out-of-core       stream blocks through the disk in two passes even\n"
             "                          when the plan fits in memory (by itself when it\n"
             "                          does not fit --mem-per-rank or the node's memory)\n"},
    {FS_OPT("in-memory", 0, FS_OPT_NO_ARG, fs_opt_flag, O, in_memory),
     .help = "      --in-memory         never out of core: a plan that does not fit is\n"
             "                          tried in memory\n"},
    {FS_OPT("scratch", 0, FS_OPT_ARG, fs_opt_file, O, scratch_dir),
     .help = "      --scratch=DIR       where the passes' scratch files go (default: beside\n"
             "                          OUTPUT)\n"},
    {FS_OPT("disk-rate", 0, FS_OPT_ARG, set_disk_rate, O, read_rate),
     .help = "      --disk-rate=R[,W]   the disk's read and write bytes per second (K, M,\n"
             "                          G), for the predicted time (default: probed)\n"},
    {.long_name = NULL},
};
#undef O
