/* SPDX-License-Identifier: GPL-3.0-or-later */
/* plan_options: see plan_options.h. */
#include "config.h"

#include "plan/plan_options.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PACKET_BYTES ((uint64_t)1 << 30)
#define MAX_QUEUES 1024
#define STRINGIFY(x) #x
#define XSTRINGIFY(x) STRINGIFY(x)
/* --transpose's value for the fastest strategy that fits (planner.h), as
 * without --transpose. */
#define TRANSPOSE_DEFAULT "default"

/* fs_opt_enum stores a name's value through an int: the enums must be ints. */
_Static_assert(sizeof(fs_norm) == sizeof(int), "fs_norm is stored as an int");
_Static_assert(sizeof(fs_precision_choice) == sizeof(int), "fs_precision_choice is stored as an int");
_Static_assert(sizeof(fs_plan_effort) == sizeof(int), "fs_plan_effort is stored as an int");
_Static_assert(sizeof(fs_decomp) == sizeof(int), "fs_decomp is stored as an int");

static const fs_opt_name norm_names[] = {
    {"backward", FS_NORM_BACKWARD}, {"ortho", FS_NORM_ORTHO}, {"forward", FS_NORM_FORWARD}, {NULL, 0}};
static const fs_opt_name precision_names[] = {{"auto", FS_PRECISION_AUTO},
                                              {"single", FS_PRECISION_SINGLE},
                                              {"double", FS_PRECISION_DOUBLE},
                                              {NULL, 0}};
static const fs_opt_name plan_names[] = {
    {"estimate", FS_PLAN_ESTIMATE}, {"measure", FS_PLAN_MEASURE}, {"patient", FS_PLAN_PATIENT}, {NULL, 0}};
static const fs_opt_name decomp_names[] = {
    {"auto", FS_DECOMP_AUTO}, {"slab", FS_DECOMP_SLAB}, {"pencil", FS_DECOMP_PENCIL}, {NULL, 0}};

/* ------------------------------------------------------------ transform */

/* --norm: remembered as given, so an inverse knows when to take the
 * forward run's. */
static fs_status set_norm(const fs_opt *opt, const char *arg, void *section)
{
    fs_transform_options *o = section;
    fs_status st = fs_opt_enum(opt, arg, section);
    o->norm_given = st == FS_OK;
    return st;
}

static fs_status set_axes(const fs_opt *opt, const char *arg, void *section)
{
    fs_transform_options *o = section;
    (void)opt;
    size_t len = strlen(arg);
    if (len == 0 || arg[len - 1] == ',' || arg[0] == ',' || strstr(arg, ",,"))
        return fs_error_set(FS_ERR_USAGE, "--axes=%s: expected a comma-separated list of axes", arg);
    int n = 0;
    for (const char *p = arg; *p; ) {
        const char *comma = strchr(p, ',');
        size_t tok = comma ? (size_t)(comma - p) : strlen(p);
        char item[64];
        long axis;
        snprintf(item, sizeof item, "%.*s", (int)(tok < sizeof item ? tok : sizeof item - 1), p);
        if (tok >= sizeof item ||
            fs_opt_parse_long(item, -FS_LAYOUT_MAX_DIMS, FS_LAYOUT_MAX_DIMS - 1, &axis) != 0)
            return fs_error_set(FS_ERR_USAGE,
                                "--axes=%s: '%s' is not an axis (an integer from %d to %d)", arg,
                                item, -FS_LAYOUT_MAX_DIMS, FS_LAYOUT_MAX_DIMS - 1);
        if (n == FS_LAYOUT_MAX_DIMS)
            return fs_error_set(FS_ERR_USAGE, "--axes=%s: more than %d axes", arg,
                                FS_LAYOUT_MAX_DIMS);
        for (int i = 0; i < n; i++)
            if (o->axes[i] == axis)
                return fs_error_set(FS_ERR_USAGE, "--axes=%s: axis %ld given twice", arg, axis);
        o->axes[n++] = (int)axis;
        p += tok + (comma ? 1 : 0);
    }
    o->naxes = n;
    return FS_OK;
}

