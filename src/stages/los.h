/* SPDX-License-Identifier: GPL-3.0-or-later */
/* los: the line of sight and the Legendre multipoles, the options the
 * spectra and the correlation function both read (--los, --multipoles),
 * owned by neither: their section lives in the one every stage shares
 * (fs_stage_shared, stage.h) and their lines are a section of the command
 * line of their own (options.h). Also what both make of them: the axis
 * against a transform, and L_l(mu) of the degrees asked for. Owns nothing. */
#ifndef FS_LOS_H
#define FS_LOS_H

#include "core/errors.h"
#include "core/optable.h"
#include "plan/transform.h"

#define FS_MAX_POLES 8

/* --los and --multipoles as given. */
typedef struct fs_los_options {
    int axis, given;                /* --los=AXIS (negative: from the end) */
    int npoles;                     /* --multipoles: the even l, increasing (0: none) */
    int poles[FS_MAX_POLES];
} fs_los_options;

/* Their lines, setting an fs_los_options. */
extern const fs_opt fs_los_option_lines[];

/* --multipoles without --los: FS_ERR_USAGE. */
fs_status fs_los_check(const fs_los_options *o);

/* The line of sight's axis of t's input (-1: none given); FS_ERR_USAGE
 * when it is not one of t's transformed axes. */
fs_status fs_los_axis(const fs_los_options *o, const fs_transform *t, int *axis);

/* L_l(mu) of the n degrees ell (increasing), by the recurrence
 * (l + 1) L_l+1 = (2l + 1) mu L_l - l L_l-1, into out. */
void fs_legendre(int n, const int *ell, double mu, double *out);

#endif
