/* SPDX-License-Identifier: GPL-3.0-or-later */
/* errors: see errors.h. */
#include "config.h"

#include "core/errors.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static fs_status error_status = FS_OK;
static char error_message[2048];
static int error_verbose;
static const char *program_name = "fftshard";

void fs_error_set_program(const char *name)
{
    program_name = name;
}

const char *fs_error_program(void)
{
    return program_name;
}

fs_status fs_error_set(fs_status status, const char *fmt, ...)
{
    if (error_status != FS_OK || status == FS_OK)
        return status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error_message, sizeof error_message, fmt, ap);
    va_end(ap);
    /* A message is one line: a newline or other control character in a
     * name or option value from outside is shown as '?'. */
    for (char *p = error_message; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    error_status = status;
    return status;
}

fs_status fs_error_status(void)
{
    return error_status;
}

const char *fs_error_message(void)
{
    return error_message;
}

void fs_error_clear(void)
{
    error_status = FS_OK;
    error_message[0] = '\0';
}

void fs_error_print(void)
{
    fprintf(stderr, "%s: error: %s\n", program_name,
            error_message[0] ? error_message : "unknown failure");
    fflush(stderr);
}

static int agree_yields;

void fs_error_agree_yields(int yields)
{
    agree_yields = yields;
}

/* MPI_Allreduce of one MAX; with agree_yields started as MPI_Iallreduce and
 * polled with the core given up between polls. */
static int max_reduce(const long long *mine, long long *worst, MPI_Comm comm)
{
    if (!agree_yields)
        return MPI_Allreduce(mine, worst, 1, MPI_LONG_LONG, MPI_MAX, comm);
    MPI_Request req;
    int err = MPI_Iallreduce(mine, worst, 1, MPI_LONG_LONG, MPI_MAX, comm, &req);
    return err == MPI_SUCCESS ? fs_mpi_waitall_yielding(1, &req) : err;
}

/* The agreed status, and whether this rank is the one to print it. */
static fs_status agree(MPI_Comm comm, fs_status local, int *reporter)
{
    int size, rank;
    if (MPI_Comm_size(comm, &size) != MPI_SUCCESS || MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, FS_ERR_RUNTIME);
    /* Pack (status, -rank) so that one MAXLOC-like max picks the highest
     * status and, among equals, the lowest rank. */
    long long mine = (long long)local * (size + 1) + (size - rank);
    long long worst;
    if (max_reduce(&mine, &worst, comm) != MPI_SUCCESS) {
        /* Agreement itself is broken: nothing safe is left but ending the job. */
        fprintf(stderr, "%s: error: MPI failed while ranks compared their status\n", program_name);
        MPI_Abort(MPI_COMM_WORLD, FS_ERR_RUNTIME);
    }
    *reporter = size - (int)(worst % (size + 1)) == rank;
    return (fs_status)(worst / (size + 1));
}

fs_status fs_error_agree(MPI_Comm comm, fs_status local)
{
    int reporter;
    fs_status agreed = agree(comm, local, &reporter);
    if (agreed != FS_OK && reporter)
        fs_error_print();
    return agreed;
}

fs_status fs_error_agree_quiet(MPI_Comm comm, fs_status local)
{
    int reporter;
    return agree(comm, local, &reporter);
}

void fs_error_set_verbose(int verbose)
{
    error_verbose = verbose;
}

int fs_error_verbose(void)
{
    return error_verbose;
}

int fs_mpi_waitall_yielding(int n, MPI_Request *reqs)
{
    for (;;) {
        int done = 0, err = MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
        if (err != MPI_SUCCESS || done)
            return err;
        sched_yield();
    }
}

const char *fs_mpi_strerror(int mpi_err)
{
    static char text[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    if (MPI_Error_string(mpi_err, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", mpi_err);
    else
        text[len] = '\0';
    return text;
}

void fs_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", program_name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
}
