/* SPDX-License-Identifier: GPL-3.0-or-later */
/* promise: what both fuzz targets require of a status and its message.
 *
 * FUZZ_TARGET names the target in the report of a broken promise, which
 * ends the run with abort() so that libFuzzer keeps the input. */
#ifndef FUZZ_PROMISE_H
#define FUZZ_PROMISE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"

#ifndef FUZZ_TARGET
#error "define FUZZ_TARGET before including promise.h"
#endif

static void broken(const char *what, const char *message)
{
    fprintf(stderr, "%s: %s (message: '%s')\n", FUZZ_TARGET, what, message);
    abort();
}

/* st must be FS_OK or the error `e1` or `e2` (`statuses` lists the three
 * for the report), be the status recorded, and an error must carry a
 * message of one line. Returns nonzero for an error. */
static int check_status(fs_status st, fs_status e1, fs_status e2, const char *statuses)
{
    const char *message = fs_error_message();
    if (st != FS_OK && st != e1 && st != e2) {
        char what[128];
        snprintf(what, sizeof what, "a status other than %s", statuses);
        broken(what, message);
    }
    if (fs_error_status() != st)
        broken("the recorded status is not the one returned", message);
    if (st == FS_OK)
        return 0;
    if (message[0] == '\0')
        broken("an error without a message", message);
    if (strchr(message, '\n'))
        broken("a message of more than one line", message);
    return 1;
}

#endif
