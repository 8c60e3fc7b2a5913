/* SPDX-License-Identifier: GPL-3.0-or-later */
/* options: see options.h.
 *
 * The lines of every section are gathered into one list (`all`), each with
 * where its section lives in the configuration; getopt_long's table is
 * built from the list. --help prints the sections' own lines in the order
 * of `engine_help` below, the stages' from the stage table. */
#include "config.h"

#include "options.h"

#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <fftw3.h>
#include <hdf5.h>

/* What fs_opt's has_arg values stand for. */
_Static_assert(FS_OPT_NO_ARG == no_argument && FS_OPT_ARG == required_argument &&
                   FS_OPT_OPTIONAL_ARG == optional_argument,
               "optable.h's has_arg values are getopt's");

/* ------------------------------------------------------ the run's own lines */

/* --help, --version: the action, and parsing stops there. */
static fs_status set_help(const fs_opt *opt, const char *arg, void *section)
{
    (void)opt, (void)arg;
    ((fs_run_config *)section)->action = FS_ACTION_HELP;
    return FS_OK;
}

static fs_status set_version(const fs_opt *opt, const char *arg, void *section)
{
    (void)opt, (void)arg;
    ((fs_run_config *)section)->action = FS_ACTION_VERSION;
    return FS_OK;
}

/* --platform, gone from fftshard: the prediction on a simulated machine is
 * a program of its own that reads the dry run's JSON. */
static fs_status set_platform(const fs_opt *opt, const char *arg, void *section)
{
    (void)opt, (void)section;
    return fs_error_set(FS_ERR_USAGE, "--platform: the prediction is a command of its own: "
                        "fftshard --dry-run --report=- ... | fftshard-predict %s", arg);
}

#define R fs_run_config
static const fs_opt run_lines[] = {
    {FS_OPT("allow-nonfinite", 0, FS_OPT_NO_ARG, fs_opt_flag, R, allow_nonfinite),
     .help = "      --allow-nonfinite   transform input holding NaN or Inf (else exit 3);\n"
             "                          the result's NaN and Inf may lie elsewhere than\n"
             "                          numpy's\n"},
    {FS_OPT("shards", 0, FS_OPT_NO_ARG, fs_opt_flag, R, shards),
     .help = "      --shards            INPUT is a pattern with one number field\n"
             "                          (field.%04d.h5) or a file listing the shards\n"},
    {FS_OPT("quiet", 'q', FS_OPT_NO_ARG, fs_opt_flag, R, quiet),
     .help = "  -q, --quiet             no summary on stderr\n"},
    {FS_OPT("progress", 0, FS_OPT_NO_ARG, fs_opt_flag, R, progress),
     .help = "      --progress          progress lines on stderr during every phase\n"},
    {FS_OPT("verbose", 'v', FS_OPT_NO_ARG, fs_opt_flag, R, verbose),
     .help = "  -v, --verbose           explain decisions; show HDF5 error stacks\n"},
    {FS_OPT("help", 'h', FS_OPT_NO_ARG, set_help, R, action),
     .help = "  -h, --help              show this help and exit\n"},
    {FS_OPT("version", 'V', FS_OPT_NO_ARG, set_version, R, action),
     .help = "  -V, --version           show version and library versions and exit\n"},
    {FS_OPT("platform", 0, FS_OPT_ARG, set_platform, R, action)},
    {.long_name = NULL},
};
#undef R

/* ------------------------------------------------------- the whole list */

/* One line of some section, and where its section is in a configuration
 * (offset; stage s's own section, or the one the stages share). */
typedef struct line {
    const fs_opt *opt;
    size_t offset;
    int stage;          /* -1: a section of the configuration itself */
} line;

#define MAX_LINES 128

/* Every section's lines, in the order above: the run's, the plan's, the
 * check's, the output's, the dry run's, the line of sight's (read by
 * several stages, stages/los.h), then each stage's. */
static int all_lines(line *lines)
{
    const struct {
        const fs_opt *opts;
        size_t offset;
    } sections[] = {
        {run_lines, 0},
        {fs_transform_option_lines, offsetof(fs_run_config, transform)},
        {fs_strategy_option_lines, offsetof(fs_run_config, strategy)},
        {fs_ooc_option_lines, offsetof(fs_run_config, ooc)},
        {fs_check_option_lines, offsetof(fs_run_config, check)},
        {fs_output_option_lines, offsetof(fs_run_config, output)},
        {fs_dryrun_option_lines, offsetof(fs_run_config, dry)},
        {fs_los_option_lines, offsetof(fs_run_config, stages.shared.los)},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
        for (const fs_opt *o = sections[i].opts; o->long_name && n < MAX_LINES; o++)
            lines[n++] = (line){o, sections[i].offset, -1};
    for (int s = 0; fs_stage_table[s]; s++)
        for (const fs_opt *o = fs_stage_table[s]->options; o && o->long_name && n < MAX_LINES; o++)
            lines[n++] = (line){o, 0, s};
    return n;
}

/* The section line l sets in c. */
static void *section_of(const line *l, fs_run_config *c)
{
    if (l->stage < 0)
        return (char *)c + l->offset;
    return l->opt->shared ? (void *)&c->stages.shared : c->stages.opts[l->stage];
}

/* The line of a long name (NULL: none). */
static const fs_opt *find_line(const line *lines, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(lines[i].opt->long_name, name) == 0)
            return lines[i].opt;
    return NULL;
}

