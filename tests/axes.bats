#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Decompositions over any axes: batch axes (not transformed) first, in the
# middle and last, one or two of them, on slabs and pencils, for real,
# integer and vector-field inputs on 1 to 8 ranks, against numpy
# (tests/oracle.py); and the layouts the dry run shows for them. A short or
# untransformed leading axis must not leave ranks idle while the array has
# elements enough for all of them.

load helpers

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    CASES=()
}

# dry NP ARGS...: the dry run for NP ranks (nothing is read or run).
dry() {
    local np=$1
    shift
    run --separate-stderr "$FFTSHARD" --dry-run --ranks="$np" "$@"
    assert_success
}

# After dry: no stage leaves a rank without data.
every_rank_holds_data() {
    refute_line --partial "hold nothing"
}

# per_rank_holds_data REPORT NP: every one of the NP ranks read and wrote
# elements, and the decomposition is printed.
per_rank_holds_data() {
    run python_serial -c 'import json, sys
r = json.load(open(sys.argv[1]))
ranks = r["per_rank"]
assert len(ranks) == int(sys.argv[2]), len(ranks)
empty = [p["rank"] for p in ranks if p["elements"] <= 0 or p["output_elements"] <= 0]
print("empty ranks:", empty, r["decomposition"]["stages"])
sys.exit(1 if empty else 0)' "$1" "$2"
    assert_success
}

# bats test_tags=quick
@test "--dry-run: a 3 x 512^3 vector field and short series use all 64 ranks" {
    dry 64 --shape=3x512x512x512 --dtype=float32 --real --axes=1,2,3
    assert_line "decomposition: slab, axis 1 -> axis 2"
    assert_line --regexp '^stage 0: axis 1 over 64; local blocks 3x8x512x257 to 3x8x512x257 '
    assert_line --regexp '^stage 1: axis 2 over 64; local blocks 3x512x8x257 to 3x512x8x257 '
    every_rank_holds_data
    dry 64 --shape=3x512x512x512 --dtype=float32 --real --axes=1,2,3 --decomp=pencil
    assert_line --partial "decomposition: pencil, grid "
    every_rank_holds_data
    dry 64 --shape=3x512x512x512 --dtype=float32 --real --axes=1,2,3 --grid=8x8
    assert_line --regexp '^stage 2: axis 2 over 8, axis 3 over 8; '
    every_rank_holds_data
    # a series of 16 planes of 256^2
    dry 64 --shape=16x256x256 --dtype=float64 --axes=1,2
    assert_line "decomposition: slab, axis 1 -> axis 2"
    every_rank_holds_data
    # no axis long enough alone: the batch axis over the rows of a grid, in
    # every stage, while the columns exchange
    dry 64 --shape=8x16x16 --axes=1,2
    assert_line "decomposition: pencil, grid 8 x 8 (slabs would leave ranks without data)"
    assert_line --regexp '^stage 0: axis 0 over 8 \(batch\), axis 1 over 8; local blocks 1x2x16 to 1x2x16 '
    assert_line --regexp '^stage 1: axis 0 over 8 \(batch\), axis 2 over 8; local blocks 1x16x2 to 1x16x2 '
    every_rank_holds_data
    # a long batch axis after a short transformed one: no exchange at all
    dry 8 --shape=2x1000 --axes=0
    assert_line "decomposition: slab on axis 1, no exchange"
    assert_line --regexp '^stage 0: axis 1 over 8 \(batch\); '
    every_rank_holds_data
    # and the run's summary says so once
    oracle make b.h5 2x1000:complex128
    run --separate-stderr "$MPIEXEC" -n 8 "$FFTSHARD" --axes=0 b.h5 bo.h5
    assert_success
    [[ ${stderr_lines[0]} == *", slab on axis 1, no exchange" ]] || fail "summary: ${stderr_lines[0]}"
    # fewer elements than ranks: some must stay idle
    dry 8 --shape=2x3 --axes=1
    assert_line --partial "ranks hold nothing"
}

