/* SPDX-License-Identifier: GPL-3.0-or-later */
/* wisdom: see wisdom.h. */
#include "config.h"

#include "plan/wisdom.h"

#include <errno.h>
#include <limits.h>
#include <fftw3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/collective.h"
#include "core/atomic.h"

#define HEADER "# fftshard wisdom 1"
#define FFTW_MARK "%fftw"

#define FLOAT_MARK "\n%fftwf\n"

/* FFTW's wisdom of both precisions as one text (malloc'ed; NULL: out of
 * memory), and back. */
static char *export_fftw_wisdom(void)
{
    char *d = fftw_export_wisdom_to_string(), *f = fftwf_export_wisdom_to_string();
    char *all = NULL;
    /* FFTW returns NULL only when out of memory: half the wisdom is none. */
    size_t n = d && f ? strlen(d) + strlen(f) + sizeof FLOAT_MARK + 1 : 0;
    if (n && (all = malloc(n)))
        snprintf(all, n, "%s%s%s", d, FLOAT_MARK, f);
    free(d);
    free(f);
    return all;
}

/* Nonzero on success. */
static int import_fftw_wisdom(const char *text)
{
    char *copy = strdup(text);
    if (!copy)
        return 0;
    char *mark = strstr(copy, FLOAT_MARK);
    const char *f = NULL;
    if (mark) {
        *mark = '\0';
        f = mark + strlen(FLOAT_MARK);
    }
    int ok = 1;
    if (strspn(copy, " \t\n") != strlen(copy))
        ok = fftw_import_wisdom_from_string(copy);
    if (ok && f && strspn(f, " \t\n") != strlen(f))
        ok = fftwf_import_wisdom_from_string(f);
    free(copy);
    return ok;
}

typedef struct entry {
    char *key, *strategy;
    double seconds;
} entry;

struct fs_wisdom {
    char *path;
    entry *entries;
    int n, cap;
};

void fs_wisdom_free(fs_wisdom **pw)
{
    fs_wisdom *w = *pw;
    if (!w)
        return;
    for (int i = 0; i < w->n; i++) {
        free(w->entries[i].key);
        free(w->entries[i].strategy);
    }
    free(w->entries);
    free(w->path);
    free(w);
    *pw = NULL;
}

const char *fs_wisdom_lookup_seconds(const fs_wisdom *w, const char *key, double *seconds)
{
    for (int i = 0; w && i < w->n; i++)
        if (strcmp(w->entries[i].key, key) == 0) {
            *seconds = w->entries[i].seconds;
            return w->entries[i].strategy;
        }
    return NULL;
}

const char *fs_wisdom_lookup(const fs_wisdom *w, const char *key)
{
    double ignored;
    return fs_wisdom_lookup_seconds(w, key, &ignored);
}

fs_status fs_wisdom_set(fs_wisdom *w, const char *key, const char *strategy, double seconds)
{
    for (int i = 0; i < w->n; i++) {
        if (strcmp(w->entries[i].key, key) == 0) {
            char *s = strdup(strategy);
            if (!s)
                return fs_error_set(FS_ERR_RUNTIME, "out of memory");
            free(w->entries[i].strategy);
            w->entries[i].strategy = s;
            w->entries[i].seconds = seconds;
            return FS_OK;
        }
    }
    if (w->n == w->cap) {
        int cap = w->cap ? 2 * w->cap : 8;
        entry *e = realloc(w->entries, (size_t)cap * sizeof *e);
        if (!e)
            return fs_error_set(FS_ERR_RUNTIME, "out of memory");
        w->entries = e;
        w->cap = cap;
    }
    entry *e = &w->entries[w->n];
    e->key = strdup(key);
    e->strategy = strdup(strategy);
    e->seconds = seconds;
    if (!e->key || !e->strategy) {
        free(e->key);
        free(e->strategy);
        return fs_error_set(FS_ERR_RUNTIME, "out of memory");
    }
    w->n++;
    return FS_OK;
}

