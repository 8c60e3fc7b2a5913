/* SPDX-License-Identifier: GPL-3.0-or-later */
/* spectrum: the stage of --power-spectrum and --cross, power and cross
 * spectra binned on the distributed result (fs_stage_spectrum, stage.h).
 *
 * After the forward transform every rank bins |X|^2 of its own part of the
 * result into shells of |k|, and one reduction gives every rank the whole
 * spectrum; nothing is gathered. The convention (fftshard(1), SPECTRA):
 * element [j0, j1, ...] has the wave vector k_a = 2 pi f_a / L_a over the
 * transformed axes a, f_a = numpy.fft.fftfreq(n_a, 1/n_a)[j_a] and L_a the
 * box length (--box-size, default n_a). Shell i holds the modes with
 * floor(|k| / k_f + 1/2) = i, k_f = 2 pi / max L_a, unless --bins gives
 * other edges. Per bin: the number of modes, their mean |k| and their mean
 * |X|^2 (times V / N^2 with --box-size). The half spectrum of an r2c counts
 * every mode that stands for two twice, so it equals the full complex
 * computation. Batch axes add modes: each batch index is one more sample.
 *
 * Several inputs add their power (the kinetic energy spectrum of u, v, w is
 * half of it); --cross bins Re(X_a conj X_b) of two inputs with their two
 * power spectra. --los bins again by |mu| = |k_los| / |k|. --shot-noise
 * gives each input's shot noise: subtracted from its own power spectrum
 * (power_a, power_b), their sum from the summed power, never from a cross
 * spectrum. --compensate divides each mode by the window's W(k)^2, or by
 * C(k), the sum of W^2 over the aliases, that leaves the shot noise of a
 * mesh painted without interlacing flat.
 *
 * spectrum.c bins; spectrum_write.c writes the groups, the report's part
 * and the summary's line, and takes what they say of the compensation and
 * the shot noise (a painted mesh's defaults: sources/particles.h). This header is theirs alone: the run reaches the
 * stage through the stage table. It owns the sums per bin and the groups'
 * paths. */
#ifndef FS_SPECTRUM_H
#define FS_SPECTRUM_H

#include <stdint.h>

#include "stages/bins.h"
#include "stages/kgrid.h"
#include "stages/stage.h"

#define FS_MAX_SHOT 256 /* --shot-noise's values */

/* The options of the stage. */
typedef struct fs_spectrum_options {
    int power;                      /* --power-spectrum (--cross: fs_stage_shared) */
    fs_bins_option bins;            /* --bins */
    int mu_bins;                    /* --mu-bins (0: the default; --los, --multipoles:
                                       fs_stage_shared's, los.h) */
    int nper;                       /* --spectrum-per: batch axes as given */
    int per[FS_LAYOUT_MAX_DIMS];
    int compensate;                 /* the window's power, 1 ngp .. 4 pcs (0: not given, -1 none), plus
                                       FS_WINDOW_ALIASED for SCHEME-shotnoise */
    int nshot;                      /* --shot-noise: values given, one per INPUT (0: none) */
    double shot_noise[FS_MAX_SHOT];
} fs_spectrum_options;

/* --compensate=SCHEME-shotnoise: the power divided by the aliased window
 * sum C(k) instead of W(k)^2. */
#define FS_WINDOW_ALIASED 10

/* What each bin sums; then, with --multipoles, the sums of |X|^2 L_l(mu)
 * (from NQ) and of Re(X_a conj X_b) L_l(mu) (from NQ + npoles). */
enum { Q_MODES, Q_K, Q_POWER, Q_CROSS, Q_POWER_A, Q_POWER_B, Q_MU, NQ };

