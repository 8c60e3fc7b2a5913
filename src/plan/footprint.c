/* SPDX-License-Identifier: GPL-3.0-or-later */
/* footprint: see footprint.h. */
#include "config.h"

#include "plan/footprint.h"
#include "plan/fftwmem.h"

#include "core/buffer.h"
#include "io/h5io.h"
#include "plan/pieces.h"

#include <stdlib.h>
#include <string.h>

/* The parts of a run's peak resident memory (VmHWM, the report's peak
 * memory) besides the data buffer and the exchange plans, measured with
 * MPICH 4, HDF5 1.14 and FFTW 3.3 on 1 to 4 ranks, each the most a run
 * showed (the estimate is never below a run's peak):
 * - what MPI, HDF5 and FFTW hold in a run of a tiny array of every
 *   operation, 1-D to 3-D: 31.5 to 32.6 MiB on one rank, and with MPI's
 *   shared memory among ranks 0.9 MiB more on 2 (with another rank alone),
 *   2.2 to 2.5 MiB on 3 to 8 (up to 33.7 and 34.0 MiB in all); */
#define LIBRARY_BYTES ((int64_t)30464 * 1024)
static int64_t shared_bytes(int nranks)
{
    return nranks < 2 ? 0 : nranks == 2 ? (int64_t)1024 * 1024 : (int64_t)2 * 1024 * 1024;
}
/* - and on top of that in a run of a real size: FFTW's plans of the stages
 *   and the buffers of their strided passes, HDF5's and ROMIO's of the read
 *   and the write, MPI's of the exchanges: 0.1 to 3.6 MiB over 400 runs of
 *   every operation, 1-D (2^18 to 2^24 points), 2-D and 3-D (0.5 to 256
 *   MiB per rank), 1 to 4 ranks, slabs and pencils, whatever the size (the
 *   spread is the run's, not the size's: FFTW's plans of lines up to 2^16
 *   points are small, and HDF5 reads and writes the boxes straight to and
 *   from the data buffer, its collective buffers untouched); */
#define PLANS_BYTES ((int64_t)3840 * 1024)
/* - the correlation function's inverse plans: up to 0.4 MiB more in the
 *   same runs (its bins are the stage's, keeps->stage_bytes); */
#define UNDO_BYTES ((int64_t)512 * 1024)
/* - the staging buffer of a real field read into (or written from) the
 *   slots of a complex array (every other element: the 1-D four-step, a
 *   transform of a real input that is not --real, a --real axis that is
 *   not the last): as large as the rank's real data up to
 *   FS_IO_STAGE_BYTES (io/h5io.h; staging_io_bytes says when it adds). */
/* fs_buffer_alloc rounds large buffers up to whole 2 MiB huge pages,
 * which are resident as a whole once touched (fs_buffer_resident). */
static int64_t resident(int64_t bytes)
{
    return (int64_t)fs_buffer_resident((size_t)bytes);
}

int64_t fs_footprint_library_bytes(void)
{
    return LIBRARY_BYTES;
}

int64_t fs_footprint_plans_bytes(void)
{
    return PLANS_BYTES;
}

int64_t fs_footprint_resident(int64_t bytes)
{
    return resident(bytes);
}

/* The coordinates along grid dimension g whose boxes can differ in size:
 * the ends, and both sides of every place where a stage's share of the
 * axis split over g changes (block splits have at most one). Returns how
 * many, at most 2 + 2 * FS_MAX_STAGES. */
static int candidate_coords(const fs_transform *t, int g, int *out)
{
    int n = 0, last = t->grid[g] - 1;
    int cand[2 + 2 * FS_MAX_STAGES] = {0, last};
    int ncand = 2;
    for (int s = 0; s < t->nstages; s++) {
        int a = t->split[s][g];
        if (a < 0)
            continue;
        /* fs_split_block: the first n % parts parts hold one more. */
        int extra = (int)(t->shape[a] % t->grid[g]);
        if (extra > 0) {
            cand[ncand++] = extra - 1;
            cand[ncand++] = extra < last ? extra : last;
        }
    }
    for (int i = 0; i < ncand; i++) {
        int seen = 0;
        for (int j = 0; j < n; j++)
            seen = seen || out[j] == cand[i];
        if (!seen)
            out[n++] = cand[i];
    }
    return n;
}