/* Rank 0: the whole file as a string (NULL and FS_OK when missing). */
static fs_status read_file(const char *path, char **text)
{
    *text = NULL;
    /* Only a regular file: opening a FIFO would wait for a writer forever,
     * and the save at the end would rename a file over a device. */
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            return FS_OK;
        return fs_error_set(FS_ERR_INPUT, "%s: cannot read the wisdom file: %s", path, strerror(errno));
    }
    if (S_ISDIR(st.st_mode))
        return fs_error_set(FS_ERR_INPUT, "%s: is a directory, not a wisdom file", path);
    if (!S_ISREG(st.st_mode))
        return fs_error_set(FS_ERR_INPUT, "%s: not a regular file (a FIFO, device or socket)", path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return fs_error_set(FS_ERR_INPUT, "%s: cannot read the wisdom file: %s", path, strerror(errno));
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len < 2) {
            char *b = realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
            cap *= 2;
        }
    }
    int failed = ferror(f), read_errno = errno;
    fclose(f);
    if (!buf)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory reading %s", path);
    if (failed) {
        free(buf);
        return fs_error_set(FS_ERR_INPUT, "%s: cannot read the wisdom file: %s", path,
                            strerror(read_errno));
    }
    buf[len] = '\0';
    if (memchr(buf, '\0', len)) {
        free(buf);
        return fs_error_set(FS_ERR_INPUT, "%s: not a fftshard wisdom file (binary data)", path);
    }
    *text = buf;
    return FS_OK;
}

/* Every rank: parse the text into w and import its FFTW part. */
static fs_status parse(fs_wisdom *w, char *text)
{
    const char *path = w->path;
    /* An empty file is empty wisdom (a job script may create it). */
    if (text[strspn(text, " \t\r\n")] == '\0')
        return FS_OK;
    size_t hl = strlen(HEADER);
    if (strncmp(text, HEADER, hl) != 0 || (text[hl] != '\n' && text[hl] != '\0'))
        return fs_error_set(FS_ERR_INPUT, "%s: not a fftshard wisdom file (first line is not '%s')",
                            path, HEADER);
    char *line = text + hl + (text[hl] == '\n');
    int lineno = 2;
    while (*line) {
        char *next = strchr(line, '\n');
        if (next)
            *next = '\0';
        if (strcmp(line, FFTW_MARK) == 0) {
            char *fftw_text = next ? next + 1 : "";
            if (*fftw_text && !import_fftw_wisdom(fftw_text))
                return fs_error_set(FS_ERR_INPUT, "%s: line %d: FFTW rejects the wisdom that follows",
                                    path, lineno + 1);
            return FS_OK;
        }
        char key[512], strategy[64];
        double seconds;
        if (line[0] != '\0' && line[0] != '#') {
            if (sscanf(line, "transpose %511s %63s %lf", key, strategy, &seconds) != 3)
                return fs_error_set(FS_ERR_INPUT, "%s: line %d: not a wisdom entry: '%.60s'", path,
                                    lineno, line);
            fs_status st = fs_wisdom_set(w, key, strategy, seconds);
            if (st != FS_OK)
                return st;
        }
        if (!next)
            break;
        line = next + 1;
        lineno++;
    }
    return FS_OK;
}

typedef struct read_args {
    const char *path;
    char **text;
} read_args;

static fs_status read_on_root(void *arg)
{
    read_args *a = arg;
    return a->path ? read_file(a->path, a->text) : FS_OK;
}

fs_status fs_wisdom_load(MPI_Comm comm, const char *path, fs_wisdom **out)
{
    int rank;
    *out = NULL;
    fs_wisdom *w = calloc(1, sizeof *w);
    if (!w || (path && !(w->path = strdup(path)))) {
        free(w);
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "out of memory"));
    }
    char *text = NULL;
    read_args a = {path, &text};
    fs_status st = fs_root_decides(comm, read_on_root, &a);
    if (st == FS_OK && path)
        st = fs_bcast_string(comm, 0, &text);
    if (st == FS_OK && text) {
        /* Every rank parses the same text the same way: rank 0 speaks. */
        st = parse(w, text);
        st = MPI_Comm_rank(comm, &rank) == MPI_SUCCESS
                 ? (rank == 0 ? st : FS_OK) : fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed");
        st = fs_error_agree(comm, st);
    }
    free(text);
    if (st != FS_OK) {
        fs_wisdom_free(&w);
        return st;
    }
    *out = w;
    return FS_OK;
}

/* Every rank's FFTW wisdom, on rank 0: all (out, malloc'ed) holds them one
 * after the other, each ending in a NUL, displs[p] (malloc'ed) where rank
 * p's starts. Agreed quietly. */
