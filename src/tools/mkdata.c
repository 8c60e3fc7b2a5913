/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fftshard-mkdata: write a synthetic input array in parallel.
 * Each rank generates and writes its slab along axis 0; the values depend on
 * the seed only (see synth.h; a --power-law field is computed by the ranks
 * together, see grf.h), so the file is the same on any rank count. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/atomic.h"
#include "core/collective.h"
#include "io/h5common.h"
#include "core/errors.h"
#include "tools/grf.h"
#include "io/h5io.h"
#include "core/layout.h"
#include "core/signals.h"
#include "tools/synth.h"

typedef struct mkdata_options {
    int64_t shape[FS_LAYOUT_MAX_DIMS];
    int ndim;
    fs_dtype type;
    uint64_t seed;
    int waves;
    int power_law;                      /* --power-law given: a Gaussian random field */
    const char *power_table;            /* --power-table=FILE: one of P(k) tabulated */
    double index, amplitude;            /* n and A of P(k) = A k^n */
    int amplitude_given;
    int nbox;                           /* --box-size: 0 (n_a), 1 (every axis) or ndim values */
    double box_size[FS_LAYOUT_MAX_DIMS];
    double particles;                   /* --particles=NBAR: a snapshot of a Poisson sample */
    int gaussian;                       /* --charge (1) or --potential (2): synth.h */
    double sigma;
    int force, quiet, help, version;
    char *file, *dataset;
} mkdata_options;

/* The definition the attributes of a --power-law field refer to (grf.h). */
#define GRF_CONVENTION                                                                        \
    "P(k) = amplitude * |k|^power_law_index = <|X(k)|^2> V / N^2, X the unnormalised "      \
    "forward FFT, k_a = 2 pi f_a / box_size_a, f_a = numpy.fft.fftfreq(n_a, 1/n_a), "       \
    "V = prod box_size_a, N points; P(0) = 0"

#define TABLE_CONVENTION                                                                      \
    "P(k) = <|X(k)|^2> V / N^2 interpolated linearly in the table power_table (k P), X the "  \
    "unnormalised forward FFT, k_a = 2 pi f_a / box_size_a, f_a = numpy.fft.fftfreq(n_a, "    \
    "1/n_a), V = prod box_size_a, N points; P(0) = 0"

enum { OPT_POWER_LAW = 256, OPT_AMPLITUDE, OPT_BOX_SIZE, OPT_POWER_TABLE, OPT_PARTICLES,
       OPT_CHARGE, OPT_POTENTIAL };

/* A whole finite number; 0 on success. */
static int parse_finite(const char *arg, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(arg, &end);
    return errno || end == arg || *end != '\0' || !isfinite(*v);
}

/* --box-size=L or L0,L1,...: positive lengths. */
/* The word getopt_long could not take, named as given: a short option
 * inside a word (-4x4) leaves optind on that word, the last one of a word
 * past it. */
static fs_status unknown_option(int argc, char **argv)
{
    const char *word = argv[optind - 1];
    if (optopt > 0 && optind < argc && argv[optind][0] == '-' && argv[optind][1] != '-' &&
        strchr(argv[optind] + 1, optopt))
        word = argv[optind];
    if (optopt > 0 && strlen(word) > 2 && word[1] != '-')
        return fs_error_set(FS_ERR_USAGE, "'%s': unknown option '-%c'", word, optopt);
    return fs_error_set(FS_ERR_USAGE, "'%s': unknown option", word);
}

static fs_status parse_box_size(const char *arg, mkdata_options *o)
{
    const char *p = arg;
    o->nbox = 0;
    for (;;) {
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (errno || end == p || (*end != ',' && *end != '\0') || !isfinite(v) || !(v > 0) ||
            v > 1e300 || o->nbox == FS_LAYOUT_MAX_DIMS)
            return fs_error_set(FS_ERR_USAGE,
                                "--box-size=%s: expected a positive length or one per axis, "
                                "like 100 or 100,100,50",
                                arg);
        o->box_size[o->nbox++] = v;
        if (*end == '\0')
            return FS_OK;
        p = end + 1;
    }
}