/* What the rank at grid coordinates c needs with strategy ops: every plan
 * is made before the run and keeps its buffers, so the exchanges' scratch
 * adds up (with --check, the inverse exchanges' too), but for the second
 * array, which they share (as large as the data buffer); with --cross the
 * first input's result, its last-stage box, kept beside all that. */
typedef struct rank_need {
    const fs_exchange_ops *ops;
    int64_t array_elems;               /* the data buffer */
    int64_t scratch_bytes;             /* the exchange plans, less in_place_of_kept */
    int64_t second_bytes;              /* of them the second array, touched when planned */
    int64_t back_bytes;                /* of them the inverse's (--check, a round trip) */
    int64_t staging_bytes;             /* the overlapped write's pieces */
    uint64_t messages[FS_MAX_STAGES];  /* per exchange */
    int64_t kept_elems;                /* --cross's copy */
} rank_need;

/* The inverse exchanges' buffers that take the place of the kept results
 * freed before the inverse's first exchange (keeps->gone): their pages are
 * touched first then. Only blocks malloc maps go back to the system. */
static int64_t in_place_of_kept(const rank_need *need, const fs_footprint_keeps *keeps,
                                size_t cb)
{
    int64_t each = need->kept_elems * (int64_t)cb;
    int64_t gone = each >= FS_MALLOC_MAPPED_BYTES ? keeps->gone * each : 0;
    return gone < need->back_bytes ? gone : need->back_bytes;
}

/* The staging buffers of the rank at c when its helper thread runs, and
 * the plans of the pieces its I/O overlaps. */
static int64_t staging_of(const fs_transform *t, const int c[2])
{
    fs_box first = fs_transform_box(t, 0, c[0], c[1]);
    fs_box last = fs_transform_box(t, t->nstages - 1, c[0], c[1]);
    int count = 0;
    int64_t each = fs_pieces_staging_bytes(t, &first, &last, &count);
    return count * resident(each) + fs_pieces_plans_bytes(t, &first, &last);
}

