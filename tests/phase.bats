#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# --phase-correlate on stacks: every frame's shift (an index of the batch
# axes) and peak height, integer and refined with --upsample, in the group
# /phase_shifts, the report and the summary, as a user registering a
# drifting stack checks them: frames made in numpy from one smooth random
# image moved by known sub-pixel shifts (the Fourier shift theorem) plus
# noise, every shift within 0.1 px of the truth, and equal to
# tests/phase_oracle.py's numpy registration written from Guizar-Sicairos
# et al.'s definition (the full spectrum, explicit DFT kernels); 1 to 4
# ranks, slabs and pencils, real and complex, single precision, batch axes
# first or between, the 1-D four-step, windowed crops of a larger scene.

load helpers

# phase ARGS...: tests/phase_oracle.py.
phase() {
    python_serial "$srcdir/tests/phase_oracle.py" "$@"
}

@test "every frame's sub-pixel shift with --upsample=20: within 0.1 px of the truth and equal to numpy's, 1 to 5 ranks, slab and pencil" {
    phase make s.h5 6x64x48 1,2 1 20 0.01
    phase make m.h5 40x3x36 0,2 2 10 0.01
    phase make c.h5 4x30x40 1,2 4 10 0.01 complex128
    phase make f.h5 4x64x60 1,2 5 20 0.01 float32
    phase make t.h5 12x10x16 0,1,2 3 4 0.01
    phase make tiny.h5 2x16x12 1,2 12 2 0.001
    local runs=(
        "2 1,2 s.h5 --decomp=pencil"
        "4 1,2 s.h5 --transpose=pairwise --real"
        "1 0,2 m.h5 --real"
        "3 2,0 m.h5 --decomp=pencil --real"
        "2 1,2 c.h5 --transpose=xorswap"
        "3 1,2 f.h5 --real"
        "4 0,1,2 t.h5 --decomp=pencil --real"
        "5 1,2 tiny.h5 --decomp=pencil --real"
    ) i=0 np axes args in
    for run in "${runs[@]}"; do
        read -r np axes in args <<<"$run"
        i=$((i + 1))
        fftshard "$np" -q --axes="$axes" $args --upsample=20 --phase-correlate --report=r$i.json \
            "$in:/a" "$in:/b" o$i.h5
        phase check "$in" o$i.h5 r$i.json "$axes" 20 || fail "run $i: $run"
    done
}

@test "integer shifts without --upsample, the 1-D four-step, the summary and the report's largest peak" {
    phase make s.h5 5x40x36 1,2 7 12 0.01
    phase make one.h5 1024 0 6 100 0.01
    fftshard 3 -q --axes=1,2 --real --phase-correlate --report=r1.json s.h5:/a s.h5:/b o1.h5
    phase check s.h5 o1.h5 r1.json 1,2 1 0.5
    fftshard 4 -q --upsample=16 --phase-correlate --report=r2.json one.h5:/a one.h5:/b o2.h5
    phase check one.h5 o2.h5 r2.json 0 16
    fftshard 3 -q --real --upsample=10 --phase-correlate --report=r3.json one.h5:/a one.h5:/b o3.h5
    phase check one.h5 o3.h5 r3.json 0 10
    # the field and the largest of the frames' integer peaks, as before
    run python_serial "$srcdir/tests/combine_oracle.py" check \
        "op=phase-correlate a=s.h5:/a b=s.h5:/b out=o1.h5 axes=1,2 report=r1.json tol=1e-11"
    echo "$output"
    assert_success
    run --separate-stderr fftshard 2 --axes=1,2 --phase-correlate s.h5:/a s.h5:/b o4.h5
    assert_success
    [[ $stderr == *"phase-correlate: the correlation of 2 INPUTs in o4.h5:/phase_correlation; the shifts of 5 frames in o4.h5:/phase_shifts, peaks "*" to "* ]] ||
        fail "$stderr"
    run --separate-stderr fftshard 2 --upsample=16 --phase-correlate one.h5:/a one.h5:/b o5.h5
    assert_success
    local truth
    truth=$(python_serial -c 'import h5py; print("%.6g" % h5py.File("o5.h5")["phase_shifts/shift"][0, 0])')
    [[ $stderr == *"in o5.h5:/phase_correlation; shift ($truth) at peak "* ]] || fail "$stderr"
}

@test "windowed crops of a larger scene: --window=hann with --phase-correlate, within 0.1 px" {
    phase make w.h5 4x160x160 1,2 8 20 0.02 crop
    fftshard 2 -q --axes=1,2 --real --window=hann --upsample=20 --phase-correlate --report=r.json \
        w.h5:/a w.h5:/b o.h5
    phase check w.h5 o.h5 r.json 1,2 20 0.1 hann
}

@test "refusals: --upsample without --phase-correlate, out of range; the group exists: status 2 and 4" {
    phase make s.h5 2x16x16 1,2 1 3 0.01
    run --separate-stderr fftshard 2 --upsample=4 --correlate s.h5:/a s.h5:/b o.h5
    assert_error "$EXIT_USAGE" "--upsample: only with --phase-correlate"
    run --separate-stderr fftshard 2 --upsample=4 s.h5:/a o.h5
    assert_error "$EXIT_USAGE" "--upsample: only with --phase-correlate"
    run --separate-stderr fftshard 2 --upsample=0 --phase-correlate s.h5:/a s.h5:/b o.h5
    assert_error "$EXIT_USAGE" "an upsampling factor from 1 to 1000"
    run --separate-stderr fftshard 2 --window=hann --correlate s.h5:/a s.h5:/b o.h5
    assert_error "$EXIT_USAGE" "--window: not with --correlate"
    [ ! -e o.h5 ]
    python_serial -c 'import h5py; h5py.File("g.h5", "w").create_group("phase_shifts")'
    run --separate-stderr fftshard 2 --add --axes=1,2 --phase-correlate s.h5:/a s.h5:/b g.h5
    assert_error "$EXIT_OUTPUT" "phase_shifts"
    assert_no_temporaries
}