/* ------------------------------------------------------------------ help */

/* --help's blocks of the sections' options, by long name; the stages'
 * blocks come between "Sharded files" and "Output and messages". */
static const struct {
    const char *heading;
    const char *names[13];
} engine_help[] = {
    {"Transform:\n", {"inverse", "norm", "axes", "dct", "dst", "r2r", "real", "last-size",
                      "precision", "check", "check-tolerance", "allow-nonfinite"}},
    {"Non-periodic data:\n", {"pad", "window", "window-symmetric", "boundary"}},
    {"Parallel algorithm:\n", {"transpose", "seed", "packet", "queues", "decomp", "grid", "plan",
                               "wisdom"}},
    {"Planning a job (no data is read or written):\n", {"dry-run", "shape", "dtype", "ranks",
                                                        "mem-per-rank"}},
    {"Out of core (arrays larger than the ranks' memory):\n", {"out-of-core", "in-memory", "scratch",
                                                                 "disk-rate"}},
    {"Sharded files:\n", {"shards", "shard-output", "chunks", "deflate"}},
    {NULL, {NULL}}, /* the stages */
    {"Line of sight (--power-spectrum, --cross, --correlation-function):\n", {"los",
                                                                              "multipoles"}},
    {"Output and messages:\n", {"add", "attr", "force", "report", "quiet", "progress", "verbose",
                                "help", "version"}},
};

/* The stages' blocks: a stage with a heading opens one, the others go on
 * in the block before them. */
static void print_stages_help(FILE *out)
{
    for (int s = 0; fs_stage_table[s]; s++) {
        if (fs_stage_table[s]->help_heading)
            fprintf(out, "%s%s", s ? "\n" : "", fs_stage_table[s]->help_heading);
        for (const fs_opt *o = fs_stage_table[s]->options; o && o->long_name; o++)
            fs_opt_print_help(o, out);
    }
    fputs("\n", out);
}

