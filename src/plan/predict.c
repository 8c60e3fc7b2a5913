/* SPDX-License-Identifier: GPL-3.0-or-later */
/* predict: see predict.h. */
#include "config.h"

#include "plan/predict.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/dtype.h"
#include "plan/layout.h"

#define SIM_NAME "fftshard-sim"

static int executable(const char *path)
{
    return access(path, X_OK) == 0;
}

/* The first executable `name` in PATH, into buf. */
static int in_path(const char *name, char *buf, size_t size)
{
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t n = strcspn(path, ":");
        if (n > 0 && (size_t)snprintf(buf, size, "%.*s/%s", (int)n, path, name) < size && executable(buf))
            return 1;
        path += n + (path[n] == ':');
    }
    return 0;
}

/* Next to the running fftshard (installed: bindir; built: src/ and sim/),
 * else PATH. */
static int find_simulator(char *buf, size_t size)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            if ((size_t)snprintf(buf, size, "%s/%s", self, SIM_NAME) < size && executable(buf))
                return 1;
            if ((size_t)snprintf(buf, size, "%s/../sim/%s", self, SIM_NAME) < size && executable(buf))
                return 1;
        }
    }
    return in_path(SIM_NAME, buf, size);
}

/* Single-quoted for sh. */
static int quote(char *buf, size_t size, size_t *len, const char *word)
{
    if (*len + 3 >= size)
        return -1;
    buf[(*len)++] = ' ';
    buf[(*len)++] = '\'';
    for (const char *c = word; *c; c++) {
        const char *piece = *c == '\'' ? "'\\''" : NULL;
        size_t k = piece ? strlen(piece) : 1;
        if (*len + k + 2 >= size)
            return -1;
        memcpy(buf + *len, piece ? piece : c, k);
        *len += k;
    }
    buf[(*len)++] = '\'';
    buf[*len] = '\0';
    return 0;
}

static fs_status command_of(const fs_run_config *opts, const fs_transform *t, int ndim,
                            const int64_t *shape, fs_dtype dtype, int nranks, const char *smpirun,
                            const char *sim, char *cmd, size_t size)
{
    char np[32], sh[256], dt[64], grid[64], decomp[32], packet[64], queues[32], seed[64];
    fs_format_shape(ndim, shape, sh, sizeof sh);
    snprintf(np, sizeof np, "%d", nranks);
    char shape_arg[300];
    snprintf(shape_arg, sizeof shape_arg, "--shape=%s", sh);
    snprintf(dt, sizeof dt, "--dtype=%s", fs_dtype_name(dtype));
    snprintf(decomp, sizeof decomp, "--decomp=%s", t->pencil ? "pencil" : "slab");
    snprintf(grid, sizeof grid, "--grid=%dx%d", t->grid[0], t->grid[1]);
    snprintf(packet, sizeof packet, "--packet=%zu", opts->packet_bytes);
    snprintf(queues, sizeof queues, "--queues=%d", opts->queues);
    snprintf(seed, sizeof seed, "--seed=%llu", (unsigned long long)opts->seed);
    /* The settings make simulate uses (sim/simulate.py says why); the ranks
     * on the hosts in smpirun's order, as the platform is the user's. */
    const char *words[] = {"-no-privatize", "-platform", opts->platform_file, "-np", np, sim,
                           "--cfg=smpi/test:1e-7", "--cfg=smpi/gather:ompi_binomial",
                           "--cfg=smpi/reduce:binomial",
                           "--cfg=smpi/simulate-computation:no", "--cfg=network/crosstraffic:0",
                           "--cfg=network/model:CM02", "--cfg=smpi/alltoallv:bruck",
                           "--cfg=contexts/stack-size:1024", "--log=root.thresh:critical",
                           shape_arg, dt, decomp, grid, packet, queues, seed, "--header"};
    size_t len = (size_t)snprintf(cmd, size, "exec");
    int bad = quote(cmd, size, &len, smpirun);
    for (size_t i = 0; !bad && i < sizeof words / sizeof words[0]; i++)
        bad = quote(cmd, size, &len, words[i]);
    /* smpirun's own chatter and SimGrid's warnings stay out of the table. */
    if (bad || len + 16 >= size)
        return fs_error_set(FS_ERR_RUNTIME, "--platform: the simulator's command line is too long");
    strcat(cmd, " 2>/dev/null");
    return FS_OK;
}

/* "strategy,decomp,grid,ranks,shape,dtype,exchange_s,fft_s,total_s,..." */
static int print_row(FILE *out, char *line)
{
    char *f[11] = {0};
    int n = 0;
    for (char *s = line; n < 11; n++) {
        f[n] = s;
        char *c = strchr(s, ',');
        if (!c) {
            s[strcspn(s, "\n")] = '\0';
            n++;
            break;
        }
        *c = '\0';
        s = c + 1;
    }
    if (n < 9 || strcmp(f[0], "strategy") == 0)
        return 0;
    if (f[6][0] == '\0')
        fprintf(out, "  %-9s  %s\n", f[0], n > 10 && f[10][0] ? f[10] : "no result");
    else
        fprintf(out, "  %-9s  %12.6f  %12.6f  %12.6f\n", f[0], atof(f[6]), atof(f[7]), atof(f[8]));
    return 1;
}

fs_status fs_predict_print(FILE *out, const fs_run_config *opts, const fs_transform *t, int ndim,
                           const int64_t *shape, fs_dtype dtype, int nranks)
{
    char smpirun[PATH_MAX], sim[PATH_MAX], cmd[8192], line[1024];
    if (!in_path("smpirun", smpirun, sizeof smpirun))
        return fs_error_set(FS_ERR_RUNTIME, "--platform: SimGrid's smpirun is not installed (not in PATH)");
    if (!find_simulator(sim, sizeof sim))
        return fs_error_set(FS_ERR_RUNTIME, "--platform: the simulator " SIM_NAME
                            " was found neither next to fftshard nor in PATH");
    fs_status st = command_of(opts, t, ndim, shape, dtype, nranks, smpirun, sim, cmd, sizeof cmd);
    if (st != FS_OK)
        return st;
    fflush(out);
    FILE *p = popen(cmd, "r");
    if (!p)
        return fs_error_set(FS_ERR_RUNTIME, "--platform: cannot run smpirun: %s", strerror(errno));
    fprintf(out, "\nPredicted on %s (%d simulated ranks, seconds of the slowest rank):\n",
            opts->platform_file, nranks);
    fprintf(out, "  %-9s  %12s  %12s  %12s\n", "strategy", "exchange_s", "fft_s", "total_s");
    int rows = 0;
    while (fgets(line, sizeof line, p))
        rows += print_row(out, line);
    int status = pclose(p);
    if (status != 0 || rows == 0)
        return fs_error_set(FS_ERR_RUNTIME, "--platform: the simulation failed (run smpirun -platform %s "
                            "-np %d %s by hand to see why)", opts->platform_file, nranks, sim);
    return FS_OK;
}
