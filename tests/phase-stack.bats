#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# --phase-correlate on a drifting stack at full size (make check-long): 64
# frames of 512x512, each the centre of a larger smooth random scene moved
# by a known shift of up to 150 px with a sub-pixel part, plus noise; with
# a Hann window and --upsample=20 every frame's shift is within 0.1 px of
# the truth and equal to tests/phase_oracle.py's numpy registration
# (Guizar-Sicairos et al.'s upsampled DFT from its definition): the
# reference repeated over the stack, and the reference once, broadcast
# over the frames, with --apply's weights on the cross-power spectrum.

load helpers

@test "64 frames of 512x512, shifts up to 150 px: every shift within 0.1 px with --window=hann --upsample=20, the reference repeated, and broadcast with --apply weights, 2 ranks" {
    python_serial "$srcdir/tests/phase_oracle.py" make big.h5 64x512x512 1,2 7 150 0.05 crop
    fftshard 2 -q --axes=1,2 --real --window=hann --upsample=20 --phase-correlate --report=r.json \
        big.h5:/a big.h5:/b o.h5
    run python_serial "$srcdir/tests/phase_oracle.py" check big.h5 o.h5 r.json 1,2 20 0.1 hann
    echo "$output"
    assert_success
    # the 512x512 reference broadcast over the 64 frames, weighted: a
    # Gaussian times a band-pass's high side on R / |R|
    fftshard 2 -q --axes=1,2 --real --window=hann --upsample=20 \
        --apply=gaussian:1,highpass:0.02:1 --phase-correlate --report=rb.json \
        big.h5:/ref big.h5:/b ob.h5
    run python_serial "$srcdir/tests/phase_oracle.py" check big.h5 ob.h5 rb.json 1,2 20 0.1 hann \
        gaussian:1,highpass:0.02:1
    echo "$output"
    assert_success
}
