#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Data that is not periodic (fftshard(1), NON-PERIODIC DATA), the quick part
# (tests/padding.bats runs the matrix of ranks, strategies and
# decompositions): --pad against numpy.fft.fftn(a, s) and rfftn, --window
# against scipy.signal.windows, windowed and padded spectra against
# tests/spectrum_oracle.py's numpy definition scaled as the man page says,
# --mode against scipy.signal.fftconvolve and correlate, --apply on a padded
# domain, --check, --inverse and the dry run of them, and the refusals; every
# number from tests/window_oracle.py (numpy and scipy), never from fftshard.

load helpers

# windowed CHECK CASE...: window_oracle.py's check of each case.
windowed() {
    python_serial "$srcdir/tests/window_oracle.py" "$@"
}

# bats test_tags=quick
@test "--pad: numpy.fft.fftn(a, s) and rfftn, padded and cut, odd and even, batch axes, 1-D, slab and pencil, 1 to 4 ranks" {
    oracle make a.h5 /c=6x5x7:complex128 /r=6x5x7:float64 /f=7x4x6:float32 /one=30:float64
    fftshard 1 -q --pad=8,9,11 a.h5:/c o1.h5
    fftshard 4 -q --decomp=pencil --pad=9,2x,4 a.h5:/c o2.h5
    fftshard 2 -q --real --pad=2x a.h5:/r o3.h5
    fftshard 3 -q --real --pad=4,9,5 a.h5:/r o4.h5
    fftshard 2 -q --axes=2,0 --pad=12,3 a.h5:/r o5.h5
    fftshard 3 -q --real --axes=1,2 --pad=3x a.h5:/f o6.h5
    fftshard 3 -q --pad=64 a.h5:/one o7.h5
    run windowed check "in=a.h5:/c out=o1.h5 pad=8,9,11" "in=a.h5:/c out=o2.h5 pad=9,2x,4" \
        "in=a.h5:/r out=o3.h5 pad=2x real" "in=a.h5:/r out=o4.h5 pad=4,9,5 real" \
        "in=a.h5:/r out=o5.h5 pad=12,3 axes=2,0" "in=a.h5:/f out=o6.h5 pad=3x axes=1,2 real" \
        "in=a.h5:/one out=o7.h5 pad=64"
    echo "$output"
    assert_success
}

# bats test_tags=quick
@test "--window: scipy.signal.windows, each kind, one for all and one per axis, periodic and symmetric, with --pad, --real, single precision" {
    oracle make a.h5 /c=6x5x7:complex128 /r=8x6x9:float64 /f=7x4x6:float32 /one=31:float64
    fftshard 3 -q --window=hamming,blackman,tukey a.h5:/c o1.h5
    fftshard 1 -q --real --window=kaiser:8.6 --window-symmetric a.h5:/r o2.h5
    fftshard 4 -q --real --decomp=pencil --window=tukey:0.3,none,hann --pad=2x a.h5:/r o3.h5
    fftshard 2 -q --real --window=hann a.h5:/f o4.h5
    fftshard 3 -q --window=hann --pad=40 a.h5:/one o5.h5
    run windowed check "in=a.h5:/c out=o1.h5 window=hamming,blackman,tukey" \
        "in=a.h5:/r out=o2.h5 window=kaiser:8.6 sym real" \
        "in=a.h5:/r out=o3.h5 window=tukey:0.3,none,hann pad=2x real" \
        "in=a.h5:/f out=o4.h5 window=hann real" "in=a.h5:/one out=o5.h5 window=hann pad=40"
    echo "$output"
    assert_success
}

@test "windowed and padded spectra: the numpy definition of the windowed, padded field over mean(w^2); --box-size keeps the input's spacing" {
    oracle make a.h5 /r=12x10x9:float64 /c=8x9x6:complex128
    local cases=() i=0 args toks
    for args in "window=blackman,none,tukey:0.4 pad=2x" "window=kaiser:6 pad=16,15,12 box=100" \
        "window=hamming sym axes=1,2 pad=14,3x"; do
        # the run's options; the spectrum oracle's tokens (its own window=
        # is --compensate's, its box the prepared one)
        local opts=() keep="" tok
        for tok in $args; do
            case $tok in
            window=*) opts+=(--window="${tok#window=}") ;;
            pad=*) opts+=(--pad="${tok#pad=}") ;;
            box=*) opts+=(--box-size="${tok#box=}") ;;
            axes=*) opts+=(--axes="${tok#axes=}") keep="$keep $tok" ;;
            sym) opts+=(--window-symmetric) ;;
            esac
        done
        fftshard $((1 + i % 3)) -q --real --power-spectrum "${opts[@]}" a.h5:/r s$i.h5
        toks=$(windowed prepare a.h5:/r p$i.h5:/x $args)
        cases+=("in=p$i.h5:/x out=s$i.h5$keep $toks")
        i=$((i + 1))
    done
    fftshard 2 -q --decomp=pencil --spectrum-only --window=hann --pad=2x a.h5:/c s$i.h5
    toks=$(windowed prepare a.h5:/c p$i.h5:/x window=hann pad=2x)
    cases+=("in=p$i.h5:/x out=s$i.h5 only $toks")
    run python_serial "$srcdir/tests/spectrum_oracle.py" check "${cases[@]}"
    echo "$output"
    assert_success
    # per mode, scipy.signal.periodogram's two-sided density (the shells
    # average +f and -f)
    oracle make one.h5 /x=40:float64
    fftshard 2 -q --power-spectrum --window=hann --pad=64 --box-size=10 one.h5 sp.h5
    run python_serial -c 'import h5py, numpy as np, scipy.signal as s