# bats test_tags=sanitized
@test "the vector field 3x64^3 float32, --real --axes=1,2,3 on 4 ranks: numpy's, data on every rank" {
    oracle make v.h5 3x64x64x64:float32
    fs 4 v.h5 o.h5 --real --axes=1,2,3 --report=r.json
    per_rank_holds_data r.json 4
    assert_output --partial "[[1, -1], [2, -1]]"
    fs 4 v.h5 p.h5 --real --axes=1,2,3 --decomp=pencil --report=p.json
    per_rank_holds_data p.json 4
    fs 4 v.h5 g.h5 --real --axes=1,2,3 --grid=2x2 --report=g.json
    per_rank_holds_data g.json 4
    check_all
}

@test "slabs: a batch axis first, middle or last, one or two of them; float, integer, --real; 1 to 8 ranks" {
    # Each case in a layout today's rule left partly idle (see the dry runs
    # in the first test): a slab of axis 1 behind a short batch axis 0, a
    # batch axis alone (middle, last, two of them), uneven lengths.
    oracle make f.h5 3x6x7:float64 -- m.h5 2x9x8:float32 -- i.h5 3x5x4x6:int16 \
        -- s.h5 2x9x10:float32 -- c.h5 3x10x9x8:complex128
    fs 1 f.h5 f1.h5 --axes=1,2
    fs 5 f.h5 f5.h5 --axes=1,2
    fs 4 m.h5 m4.h5 --axes=0,2
    fs 4 m.h5 l4.h5 --axes=0,1 --norm=ortho
    fs 3 m.h5 t3.h5 --axes=1
    fs 4 i.h5 i4.h5 --axes=1,3
    fs 5 i.h5 i5.h5 --axes=1,2,3 --inverse
    fs 4 s.h5 s4.h5 --axes=1,2 --real
    fs 3 s.h5 s3.h5 --axes=2,1 --real
    fs 3 s.h5 z3.h5 --axes=0,2 --real --inverse
    fs 8 c.h5 c8.h5 --axes=1,2,3 --decomp=slab
    check_all
}

@test "pencils with batch axes first, middle and last: --decomp=pencil, --grid, r2c and c2r" {
    oracle make a.h5 3x8x6x5:float64 -- b.h5 6x3x10:complex128 -- t.h5 2x3x5:int32 \
        -- z.h5 4x6x5x4:complex128
    fs 4 a.h5 a1.h5 --axes=1,2,3 --grid=2x2
    fs 4 a.h5 a2.h5 --axes=0,2,3 --real --grid=2x2
    fs 6 b.h5 b1.h5 --axes=0,2 --grid=3x2
    fs 4 b.h5 b2.h5 --axes=1 --grid=2x2
    fs 4 t.h5 t1.h5 --axes=1,2
    fs 4 t.h5 t2.h5 --axes=2,1 --real --decomp=pencil
    fs 4 z.h5 z1.h5 --axes=1,2,3 --real --inverse --decomp=pencil
    fs 8 z.h5 z2.h5 --axes=3,0 --real --inverse --grid=4x2 --last-size=7
    check_all
}

@test "every strategy on batch layouts: a slab of axis 1, a grid splitting the batch axis" {
    # v on 4 ranks: slab axis 1 -> axis 2 behind axis 0 of 3; t on 4 ranks:
    # grid 2 x 2, axis 0 over the rows in both stages.
    oracle make v.h5 3x10x9x8:complex128 -- t.h5 2x3x5:float64
    local s
    for s in alltoall random xorswap pairwise auto; do
        fs 4 v.h5 "v_$s.h5" --axes=1,2,3 --transpose="$s"
    done
    for s in alltoall random xorswap pairwise; do
        fs 4 t.h5 "t_$s.h5" --axes=1,2 --transpose="$s"
    done
    check_all
}

@test "axes of length 1, lengths that do not divide the rank count, --check" {
    oracle make a.h5 1x7x1x5:complex128 -- b.h5 1x5x11:float64 -- c.h5 2x1x3x13:int32
    fs 3 a.h5 a3.h5 --axes=1,3
    fs 2 a.h5 a2.h5 --axes=0,2
    fs 3 b.h5 b3.h5 --axes=1,2 --decomp=pencil
    fs 2 b.h5 r2.h5 --axes=2 --real
    fs 4 c.h5 c4.h5 --axes=2,3
    fs 5 c.h5 c5.h5 --axes=0,1,3 --real
    check_all
    run --separate-stderr fftshard 4 --check --axes=2,3 --force c.h5 k.h5
    assert_success
    grep -q 'check: .*passed' <<<"$stderr" || fail "$stderr"
}
