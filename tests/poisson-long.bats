#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# --apply=poisson with --boundary, the longer checks (make check-long):
# manufactured solutions with Dirichlet, Neumann and mixed walls converge
# at the documented second order (periodic spectrally); a Gaussian charge
# in free space matches its analytic potential to second order; the dry
# run's memory of a free-space solve is within 10 % of the measured peak;
# fftshard-mkdata's --charge solved in free space gives its --potential.
# tests/poisson.bats holds the quick checks against scipy.

load helpers

# order B SHAPE...: fftshard's Poisson solve of the manufactured solution
# on each SHAPE (box 2,2,1), printing the relative error of each.
errors() {
    local b=$1 s
    shift
    for s in "$@"; do
        python_serial "$srcdir/tests/poisson_oracle.py" manufactured "m$s.h5" "$s" "$b" 2,2,1
        fftshard 2 -q --force --box-size=2,2,1 --apply=poisson --boundary="$b" "m$s.h5:/f" "p$s.h5:/phi"
        python_serial "$srcdir/tests/poisson_oracle.py" error "p$s.h5:/phi" "m$s.h5:/phi"
    done
}

# Second order from the middle grid to the finest: error ratios past 2^1.8
# (the asymptotic order 2; measured 1.86 to 1.96 there, rising from the
# coarser step), and the coarse error itself small (a wrong k would not
# converge at all).
second_order() {
    local e
    e=$(errors "$@")
    echo "$1: $e"
    python_serial -c 'import sys, math
e = [float(v) for v in sys.argv[1:]]
orders = [math.log2(e[i] / e[i + 1]) for i in range(len(e) - 1)]
print("orders", orders)
sys.exit(0 if orders[-1] > 1.8 and orders[-1] >= orders[0] - 0.02 and e[0] < 0.05 else 1)' $e
}

@test "manufactured solutions converge at second order: dirichlet, neumann, mixed; periodic spectrally" {
    run second_order dirichlet 16x16x8 32x32x16 64x64x32
    echo "$output"
    assert_success
    run second_order neumann 16x16x8 32x32x16 64x64x32
    echo "$output"
    assert_success
    run second_order dirichlet,neumann,periodic 16x16x8 32x32x16 64x64x32
    echo "$output"
    assert_success
    # the periodic factor alone is exp(sin): the error falls to rounding
    run errors periodic 32x32x16
    echo "$output"
    assert_success
    python_serial -c 'import sys; sys.exit(0 if float(sys.argv[1]) < 1e-8 else 1)' "$output"
}


@test "free space: a Gaussian charge's potential is -erf(r / (sqrt 2 sigma)) / (4 pi r) to second order" {
    local n e=()
    for n in 16 32 64; do
        python_serial "$srcdir/tests/poisson_oracle.py" gaussian "g$n.h5" "$n" 0.08
        fftshard 2 -q --box-size=1 --apply=poisson --boundary=free "g$n.h5:/rho" "p$n.h5:/phi"
        e+=("$(python_serial "$srcdir/tests/poisson_oracle.py" error "p$n.h5:/phi" "g$n.h5:/phi")")
    done
    echo "errors ${e[*]}"
    # measured 1.61e-2, 5.11e-3, 1.36e-3 (max error over max |phi|)
    python_serial -c 'import sys, math
e = [float(v) for v in sys.argv[1:]]
sys.exit(0 if e[1] < 6e-3 and e[2] < 1.6e-3 and math.log2(e[1] / e[2]) > 1.8 else 1)' "${e[@]}"
}

@test "free space: the dry run counts the doubled domain and the Green's function, within 10 % of the peak" {
    mkdata 2 -q -t float64 96x96x96 m.h5
    local r est peak
    for r in "" --real; do
        run --separate-stderr fftshard 2 --dry-run $r --apply=poisson --boundary=free m.h5
        assert_success
        assert_line --partial "zero padding: the input read into the first elements of 192x192x192"
        assert_line --regexp "Green's function [0-9.]+ MiB = about"
        est=$(sed -n 's/^memory per rank.*about \([0-9.]*\) MiB$/\1/p' <<<"$output")
        run --separate-stderr fftshard 2 --force $r --apply=poisson --boundary=free m.h5 o.h5
        assert_success
        peak=$(sed -n 's/.*peak memory \([0-9.]*\) MiB per rank.*/\1/p' <<<"$stderr")
        echo "$r: dry run $est MiB, peak $peak MiB"
        python_serial -c 'import sys; e, p = map(float, sys.argv[1:]); sys.exit(0 if abs(e - p) <= 0.1 * p else 1)' "$est" "$peak"
    done
}


@test "fftshard-mkdata --charge and --potential: free space takes the one to the other, 1-D and 3-D" {
    mkdata 2 -q -t float64 --charge=0.08 --box-size=1 64x64x64 c3.h5
    mkdata 3 -q -t float64 --potential=0.08 --box-size=1 64x64x64 p3.h5
    mkdata 2 -q -t float64 --charge=2 100 c1.h5
    mkdata 1 -q -t float64 --potential=2 100 p1.h5
    # the box length comes from the charge's box_size attribute
    fftshard 2 -q --apply=poisson --boundary=free c3.h5 s3.h5
    fftshard 2 -q --apply=poisson --boundary=free c1.h5 s1.h5
    run python_serial - <<'EOF2'
import h5py, numpy as np
from scipy.special import erf
x = (np.arange(64) + 0.5) / 64 - 0.5
X, Y, Z = np.meshgrid(x, x, x, indexing="ij")
r = np.sqrt(X * X + Y * Y + Z * Z)
s = 0.08
rho = np.exp(-r * r / (2 * s * s)) / ((2 * np.pi) ** 1.5 * s ** 3)
phi = -erf(r / (np.sqrt(2) * s)) / (4 * np.pi * r)
rel = lambda a, b: np.abs(a - b).max() / np.abs(b).max()
d = lambda n: h5py.File(n)["data"][()]
print("charge", rel(d("c3.h5"), rho), "potential", rel(d("p3.h5"), phi))
print("solve 3-D", rel(d("s3.h5"), phi), "1-D", rel(d("s1.h5"), d("p1.h5")))
assert rel(d("c3.h5"), rho) < 1e-14 and rel(d("p3.h5"), phi) < 1e-14
# measured 1.36e-3 (64^3, sigma 0.08) and 3.2e-4 (100 points, sigma 2)
assert rel(d("s3.h5"), phi) < 1.6e-3 and rel(d("s1.h5"), d("p1.h5")) < 4e-4
EOF2
    echo "$output"
    assert_success
    run --separate-stderr mkdata 1 --charge=1 --waves=2 8x8 x.h5
    assert_equal "$status" "$EXIT_USAGE"
    [[ $stderr == "fftshard-mkdata: error: --charge and --waves: choose one"* ]]
    run --separate-stderr mkdata 1 --potential=1 8x8 x.h5
    assert_equal "$status" "$EXIT_USAGE"
    [[ $stderr == "fftshard-mkdata: error: --potential: a field of 1 or 3 axes (got 2)"* ]]
    [ ! -e x.h5 ]
}
