/* SPDX-License-Identifier: GPL-3.0-or-later */
/* options: see options.h.
 *
 * Every option is one line of the table `specs`: its names, whether it takes
 * a value, the field of fs_options it sets and the handler that checks and
 * stores the value. Options whose value is one of a few names carry a name
 * table, which also gives the names back (fs_norm_name) and the "expected"
 * list of their message. getopt_long's table is built from `specs`. */
#include "config.h"

#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/operators.h"
#include "analysis/vector.h"
#include "exchange/exchange.h"
#include "io/h5io.h"
#include <fftw3.h>
#include <hdf5.h>

#define MAX_PACKET_BYTES ((uint64_t)1 << 30)
#define MAX_QUEUES 1024
#define STRINGIFY(x) #x
#define XSTRINGIFY(x) STRINGIFY(x)

/* One accepted name of an option's value; tables end with a NULL name. */
typedef struct opt_name {
    const char *name;
    int value;
} opt_name;

static const opt_name norm_names[] = {
    {"backward", FS_NORM_BACKWARD}, {"ortho", FS_NORM_ORTHO}, {"forward", FS_NORM_FORWARD}, {NULL, 0}};
static const opt_name precision_names[] = {{"auto", FS_PRECISION_AUTO},
                                           {"single", FS_PRECISION_SINGLE},
                                           {"double", FS_PRECISION_DOUBLE},
                                           {NULL, 0}};
static const opt_name plan_names[] = {
    {"estimate", FS_PLAN_ESTIMATE}, {"measure", FS_PLAN_MEASURE}, {"patient", FS_PLAN_PATIENT}, {NULL, 0}};
static const opt_name decomp_names[] = {
    {"auto", FS_DECOMP_AUTO}, {"slab", FS_DECOMP_SLAB}, {"pencil", FS_DECOMP_PENCIL}, {NULL, 0}};
/* --compensate: the power p of the window sinc^p of each scheme. */
static const opt_name window_names[] = {
    {"none", 0}, {"ngp", 1}, {"cic", 2}, {"tsc", 3}, {"pcs", 4}, {NULL, 0}};
/* --dtype keeps the name itself: the values only tell the names apart. */
static const opt_name dtype_names[] = {
    {"float32", 0}, {"float64", 1}, {"complex64", 2}, {"complex128", 3}, {NULL, 0}};

/* set_enum stores a name's value through an int: the enums must be ints. */
_Static_assert(sizeof(fs_norm) == sizeof(int), "fs_norm is stored as an int");
_Static_assert(sizeof(fs_precision_choice) == sizeof(int), "fs_precision_choice is stored as an int");
_Static_assert(sizeof(fs_plan_effort) == sizeof(int), "fs_plan_effort is stored as an int");
_Static_assert(sizeof(fs_decomp) == sizeof(int), "fs_decomp is stored as an int");

static const opt_name *find_name(const opt_name *names, const char *name)
{
    for (; names->name; names++)
        if (strcmp(names->name, name) == 0)
            return names;
    return NULL;
}

/* "a, b or c": the names, for a message. */
static void list_names(const opt_name *names, char *out, size_t size)
{
    out[0] = '\0';
    for (int i = 0; names[i].name; i++) {
        const char *sep = i == 0 ? "" : names[i + 1].name ? ", " : " or ";
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%s%s", sep, names[i].name);
    }
}

/* The strategies that read a parameter (FS_EXCHANGE_USES_*), as "a, b and c". */
static void strategies_using(unsigned param, char *buf, size_t size)
{
    int n = 0, k = 0;
    for (int i = 0; fs_exchange_strategies[i]; i++)
        n += (fs_exchange_strategies[i]->params & param) != 0;
    buf[0] = '\0';
    for (int i = 0; fs_exchange_strategies[i]; i++) {
        if (!(fs_exchange_strategies[i]->params & param))
            continue;
        size_t used = strlen(buf);
        snprintf(buf + used, size - used, "%s%s", k == 0 ? "" : k == n - 1 ? " and " : ", ",
                 fs_exchange_strategies[i]->name);
        k++;
    }
}

/* The --help lines of the spectra and the operators (Fourier space). */
static void print_fourier_help(FILE *out)
{
    fputs(
        "Spectra (binned on the ranks; written into OUTPUT as /power_spectrum):\n"
        "      --power-spectrum    mean |X|^2 in shells of |k| one k_f wide; several\n"
        "                          INPUTs add their power (of u, v, w: E(k) =\n"
        "                          0.5 power modes / (V k_f) with --box-size)\n"
        "      --spectrum-only     the spectrum alone: no transformed array written;\n"
        "                          OUTPUT:/GROUP puts its group under GROUP\n"
        "      --cross             Re(X_a conj X_b) of two INPUTs (/cross_spectrum)\n"
        "      --box-size=L[,L..]  box length of the transformed axes (default each\n"
        "                          axis's length); power then times V / N^2\n"
        "      --bins=N|E0,E1,..   N equal bins up to the largest |k|, these edges,\n"
        "                          or KMIN:KMAX:DK; each [E_i, E_i+1), decided exactly\n"
        "      --los=AXIS          also bin by |mu| = |k_AXIS| / |k| (power_mu ...)\n"
        "      --mu-bins=N         mu bins with --los (default 5)\n"
        "      --multipoles=L,L..  with --los, the Legendre multipoles P_l(k) of\n"
        "                          even l (power_0, power_2, ...)\n"
        "      --spectrum-per=AXIS[,AXIS..]\n"
        "                          a spectrum per index of these batch axes\n"
        "                          (power[i, bin]) instead of one over them all\n"
        "      --compensate=ngp|cic|tsc|pcs  divide the power by the mass assignment\n"
        "                          window's W(k)^2, W = prod_a sinc(pi f_a / n_a)^p\n"
        "      --shot-noise=P0     subtract P0 from the power spectrum (recorded)\n"
        "      --correlation-function  xi(r): the mean of C = ifftn(|fftn(x)|^2) / N in\n"
        "                          shells of the minimum-image separation r, one cell\n"
        "                          wide (/correlation_function); x as given (pass the\n"
        "                          overdensity); with --cross, of the two INPUTs\n"
        "      --r-bins=N|E0,E1,..  N equal bins of r up to the largest, these edges,\n"
        "                          or RMIN:RMAX:DR; each [E_i, E_i+1); r in cells, or\n"
        "                          in box units with --box-size\n"
        "\n"
        "Operators (forward, multiply on the ranks, inverse: the field is written):\n"
        "      --apply=OP[,OP..]   in order: gaussian:R, tophat:R, sharpk:K,\n"
        "                          lowpass:K[:N], highpass:K[:N] (Butterworth order\n"
        "                          N, default 2), deriv:AXIS, laplacian,\n"
        "                          poisson (-1/k^2, 0 at k = 0),\n"
        "                          transfer:FILE (table k T, covering 0 .. max |k|);\n"
        "                          k = 2 pi fftfreq(n, 1/n) / L, L from --box-size\n"
        "\n"
        "Combined spectra (two INPUTs a, b of one shape; N points transformed):\n"
        "      --correlate         ifftn(X_a conj X_b) / N (/correlation); one INPUT:\n"
        "                          its autocorrelation\n"
        "      --convolve          ifftn(X_a X_b), circular (/convolution)\n"
        "      --phase-correlate   ifftn(R / |R|), R = X_a conj X_b (/phase_correlation);\n"
        "                          the peak's shift in the summary and the report\n"
        "      --vector=OP         of the components along the transformed axes x, y, z\n"
        "                          (one INPUT each): gradient (one INPUT: grad_x ..),\n"
        "                          curl (three: curl_x ..), divergence (divergence),\n"
        "                          helmholtz (solenoidal_x .., compressive_x ..);\n"
        "                          i k' with the Nyquist plane of an even axis 0\n"
        "\n",
        out);
}

