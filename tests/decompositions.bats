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
