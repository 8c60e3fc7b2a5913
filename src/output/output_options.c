/* SPDX-License-Identifier: GPL-3.0-or-later */
/* output_options: the options of what a run writes (output.h): their
 * lines, their --help and their checks together. OUTPUT itself is an
 * operand, which the parser (options.h) splits into file and dataset. */
#include "config.h"

#include "output/output.h"

#include <stdlib.h>
#include <string.h>

/* --shard-output alone: one file per rank (-1). */
static fs_status set_shard_output(const fs_opt *opt, const char *arg, void *section)
{
    fs_output_options *o = section;
    (void)opt;
    long v = -1;
    if (arg && fs_opt_parse_long(arg, 1, 1L << 30, &v) != 0)
        return fs_error_set(FS_ERR_USAGE, "--shard-output=%s: expected a number of files", arg);
    o->shard_output = (int)v;
    return FS_OK;
}

static fs_status set_chunks(const fs_opt *opt, const char *arg, void *section)
{
    fs_output_options *o = section;
    (void)opt;
    int64_t shape[FS_LAYOUT_MAX_DIMS];
    int n = fs_parse_shape(arg, shape);
    if (n < 1)
        return fs_error_set(FS_ERR_USAGE, "--chunks=%s: expected a chunk shape like 16x64x64", arg);
    memcpy(o->chunks, shape, sizeof shape);
    o->chunks_ndim = n;
    return FS_OK;
}

/* --attr=NAME=VALUE, as often as given: NAME neither empty, longer than
 * 255 bytes, nor one of fftshard's own. */
static fs_status add_attr(const fs_opt *opt, const char *arg, void *section)
{
    fs_output_options *o = section;
    (void)opt;
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || eq - arg > 255)
        return fs_error_set(FS_ERR_USAGE, "--attr=%s: expected NAME=VALUE (time=0.5)", arg);
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(eq - arg), arg);
    if (fs_output_own_attr(name))
        return fs_error_set(FS_ERR_USAGE, "--attr=%s: %s is an attribute fftshard writes itself",
                            arg, name);
    char **grown = realloc(o->attrs, sizeof *grown * (size_t)(o->nattrs + 1));
    if (!grown)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    o->attrs = grown;
    if (!(o->attrs[o->nattrs] = strdup(arg)))
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    o->nattrs++;
    return FS_OK;
}

#define O fs_output_options
const fs_opt fs_output_option_lines[] = {
    {FS_OPT("wisdom", 0, FS_OPT_ARG, fs_opt_file, O, wisdom_file),
     .help = "      --wisdom=FILE       read and update FFTW wisdom and auto's choices\n"},
    {FS_OPT("shard-output", 0, FS_OPT_OPTIONAL_ARG, set_shard_output, O, shard_output),
     .help = "      --shard-output[=N]  write N files (default one per rank) and OUTPUT as\n"
             "                          a virtual dataset that reads them as one array\n"},
    {FS_OPT("chunks", 0, FS_OPT_ARG, set_chunks, O, chunks),
     .help = "      --chunks=SHAPE      store the output in chunks of SHAPE (e.g. 16x64x64)\n"},
    {FS_OPT("deflate", 0, FS_OPT_ARG, fs_opt_long, O, deflate), .lo = 1, .hi = 9,
     .expected = "a level from 1 to 9",
     .help = "      --deflate=LEVEL     compress the output chunks (shuffle + deflate 1-9)\n"},
    {FS_OPT("add", 0, FS_OPT_NO_ARG, fs_opt_flag, O, add),
     .help = "      --add               add the results to an existing OUTPUT, keeping its\n"
             "                          other datasets (with -f, replacing those of the\n"
             "                          same path); never through a link in OUTPUT, and\n"
             "                          refused (status 4) if OUTPUT changes meanwhile\n"},
    {FS_OPT("attr", 0, FS_OPT_ARG, add_attr, O, attrs),
     .help = "      --attr=NAME=VALUE   an attribute of every result and spectrum group\n"
             "                          (float64 if a number, else text) in place of the\n"
             "                          inputs' of that name: --attr=time=0.5 gives a\n"
             "                          spectrum's group of a series its time coordinate\n"},
    {FS_OPT("force", 'f', FS_OPT_NO_ARG, fs_opt_flag, O, force),
     .help = "  -f, --force             replace OUTPUT if it exists\n"},
    {FS_OPT("report", 0, FS_OPT_ARG, fs_opt_file, O, report_file),
     .help = "      --report=FILE       write the timing and prefix-sum report as JSON\n"
             "                          (- for standard output); with --dry-run, the plan\n"},
    {.long_name = NULL},
};
#undef O

fs_status fs_output_options_check(const fs_output_options *o, int ninputs, int named_result)
{
    if (o->add && o->shard_output)
        return fs_error_set(FS_ERR_USAGE, "--add, --shard-output: a set of shard files cannot be "
                            "added to");
    if (ninputs < 2)
        return FS_OK;
    /* Several INPUTs: every result goes under its input's path in the one
     * OUTPUT file, so the options that name or split one output do not
     * apply (a stage's one result, or the group of --spectrum-only, may be
     * named). */
    if (o->dataset && !named_result)
        return fs_error_set(FS_ERR_USAGE, "%s:%s: a dataset path for OUTPUT applies to one INPUT "
                            "only (with %d, each result goes under its input's path)",
                            o->file, o->dataset, ninputs);
    if (o->shard_output)
        return fs_error_set(FS_ERR_USAGE, "--shard-output: takes one INPUT (got %d)", ninputs);
    return FS_OK;
}

void fs_output_options_free(fs_output_options *o)
{
    free(o->file);
    free(o->dataset);
    free(o->wisdom_file);
    free(o->report_file);
    for (int i = 0; i < o->nattrs; i++)
        free(o->attrs[i]);
    free(o->attrs);
    memset(o, 0, sizeof *o);
}