void fs_options_print_help(FILE *out)
{
    fputs(
        "Usage: mpiexec -n P fftshard [OPTIONS] INPUT... OUTPUT\n"
        "Compute the N-dimensional FFT of an HDF5 dataset in parallel over MPI ranks.\n"
        "\n"
        "INPUT and OUTPUT are FILE.h5 or FILE.h5:/path/to/dataset. Without a path,\n"
        "INPUT's only dataset is used and OUTPUT gets the same dataset path. With\n"
        "several INPUTs, each result goes under its input's path in the one OUTPUT\n"
        "file, written as a whole or not at all. INPUT may end in a slice, numpy's\n"
        "basic slicing, read alone: FILE.h5:/path[0:64:2, :, -1] (STEP 1 or more,\n"
        "an index drops its axis, '...'; a name ending in ']' takes '[]' after it).\n"
        "The result is complex in natural order (complex64 for float32/complex64\n"
        "input, else complex128): element [k0,k1,...] equals\n"
        "numpy.fft.fftn(input)[k0,k1,...].\n"
        "\n"
        "Transform:\n"
        "      --inverse           inverse transform (numpy.fft.ifftn)\n"
        "      --norm=MODE         backward (default), ortho or forward, as in numpy\n"
        "      --axes=LIST         comma-separated axes to transform; negative counts\n"
        "                          from the end; default all axes\n"
        "      --real              real input (numpy.fft.rfftn); with --inverse, real\n"
        "                          output (numpy.fft.irfftn)\n"
        "      --last-size=N       length of the last transformed axis of the real\n"
        "                          output of --inverse --real (default: the input's\n"
        "                          last_size attribute, else 2*(m-1))\n"
        "      --precision=P       auto (default: single for float32/complex64 input),\n"
        "                          single or double\n"
        "      --check             verify the result (inverse round trip, Parseval);\n"
        "                          exit 5 and keep nothing above the tolerance\n"
        "      --check-tolerance=X relative error allowed (default 1e-9 double,\n"
        "                          1e-3 single)\n"
        "      --allow-nonfinite   transform input holding NaN or Inf (else exit 3);\n"
        "                          the result's NaN and Inf may lie elsewhere than\n"
        "                          numpy's\n"
        "\n"
        "Parallel algorithm:\n"
        "      --transpose=NAME    all-to-all exchange strategy; by default the fastest\n"
        "                          whose memory fits --mem-per-rank (else the node's\n"
        "                          available memory over its ranks), by auto's times\n"
        "                          in --wisdom, else the first in this order (of\n"
        "                          expected speed):\n",
        out);
    for (int i = 0; fs_exchange_strategies[i]; i++)
        fprintf(out, "                            %-9s %s\n", fs_exchange_strategies[i]->name,
                fs_exchange_strategies[i]->summary);
    fprintf(out, "                            %-9s %s\n", "auto",
            "time each on the real sizes, use the fastest");
    fprintf(out, "                            %-9s %s\n", FS_TRANSPOSE_DEFAULT,
            "the fastest that fits, as without --transpose");
    char packet[256], queues[256];
    strategies_using(FS_EXCHANGE_USES_PACKET, packet, sizeof packet);
    strategies_using(FS_EXCHANGE_USES_QUEUES, queues, sizeof queues);
    fprintf(out,
            "      --seed=N            random order seed (default 1)\n"
            "      --packet=BYTES      message piece for %s;\n"
            "                          K, M, G suffixes (default 1M)\n"
            "      --queues=L          output queues of %s (default 4)\n",
            packet, queues);
    fputs(
        "      --decomp=D          auto (default: slabs while every rank has data),\n"
        "                          slab or pencil\n"
        "      --grid=AxB          pencil process grid (A x B = ranks)\n"
        "      --plan=EFFORT       FFTW planning: estimate (default), measure, patient\n"
        "      --wisdom=FILE       read and update FFTW wisdom and auto's choices\n"
        "\n"
        "Planning a job (no data is read or written):\n"
        "      --dry-run           print the decomposition, local blocks, messages and\n"
        "                          memory per rank, then exit; INPUT optional (with\n"
        "                          --report=- piped into fftshard-predict PLATFORM: the\n"
        "                          strategies' times on a simulated machine)\n"
        "      --shape=SHAPE       the array's shape (e.g. 2048x2048x2048) instead of INPUT\n"
        "      --dtype=TYPE        its type: float32, float64, complex64, complex128\n"
        "      --ranks=N           plan for N ranks (default: this job's)\n"
        "      --mem-per-rank=B    memory per rank (K,M,G,T) the default strategy must\n"
        "                          fit; a dry run says whether the plan fits it and\n"
        "                          exits 1 when it does not\n"
        "\n"
        "Sharded files:\n"
        "      --shards            INPUT is a pattern with one number field\n"
        "                          (field.%04d.h5) or a file listing the shards\n"
        "      --shard-output[=N]  write N files (default one per rank) and OUTPUT as\n"
        "                          a virtual dataset that reads them as one array\n"
        "      --chunks=SHAPE      store the output in chunks of SHAPE (e.g. 16x64x64)\n"
        "      --deflate=LEVEL     compress the output chunks (shuffle + deflate 1-9)\n"
        "\n",
        out);
    print_fourier_help(out);
    fputs(
        "Output and messages:\n"
        "      --add               add the results to an existing OUTPUT, keeping its\n"
        "                          other datasets (with -f, replacing those of the\n"
        "                          same path); never through a link in OUTPUT, and\n"
        "                          refused (status 4) if OUTPUT changes meanwhile\n"
        "  -f, --force             replace OUTPUT if it exists\n"
        "      --report=FILE       write the timing and prefix-sum report as JSON\n"
        "                          (- for standard output); with --dry-run, the plan\n"
        "  -q, --quiet             no summary on stderr\n"
        "      --progress          progress lines on stderr during every phase\n"
        "  -v, --verbose           explain decisions; show HDF5 error stacks\n"
        "  -h, --help              show this help and exit\n"
        "  -V, --version           show version and library versions and exit\n"
        "\n"
        "Exit status: 0 success, 1 runtime failure, 2 usage error, 3 unusable input,\n"
        "4 output refused, 5 check failed.\n"
        "\n"
        "Example:\n"
        "  mpiexec -n 4 fftshard --axes=1,2 field.h5:/density spectrum.h5\n"
        "\n"
        "See fftshard(1) for file conventions and the exchange strategies.\n",
        out);
}

void fs_options_print_version(FILE *out)
{
    char mpi_version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    unsigned h5_major, h5_minor, h5_release;
    MPI_Get_library_version(mpi_version, &len);
    /* MPICH's string runs over several lines; its first line names it. */
    char *newline = strchr(mpi_version, '\n');
    if (newline)
        *newline = '\0';
    for (char *p = mpi_version; *p; p++)
        if (*p == '\t')
            *p = ' ';
    H5get_libversion(&h5_major, &h5_minor, &h5_release);
    fprintf(out, "fftshard %s\n", PACKAGE_VERSION);
    fprintf(out, "MPI: %s\n", mpi_version);
    fprintf(out, "HDF5: %u.%u.%u (parallel)\n", h5_major, h5_minor, h5_release);
    fprintf(out, "FFTW: %s\n", fftw_version);
}