static fs_status need_of(const fs_transform *t, const fs_exchange_ops *ops,
                         const fs_exchange_params *params, const fs_footprint_keeps *keeps,
                         int io_thread, const int c[2], rank_need *need)
{
    memset(need, 0, sizeof *need);
    size_t cb = fs_dtype_bytes(t->work_type);
    /* --apply's round trip and the correlation function plan the inverse
     * exchanges as --check does (a round trip that writes nothing never
     * runs them) */
    int second = 0, check = keeps->check || keeps->undo || (t->round_trip && !keeps->unwritten);
    if (io_thread && !t->round_trip) /* --apply writes without the pieces */
        need->staging_bytes = staging_of(t, c);
    if (keeps->cross) {
        fs_box last = fs_transform_box(t, t->nstages - 1, c[0], c[1]);
        need->kept_elems = fs_box_elems(&last);
    }
    for (int s = 0; s < t->nstages; s++) {
        fs_box b = fs_transform_box(t, s, c[0], c[1]);
        if (fs_box_elems(&b) > need->array_elems)
            need->array_elems = fs_box_elems(&b);
    }
    for (int e = 0; ops && e + 1 < t->nstages; e++) {
        int g = fs_transform_exchange_dim(t, e), n = t->grid[g];
        fs_box *from = calloc((size_t)n, sizeof *from), *to = calloc((size_t)n, sizeof *to);
        fs_redist *rd[2] = {NULL, NULL};
        if (from && to) {
            for (int m = 0; m < n; m++) {
                int cm[2] = {c[0], c[1]};
                cm[g] = m;
                from[m] = fs_transform_box(t, e, cm[0], cm[1]);
                to[m] = fs_transform_box(t, e + 1, cm[0], cm[1]);
            }
            rd[0] = fs_redist_new(n, c[g], from, to);
            if (check)
                rd[1] = fs_redist_new(n, c[g], to, from);
        }
        free(from);
        free(to);
        if (!rd[0] || (check && !rd[1])) {
            fs_redist_free(&rd[0]);
            fs_redist_free(&rd[1]);
            return fs_error_set(FS_ERR_RUNTIME, "out of memory planning the dry run");
        }
        for (int k = 0; k < 2 && rd[k]; k++) {
            fs_exchange_args args = {
                .comm = MPI_COMM_NULL,
                .rd = rd[k],
                .elem_bytes = cb,
                .elem_type = MPI_DATATYPE_NULL,
                .params = params,
                .hooks = NULL,
            };
            fs_exchange_estimate est;
            ops->estimate(&args, &est);
            if (est.work_elems > need->array_elems)
                need->array_elems = est.work_elems;
            int64_t bytes = (int64_t)(est.scratch_bytes - (size_t)est.second_elems * cb);
            need->scratch_bytes += bytes;
            need->back_bytes += k == 1 ? bytes : 0;
            second = second || est.second_elems > 0;
            if (k == 0)
                need->messages[e] = est.messages;
        }
        fs_redist_free(&rd[0]);
        fs_redist_free(&rd[1]);
    }
    if (second) /* exchange.c touches its pages when it is made */
        need->second_bytes = resident(need->array_elems * (int64_t)cb);
    need->scratch_bytes += need->second_bytes - in_place_of_kept(need, keeps, cb);
    return FS_OK;
}

/* The largest need over the ranks whose boxes differ in size (the memory
 * of one rank: its array and scratch together), and the most messages any
 * of them sends in each exchange. */
static fs_status largest_need(const fs_transform *t, const fs_exchange_ops *ops,
                              const fs_exchange_params *params, const fs_footprint_keeps *keeps,
                              int io_thread, rank_need *worst)
{
    int coords[2][2 + 2 * FS_MAX_STAGES], n[2];
    for (int g = 0; g < 2; g++)
        n[g] = candidate_coords(t, g, coords[g]);
    size_t cb = fs_dtype_bytes(t->work_type);
    int64_t worst_bytes = -1;
    uint64_t messages[FS_MAX_STAGES] = {0};
    for (int i = 0; i < n[0]; i++)
        for (int j = 0; j < n[1]; j++) {
            int c[2] = {coords[0][i], coords[1][j]};
            rank_need need;
            fs_status st = need_of(t, ops, params, keeps, io_thread, c, &need);
            if (st != FS_OK)
                return st;
            int64_t bytes = resident(need.array_elems * (int64_t)cb) + need.scratch_bytes +
                            need.staging_bytes + need.kept_elems * (int64_t)cb;
            if (bytes > worst_bytes) {
                worst_bytes = bytes;
                *worst = need;
            }
            for (int e = 0; e < FS_MAX_STAGES; e++)
                messages[e] = need.messages[e] > messages[e] ? need.messages[e] : messages[e];
        }
    memcpy(worst->messages, messages, sizeof messages);
    return FS_OK;
}

/* The real values of a rank's box that the read (write 0) or the write
 * (1) stages, in bytes: where its map puts them in every other element of
 * the complex array (0: none). */
static int64_t staged_real_bytes(const fs_transform *t, int write)
{
    fs_box box = fs_transform_box(t, write && !t->round_trip ? t->nstages - 1 : 0, 0, 0);
    fs_io_map m = write ? fs_transform_write_map(t, &box) : fs_transform_read_map(t, &box);
    if (!fs_dtype_is_real(write ? t->out_type : t->in_dtype) || m.mem_stride_last == 1)
        return 0;
    return fs_box_elems(&box) * (int64_t)fs_dtype_bytes(t->work_type) / 2;
}

