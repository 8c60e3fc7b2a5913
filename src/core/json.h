/* SPDX-License-Identifier: GPL-3.0-or-later */
/* json: one JSON document written to a stream, member by member: the
 * report (report.h), the dry run's plan and every stage's part of them
 * use it. Members of objects have a key; elements of arrays have none
 * (key NULL). Owns nothing: the stream is the caller's. */
#ifndef FS_JSON_H
#define FS_JSON_H

#include <stdint.h>
#include <stdio.h>

typedef struct fs_json fs_json;

void fs_json_open(fs_json *j, const char *key, char bracket); /* '{' or '[' */
void fs_json_close(fs_json *j, char bracket);
void fs_json_str(fs_json *j, const char *key, const char *v);  /* v NULL: null */
void fs_json_text(fs_json *j, const char *key, const char *v); /* v NULL: "" */
void fs_json_int(fs_json *j, const char *key, int64_t v);
void fs_json_num(fs_json *j, const char *key, double v);       /* not finite: null */
void fs_json_bool(fs_json *j, const char *key, int v);
void fs_json_null(fs_json *j, const char *key);
void fs_json_ints(fs_json *j, const char *key, int n, const int64_t *v);
/* n values, each `stride` int64s after the one before. */
void fs_json_ints_strided(fs_json *j, const char *key, int n, const int64_t *v, size_t stride);
/* An element already written as JSON text (an object made apart). */
void fs_json_raw(fs_json *j, const char *text);

/* A part of a document made by another module: write(j, arg) writes its
 * members inside the document's member `member` (parts of one member in a
 * row share it: fs_json_parts), or at the top (member NULL). */
typedef struct fs_json_part {
    const char *member;
    void (*write)(fs_json *j, const void *arg);
    const void *arg;
} fs_json_part;

/* The n parts in order, the ones of one member in a row inside it. */
void fs_json_parts(fs_json *j, const fs_json_part *parts, int n);

/* One object whose members body(j, arg) writes, into f, which is closed:
 * 0, or the errno of a failed write. */
int fs_json_document(FILE *f, void (*body)(fs_json *j, void *arg), void *arg);

/* The members body(j, arg) writes as they would stand at nesting depth
 * `depth` of a document (an element made apart, that fs_json_raw puts in
 * place there), into f, which is closed: 0, or the errno of a failure. */
int fs_json_fragment(FILE *f, int depth, void (*body)(fs_json *j, void *arg), void *arg);

#endif
