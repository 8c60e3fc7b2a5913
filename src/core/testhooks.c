/* SPDX-License-Identifier: GPL-3.0-or-later */
/* testhooks: see testhooks.h. */
#include "config.h"

#include "core/testhooks.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static fs_testhooks hooks;
static int hooks_read;

/* FFTSHARD_PAUSE=POINT[:SECONDS] */
static void read_pause(fs_testhooks *h)
{
    const char *env = getenv("FFTSHARD_PAUSE");
    snprintf(h->pause_point, sizeof h->pause_point, "%s", env ? env : "");
    h->pause_seconds = 60;
    char *colon = strchr(h->pause_point, ':');
    if (colon) {
        *colon = '\0';
        h->pause_seconds = strtol(colon + 1, NULL, 10);
    }
}

/* FFTSHARD_SLOW_READ=BYTES:SECONDS, both positive, or nothing */
static void read_slow_read(fs_testhooks *h)
{
    const char *env = getenv("FFTSHARD_SLOW_READ");
    char *end = NULL;
    long long bytes = env ? strtoll(env, &end, 10) : 0;
    double seconds = end && *end == ':' ? strtod(end + 1, NULL) : 0;
    if (bytes > 0 && seconds > 0) {
        h->slow_read_bytes = bytes;
        h->slow_read_seconds = seconds;
    }
}

void fs_testhooks_read(void)
{
    fs_testhooks h;
    memset(&h, 0, sizeof h);
    read_pause(&h);
    read_slow_read(&h);

    const char *env = getenv("FFTSHARD_MPI_INT_LIMIT");
    h.mpi_int_limit = env && atoll(env) > 0 ? atoll(env) : INT_MAX;

    env = getenv("FFTSHARD_IO_THREAD");
    h.io_thread = !env ? -1 : strcmp(env, "on") == 0 ? 1 : strcmp(env, "off") == 0 ? 0 : -1;

    env = getenv("FFTSHARD_NODE_CPUS");
    long cpus = env ? strtol(env, NULL, 10) : 0;
    h.node_cpus = cpus >= 1 && cpus <= 65536 ? (int)cpus : 0;

    env = getenv("FFTSHARD_PAINT_ROUND_BYTES");
    long long round = env ? strtoll(env, NULL, 10) : 0;
    h.paint_round_bytes = round >= 1 && round <= (1LL << 40) ? round : 0;

    env = getenv("FFTSHARD_FINALIZE_TIMEOUT");
    long seconds = env ? strtol(env, NULL, 10) : FS_FINALIZE_TIMEOUT_S;
    h.finalize_seconds =
        seconds > 0 && seconds < 86400 ? (unsigned)seconds : FS_FINALIZE_TIMEOUT_S;

    env = getenv(FS_PROBE_FD_ENV);
    h.probe_child = env != NULL;
    h.probe_fd = env ? atoi(env) : -1;
    h.probe_verbose = getenv(FS_PROBE_VERBOSE_ENV) != NULL;

    hooks = h;
    hooks_read = 1;
}

const fs_testhooks *fs_testhooks_get(void)
{
    if (!hooks_read)
        fs_testhooks_read();
    return &hooks;
}

const char *fs_testhooks_pause_point(void)
{
    return fs_testhooks_get()->pause_point;
}

long fs_testhooks_pause_seconds(void)
{
    return fs_testhooks_get()->pause_seconds;
}

int64_t fs_testhooks_mpi_int_limit(void)
{
    return fs_testhooks_get()->mpi_int_limit;
}

int64_t fs_testhooks_slow_read_bytes(void)
{
    return fs_testhooks_get()->slow_read_bytes;
}

double fs_testhooks_slow_read_seconds(void)
{
    return fs_testhooks_get()->slow_read_seconds;
}

int fs_testhooks_io_thread(void)
{
    return fs_testhooks_get()->io_thread;
}

int64_t fs_testhooks_paint_round_bytes(void)
{
    return fs_testhooks_get()->paint_round_bytes;
}

int fs_testhooks_node_cpus(void)
{
    return fs_testhooks_get()->node_cpus;
}

unsigned fs_testhooks_finalize_seconds(void)
{
    return fs_testhooks_get()->finalize_seconds;
}

int fs_testhooks_probe_child(void)
{
    return fs_testhooks_get()->probe_child;
}

int fs_testhooks_probe_fd(void)
{
    return fs_testhooks_get()->probe_fd;
}

int fs_testhooks_probe_verbose(void)
{
    return fs_testhooks_get()->probe_verbose;
}