/* The staging of a real field in complex slots (FS_IO_STAGE_BYTES). The
 * first INPUT's read comes before anything else is resident but the data
 * buffer: on the 1-D four-step, on one rank it counts only where it is
 * larger than what the later phases add (later: their bytes besides the
 * data buffer), with an exchange, whose buffers outweigh it, only where the
 * sums per bin or a later INPUT's turn come after (measured: 1.5 to 2.5
 * MiB more than without on 2 to 4 ranks); elsewhere always (2-D and 3-D
 * reads were 1 to 4 MiB above the figure without it). The write (a round
 * trip's too) and --check's reread come with the exchange buffers
 * resident, and a later INPUT's read with a result kept besides: on top.
 * exchange: whether the run has one. */
static int64_t staging_io_bytes(const fs_transform *t, const fs_footprint_keeps *keeps,
                                int exchange, int64_t later)
{
    int64_t read = staged_real_bytes(t, 0), write = staged_real_bytes(t, 1);
    read = read < FS_IO_STAGE_BYTES ? read : FS_IO_STAGE_BYTES;
    write = write < FS_IO_STAGE_BYTES ? write : FS_IO_STAGE_BYTES;
    int first = !t->fold || (exchange ? keeps->stage_bytes + keeps->stage_end_bytes > 0 ||
                                            keeps->later_inputs
                                      : later < read);
    int64_t bytes = first || keeps->check ? read : 0;
    bytes = bytes > write ? bytes : write;
    return bytes + (keeps->later_inputs ? read : 0);
}

/* --boundary=free: the Green's function's table every rank holds
 * (compute/green.h): prod (n_a + 1) doubles over the transformed axes. */
static int64_t green_bytes(const fs_transform_request *rq)
{
    int64_t n = 1;
    for (int a = 0; a < rq->ndim; a++)
        if (rq->transform_axis[a])
            n *= rq->data_shape[a] + 1;
    return n * (int64_t)sizeof(double);
}

/* The largest prime factor of m > 1. */
static int64_t largest_factor(int64_t m)
{
    int64_t f = 1;
    for (int64_t d = 2; d * d <= m; d++)
        for (; m % d == 0; m /= d)
            f = d;
    return m > 1 ? m : f;
}

/* FFTW's own memory for the lines of a long real axis held whole on a rank
 * (the 1-D cosine, sine and complex-to-real transforms, which have no
 * four-step), in tenths of a line of the axis's n reals: its buffers and
 * tables, which depend on how FFTW plans the length it transforms
 * (buffered, indirect, generic and Rader's passes, by that length's
 * largest prime factor p): the most measured with FFTW 3.3 in about 220
 * runs of lengths from 2^16 to 3000000, single and double, 1 to 4 ranks. 1.1
 * lines for a complex-to-real transform; for the cosine and sine
 * transforms of types 2 to 4 2.4 lines where p <= 5 (2.7 for type 4;
 * measured up to 2.13 and 2.50, and the peak's own spread of 0.5 MiB),
 * 3.8 up to PRIME_FACTOR (3.69), 4.8 above (4.61) and 8.5 where p > n / 2
 * (6.6 to 8.3: Rader's algorithm on the whole line); type 1 is a real
 * transform of 2 (n -+ 1) points, p that length's: 2.3 lines where p <= 5
 * (1.95 to 2.03), 6.2 up to 65536 (1.74 to 5.93), 7.5 above where
 * p < n / 2 (3.5 to 7.33) and 10.5 where not (5.9 to 10.24). Lengths of
 * the same class take from a third of that to all of it: the figure of a
 * line that series_bytes cannot measure (longer than
 * FS_FFTWMEM_MAX_LINE_BYTES, or of a 2-D or 3-D array). Shorter lines are
 * inside PLANS_BYTES. */