x = h5py.File("one.h5")["x"][()]
f, P = s.periodogram(x, fs=40 / 10, window="hann", nfft=64, detrend=False,
                     return_onesided=False, scaling="density")
g = h5py.File("sp.h5")["power_spectrum"]
i = np.abs(np.rint(np.fft.fftfreq(64, 1 / 64)))
ref = np.array([P[i == j].mean() for j in range(len(g["power"]))])
print(np.abs(g["power"][()] / ref - 1).max() < 1e-12)'
    assert_output True
    # the group records the window's power in its factor
    run python_serial -c 'import h5py
from scipy.signal import windows as w
f = h5py.File("s0.h5")["power_spectrum"].attrs
print(abs(f["power_factor"] * (w.blackman(12, sym=False)**2).mean()
          * (w.tukey(9, 0.4, sym=False)**2).mean() - 1) < 1e-12)'
    assert_output True
}

@test "--mode=full, same, valid: scipy.signal.fftconvolve and correlate, shapes that differ, real and complex, batch axes, 1-D" {
    oracle make a.h5 /a=9x7x6:float64 /b=4x5x3:float64 /ca=9x8:complex128 /cb=5x3:complex128 \
        /a1=40:float64 /b1=13:float64 /ba=3x9x8:float64 /bb=3x4x5:float64
    fftshard 2 -q --convolve --mode=full a.h5:/a a.h5:/b o1.h5
    fftshard 3 -q --real --correlate --mode=valid a.h5:/b a.h5:/a o2.h5
    fftshard 1 -q --correlate --mode=same a.h5:/ca a.h5:/cb o3.h5
    fftshard 3 -q --convolve --mode=same a.h5:/a1 a.h5:/b1 o4.h5
    fftshard 2 -q --axes=1,2 --real --correlate --mode=full a.h5:/ba a.h5:/bb o5.h5
    fftshard 4 -q --decomp=pencil --convolve --mode=valid a.h5:/a a.h5:/b o6.h5:/grp/conv
    run windowed linear "op=convolve mode=full a=a.h5:/a b=a.h5:/b out=o1.h5" \
        "op=correlate mode=valid a=a.h5:/b b=a.h5:/a out=o2.h5" \
        "op=correlate mode=same a=a.h5:/ca b=a.h5:/cb out=o3.h5" \
        "op=convolve mode=same a=a.h5:/a1 b=a.h5:/b1 out=o4.h5" \
        "op=correlate mode=full a=a.h5:/ba b=a.h5:/bb out=o5.h5 axes=1,2" \
        "op=convolve mode=valid a=a.h5:/a b=a.h5:/b out=o6.h5:/grp/conv"
    echo "$output"
    assert_success
}

@test "--apply on the padded domain: the operator of the padded field, its part of the input's shape written" {
    oracle make a.h5 /r=6x5x7:float64 /one=33:float64
    fftshard 3 -q --pad=2x --apply=gaussian:1.5 --box-size=30,20,10 a.h5:/r o1.h5
    fftshard 1 -q --real --pad=12,9,16 --apply=laplacian a.h5:/r o2.h5
    fftshard 2 -q --pad=64 --apply=deriv:0 a.h5:/one o3.h5
    run windowed apply "in=a.h5:/r out=o1.h5 pad=2x apply=gaussian:1.5 box=30,20,10" \
        "in=a.h5:/r out=o2.h5 pad=12,9,16 apply=laplacian" "in=a.h5:/one out=o3.h5 pad=64 apply=deriv:0"
    echo "$output"
    assert_success
}