/* Parse one integer; the whole text must be a number in [lo, hi]. */
static int parse_long(const char *text, long lo, long hi, long *value)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < lo || v > hi)
        return -1;
    *value = v;
    return 0;
}

static fs_status parse_axes(const char *text, fs_options *opts)
{
    char *copy = strdup(text);
    if (!copy)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    fs_status ret = FS_OK;
    int n = 0;
    char *save = NULL;
    if (text[0] == '\0' || text[strlen(text) - 1] == ',' || text[0] == ',' || strstr(text, ",,")) {
        ret = fs_error_set(FS_ERR_USAGE, "--axes=%s: expected a comma-separated list of axes", text);
        goto done;
    }
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        long axis;
        if (parse_long(tok, -FS_MAX_DIMS, FS_MAX_DIMS - 1, &axis) != 0) {
            ret = fs_error_set(FS_ERR_USAGE,
                               "--axes=%s: '%s' is not an axis (an integer from %d to %d)", text,
                               tok, -FS_MAX_DIMS, FS_MAX_DIMS - 1);
            goto done;
        }
        if (n == FS_MAX_DIMS) {
            ret = fs_error_set(FS_ERR_USAGE, "--axes=%s: more than %d axes", text, FS_MAX_DIMS);
            goto done;
        }
        for (int i = 0; i < n; i++) {
            if (opts->axes[i] == axis) {
                ret = fs_error_set(FS_ERR_USAGE, "--axes=%s: axis %ld given twice", text, axis);
                goto done;
            }
        }
        opts->axes[n++] = (int)axis;
    }
    opts->naxes = n;
done:
    free(copy);
    return ret;
}

