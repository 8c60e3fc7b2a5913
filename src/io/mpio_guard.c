/* SPDX-License-Identifier: GPL-3.0-or-later */
/* mpio_guard: see mpio_guard.h. */
#include "config.h"

#include "io/mpio_guard.h"

#include <stdio.h>

#include "io/h5common.h"

/* The MPI-IO output being written on this rank (one at a time), NULL when
 * none: its writes end the job when they fail. */
static const fs_h5_output *writing;

void fs_mpio_guard_watch(const fs_h5_output *o)
{
    writing = o;
}

void fs_mpio_guard_forget(const fs_h5_output *o)
{
    if (writing == o)
        writing = NULL;
}

/* The job ends from this rank: the other ranks may be in the collective
 * call that failed here, or past it. */
static int write_checked(int err, const char *call)
{
    if (err == MPI_SUCCESS || !writing)
        return err;
    char reason[MPI_MAX_ERROR_STRING + 1];
    snprintf(reason, sizeof reason, "%s", fs_mpi_strerror(err));
    /* MPI error strings run over lines; a message is one line. */
    for (char *c = reason; *c; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t')
            *c = ' ';
    char note[96];
    fs_h5_full_disk_note(fs_h5_output_disk(writing), reason, note, sizeof note);
    fs_error_clear();
    fs_error_set(FS_ERR_RUNTIME, "%s: write failed%s (%s: %s)", fs_h5_output_name(writing), note,
                 call, reason);
    fs_h5_abandon(FS_ERR_RUNTIME, 1);
}

int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                      MPI_Datatype type, MPI_Status *status)
{
    return write_checked(PMPI_File_write_at(fh, offset, buf, count, type, status), "MPI_File_write_at");
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                          MPI_Datatype type, MPI_Status *status)
{
    return write_checked(PMPI_File_write_at_all(fh, offset, buf, count, type, status),
                         "MPI_File_write_at_all");
}

int MPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    return write_checked(PMPI_File_set_size(fh, size), "MPI_File_set_size");
}

int MPI_File_sync(MPI_File fh)
{
    return write_checked(PMPI_File_sync(fh), "MPI_File_sync");
}
