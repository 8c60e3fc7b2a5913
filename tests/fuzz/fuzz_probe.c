/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_probe: fuzz target for the input check (fs_h5_probe), which rank 0
 * runs alone on INPUT before any parallel work.
 *
 * The input is the content of an HDF5 file: it is written to a new
 * temporary file and probed twice, for its only dataset and for /data.
 * Besides crashes and sanitizer reports, the target stops on a broken
 * promise of the probe: a status other than success, unusable input or out
 * of memory; an error without its message or with a message of more than
 * one line; a success with a shape or type that fftshard cannot transform.
 * The probe needs no MPI: it opens the file with HDF5's default driver.
 *
 * Built with clang -fsanitize=fuzzer by `make fuzz`, and with replay.c as a
 * plain program that `make check` runs on the seeds and the regressions. */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/errors.h"
#include "io/h5probe.h"

#define FUZZ_TARGET "fuzz_probe"
#include "promise.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[4096];

static void check(fs_status st, const fs_input_info *info)
{
    if (check_status(st, FS_ERR_INPUT, FS_ERR_RUNTIME, "0, 1 or 3"))
        return;
    if (info->ndim < 1 || info->ndim > FS_LAYOUT_MAX_DIMS)
        broken("a success with a number of axes out of range", "");
    if (fs_shape_elems(info->ndim, info->shape) < 1)
        broken("a success with an empty or too large shape", "");
    if (info->dataset[0] != '/' || !memchr(info->dataset, '\0', sizeof info->dataset))
        broken("a success without an absolute dataset path", "");
    if (info->type_name[0] == '\0' || !memchr(info->type_name, '\0', sizeof info->type_name))
        broken("a success without a type name", "");
    if (info->last_size_attr < 0)
        broken("a negative last_size", "");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fs_h5_init();
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/fuzz_probe.%ld.h5", dir && *dir ? dir : "/tmp", (long)getpid());
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A new file each time: HDF5 must not find a file it still holds open
     * under the same name and inode. */
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        perror(path);
        abort();
    }
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0) {
            perror(path);
            abort();
        }
        done += (size_t)n;
    }
    close(fd);

    fs_input_info info;
    check(fs_h5_probe(path, NULL, &info), &info);
    fs_error_clear();
    check(fs_h5_probe(path, "/data", &info), &info);
    fs_error_clear();
    unlink(path);
    return 0;
}
