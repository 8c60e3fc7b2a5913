/* SPDX-License-Identifier: GPL-3.0-or-later */
/* errors: the exit statuses of fftshard and the one way errors travel.
 *
 * Every failing function records a message with fs_error_set() and returns a
 * status. Ranks reach agreement at stage boundaries with fs_error_agree()
 * (core/collective.h): the lowest failing rank prints its message once, every
 * rank learns the status, and all of them leave through the same cleanup
 * path. The exit statuses are
 * mirrored in tests/helpers.bash; change both together. */
#ifndef FS_ERRORS_H
#define FS_ERRORS_H

#include <mpi.h>

/* Exit statuses (fftshard(1), EXIT STATUS; HACKING.md). The numeric order is also the
 * precedence used when ranks fail differently: the highest wins. */
typedef enum fs_status {
    FS_OK = 0,            /* success */
    FS_ERR_RUNTIME = 1,   /* I/O, MPI or FFTW failure */
    FS_ERR_USAGE = 2,     /* bad command line */
    FS_ERR_INPUT = 3,     /* unusable input: missing file or dataset, type, shape */
    FS_ERR_OUTPUT = 4,    /* output refused: exists, same as input, not writable */
    FS_ERR_CHECK = 5,     /* --check found an error above the tolerance */
} fs_status;

/* Record the first error of this process (later ones are ignored until
 * fs_error_clear) and return status, so callers can write
 * `return fs_error_set(FS_ERR_INPUT, "%s: no such file", path);`. */
fs_status fs_error_set(fs_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Status and message recorded on this process (FS_OK and "" when none). */
fs_status fs_error_status(void);
const char *fs_error_message(void);
void fs_error_clear(void);

/* Print "fftshard: error: <message>" on stderr now (for the rank that alone
 * knows, e.g. before MPI is usable, or after agreement). */
void fs_error_print(void);

/* --verbose: show HDF5's own error stack under our message. */
void fs_error_set_verbose(int verbose);
int fs_error_verbose(void);

/* Describe an MPI error code in words (static buffer). */
const char *fs_mpi_strerror(int mpi_err);
/* The program name that starts every message ("fftshard" by default). */
void fs_error_set_program(const char *name);
const char *fs_error_program(void);

/* Print our message in the form "fftshard: <level>: ..." from one rank. */
void fs_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
