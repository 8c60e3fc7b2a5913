#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# --dry-run's memory per rank against the peak of the real run (the
# report's peak_bytes_max, the largest VmHWM of any rank) for every
# operation on 1-D (the four-step, 2^20 to 2^24 points), 2-D and 3-D
# arrays, odd sizes, real and complex, single and double, 1 to 4 ranks,
# slabs and pencils (tests/footprint_scan.py's cases): never below the
# peak, at most 30% above it, and at most 10% for the small arrays of
# --quick. Long (make check-scan); tests/oom.bats runs jobs in cgroups
# sized by the same figure.

load helpers

setup() {
    [ "$FFTSHARD_SANITIZERS" != yes ] || skip "peak memory under the sanitizers"
    cd "$BATS_TEST_TMPDIR" || return 1
}

scan() {
    run python_serial "$srcdir/tests/footprint_scan.py" "$@"
    echo "$output"
    assert_success
}

@test "dry run at or above the real peak, within 10%: small arrays of every dimension (--quick), where the allowances weigh most" {
    scan --quick --over 0.10
}

@test "dry run at or above the real peak, within 30%: tiny arrays (the libraries' baseline)" {
    scan --tiny
}

@test "dry run at or above the real peak, within 30%: 1-D, 2-D and 3-D, every operation, 1 to 4 ranks" {
    scan --long
}
