/* SPDX-License-Identifier: GPL-3.0-or-later */
/* operators_options: --apply's list parsed into plain data with the command
 * line (pure: no I/O), --k-units, their checks against the run, and the
 * text the results record (operators.h). */
#include "config.h"

#include "stages/operators.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {
    "gaussian", "tophat", "sharpk", "lowpass", "highpass", "deriv", "laplacian", "poisson", "transfer",
};

/* R or K: a positive finite double, a subnormal one too (strtod's ERANGE
 * for it is no error: the filters are written in forms that hold for any
 * positive R and K). NULL when it is one, else what is wrong. */
static const char *positive(const char *text, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(text, &end);
    if (end == text || *end != '\0' || isnan(*v) || signbit(*v) || (*v == 0 && errno != ERANGE))
        return "expected a positive number";
    if (*v == 0)
        return "underflows to 0 in double precision; expected a positive number";
    return isfinite(*v) ? NULL : "not finite in double precision; expected a positive number";
}

static int integer(const char *text, long lo, long hi, int *v)
{
    char *end;
    errno = 0;
    long x = strtol(text, &end, 10);
    if (end == text || *end != '\0' || errno || x < lo || x > hi)
        return -1;
    *v = (int)x;
    return 0;
}

/* The parameters of one operator: "R", "K[:N]", "AXIS", "FILE" or none. */
static fs_status parse_params(fs_operator *op, char *args, const char *item)
{
    fs_operator_kind k = op->kind;
    int none = k == FS_OPER_LAPLACIAN || k == FS_OPER_POISSON;
    if (none)
        return args ? fs_error_set(FS_ERR_USAGE, "--apply: '%s': %s takes no parameter", item,
                                   kind_names[k])
                    : FS_OK;
    if (!args || !*args)
        return fs_error_set(FS_ERR_USAGE, "--apply: '%s': %s needs a parameter (%s)", item,
                            kind_names[k],
                            k == FS_OPER_DERIV      ? "deriv:AXIS"
                            : k == FS_OPER_TRANSFER ? "transfer:FILE"
                            : k == FS_OPER_GAUSSIAN || k == FS_OPER_TOPHAT ? "a radius R"
                                                                           : "a wave number K");
    if (k == FS_OPER_TRANSFER) {
        op->file = strdup(args);
        return op->file ? FS_OK : fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    if (k == FS_OPER_DERIV)
        return integer(args, -FS_LAYOUT_MAX_DIMS, FS_LAYOUT_MAX_DIMS - 1, &op->axis) == 0
                   ? FS_OK
                   : fs_error_set(FS_ERR_USAGE, "--apply: '%s': expected an axis from %d to %d",
                                  item, -FS_LAYOUT_MAX_DIMS, FS_LAYOUT_MAX_DIMS - 1);
    op->order = FS_BUTTERWORTH_ORDER;
    char *order = strchr(args, ':');
    int filter = k == FS_OPER_LOWPASS || k == FS_OPER_HIGHPASS;
    if (order && filter) {
        *order++ = '\0';
        if (integer(order, 1, 64, &op->order) != 0)
            return fs_error_set(FS_ERR_USAGE, "--apply: '%s': expected an order N from 1 to 64",
                                item);
    }
    const char *wrong = positive(args, &op->param);
    return wrong ? fs_error_set(FS_ERR_USAGE, "--apply: '%s': %s", item, wrong) : FS_OK;
}

static fs_status parse_one(fs_operator *op, char *item)
{
    char copy[256];
    snprintf(copy, sizeof copy, "%s", item);
    char *args = strchr(item, ':');
    if (args)
        *args++ = '\0';
    size_t nk = sizeof kind_names / sizeof kind_names[0];
    size_t i = 0;
    while (i < nk && strcmp(item, kind_names[i]) != 0)
        i++;
    if (i == nk)
        return fs_error_set(FS_ERR_USAGE, "--apply: '%s': unknown operator (expected gaussian:R, "
                            "tophat:R, sharpk:K, lowpass:K[:N], highpass:K[:N], deriv:AXIS, "
                            "laplacian, poisson or transfer:FILE)", copy);
    op->kind = (fs_operator_kind)i;
    return parse_params(op, args, copy);
}

/* --apply's value parsed into the stage's options (pure: no I/O). */
static fs_status parse(const char *text, fs_operators *out)
{
    char *all = strdup(text ? text : "");
    if (!all)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    fs_status st = FS_OK;
    char *rest = all;
    while (st == FS_OK) {
        char *comma = strchr(rest, ',');
        if (comma)
            *comma = '\0';
        if (!*rest)
            st = fs_error_set(FS_ERR_USAGE, "--apply=%s: expected OP[,OP...] with no empty "
                              "operator", text);
        else if (out->n == FS_MAX_OPERATORS)
            st = fs_error_set(FS_ERR_USAGE, "--apply: at most %d operators", FS_MAX_OPERATORS);
        else
            st = parse_one(&out->op[out->n++], rest);
        if (!comma)
            break;
        rest = comma + 1;
    }
    free(all);
    return st;
}

void fs_operators_release(void *opts)
{
    fs_operators *ops = opts;
    for (int i = 0; i < ops->n; i++)
        free(ops->op[i].file);
    free(ops->given);
    memset(ops, 0, sizeof *ops);
}

void fs_operators_text(const fs_operators *ops, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < ops->n && used < size; i++) {
        const fs_operator *op = &ops->op[i];
        const char *sep = i ? "," : "";
        const char *name = kind_names[op->kind];
        int n;
        if (op->kind == FS_OPER_LOWPASS || op->kind == FS_OPER_HIGHPASS)
            n = snprintf(buf + used, size - used, "%s%s:%.17g:%d", sep, name, op->param, op->order);
        else if (op->kind == FS_OPER_DERIV)
            n = snprintf(buf + used, size - used, "%s%s:%d", sep, name, op->axis);
        else if (op->kind == FS_OPER_TRANSFER)
            n = snprintf(buf + used, size - used, "%s%s:%s", sep, name, op->file);
        else if (op->kind == FS_OPER_LAPLACIAN || op->kind == FS_OPER_POISSON)
            n = snprintf(buf + used, size - used, "%s%s", sep, name);
        else
            n = snprintf(buf + used, size - used, "%s%s:%.17g", sep, name, op->param);
        used += n > 0 ? (size_t)n : 0;
    }
}