typedef struct fs_spectrum {
    int power, cross;               /* which groups */
    fs_kgrid g;                     /* the wave vectors (kgrid.h) */
    double kf, kmax, factor;        /* fundamental, largest |k|, V / (N M) (1 without a box;
                                       M the points read: N but for --pad) over the windows'
                                       mean(w^2) */
    fs_bins bins;                   /* --bins: edges nbins + 1 */
    int lattice;                    /* every L_max / L_a an integer: bins decided on m */
    int64_t ratio[FS_LAYOUT_MAX_DIMS]; /* L_max / L_a of each transformed axis */
    int64_t mmax;                   /* the largest m = (|k| / k_f)^2 of the grid */
    int64_t *thr;                   /* lattice: bin i holds thr[i] <= m < thr[i + 1] */
    int *lut;                       /* lattice: the bin of each m up to mmax (NULL: search) */
    int los, nmu;                   /* los -1: none */
    int npoles, ell[FS_MAX_POLES];  /* --multipoles */
    int nq;                         /* sums per cell: NQ + 2 npoles */
    int nper, per[FS_LAYOUT_MAX_DIMS]; /* --spectrum-per: the batch axes, increasing */
    int64_t stride[FS_LAYOUT_MAX_DIMS]; /* each axis's step in the slice index (0: pooled) */
    int64_t nslices;                /* one spectrum per slice (1 without --spectrum-per) */
    int window;                     /* --compensate: the window's power p (0: none) */
    int aliased;                    /* ... divided by C(k), not W(k)^2 (SCHEME-shotnoise) */
    int nshot;                      /* --shot-noise: one value per INPUT (0: not given) */
    double shot[FS_MAX_SHOT];
    double shot_power;              /* less in the power spectrum's power: their sum */
    int shot_painted;               /* the shot noise the painting's (--paint, no --shot-noise) */
    int paint_window, interlaced;   /* --paint's window (0: a field read), --interlace */
    int64_t particles;              /* the particles painted, over the INPUTs */
    int nfam;                       /* the sums' families: 1, or the field stage's (stage.h) */
    const char *family[FS_MAX_FAMILIES];
    int counted[FS_MAX_FAMILIES];   /* the family's modes counted (its first result binned) */
    int of_results;                 /* bins the field stage's results, not the transforms */
    double *acc, *acc_mu;           /* [family][slice][nbins][nq], [..][nbins][nmu][nq] */
    double seconds;
    int ngroups;                    /* the groups: the power spectrum's (one per family),
                                       then the cross's */
    char group[FS_MAX_FAMILIES + 1][FS_PATH_MAX];
    int group_cross[FS_MAX_FAMILIES + 1]; /* the group holds the cross spectrum */
    int group_family[FS_MAX_FAMILIES + 1]; /* the family whose sums it holds */
} fs_spectrum;

/* The sums of one family: cells of nq, per mu bin in acc_mu's. */
size_t fs_spectrum_cells(const fs_spectrum *s);

/* spectrum_options.c: the options and the hooks that judge them. */
extern const fs_opt fs_spectrum_lines[];
int fs_spectrum_active(const void *opts, const fs_stage_shared *shared);
const char *fs_spectrum_option(const void *opts);
fs_status fs_spectrum_check(void *opts, const fs_stage_facts *f, int on);
void fs_spectrum_needs(const void *opts, const fs_stage_facts *f, int naxes, fs_stage_needs *n);

/* spectrum_write.c: the finish, json and summary hooks. */
fs_status fs_spectrum_finish(void *state, MPI_Comm comm, const fs_stage_run *r,
                             const fs_stage_out *out);
void fs_spectrum_json(fs_json *j, const void *state);
void fs_spectrum_summary(const void *state, const char *output, char *buf, size_t size);

/* The compensation and the shot noise of o, or with painted particles
 * (pt->window) their defaults: the window (its aliased sum C(k) without
 * --interlace) and, on each turn, each INPUT's particles' shot noise
 * (fs_spectrum_painted, before the turn is binned). */
void fs_spectrum_take_scheme(fs_spectrum *s, const fs_spectrum_options *o,
                             const fs_particles_options *pt);
void fs_spectrum_painted(fs_spectrum *s, const fs_stage_turn *turn);

#endif
