#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# --apply at its edges, in make check (apply.bats, in make check-long, runs
# the matrices): filters whose direct formula overflows take their limits 0
# or 1, a transfer table whose neighbouring values differ by more than a
# double holds, and a cut at exactly a mode's |k| on the ranks' path inside
# the last FFT pass, each against tests/apply_oracle.py's numpy of the
# documented formulas; box lengths that put k^2 out of double's range and
# factors past the precision's largest number refused (status 2) before
# any work.

load helpers

# applied CASE...: the oracle's check of each case.
applied() {
    python_serial "$srcdir/tests/apply_oracle.py" check "$@"
}

# Factors whose direct formula was inf / inf or sin(inf) (NaN everywhere,
# status 0): (|k|/K)^128 past 254^128, K = 1e-100, k R = inf.
ONES="tophat:1e-300,gaussian:1e-300,lowpass:1e300:64,sharpk:1e300,highpass:1e-100:64,highpass:0.01:64"
ZEROS="tophat:1e308,gaussian:1e200,lowpass:1e-100:64"

@test "filters at parameters whose formula overflows give their limits, double and single, 1 to 3 ranks" {
    oracle make r.h5 10x7x6:float64 -- c.h5 9x6x5:complex128 -- f.h5 9x6x5:float32
    fftshard 2 -q --real --apply="$ONES" r.h5 o1.h5
    fftshard 1 -q --apply="$ZEROS" c.h5 o2.h5
    fftshard 3 -q --real --apply="$ZEROS" f.h5 o3.h5
    fftshard 2 -q --apply="$ONES" f.h5 o4.h5
    # near the edges of the range, still held: k_a up to 2.5e301, 1/k^2 up
    # to 2.5e298
    fftshard 2 -q --real --box-size=1e-300 --apply=deriv:0 r.h5 o5.h5
    fftshard 3 -q --box-size=1e150 --apply=poisson c.h5 o6.h5
    run applied "in=r.h5 out=o1.h5 apply=$ONES" "in=c.h5 out=o2.h5 apply=$ZEROS" \
        "in=f.h5 out=o3.h5 apply=$ZEROS" "in=f.h5 out=o4.h5 apply=$ONES" \
        "in=r.h5 out=o5.h5 box=1e-300 apply=deriv:0" "in=c.h5 out=o6.h5 box=1e150 apply=poisson"
    echo "$output"
    assert_success
}

@test "a transfer table whose neighbouring values differ by more than a double holds: interpolated without NaN" {
    oracle make one.h5 8:float64
    # k = 2 pi / 8 falls on a row, next to one 1.8e308 above it: the
    # difference overflows, w = 0 times it was NaN
    python_serial -c 'import numpy as np
k1 = 2 * np.pi * 1 / 8
np.savetxt("big.txt", [[0, 0], [k1, -1e307], [1.5 * k1, 1.79e308], [1.75 * k1, 0], [10, 0]],
           fmt="%.17g")'
    fftshard 2 -q --real --apply=transfer:big.txt one.h5 o.h5
    run applied "in=one.h5 out=o.h5 apply=transfer:big.txt"
    echo "$output"
    assert_success
}

@test "sharpk at exactly a mode's |k| keeps the modes numpy keeps inside the last FFT pass (2 and 3 ranks)" {
    oracle make e.h5 10x8x6:float64 -- o.h5 9x7x5:complex128
    local at below at2 below2
    read -r at below < <(python_serial "$srcdir/tests/apply_oracle.py" cut 10x8x6)
    read -r at2 below2 < <(python_serial "$srcdir/tests/apply_oracle.py" cut 9x7x5)
    fftshard 2 -q --real --apply=sharpk:"$at" e.h5 a.h5
    fftshard 3 -q --apply=sharpk:"$below2" o.h5 b.h5
    run applied "in=e.h5 out=a.h5 apply=sharpk:$at" "in=o.h5 out=b.h5 apply=sharpk:$below2"
    echo "$output"
    assert_success
}

@test "k^2 out of double's range, factors past the precision's largest number: status 2 before any work" {
    oracle make r.h5 8x6x4:float64 -- f.h5 8x6x4:float32
    python_serial -c 'import numpy as np
np.savetxt("big.txt", [[0, 1.79e308], [10, 1]])'
    # each was run with status 0: NaN everywhere, or (sharpk) k^2 of inf or
    # 0 dropping every mode below K or keeping every one above it
    local bad
    for bad in "--box-size=1e-160 --apply=laplacian r.h5" "--box-size=1e160 --apply=poisson r.h5" \
        "--box-size=1e165 --apply=sharpk:1e-170 r.h5" "--box-size=1e-160 --apply=sharpk:1e300 r.h5" \
        "--box-size=1e-160 --apply=deriv:0,deriv:0 r.h5" "--box-size=1e-20 --apply=laplacian f.h5" \
        "--apply=transfer:big.txt f.h5" "--precision=single --box-size=1e-20 --apply=laplacian r.h5"; do
        run --separate-stderr fftshard 2 -q $bad o.h5
        echo "$bad: $stderr"
        assert_error "$EXIT_USAGE" "--apply: "
        [ ! -e o.h5 ]
    done
    run --separate-stderr fftshard 2 --box-size=1e-160 --apply=laplacian r.h5 o.h5
    assert_error "$EXIT_USAGE" "largest k^2 overflows" "--box-size"
    run --separate-stderr fftshard 2 --box-size=1e160 --apply=poisson r.h5 o.h5
    assert_error "$EXIT_USAGE" "smallest nonzero k^2" "--box-size"
    run --separate-stderr fftshard 2 --box-size=1e-20 --apply=laplacian f.h5 o.h5
    assert_error "$EXIT_USAGE" "single precision's largest number"
    assert_no_temporaries
}

