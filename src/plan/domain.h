/* SPDX-License-Identifier: GPL-3.0-or-later */
/* domain: the data of a transform that is not periodic (fftshard(1),
 * NON-PERIODIC DATA): the windows that taper it on the transformed axes
 * (--window, scipy.signal.windows' definitions), the lengths it is zero
 * padded or cut to (--pad, numpy.fft.fftn's s), and the FFT-friendly
 * lengths a linear convolution pads to. Their syntax, their values and
 * their text: what the request carries (transform.h) and what the read,
 * the spectra and the attributes compute from it. Pure arithmetic: no MPI,
 * no HDF5. Owns nothing. */
#ifndef FS_DOMAIN_H
#define FS_DOMAIN_H

#include <stddef.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/errors.h"
#include "core/layout.h"

/* A window's kind; NONE is the rectangular window (ones). */
typedef enum fs_window_kind {
    FS_WINDOW_NONE,
    FS_WINDOW_HANN,
    FS_WINDOW_HAMMING,
    FS_WINDOW_BLACKMAN,
    FS_WINDOW_TUKEY,
    FS_WINDOW_KAISER,
} fs_window_kind;

typedef struct fs_window {
    fs_window_kind kind;
    double param;                   /* tukey's alpha, kaiser's beta */
} fs_window;

/* --window's list: one window for every transformed axis, or one each. */
typedef struct fs_window_list {
    int n;                          /* 0: none given */
    fs_window w[FS_LAYOUT_MAX_DIMS];
} fs_window_list;

/* Parse NAME[:PARAM][,NAME[:PARAM]...] (none, hann, hamming, blackman,
 * tukey[:ALPHA], kaiser:BETA) into *out. FS_ERR_USAGE naming `option`. */
fs_status fs_window_parse(const char *option, const char *text, fs_window_list *out);

/* "hann", "tukey:0.25", "kaiser:8": a window as --window takes it. */
void fs_window_format(const fs_window *w, char *buf, size_t size);

/* Value i (0 <= i < m) of the window of length m, as
 * scipy.signal.windows.get_window(NAME, m, fftbins=not sym) computes it:
 * periodic (sym 0: DFT-even, the first m of the symmetric window of
 * m + 1) or symmetric (sym 1). Length 1: 1. */
double fs_window_value(const fs_window *w, int sym, int64_t m, int64_t i);

/* mean(w^2) over the m values. */
double fs_window_mean_square(const fs_window *w, int sym, int64_t m);

/* --pad's item of one axis: a length, or a factor of the input's. */
typedef struct fs_pad {
    int64_t len;                    /* 0: factor */
    int factor;
} fs_pad;

typedef struct fs_pad_list {
    int n;                          /* 0: none given */
    fs_pad p[FS_LAYOUT_MAX_DIMS];
} fs_pad_list;

/* Parse N|Kx[,N|Kx...] into *out. FS_ERR_USAGE naming `option`. */
fs_status fs_pad_parse(const char *option, const char *text, fs_pad_list *out);

/* The length of an axis of length n under item p. */
int64_t fs_pad_length(const fs_pad *p, int64_t n);

/* --boundary: the boundary of each transformed axis for --apply
 * (fftshard(1), OPERATORS): periodic (a Fourier axis), or walls half a
 * cell outside cell-centred samples: Dirichlet (phi = 0 there, the sine
 * transform DST-II) or Neumann (d phi / dn = 0, the cosine transform
 * DCT-II); or free space (every transformed axis: the Fourier transform
 * of the domain zero padded to twice its length, Hockney and Eastwood). */
typedef enum fs_boundary {
    FS_BOUNDARY_PERIODIC,
    FS_BOUNDARY_DIRICHLET,
    FS_BOUNDARY_NEUMANN,
    FS_BOUNDARY_FREE,
} fs_boundary;

typedef struct fs_boundary_list {
    int n;                          /* 0: none given */
    fs_boundary b[FS_LAYOUT_MAX_DIMS];
} fs_boundary_list;

/* Parse B[,B...] into *out. FS_ERR_USAGE naming `option`. */
fs_status fs_boundary_parse(const char *option, const char *text, fs_boundary_list *out);

/* The forward transform's kind along an axis of boundary b: FS_AXIS_FFT
 * (periodic, free), FS_DST2 or FS_DCT2. */
fs_r2r fs_boundary_kind(fs_boundary b);

/* "periodic", "dirichlet" or "neumann": the boundary a forward kind k of
 * fs_boundary_kind stands for. */
const char *fs_boundary_name_of_kind(fs_r2r k);

/* The least length >= n whose only prime factors are 2, 3, 5 and 7 (FFTW
 * transforms those fastest). */
int64_t fs_fast_length(int64_t n);

/* What the transform planner (transform.h) takes from here. */
struct fs_transform_request;
struct fs_transform;
struct fs_op_spec;

/* t's data_shape, read_shape, resized and windows from rq (in_shape and
 * the kind already set). */
void fs_domain_plan(const struct fs_transform_request *rq, struct fs_transform *t);

/* The WINDOW operation of t's first stage (t->windowed). */
struct fs_op_spec fs_domain_window_op(const struct fs_transform *t);

/* The limits of an operation of t's first stage: the zeros of the padding
 * (none without it, nor for the four-step). */
void fs_domain_limits(const struct fs_transform *t, struct fs_op_spec *op);
/* The indices of box below op's limits (the zeros of a padding lie beyond
 * them), along each axis, in live; whether any falls short. */
int fs_domain_live_counts(const struct fs_op_spec *op, const fs_box *box, int64_t *live);

/* The length of the axis that stage s splits over grid dimension g
 * (t->split[s][g] >= 0): the whole axis, but in free space's first stage
 * (--boundary=free) the data's own length along the axis the first
 * exchange moves: the rest of the doubled axis is zeros, which no rank
 * holds until that exchange (fs_domain_exchange_zeros), so the ranks share
 * the data's planes, not its doubled length, and the inverse's last
 * exchange moves only the part kept. */
int64_t fs_domain_split_length(const struct fs_transform *t, int s, int g);

/* The part of `after`, a rank's box in t's second stage, that the first
 * exchange leaves unwritten (every rank's first box ends where the data
 * does along the axis it moves): zeros before that stage's transforms. An
 * empty box (counts 0) for every other transform and exchange. */
fs_box fs_domain_exchange_zeros(const struct fs_transform *t, const fs_box *after);

/* The product window of t at the input's element `at` (its indices as the
 * read map's file box counts them): 1 without windows. */
double fs_domain_window_at(const struct fs_transform *t, const int64_t *at);

/* t's windows as the "window" attribute records them: one per transformed
 * axis in the order of t->axes, as --window takes them; "" without. */
void fs_domain_window_text(const struct fs_transform *t, char *buf, size_t size);

/* mean(w^2) of t's product window over the part read: the product over
 * the windowed axes of fs_window_mean_square (1 without windows). */
double fs_domain_window_power(const struct fs_transform *t);

#endif