int fs_operators_active(const void *opts, const fs_stage_shared *shared)
{
    (void)shared;
    return ((const fs_operators *)opts)->n > 0;
}

const char *fs_operators_option(const void *opts)
{
    (void)opts;
    return "--apply";
}

/* --k-units=cycles: the cutoffs given in cycles per unit length (per
 * sample without --box-size) become the radians every formula takes, once. */
fs_status fs_operators_check(void *opts, const fs_stage_facts *f, int on)
{
    fs_operators *ops = opts;
    (void)f;
    if (ops->cycles && !on)
        return fs_error_set(FS_ERR_USAGE, "--k-units: only with --apply");
    if (f->boundary && !on)
        return fs_error_set(FS_ERR_USAGE, "--boundary: only with --apply");
    for (int i = 0; ops->cycles && !ops->converted && i < ops->n; i++) {
        fs_operator *op = &ops->op[i];
        if (op->kind == FS_OPER_SHARPK || op->kind == FS_OPER_LOWPASS ||
            op->kind == FS_OPER_HIGHPASS)
            op->param *= 2 * M_PI;
    }
    ops->converted = ops->cycles;
    return FS_OK;
}

static const fs_opt_name k_units[] = {{"radians", 0}, {"cycles", 1}, {NULL, 0}};

/* --apply: the list parsed once, here (a second --apply replaces it). */
static fs_status set_apply(const fs_opt *opt, const char *arg, void *section)
{
    fs_operators *ops = section;
    int cycles = ops->cycles; /* --k-units given before */
    (void)opt;
    fs_operators_release(section);
    ops->cycles = cycles;
    fs_status st = parse(arg, section);
    if (st == FS_OK && !(ops->given = strdup(arg)))
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
    return st;
}

const fs_opt fs_operators_lines[] = {
    {FS_OPT("apply", 0, FS_OPT_ARG, set_apply, fs_operators, n),
     .help = "      --apply=OP[,OP..]   in order: gaussian:R, tophat:R, sharpk:K,\n"
             "                          lowpass:K[:N], highpass:K[:N] (Butterworth order\n"
             "                          N, default 2), deriv:AXIS, laplacian,\n"
             "                          poisson (-1/k^2, 0 at k = 0),\n"
             "                          transfer:FILE (table k T, covering 0 .. max |k|);\n"
             "                          k = 2 pi fftfreq(n, 1/n) / L, L from --box-size\n"},
    {FS_OPT("k-units", 0, FS_OPT_ARG, fs_opt_enum, fs_operators, cycles), .names = k_units,
     .help = "      --k-units=radians|cycles  the K of sharpk, lowpass and highpass in\n"
             "                          radians (k, the default) or cycles (k / 2 pi)\n"
             "                          per sample, or per unit of --box-size\n"},
    {.long_name = NULL},
};
