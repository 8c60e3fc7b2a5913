#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Pencil decompositions (--decomp, --grid), planning a job (--dry-run), and
# the 64-bit path of the alltoall exchange, against numpy.

load helpers

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    CASES=()
}

@test "3x40x40 complex128 on 8 ranks: pencils by default, equal to numpy" {
    oracle make a.h5 3x40x40:complex128
    fs 8 a.h5 o.h5 --report=r.json
    check_all
    run env -u PMI_RANK "$PYTHON_ORACLE" -c 'import json; d = json.load(open("r.json"))["decomposition"]
print(d["type"], d["grid"], d["stages"])'
    assert_output "pencil [1, 8] [[0, 1], [0, 2], [1, 2]]"
}

@test "grids 2x2, 2x3, 3x2, 1xP and Px1 on 3-D and 4-D inputs with uneven sizes" {
    oracle make a.h5 7x9x5:complex128 -- b.h5 5x6x7x3:complex128 -- c.h5 8x6x5:float64
    fs 4 a.h5 a22.h5 --grid=2x2
    fs 6 a.h5 a23.h5 --grid=2x3
    fs 6 a.h5 a32.h5 --grid=3x2
    fs 4 a.h5 a14.h5 --grid=1x4
    fs 4 a.h5 a41.h5 --grid=4x1
    fs 6 b.h5 b23.h5 --grid=2x3
    fs 4 b.h5 b22.h5 --grid=2x2 --inverse
    fs 4 c.h5 c22.h5 --grid=2x2 --axes=0,1
    check_all
}

# bats test_tags=sanitized
@test "every strategy inside the row and column communicators" {
    oracle make a.h5 6x7x5:complex128
    local s
    for s in alltoall random xorswap pairwise auto; do
        fs 6 a.h5 "o_$s.h5" --grid=2x3 --transpose="$s"
    done
    fs 4 a.h5 small.h5 --grid=2x2 --transpose=random --packet=7 --queues=2
    check_all
}

# bats test_tags=sanitized
@test "real transforms on pencils; --check passes on pencils" {
    oracle make r.h5 6x8x10:float64
    fs 4 r.h5 r22.h5 --real --grid=2x2
    fs 8 r.h5 r8.h5 --real --decomp=pencil
    check_all
    run --separate-stderr fftshard 6 --check --decomp=pencil --force r.h5 c.h5
    assert_success
    grep -q 'check: .*passed' <<<"$stderr" || fail "$stderr"
}

# bats test_tags=sanitized
@test "the alltoall exchange splits messages whose counts exceed MPI's int (forced low)" {
    oracle make a.h5 12x10x6:complex128 -- d.h5 360:complex128
    FFTSHARD_MPI_INT_LIMIT=5 fs 3 a.h5 o.h5 --transpose=alltoall
    FFTSHARD_MPI_INT_LIMIT=7 fs 4 a.h5 p.h5 --transpose=alltoall --grid=2x2
    FFTSHARD_MPI_INT_LIMIT=3 fs 4 d.h5 q.h5 --transpose=alltoall
    check_all
}

# bats test_tags=sanitized
@test "--dry-run for 8192^3 complex64 on 65536 ranks: pencils 256x256, 32x32x8192 blocks, under a CPU second" {
    local cpu limit=1000
    # CPU time, which a busy machine does not inflate as it does wall time.
    # AddressSanitizer and UBSan check every access of the planning
    # arithmetic: a few times slower, still far from a quadratic plan
    # (minutes at 65536 ranks).
    [ "$FFTSHARD_SANITIZERS" != yes ] || limit=5000
    local args=(--dry-run --shape=8192x8192x8192 --dtype=complex64 --ranks=65536 --mem-per-rank=4G)
    cpu=$( { TIMEFORMAT='%3U %3S'; time "$FFTSHARD" "${args[@]}" >/dev/null 2>&1; } 2>&1 )
    cpu=$(awk '{ printf "%d", ($1 + $2) * 1000 }' <<<"$cpu")
    [ "$cpu" -lt "$limit" ] || fail "took $cpu ms of CPU time"
    run --separate-stderr "$FFTSHARD" "${args[@]}"
    assert_success
    assert_line --partial "decomposition: pencil, grid 256 x 256"
    assert_line --regexp '^stage 0: axis 0 over 256, axis 1 over 256; local blocks 32x32x8192 to 32x32x8192 \(up to 8388608 elements, 64\.0 MiB\)$'
    assert_line --regexp '^stage 2: axis 1 over 256, axis 2 over 256; local blocks 8192x32x32 to 8192x32x32'
    assert_line --partial "--mem-per-rank 4096.0 MiB: fits"
    assert_line "nothing was read, computed or written"
}

# bats test_tags=sanitized
@test "--dry-run for 2^34 x 3 on 7 ranks, for a file, and what does not fit" {
    # A plan that does not fit --mem-per-rank in memory: the text in full, then status 1.
    run --separate-stderr "$FFTSHARD" --dry-run --in-memory --shape=17179869184x3 --ranks=7 --mem-per-rank=1G
    assert_failure "$EXIT_RUNTIME"
    assert_line --regexp '^stage 0: axis 0 over 7; local blocks 2454267026x3 to 2454267027x3'
    assert_line --partial "does NOT fit"
    assert_line "nothing was read, computed or written"
    [[ $stderr == "fftshard: error: --mem-per-rank: "*"(not enough memory)" ]] || fail "$stderr"
    oracle make a.h5 64x32x16:complex128
    run fftshard 2 --dry-run --transpose=alltoall a.h5 out.h5
    assert_success
    assert_line --partial "64x32x16 complex128 on 2 ranks"
    assert_line --partial "memory per rank (alltoall): array 0.2 MiB + exchange 0.1 MiB"
    [ ! -e out.h5 ] || fail "a dry run wrote the output"
}

@test "bad decomposition options: exit 2" {
    oracle make a.h5 4x6:complex128 -- b.h5 4x4x4:complex128
    run --separate-stderr fftshard 4 --decomp=pencil a.h5 o.h5
    assert_error "$EXIT_USAGE" "--decomp=pencil"
    run --separate-stderr fftshard 4 --grid=3x3 b.h5 o.h5
    assert_error "$EXIT_USAGE" "--grid=3x3" "4"
    local bad
    for bad in --grid=4 --grid=0x4 --grid=axb --decomp=cube; do
        run --separate-stderr fftshard 4 "$bad" b.h5 o.h5
        assert_error "$EXIT_USAGE" "${bad%%=*}"
    done
    run --separate-stderr fftshard 1 --shape=4x4 b.h5 o.h5
    assert_error "$EXIT_USAGE" "--dry-run"
    run --separate-stderr fftshard 1 --dry-run --shape=4x4 b.h5
    assert_error "$EXIT_USAGE" "--dry-run"
    run --separate-stderr fftshard 1 --dry-run --shape=4x0
    assert_error "$EXIT_USAGE" "--shape"
    [ ! -e o.h5 ] || fail "a refused run wrote the output"
}
