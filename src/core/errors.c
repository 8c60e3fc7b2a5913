/* SPDX-License-Identifier: GPL-3.0-or-later */
/* errors: see errors.h. */
#include "config.h"

#include "core/errors.h"

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

void fs_error_set_verbose(int verbose)
{
    error_verbose = verbose;
}

int fs_error_verbose(void)
{
    return error_verbose;
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
