/* SPDX-License-Identifier: GPL-3.0-or-later */
/* wisdom: what fftshard learns once and reuses, in one file (--wisdom).
 *
 * The file holds fftshard's own entries (the strategy `--transpose=auto`
 * chose for a given problem, and how fast it was) followed by FFTW's wisdom
 * text. Rank 0 reads it and broadcasts it; every rank imports the FFTW part.
 * At the end the FFTW wisdom of every rank is merged on rank 0 and written
 * into a temporary that replaces the file together with the result. A
 * missing file is an empty one. */
#ifndef FS_WISDOM_H
#define FS_WISDOM_H

#include <mpi.h>
#include "core/errors.h"

typedef struct fs_wisdom fs_wisdom;

/* Collective. path may be NULL (no file: an empty wisdom that is never
 * saved). FS_ERR_INPUT when the file exists but cannot be read or parsed. */
fs_status fs_wisdom_load(MPI_Comm comm, const char *path, fs_wisdom **out);
/* The strategy stored for key, or NULL. */
const char *fs_wisdom_lookup(const fs_wisdom *w, const char *key);
/* The same, with the seconds stored beside it in *seconds (out). */
const char *fs_wisdom_lookup_seconds(const fs_wisdom *w, const char *key, double *seconds);
/* Remember (replace) the strategy for key. */
fs_status fs_wisdom_set(fs_wisdom *w, const char *key, const char *strategy, double seconds);
/* Collective: merge every rank's FFTW wisdom and write the file's new
 * content (rank 0) into a temporary beside it, whose name every rank gets
 * in *tmp_path (out, malloc'ed, registered with atomic.h; NULL without a
 * path or on failure). The caller renames it over the file with the result
 * (fs_output_commit) or removes it. Returns the agreed status, printed. */
fs_status fs_wisdom_save(MPI_Comm comm, fs_wisdom *w, char **tmp_path);
void fs_wisdom_free(fs_wisdom **w);

#endif