/* --dct=TYPE, --dst=TYPE: scipy's type 1 to 4, for every transformed axis. */
static fs_status set_type(const fs_opt *opt, const char *arg, fs_transform_options *o, int dst)
{
    long type;
    if (fs_opt_parse_long(arg, 1, 4, &type) != 0)
        return fs_error_set(FS_ERR_USAGE, "--%s=%s: expected a type from 1 to 4 (scipy.fft.%s's "
                            "type)", opt->long_name, arg, opt->long_name);
    o->r2r_all = (fs_r2r)((dst ? FS_DST1 : FS_DCT1) + (int)type - 1);
    o->r2r_given |= dst ? FS_R2R_OPTION_DST : FS_R2R_OPTION_DCT;
    return FS_OK;
}

static fs_status set_dct(const fs_opt *opt, const char *arg, void *section)
{
    return set_type(opt, arg, section, 0);
}

static fs_status set_dst(const fs_opt *opt, const char *arg, void *section)
{
    return set_type(opt, arg, section, 1);
}

/* --r2r=AXIS:KIND,...: the kind of each axis named. */
static fs_status set_r2r(const fs_opt *opt, const char *arg, void *section)
{
    fs_transform_options *o = section;
    (void)opt;
    int n = 0;
    for (const char *p = arg; n == 0 || *p; ) {
        size_t tok = strcspn(p, ",");
        char item[64], *colon;
        long axis;
        int kind = -1;
        snprintf(item, sizeof item, "%.*s", (int)(tok < sizeof item ? tok : sizeof item - 1), p);
        if ((colon = strchr(item, ':')) != NULL) {
            *colon = '\0';
            kind = fs_r2r_parse(colon + 1);
        }
        if (tok >= sizeof item || kind < 0 ||
            fs_opt_parse_long(item, -FS_LAYOUT_MAX_DIMS, FS_LAYOUT_MAX_DIMS - 1, &axis) != 0)
            return fs_error_set(FS_ERR_USAGE, "--r2r=%s: '%.*s' is not AXIS:KIND (an axis from %d "
                                "to %d, a kind dct1 to dct4, dst1 to dst4 or fft)", arg,
                                (int)(tok < 40 ? tok : 40), p, -FS_LAYOUT_MAX_DIMS,
                                FS_LAYOUT_MAX_DIMS - 1);
        if (n == FS_LAYOUT_MAX_DIMS)
            return fs_error_set(FS_ERR_USAGE, "--r2r=%s: more than %d axes", arg,
                                FS_LAYOUT_MAX_DIMS);
        for (int i = 0; i < n; i++)
            if (o->r2r_axes[i] == axis)
                return fs_error_set(FS_ERR_USAGE, "--r2r=%s: axis %ld given twice", arg, axis);
        o->r2r_axes[n] = (int)axis;
        o->r2r_kinds[n++] = (fs_r2r)kind;
        p += tok + (p[tok] == ',');
        if (p[-1] == ',' && !*p)
            return fs_error_set(FS_ERR_USAGE, "--r2r=%s: ends in a comma", arg);
    }
    o->nr2r = n;
    o->r2r_given |= FS_R2R_OPTION_R2R;
    return FS_OK;
}

static fs_status set_grid(const fs_opt *opt, const char *arg, void *section)
{
    fs_transform_options *o = section;
    (void)opt;
    const char *x = strpbrk(arg, "xX");
    long a, b;
    char first[32];
    if (!x || (size_t)(x - arg) >= sizeof first)
        return fs_error_set(FS_ERR_USAGE, "--grid=%s: expected AxB, e.g. 4x8", arg);
    memcpy(first, arg, (size_t)(x - arg));
    first[x - arg] = '\0';
    if (fs_opt_parse_long(first, 1, 1 << 24, &a) != 0 || fs_opt_parse_long(x + 1, 1, 1 << 24, &b) != 0)
        return fs_error_set(FS_ERR_USAGE, "--grid=%s: expected AxB, e.g. 4x8", arg);
    o->grid[0] = (int)a;
    o->grid[1] = (int)b;
    return FS_OK;
}

