#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# The shape of the source tree as HACKING.md draws it (tests/structure.py
# reads the files as text): layers that only look down, files and functions
# of a readable size, a pipeline that names no stage, a HACKING.md whose
# names exist, no dead function, no stand-in in sim/.

load helpers

# bats test_tags=quick
@test "structure: every include runs down the layers core < io, exchange < plan < sources < compute < stages < report < output < the top" {
    run python_serial "$srcdir/tests/structure.py" "$srcdir" layers
    assert_success
    assert_output ""
}

@test "structure: only the top (main, options, the pipeline, the dry run) sees the whole configuration" {
    local seen
    seen=$(cd "$srcdir/src" && grep -rlE '^#include "(\.\./)?options\.h"' --include='*.[ch]' . | sort | tr '\n' ' ')
    [ "$seen" = "./dryrun.c ./main.c ./options.c ./pipeline.h " ] || fail "options.h is included by: $seen"
}

@test "structure: no file of src/ over 800 lines, no function over 110" {
    run python_serial "$srcdir/tests/structure.py" "$srcdir" sizes
    assert_success
    assert_output ""
}

@test "structure: the pipeline is at most 450 lines and names no stage" {
    run python_serial "$srcdir/tests/structure.py" "$srcdir" pipeline
    assert_success
    assert_output ""
}

@test "structure: every fs_ name HACKING.md gives is defined in src/" {
    run python_serial "$srcdir/tests/structure.py" "$srcdir" hacking
    assert_success
    assert_output ""
}

@test "structure: every function src/ defines is used; sim/ stands in for none" {
    run python_serial "$srcdir/tests/structure.py" "$srcdir" dead
    assert_success
    assert_output ""
    run python_serial "$srcdir/tests/structure.py" "$srcdir" sim
    assert_success
    assert_output ""
}

@test "structure.py finds what it looks for (a tree made to break every rule)" {
    local t="$BATS_TEST_TMPDIR/tree"
    mkdir -p "$t/src/core" "$t/src/stages" "$t/sim"
    printf '#include "stages/stage.h"\n' >"$t/src/core/bad.c"
    printf 'const fs_stage_ops *const fs_stage_table[] = {&fs_stage_x, NULL};\n' >"$t/src/stages/stage.c"
    printf '{FS_OPT("x-option", 0, 0, f, T, m)}\n' >"$t/src/stages/x.c"
    { printf 'static const char *s = "--x-option";\n'; for i in $(seq 900); do printf '/* %d */\n' "$i"; done; } >"$t/src/pipeline.c"
    printf 'int fs_unused(void)\n{\n    return 0;\n}\n' >"$t/src/core/dead.c"
    printf 'int fs_unused(void)\n{\n    return 1;\n}\n' >"$t/sim/stub.c"
    printf 'see `fs_nowhere`\n' >"$t/HACKING.md"
    local check
    for check in layers sizes pipeline hacking dead sim; do
        run python_serial "$srcdir/tests/structure.py" "$t" "$check"
        [ "$status" -eq 1 ] || fail "$check: status $status, output: $output"
        [ -n "$output" ] || fail "$check: no line"
    done
}
