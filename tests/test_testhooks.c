/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test_testhooks: the environment's test hooks as fs_testhooks_read reads
 * them (src/core/testhooks.h): defaults when unset, the values that are taken and
 * those that fall back to the default, and a read that happens once.
 * Serial, no MPI. Exit 0 when all passed. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/testhooks.h"

static int checks, failed;

#define CHECK(cond)                                                                               \
    do {                                                                                          \
        checks++;                                                                                 \
        if (!(cond)) {                                                                            \
            failed++;                                                                             \
            fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond);                    \
        }                                                                                         \
    } while (0)

static const char *const names[] = {"FFTSHARD_PAUSE", "FFTSHARD_MPI_INT_LIMIT",
                                    "FFTSHARD_FINALIZE_TIMEOUT", "FFTSHARD_PROBE_FD",
                                    "FFTSHARD_PROBE_VERBOSE", "FFTSHARD_SLOW_READ",
                                    "FFTSHARD_PAINT_ROUND_BYTES"};

/* Read the hooks with only NAME=VALUE set (NAME NULL: none). */
static void read_with(const char *name, const char *value)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        unsetenv(names[i]);
    if (name && setenv(name, value, 1) != 0) {
        perror("setenv");
        exit(2);
    }
    fs_testhooks_read();
}

static void defaults(void)
{
    read_with(NULL, NULL);
    CHECK(strcmp(fs_testhooks_pause_point(), "") == 0);
    CHECK(fs_testhooks_pause_seconds() == 60);
    CHECK(fs_testhooks_mpi_int_limit() == INT_MAX);
    CHECK(fs_testhooks_finalize_seconds() == FS_FINALIZE_TIMEOUT_S);
    CHECK(fs_testhooks_probe_child() == 0);
    CHECK(fs_testhooks_probe_fd() == -1);
    CHECK(fs_testhooks_probe_verbose() == 0);
    CHECK(fs_testhooks_get()->mpi_int_limit == INT_MAX);
    CHECK(fs_testhooks_slow_read_bytes() == 0);
    CHECK(fs_testhooks_slow_read_seconds() == 0);
    CHECK(fs_testhooks_paint_round_bytes() == 0);
}

static void pause_hook(void)
{
    read_with("FFTSHARD_PAUSE", "write:3");
    CHECK(strcmp(fs_testhooks_pause_point(), "write") == 0);
    CHECK(fs_testhooks_pause_seconds() == 3);
    read_with("FFTSHARD_PAUSE", "renamed");
    CHECK(strcmp(fs_testhooks_pause_point(), "renamed") == 0);
    CHECK(fs_testhooks_pause_seconds() == 60);
    /* cut to 31 bytes before the colon is looked for */
    read_with("FFTSHARD_PAUSE", "0123456789012345678901234567890123:5");
    CHECK(strcmp(fs_testhooks_pause_point(), "0123456789012345678901234567890") == 0);
    CHECK(fs_testhooks_pause_seconds() == 60);
}

static void limit_and_timeout(void)
{
    read_with("FFTSHARD_MPI_INT_LIMIT", "5");
    CHECK(fs_testhooks_mpi_int_limit() == 5);
    read_with("FFTSHARD_MPI_INT_LIMIT", "-3");
    CHECK(fs_testhooks_mpi_int_limit() == INT_MAX);
    read_with("FFTSHARD_MPI_INT_LIMIT", "lots");
    CHECK(fs_testhooks_mpi_int_limit() == INT_MAX);
    read_with("FFTSHARD_FINALIZE_TIMEOUT", "5");
    CHECK(fs_testhooks_finalize_seconds() == 5);
    read_with("FFTSHARD_FINALIZE_TIMEOUT", "86399");
    CHECK(fs_testhooks_finalize_seconds() == 86399);
    read_with("FFTSHARD_FINALIZE_TIMEOUT", "86400");
    CHECK(fs_testhooks_finalize_seconds() == FS_FINALIZE_TIMEOUT_S);
    read_with("FFTSHARD_FINALIZE_TIMEOUT", "0");
    CHECK(fs_testhooks_finalize_seconds() == FS_FINALIZE_TIMEOUT_S);
    CHECK(FS_FINALIZE_TIMEOUT_S == 2);
}

static void slow_read_hook(void)
{
    read_with("FFTSHARD_SLOW_READ", "65536:0.5");
    CHECK(fs_testhooks_slow_read_bytes() == 65536);
    CHECK(fs_testhooks_slow_read_seconds() == 0.5);
    /* both or neither */
    read_with("FFTSHARD_SLOW_READ", "65536");
    CHECK(fs_testhooks_slow_read_bytes() == 0);
    CHECK(fs_testhooks_slow_read_seconds() == 0);
    read_with("FFTSHARD_SLOW_READ", "0:2");
    CHECK(fs_testhooks_slow_read_bytes() == 0);
    read_with("FFTSHARD_SLOW_READ", "4096:-1");
    CHECK(fs_testhooks_slow_read_bytes() == 0);
    CHECK(fs_testhooks_slow_read_seconds() == 0);
}

static void paint_round_hook(void)
{
    read_with("FFTSHARD_PAINT_ROUND_BYTES", "100");
    CHECK(fs_testhooks_paint_round_bytes() == 100);
    read_with("FFTSHARD_PAINT_ROUND_BYTES", "0");
    CHECK(fs_testhooks_paint_round_bytes() == 0);
    read_with("FFTSHARD_PAINT_ROUND_BYTES", "2000000000000");
    CHECK(fs_testhooks_paint_round_bytes() == 0);
}

static void probe_hooks(void)
{
    read_with("FFTSHARD_PROBE_FD", "7");
    CHECK(fs_testhooks_probe_child() == 1);
    CHECK(fs_testhooks_probe_fd() == 7);
    CHECK(fs_testhooks_probe_verbose() == 0);
    read_with("FFTSHARD_PROBE_FD", "");
    CHECK(fs_testhooks_probe_child() == 1);
    CHECK(fs_testhooks_probe_fd() == 0);
    read_with(FS_PROBE_VERBOSE_ENV, "");
    CHECK(fs_testhooks_probe_verbose() == 1);
    CHECK(fs_testhooks_probe_child() == 0);
}

/* What was read stays until the next read. */
static void read_once(void)
{
    read_with("FFTSHARD_MPI_INT_LIMIT", "9");
    setenv("FFTSHARD_MPI_INT_LIMIT", "11", 1);
    CHECK(fs_testhooks_mpi_int_limit() == 9);
    fs_testhooks_read();
    CHECK(fs_testhooks_mpi_int_limit() == 11);
}

int main(void)
{
    defaults();
    pause_hook();
    limit_and_timeout();
    slow_read_hook();
    paint_round_hook();
    probe_hooks();
    read_once();
    printf("test_testhooks: %d checks, %d failed\n", checks, failed);
    return failed ? 1 : 0;
}