/* --pad=N|Kx[,...], --window=NAME[:PARAM][,...]: parsed here, resolved
 * against the transformed axes by the planner. */
static fs_status set_pad(const fs_opt *opt, const char *arg, void *section)
{
    char label[96];
    snprintf(label, sizeof label, "--%s=%.80s", opt->long_name, arg);
    return fs_pad_parse(label, arg, &((fs_transform_options *)section)->pad);
}

static fs_status set_window(const fs_opt *opt, const char *arg, void *section)
{
    char label[96];
    snprintf(label, sizeof label, "--%s=%.80s", opt->long_name, arg);
    return fs_window_parse(label, arg, &((fs_transform_options *)section)->window);
}

#define T fs_transform_options
const fs_opt fs_transform_option_lines[] = {
    {FS_OPT("inverse", 0, FS_OPT_NO_ARG, fs_opt_flag, T, inverse),
     .help = "      --inverse           inverse transform (numpy.fft.ifftn)\n"},
    {FS_OPT("norm", 0, FS_OPT_ARG, set_norm, T, norm), .names = norm_names,
     .help = "      --norm=MODE         backward (default), ortho or forward, as in numpy\n"},
    {FS_OPT("axes", 0, FS_OPT_ARG, set_axes, T, axes),
     .help = "      --axes=LIST         comma-separated axes to transform; negative counts\n"
             "                          from the end; default all axes\n"},
    {FS_OPT("dct", 0, FS_OPT_ARG, set_dct, T, r2r_all),
     .help = "      --dct=TYPE          cosine transform of type 1-4 along every transformed\n"
             "                          axis (scipy.fft.dctn; with --inverse, idctn)\n"},
    {FS_OPT("dst", 0, FS_OPT_ARG, set_dst, T, r2r_all),
     .help = "      --dst=TYPE          sine transform of type 1-4 (scipy.fft.dstn, idstn)\n"},
    {FS_OPT("r2r", 0, FS_OPT_ARG, set_r2r, T, r2r_kinds),
     .help = "      --r2r=AXIS:KIND,... a kind per axis: dct1-dct4, dst1-dst4 or fft; the\n"
             "                          other transformed axes are Fourier axes\n"},
    {FS_OPT("real", 0, FS_OPT_NO_ARG, fs_opt_flag, T, real),
     .help = "      --real              real input (numpy.fft.rfftn); with --inverse, real\n"
             "                          output (numpy.fft.irfftn)\n"},
    {FS_OPT("last-size", 0, FS_OPT_ARG, fs_opt_long, T, last_size), .lo = 1, .hi = LONG_MAX,
     .expected = "a positive integer",
     .help = "      --last-size=N       length of the last transformed axis of the real\n"
             "                          output of --inverse --real (default: the input's\n"
             "                          last_size attribute, else 2*(m-1))\n"},
    {FS_OPT("precision", 0, FS_OPT_ARG, fs_opt_enum, T, precision), .names = precision_names,
     .help = "      --precision=P       auto (default: single for float32, complex64 and\n"
             "                          8/16-bit integer input), single or double\n"},
    {FS_OPT("decomp", 0, FS_OPT_ARG, fs_opt_enum, T, decomp), .names = decomp_names,
     .help = "      --decomp=D          auto (default: slabs while every rank has data),\n"
             "                          slab or pencil\n"},
    {FS_OPT("grid", 0, FS_OPT_ARG, set_grid, T, grid),
     .help = "      --grid=AxB          pencil process grid (A x B = ranks)\n"},
    {FS_OPT("pad", 0, FS_OPT_ARG, set_pad, T, pad),
     .help = "      --pad=N[,N...]      zero padding (or cutting) to N along each transformed\n"
             "                          axis, as numpy.fft.fftn(a, s); Kx: K times the\n"
             "                          input's length (--pad=2x doubles every axis)\n"},
    {FS_OPT("window", 0, FS_OPT_ARG, set_window, T, window),
     .help = "      --window=W[,W...]   taper the input as it is read: hann, hamming,\n"
             "                          blackman, tukey[:ALPHA], kaiser:BETA or none, one\n"
             "                          for all or one per transformed axis (periodic\n"
             "                          scipy.signal.windows; spectra divide by mean(w^2))\n"},
    {FS_OPT("window-symmetric", 0, FS_OPT_NO_ARG, fs_opt_flag, T, window_sym),
     .help = "      --window-symmetric  the windows' symmetric form (scipy's sym=True)\n"},
    {FS_OPT("plan", 0, FS_OPT_ARG, fs_opt_enum, T, plan), .names = plan_names,
     .help = "      --plan=EFFORT       FFTW planning: estimate (default), measure, patient\n"},
    {.long_name = NULL},
};
#undef T

