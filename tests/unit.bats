#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# The C unit tests: layout arithmetic (serial) and every exchange strategy
# under mpiexec on 1 to 8 ranks. Their own output says what failed.

load helpers

# bats file_tags=sanitized

# bats test_tags=quick
@test "transform: decompositions tile the array, up to 65536 ranks and 2^34 rows" {
    run "$TEST_BINDIR/test_transform"
    assert_success
    assert_output --regexp '^test_transform: [0-9]+ checks, 0 failed$'
}

# bats test_tags=quick
@test "layout: split, boxes, pack/unpack, redistributions, shapes" {
    run "$TEST_BINDIR/test_layout"
    assert_success
    assert_output --regexp '^test_layout: [0-9]+ checks, 0 failed$'
}

@test "test hooks: the environment read once, defaults and fallbacks" {
    run "$TEST_BINDIR/test_testhooks"
    assert_success
    assert_output --regexp '^test_testhooks: [0-9]+ checks, 0 failed$'
}

# exchange NP: every strategy on NP ranks. A strategy that deadlocks (a
# queue never drained, a message never received) fails here after 10
# minutes instead of hanging `make check`.
exchange() {
    run timeout 600 "$MPIEXEC" -n "$1" "$TEST_BINDIR/test_exchange"
    assert_success
    assert_output --partial "on $1 ranks, 0 failures"
}

@test "exchange: every strategy on 1 rank" { exchange 1; }
# bats test_tags=quick
@test "exchange: every strategy on 2 ranks" { exchange 2; }
@test "exchange: every strategy on 3 ranks" { exchange 3; }
@test "exchange: every strategy on 4 ranks" { exchange 4; }
@test "exchange: every strategy on 5 ranks" { exchange 5; }
@test "exchange: every strategy on 6 ranks" { exchange 6; }
@test "exchange: every strategy on 7 ranks" { exchange 7; }
@test "exchange: every strategy on 8 ranks" { exchange 8; }

# prefix NP: the parallel prefix broadcast against MPI_Scan on NP ranks.
prefix() {
    run "$MPIEXEC" -n "$1" "$TEST_BINDIR/test_prefix"
    assert_success
    assert_output --regexp "^test_prefix: [0-9]+ checks on $1 ranks, 0 failures$"
}

@test "prefix broadcast: sum, max, min of int64 and double against MPI_Scan/MPI_Exscan on 1 to 8 ranks" {
    local n
    for n in 1 2 3 4 5 6 7 8; do
        prefix "$n"
    done
}

# agree NP: rank 0's decisions, strings and bytes reach every rank of NP.
agree() {
    run timeout 120 "$MPIEXEC" -n "$1" "$TEST_BINDIR/test_agree"
    assert_success
    assert_output --partial "test_agree: "
    assert_output --partial " checks on $1 ranks, 0 failures"
    # the one failure that prints is printed by one rank
    [ "$(grep -c 'error:' <<<"$output")" -eq 1 ]
}

@test "agree: rank 0 decides, strings and bytes from the first and last rank, on 1 to 4 ranks" {
    local n
    for n in 1 2 3 4; do
        agree "$n"
    done
}