static fs_status gather_wisdom(MPI_Comm comm, int rank, int size, char **all, int **displs)
{
    *all = NULL;
    *displs = NULL;
    int *lens = NULL, len = 0, err;
    fs_status st = FS_OK;
    char *mine = export_fftw_wisdom();
    if (!mine)
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory exporting the FFTW wisdom");
    else
        len = (int)strlen(mine);
    if (rank == 0 && (!(lens = calloc((size_t)size, sizeof *lens)) ||
                      !(*displs = calloc((size_t)size, sizeof **displs))))
        st = fs_error_set(FS_ERR_RUNTIME, "out of memory gathering the FFTW wisdom");
    /* Each collective only when every rank can take its part. */
    if ((st = fs_error_agree_quiet(comm, st)) != FS_OK)
        goto done;
    if ((err = MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, comm)) != MPI_SUCCESS)
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Gather failed: %s", fs_mpi_strerror(err));
    if (st == FS_OK && rank == 0) {
        long total = 0;
        for (int p = 0; p < size; p++) {
            (*displs)[p] = (int)total;
            total += lens[p] + 1;
        }
        if (total > INT_MAX || !(*all = calloc((size_t)total + 1, 1)))
            st = fs_error_set(FS_ERR_RUNTIME, "out of memory gathering the FFTW wisdom");
    }
    if ((st = fs_error_agree_quiet(comm, st)) != FS_OK)
        goto done;
    if ((err = MPI_Gatherv(mine, len, MPI_CHAR, *all, lens, *displs, MPI_CHAR, 0, comm)) !=
        MPI_SUCCESS)
        st = fs_error_set(FS_ERR_RUNTIME, "MPI_Gatherv failed: %s", fs_mpi_strerror(err));
    st = fs_error_agree_quiet(comm, st);
done:
    free(lens);
    free(mine);
    if (st != FS_OK) {
        free(*all);
        free(*displs);
        *all = NULL;
        *displs = NULL;
    }
    return st;
}

typedef struct write_args {
    fs_wisdom *w;
    const char *all;   /* every rank's FFTW wisdom (gather_wisdom) */
    const int *displs;
    int size;
    char **tmp_path;   /* out: the temporary written */
} write_args;

/* Rank 0: merge every rank's FFTW wisdom into its own and write the file's
 * new content into a temporary beside it. */
static fs_status write_on_root(void *arg)
{
    write_args *a = arg;
    fs_wisdom *w = a->w;
    for (int p = 0; p < a->size; p++)
        if (!import_fftw_wisdom(a->all + a->displs[p]))
            return fs_error_set(FS_ERR_RUNTIME, "%s: FFTW rejects the wisdom of rank %d", w->path, p);
    char *merged = export_fftw_wisdom();
    if (!merged)
        return fs_error_set(FS_ERR_RUNTIME, "out of memory exporting the FFTW wisdom");
    char *tmp = NULL;
    fs_status st = fs_atomic_create(w->path, &tmp);
    if (st == FS_OK) {
        FILE *f = fopen(tmp, "w");
        int ok = f != NULL, e = f ? 0 : errno;
        if (ok) {
            fprintf(f, "%s\n", HEADER);
            for (int i = 0; i < w->n; i++)
                fprintf(f, "transpose %s %s %.6f\n", w->entries[i].key, w->entries[i].strategy,
                        w->entries[i].seconds);
            fprintf(f, "%s\n%s", FFTW_MARK, merged);
            ok = !ferror(f);
            e = ok ? 0 : errno;
            if (fclose(f) != 0 && ok) {
                ok = 0;
                e = errno;
            }
        }
        if (!ok) {
            fs_atomic_abort(tmp);
            free(tmp);
            tmp = NULL;
            st = fs_error_set(FS_ERR_RUNTIME, "%s: cannot write the wisdom file: %s", w->path,
                              strerror(e));
        }
    }
    *a->tmp_path = tmp;
    free(merged);
    return st;
}

fs_status fs_wisdom_save(MPI_Comm comm, fs_wisdom *w, char **tmp_path)
{
    *tmp_path = NULL;
    if (!w || !w->path)
        return FS_OK;
    int rank, size;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "MPI_Comm_rank failed"));
    /* Gather every rank's FFTW wisdom: plans differ with the local sizes. */
    char *all = NULL;
    int *displs = NULL;
    fs_status st = gather_wisdom(comm, rank, size, &all, &displs);
    /* gather_wisdom agreed quietly: the rank that failed holds the message
     * and says it. */
    if (st != FS_OK) {
        fs_status said = fs_error_agree(comm, fs_error_status() != FS_OK ? st : FS_OK);
        st = said != FS_OK ? said : st;
    }
    write_args a = {w, all, displs, size, tmp_path};
    if (st == FS_OK)
        st = fs_root_decides(comm, write_on_root, &a);
    /* Every rank knows the temporary, so a signal to any removes it. */
    if (st == FS_OK && (st = fs_bcast_string(comm, 0, tmp_path)) == FS_OK)
        fs_atomic_register(*tmp_path);
    if (st != FS_OK && *tmp_path) {
        fs_atomic_abort(*tmp_path);
        free(*tmp_path);
        *tmp_path = NULL;
    }
    free(all);
    free(displs);
    return st;
}