void fs_transform_options_init(fs_transform_options *o)
{
    memset(o, 0, sizeof *o);
    o->norm = FS_NORM_BACKWARD;
}

const char *fs_transform_options_kinds_name(const fs_transform_options *o)
{
    return o->r2r_given & FS_R2R_OPTION_R2R   ? "--r2r"
           : o->r2r_given & FS_R2R_OPTION_DST ? "--dst"
           : o->r2r_given & FS_R2R_OPTION_DCT ? "--dct"
                                              : NULL;
}

fs_status fs_transform_options_check(const fs_transform_options *o)
{
    unsigned g = o->r2r_given;
    if (o->last_size && !(o->real && o->inverse))
        return fs_error_set(FS_ERR_USAGE, "--last-size: applies only to --inverse --real");
    if (g & (g - 1)) {
        char given[32] = "";
        const char *names[] = {"--dct", "--dst", "--r2r"};
        for (int i = 0; i < 3; i++)
            if (g & (1u << i))
                snprintf(given + strlen(given), sizeof given - strlen(given), "%s%s",
                         given[0] ? ", " : "", names[i]);
        return fs_error_set(FS_ERR_USAGE, "%s: give one of them (--dct=TYPE or --dst=TYPE: one "
                            "kind for every transformed axis; --r2r=AXIS:KIND,...: a kind per "
                            "axis)", given);
    }
    if (o->real && (g & (FS_R2R_OPTION_DCT | FS_R2R_OPTION_DST)))
        return fs_error_set(FS_ERR_USAGE, "--real, %s: every transformed axis is then a cosine or "
                            "sine axis, and --real halves a Fourier axis; name the cosine and "
                            "sine axes with --r2r=AXIS:KIND,...", fs_transform_options_kinds_name(o));
    if (o->inverse && (o->pad.n || o->window.n))
        return fs_error_set(FS_ERR_USAGE, "%s: shapes the input of a forward transform; the "
                            "inverse of a padded or windowed result gives that field as it was "
                            "transformed", o->pad.n ? "--pad" : "--window");
    if (o->window_sym && !o->window.n)
        return fs_error_set(FS_ERR_USAGE, "--window-symmetric: only with --window");
    return FS_OK;
}

fs_status fs_transform_options_axes(const fs_transform_options *o, int ndim,
                                    int axes_out[FS_LAYOUT_MAX_DIMS])
{
    for (int k = 0; k < FS_LAYOUT_MAX_DIMS; k++)
        axes_out[k] = o->naxes == 0 && k < ndim;
    if (o->naxes == 0)
        return FS_OK;
    for (int i = 0; i < o->naxes; i++) {
        int axis = o->axes[i];
        int resolved = axis < 0 ? axis + ndim : axis;
        if (resolved < 0 || resolved >= ndim)
            return fs_error_set(FS_ERR_USAGE, "--axes: axis %d is out of range for a %d-D dataset",
                                axis, ndim);
        if (axes_out[resolved])
            return fs_error_set(FS_ERR_USAGE,
                                "--axes: axes %d and %d are the same axis of a %d-D dataset",
                                o->axes[i], resolved, ndim);
        axes_out[resolved] = 1;
    }
    return FS_OK;
}