#define LONG_LINE ((int64_t)1 << 16)
#define PRIME_FACTOR 1024
static int line_tenths(const fs_transform *t, int a, int64_t n)
{
    fs_r2r k = t->r2r[a];
    if (k == FS_AXIS_FFT)
        return a == t->real_axis ? 11 : 0;
    if (k == FS_DCT1 || k == FS_DST1) {
        int64_t p = largest_factor(2 * (k == FS_DCT1 ? n - 1 : n + 1));
        return p <= 5 ? 23 : p <= 65536 ? 62 : 2 * p < n ? 75 : 105;
    }
    int64_t p = largest_factor(n);
    return p <= 5 ? (k == FS_DCT4 || k == FS_DST4 ? 27 : 24)
           : p <= PRIME_FACTOR ? 38
           : 2 * p <= n ? 48
                        : 85;
}

/* The length of the lines FFTW plans along input axis a (the halved
 * axis: its real length). */
static int64_t line_length(const fs_transform *t, int a)
{
    return a == t->real_axis ? t->real_len : t->in_shape[a];
}

static int64_t long_line_bytes(const fs_transform *t)
{
    int64_t bytes = 0, real = t->prec == FS_SINGLE ? 4 : 8;
    for (int a = 0; a < t->in_ndim && !t->fold; a++) {
        int64_t n = line_length(t, a);
        if (t->transform_axis[a] && n > LONG_LINE)
            bytes += n * real * line_tenths(t, a, n) / 10;
    }
    return bytes;
}

/* FFTW's buffers for the lines of an axis whose largest prime factor is
 * above PRIME_FACTOR (Rader's and Bluestein's algorithms), where
 * series_bytes does not measure them: up to 9.5
 * lines of n complex values for a complex transform on one rank, 6.5 on
 * one of several (gathered there: 3 lines fewer, whatever the prime), 7
 * for the halved axis of a real one through a complex transform, 3.6 in
 * FFTW's padded real layout, as measured with FFTW 3.3 for eleven primes
 * from 262139 to 2000003 on 1 to 4 ranks and 114 random lengths (the
 * complex ones 7.4 to 9.2 lines on one rank, 4.3 to 6.2 on several, as
 * the planner picks the plans it pads to; the real ones of single
 * precision up to 3.5 and 6.8); the 1-D four-step's lines are its factors
 * n1 and n2. A long line (MEDIUM_LINE or more points) of a 2-D or 3-D
 * array whose largest prime factor is above FFTW's codelets (16) holds 3
 * lines (40687x11x8 with --check, 36212x97 on 2 ranks: 1.0 and 1.3 MiB
 * beyond the plans' allowance), a halved real axis 1.5. An
 * inverse plan beside the forward one adds lines of its own, whatever the
 * forward's class: 5.6 in a round trip, 2.1 with --check or the
 * correlation function (1.3 and 0.1 in the padded real layout, whose
 * inverse finds the forward's tables), as measured for seven primes from
 * 262139 to 1999993 and 1000015 (5 x 200003), single and double, on 1 to
 * 4 ranks (they were taken as 0.7 and 0.3 of the forward's lines: up to
 * 1.36 times the peak with --check); a medium line's inverse adds
 * 0.7 and 0.3 of its lines (inverse_of). */
#define MEDIUM_LINE 4096
#define CODELET_FACTOR 16
typedef enum { NO_INVERSE, CHECK_INVERSE, ROUND_TRIP } inverse_of;

static inverse_of inverse_plan(const fs_transform_request *rq, const fs_footprint_keeps *keeps)
{
    return rq->round_trip ? ROUND_TRIP : keeps->undo || keeps->check ? CHECK_INVERSE : NO_INVERSE;
}

/* Tenths of a line: the forward's, and what its inverse adds (padded: in
 * FFTW's padded real layout). */
static int64_t prime_tenths(int64_t forward, int padded, inverse_of inv)
{
    static const int64_t inverse[2][3] = {{0, 21, 56}, {0, 1, 13}}; /* others, padded real */
    return forward + inverse[padded][inv];
}

