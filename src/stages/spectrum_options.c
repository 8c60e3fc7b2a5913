/* SPDX-License-Identifier: GPL-3.0-or-later */
/* spectrum_options: the spectra's options, their checks against the run
 * and what the spectra ask of it (spectrum.h). */
#include "config.h"

#include "stages/spectrum.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fs_spectrum_active(const void *opts, const fs_stage_shared *shared)
{
    const fs_spectrum_options *o = opts;
    return o->power || shared->cross;
}

const char *fs_spectrum_option(const void *opts)
{
    const fs_spectrum_options *o = opts;
    return o->power ? "--power-spectrum" : "--cross";
}

/* What needs a spectrum asks for one; --spectrum-only alone means the
 * power spectrum. */
fs_status fs_spectrum_check(void *opts, const fs_stage_facts *f, int on)
{
    fs_spectrum_options *o = opts;
    if (f->shared->spectrum_only && !on && !f->others_with_groups) {
        o->power = 1;
        on = 1;
    }
    if (!on && (o->bins.n || o->bins.nedges || o->mu_bins || o->nper || o->compensate ||
                o->nshot)) {
        /* the options given, by name (the correlation function's bins are
         * --r-bins; --los and --multipoles are not the spectra's alone) */
        const char *given[] = {o->bins.n || o->bins.nedges ? "--bins" : NULL,
                               o->mu_bins ? "--mu-bins" : NULL,
                               o->nper ? "--spectrum-per" : NULL,
                               o->compensate ? "--compensate" : NULL,
                               o->nshot ? "--shot-noise" : NULL};
        char names[128] = "";
        for (size_t i = 0; i < sizeof given / sizeof *given; i++)
            if (given[i])
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                         names[0] ? ", " : "", given[i]);
        return fs_error_set(FS_ERR_USAGE, "%s: of a power spectrum, only with --power-spectrum, "
                            "--cross or --spectrum-only", names);
    }
    /* One value for several INPUTs could be each one's or the sum's. */
    if (o->nshot && !f->dry_run && o->nshot != f->ninputs)
        return fs_error_set(FS_ERR_USAGE, "--shot-noise: %d value%s for %d INPUT%s; give one "
                            "per INPUT in their order, 0 for none (e.g. --shot-noise=0,P0: the "
                            "second's alone)", o->nshot, o->nshot > 1 ? "s" : "", f->ninputs,
                            f->ninputs > 1 ? "s" : "");
    if (o->mu_bins && !f->shared->los.given)
        return fs_error_set(FS_ERR_USAGE, "--mu-bins: only with --los=AXIS");
    /* With a field stage the spectra are of its results, not of INPUTs. */
    if (on && f->field && (f->shared->cross || o->nshot))
        return fs_error_set(FS_ERR_USAGE, "%s, %s: the spectra are of %s's results, not of "
                            "each INPUT; compute it in a run without %s", f->field,
                            f->shared->cross ? "--cross" : "--shot-noise", f->field, f->field);
    return FS_OK;
}

void fs_spectrum_needs(const void *opts, const fs_stage_facts *f, int naxes, fs_stage_needs *n)
{
    (void)opts, (void)naxes;
    n->forward = 1;
    n->whole = 1;
    n->pads = n->windows = 1;
    n->keep_first = f->shared->cross;
    n->kept = "--cross's copy";
    n->groups = 1;
    n->longest_group = f->field ? "power_spectrum_compressive" : "cross_spectrum";
    n->sees_results = 1;
}

/* --bins: of |k|. */
static fs_status set_bins(const fs_opt *opt, const char *arg, void *section)
{
    return fs_bins_parse("--bins", arg, "|k|", "K", fs_opt_field(opt, section));
}

/* --spectrum-per=AXIS[,AXIS...]: axes, checked against the input later. */
static fs_status set_spectrum_per(const fs_opt *opt, const char *arg, void *section)
{
    fs_spectrum_options *o = section;
    (void)opt;
    int n = fs_opt_parse_ints(arg, o->per, FS_LAYOUT_MAX_DIMS, -FS_LAYOUT_MAX_DIMS,
                              FS_LAYOUT_MAX_DIMS - 1);
    if (n < 1)
        return fs_error_set(FS_ERR_USAGE, "--spectrum-per=%s: expected axes (integers from "
                            "%d to %d) separated by commas", arg, -FS_LAYOUT_MAX_DIMS,
                            FS_LAYOUT_MAX_DIMS - 1);
    o->nper = n;
    return FS_OK;
}