static char *join_argv(int argc, char **argv)
{
    size_t len = 1;
    for (int i = 0; i < argc; i++)
        len += strlen(argv[i]) + 1;
    char *s = malloc(len);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (int i = 0; i < argc; i++) {
        if (i)
            strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}


/* ------------------------------------------------------------ the table */

typedef struct opt_spec opt_spec;

/* Check the value `arg` of option `spec` (NULL when none was given) and
 * store it in *opts; FS_ERR_USAGE with the message for a bad value. */
typedef fs_status (*opt_handler)(const opt_spec *spec, const char *arg, fs_options *opts);

struct opt_spec {
    const char *long_name;
    int short_name;         /* 0: a long name only */
    int has_arg;            /* getopt's no_argument, required_argument, optional_argument */
    opt_handler handle;
    size_t field;           /* offsetof the field of fs_options it sets, */
    size_t field_bytes;     /* and its size */
    const opt_name *names;  /* set_enum, set_name: the accepted values */
    long lo, hi;            /* set_long: the accepted range */
    const char *expected;   /* set_long: what the message says is expected */
};

/* The val getopt_long returns for an option with a long name only: beyond
 * every character, so that an unknown short option (optopt) tells itself
 * apart from a long one. */
#define LONG_ONLY_BASE 1000

/* A table line's first fields; the field named by its member name. */
#define OPT(long_name_, short_name_, has_arg_, handle_, member)                                   \
    .long_name = long_name_, .short_name = short_name_, .has_arg = has_arg_, .handle = handle_,   \
    .field = offsetof(fs_options, member), .field_bytes = sizeof(((fs_options *)0)->member)

static void *field_of(const opt_spec *spec, fs_options *opts)
{
    return (char *)opts + spec->field;
}

/* Replace the string in field `spec` with a copy of `value`. */
static fs_status store_string(const opt_spec *spec, const char *value, fs_options *opts)
{
    char *copy = strdup(value);
    if (!copy)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    char **field = field_of(spec, opts);
    free(*field);
    *field = copy;
    return FS_OK;
}

static fs_status set_flag(const opt_spec *spec, const char *arg, fs_options *opts)
{
    (void)arg;
    *(int *)field_of(spec, opts) = 1;
    return FS_OK;
}

/* --help, --version: the action, and parsing stops there. */
static fs_status set_help(const opt_spec *spec, const char *arg, fs_options *opts)
{
    (void)spec, (void)arg;
    opts->action = FS_ACTION_HELP;
    return FS_OK;
}

static fs_status set_version(const opt_spec *spec, const char *arg, fs_options *opts)
{
    (void)spec, (void)arg;
    opts->action = FS_ACTION_VERSION;
    return FS_OK;
}

/* The entry of spec->names that arg names; NULL with the usage error. */
static const opt_name *named(const opt_spec *spec, const char *arg)
{
    const opt_name *found = find_name(spec->names, arg);
    if (!found) {
        char expected[256];
        list_names(spec->names, expected, sizeof expected);
        fs_error_set(FS_ERR_USAGE, "--%s=%s: expected %s", spec->long_name, arg, expected);
    }
    return found;
}

static fs_status set_enum(const opt_spec *spec, const char *arg, fs_options *opts)
{
    const opt_name *found = named(spec, arg);
    if (!found)
        return FS_ERR_USAGE;
    *(int *)field_of(spec, opts) = found->value;
    return FS_OK;
}

/* One of spec->names, kept as the name. */
static fs_status set_name(const opt_spec *spec, const char *arg, fs_options *opts)
{
    const opt_name *found = named(spec, arg);
    if (!found)
        return FS_ERR_USAGE;
    return store_string(spec, found->name, opts);
}

static fs_status set_file(const opt_spec *spec, const char *arg, fs_options *opts)
{
    if (arg[0] == '\0')
        return fs_error_set(FS_ERR_USAGE, "--%s: expected a file name", spec->long_name);
    return store_string(spec, arg, opts);
}

/* --platform, gone from fftshard: the prediction on a simulated machine is
 * a program of its own that reads the dry run's JSON. */
static fs_status set_platform(const opt_spec *spec, const char *arg, fs_options *opts)
{
    (void)spec;
    (void)opts;
    return fs_error_set(FS_ERR_USAGE, "--platform: the prediction is a command of its own: "
                        "fftshard --dry-run --report=- ... | fftshard-predict %s", arg);
}

/* An integer in [spec->lo, spec->hi], into an int or int64_t field. */
static fs_status set_long(const opt_spec *spec, const char *arg, fs_options *opts)
{
    long v;
    if (parse_long(arg, spec->lo, spec->hi, &v) != 0)
        return fs_error_set(FS_ERR_USAGE, "--%s=%s: expected %s", spec->long_name, arg,
                            spec->expected);
    if (spec->field_bytes == sizeof(int64_t))
        *(int64_t *)field_of(spec, opts) = v;
    else
        *(int *)field_of(spec, opts) = (int)v;
    return FS_OK;
}

/* --norm: remembered as given, so an inverse knows when to take the
 * forward run's. */
static fs_status set_norm(const opt_spec *spec, const char *arg, fs_options *opts)
{
    fs_status st = set_enum(spec, arg, opts);
    opts->norm_given = st == FS_OK;
    return st;
}

static fs_status set_axes(const opt_spec *spec, const char *arg, fs_options *opts)
{
    (void)spec;
    return parse_axes(arg, opts);
}

static fs_status set_transpose(const opt_spec *spec, const char *arg, fs_options *opts)
{
    if (strcmp(arg, "auto") != 0 && strcmp(arg, FS_TRANSPOSE_DEFAULT) != 0 && !fs_exchange_find(arg)) {
        char known[256] = "";
        for (int i = 0; fs_exchange_strategies[i]; i++) {
            if (i)
                strncat(known, ", ", sizeof known - strlen(known) - 1);
            strncat(known, fs_exchange_strategies[i]->name, sizeof known - strlen(known) - 1);
        }
        return fs_error_set(FS_ERR_USAGE, "--transpose=%s: unknown strategy (known: %s, auto, "
                            FS_TRANSPOSE_DEFAULT ")", arg, known);
    }
    return store_string(spec, arg, opts);
}

static fs_status set_seed(const opt_spec *spec, const char *arg, fs_options *opts)
{
    (void)spec;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (errno || end == arg || *end != '\0' || arg[0] == '-')
        return fs_error_set(FS_ERR_USAGE, "--seed=%s: expected a non-negative integer", arg);
    opts->seed = v;
    return FS_OK;
}

static fs_status set_packet(const opt_spec *spec, const char *arg, fs_options *opts)
{
    (void)spec;
    uint64_t bytes;
    if (fs_parse_bytes(arg, &bytes) != 0 || bytes < 1 || bytes > MAX_PACKET_BYTES)
        return fs_error_set(FS_ERR_USAGE,
                            "--packet=%s: expected a size from 1 byte to 1G (K, M, G suffixes allowed)",
                            arg);
    opts->packet_bytes = (size_t)bytes;
    return FS_OK;
}

/* --check-tolerance implies --check. */
static fs_status set_check_tolerance(const opt_spec *spec, const char *arg, fs_options *opts)
{
    (void)spec;
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (errno || end == arg || *end != '\0' || !(v > 0) || v >= 1e300)
        return fs_error_set(FS_ERR_USAGE, "--check-tolerance=%s: expected a positive number", arg);
    opts->check_tolerance = v;
    opts->check = 1;
    return FS_OK;
}

static fs_status set_shot_noise(const opt_spec *spec, const char *arg, fs_options *opts)
{
    (void)spec;
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (errno || end == arg || *end != '\0' || !(v >= 0) || v >= 1e300)
        return fs_error_set(FS_ERR_USAGE, "--shot-noise=%s: expected a power (a number >= 0)", arg);
    opts->shot_noise = v;
    opts->shot_given = 1;
    return FS_OK;
}

static fs_status set_grid(const opt_spec *spec, const char *arg, fs_options *opts)
{
    (void)spec;
    const char *x = strpbrk(arg, "xX");
    long a, b;
    char first[32];
    if (!x || (size_t)(x - arg) >= sizeof first)
        return fs_error_set(FS_ERR_USAGE, "--grid=%s: expected AxB, e.g. 4x8", arg);
    memcpy(first, arg, (size_t)(x - arg));
    first[x - arg] = '\0';
    if (parse_long(first, 1, 1 << 24, &a) != 0 || parse_long(x + 1, 1, 1 << 24, &b) != 0)
        return fs_error_set(FS_ERR_USAGE, "--grid=%s: expected AxB, e.g. 4x8", arg);
    opts->grid[0] = (int)a;
    opts->grid[1] = (int)b;
    return FS_OK;
}

static fs_status set_shape(const opt_spec *spec, const char *arg, fs_options *opts)
{
    (void)spec;
    int64_t shape[FS_MAX_DIMS];
    int n = fs_parse_shape(arg, shape);
    if (n < 1)
        return fs_error_set(FS_ERR_USAGE,
                            "--shape=%s: expected lengths like 512x512x256 (1 to %d positive "
                            "lengths, at most %s elements)",
                            arg, FS_MAX_DIMS, FS_MAX_ELEMS_TEXT);
    memcpy(opts->shape, shape, sizeof shape);
    opts->shape_ndim = n;
    return FS_OK;
}

static fs_status set_chunks(const opt_spec *spec, const char *arg, fs_options *opts)
{
    (void)spec;
    int64_t shape[FS_MAX_DIMS];
    int n = fs_parse_shape(arg, shape);
    if (n < 1)
        return fs_error_set(FS_ERR_USAGE, "--chunks=%s: expected a chunk shape like 16x64x64", arg);
    memcpy(opts->chunks, shape, sizeof shape);
    opts->chunks_ndim = n;
    return FS_OK;
}

/* A size with K, M, G or T (which fs_parse_bytes does not know). */
static fs_status set_mem_per_rank(const opt_spec *spec, const char *arg, fs_options *opts)
{
    (void)spec;
    uint64_t b;
    size_t len = strlen(arg);
    if (len > 0 && (arg[len - 1] == 'T' || arg[len - 1] == 't')) {
        char giga[64];
        snprintf(giga, sizeof giga, "%.*sG", (int)len - 1, arg);
        if (fs_parse_bytes(giga, &b) != 0 || b > (UINT64_MAX >> 10))
            return fs_error_set(FS_ERR_USAGE, "--mem-per-rank=%s: expected a size", arg);
        b <<= 10;
    } else if (fs_parse_bytes(arg, &b) != 0 || b == 0) {
        return fs_error_set(FS_ERR_USAGE, "--mem-per-rank=%s: expected a size like 4G", arg);
    }
    opts->mem_per_rank = b;
    return FS_OK;
}

/* Up to max numbers separated by commas, each positive and finite
 * (nonnegative with allow_zero); returns how many, or -1. */
static int parse_numbers(const char *text, double *out, int max, int allow_zero)
{
    int n = 0;
    const char *p = text;
    for (;;) {
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (errno || end == p || !(v < 1e300) || !(allow_zero ? v >= 0 : v > 0) || n == max)
            return -1;
        out[n++] = v;
        if (*end == '\0')
            return n;
        if (*end != ',')
            return -1;
        p = end + 1;
    }
}

static fs_status set_box_size(const opt_spec *spec, const char *arg, fs_options *opts)
{
    (void)spec;
    int n = parse_numbers(arg, opts->box, FS_MAX_DIMS, 0);
    if (n < 1)
        return fs_error_set(FS_ERR_USAGE, "--box-size=%s: expected a positive length, or one per "
                            "transformed axis (e.g. 1000 or 1000,1000,500)", arg);
    opts->nbox = n;
    return FS_OK;
}

/* The edges of a bin option: where --bins and --r-bins put them. */
typedef struct bin_target {
    const char *name;   /* "--bins" or "--r-bins" */
    int *bins, *nedges;
    double *edges;
} bin_target;

/* NAME=LO:HI:STEP: the edges LO + i STEP up to HI. */
static fs_status set_bin_range(const char *arg, const bin_target *b)
{
    double r[3] = {0, 0, 0};
    char *end = NULL;
    const char *p = arg;
    int n = 0;
    for (; n < 3; n++, p = end + 1) {
        errno = 0;
        r[n] = strtod(p, &end);
        if (errno || end == p || *end != (n < 2 ? ':' : '\0') || !(r[n] >= 0 && r[n] < 1e300))
            break;
    }
    double count = n == 3 && r[2] > 0 ? floor((r[1] - r[0]) / r[2] + 1e-9) : 0;
    const char *v = b->name[2] == 'b' ? "K" : "R"; /* --bins speaks of k, --r-bins of r */
    if (!(count >= 1 && count < FS_MAX_EDGES))
        return fs_error_set(FS_ERR_USAGE, "%s=%s: expected %sMIN:%sMAX:D%s with 0 <= %sMIN, "
                            "%sMIN + D%s <= %sMAX and at most %d bins", b->name, arg, v, v, v, v,
                            v, v, v, FS_MAX_EDGES - 1);
    for (int i = 0; i <= (int)count; i++)
        b->edges[i] = r[0] + i * r[2];
    *b->nedges = (int)count + 1;
    *b->bins = 0;
    return FS_OK;
}

/* NAME=N, NAME=E0,E1,... (increasing edges) or NAME=LO:HI:STEP. */
static fs_status set_bins_of(const char *arg, const bin_target *b)
{
    long n;
    if (strchr(arg, ':'))
        return set_bin_range(arg, b);
    if (!strchr(arg, ',')) {
        if (parse_long(arg, 1, FS_MAX_EDGES - 1, &n) != 0)
            return fs_error_set(FS_ERR_USAGE, "%s=%s: expected a number of bins from 1 to %d, "
                                "or increasing edges E0,E1,...", b->name, arg, FS_MAX_EDGES - 1);
        *b->bins = (int)n;
        *b->nedges = 0;
        return FS_OK;
    }
    int m = parse_numbers(arg, b->edges, FS_MAX_EDGES, 1);
    for (int i = 1; i < m; i++)
        if (!(b->edges[i] > b->edges[i - 1]))
            m = -1;
    if (m < 2)
        return fs_error_set(FS_ERR_USAGE, "%s=%s: expected at most %d increasing edges "
                            "E0,E1,... (%s from E0 up to E1 in the first bin)", b->name, arg,
                            FS_MAX_EDGES, b->name[2] == 'b' ? "|k|" : "r");
    *b->nedges = m;
    *b->bins = 0;
    return FS_OK;
}

/* --bins: of |k| for the spectra. */
static fs_status set_bins(const opt_spec *spec, const char *arg, fs_options *opts)
{
    (void)spec;
    return set_bins_of(arg, &(bin_target){"--bins", &opts->bins, &opts->nedges, opts->edges});
}

/* --r-bins: of the separation r for --correlation-function. */
static fs_status set_r_bins(const opt_spec *spec, const char *arg, fs_options *opts)
{
    (void)spec;
    return set_bins_of(arg, &(bin_target){"--r-bins", &opts->r_bins, &opts->r_nedges,
                                          opts->r_edges});
}

static fs_status set_los(const opt_spec *spec, const char *arg, fs_options *opts)
{
    (void)spec;
    long axis;
    if (parse_long(arg, -FS_MAX_DIMS, FS_MAX_DIMS - 1, &axis) != 0)
        return fs_error_set(FS_ERR_USAGE, "--los=%s: expected an axis (an integer from %d to %d)",
                            arg, -FS_MAX_DIMS, FS_MAX_DIMS - 1);
    opts->los = (int)axis;
    opts->los_given = 1;
    return FS_OK;
}

/* --apply: the list checked here (operators.h), kept as given. */
static fs_status set_apply(const opt_spec *spec, const char *arg, fs_options *opts)
{
    fs_operators ops;
    fs_status st = fs_operators_parse(arg, &ops);
    fs_operators_free(&ops);
    return st == FS_OK ? store_string(spec, arg, opts) : st;
}

/* --correlate, --convolve, --phase-correlate: one of them, by the option's name. */
static fs_status set_combine(const opt_spec *spec, const char *arg, fs_options *opts)
{
    (void)arg;
    static const char *const names[] = {"", "correlate", "convolve", "phase-correlate"};
    int op = 1;
    while (op < 3 && strcmp(names[op], spec->long_name) != 0)
        op++;
    if (opts->combine && opts->combine != op)
        return fs_error_set(FS_ERR_USAGE, "--%s, --%s: one operation per run", names[opts->combine],
                            names[op]);
    opts->combine = op;
    return FS_OK;
}

/* --vector=OP: an operation as the combined spectra's, after them. */
static fs_status set_vector(const opt_spec *spec, const char *arg, fs_options *opts)
{
    (void)spec;
    static const char *const ops[] = {"gradient", "curl", "divergence", "helmholtz"};
    int op = 0;
    while (op < 4 && strcmp(ops[op], arg) != 0)
        op++;
    if (op == 4)
        return fs_error_set(FS_ERR_USAGE, "--vector=%s: expected gradient, curl, divergence or "
                            "helmholtz", arg);
    op += FS_COMBINE_GRADIENT;
    if (opts->combine && opts->combine != op)
        return fs_error_set(FS_ERR_USAGE, "--vector: one operation per run (with %s)",
                            opts->combine < FS_COMBINE_GRADIENT ? "--correlate, --convolve or "
                            "--phase-correlate" : "another --vector");
    opts->combine = op;
    return FS_OK;
}

/* The combined spectra give the field back as --apply does, from one or two
 * INPUTs alike; what needs a spectrum, an inverse or one INPUT's result
 * does not go with them. */
static fs_status check_combine(const fs_options *opts)
{
    static const char *const names[] = {"", "--correlate", "--convolve", "--phase-correlate",
                                        "--vector=gradient", "--vector=curl",
                                        "--vector=divergence", "--vector=helmholtz"};
    const char *name = names[opts->combine];
    int vector = fs_vector_is((fs_combine_op)opts->combine);
    /* 0: one or two; --vector's divergence and helmholtz: one per transformed axis (combine.c) */
    int need = opts->combine == FS_COMBINE_CORRELATE ? 0
               : vector ? fs_vector_inputs((fs_combine_op)opts->combine, -1) : 2;
    if (opts->apply)
        return fs_error_set(FS_ERR_USAGE, "%s, --apply: one operation per run", name);
    if (opts->inverse || opts->check)
        return fs_error_set(FS_ERR_USAGE, "%s: runs the forward transforms and the inverse itself "
                            "(no %s)", name, opts->inverse ? "--inverse" : "--check");
    if (opts->power_spectrum || opts->cross || opts->spectrum_only || opts->correlation)
        return fs_error_set(FS_ERR_USAGE, "%s: writes a field, not a spectrum; compute the "
                            "spectrum in a run of its own", name);
    if (opts->shard_output)
        return fs_error_set(FS_ERR_USAGE, "%s, --shard-output: the result is written into OUTPUT "
                            "itself", name);
    if (opts->nbox && !vector)
        return fs_error_set(FS_ERR_USAGE, "%s: uses no wave vector; --box-size does not apply",
                            name);
    if (vector && need > 0 && !opts->dry_run && opts->ninputs != need)
        return fs_error_set(FS_ERR_USAGE, "%s: expected %s (got %d)", name,
                            need == 1 ? "one INPUT" : "three INPUTs, the components x, y, z",
                            opts->ninputs);
    if (!vector && !opts->dry_run && (need ? opts->ninputs != need : opts->ninputs > 2))
        return fs_error_set(FS_ERR_USAGE, "%s: expected %s INPUTs (got %d)", name,
                            need ? "two" : "one or two", opts->ninputs);
    return FS_OK;
}

/* --apply returns the field: what needs a spectrum as the result, or undoes
 * the transform, does not go with it. */
static fs_status check_apply(const fs_options *opts)
{
    if (opts->inverse || opts->check)
        return fs_error_set(FS_ERR_USAGE, "%s: --apply runs the forward transform and its inverse "
                            "itself", opts->inverse ? "--inverse" : "--check");
    if (opts->power_spectrum || opts->cross || opts->spectrum_only || opts->correlation)
        return fs_error_set(FS_ERR_USAGE, "--apply: writes the field, not a spectrum; compute the "
                            "spectrum in a run of its own");
    if (opts->shard_output)
        return fs_error_set(FS_ERR_USAGE, "--apply, --shard-output: the filtered field is written "
                            "into OUTPUT itself");
    return FS_OK;
}

/* --multipoles=0,2,4: increasing even degrees. */
static fs_status set_multipoles(const opt_spec *spec, const char *arg, fs_options *opts)
{
    (void)spec;
    int n = 0;
    const char *p = arg;
    for (char *end = NULL;; p = end + 1) {
        errno = 0;
        long l = strtol(p, &end, 10);
        if (errno || end == p || l < 0 || l > 2 * (FS_MAX_POLES - 1) || l % 2 ||
            (n && l <= opts->poles[n - 1]) || n == FS_MAX_POLES || (*end && *end != ','))
            return fs_error_set(FS_ERR_USAGE, "--multipoles=%s: expected increasing even degrees "
                                "from 0 to %d (e.g. 0,2,4)", arg, 2 * (FS_MAX_POLES - 1));
        opts->poles[n++] = (int)l;
        if (!*end)
            break;
    }
    opts->npoles = n;
    return FS_OK;
}

/* --spectrum-per=AXIS[,AXIS...]: axes, checked against the input later. */
static fs_status set_spectrum_per(const opt_spec *spec, const char *arg, fs_options *opts)
{
    (void)spec;
    int n = 0;
    const char *p = arg;
    for (char *end = NULL;; p = end + 1) {
        errno = 0;
        long a = strtol(p, &end, 10);
        if (errno || end == p || a < -FS_MAX_DIMS || a >= FS_MAX_DIMS || n == FS_MAX_DIMS ||
            (*end && *end != ','))
            return fs_error_set(FS_ERR_USAGE, "--spectrum-per=%s: expected axes (integers from "
                                "%d to %d) separated by commas", arg, -FS_MAX_DIMS, FS_MAX_DIMS - 1);
        opts->per[n++] = (int)a;
        if (!*end)
            break;
    }
    opts->nper = n;
    return FS_OK;
}

/* --shard-output alone: one file per rank (-1). */
static fs_status set_shard_output(const opt_spec *spec, const char *arg, fs_options *opts)
{
    (void)spec;
    long v = -1;
    if (arg && parse_long(arg, 1, 1L << 30, &v) != 0)
        return fs_error_set(FS_ERR_USAGE, "--shard-output=%s: expected a number of files", arg);
    opts->shard_output = (int)v;
    return FS_OK;
}

/* getopt_long prefers an exact name and refuses an ambiguous abbreviation,
 * so the order of the lines changes nothing. */
static const opt_spec specs[] = {
    {OPT("inverse", 0, no_argument, set_flag, inverse)},
    {OPT("norm", 0, required_argument, set_norm, norm), .names = norm_names},
    {OPT("axes", 0, required_argument, set_axes, axes)},
    {OPT("transpose", 0, required_argument, set_transpose, transpose)},
    {OPT("seed", 0, required_argument, set_seed, seed)},
    {OPT("packet", 0, required_argument, set_packet, packet_bytes)},
    {OPT("queues", 0, required_argument, set_long, queues), .lo = 1, .hi = MAX_QUEUES,
     .expected = "an integer from 1 to " XSTRINGIFY(MAX_QUEUES)},
    {OPT("wisdom", 0, required_argument, set_file, wisdom_file)},
    {OPT("report", 0, required_argument, set_file, report_file)},
    {OPT("real", 0, no_argument, set_flag, real)},
    {OPT("last-size", 0, required_argument, set_long, last_size), .lo = 1, .hi = LONG_MAX,
     .expected = "a positive integer"},
    {OPT("precision", 0, required_argument, set_enum, precision), .names = precision_names},
    {OPT("plan", 0, required_argument, set_enum, plan), .names = plan_names},
    {OPT("check", 0, no_argument, set_flag, check)},
    {OPT("check-tolerance", 0, required_argument, set_check_tolerance, check_tolerance)},
    {OPT("allow-nonfinite", 0, no_argument, set_flag, allow_nonfinite)},
    {OPT("decomp", 0, required_argument, set_enum, decomp), .names = decomp_names},
    {OPT("grid", 0, required_argument, set_grid, grid)},
    {OPT("dry-run", 0, no_argument, set_flag, dry_run)},
    {OPT("shape", 0, required_argument, set_shape, shape)},
    {OPT("dtype", 0, required_argument, set_name, dtype), .names = dtype_names},
    {OPT("ranks", 0, required_argument, set_long, ranks), .lo = 1, .hi = 1L << 30,
     .expected = "a positive integer"},
    {OPT("mem-per-rank", 0, required_argument, set_mem_per_rank, mem_per_rank)},
    {OPT("platform", 0, required_argument, set_platform, action)},
    {OPT("shards", 0, no_argument, set_flag, shards)},
    {OPT("shard-output", 0, optional_argument, set_shard_output, shard_output)},
    {OPT("chunks", 0, required_argument, set_chunks, chunks)},
    {OPT("deflate", 0, required_argument, set_long, deflate), .lo = 1, .hi = 9,
     .expected = "a level from 1 to 9"},
    {OPT("progress", 0, no_argument, set_flag, progress)},
    {OPT("add", 0, no_argument, set_flag, add)},
    {OPT("power-spectrum", 0, no_argument, set_flag, power_spectrum)},
    {OPT("spectrum-only", 0, no_argument, set_flag, spectrum_only)},
    {OPT("cross", 0, no_argument, set_flag, cross)},
    {OPT("box-size", 0, required_argument, set_box_size, box)},
    {OPT("bins", 0, required_argument, set_bins, bins)},
    {OPT("correlation-function", 0, no_argument, set_flag, correlation)},
    {OPT("r-bins", 0, required_argument, set_r_bins, r_bins)},
    {OPT("los", 0, required_argument, set_los, los)},
    {OPT("mu-bins", 0, required_argument, set_long, mu_bins), .lo = 1, .hi = 1000,
     .expected = "a number of mu bins from 1 to 1000"},
    {OPT("apply", 0, required_argument, set_apply, apply)},
    {OPT("correlate", 0, no_argument, set_combine, combine)},
    {OPT("convolve", 0, no_argument, set_combine, combine)},
    {OPT("phase-correlate", 0, no_argument, set_combine, combine)},
    {OPT("vector", 0, required_argument, set_vector, combine)},
    {OPT("multipoles", 0, required_argument, set_multipoles, poles)},
    {OPT("spectrum-per", 0, required_argument, set_spectrum_per, per)},
    {OPT("compensate", 0, required_argument, set_enum, compensate), .names = window_names},
    {OPT("shot-noise", 0, required_argument, set_shot_noise, shot_noise)},
    {OPT("force", 'f', no_argument, set_flag, force)},
    {OPT("quiet", 'q', no_argument, set_flag, quiet)},
    {OPT("verbose", 'v', no_argument, set_flag, verbose)},
    {OPT("help", 'h', no_argument, set_help, action)},
    {OPT("version", 'V', no_argument, set_version, action)},
};

#define N_SPECS (sizeof specs / sizeof specs[0])

/* ------------------------------------------------------------ parsing */

/* getopt_long's tables from `specs`: long_options (N_SPECS + 1 entries) and
 * short_options (at least 3 * N_SPECS + 2 bytes). The leading ':' makes a
 * missing value ':' rather than '?'. */
static void getopt_tables(struct option *long_options, char *short_options)
{
    char *s = short_options;
    *s++ = ':';
    for (size_t i = 0; i < N_SPECS; i++) {
        const opt_spec *spec = &specs[i];
        int val = spec->short_name ? spec->short_name : LONG_ONLY_BASE + (int)i;
        long_options[i] = (struct option){spec->long_name, spec->has_arg, NULL, val};
        if (spec->short_name) {
            *s++ = (char)spec->short_name;
            if (spec->has_arg != no_argument)
                *s++ = ':';
            if (spec->has_arg == optional_argument)
                *s++ = ':';
        }
    }
    *s = '\0';
    long_options[N_SPECS] = (struct option){NULL, 0, NULL, 0};
}

/* The spec of what getopt_long returned, NULL for none. */
static const opt_spec *spec_of(int c)
{
    if (c >= LONG_ONLY_BASE && c < LONG_ONLY_BASE + (int)N_SPECS)
        return &specs[c - LONG_ONLY_BASE];
    for (size_t i = 0; i < N_SPECS; i++)
        if (specs[i].short_name && specs[i].short_name == c)
            return &specs[i];
    return NULL;
}

/* What getopt_long could not take: a missing value (':'), or an unknown or
 * ambiguous option, or a value given to an option that takes none. */
static fs_status getopt_error(int c, char **argv)
{
    if (c == ':')
        return fs_error_set(FS_ERR_USAGE, "'%s': the option needs a value", argv[optind - 1]);
    if (optopt && optopt < LONG_ONLY_BASE)
        return fs_error_set(FS_ERR_USAGE, "'-%c': unknown option", optopt);
    return fs_error_set(FS_ERR_USAGE, "'%s': unknown option", argv[optind - 1]);
}

static fs_status set_defaults(int argc, char **argv, fs_options *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->action = FS_ACTION_RUN;
    opts->norm = FS_NORM_BACKWARD;
    opts->transpose = strdup(FS_TRANSPOSE_DEFAULT);
    opts->seed = FS_DEFAULT_SEED;
    opts->packet_bytes = FS_DEFAULT_PACKET_BYTES;
    opts->queues = FS_DEFAULT_QUEUES;
    opts->argv_joined = join_argv(argc, argv);
    if (!opts->transpose || !opts->argv_joined)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    return FS_OK;
}

/* One more INPUT; the first is also input_file and input_dataset (which
 * alias it: freed with the list). */
static fs_status add_input(fs_options *opts, const char *arg)
{
    fs_location *grown = realloc(opts->inputs, (size_t)(opts->ninputs + 1) * sizeof *grown);
    if (!grown)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    opts->inputs = grown;
    fs_location *in = &opts->inputs[opts->ninputs];
    memset(in, 0, sizeof *in);
    if (fs_split_location(arg, &in->file, &in->dataset) != FS_OK)
        return fs_error_status();
    if (in->dataset && fs_slice_parse(arg, in->dataset, &in->slice) != FS_OK) {
        free(in->file);
        free(in->dataset);
        return fs_error_status();
    }
    opts->ninputs++;
    opts->input_file = opts->inputs[0].file;
    opts->input_dataset = opts->inputs[0].dataset;
    return FS_OK;
}

/* Several INPUTs: every result goes under its input's dataset path in the
 * one OUTPUT file, so the options that name or split one output do not
 * apply. */
static fs_status check_several_inputs(const fs_options *opts)
{
    /* the combined result is one; --spectrum-only: the path of the spectrum's group */
    if (opts->output_dataset && !opts->combine && !opts->spectrum_only)
        return fs_error_set(FS_ERR_USAGE, "%s:%s: a dataset path for OUTPUT applies to one INPUT "
                            "only (with %d, each result goes under its input's path)",
                            opts->output_file, opts->output_dataset, opts->ninputs);
    if (opts->shards)
        return fs_error_set(FS_ERR_USAGE, "--shards: takes one INPUT (got %d)", opts->ninputs);
    if (opts->shard_output)
        return fs_error_set(FS_ERR_USAGE, "--shard-output: takes one INPUT (got %d)", opts->ninputs);
    return FS_OK;
}

/* --correlation-function: its bins asked for with it; --check would undo
 * the transform it has made its own product of. */
static fs_status check_correlation(const fs_options *opts)
{
    if ((opts->r_bins || opts->r_nedges) && !opts->correlation)
        return fs_error_set(FS_ERR_USAGE, "--r-bins: only with --correlation-function");
    if (opts->correlation && opts->check)
        return fs_error_set(FS_ERR_USAGE, "--check, --correlation-function: the correlation "
                            "function takes the transformed array's place in memory; check the "
                            "transform in a run of its own");
    return FS_OK;
}

/* The spectrum options together: what needs a spectrum asks for one, and
 * what a spectrum cannot go with (an inverse: it bins a forward result;
 * --shard-output: the spectrum goes into OUTPUT itself). --spectrum-only
 * alone means the power spectrum. */
static fs_status check_spectrum(fs_options *opts)
{
    if (opts->apply && check_apply(opts) != FS_OK)
        return fs_error_status();
    if (opts->combine && check_combine(opts) != FS_OK)
        return fs_error_status();
    if (opts->spectrum_only && !opts->cross && !opts->correlation)
        opts->power_spectrum = 1;
    if (check_correlation(opts) != FS_OK)
        return fs_error_status();
    int spectrum = opts->power_spectrum || opts->cross || opts->correlation;
    if (!spectrum && !opts->apply && !fs_vector_is((fs_combine_op)opts->combine) && opts->nbox)
        return fs_error_set(FS_ERR_USAGE, "--box-size: only with --power-spectrum, --cross, "
                            "--spectrum-only, --correlation-function, --apply or --vector");
    int binned = opts->power_spectrum || opts->cross; /* in k */
    if (!binned && (opts->bins || opts->nedges || opts->los_given || opts->mu_bins ||
                    opts->npoles || opts->nper || opts->compensate || opts->shot_given))
        return fs_error_set(FS_ERR_USAGE, "--box-size, --bins, --los, --mu-bins, --multipoles, "
                            "--spectrum-per, --compensate, --shot-noise: only with "
                            "--power-spectrum, --cross or --spectrum-only");
    if (opts->shot_given && !opts->power_spectrum)
        return fs_error_set(FS_ERR_USAGE, "--shot-noise: subtracted from the power spectrum; "
                            "give --power-spectrum with --cross");
    if ((opts->mu_bins || opts->npoles) && !opts->los_given)
        return fs_error_set(FS_ERR_USAGE, "%s: only with --los=AXIS",
                            opts->mu_bins ? "--mu-bins" : "--multipoles");
    if (!spectrum)
        return FS_OK;
    if (opts->inverse)
        return fs_error_set(FS_ERR_USAGE, "--inverse: spectra are of the forward transform");
    if (opts->shard_output)
        return fs_error_set(FS_ERR_USAGE, "--shard-output: a spectrum is written into OUTPUT "
                            "itself; compute it in a run without --shard-output");
    if (opts->cross && !opts->dry_run && opts->ninputs != 2)
        return fs_error_set(FS_ERR_USAGE, "--cross: expected two INPUTs (got %d)", opts->ninputs);
    /* --spectrum-only: OUTPUT's path is the group the spectra's groups go in. */
    if (opts->spectrum_only && opts->output_dataset &&
        strlen(opts->output_dataset) + sizeof "/cross_spectrum" > FS_PATH_MAX)
        return fs_error_set(FS_ERR_USAGE, "%s:%s: group path too long (at most %d bytes)",
                            opts->output_file, opts->output_dataset,
                            (int)(FS_PATH_MAX - sizeof "/cross_spectrum"));
    return FS_OK;
}

/* INPUT... and OUTPUT, argv[first..argc-1], after the options they go with
 * were checked together. */
static fs_status take_operands(int argc, char **argv, int first, fs_options *opts)
{
    if (opts->last_size && !(opts->real && opts->inverse))
        return fs_error_set(FS_ERR_USAGE, "--last-size: applies only to --inverse --real");
    if (opts->quiet && opts->verbose)
        return fs_error_set(FS_ERR_USAGE, "--quiet, --verbose: the two contradict each other");
    int npos = argc - first;
    if ((opts->shape_ndim || opts->dtype || opts->ranks) && !opts->dry_run)
        return fs_error_set(FS_ERR_USAGE, "--shape, --dtype, --ranks: only with --dry-run");
    if (opts->dry_run) {
        /* Planning a job: the input may be described instead of named. */
        if (opts->shape_ndim ? npos != 0 : (npos < 1 || npos > 2))
            return fs_error_set(FS_ERR_USAGE, opts->shape_ndim
                                                  ? "--dry-run --shape: no INPUT or OUTPUT expected"
                                                  : "--dry-run: expected INPUT [OUTPUT], or --shape");
        if (!opts->shape_ndim && add_input(opts, argv[first]) != FS_OK)
            return fs_error_status();
        if (!opts->shape_ndim && npos == 2 &&
            fs_split_location(argv[first + 1], &opts->output_file, &opts->output_dataset) != FS_OK)
            return fs_error_status();
        return check_spectrum(opts);
    }
    if (npos < 2)
        return fs_error_set(FS_ERR_USAGE, "missing %s: expected INPUT and OUTPUT",
                            npos == 0 ? "INPUT and OUTPUT" : "OUTPUT");
    if (opts->add && opts->shard_output)
        return fs_error_set(FS_ERR_USAGE, "--add, --shard-output: a set of shard files cannot be "
                            "added to");
    for (int i = first; i < argc - 1; i++)
        if (add_input(opts, argv[i]) != FS_OK)
            return fs_error_status();
    if (fs_split_location(argv[argc - 1], &opts->output_file, &opts->output_dataset) != FS_OK)
        return fs_error_status();
    if (opts->ninputs > 1 && check_several_inputs(opts) != FS_OK)
        return fs_error_status();
    return check_spectrum(opts);
}

fs_status fs_options_parse(int argc, char **argv, fs_options *opts)
{
    if (set_defaults(argc, argv, opts) != FS_OK)
        return fs_error_status();
    struct option long_options[N_SPECS + 1];
    char short_options[3 * N_SPECS + 2];
    getopt_tables(long_options, short_options);

    /* getopt keeps state across calls; a parser that can run twice resets it
     * (0, not 1: glibc then also forgets the rest of a cluster like -hq that
     * the last parse stopped in). */
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
        const opt_spec *spec = spec_of(c);
        if (!spec)
            return getopt_error(c, argv);
        if (spec->handle(spec, optarg, opts) != FS_OK)
            return fs_error_status();
        if (opts->action != FS_ACTION_RUN)
            return FS_OK;
    }
    return take_operands(argc, argv, optind, opts);
}

