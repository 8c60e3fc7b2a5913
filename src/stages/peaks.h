/* SPDX-License-Identifier: GPL-3.0-or-later */
/* peaks: the peaks of --phase-correlate (combine.h), one per frame. A
 * frame is one index of the batch axes (the axes not transformed; none:
 * one frame), numbered row-major over them. Each frame's integer peak is
 * the largest real part of the field r = ifftn(R / |R|) in it, the first
 * in numpy's order among equal ones, found on every rank's part of the
 * field and reduced over the ranks (a MAXLOC per frame). With --upsample=U
 * > 1 it is refined as Guizar-Sicairos, Thurman and Fienup (2008) and
 * skimage.registration.phase_cross_correlation do: r evaluated, straight
 * from the cross-power spectrum kept before the inverse, at the points
 * s + (j - floor(M / 2)) / U, j = 0 .. M - 1, M = ceil(1.5 U), of every
 * transformed axis around the integer shift s, by matrix products over
 * each rank's part of the spectrum, summed over the ranks; the largest
 * real part of those is the frame's shift and peak height. Shifts are
 * signed as numpy's: an index past n / 2 is index - n. Owns the kept
 * spectrum and the frames' figures. */
#ifndef FS_PEAKS_H
#define FS_PEAKS_H

#include <mpi.h>
#include <stdint.h>

#include "core/errors.h"
#include "core/json.h"
#include "core/layout.h"
#include "io/h5io.h"
#include "plan/transform.h"

typedef struct fs_peaks fs_peaks;

/* The frames of t's field, refined by upsample (1: integer peaks); the
 * figures of a run go to the group at `group` of OUTPUT. NULL when out of
 * memory. */
fs_peaks *fs_peaks_new(const fs_transform *t, int upsample, const char *group);
void fs_peaks_free(fs_peaks **p);

/* With upsample > 1, a copy of this rank's part of the cross-power
 * spectrum (its last-stage box `last`, complex elements of t's precision,
 * scaled so that the unnormalised inverse is r) before the inverse takes
 * its place. This rank's status. */
fs_status fs_peaks_keep(fs_peaks *p, const fs_transform *t, const fs_box *last,
                        const void *fourier);

/* Collective, after the inverse: every frame's integer peak in the field
 * `field` of this rank's first-stage box, then its refinement from the
 * kept spectrum. The status is agreed. */
fs_status fs_peaks_find(fs_peaks *p, MPI_Comm comm, const fs_transform *t, const fs_box *first,
                        const fs_box *last, const void *field);

/* The group's path in OUTPUT. */
const char *fs_peaks_group(const fs_peaks *p);

/* Collective: the group (its tables shift, peak_height and their
 * coordinates frame and axis). */
fs_status fs_peaks_write(const fs_peaks *p, fs_h5_output *o, int replace);

/* The report's "peak" (the largest of all frames, its integer index) and
 * "frames" members; the summary's words after the result's name. */
void fs_peaks_json(fs_json *j, const fs_peaks *p);
void fs_peaks_summary(const fs_peaks *p, const char *output, char *buf, size_t size);

#endif