/* After the shape is known: what --power-law needs and refuses. */
static fs_status check_power_law(mkdata_options *o)
{
    if (o->power_table && (o->power_law || o->amplitude_given))
        return fs_error_set(FS_ERR_USAGE, "--power-table and --%s: choose one",
                            o->power_law ? "power-law" : "amplitude");
    if (o->power_table)
        o->power_law = 1; /* a Gaussian random field all the same */
    if (o->particles && (!o->power_law || o->ndim > 3))
        return fs_error_set(FS_ERR_USAGE, "--particles: %s", o->ndim > 3
                            ? "positions of at most 3 axes" : "samples a field of --power-law "
                            "or --power-table");
    if (o->particles)
        o->type = FS_DTYPE_FLOAT64; /* the field sampled, not written */
    if (o->gaussian && (o->power_law || o->waves || o->particles))
        return fs_error_set(FS_ERR_USAGE, "--%s and --%s: choose one",
                            o->gaussian == 1 ? "charge" : "potential",
                            o->power_law ? "power-law" : o->waves ? "waves" : "particles");
    if (o->gaussian && o->ndim != 1 && o->ndim != 3)
        return fs_error_set(FS_ERR_USAGE, "--%s: a field of 1 or 3 axes (got %d)",
                            o->gaussian == 1 ? "charge" : "potential", o->ndim);
    if (!o->power_law && !o->gaussian) {
        if (o->amplitude_given || o->nbox)
            return fs_error_set(FS_ERR_USAGE, "--%s needs --power-law",
                                o->amplitude_given ? "amplitude" : "box-size");
        return FS_OK;
    }
    if (o->waves)
        return fs_error_set(FS_ERR_USAGE, "--%s and --waves: choose one",
                            o->power_table ? "power-table" : "power-law");
    if (o->nbox > 1 && o->nbox != o->ndim)
        return fs_error_set(FS_ERR_USAGE, "--box-size: %d lengths for %d axes", o->nbox, o->ndim);
    for (int a = 0; a < o->ndim; a++)
        o->box_size[a] = o->nbox == 0   ? (double)o->shape[a]
                         : o->nbox == 1 ? o->box_size[0]
                                        : o->box_size[a];
    return FS_OK;
}

static void print_help(FILE *out)
{
    fprintf(out,
            "Usage: mpiexec -n P fftshard-mkdata [OPTIONS] SHAPE OUTPUT\n"
            "Write a synthetic array of the given SHAPE (e.g. 256x256x256) to OUTPUT\n"
            "(FILE.h5 or FILE.h5:/path; default dataset /data), in parallel.\n"
            "\n"
            "  -t, --type=TYPE   complex128 (default), complex64, float64 or float32\n"
            "  -s, --seed=N      seed of the values, 0 to 2^64-1 (default 1); same file on\n"
            "                    any rank count\n"
            "  -w, --waves=K     a sum of K plane waves (at most %d) instead of uniform\n"
            "                    noise in [-1, 1); wave vectors and amplitudes are stored\n"
            "                    as attributes, so the spectrum is known exactly\n"
            "      --power-law=N a Gaussian random field of power spectrum A k^N instead\n"
            "                    (real; complex types get zero imaginary parts)\n"
            "      --amplitude=A A of --power-law (default 1)\n"
            "      --power-table=FILE  a Gaussian random field of the power spectrum\n"
            "                    tabulated in FILE (lines k P, k increasing, covering\n"
            "                    the grid's nonzero |k|; linear between rows)\n"
            "      --box-size=L  the field's box length of every axis, or L0,L1,...\n"
            "                    one per axis (default the axis lengths)\n"
            "      --particles=NBAR  a particle snapshot instead: a Poisson sample of\n"
            "                    NBAR (1 + delta) per cell of the field delta, uniform\n"
            "                    in the cell (/PartType1/Coordinates, /Header)\n"
            "      --charge=SIGMA  a unit Gaussian charge of width SIGMA at the box's\n"
            "                    centre instead (1 or 3 axes, cell-centred points)\n"
            "      --potential=SIGMA  its potential in free space (laplacian = charge)\n"
            "  -f, --force       replace OUTPUT if it exists\n"
            "  -q, --quiet       print nothing on success\n"
            "  -h, --help        show this help and exit\n"
            "  -V, --version     show the version and exit\n",
            FS_SYNTH_MAX_WAVES);
}

