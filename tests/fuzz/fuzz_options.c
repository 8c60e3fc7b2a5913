/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_options: fuzz target for the command line parser (fs_options_parse).
 *
 * The input is the command line as the kernel keeps it (/proc/PID/cmdline):
 * the arguments after the program name, each ended by a NUL byte (the last
 * one may lack it). An argument may hold any other byte, newlines included.
 * Besides crashes and sanitizer reports, the target stops on a broken
 * promise of the parser: a status other than success, a usage error or out
 * of memory; an error without its message, or a message of more than one
 * line; a success whose values are out of their documented ranges; a
 * second parse of the same command line that ends otherwise.
 *
 * Built with clang -fsanitize=fuzzer by `make fuzz`, and with replay.c as a
 * plain program that `make check` runs on the seeds and the regressions. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "options.h"

#define FUZZ_TARGET "fuzz_options"
#include "promise.h"

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static void check(fs_status st, const fs_run_config *o)
{
    if (check_status(st, FS_ERR_USAGE, FS_ERR_RUNTIME, "0, 1 or 2"))
        return;
    if (o->action != FS_ACTION_RUN)
        return;
    if (!o->dry.on && (o->ninputs < 1 || !o->output.file))
        broken("a run without INPUT or OUTPUT", "");
    if (o->dry.on && o->ninputs < 1 && o->dry.shape_ndim == 0)
        broken("a dry run without INPUT or --shape", "");
    const fs_transform_options *t = &o->transform;
    if (t->naxes < 0 || t->naxes > FS_LAYOUT_MAX_DIMS || o->dry.shape_ndim < 0 ||
        o->dry.shape_ndim > FS_LAYOUT_MAX_DIMS)
        broken("an axis or shape count out of range", "");
    for (int i = 0; i < t->naxes; i++)
        if (t->axes[i] < -FS_LAYOUT_MAX_DIMS || t->axes[i] >= FS_LAYOUT_MAX_DIMS)
            broken("an axis out of range", "");
    if (o->strategy.packet_bytes < 1 || o->strategy.packet_bytes > ((size_t)1 << 30))
        broken("--packet out of range", "");
    if (o->strategy.queues < 1 || o->strategy.queues > 1024)
        broken("--queues out of range", "");
    if (o->strategy.strategy.kind == FS_STRATEGY_NAMED && !o->strategy.strategy.ops)
        broken("a named strategy without its table", "");
    if (!o->command_line)
        broken("a field left unset", "");
    if (o->dry.dtype != FS_DTYPE_FLOAT32 && o->dry.dtype != FS_DTYPE_FLOAT64 &&
        o->dry.dtype != FS_DTYPE_COMPLEX64 && o->dry.dtype != FS_DTYPE_COMPLEX128)
        broken("--dtype not one of its four types", "");
    if (t->last_size && !(t->real && t->inverse))
        broken("--last-size without --inverse --real", "");
    if (o->quiet && o->verbose)
        broken("--quiet with --verbose", "");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    if (size)
        memcpy(text, data, size);
    text[size] = '\0';
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "fftshard";
    size_t start = 0;
    while (start < size && argc <= MAX_ARGS) {
        char *nul = memchr(text + start, '\0', size - start);
        size_t end = nul ? (size_t)(nul - text) : size;
        text[end] = '\0';
        argv[argc++] = text + start;
        start = end + 1;
    }
    argv[argc] = NULL;

    fs_run_config opts, again;
    fs_status st = fs_options_parse(argc, argv, &opts);
    check(st, &opts);
    /* The same command line again (getopt has put the operands last, which
     * changes nothing): nothing of the first parse may linger. */
    fs_error_clear();
    fs_status st2 = fs_options_parse(argc, argv, &again);
    if (st2 != st || again.action != opts.action ||
        (st == FS_OK && (again.output.force != opts.output.force || again.quiet != opts.quiet ||
                         again.verbose != opts.verbose ||
                         again.transform.naxes != opts.transform.naxes ||
                         again.ninputs != opts.ninputs ||
                         (opts.ninputs && !same(again.inputs[0].file, opts.inputs[0].file)) ||
                         !same(again.output.file, opts.output.file))))
        broken("a second parse of the same command line differs", fs_error_message());
    fs_options_free(&opts);
    fs_options_free(&again);
    fs_error_clear();
    free(text);
    return 0;
}