static int64_t prime_line_bytes(const fs_transform *t, inverse_of inv)
{
    static const int64_t medium_share[3] = {10, 13, 17}; /* tenths of the forward's */
    int64_t bytes = 0, cb = (int64_t)fs_complex_bytes(t->prec);
    if (t->fold) {
        int64_t f[2] = {t->n1, t->n2};
        for (int i = 0; i < 2; i++)
            if (f[i] > 1 && largest_factor(f[i]) > PRIME_FACTOR)
                bytes += f[i] * cb * prime_tenths(95, 0, inv) / 10;
        return bytes;
    }
    for (int a = 0; a < t->in_ndim; a++) {
        int64_t n = line_length(t, a);
        int r2r_line = t->r2r[a] != FS_AXIS_FFT && n > LONG_LINE; /* in line_tenths */
        int64_t p = t->transform_axis[a] && n > 1 && !r2r_line ? largest_factor(n) : 1;
        int padded = a == t->real_axis && t->padded;
        int64_t forward = padded ? 36 : a == t->real_axis ? 70
                          : t->grid[0] * t->grid[1] > 1 ? 65 : 95;
        if (p > PRIME_FACTOR)
            bytes += n * cb * prime_tenths(forward, padded, inv) / 10;
        else if (p > CODELET_FACTOR && t->in_ndim > 1 && n >= MEDIUM_LINE)
            bytes += n * cb * (a == t->real_axis ? 15 : 30) * medium_share[inv] / 100;
    }
    return bytes;
}

/* What --check's second read holds besides its piece where it is a moment
 * of its own (the input open again: HDF5's and MPI-IO's buffers): DCT-IV
 * of 1859904 float32 points on one rank peaked 0.4 to 0.6 MiB above the
 * figure without it. */
#define CHECK_OPEN_BYTES ((int64_t)1 << 20)

/* A line of n points of kind as fftwmem.h measures it: its plans' bytes
 * (the forward's, the inverse's beside it), *exec raised to what running
 * them allocates and RSS_SLACK_BYTES (the kernel counts each thread's
 * pages 64 at a time, the main one's and MPI's: a measure fell short by up
 * to 0.25 MiB with half of it, DCT-IV of 1859904 float32 points with
 * --check), each rounded up
 * to MEASURE_GRAIN (malloc's count of the plans moves by a few hundred
 * bytes from one process to the next). Where the kernel does not let the
 * running be seen, the most measured: 2 lines of n complex values for a
 * complex transform, 2.5 for a real one in the padded layout with its
 * inverse (2.0 alone), 5 lines of the reals for a cosine or sine transform
 * (1.0 to 5.0). 0 when not measured. */
#define RSS_SLACK_BYTES ((int64_t)512 << 10)
#define MEASURE_GRAIN ((int64_t)64 << 10)
static int64_t grain(int64_t bytes)
{
    return (bytes + MEASURE_GRAIN - 1) / MEASURE_GRAIN * MEASURE_GRAIN;
}

static int64_t measured_line(const fs_transform *t, int64_t n, fs_line_kind kind, fs_r2r r2r,
                             inverse_of inv, int64_t *exec)
{
    fs_fftwmem m = fs_fftwmem_line(n, kind, r2r, t->prec, inv != NO_INVERSE);
    if (!m.forward)
        return 0;
    int64_t cb = (int64_t)fs_complex_bytes(t->prec);
    int64_t most = kind == FS_LINE_C2C   ? n * cb * 2
                   : kind == FS_LINE_R2C ? n * cb * 25 / 10
                                         : n * cb / 2 * 5;
    int64_t e = m.exec >= 0 ? grain(m.exec + RSS_SLACK_BYTES) : most;
    *exec = e > *exec ? e : *exec;
    return grain(m.forward + (inv != NO_INVERSE ? m.inverse : 0));
}