static fs_status parse(int argc, char **argv, mkdata_options *o)
{
    static const struct option longs[] = {
        {"type", required_argument, NULL, 't'}, {"seed", required_argument, NULL, 's'},
        {"waves", required_argument, NULL, 'w'}, {"force", no_argument, NULL, 'f'},
        {"quiet", no_argument, NULL, 'q'},      {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {"power-law", required_argument, NULL, OPT_POWER_LAW},
        {"amplitude", required_argument, NULL, OPT_AMPLITUDE},
        {"box-size", required_argument, NULL, OPT_BOX_SIZE},
        {"power-table", required_argument, NULL, OPT_POWER_TABLE},
        {"particles", required_argument, NULL, OPT_PARTICLES},
        {"charge", required_argument, NULL, OPT_CHARGE},
        {"potential", required_argument, NULL, OPT_POTENTIAL},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->type = FS_DTYPE_COMPLEX128;
    o->seed = 1;
    o->amplitude = 1;
    opterr = 0;
    int c;
    char *end;
    while ((c = getopt_long(argc, argv, ":t:s:w:fqhV", longs, NULL)) != -1) {
        switch (c) {
        case 't':
            if (strcmp(optarg, "complex128") == 0)
                o->type = FS_DTYPE_COMPLEX128;
            else if (strcmp(optarg, "complex64") == 0)
                o->type = FS_DTYPE_COMPLEX64;
            else if (strcmp(optarg, "float64") == 0)
                o->type = FS_DTYPE_FLOAT64;
            else if (strcmp(optarg, "float32") == 0)
                o->type = FS_DTYPE_FLOAT32;
            else
                return fs_error_set(FS_ERR_USAGE,
                                    "--type=%s: expected complex128, complex64, float64 or float32",
                                    optarg);
            break;
        case 's':
            errno = 0;
            o->seed = strtoull(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || *optarg == '-' || errno == ERANGE)
                return fs_error_set(FS_ERR_USAGE, "--seed=%s: expected an integer from 0 to %" PRIu64,
                                    optarg, UINT64_MAX);
            break;
        case 'w': {
            long w = strtol(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || w < 1 || w > FS_SYNTH_MAX_WAVES)
                return fs_error_set(FS_ERR_USAGE, "--waves=%s: expected 1 to %d", optarg,
                                    FS_SYNTH_MAX_WAVES);
            o->waves = (int)w;
            break;
        }
        case OPT_POWER_LAW:
            if (parse_finite(optarg, &o->index) || fabs(o->index) > 10)
                return fs_error_set(FS_ERR_USAGE,
                                    "--power-law=%s: expected a spectral index from -10 to 10",
                                    optarg);
            o->power_law = 1;
            break;
        case OPT_AMPLITUDE:
            if (parse_finite(optarg, &o->amplitude) || !(o->amplitude > 0))
                return fs_error_set(FS_ERR_USAGE, "--amplitude=%s: expected a positive number",
                                    optarg);
            o->amplitude_given = 1;
            break;
        case OPT_POWER_TABLE:
            o->power_table = optarg;
            break;
        case OPT_PARTICLES:
            if (parse_finite(optarg, &o->particles) || !(o->particles > 0) || o->particles > 1e4)
                return fs_error_set(FS_ERR_USAGE, "--particles=%s: expected a mean number of "
                                    "particles per cell, above 0 and at most 10000", optarg);
            break;
        case OPT_CHARGE:
        case OPT_POTENTIAL:
            if (parse_finite(optarg, &o->sigma) || !(o->sigma > 0))
                return fs_error_set(FS_ERR_USAGE, "--%s=%s: expected a positive width",
                                    c == OPT_CHARGE ? "charge" : "potential", optarg);
            o->gaussian = c == OPT_CHARGE ? 1 : 2;
            break;
        case OPT_BOX_SIZE:
            if (parse_box_size(optarg, o) != FS_OK)
                return fs_error_status();
            break;
        case 'f': o->force = 1; break;
        case 'q': o->quiet = 1; break;
        case 'h': o->help = 1; return FS_OK;
        case 'V': o->version = 1; return FS_OK;
        case ':': return fs_error_set(FS_ERR_USAGE, "'%s': the option needs a value", argv[optind - 1]);
        default:
            return unknown_option(argc, argv);
        }
    }
    if (argc - optind != 2)
        return fs_error_set(FS_ERR_USAGE, "expected SHAPE and OUTPUT");
    o->ndim = fs_parse_shape(argv[optind], o->shape);
    if (o->ndim < 0)
        return fs_error_set(FS_ERR_USAGE,
                            "'%s': expected a shape like 64x48x30 (1 to %d positive lengths, at "
                            "most %s elements)",
                            argv[optind], FS_LAYOUT_MAX_DIMS, FS_MAX_ELEMS_TEXT);
    if (check_power_law(o) != FS_OK)
        return fs_error_status();
    if (fs_split_location(argv[optind + 1], &o->file, &o->dataset) != FS_OK)
        return fs_error_status();
    return FS_OK;
}

/* Rank 0 (fs_atomic_commit_collective): the file into place. */
typedef struct {
    const char *tmp, *file;
    int force;
} commit_args;

static fs_status commit_file(void *arg)
{
    const commit_args *a = arg;
    return fs_atomic_place(a->tmp, a->file, a->force);
}

/* Collective: what made the values, on the dataset. */
static fs_status write_attrs(fs_h5_output *out, const mkdata_options *o, const fs_synth *synth)
{
    int64_t seed = (int64_t)o->seed;
    fs_status st = fs_h5_output_attr_int64s(out, "seed", -1, &seed);
    const char *generator = o->power_law      ? "gaussian random field"
                            : o->waves        ? "plane waves"
                            : o->gaussian == 1 ? "gaussian charge"
                            : o->gaussian == 2 ? "gaussian potential"
                                               : "uniform noise";
    if (st == FS_OK)
        st = fs_h5_output_attr_string(out, "generator", generator);
    if (st == FS_OK && o->gaussian) {
        int64_t dims = o->ndim;
        st = fs_h5_output_attr_numbers(out, "sigma", 0, NULL, FS_DTYPE_FLOAT64, &o->sigma);
        if (st == FS_OK)
            st = fs_h5_output_attr_numbers(out, "box_size", 1, &dims, FS_DTYPE_FLOAT64,
                                           o->box_size);
    }
    if (st == FS_OK && o->power_law) {
        int64_t dims = o->ndim;
        if (o->power_table)
            st = fs_h5_output_attr_string(out, "power_table", o->power_table);
        else
            st = fs_h5_output_attr_numbers(out, "power_law_index", 0, NULL, FS_DTYPE_FLOAT64,
                                           &o->index);
        if (st == FS_OK && !o->power_table)
            st = fs_h5_output_attr_numbers(out, "amplitude", 0, NULL, FS_DTYPE_FLOAT64,
                                           &o->amplitude);
        if (st == FS_OK)
            st = fs_h5_output_attr_numbers(out, "box_size", 1, &dims, FS_DTYPE_FLOAT64,
                                           o->box_size);
        if (st == FS_OK)
            st = fs_h5_output_attr_string(out, "convention",
                                          o->power_table ? TABLE_CONVENTION : GRF_CONVENTION);
    }
    if (st == FS_OK && o->waves) {
        int64_t dims[2] = {synth->nwaves, o->ndim};
        int64_t k[FS_SYNTH_MAX_WAVES * FS_LAYOUT_MAX_DIMS];
        double amp[FS_SYNTH_MAX_WAVES * 2];
        for (int w = 0; w < synth->nwaves; w++) {
            memcpy(&k[w * o->ndim], synth->k[w], (size_t)o->ndim * sizeof(int64_t));
            amp[2 * w] = synth->amp_re[w];
            amp[2 * w + 1] = synth->amp_im[w];
        }
        int64_t amp_dims[2] = {synth->nwaves, 2};
        st = fs_h5_output_attr_numbers(out, "wave_vectors", 2, dims, FS_DTYPE_INTEGER, k);
        if (st == FS_OK)
            st = fs_h5_output_attr_numbers(out, "wave_amplitudes", 2, amp_dims, FS_DTYPE_FLOAT64, amp);
    }
    return st;
}

/* Collective, before any work: --power-table's table, read by rank 0 and
 * shared, with P >= 0 and k covering the grid's nonzero |k| (status 3). */
static fs_status load_table(MPI_Comm comm, int rank, const mkdata_options *o, fs_table *t)
{
    t->column = "P";
    fs_status st = fs_table_load(comm, o->power_table, "--power-table=", t); /* agreed */
    if (st != FS_OK)
        return st;
    double kmin, kmax;
    fs_grf_k_range(o->ndim, o->shape, o->box_size, &kmin, &kmax);
    for (int i = 0; i < t->nrows && st == FS_OK; i++)
        if (t->v[i] < 0)
            st = fs_error_set(FS_ERR_INPUT, "--power-table=%s: P(%.17g) = %.17g: a power is not "
                              "negative", o->power_table, t->k[i], t->v[i]);
    if (st == FS_OK && kmax > 0 && (t->k[0] > kmin || t->k[t->nrows - 1] < kmax))
        st = fs_error_set(FS_ERR_INPUT, "--power-table=%s: the table's k from %.17g to %.17g "
                          "does not cover the grid's nonzero |k| from %.17g to %.17g",
                          o->power_table, t->k[0], t->k[t->nrows - 1], kmin, kmax);
    return fs_error_agree(comm, rank == 0 ? st : FS_OK);
}

/* --particles: this rank's cells of delta (float64, its slab box) sampled:
 * cell c holds Poisson(NBAR max(0, 1 + delta_c)) particles, each uniform
 * in the cell, drawn from (seed, c) alone so the file is the same on any
 * rank count. *pos (out, malloc'd): their positions, *count of them. */
static fs_status sample_cells(const mkdata_options *o, const fs_box *box, const double *delta,
                              double **pos, int64_t *count)
{
    int D = o->ndim;
    int64_t n = fs_box_elems(box), cap = (int64_t)(o->particles * (double)n * 1.5) + 64, m = 0;
    uint64_t seed = o->seed ^ 0x5DEECE66DULL; /* not the field's draws */
    double *x = malloc(sizeof(double) * (size_t)(cap * D));
    for (int64_t e = 0; x && e < n; e++) {
        int64_t idx[FS_LAYOUT_MAX_DIMS], rest = e, flat = 0;
        for (int a = D - 1; a >= 0; a--) {
            idx[a] = rest % box->count[a] + box->start[a];
            rest /= box->count[a];
        }
        for (int a = 0; a < D; a++)
            flat = flat * o->shape[a] + idx[a];
        double lam = o->particles * (1.0 + delta[e]), p = 1.0, limit = exp(-(lam > 0 ? lam : 0));
        uint64_t c = (uint64_t)flat << 20; /* 2^20 draws per cell at most */
        int64_t k = -1;
        do { /* Knuth's: the count of uniforms whose product stays above e^-lam */
            p *= 0.5 * (fs_synth_uniform(seed, c++) + 1.0);
            k++;
        } while (p > limit && k < 100000);
        for (int64_t j = 0; j < k; j++) {
            if (m == cap) {
                double *grown = realloc(x, sizeof(double) * (size_t)(2 * cap * D));
                if (!grown)
                    break;
                x = grown;
                cap *= 2;
            }
            for (int a = 0; a < D; a++)
                x[m * D + a] = ((double)idx[a] + 0.5 * (fs_synth_uniform(seed, c++) + 1.0)) *
                               o->box_size[a] / (double)o->shape[a];
            m++;
        }
    }
    *pos = x;
    *count = m;
    return x ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory for the particles");
}

/* --particles' /Header: Gadget's attributes, one file. */
static fs_status write_header(fs_h5_output *out, const mkdata_options *o, int64_t total)
{
    int64_t types = 6, lo[6] = {0, total & 0xFFFFFFFF}, hi[6] = {0, total >> 32}, one = 1,
            all[6] = {0, total}, dims = o->ndim;
    fs_status st = fs_h5_output_group(out, "/Header", 0);
    if (st == FS_OK)
        st = fs_h5_output_attr_numbers(out, "BoxSize", 1, &dims, FS_DTYPE_FLOAT64, o->box_size);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(out, "NumPart_Total", (int)types, lo);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(out, "NumPart_Total_HighWord", (int)types, hi);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(out, "NumPart_ThisFile", (int)types, all);
    if (st == FS_OK)
        st = fs_h5_output_attr_int64s(out, "NumFilesPerSnapshot", -1, &one);
    if (st == FS_OK)
        st = fs_h5_output_attr_numbers(out, "MeanPerCell", 0, NULL, FS_DTYPE_FLOAT64,
                                       &o->particles);
    return st;
}

/* Collective: the field's slab sampled, the rows of every rank written in
 * rank order into /PartType1/Coordinates of tmp, the Header beside. */
static fs_status write_particles(MPI_Comm comm, const mkdata_options *o, const fs_box *box,
                                 const double *delta, const char *tmp, int64_t *total)
{
    double *pos = NULL;
    int64_t mine = 0, before = 0;
    fs_status st = fs_error_agree(comm, sample_cells(o, box, delta, &pos, &mine));
    if (st == FS_OK && (MPI_Exscan(&mine, &before, 1, MPI_INT64_T, MPI_SUM, comm) != MPI_SUCCESS ||
                        MPI_Allreduce(&mine, total, 1, MPI_INT64_T, MPI_SUM, comm) != MPI_SUCCESS))
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Exscan of the particles' counts failed");
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    before = rank == 0 ? 0 : before;
    fs_h5_output *out = NULL;
    int64_t shape[2] = {*total, o->ndim};
    if ((st = fs_error_agree(comm, st)) == FS_OK)
        st = fs_error_agree(comm, fs_h5_output_new(comm, tmp, "/PartType1/Coordinates", 2, shape,
                                                   FS_DTYPE_FLOAT64, NULL, &out));
    fs_box rows = {.ndim = 2, .start = {before, 0}, .count = {mine, o->ndim}};
    fs_io_map map = fs_io_map_plain(&rows, FS_DTYPE_FLOAT64);
    if (st == FS_OK)
        st = fs_h5_output_write(out, &map, pos, 0, NULL, NULL);
    if (st == FS_OK)
        st = write_header(out, o, *total);
    fs_status closed = out ? fs_h5_output_close(&out) : FS_OK;
    free(pos);
    return fs_error_agree(comm, st != FS_OK ? st : closed);
}

/* Collective: the field written into tmp as `dataset`, with its attributes. */
static fs_status write_field(MPI_Comm comm, const mkdata_options *o, const fs_box *box,
                             const fs_synth *synth, void *buf, const char *tmp, const char *dataset)
{
    fs_h5_output *out = NULL;
    fs_status st = fs_h5_output_new(comm, tmp, dataset, o->ndim, o->shape, o->type, NULL, &out);
    if ((st = fs_error_agree(comm, st)) != FS_OK)
        return st;
    fs_io_map map = fs_io_map_plain(box, o->type);
    st = fs_h5_output_write(out, &map, buf, 0, NULL, NULL);
    if (st == FS_OK)
        st = write_attrs(out, o, synth);
    fs_status closed = fs_h5_output_close(&out);
    return fs_error_agree(comm, st != FS_OK ? st : closed);
}

/* Collective: generate and write the file. */
static fs_status generate(MPI_Comm comm, const mkdata_options *o, const fs_table *table)
{
    int rank, nranks;
    int err = MPI_Comm_rank(comm, &rank);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_size(comm, &nranks);
    if (err != MPI_SUCCESS)
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "cannot learn the ranks: %s",
                                                 fs_mpi_strerror(err)));
    const char *dataset = o->dataset ? o->dataset : "/data";
    char *tmp = NULL;
    fs_h5_output *out = NULL;
    void *buf = NULL;
    double t0 = MPI_Wtime();

    fs_status st = fs_atomic_begin(comm, o->file, NULL, o->force, &tmp);
    if (st != FS_OK)
        return st;
    fs_box box = fs_box_split(o->ndim, o->shape, 0, nranks, rank);
    int64_t n = fs_box_elems(&box);
    fs_synth synth;
    fs_synth_init(&synth, o->ndim, o->shape, o->seed, o->waves);
    buf = malloc((size_t)(n > 0 ? n : 1) * fs_dtype_bytes(o->type));
    st = buf ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory for %" PRId64 " elements", n);
    if ((st = fs_error_agree(comm, st)) != FS_OK)
        goto done;
    if (o->power_law) {
        fs_grf g = {.ndim = o->ndim, .index = o->index, .amplitude = o->amplitude, .seed = o->seed,
                    .table = table};
        memcpy(g.shape, o->shape, sizeof g.shape);
        memcpy(g.box_size, o->box_size, sizeof g.box_size);
        st = fs_grf_fill(comm, &g, &box, o->type, buf);
    } else if (o->gaussian) {
        fs_synth_gaussian(o->ndim, o->shape, o->box_size, o->sigma, o->gaussian == 2, &box,
                          o->type, buf);
    } else {
        fs_synth_fill(&synth, &box, o->type, buf);
    }
    if ((st = fs_error_agree(comm, st)) != FS_OK)
        goto done;
    int64_t total = 0;
    if (o->particles)
        st = write_particles(comm, o, &box, buf, tmp, &total); /* agreed */
    else
        st = write_field(comm, o, &box, &synth, buf, tmp, dataset);
    if (st != FS_OK)
        goto done;
    commit_args args = {tmp, o->file, o->force};
    st = fs_atomic_commit_collective(comm, commit_file, &args);
    if (st == FS_OK && rank == 0 && !o->quiet && o->particles) {
        fprintf(stderr, "fftshard-mkdata: wrote %s:/PartType1/Coordinates, %" PRId64 " particles "
                "on %d rank%s in %.2f s\n", o->file, total, nranks, nranks == 1 ? "" : "s",
                MPI_Wtime() - t0);
    } else if (st == FS_OK && rank == 0 && !o->quiet) {
        char shape[256];
        fs_format_shape(o->ndim, o->shape, shape, sizeof shape);
        double bytes = 1;
        for (int k = 0; k < o->ndim; k++)
            bytes *= (double)o->shape[k];
        bytes *= (double)fs_dtype_bytes(o->type);
        fprintf(stderr, "fftshard-mkdata: wrote %s:%s %s %s (%.1f MiB) on %d rank%s in %.2f s\n",
                o->file, dataset, shape, fs_dtype_name(o->type), bytes / 1048576.0, nranks,
                nranks == 1 ? "" : "s", MPI_Wtime() - t0);
    }
done:
    /* Open here only after a failure, whose message stands. */
    if (out) {
        fs_status cleanup = fs_h5_output_close(&out);
        st = st != FS_OK ? st : cleanup;
    }
    if (st != FS_OK)
        fs_atomic_abort(tmp);
    free(tmp);
    free(buf);
    return st;
}