fs_status fs_transform_options_aligned(const fs_transform_options *o, int lead,
                                       fs_transform_options *out)
{
    *out = *o;
    for (int i = 0; i < o->naxes + o->nr2r; i++) {
        int *axis = i < o->naxes ? &out->axes[i] : &out->r2r_axes[i - o->naxes];
        if (*axis >= 0 && *axis < lead)
            return fs_error_set(FS_ERR_USAGE, "%s: axis %d is one of the %d first axes of the "
                                "last INPUT, which the first (broadcast over them) has not",
                                i < o->naxes ? "--axes" : "--r2r", *axis, lead);
        *axis -= *axis >= 0 ? lead : 0;
    }
    return FS_OK;
}

fs_status fs_transform_options_kinds(const fs_transform_options *o, int ndim,
                                     const int transformed[FS_LAYOUT_MAX_DIMS],
                                     fs_r2r r2r_out[FS_LAYOUT_MAX_DIMS])
{
    int every = (o->r2r_given & (FS_R2R_OPTION_DCT | FS_R2R_OPTION_DST)) != 0, seen[FS_LAYOUT_MAX_DIMS];
    for (int k = 0; k < FS_LAYOUT_MAX_DIMS; k++) {
        r2r_out[k] = every && k < ndim && transformed[k] ? o->r2r_all : FS_AXIS_FFT;
        seen[k] = -FS_LAYOUT_MAX_DIMS - 1;
    }
    for (int i = 0; i < o->nr2r; i++) {
        int axis = o->r2r_axes[i], a = axis < 0 ? axis + ndim : axis;
        if (a < 0 || a >= ndim)
            return fs_error_set(FS_ERR_USAGE, "--r2r: axis %d is out of range for a %d-D dataset",
                                axis, ndim);
        if (seen[a] >= -FS_LAYOUT_MAX_DIMS)
            return fs_error_set(FS_ERR_USAGE,
                                "--r2r: axes %d and %d are the same axis of a %d-D dataset",
                                seen[a], axis, ndim);
        if (!transformed[a])
            return fs_error_set(FS_ERR_USAGE, "--r2r: axis %d is not transformed (not among "
                                "--axes)", axis);
        seen[a] = axis;
        r2r_out[a] = o->r2r_kinds[i];
    }
    return FS_OK;
}

/* ------------------------------------------------------------ strategy */

const char *fs_strategy_request_name(const fs_strategy_request *r)
{
    switch (r->kind) {
    case FS_STRATEGY_AUTO: return "auto";
    case FS_STRATEGY_NAMED: return r->ops->name;
    case FS_STRATEGY_DEFAULT: break;
    }
    return TRANSPOSE_DEFAULT;
}

static fs_status set_transpose(const fs_opt *opt, const char *arg, void *section)
{
    fs_strategy_options *o = section;
    (void)opt;
    if (strcmp(arg, TRANSPOSE_DEFAULT) == 0) {
        o->strategy = (fs_strategy_request){FS_STRATEGY_DEFAULT, NULL};
    } else if (strcmp(arg, "auto") == 0) {
        o->strategy = (fs_strategy_request){FS_STRATEGY_AUTO, NULL};
    } else if (fs_exchange_find(arg)) {
        o->strategy = (fs_strategy_request){FS_STRATEGY_NAMED, fs_exchange_find(arg)};
    } else {
        char known[256] = "";
        for (int i = 0; fs_exchange_strategies[i]; i++) {
            if (i)
                strncat(known, ", ", sizeof known - strlen(known) - 1);
            strncat(known, fs_exchange_strategies[i]->name, sizeof known - strlen(known) - 1);
        }
        return fs_error_set(FS_ERR_USAGE, "--transpose=%s: unknown strategy (known: %s, auto, "
                            TRANSPOSE_DEFAULT ")", arg, known);
    }
    return FS_OK;
}

