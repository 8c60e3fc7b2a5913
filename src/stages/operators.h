/* SPDX-License-Identifier: GPL-3.0-or-later */
/* operators: the stage of --apply, operations in Fourier space on the
 * distributed result of the forward transform (fs_stage_operators,
 * stage.h).
 *
 * The list OP[,OP...] is parsed with the command line into plain data
 * (fs_operators, the stage's options). Before any work the transfer tables
 * it names are read by rank 0 and shared (io/table.h) and the list is
 * checked against the grid of every INPUT's transform (a derivative's axis
 * is a transformed one, a table covers every |k| of the grid). Each rank
 * then multiplies its own part of the spectrum (its last-stage box) by the
 * product of the operators' factors, in the order given, times 1/N, so
 * that the inverse that follows (compute.h's round trip, which returns N
 * times its input) gives the filtered field: inside the last forward pass
 * where it can. The wave vector is kgrid.h's. The stage owns the tables,
 * each INPUT's grid and the recorded text. */
#ifndef FS_OPERATORS_H
#define FS_OPERATORS_H

#include "core/errors.h"
#include "stages/stage.h"

#define FS_MAX_OPERATORS 16
/* --apply's lowpass and highpass order without :N. */
#define FS_BUTTERWORTH_ORDER 2
/* The top hat's series below this x = kR: the direct formula cancels, its
 * relative error about 6e-16 / x^2 (3e-15 here), and the series' first
 * term left out is 3e-17 here. */
#define FS_TOPHAT_SERIES_X 0.5

typedef enum fs_operator_kind {
    FS_OPER_GAUSSIAN,   /* exp(-k^2 R^2 / 2) */
    FS_OPER_TOPHAT,     /* 3 (sin x - x cos x) / x^3, x = k R */
    FS_OPER_SHARPK,     /* |k| <= K */
    FS_OPER_LOWPASS,    /* 1 / (1 + (|k| / K)^(2N)) */
    FS_OPER_HIGHPASS,   /* (|k| / K)^(2N) / (1 + (|k| / K)^(2N)) */
    FS_OPER_DERIV,      /* i k_axis, the Nyquist plane of an even axis 0 */
    FS_OPER_LAPLACIAN,  /* -k^2 */
    FS_OPER_POISSON,    /* -1 / k^2, k = 0: 0 */
    FS_OPER_TRANSFER,   /* T(|k|) from a table, linearly interpolated */
} fs_operator_kind;

typedef struct fs_operator {
    fs_operator_kind kind;
    double param;       /* R or K */
    int order;          /* N of lowpass and highpass */
    int axis;           /* deriv: as given (negative counts from the end) */
    char *file;         /* transfer: the table's file */
} fs_operator;

/* --apply's list as parsed: the stage's options (operators.c). */
typedef struct fs_operators {
    int n;
    fs_operator op[FS_MAX_OPERATORS];
    char *given;        /* --apply's value as given (the report's) */
    int cycles;         /* --k-units=cycles: the cutoffs K given in cycles, not radians */
    int converted;      /* ... and turned into radians (fs_stage_ops.check) */
} fs_operators;

/* operators_options.c: the options (--apply, --k-units), their release and
 * check (stage.h's hooks), and the list as the results' "operation"
 * attribute records it, every parameter written out (lowpass:K:N), into
 * buf. */
extern const fs_opt fs_operators_lines[];
void fs_operators_release(void *opts);
int fs_operators_active(const void *opts, const fs_stage_shared *shared);
const char *fs_operators_option(const void *opts);
fs_status fs_operators_check(void *opts, const fs_stage_facts *f, int on);
void fs_operators_text(const fs_operators *ops, char *buf, size_t size);

#endif
