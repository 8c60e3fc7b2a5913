#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# --real on every decomposition the dry run shows for shapes of 1 to 4 axes
# (small axes last) on 1 to 8 ranks: slabs, pencils, every --grid, batch
# axes, the 1-D four-step and gather, ranks that own nothing, the halved
# axis split in the first stage or the last (tests/decomp_scan.py's CONFIGS,
# one configuration of each class, checked against its dry run). On each,
# --check passes and keeps numpy's rfftn; --correlation-function, alone and
# with --cross, equals tests/xi_oracle.py's numpy xi(r) with the transformed
# array beside it; --apply equals tests/apply_oracle.py (tests/decomp.bash
# runs them); where the first stage splits the halved last axis, --correlate
# too.

load helpers
load decomp

@test "every decomposition of --real: --check, --correlation-function, --cross, --apply against numpy" {
    decomp_matrix all check xi cross apply
}

@test "the halved last axis split in the first stage: --correlate against numpy" {
    decomp_matrix first-real correlate
}

# A rank that owns no column of the 1-D four-step (2 x 20011 points on 3
# ranks: two columns) reread the input for --check one row at a time, every
# rank opening the file for each of its 20011 rows (more than two minutes;
# 1000018 points: hours); it reads no row, and the check takes a second.
@test "--check of a 1-D four-step with fewer columns than ranks: no reread row by row, numpy's FFT kept" {
    oracle make in.h5 40022:complex128
    run timeout 60 "$MPIEXEC" -n 3 "$FFTSHARD" -q --check --report=r.json in.h5 out.h5
    assert_success
    run python_serial -c 'import json; print(json.load(open("r.json"))["check"]["passed"])'
    assert_output True
    oracle check "in=in.h5 out=out.h5 ranks=3 transpose=default"
}