static fs_status set_seed(const fs_opt *opt, const char *arg, void *section)
{
    fs_strategy_options *o = section;
    (void)opt;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (errno || end == arg || *end != '\0' || arg[0] == '-')
        return fs_error_set(FS_ERR_USAGE, "--seed=%s: expected a non-negative integer", arg);
    o->seed = v;
    return FS_OK;
}

static fs_status set_packet(const fs_opt *opt, const char *arg, void *section)
{
    fs_strategy_options *o = section;
    (void)opt;
    uint64_t bytes;
    if (fs_parse_bytes(arg, &bytes) != 0 || bytes < 1 || bytes > MAX_PACKET_BYTES)
        return fs_error_set(FS_ERR_USAGE,
                            "--packet=%s: expected a size from 1 byte to 1G (K, M, G suffixes allowed)",
                            arg);
    o->packet_bytes = (size_t)bytes;
    return FS_OK;
}

/* A size with K, M, G or T (which fs_parse_bytes does not know). */
static fs_status set_mem_per_rank(const fs_opt *opt, const char *arg, void *section)
{
    fs_strategy_options *o = section;
    (void)opt;
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
    o->mem_per_rank = b;
    return FS_OK;
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

static void transpose_help(FILE *out)
{
    fputs("      --transpose=NAME    all-to-all exchange strategy; by default the fastest\n"
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
    fprintf(out, "                            %-9s %s\n", TRANSPOSE_DEFAULT,
            "the fastest that fits, as without --transpose");
}

static void packet_help(FILE *out)
{
    char packet[256];
    strategies_using(FS_EXCHANGE_USES_PACKET, packet, sizeof packet);
    fprintf(out,
            "      --packet=BYTES      message piece for %s;\n"
            "                          K, M, G suffixes (default 1M)\n",
            packet);
}

static void queues_help(FILE *out)
{
    char queues[256];
    strategies_using(FS_EXCHANGE_USES_QUEUES, queues, sizeof queues);
    fprintf(out, "      --queues=L          output queues of %s (default 4)\n", queues);
}

#define S fs_strategy_options
const fs_opt fs_strategy_option_lines[] = {
    {FS_OPT("transpose", 0, FS_OPT_ARG, set_transpose, S, strategy), .help_fn = transpose_help},
    {FS_OPT("seed", 0, FS_OPT_ARG, set_seed, S, seed),
     .help = "      --seed=N            random order seed (default 1)\n"},
    {FS_OPT("packet", 0, FS_OPT_ARG, set_packet, S, packet_bytes), .help_fn = packet_help},
    {FS_OPT("queues", 0, FS_OPT_ARG, fs_opt_long, S, queues), .lo = 1, .hi = MAX_QUEUES,
     .expected = "an integer from 1 to " XSTRINGIFY(MAX_QUEUES), .help_fn = queues_help},
    {FS_OPT("mem-per-rank", 0, FS_OPT_ARG, set_mem_per_rank, S, mem_per_rank),
     .help = "      --mem-per-rank=B    memory per rank (K,M,G,T) the default strategy must\n"
             "                          fit; a dry run says whether the plan fits it and\n"
             "                          exits 1 when it does not\n"},
    {.long_name = NULL},
};
#undef S

void fs_strategy_options_init(fs_strategy_options *o)
{
    memset(o, 0, sizeof *o);
    o->strategy.kind = FS_STRATEGY_DEFAULT;
    o->seed = FS_DEFAULT_SEED;
    o->packet_bytes = FS_DEFAULT_PACKET_BYTES;
    o->queues = FS_DEFAULT_QUEUES;
}