void fs_options_free(fs_options *opts)
{
    for (int i = 0; i < opts->ninputs; i++) {
        free(opts->inputs[i].file);
        free(opts->inputs[i].dataset);
    }
    free(opts->inputs);
    free(opts->output_file);
    free(opts->output_dataset);
    free(opts->transpose);
    free(opts->wisdom_file);
    free(opts->report_file);
    free(opts->dtype);
    free(opts->apply);
    free(opts->argv_joined);
    memset(opts, 0, sizeof *opts);
}

int fs_parse_bytes(const char *text, uint64_t *bytes)
{
    char *end;
    if (text[0] < '0' || text[0] > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno)
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: return -1;
    }
    if (*end == 'i' || *end == 'B')   /* 64KiB, 64KB: the same */
        end += *end == 'i' ? (end[1] == 'B' ? 2 : 1) : 1;
    if (*end != '\0' || (shift && v > (~0ULL >> shift)))
        return -1;
    *bytes = (uint64_t)v << shift;
    return 0;
}

/* --transpose's name as a request: the names were checked by set_transpose. */
static fs_strategy_request strategy_of(const char *name)
{
    fs_strategy_request r = {FS_STRATEGY_NAMED, fs_exchange_find(name)};
    if (strcmp(name, FS_TRANSPOSE_DEFAULT) == 0)
        r.kind = FS_STRATEGY_DEFAULT;
    else if (strcmp(name, "auto") == 0)
        r.kind = FS_STRATEGY_AUTO;
    return r;
}