/* A 1-D series' line of more than LONG_LINE points whose FFTW plans no
 * table by class can follow (a prime factor above PRIME_FACTOR; a cosine or
 * sine transform whose FFT length has one above 5, or with an inverse:
 * 1048576 points' DCT-II with --check was 1.22 times the peak), whole on
 * the rank that transforms it: as measured (measured_line), which costs a
 * transform of the line; *exec what its running allocates, there only
 * while it runs. 0 where the tables apply: a shorter line (its plans are a
 * few MiB at most), lengths of small factors, a line too long to be
 * measured, and the four-step's lines, whose plans its overlap and
 * twiddles multiply (1000015 = 5 x 200003 on 2 ranks: 2 plans of 200003
 * points, 4 with --check; 1000018 = 2 x 500009: 1 and 2). */
static int64_t series_bytes(const fs_transform *t, inverse_of inv, int64_t *exec)
{
    *exec = 0;
    if (t->in_ndim != 1 || t->fold || !t->transform_axis[0])
        return 0;
    int64_t n = line_length(t, 0);
    fs_r2r r2r = t->r2r[0];
    fs_line_kind kind = r2r != FS_AXIS_FFT                 ? FS_LINE_R2R
                        : t->real_axis == 0 && t->padded ? FS_LINE_R2C
                                                          : FS_LINE_C2C;
    int64_t fft_n = r2r == FS_DCT1 ? 2 * (n - 1) : r2r == FS_DST1 ? 2 * (n + 1) : n;
    int64_t p = largest_factor(fft_n);
    int tabled = kind == FS_LINE_R2R ? p <= 5 && inv == NO_INVERSE : p <= PRIME_FACTOR;
    if (n <= LONG_LINE || tabled)
        return 0;
    int64_t bytes = measured_line(t, n, kind, r2r, inv, exec);
    if (!bytes)
        *exec = 0;
    return bytes;
}

/* The plans of the cosine and sine axes that run through complex FFTs
 * (fs_r2r_fast, on the whole array's lines: a rank's may be fewer): each
 * holds fs_r2r_fast_bytes, and a forward and an inverse (--check, the
 * operators' round trip) may be held at once. */
static int64_t fast_line_bytes(const fs_transform *t)
{
    int64_t bytes = 0, elems = 1;
    size_t complex_bytes = fs_complex_bytes(t->prec);
    for (int a = 0; a < t->in_ndim; a++)
        elems *= t->in_shape[a];
    for (int a = 0; a < t->in_ndim; a++) {
        int64_t n = t->in_shape[a];
        int64_t lines = n > 0 ? elems / n * (fs_dtype_is_real(t->work_type) ? 1 : 2) : 0;
        if (t->transform_axis[a] && fs_r2r_fast(t->r2r[a], n, lines))
            bytes += 2 * fs_r2r_fast_bytes(n, complex_bytes);
    }
    return bytes;
}

/* What a source leaves resident once it has freed its buffers (malloc's
 * heap, HDF5's free lists), under the transform that follows: measured 0.6
 * to 3 MiB after painting 2^20 to 2^24 particles on 1 to 4 ranks, the
 * transform's buffers reusing a part; at most the source's own bytes. */
#define SOURCE_LEFT_BYTES ((int64_t)2048 * 1024)

void fs_footprint_add_source(fs_footprint *fp, int64_t bytes)
{
    fp->source_phase_bytes = bytes ? fp->before_bytes + bytes : 0;
    fp->total_bytes += bytes < SOURCE_LEFT_BYTES ? bytes : SOURCE_LEFT_BYTES;
    if (fp->source_phase_bytes > fp->total_bytes)
        fp->total_bytes = fp->source_phase_bytes;
}

/* What is resident before the first INPUT's boxes are made
 * (fs_footprint_add_source): the exchanges' buffers but the second array
 * are untouched till the first exchange, the sums per bin till the first
 * result is binned; both come before a later INPUT's turn. */
