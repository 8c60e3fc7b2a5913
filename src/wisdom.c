/* wisdom: see wisdom.h. */
#include "config.h"

#include "wisdom.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic.h"
#include "fft.h"

#define HEADER "# fftshard wisdom 1"
#define FFTW_MARK "%fftw"

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

const char *fs_wisdom_lookup(const fs_wisdom *w, const char *key)
{
    for (int i = 0; w && i < w->n; i++)
        if (strcmp(w->entries[i].key, key) == 0)
            return w->entries[i].strategy;
    return NULL;
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
            if (*fftw_text && !fs_fft_import_wisdom(fftw_text))
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

fs_status fs_wisdom_load(MPI_Comm comm, const char *path, fs_wisdom **out)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    *out = NULL;
    fs_wisdom *w = calloc(1, sizeof *w);
    if (!w || (path && !(w->path = strdup(path)))) {
        free(w);
        return fs_error_agree(comm, fs_error_set(FS_ERR_RUNTIME, "out of memory"));
    }
    char *text = NULL;
    fs_status st = FS_OK;
    if (path && rank == 0)
        st = read_file(path, &text);
    long len = text ? (long)strlen(text) : -1;
    if ((st = fs_error_agree(comm, st)) != FS_OK)
        goto done;
    if (!path)
        goto done;
    MPI_Bcast(&len, 1, MPI_LONG, 0, comm);
    if (len >= 0) {
        if (rank != 0 && !(text = calloc((size_t)len + 1, 1)))
            st = fs_error_set(FS_ERR_RUNTIME, "out of memory");
        if ((st = fs_error_agree(comm, st)) != FS_OK)
            goto done;
        MPI_Bcast(text, (int)len, MPI_CHAR, 0, comm);
        /* Every rank parses the same text the same way: rank 0 speaks. */
        st = parse(w, text);
        st = fs_error_agree(comm, rank == 0 ? st : FS_OK);
    }
done:
    free(text);
    if (st != FS_OK) {
        fs_wisdom_free(&w);
        return st;
    }
    *out = w;
    return FS_OK;
}

fs_status fs_wisdom_save(MPI_Comm comm, fs_wisdom *w)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (!w || !w->path)
        return FS_OK;
    /* Gather every rank's FFTW wisdom: plans differ with the local sizes. */
    char *mine = fs_fft_export_wisdom();
    int len = mine ? (int)strlen(mine) : 0;
    int *lens = rank == 0 ? calloc((size_t)size, sizeof(int)) : NULL;
    int *displs = rank == 0 ? calloc((size_t)size, sizeof(int)) : NULL;
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, comm);
    char *all = NULL;
    if (rank == 0) {
        long total = 0;
        for (int p = 0; p < size; p++) {
            displs[p] = (int)total;
            total += lens[p] + 1;
        }
        all = calloc((size_t)total + 1, 1);
    }
    MPI_Gatherv(mine, len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, comm);
    fs_status st = FS_OK;
    if (rank == 0) {
        for (int p = 0; p < size && all; p++)
            fs_fft_import_wisdom(all + displs[p]);
        char *merged = fs_fft_export_wisdom();
        char *tmp = NULL;
        st = fs_atomic_create(w->path, &tmp);
        if (st == FS_OK) {
            FILE *f = fopen(tmp, "w");
            int ok = f != NULL;
            if (ok) {
                fprintf(f, "%s\n", HEADER);
                for (int i = 0; i < w->n; i++)
                    fprintf(f, "transpose %s %s %.6f\n", w->entries[i].key, w->entries[i].strategy,
                            w->entries[i].seconds);
                fprintf(f, "%s\n%s", FFTW_MARK, merged ? merged : "");
                ok = !ferror(f);
                ok = (fclose(f) == 0) && ok;
            }
            if (!ok) {
                fs_atomic_abort(tmp);
                st = fs_error_set(FS_ERR_RUNTIME, "%s: cannot write the wisdom file", w->path);
            } else {
                st = fs_atomic_commit(tmp, w->path);
            }
        }
        free(tmp);
        free(merged);
    }
    free(all);
    free(lens);
    free(displs);
    free(mine);
    /* Only rank 0 wrote; the others learn the outcome, the message stays
     * with rank 0. */
    int status = (int)st;
    MPI_Bcast(&status, 1, MPI_INT, 0, comm);
    return (fs_status)status;
}