void fs_options_print_help(FILE *out)
{
    line lines[MAX_LINES];
    int n = all_lines(lines);
    fputs("Usage: mpiexec -n P fftshard [OPTIONS] INPUT... OUTPUT\n"
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
          "numpy.fft.fftn(input)[k0,k1,...]. Data that is not periodic: --dct,\n"
          "--dst, --r2r compute scipy.fft.dctn, dstn (real output for real input).\n"
          "\n",
          out);
    for (size_t b = 0; b < sizeof engine_help / sizeof engine_help[0]; b++) {
        if (!engine_help[b].heading) {
            print_stages_help(out);
            continue;
        }
        fputs(engine_help[b].heading, out);
        int most = (int)(sizeof engine_help[b].names / sizeof engine_help[b].names[0]);
        for (int i = 0; i < most && engine_help[b].names[i]; i++) {
            const fs_opt *o = find_line(lines, n, engine_help[b].names[i]);
            if (o)
                fs_opt_print_help(o, out);
        }
        fputs("\n", out);
    }
    fputs("Exit status: 0 success, 1 runtime failure, 2 usage error, 3 unusable input,\n"
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

/* ------------------------------------------------------------- parsing */

/* The val getopt_long returns for an option with a long name only: beyond
 * every character, so that an unknown short option (optopt) tells itself
 * apart from a long one. */
#define LONG_ONLY_BASE 1000

static void getopt_tables(const line *lines, int n, struct option *long_options,
                          char *short_options)
{
    char *s = short_options;
    *s++ = ':';
    for (int i = 0; i < n; i++) {
        const fs_opt *o = lines[i].opt;
        int val = o->short_name ? o->short_name : LONG_ONLY_BASE + i;
        long_options[i] = (struct option){o->long_name, o->has_arg, NULL, val};
        if (o->short_name) {
            *s++ = (char)o->short_name;
            if (o->has_arg != no_argument)
                *s++ = ':';
            if (o->has_arg == optional_argument)
                *s++ = ':';
        }
    }
    *s = '\0';
    long_options[n] = (struct option){NULL, 0, NULL, 0};
}

/* The line of what getopt_long returned, NULL for none. */
static const line *line_of(const line *lines, int n, int c)
{
    if (c >= LONG_ONLY_BASE && c < LONG_ONLY_BASE + n)
        return &lines[c - LONG_ONLY_BASE];
    for (int i = 0; i < n; i++)
        if (lines[i].opt->short_name && lines[i].opt->short_name == c)
            return &lines[i];
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

static fs_status set_defaults(int argc, char **argv, fs_run_config *c)
{
    memset(c, 0, sizeof *c);
    c->action = FS_ACTION_RUN;
    fs_transform_options_init(&c->transform);
    fs_strategy_options_init(&c->strategy);
    c->dry.dtype = FS_DTYPE_COMPLEX128;
    c->command_line = join_argv(argc, argv);
    if (!c->command_line)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    return fs_stage_config_init(&c->stages);
}

/* One more INPUT. */
static fs_status add_input(fs_run_config *c, const char *arg)
{
    fs_location *grown = realloc(c->inputs, (size_t)(c->ninputs + 1) * sizeof *grown);
    if (!grown)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    c->inputs = grown;
    fs_location *in = &c->inputs[c->ninputs];
    memset(in, 0, sizeof *in);
    if (fs_split_location(arg, &in->file, &in->dataset) != FS_OK)
        return fs_error_status();
    if (in->dataset && fs_slice_parse(arg, in->dataset, &in->slice) != FS_OK) {
        free(in->file);
        free(in->dataset);
        return fs_error_status();
    }
    c->ninputs++;
    return FS_OK;
}

fs_stage_facts fs_options_facts(const fs_run_config *c)
{
    return (fs_stage_facts){
        .ninputs = c->ninputs,
        .dry_run = c->dry.on,
        .inverse = c->transform.inverse,
        .r2r = fs_transform_options_kinds_name(&c->transform),
        .check = c->check.on,
        .shard_output = c->output.shard_output,
        .pad = c->transform.pad.n > 0,
        .window = c->transform.window.n > 0,
        .boundary = c->transform.boundary.n > 0,
        .output_file = c->output.file,
        .output_dataset = c->output.dataset,
        .shared = &c->stages.shared,
    };
}

fs_run_asked fs_options_asked(const fs_run_config *c)
{
    return (fs_run_asked){
        .command_line = c->command_line,
        .output_file = c->output.file,
        .report_file = c->output.report_file,
        .strategy = fs_strategy_request_name(&c->strategy.strategy),
        .inverse = c->transform.inverse,
        .norm = fs_norm_name(c->transform.norm),
        .precision_given = c->transform.precision != FS_PRECISION_AUTO,
        .quiet = c->quiet,
    };
}

static int naxes_of(const fs_transform_request *rq)
{
    int D = 0;
    for (int k = 0; k < rq->ndim; k++)
        D += rq->transform_axis[k] != 0;
    return D;
}

fs_footprint_keeps fs_options_keeps(const fs_run_config *c, const fs_transform_request *rq)
{
    fs_stage_facts f = fs_options_facts(c);
    fs_stage_needs n;
    fs_stages_needs(&c->stages, &f, naxes_of(rq), &n);
    fs_stage_bytes b = fs_stages_footprint(&c->stages, &f, rq);
    return (fs_footprint_keeps){c->check.on, n.keep_first + n.buffers, n.undo, b.held, b.end,
                                n.keep_first, n.field && c->stages.shared.spectrum_only,
                                n.buffers_gone, b.sums};
}

void fs_options_ooc_args(const fs_run_config *c, const fs_transform_request *rq,
                         const fs_node *node, fs_exchange_params *params, fs_ooc_args *a)
{
    fs_stage_facts f = fs_options_facts(c);
    fs_stage_needs n;
    fs_stages_needs(&c->stages, &f, naxes_of(rq), &n);
    *params = (fs_exchange_params){c->strategy.seed, c->strategy.packet_bytes, c->strategy.queues,
                                   node->crowded};
    memset(a, 0, sizeof *a);
    *a = (fs_ooc_args){.rq = rq, .strategy = &c->strategy.strategy, .params = params,
                       .keeps = fs_options_keeps(c, rq),
                       .io_thread = node->io_thread, .mem_per_rank = node->mem_per_rank,
                       .mem_source = node->mem_source, .forced = c->ooc.forced,
                       .in_memory = c->ooc.in_memory,
                       .round_trip = n.field, .check = c->check.on, .bins = n.forward,
                       .kept = n.keeps_each   ? FS_OOC_KEEP_EACH
                               : n.keep_first ? FS_OOC_KEEP_FIRST
                                              : 0,
                       .inputs = n.inputs ? n.inputs : c->ninputs, .results = n.results,
                       .writes_transform = !c->stages.shared.spectrum_only,
                       .read_rate = c->ooc.read_rate, .write_rate = c->ooc.write_rate};
    if (f.dry_run && n.keeps_each) /* the last INPUT's turn: the results' passes */
        a->input = a->inputs - 1;
    const char *stage = fs_stages_block_wise(&c->stages, &f);
    if (stage)
        snprintf(a->cannot, sizeof a->cannot, "cannot compute %s", stage);
    else if (c->output.shard_output)
        snprintf(a->cannot, sizeof a->cannot, "cannot write --shard-output's files");
}

/* The checks that span sections, once the operands are taken. */
static fs_status check_all(fs_run_config *c)
{
    if (fs_transform_options_check(&c->transform) != FS_OK)
        return fs_error_status();
    if (c->quiet && c->verbose)
        return fs_error_set(FS_ERR_USAGE, "--quiet, --verbose: the two contradict each other");
    if (c->shards && c->ninputs > 1)
        return fs_error_set(FS_ERR_USAGE, "--shards: takes one INPUT (got %d)", c->ninputs);
    fs_stage_facts f = fs_options_facts(c);
    if (fs_stages_check(&c->stages, &f) != FS_OK)
        return fs_error_status();
    /* a stage's one result, or the group of --spectrum-only, may be named */
    fs_stage_needs needs;
    fs_stages_needs(&c->stages, &f, 0, &needs);
    int named = needs.field || c->stages.shared.spectrum_only;
    return fs_output_options_check(&c->output, c->dry.on ? 1 : c->ninputs, named);
}

/* INPUT... and OUTPUT, argv[first..argc-1]. */
static fs_status take_operands(int argc, char **argv, int first, fs_run_config *c)
{
    int npos = argc - first;
    fs_dryrun_options *d = &c->dry;
    if ((d->shape_ndim || d->dtype_given || d->ranks) && !d->on)
        return fs_error_set(FS_ERR_USAGE, "--shape, --dtype, --ranks: only with --dry-run");
    if (d->on) {
        /* Planning a job: the input may be described instead of named. */
        if (d->shape_ndim ? npos != 0 : (npos < 1 || npos > 2))
            return fs_error_set(FS_ERR_USAGE, d->shape_ndim
                                                  ? "--dry-run --shape: no INPUT or OUTPUT expected"
                                                  : "--dry-run: expected INPUT [OUTPUT], or --shape");
        if (!d->shape_ndim && add_input(c, argv[first]) != FS_OK)
            return fs_error_status();
        if (!d->shape_ndim && npos == 2 &&
            fs_split_location(argv[first + 1], &c->output.file, &c->output.dataset) != FS_OK)
            return fs_error_status();
        return FS_OK;
    }
    if (npos < 2)
        return fs_error_set(FS_ERR_USAGE, "missing %s: expected INPUT and OUTPUT",
                            npos == 0 ? "INPUT and OUTPUT" : "OUTPUT");
    for (int i = first; i < argc - 1; i++)
        if (add_input(c, argv[i]) != FS_OK)
            return fs_error_status();
    if (fs_split_location(argv[argc - 1], &c->output.file, &c->output.dataset) != FS_OK)
        return fs_error_status();
    return FS_OK;
}

fs_status fs_options_parse(int argc, char **argv, fs_run_config *c)
{
    if (set_defaults(argc, argv, c) != FS_OK)
        return fs_error_status();
    line lines[MAX_LINES];
    int n = all_lines(lines);
    struct option long_options[MAX_LINES + 1];
    char short_options[3 * MAX_LINES + 2];
    getopt_tables(lines, n, long_options, short_options);

    /* getopt keeps state across calls; a parser that can run twice resets it
     * (0, not 1: glibc then also forgets the rest of a cluster like -hq that
     * the last parse stopped in). */
    optind = 0;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
        const line *l = line_of(lines, n, ch);
        if (!l)
            return getopt_error(ch, argv);
        if (l->opt->handle(l->opt, optarg, section_of(l, c)) != FS_OK)
            return fs_error_status();
        if (c->action != FS_ACTION_RUN)
            return FS_OK;
    }
    if (take_operands(argc, argv, optind, c) != FS_OK)
        return fs_error_status();
    return check_all(c);
}

void fs_options_free(fs_run_config *c)
{
    for (int i = 0; i < c->ninputs; i++) {
        free(c->inputs[i].file);
        free(c->inputs[i].dataset);
    }
    free(c->inputs);
    fs_output_options_free(&c->output);
    fs_ooc_options_free(&c->ooc);
    fs_stage_config_free(&c->stages);
    free(c->command_line);
    memset(c, 0, sizeof *c);
}