static int64_t before_bytes(const fs_footprint *fp, const rank_need *need,
                            const fs_footprint_keeps *keeps)
{
    int later = keeps->later_inputs > 0;
    int64_t exchange = later || need->second_bytes > fp->exchange_bytes ? fp->exchange_bytes
                                                                         : need->second_bytes;
    return fp->library_bytes + fp->array_bytes + exchange + PLANS_BYTES + fp->cross_bytes +
           keeps->stage_bytes - (later ? 0 : keeps->stage_sums_bytes);
}

fs_status fs_footprint_of(const fs_transform_request *rq, const fs_exchange_ops *ops,
                          const fs_exchange_params *params, const fs_footprint_keeps *keeps,
                          int io_thread, fs_footprint *out)
{
    memset(out, 0, sizeof *out);
    fs_transform t;
    fs_transform_request with = *rq;
    with.hooks = ops && ops->uses_hooks;
    fs_status st = fs_transform_plan(&with, &t);
    if (st != FS_OK)
        return st;
    if (!t.exchanges)
        ops = NULL;
    rank_need need;
    if ((st = largest_need(&t, ops, params, keeps, io_thread, &need)) != FS_OK)
        return st;
    out->ops = ops;
    out->array_elems = need.array_elems;
    memcpy(out->messages, need.messages, sizeof out->messages);
    out->array_bytes = resident(need.array_elems * (int64_t)fs_dtype_bytes(t.work_type));
    out->exchange_bytes = need.scratch_bytes;
    out->library_bytes = LIBRARY_BYTES + shared_bytes(rq->nranks);
    /* the kept results are malloc's, not fs_buffer_alloc's: no huge pages */
    out->cross_bytes = keeps->cross * need.kept_elems * (int64_t)fs_dtype_bytes(t.work_type);
    out->green_bytes = rq->free_space ? resident(green_bytes(rq)) : 0;
    out->stage_sums_bytes = keeps->stage_sums_bytes;
    /* the stages' end comes once the kept results are freed: the larger counts */
    out->stage_bytes = keeps->stage_bytes + (keeps->stage_end_bytes > out->cross_bytes
                                                 ? keeps->stage_end_bytes - out->cross_bytes
                                                 : 0);
    int64_t later = out->exchange_bytes + out->cross_bytes + out->green_bytes + out->stage_bytes;
    int64_t exec, series = series_bytes(&t, inverse_plan(rq, keeps), &exec);
    out->plans_io_bytes = PLANS_BYTES + (keeps->undo ? UNDO_BYTES : 0) + fast_line_bytes(&t) +
                          (series ? series
                                  : long_line_bytes(&t) +
                                        prime_line_bytes(&t, inverse_plan(rq, keeps)));
    /* What comes and goes besides: the staging of the read and the write
     * (the overlapped write's pieces, touched as they are written), and
     * --check's second read of the input in pieces (at most the array),
     * after the transforms. A series' FFT buffers are there only while it
     * runs, when none of them is, nor the sums per bin, touched only as
     * results are binned, nor the stages' end. */
    int64_t around = need.staging_bytes + staging_io_bytes(&t, keeps, ops != NULL, later);
    int64_t check = !keeps->check                               ? 0
                    : out->array_bytes < FS_CHECK_PIECE_BYTES ? out->array_bytes
                                                              : FS_CHECK_PIECE_BYTES;
    if (exec) {
        int64_t after = out->stage_bytes - keeps->stage_bytes + keeps->stage_sums_bytes;
        around += after + check + (check ? CHECK_OPEN_BYTES : 0);
        out->stage_bytes -= after;
    } else {
        out->plans_io_bytes += check;
    }
    out->plans_io_bytes += exec > around ? exec : around;
    out->total_bytes = out->array_bytes + out->exchange_bytes + out->plans_io_bytes +
                       out->library_bytes + out->cross_bytes + out->green_bytes +
                       out->stage_bytes;
    out->before_bytes = before_bytes(out, &need, keeps);
    return FS_OK;
}