/* Everything after MPI is up: the status every rank exits with. */
static fs_status run_command(MPI_Comm comm, int rank, int argc, char **argv)
{
    fs_status st = fs_error_agree(comm, fs_h5_init());
    if (st != FS_OK)
        return st;
    fs_signals_install(fs_atomic_remove_registered);
    mkdata_options o;
    st = parse(argc, argv, &o);
    if (st != FS_OK) {
        if (rank == 0) {
            fs_error_print();
            fprintf(stderr, "Try 'fftshard-mkdata --help' for more information.\n");
        }
    } else if (o.help) {
        if (rank == 0)
            print_help(stdout);
    } else if (o.version) {
        if (rank == 0)
            printf("fftshard-mkdata %s\n", PACKAGE_VERSION);
    } else {
        fs_table table = {0};
        if (o.power_table)
            st = load_table(comm, rank, &o, &table);
        if (st == FS_OK)
            st = generate(comm, &o, o.power_table ? &table : NULL);
        fs_table_free(&table);
    }
    free(o.file);
    free(o.dataset);
    return st;
}

int main(int argc, char **argv)
{
    fs_error_set_program("fftshard-mkdata");
    fs_h5_choose_mpio();
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "fftshard-mkdata: error: MPI_Init failed\n");
        return FS_ERR_RUNTIME;
    }
    MPI_Comm comm = MPI_COMM_NULL;
    int rank = 0;
    int err = MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_rank(comm, &rank);
    if (err != MPI_SUCCESS) {
        /* No agreement is possible without a communicator: end every rank. */
        fprintf(stderr, "fftshard-mkdata: error: cannot set up MPI: %s\n", fs_mpi_strerror(err));
        MPI_Abort(MPI_COMM_WORLD, FS_ERR_RUNTIME);
    }
    fs_status st = run_command(comm, rank, argc, argv);
    fflush(stdout);
    if ((err = MPI_Comm_free(&comm)) != MPI_SUCCESS) {
        fprintf(stderr, "fftshard-mkdata: error: MPI_Comm_free failed: %s\n", fs_mpi_strerror(err));
        st = st != FS_OK ? st : FS_ERR_RUNTIME;
    }
    /* After MPI_Finalize only the code can be shown, not its text. */
    if ((err = MPI_Finalize()) != MPI_SUCCESS) {
        fprintf(stderr, "fftshard-mkdata: error: MPI_Finalize failed (MPI error %d)\n", err);
        st = st != FS_OK ? st : FS_ERR_RUNTIME;
    }
    return (int)st;
}
