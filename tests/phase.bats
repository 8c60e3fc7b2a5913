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

@test "--apply weighs R / |R|: every frame's shift equal to numpy's weighted registration, 1 to 4 ranks, slab and pencil" {
    phase make s.h5 6x64x48 1,2 1 20 0.01
    phase make w.h5 4x160x160 1,2 8 20 0.02 crop
    local runs=(
        "1 s.h5 gaussian:1 --real"
        "2 s.h5 gaussian:1,highpass:0.05 --decomp=pencil"
        "3 s.h5 lowpass:1.5:4,highpass:0.1 --real"
        "4 s.h5 gaussian:0.7 --decomp=pencil --real"
        "2 w.h5 gaussian:1,highpass:0.05:1 --real --window=hann"
    ) i=0 np in weight args win
    for run in "${runs[@]}"; do
        read -r np in weight args <<<"$run"
        i=$((i + 1))
        win=none
        [[ $args == *hann* ]] && win=hann
        fftshard "$np" -q --axes=1,2 $args --upsample=20 --apply="$weight" --phase-correlate \
            --report=r$i.json "$in:/a" "$in:/b" o$i.h5
        phase check "$in" o$i.h5 r$i.json 1,2 20 0.1 "$win" "$weight" || fail "run $i: $run"
    done
    # the field is ifftn(W R / |R|), and numpy's with another weight differs
    python_serial - s.h5 o2.h5 <<'PY' || fail "the weighted field differs from numpy's"
import sys
import h5py, numpy as np
f, o = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
A, B = np.fft.fftn(f["a"][...], axes=(1, 2)), np.fft.fftn(f["b"][...], axes=(1, 2))
R = A * np.conj(B)
m = np.abs(R)
R = np.where(m > 0, R / np.where(m > 0, m, 1), 0)
k2 = sum(np.meshgrid(*[(2 * np.pi * np.fft.fftfreq(n)) ** 2 for n in R.shape[1:]], indexing="ij"))
q = np.sqrt(k2) / 0.05
W = np.exp(-k2 / 2) * q ** 4 / (1 + q ** 4)
want = np.fft.ifftn(R * W, axes=(1, 2)).real
err = np.abs(o["phase_correlation"][...] - want).max()
print("largest difference", err)
sys.exit(not err < 1e-12)
PY
    run python_serial "$srcdir/tests/phase_oracle.py" check s.h5 o2.h5 r2.json 1,2 20 0.1 none gaussian:1.2,highpass:0.05
    assert_failure
    # the result records its weights, the summary and the report name them
    python_serial - o2.h5 <<'PY' || fail "the weights are not recorded"
import sys
import h5py
a = h5py.File(sys.argv[1], "r")["phase_correlation"].attrs
assert a["operation"] == "phase-correlate", a["operation"]
assert a["weights"] == "gaussian:1,highpass:0.050000000000000003:2", a["weights"]
assert list(a["box_size"]) == [64, 48], a["box_size"]
PY
    run --separate-stderr fftshard 2 --axes=1,2 --apply=gaussian:1 --phase-correlate --report=rr.json \
        s.h5:/a s.h5:/b or.h5
    assert_success
    [[ $stderr == *"operation: phase-correlate weighed by gaussian:1 in Fourier space"* ]] || fail "$stderr"
    grep -q '"operation": "phase-correlate weighed by gaussian:1"' rr.json || fail "not in the report"
    # --k-units=cycles: K in cycles per sample
    fftshard 2 -q --axes=1,2 --upsample=20 --apply=lowpass:0.2:3 --k-units=cycles --phase-correlate \
        --report=rc.json s.h5:/a s.h5:/b oc.h5
    phase check s.h5 oc.h5 rc.json 1,2 20 0.1 none lowpass:1.2566370614359172:3
}

# same_results B R: the phase correlations of B and R and their shifts and
# heights are the same numbers.
same_results() {
    python_serial - "$1" "$2" <<'PY'
import sys
import h5py, numpy as np
b, r = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
for name in ("phase_correlation", "phase_shifts/shift", "phase_shifts/peak_height"):
    x, y = b[name][...], r[name][...]
    if x.shape != y.shape or not np.array_equal(x, y):
        sys.exit(f"{name}: {x.shape} and {y.shape}, largest difference {np.abs(x - y).max()}")
PY
}

