/* SPDX-License-Identifier: GPL-3.0-or-later */
/* optable: command-line options as lines of a table, so that every module
 * declares the options it owns beside the code that reads them.
 *
 * A section is a module's typed struct of option values (the planner's
 * transform, the output's destinations, a stage's parameters); its lines
 * say each option's names, whether it takes a value, the field of the
 * section it sets (offsetof) and the handler that checks and stores the
 * value, and its lines of --help. The generic handlers below serve most
 * lines; a module writes its own handler for a value of its own syntax.
 * The parser (options.h) gathers every section's lines into one getopt
 * table. Parsing is pure: no MPI, no I/O. Owns nothing. */
#ifndef FS_OPTABLE_H
#define FS_OPTABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/errors.h"

typedef struct fs_opt fs_opt;

/* Check the value `arg` of option `o` (NULL when none was given) and store
 * it in `section`; FS_ERR_USAGE with the message for a bad value. */
typedef fs_status (*fs_opt_handler)(const fs_opt *o, const char *arg, void *section);

/* One accepted name of an option's value; tables end with a NULL name. */
typedef struct fs_opt_name {
    const char *name;
    int value;
} fs_opt_name;

/* getopt's has_arg values (getopt.h), without including it everywhere. */
enum { FS_OPT_NO_ARG = 0, FS_OPT_ARG = 1, FS_OPT_OPTIONAL_ARG = 2 };

struct fs_opt {
    const char *long_name;      /* NULL ends a table */
    int short_name;             /* 0: a long name only */
    int has_arg;                /* FS_OPT_NO_ARG, FS_OPT_ARG, FS_OPT_OPTIONAL_ARG */
    fs_opt_handler handle;
    size_t field;               /* offsetof the field of the section it sets, */
    size_t field_bytes;         /* and its size */
    const fs_opt_name *names;   /* fs_opt_enum, fs_opt_name_of: the accepted values */
    long lo, hi;                /* fs_opt_long: the accepted range */
    const char *expected;       /* fs_opt_long: what the message says is expected */
    const char *help;           /* its lines of --help (NULL: help_fn's, or none) */
    void (*help_fn)(FILE *out); /* lines made when printed (a strategy table's) */
    int shared;                 /* a stage's line whose field is in the section all stages
                                   share (stage.h), not in its own */
};

/* A line's first fields: the field named by its member of section type T. */
#define FS_OPT(long_name_, short_name_, has_arg_, handle_, T, member)                              \
    .long_name = long_name_, .short_name = short_name_, .has_arg = has_arg_, .handle = handle_,    \
    .field = offsetof(T, member), .field_bytes = sizeof(((T *)0)->member)

/* The field o sets in section. */
void *fs_opt_field(const fs_opt *o, void *section);

/* The generic handlers: a flag (an int set to 1); an integer in [lo, hi]
 * (an int or int64_t field); one of `names` stored as its value (an int or
 * enum field), or kept as the name (a char * field); a file name (not
 * empty); a copy of the value (a char * field, freed by the section's
 * owner). */
fs_status fs_opt_flag(const fs_opt *o, const char *arg, void *section);
fs_status fs_opt_long(const fs_opt *o, const char *arg, void *section);
fs_status fs_opt_enum(const fs_opt *o, const char *arg, void *section);
fs_status fs_opt_name_of(const fs_opt *o, const char *arg, void *section);
fs_status fs_opt_file(const fs_opt *o, const char *arg, void *section);
fs_status fs_opt_string(const fs_opt *o, const char *arg, void *section);

/* The entry of names that `name` names, NULL for none. */
const fs_opt_name *fs_opt_find_name(const fs_opt_name *names, const char *name);
/* "a, b or c": the names, for a message. */
void fs_opt_list_names(const fs_opt_name *names, char *out, size_t size);

/* Parse one integer; the whole text must be a number in [lo, hi]. 0 or -1. */
int fs_opt_parse_long(const char *text, long lo, long hi, long *value);

/* Up to max numbers separated by commas, each positive and finite
 * (nonnegative with allow_zero); returns how many, or -1. */
int fs_opt_parse_numbers(const char *text, double *out, int max, int allow_zero);

/* Up to max integers in [lo, hi] separated by commas: how many, or -1. */
int fs_opt_parse_ints(const char *text, int *out, int max, long lo, long hi);

/* A byte count with an optional K, M or G suffix (powers of 1024; KiB and
 * KB alike). Returns 0 and sets *bytes, or -1. */
int fs_parse_bytes(const char *text, uint64_t *bytes);

/* o's lines of --help (none: nothing). */
void fs_opt_print_help(const fs_opt *o, FILE *out);

#endif
