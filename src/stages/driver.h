/* SPDX-License-Identifier: GPL-3.0-or-later */
/* driver: the active stages of one run (stage.h), made together and
 * driven through their hooks in the table's order, each hook's status
 * agreed where the hook is collective. It keeps the first INPUT's forward
 * result for the stages that need it (keep_first) and hands it to them on
 * the later turns, knows which stage makes the written result (the field
 * stage: at most one) and gathers the stages' groups and their parts of
 * the report. The pipeline asks it, and names no stage. Owns the stages'
 * states and the kept result. */
#ifndef FS_DRIVER_H
#define FS_DRIVER_H

#include <mpi.h>

#include "core/errors.h"
#include "core/json.h"
#include "stages/stage.h"

typedef struct fs_stages fs_stages;

/* Collective, once every INPUT is probed and its transform planned: every
 * active stage of sc made (stage.h's create), in table order. *out is
 * allocated even on failure (free with fs_stages_free). The status is
 * agreed; rank 0 speaks for a usage error. */
fs_status fs_stages_create(const fs_stage_config *sc, const fs_stage_run *r, fs_stages **out);
void fs_stages_free(fs_stages **s);

/* The results input i's turn makes: the field stage's, else one (none with
 * --spectrum-only); and of them those written (none with --spectrum-only:
 * the field's results are then made for the stages that bin them). */
int fs_stages_made(const fs_stages *s, int i);
int fs_stages_results(const fs_stages *s, int i);

/* The path of result k of input i's turn that a field stage names (NULL:
 * the transform's own result, at the default path). */
const char *fs_stages_result_path(const fs_stages *s, int i, int k);

/* What result k of input i's turn records (a field stage's; else the
 * input's own name and nothing more). */
void fs_stages_record(const fs_stages *s, int i, int k, fs_stage_record *rec);

/* The groups the stages write into OUTPUT, in order: group g's path (NULL
 * past the last). */
const char *fs_stages_group(const fs_stages *s, int g);

/* What OUTPUT is to hold: every turn's results (at the paths the field
 * stage names, else at OUTPUT's path when given, else at the input's
 * own), then the groups. */
typedef struct fs_stages_layout {
    int nresults, ngroups;
    const char **paths;        /* the results', then the groups' (then NULL) */
    int *input;                /* each result's INPUT */
    int *first, *count;        /* each INPUT's first result and how many */
} fs_stages_layout;
fs_status fs_stages_lay_out(const fs_stages *s, const char *output_dataset, fs_stages_layout *l);
void fs_stages_layout_free(fs_stages_layout *l);

/* This rank's turn of input i, after its forward transform: the first
 * INPUT's result kept (keep_first, several INPUTs), then every stage's
 * forward hook. Agreed. */
fs_status fs_stages_forward(fs_stages *s, fs_stage_turn *turn);

/* Collective: result k of the turn made by the field stage (its operate),
 * the status agreed. */
fs_status fs_stages_operate(fs_stages *s, const fs_stage_turn *turn, int k);

/* Out of core (stage.h's block hooks; the run is fs_stages_block_wise's):
 * one block of input i's forward result (box, at data) through every
 * stage's forward_block; the field stage's operate_block for result k on
 * one block in place. This rank's status, not agreed. */
fs_status fs_stages_forward_block(fs_stages *s, const fs_stage_turn *turn, const fs_box *box,
                                  const void *data);
fs_status fs_stages_operate_block(fs_stages *s, const fs_stage_turn *turn, int k,
                                  const fs_box *box, void *data);

/* Collective, after the turn's write: every stage's written hook, agreed;
 * the kept result freed after the last INPUT's turn. */
fs_status fs_stages_written(fs_stages *s, const fs_stage_turn *turn);

/* Collective, once every INPUT is done: every stage's finish, agreed. */
fs_status fs_stages_finish(fs_stages *s, MPI_Comm comm, const fs_stage_out *out);

/* The box lengths every stage's grid has (kgrid.h's fs_box_lengths_resolve:
 * --box-size or the INPUTs' box_size attribute; n 0: none). */
const fs_box_lengths *fs_stages_box(const fs_stages *s);

/* The stages' parts of the report (*n of them, pointing into s: the box
 * first, "box": {"lengths", "from"}, when there is one) and their summary
 * lines (malloc'ed, NULL with none; a line "box:" first when the box came
 * from the INPUTs), once they are done. */
const fs_json_part *fs_stages_report(fs_stages *s, const char *output, int *n, char **lines);

/* What a field stage makes the result with, as the report says (NULL:
 * none). */
const char *fs_stages_operation(const fs_stages *s);

#endif