@test "--check of padded and windowed transforms; --inverse gives the windowed padded field and says so" {
    oracle make a.h5 /c=6x5x7:complex128 /r=6x5x7:float64
    fftshard 1 -q --check --pad=2x --window=hann a.h5:/c o1.h5
    fftshard 3 -q --check --real --pad=9,7,12 --window=tukey a.h5:/r o2.h5
    fftshard 4 -q --check --decomp=pencil --pad=2x --window=blackman a.h5:/c o3.h5
    run --separate-stderr fftshard 2 --inverse o1.h5 back.h5
    assert_success
    [[ $stderr == *"warning: --inverse: the forward run windowed its input (window hann,hann,hann): the inverse gives the windowed field"* ]] ||
        fail "$stderr"
    run python_serial -c 'import h5py, numpy as np
from scipy.signal import windows as w
a = h5py.File("a.h5")["c"][()]
y = h5py.File("back.h5")["c"]
ref = np.zeros((12, 10, 14), complex)
ref[:6, :5, :7] = a * np.multiply.outer(np.multiply.outer(w.hann(6, sym=False), w.hann(5, sym=False)), w.hann(7, sym=False))
print(y.shape, np.abs(y[()] - ref).max() < 1e-13, y.attrs["window"], y.attrs["window_form"], list(y.attrs["input_shape"]))'
    assert_output "(12, 10, 14) True hann,hann,hann periodic [12, 10, 14]"
}

@test "the dry run plans the padded domain and says so, in text and JSON" {
    run --separate-stderr fftshard 1 --dry-run --shape=64x48x30 --dtype=float64 --ranks=4 --real \
        --pad=2x --window=hann
    assert_success
    assert_line --index 0 "fftshard dry run: 64x48x30 float64 on 4 ranks: r2c, double precision, forward"
    assert_line --index 1 "zero padding: the input read into the first elements of 128x96x60"
    assert_line --index 2 "window: hann,hann,hann (periodic), as the input is read"
    assert_line --partial "stage 0: axis 0 over 4; local blocks 32x96x31 to 32x96x31"
    run --separate-stderr fftshard 1 --dry-run --report=- --shape=64x48x30 --dtype=float64 \
        --ranks=4 --pad=100,2x,7 --window=hann,none,kaiser:2
    assert_success
    run python_serial -c 'import json, sys
d = json.loads(sys.argv[1])
print(d["shape"], d["padded_shape"], d["window"])' "$output"
    assert_output "[64, 48, 30] [100, 96, 7] hann,none,kaiser:2"
    run --separate-stderr fftshard 1 --dry-run --report=- --shape=8x8 --ranks=2
    run python_serial -c 'import json, sys
d = json.loads(sys.argv[1])
print(d["padded_shape"], d["window"])' "$output"
    assert_output "None None"
}

@test "refusals: one line, status 2, nothing written" {
    oracle make a.h5 /r=8x6x4:float64 /b=8x6x5:float64 /c=3x7x4:float64 /one=10:float64
    local bad
    for bad in "--pad=0 a.h5:/r" "--pad=2y a.h5:/r" "--pad=4,4 a.h5:/r" "--pad=, a.h5:/r" \
        "--pad=2048x a.h5:/r" "--window=hanning a.h5:/r" "--window=kaiser a.h5:/r" \
        "--window=tukey:2 a.h5:/r" "--window=hann:1 a.h5:/r" "--window=hann,hann a.h5:/r" \
        "--window-symmetric a.h5:/r" "--inverse --pad=2x a.h5:/r" "--inverse --window=hann a.h5:/r" \
        "--window=hann --correlation-function a.h5:/r" "--pad=2x --vector a.h5:/r a.h5:/r a.h5:/r" \
        "--window=hann --apply=gaussian:1 a.h5:/r" "--pad=2x --convolve a.h5:/r a.h5:/r" \
        "--mode=full a.h5:/r" "--mode=same --phase-correlate a.h5:/r a.h5:/r" "--mode=round a.h5:/r" \
        "--convolve --mode=valid a.h5:/r a.h5:/c" "--axes=1,2 --convolve --mode=full a.h5:/r a.h5:/c" \
        "--convolve --mode=full a.h5:/r a.h5:/one" "--pad=1000000,1000000,1000000 a.h5:/r"; do
        run --separate-stderr fftshard 1 $bad o.h5
        assert_error "$EXIT_USAGE"
        [ ! -e o.h5 ] || fail "$bad: wrote o.h5"
    done
    run --separate-stderr fftshard 3 --pad=4,4 a.h5:/r o.h5
    assert_error "$EXIT_USAGE" "--pad: 2 given for 3 transformed axes"
    run --separate-stderr fftshard 2 --convolve --mode=valid a.h5:/r a.h5:/c o.h5
    assert_error "$EXIT_USAGE" "--convolve --mode=valid: one INPUT must be at least as large as the other"
    run --separate-stderr fftshard 2 --window=hann --correlation-function a.h5:/r o.h5
    assert_error "$EXIT_USAGE" "--window: not with --correlation-function"
    assert_no_temporaries
}