@test "a reference broadcast over the stack's frames: as the reference repeated, and numpy's; refusals" {
    phase make s.h5 6x64x48 1,2 1 20 0.01
    phase make p.h5 3x12x24x20 1,2,3 2 4 0.01
    local runs=(
        "1 1,2 s.h5"
        "2 -2,-1 s.h5 --real"
        "3 1,2 s.h5 --decomp=slab --apply=gaussian:1"
        "4 -2,-1 s.h5 --real --apply=gaussian:1,highpass:0.05"
        "2 1,2,3 p.h5 --decomp=pencil --real"
        "4 -3,-2,-1 p.h5 --decomp=pencil --apply=gaussian:1"
    ) i=0 np axes in args weight
    for run in "${runs[@]}"; do
        read -r np axes in args <<<"$run"
        i=$((i + 1))
        weight=$(sed -n 's/.*--apply=\([^ ]*\).*/\1/p' <<<"$args")
        fftshard "$np" -q --axes="$axes" $args --upsample=20 --phase-correlate --report=b$i.json \
            "$in:/ref" "$in:/b" b$i.h5
        fftshard "$np" -q --axes="$axes" $args --upsample=20 --phase-correlate --report=r$i.json \
            "$in:/a" "$in:/b" r$i.h5
        [[ $in == s.h5 ]] && axes=1,2 || axes=1,2,3
        phase check "$in" b$i.h5 b$i.json "$axes" 20 0.1 none ${weight:+"$weight"} || fail "run $i: $run"
        same_results b$i.h5 r$i.h5 || fail "run $i: $run: the broadcast differs from the repeated reference"
    done
    # a batch axis of the reference's own meets one of the stack's: each row
    # of it against the same row of every frame
    fftshard 3 -q --axes=-1 --real --phase-correlate s.h5:/ref s.h5:/b rows.h5
    fftshard 3 -q --axes=-1 --real --phase-correlate s.h5:/a s.h5:/b rows-a.h5
    same_results rows.h5 rows-a.h5 || fail "--axes=-1: the broadcast differs from the repeated reference"
    # the result is the stack's: its input, the reference the second
    python_serial -c 'import h5py; a = h5py.File("b1.h5", "r")["phase_correlation"].attrs
assert (a["input"], a["second_input"]) == ("s.h5:/b", "s.h5:/ref"), dict(a)
assert "weights" not in a' || fail "the broadcast result's inputs"
    python_serial -c 'import h5py; a = h5py.File("b3.h5", "r")["phase_correlation"].attrs
assert a["weights"] == "gaussian:1", dict(a)' || fail "the broadcast result's weights"
    # only the first INPUT may be the smaller; shapes that do not broadcast
    run --separate-stderr fftshard 2 --axes=-1 --phase-correlate s.h5:/b s.h5:/ref o.h5
    assert_error "$EXIT_USAGE" "--phase-correlate: the first INPUT (6x64x48) must have the second's shape (64x48) or its last axes"
    run --separate-stderr fftshard 2 --axes=-2,-1 --phase-correlate p.h5:/ref s.h5:/b o.h5
    assert_error "$EXIT_USAGE" "must have the second's shape (6x64x48) or its last axes"
    run --separate-stderr fftshard 2 --axes=0,2 --phase-correlate s.h5:/ref s.h5:/b o.h5
    assert_error "$EXIT_USAGE" "--axes: axis 0 is one of the 1 first axes of the last INPUT, which the first (broadcast over them) has not"
    run --separate-stderr fftshard 2 --axes=1,2 --decomp=pencil --phase-correlate s.h5:/ref s.h5:/b o.h5
    assert_error "$EXIT_USAGE" "--decomp=pencil: pencils split two axes in every stage"
    run --separate-stderr fftshard 2 --axes=-2,-1 --convolve s.h5:/ref s.h5:/b o.h5
    assert_error "$EXIT_USAGE" "--convolve: the two INPUTs must have one shape"
    [ ! -e o.h5 ]
}
