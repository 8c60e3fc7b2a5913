/* SPDX-License-Identifier: GPL-3.0-or-later */
/* replay: run a fuzz target (fuzz_options.c, fuzz_probe.c) once on each
 * file named on the command line, without libFuzzer, so that `make check`
 * replays the seeds and the regressions with the ordinary compiler (and
 * with the sanitizers when configured so). A broken promise aborts, as it
 * does under the fuzzer. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

int main(int argc, char **argv)
{
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    int n = 0;
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            perror(argv[i]);
            return 2;
        }
        size_t cap = 4096, len = 0, got;
        uint8_t *buf = malloc(cap);
        while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
            len += got;
            if (len == cap) {
                uint8_t *b = realloc(buf, cap *= 2);
                if (!b)
                    free(buf);
                buf = b;
            }
        }
        fclose(f);
        if (!buf) {
            fprintf(stderr, "%s: out of memory\n", argv[i]);
            return 2;
        }
        fprintf(stderr, "replay: %s\n", argv[i]);
        LLVMFuzzerTestOneInput(buf, len);
        free(buf);
        n++;
    }
    printf("replay: %d inputs, no failure\n", n);
    return 0;
}