@test "--k-units=cycles: cutoffs in cycles per sample as numpy's fftfreq gives them, or per unit of --box-size" {
    python_serial -c "
import h5py, numpy as np
h5py.File('img.h5', 'w')['img'] = np.random.default_rng(5).integers(0, 4000, (64, 48)).astype(np.uint16)"
    fftshard 3 -q --real --k-units=cycles --apply=lowpass:0.1:4 img.h5 low.h5
    fftshard 2 -q --real --apply=sharpk:0.05 --k-units=cycles --box-size=128,96 img.h5 cut.h5
    run python_serial -c "
import h5py, numpy as np
x = h5py.File('img.h5')['img'][()].astype(np.float64)
f = np.sqrt(np.fft.fftfreq(64)[:, None] ** 2 + np.fft.fftfreq(48)[None, :] ** 2)  # cycles per sample
low = np.fft.ifft2(np.fft.fft2(x) / (1 + (f / 0.1) ** 8)).real
g = np.sqrt(np.fft.fftfreq(64, 2.0)[:, None] ** 2 + np.fft.fftfreq(48, 2.0)[None, :] ** 2)  # per unit
cut = np.fft.ifft2(np.fft.fft2(x) * (g <= 0.05)).real
a = h5py.File('low.h5')['img'][()]; b = h5py.File('cut.h5')['img'][()]
print(a.dtype, np.abs(a - low).max() / np.abs(low).max() < 1e-5, np.abs(b - cut).max() / np.abs(cut).max() < 1e-5)"
    assert_success
    assert_output "float32 True True"
    run --separate-stderr fftshard 2 --k-units=cycles img.h5 o.h5
    assert_error "$EXIT_USAGE" "--k-units: only with --apply"
    run --separate-stderr fftshard 2 --k-units=hertz --apply=sharpk:1 img.h5 o.h5
    assert_error "$EXIT_USAGE" "--k-units"
}

@test "a subnormal R or K is positive and finite: taken, the filters at their limits; 0, underflow and overflow refused saying which" {
    oracle make c.h5 9x6x5:complex128 -- r.h5 10x7x6:float64
    # strtod reports ERANGE for a subnormal result: 5e-324 was refused as
    # "expected a positive number"
    local SUB="highpass:5e-324,lowpass:5e-324:64,gaussian:5e-324,tophat:2e-320,sharpk:5e-324"
    fftshard 2 -q --apply="$SUB" c.h5 o1.h5
    fftshard 3 -q --real --apply=highpass:5e-324:64 r.h5 o2.h5
    run applied "in=c.h5 out=o1.h5 apply=$SUB" "in=r.h5 out=o2.h5 apply=highpass:5e-324:64"
    echo "$output"
    assert_success
    run --separate-stderr fftshard 2 --apply=highpass:1e-400 c.h5 o.h5
    assert_error "$EXIT_USAGE" "--apply: 'highpass:1e-400'" "underflows to 0"
    run --separate-stderr fftshard 2 --apply=gaussian:1e400 c.h5 o.h5
    assert_error "$EXIT_USAGE" "--apply: 'gaussian:1e400'" "not finite"
    run --separate-stderr fftshard 2 --apply=tophat:inf c.h5 o.h5
    assert_error "$EXIT_USAGE" "--apply: 'tophat:inf'" "not finite"
    run --separate-stderr fftshard 2 --apply=sharpk:0 c.h5 o.h5
    assert_error "$EXIT_USAGE" "--apply: 'sharpk:0'" "expected a positive number"
    run --separate-stderr fftshard 2 --apply=lowpass:-1 c.h5 o.h5
    assert_error "$EXIT_USAGE" "--apply: 'lowpass:-1'" "expected a positive number"
    [ ! -e o.h5 ]
}

@test "tophat: H to 1e-14 of the exact 3 (sin x - x cos x) / x^3 at every x = k R, where the formula cancels (x from 0.01 to 0.5) too" {
    # a delta: the result's transform is H itself; the exact value from
    # mpmath at 40 digits. The formula lost 6e-16 / x^2 relative (1.2e-12
    # at x = 0.02), past the series' x = 0.01.
    python_serial -c 'import h5py, numpy as np
d = np.zeros(256); d[0] = 1
h5py.File("d.h5", "w")["x"] = d'
    fftshard 1 -q --real --apply=tophat:0.05 d.h5 a.h5
    fftshard 2 -q --real --apply=tophat:0.4 d.h5 b.h5
    run python_serial -c 'import h5py, numpy as np, mpmath as mp
mp.mp.dps = 40
worst = 0
for f, R in (("a.h5", 0.05), ("b.h5", 0.4)):
    H = np.fft.rfft(h5py.File(f)["x"][()])
    x = [mp.mpf(2) * mp.pi * j / 256 * mp.mpf(R) for j in range(129)]
    exact = np.array([1.0] + [float(3 * (mp.sin(v) - v * mp.cos(v)) / v ** 3) for v in x[1:]])
    worst = max(worst, np.abs(H - exact).max())
print(worst < 1e-14, "%.2g" % worst)'
    echo "$output"
    assert_success
    [[ $output == True* ]]
}