/* --dtype's name, checked by set_name (complex128 when not given). */
static fs_dtype dtype_of(const char *name)
{
    return !name                             ? FS_DTYPE_COMPLEX128
           : strcmp(name, "float32") == 0    ? FS_DTYPE_FLOAT32
           : strcmp(name, "float64") == 0    ? FS_DTYPE_FLOAT64
           : strcmp(name, "complex64") == 0  ? FS_DTYPE_COMPLEX64
                                             : FS_DTYPE_COMPLEX128;
}

void fs_options_config(const fs_options *o, fs_run_config *c)
{
    /* a dry run names one INPUT for the D components */
    int per_axis = o->dry_run && (o->combine == FS_COMBINE_DIVERGENCE ||
                                  o->combine == FS_COMBINE_HELMHOLTZ);
    *c = (fs_run_config){
        .input_file = o->input_file, .input_dataset = o->input_dataset,
        .ninputs = o->ninputs, .inputs = o->inputs, .shards = o->shards,
        .shape_ndim = o->shape_ndim, .dtype = dtype_of(o->dtype), .ranks = o->ranks,
        .mem_per_rank = o->mem_per_rank,
        .inverse = o->inverse, .real = o->real, .last_size = o->last_size,
        .precision = o->precision, .plan = o->plan, .norm = o->norm, .norm_given = o->norm_given,
        .naxes = o->naxes, .check = o->check, .check_tolerance = o->check_tolerance,
        .allow_nonfinite = o->allow_nonfinite,
        .strategy = strategy_of(o->transpose), .seed = o->seed, .packet_bytes = o->packet_bytes,
        .queues = o->queues, .decomp = o->decomp, .grid = {o->grid[0], o->grid[1]},
        .output_file = o->output_file, .output_dataset = o->output_dataset,
        .wisdom_file = o->wisdom_file, .report_file = o->report_file,
        .shard_output = o->shard_output, .chunks_ndim = o->chunks_ndim, .deflate = o->deflate,
        .add = o->add, .force = o->force,
        .power_spectrum = o->power_spectrum, .spectrum_only = o->spectrum_only, .cross = o->cross,
        .nbox = o->nbox, .bins = o->bins, .nedges = o->nedges, .los = o->los,
        .correlation = o->correlation, .r_bins = o->r_bins, .r_nedges = o->r_nedges,
        .los_given = o->los_given, .mu_bins = o->mu_bins, .npoles = o->npoles,
        .nper = o->nper, .compensate = o->compensate, .shot_noise = o->shot_noise,
        .shot_given = o->shot_given, .apply = o->apply, .combine = (fs_combine_op)o->combine,
        .keep_first = per_axis ? (o->combine == FS_COMBINE_DIVERGENCE ? -1 : 0)
                      : fs_vector_is((fs_combine_op)o->combine)
                          ? fs_vector_slots((fs_combine_op)o->combine, o->ninputs)
                          : o->cross || (o->combine && (o->ninputs > 1 || o->dry_run)),
        .keep_per_axis = per_axis,
        .progress = o->progress, .quiet = o->quiet, .verbose = o->verbose,
        .command_line = o->argv_joined,
    };
    memcpy(c->shape, o->shape, sizeof c->shape);
    memcpy(c->axes, o->axes, sizeof c->axes);
    memcpy(c->chunks, o->chunks, sizeof c->chunks);
    memcpy(c->box, o->box, sizeof c->box);
    memcpy(c->edges, o->edges, sizeof c->edges);
    memcpy(c->r_edges, o->r_edges, sizeof c->r_edges);
    memcpy(c->poles, o->poles, sizeof c->poles);
    memcpy(c->per, o->per, sizeof c->per);
}
