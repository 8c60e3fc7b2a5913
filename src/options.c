/* options: see options.h. */
#include "config.h"

#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "exchange.h"
#include <fftw3.h>
#include <hdf5.h>

enum {
    OPT_INVERSE = 1000,
    OPT_NORM,
    OPT_AXES,
    OPT_TRANSPOSE,
    OPT_SEED,
    OPT_PACKET,
    OPT_QUEUES,
    OPT_WISDOM,
    OPT_REPORT,
    OPT_PROGRESS,
    OPT_REAL,
    OPT_LAST_SIZE,
    OPT_PRECISION,
    OPT_PLAN,
    OPT_CHECK,
    OPT_CHECK_TOLERANCE,
    OPT_DECOMP,
    OPT_GRID,
    OPT_DRY_RUN,
    OPT_SHAPE,
    OPT_DTYPE,
    OPT_RANKS,
    OPT_MEM_PER_RANK,
    OPT_SHARDS,
    OPT_SHARD_OUTPUT,
    OPT_CHUNKS,
    OPT_DEFLATE,
};

#define MAX_PACKET_BYTES ((uint64_t)1 << 30)
#define MAX_QUEUES 1024

static const struct option long_options[] = {
    {"inverse", no_argument, NULL, OPT_INVERSE},
    {"norm", required_argument, NULL, OPT_NORM},
    {"axes", required_argument, NULL, OPT_AXES},
    {"transpose", required_argument, NULL, OPT_TRANSPOSE},
    {"seed", required_argument, NULL, OPT_SEED},
    {"packet", required_argument, NULL, OPT_PACKET},
    {"queues", required_argument, NULL, OPT_QUEUES},
    {"wisdom", required_argument, NULL, OPT_WISDOM},
    {"report", required_argument, NULL, OPT_REPORT},
    {"real", no_argument, NULL, OPT_REAL},
    {"last-size", required_argument, NULL, OPT_LAST_SIZE},
    {"precision", required_argument, NULL, OPT_PRECISION},
    {"plan", required_argument, NULL, OPT_PLAN},
    {"check", no_argument, NULL, OPT_CHECK},
    {"check-tolerance", required_argument, NULL, OPT_CHECK_TOLERANCE},
    {"decomp", required_argument, NULL, OPT_DECOMP},
    {"grid", required_argument, NULL, OPT_GRID},
    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
    {"shape", required_argument, NULL, OPT_SHAPE},
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"ranks", required_argument, NULL, OPT_RANKS},
    {"mem-per-rank", required_argument, NULL, OPT_MEM_PER_RANK},
    {"shards", no_argument, NULL, OPT_SHARDS},
    {"shard-output", optional_argument, NULL, OPT_SHARD_OUTPUT},
    {"chunks", required_argument, NULL, OPT_CHUNKS},
    {"deflate", required_argument, NULL, OPT_DEFLATE},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"force", no_argument, NULL, 'f'},
    {"quiet", no_argument, NULL, 'q'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

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

void fs_options_print_help(FILE *out)
{
    fputs(
        "Usage: mpiexec -n P fftshard [OPTIONS] INPUT OUTPUT\n"
        "Compute the N-dimensional FFT of an HDF5 dataset in parallel over MPI ranks.\n"
        "\n"
        "INPUT and OUTPUT are FILE.h5 or FILE.h5:/path/to/dataset. Without a path,\n"
        "INPUT's only dataset is used and OUTPUT gets the same dataset path. The\n"
        "result is complex128 in natural order: element [k0,k1,...] equals\n"
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
        "\n"
        "Parallel algorithm:\n"
        "      --transpose=NAME    all-to-all exchange strategy (default " FS_DEFAULT_STRATEGY "):\n",
        out);
    for (int i = 0; fs_exchange_strategies[i]; i++)
        fprintf(out, "                            %-9s %s\n", fs_exchange_strategies[i]->name,
                fs_exchange_strategies[i]->summary);
    fprintf(out, "                            %-9s %s\n", "auto",
            "time each on the real sizes, use the fastest");
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
        "                          memory per rank, then exit; INPUT optional\n"
        "      --shape=SHAPE       the array's shape (e.g. 2048x2048x2048) instead of INPUT\n"
        "      --dtype=TYPE        its type: float32, float64, complex64, complex128\n"
        "      --ranks=N           plan for N ranks (default: this job's)\n"
        "      --mem-per-rank=B    say whether the plan fits B bytes per rank (K,M,G,T)\n"
        "\n"
        "Sharded files:\n"
        "      --shards            INPUT is a pattern with one number field\n"
        "                          (field.%04d.h5) or a file listing the shards\n"
        "      --shard-output[=N]  write N files (default one per rank) and OUTPUT as\n"
        "                          a virtual dataset that reads them as one array\n"
        "      --chunks=SHAPE      store the output in chunks of SHAPE (e.g. 16x64x64)\n"
        "      --deflate=LEVEL     compress the output chunks (shuffle + deflate 1-9)\n"
        "\n"
        "Output and messages:\n"
        "  -f, --force             replace OUTPUT if it exists\n"
        "      --report=FILE       write the timing and prefix-sum report as JSON\n"
        "  -q, --quiet             no summary on stderr\n"
        "      --progress          progress lines on stderr (default: when a terminal)\n"
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

const char *fs_norm_name(fs_norm norm)
{
    switch (norm) {
    case FS_NORM_BACKWARD: return "backward";
    case FS_NORM_ORTHO: return "ortho";
    case FS_NORM_FORWARD: return "forward";
    }
    return "?";
}


fs_status fs_split_location(const char *arg, char **file, char **dataset)
{
    *file = NULL;
    *dataset = NULL;
    const char *sep = strstr(arg, ":/");
    size_t file_len = sep ? (size_t)(sep - arg) : strlen(arg);
    if (file_len == 0)
        return fs_error_set(FS_ERR_USAGE, "'%s': no file name", arg);
    *file = strndup(arg, file_len);
    if (sep) {
        *dataset = strdup(sep + 1);
        size_t n = strlen(*dataset);
        while (n > 1 && (*dataset)[n - 1] == '/')
            (*dataset)[--n] = '\0';
        if (strcmp(*dataset, "/") == 0) {
            free(*file);
            free(*dataset);
            *file = *dataset = NULL;
            return fs_error_set(FS_ERR_USAGE, "'%s': dataset path is the root group", arg);
        }
    }
    if (!*file || (sep && !*dataset))
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    return FS_OK;
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

fs_status fs_options_parse(int argc, char **argv, fs_options *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->action = FS_ACTION_RUN;
    opts->norm = FS_NORM_BACKWARD;
    opts->transpose = strdup(FS_DEFAULT_STRATEGY);
    opts->seed = FS_DEFAULT_SEED;
    opts->packet_bytes = FS_DEFAULT_PACKET_BYTES;
    opts->queues = FS_DEFAULT_QUEUES;
    opts->argv_joined = join_argv(argc, argv);
    if (!opts->transpose || !opts->argv_joined)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");

    /* getopt keeps state across calls; a parser that can run twice resets it
     * (0, not 1: glibc then also forgets the rest of a cluster like -hq that
     * the last parse stopped in). */
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":fqvhV", long_options, NULL)) != -1) {
        switch (c) {
        case OPT_INVERSE:
            opts->inverse = 1;
            break;
        case OPT_NORM:
            if (strcmp(optarg, "backward") == 0)
                opts->norm = FS_NORM_BACKWARD;
            else if (strcmp(optarg, "ortho") == 0)
                opts->norm = FS_NORM_ORTHO;
            else if (strcmp(optarg, "forward") == 0)
                opts->norm = FS_NORM_FORWARD;
            else
                return fs_error_set(FS_ERR_USAGE,
                                    "--norm=%s: expected backward, ortho or forward", optarg);
            break;
        case OPT_AXES:
            if (parse_axes(optarg, opts) != FS_OK)
                return fs_error_status();
            break;
        case OPT_TRANSPOSE:
            if (strcmp(optarg, "auto") != 0 && !fs_exchange_find(optarg)) {
                char known[256] = "";
                for (int i = 0; fs_exchange_strategies[i]; i++) {
                    if (i)
                        strncat(known, ", ", sizeof known - strlen(known) - 1);
                    strncat(known, fs_exchange_strategies[i]->name, sizeof known - strlen(known) - 1);
                }
                return fs_error_set(FS_ERR_USAGE,
                                    "--transpose=%s: unknown strategy (known: %s, auto)", optarg,
                                    known);
            }
            free(opts->transpose);
            opts->transpose = strdup(optarg);
            break;
        case OPT_SEED: {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (errno || end == optarg || *end != '\0' || optarg[0] == '-')
                return fs_error_set(FS_ERR_USAGE, "--seed=%s: expected a non-negative integer",
                                    optarg);
            opts->seed = v;
            break;
        }
        case OPT_PACKET: {
            uint64_t bytes;
            if (fs_parse_bytes(optarg, &bytes) != 0 || bytes < 1 || bytes > MAX_PACKET_BYTES)
                return fs_error_set(FS_ERR_USAGE,
                                    "--packet=%s: expected a size from 1 byte to 1G (K, M, G "
                                    "suffixes allowed)",
                                    optarg);
            opts->packet_bytes = (size_t)bytes;
            break;
        }
        case OPT_QUEUES: {
            long v;
            if (parse_long(optarg, 1, MAX_QUEUES, &v) != 0)
                return fs_error_set(FS_ERR_USAGE, "--queues=%s: expected an integer from 1 to %d",
                                    optarg, MAX_QUEUES);
            opts->queues = (int)v;
            break;
        }
        case OPT_REAL:
            opts->real = 1;
            break;
        case OPT_LAST_SIZE: {
            long v;
            if (parse_long(optarg, 1, LONG_MAX, &v) != 0)
                return fs_error_set(FS_ERR_USAGE, "--last-size=%s: expected a positive integer", optarg);
            opts->last_size = v;
            break;
        }
        case OPT_PRECISION:
            if (strcmp(optarg, "auto") == 0)
                opts->precision = FS_PRECISION_AUTO;
            else if (strcmp(optarg, "single") == 0)
                opts->precision = FS_PRECISION_SINGLE;
            else if (strcmp(optarg, "double") == 0)
                opts->precision = FS_PRECISION_DOUBLE;
            else
                return fs_error_set(FS_ERR_USAGE, "--precision=%s: expected auto, single or double",
                                    optarg);
            break;
        case OPT_PLAN:
            if (strcmp(optarg, "estimate") == 0)
                opts->plan = FS_PLAN_ESTIMATE;
            else if (strcmp(optarg, "measure") == 0)
                opts->plan = FS_PLAN_MEASURE;
            else if (strcmp(optarg, "patient") == 0)
                opts->plan = FS_PLAN_PATIENT;
            else
                return fs_error_set(FS_ERR_USAGE, "--plan=%s: expected estimate, measure or patient",
                                    optarg);
            break;
        case OPT_CHECK:
            opts->check = 1;
            break;
        case OPT_CHECK_TOLERANCE: {
            char *end;
            errno = 0;
            double v = strtod(optarg, &end);
            if (errno || end == optarg || *end != '\0' || !(v > 0) || v >= 1e300)
                return fs_error_set(FS_ERR_USAGE, "--check-tolerance=%s: expected a positive number",
                                    optarg);
            opts->check_tolerance = v;
            opts->check = 1;
            break;
        }
        case OPT_DECOMP:
            if (strcmp(optarg, "auto") == 0)
                opts->decomp = FS_DECOMP_AUTO;
            else if (strcmp(optarg, "slab") == 0)
                opts->decomp = FS_DECOMP_SLAB;
            else if (strcmp(optarg, "pencil") == 0)
                opts->decomp = FS_DECOMP_PENCIL;
            else
                return fs_error_set(FS_ERR_USAGE, "--decomp=%s: expected auto, slab or pencil", optarg);
            break;
        case OPT_GRID: {
            char *x = strpbrk(optarg, "xX");
            long a, b;
            char first[32];
            if (!x || (size_t)(x - optarg) >= sizeof first)
                return fs_error_set(FS_ERR_USAGE, "--grid=%s: expected AxB, e.g. 4x8", optarg);
            memcpy(first, optarg, (size_t)(x - optarg));
            first[x - optarg] = '\0';
            if (parse_long(first, 1, 1 << 24, &a) != 0 || parse_long(x + 1, 1, 1 << 24, &b) != 0)
                return fs_error_set(FS_ERR_USAGE, "--grid=%s: expected AxB, e.g. 4x8", optarg);
            opts->grid[0] = (int)a;
            opts->grid[1] = (int)b;
            break;
        }
        case OPT_DRY_RUN:
            opts->dry_run = 1;
            break;
        case OPT_SHAPE: {
            int64_t shape[FS_MAX_DIMS];
            int n = fs_parse_shape(optarg, shape);
            if (n < 1)
                return fs_error_set(FS_ERR_USAGE, "--shape=%s: expected lengths like 512x512x256 "
                                    "(1 to %d positive lengths, at most %s elements)", optarg,
                                    FS_MAX_DIMS, FS_MAX_ELEMS_TEXT);
            memcpy(opts->shape, shape, sizeof shape);
            opts->shape_ndim = n;
            break;
        }
        case OPT_DTYPE:
            if (strcmp(optarg, "float32") && strcmp(optarg, "float64") && strcmp(optarg, "complex64") &&
                strcmp(optarg, "complex128"))
                return fs_error_set(FS_ERR_USAGE,
                                    "--dtype=%s: expected float32, float64, complex64 or complex128",
                                    optarg);
            free(opts->dtype);
            opts->dtype = strdup(optarg);
            break;
        case OPT_RANKS: {
            long v;
            if (parse_long(optarg, 1, 1L << 30, &v) != 0)
                return fs_error_set(FS_ERR_USAGE, "--ranks=%s: expected a positive integer", optarg);
            opts->ranks = (int)v;
            break;
        }
        case OPT_MEM_PER_RANK: {
            uint64_t b;
            char *t = optarg;
            int tera = strlen(t) > 0 && (t[strlen(t) - 1] == 'T' || t[strlen(t) - 1] == 't');
            if (tera) {
                char tmp[64];
                snprintf(tmp, sizeof tmp, "%.*sG", (int)strlen(t) - 1, t);
                if (fs_parse_bytes(tmp, &b) != 0 || b > (UINT64_MAX >> 10))
                    return fs_error_set(FS_ERR_USAGE, "--mem-per-rank=%s: expected a size", optarg);
                b <<= 10;
            } else if (fs_parse_bytes(t, &b) != 0 || b == 0) {
                return fs_error_set(FS_ERR_USAGE, "--mem-per-rank=%s: expected a size like 4G", optarg);
            }
            opts->mem_per_rank = b;
            break;
        }
        case OPT_REPORT:
            if (optarg[0] == '\0')
                return fs_error_set(FS_ERR_USAGE, "--report: expected a file name");
            free(opts->report_file);
            opts->report_file = strdup(optarg);
            break;
        case OPT_PROGRESS:
            opts->progress = 1;
            break;
        case OPT_SHARDS:
            opts->shards = 1;
            break;
        case OPT_SHARD_OUTPUT: {
            long v = -1;
            if (optarg && parse_long(optarg, 1, 1L << 30, &v) != 0)
                return fs_error_set(FS_ERR_USAGE, "--shard-output=%s: expected a number of files", optarg);
            opts->shard_output = (int)v;
            break;
        }
        case OPT_CHUNKS: {
            int64_t shape[FS_MAX_DIMS];
            int n = fs_parse_shape(optarg, shape);
            if (n < 1)
                return fs_error_set(FS_ERR_USAGE, "--chunks=%s: expected a chunk shape like 16x64x64",
                                    optarg);
            memcpy(opts->chunks, shape, sizeof shape);
            opts->chunks_ndim = n;
            break;
        }
        case OPT_DEFLATE: {
            long v;
            if (parse_long(optarg, 1, 9, &v) != 0)
                return fs_error_set(FS_ERR_USAGE, "--deflate=%s: expected a level from 1 to 9", optarg);
            opts->deflate = (int)v;
            break;
        }
        case OPT_WISDOM:
            if (optarg[0] == '\0')
                return fs_error_set(FS_ERR_USAGE, "--wisdom: expected a file name");
            free(opts->wisdom_file);
            opts->wisdom_file = strdup(optarg);
            break;
        case 'f':
            opts->force = 1;
            break;
        case 'q':
            opts->quiet = 1;
            break;
        case 'v':
            opts->verbose = 1;
            break;
        case 'h':
            opts->action = FS_ACTION_HELP;
            return FS_OK;
        case 'V':
            opts->action = FS_ACTION_VERSION;
            return FS_OK;
        case ':':
            return fs_error_set(FS_ERR_USAGE, "'%s': the option needs a value", argv[optind - 1]);
        default:
            if (optopt && optopt < OPT_INVERSE)
                return fs_error_set(FS_ERR_USAGE, "'-%c': unknown option", optopt);
            return fs_error_set(FS_ERR_USAGE, "'%s': unknown option", argv[optind - 1]);
        }
    }
    if (opts->last_size && !(opts->real && opts->inverse))
        return fs_error_set(FS_ERR_USAGE, "--last-size: applies only to --inverse --real");
    if (opts->quiet && opts->verbose)
        return fs_error_set(FS_ERR_USAGE, "--quiet, --verbose: the two contradict each other");
    int npos = argc - optind;
    if ((opts->shape_ndim || opts->dtype || opts->ranks || opts->mem_per_rank) && !opts->dry_run)
        return fs_error_set(FS_ERR_USAGE, "--shape, --dtype, --ranks, --mem-per-rank: only with --dry-run");
    if (opts->dry_run) {
        /* Planning a job: the input may be described instead of named. */
        if (opts->shape_ndim ? npos != 0 : (npos < 1 || npos > 2))
            return fs_error_set(FS_ERR_USAGE, opts->shape_ndim
                                                  ? "--dry-run --shape: no INPUT or OUTPUT expected"
                                                  : "--dry-run: expected INPUT [OUTPUT], or --shape");
        if (!opts->shape_ndim &&
            fs_split_location(argv[optind], &opts->input_file, &opts->input_dataset) != FS_OK)
            return fs_error_status();
        if (!opts->shape_ndim && npos == 2 &&
            fs_split_location(argv[optind + 1], &opts->output_file, &opts->output_dataset) != FS_OK)
            return fs_error_status();
        return FS_OK;
    }
    if (npos < 2)
        return fs_error_set(FS_ERR_USAGE, "missing %s: expected INPUT and OUTPUT",
                            npos == 0 ? "INPUT and OUTPUT" : "OUTPUT");
    if (npos > 2)
        return fs_error_set(FS_ERR_USAGE, "'%s': one argument too many (expected INPUT and OUTPUT)",
                            argv[optind + 2]);
    if (fs_split_location(argv[optind], &opts->input_file, &opts->input_dataset) != FS_OK ||
        fs_split_location(argv[optind + 1], &opts->output_file, &opts->output_dataset) != FS_OK)
        return fs_error_status();
    return FS_OK;
}

void fs_options_free(fs_options *opts)
{
    free(opts->input_file);
    free(opts->input_dataset);
    free(opts->output_file);
    free(opts->output_dataset);
    free(opts->transpose);
    free(opts->wisdom_file);
    free(opts->report_file);
    free(opts->dtype);
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

fs_status fs_options_resolve_axes(const fs_options *opts, int ndim, int axes_out[FS_MAX_DIMS])
{
    for (int k = 0; k < FS_MAX_DIMS; k++)
        axes_out[k] = opts->naxes == 0 && k < ndim;
    if (opts->naxes == 0)
        return FS_OK;
    for (int i = 0; i < opts->naxes; i++) {
        int axis = opts->axes[i];
        int resolved = axis < 0 ? axis + ndim : axis;
        if (resolved < 0 || resolved >= ndim)
            return fs_error_set(FS_ERR_USAGE, "--axes: axis %d is out of range for a %d-D dataset",
                                axis, ndim);
        if (axes_out[resolved])
            return fs_error_set(FS_ERR_USAGE,
                                "--axes: axes %d and %d are the same axis of a %d-D dataset",
                                opts->axes[i], resolved, ndim);
        axes_out[resolved] = 1;
    }
    return FS_OK;
}
