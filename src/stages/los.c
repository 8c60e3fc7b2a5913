/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include "stages/los.h"

static fs_status set_los(const fs_opt *opt, const char *arg, void *section)
{
    fs_los_options *o = section;
    long axis;
    (void)opt;
    if (fs_opt_parse_long(arg, -FS_LAYOUT_MAX_DIMS, FS_LAYOUT_MAX_DIMS - 1, &axis) != 0)
        return fs_error_set(FS_ERR_USAGE, "--los=%s: expected an axis (an integer from %d to %d)",
                            arg, -FS_LAYOUT_MAX_DIMS, FS_LAYOUT_MAX_DIMS - 1);
    o->axis = (int)axis;
    o->given = 1;
    return FS_OK;
}

/* --multipoles=0,2,4: increasing even degrees. */
static fs_status set_multipoles(const fs_opt *opt, const char *arg, void *section)
{
    fs_los_options *o = section;
    (void)opt;
    int n = fs_opt_parse_ints(arg, o->poles, FS_MAX_POLES, 0, 2 * (FS_MAX_POLES - 1));
    for (int i = 0; i < n; i++)
        if (o->poles[i] % 2 || (i && o->poles[i] <= o->poles[i - 1]))
            n = -1;
    if (n < 1)
        return fs_error_set(FS_ERR_USAGE, "--multipoles=%s: expected increasing even degrees "
                            "from 0 to %d (e.g. 0,2,4)", arg, 2 * (FS_MAX_POLES - 1));
    o->npoles = n;
    return FS_OK;
}

#define O fs_los_options
const fs_opt fs_los_option_lines[] = {
    {FS_OPT("los", 0, FS_OPT_ARG, set_los, O, axis),
     .help = "      --los=AXIS          the line of sight: the spectra also bin by\n"
             "                          |mu| = |k_AXIS| / |k| (power_mu ...)\n"},
    {FS_OPT("multipoles", 0, FS_OPT_ARG, set_multipoles, O, poles),
     .help = "      --multipoles=L,L..  with --los, the Legendre multipoles of even l:\n"
             "                          P_l(k) (power_0, power_2, ...), xi_l(s) of\n"
             "                          --correlation-function (xi_0, xi_2, ...)\n"},
    {.long_name = NULL},
};
#undef O

fs_status fs_los_check(const fs_los_options *o)
{
    if (o->npoles && !o->given)
        return fs_error_set(FS_ERR_USAGE, "--multipoles: only with --los=AXIS");
    return FS_OK;
}

fs_status fs_los_axis(const fs_los_options *o, const fs_transform *t, int *axis)
{
    *axis = -1;
    if (!o->given)
        return FS_OK;
    int a = o->axis < 0 ? o->axis + t->in_ndim : o->axis;
    if (a < 0 || a >= t->in_ndim || !t->transform_axis[a])
        return fs_error_set(FS_ERR_USAGE, "--los=%d: not a transformed axis of the %d-D input",
                            o->axis, t->in_ndim);
    *axis = a;
    return FS_OK;
}

void fs_legendre(int n, const int *ell, double mu, double *out)
{
    double prev = 1.0, cur = mu;
    int l = 1;
    for (int i = 0; i < n; i++) {
        if (ell[i] == 0) {
            out[i] = 1.0;
            continue;
        }
        for (; l < ell[i]; l++) {
            double next = ((2 * l + 1) * mu * cur - l * prev) / (l + 1);
            prev = cur;
            cur = next;
        }
        out[i] = cur;
    }
}