/* --shot-noise=P0[,P0...]: one power (>= 0) per INPUT, counted later. */
static fs_status set_shot_noise(const fs_opt *opt, const char *arg, void *section)
{
    fs_spectrum_options *o = section;
    (void)opt;
    int n = fs_opt_parse_numbers(arg, o->shot_noise, FS_MAX_SHOT, 1);
    if (n < 1)
        return fs_error_set(FS_ERR_USAGE, "--shot-noise=%s: expected a power (a number >= 0) "
                            "per INPUT, separated by commas (at most %d)", arg, FS_MAX_SHOT);
    o->nshot = n;
    return FS_OK;
}

/* --compensate: the power p of the window sinc^p of each scheme, plus
 * FS_WINDOW_ALIASED for the aliased window sum. */
static const fs_opt_name window_names[] = {
    {"none", -1}, {"ngp", 1}, {"cic", 2}, {"tsc", 3}, {"pcs", 4},
    {"ngp-shotnoise", FS_WINDOW_ALIASED + 1}, {"cic-shotnoise", FS_WINDOW_ALIASED + 2},
    {"tsc-shotnoise", FS_WINDOW_ALIASED + 3}, {"pcs-shotnoise", FS_WINDOW_ALIASED + 4},
    {NULL, 0}};

#define O fs_spectrum_options
const fs_opt fs_spectrum_lines[] = {
    {FS_OPT("power-spectrum", 0, FS_OPT_NO_ARG, fs_opt_flag, O, power),
     .help = "      --power-spectrum    mean |X|^2 in shells of |k| one k_f wide; several\n"
             "                          INPUTs add their power (of u, v, w: E(k) =\n"
             "                          0.5 power modes / (V k_f) with --box-size);\n"
             "                          with --apply or --vector, of their results\n"},
    {FS_OPT("spectrum-only", 0, FS_OPT_NO_ARG, fs_opt_flag, fs_stage_shared, spectrum_only),
     .shared = 1,
     .help = "      --spectrum-only     the spectrum alone: no transformed array written;\n"
             "                          OUTPUT:/GROUP puts its group under GROUP\n"},
    {FS_OPT("cross", 0, FS_OPT_NO_ARG, fs_opt_flag, fs_stage_shared, cross), .shared = 1,
     .help = "      --cross             Re(X_a conj X_b) of two INPUTs (/cross_spectrum)\n"},
    {FS_OPT("box-size", 0, FS_OPT_ARG, fs_box_lengths_option, fs_stage_shared, box),
     .shared = 1,
     .help = "      --box-size=L[,L..]  box length of the transformed axes (default: the\n"
             "                          inputs' box_size attribute); power then times\n"
             "                          V / N^2; grid: each axis's length, as with none\n"},
    {FS_OPT("bins", 0, FS_OPT_ARG, set_bins, O, bins),
     .help = "      --bins=N|E0,E1,..   N equal bins up to the largest |k|, these edges,\n"
             "                          or KMIN:KMAX:DK; each [E_i, E_i+1), decided exactly\n"},
    {FS_OPT("mu-bins", 0, FS_OPT_ARG, fs_opt_long, O, mu_bins), .lo = 1, .hi = 1000,
     .expected = "a number of mu bins from 1 to 1000",
     .help = "      --mu-bins=N         mu bins with --los (default 5)\n"},
    {FS_OPT("spectrum-per", 0, FS_OPT_ARG, set_spectrum_per, O, per),
     .help = "      --spectrum-per=AXIS[,AXIS..]\n"
             "                          a spectrum per index of these batch axes\n"
             "                          (power[i, bin]) instead of one over them all\n"},
    {FS_OPT("compensate", 0, FS_OPT_ARG, fs_opt_enum, O, compensate), .names = window_names,
     .help = "      --compensate=ngp|cic|tsc|pcs  divide the power by the mass assignment\n"
             "                          window's W(k)^2, W = prod_a sinc(pi f_a / n_a)^p\n"
             "                          (an interlaced mesh); SCHEME-shotnoise: by C(k),\n"
             "                          W^2 summed over the aliases (a mesh painted\n"
             "                          without interlacing: its shot noise then flat);\n"
             "                          with --paint its window by default\n"},
    {FS_OPT("shot-noise", 0, FS_OPT_ARG, set_shot_noise, O, shot_noise),
     .help = "      --shot-noise=P0[,P0..]  each INPUT's shot noise, subtracted from its\n"
             "                          own power spectrum (their sum from the summed\n"
             "                          power), never from a cross spectrum; with\n"
             "                          --paint the particles' by default\n"},
    {.long_name = NULL},
};
#undef O

