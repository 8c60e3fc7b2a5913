#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# --apply with --boundary: Dirichlet walls (the sine transform DST-II),
# Neumann walls (the cosine transform DCT-II) and periodic axes, one for all
# or one per transformed axis; free space (the doubled domain, Hockney and
# Eastwood). Every result equals tests/poisson_oracle.py's scipy.fft solve
# of the documented definition, or for free space its direct sum over the
# grid (1e-12 relative in double, 1e-5 in single), in 1-D to 3-D, odd and
# even sizes, real and complex input, --real, batch axes, box lengths, 1 to
# 4 ranks, slabs and pencils; the output records the boundaries; refusals
# come before any work. tests/poisson-long.bats: the orders of convergence,
# the Gaussian charge, the dry run's memory against the peak.

load helpers

# solved CASE...: the oracle's check of each case.
solved() {
    python_serial "$srcdir/tests/poisson_oracle.py" check "$@"
}

@test "dirichlet, neumann and mixed walls equal a scipy.fft dstn/dctn solve, 1 to 4 ranks, slabs and pencils" {
    python_serial - <<'EOF'
import h5py, numpy as np
rng = np.random.default_rng(7)
with h5py.File("a.h5", "w") as f:
    f["e"] = rng.standard_normal((8, 6, 4))
    f["o"] = rng.standard_normal((9, 7, 5))
    f["s"] = rng.standard_normal((9, 8, 6)).astype(np.float32)
    f["c"] = rng.standard_normal((6, 5, 7)) + 1j * rng.standard_normal((6, 5, 7))
    f["one"] = rng.standard_normal(33)
    f["two"] = rng.standard_normal((10, 9))
EOF
    fftshard 1 -q --apply=poisson --boundary=dirichlet a.h5:/e o1.h5
    fftshard 2 -q --apply=poisson --boundary=neumann a.h5:/o o2.h5
    fftshard 4 -q --decomp=pencil --apply=poisson --boundary=neumann,dirichlet,periodic a.h5:/o o3.h5
    fftshard 2 -q --real --apply=poisson --boundary=dirichlet,periodic,neumann a.h5:/e o4.h5
    fftshard 3 -q --apply=poisson --boundary=dirichlet a.h5:/s o5.h5
    fftshard 2 -q --apply=poisson --boundary=dirichlet,neumann,periodic a.h5:/c o6.h5
    fftshard 2 -q --apply=poisson --boundary=dirichlet a.h5:/one o7.h5
    fftshard 3 -q --apply=poisson --boundary=neumann a.h5:/two o8.h5
    fftshard 2 -q --box-size=3,5 --axes=2,0 --apply=gaussian:1.5,laplacian --boundary=neumann,dirichlet a.h5:/o o9.h5
    fftshard 2 -q --box-size=2,3,4 --apply=lowpass:2,poisson --boundary=neumann,neumann,dirichlet a.h5:/e o10.h5
    run solved "in=a.h5:/e out=o1.h5 apply=poisson boundary=dirichlet" \
        "in=a.h5:/o out=o2.h5 apply=poisson boundary=neumann" \
        "in=a.h5:/o out=o3.h5 apply=poisson boundary=neumann,dirichlet,periodic" \
        "in=a.h5:/e out=o4.h5 apply=poisson boundary=dirichlet,periodic,neumann" \
        "in=a.h5:/s out=o5.h5 apply=poisson boundary=dirichlet" \
        "in=a.h5:/c out=o6.h5 apply=poisson boundary=dirichlet,neumann,periodic" \
        "in=a.h5:/one out=o7.h5 apply=poisson boundary=dirichlet" \
        "in=a.h5:/two out=o8.h5 apply=poisson boundary=neumann" \
        "in=a.h5:/o out=o9.h5 apply=gaussian:1.5,laplacian boundary=neumann,dirichlet axes=2,0 box=3,5" \
        "in=a.h5:/e out=o10.h5 apply=lowpass:2,poisson boundary=neumann,neumann,dirichlet box=2,3,4"
    echo "$output"
    assert_success
    # the oracle itself tells the kinds apart: a Neumann solve is no Dirichlet one
    run solved "in=a.h5:/o out=o2.h5 apply=poisson boundary=dirichlet"
    assert_failure
}

@test "the boundary attribute records each transformed axis's, none without walls; a result's is not copied" {
    oracle make a.h5 6x5x4:float64
    fftshard 2 -q --axes=2,0 --apply=poisson --boundary=dirichlet,neumann a.h5 o.h5
    fftshard 2 -q --apply=poisson --boundary=periodic a.h5 p.h5
    run python_serial -c 'import h5py
for n in ("o.h5", "p.h5"):
    with h5py.File(n) as f:
        d = f["data"]
        print(n, d.attrs.get("boundary"), d.attrs.get("axis_kinds"))'
    echo "$output"
    assert_line "o.h5 dirichlet,neumann dst2,dct2"
    assert_line "p.h5 None None"
    # a result taken as input: its boundary is the run's own, not copied; the
    # Laplacian with the same walls gives the field back (zero mean: Neumann)
    fftshard 2 -q --axes=2,0 --apply=laplacian --boundary=dirichlet,neumann o.h5 l.h5
    run solved "in=o.h5 out=l.h5 apply=laplacian boundary=dirichlet,neumann axes=2,0"
    echo "$output"
    assert_success
    fftshard 2 -q --axes=2,0 --apply=laplacian --boundary=neumann,neumann o.h5 m.h5
    run python_serial -c 'import h5py
print(h5py.File("m.h5")["data"].attrs["boundary"])'
    assert_output "neumann,neumann"
}

@test "refusals: deriv across a wall, --boundary without --apply or with --dct, --inverse, --real on walls alone, a wrong count or name" {
    oracle make a.h5 6x5x4:float64
    run --separate-stderr fftshard 2 --apply=deriv:1 --boundary=dirichlet a.h5 o.h5
    assert_error "$EXIT_USAGE" "deriv:1" "axis 1 has walls" "periodic axis only"
    run --separate-stderr fftshard 2 --boundary=neumann a.h5 o.h5
    assert_error "$EXIT_USAGE" "--boundary: only with --apply"
    run --separate-stderr fftshard 2 --apply=poisson --boundary=neumann --power-spectrum a.h5 o.h5
    assert_error "$EXIT_USAGE" "--boundary, --power-spectrum: --boundary is --apply's alone"
    oracle make ab.h5 /a=8x8:float64 /b=8x8:float64
    run --separate-stderr fftshard 2 --phase-correlate --apply=gaussian:1 --boundary=dirichlet ab.h5:/a ab.h5:/b o.h5
    assert_error "$EXIT_USAGE" "--boundary, --phase-correlate: --boundary is for --apply's own field"
    run --separate-stderr fftshard 2 --apply=poisson --boundary=neumann --dct=2 a.h5 o.h5
    assert_error "$EXIT_USAGE" "--boundary, --dct"
    run --separate-stderr fftshard 2 --apply=poisson --boundary=neumann --inverse a.h5 o.h5
    assert_error "$EXIT_USAGE" "--boundary, --inverse"
    run --separate-stderr fftshard 2 --apply=poisson --boundary=dirichlet --real a.h5 o.h5
    assert_error "$EXIT_USAGE" "--real" "cosine or sine axis"
    run --separate-stderr fftshard 2 --apply=poisson --boundary=dirichlet,neumann a.h5 o.h5
    assert_error "$EXIT_USAGE" "--boundary: 2 given for 3 transformed axes"
    run --separate-stderr fftshard 2 --apply=poisson --boundary=robin a.h5 o.h5
    assert_error "$EXIT_USAGE" "'robin'" "periodic, dirichlet, neumann or free"
    [ ! -e o.h5 ]
    # deriv along the periodic axis beside walls is defined
    fftshard 2 -q --apply=deriv:2 --boundary=dirichlet,neumann,periodic a.h5 d.h5
    run solved "in=a.h5 out=d.h5 apply=deriv:2 boundary=dirichlet,neumann,periodic"
    echo "$output"
    assert_success
}

@test "the dry run plans the sine and cosine axes of the walls" {
    run --separate-stderr fftshard 2 --dry-run --shape=64x48x32 --dtype=float64 --apply=poisson \
        --boundary=dirichlet,neumann,periodic
    echo "$output"
    assert_success
    assert_line --partial "kinds: axis 0 dst2, axis 1 dct2, axis 2 fft"
}

@test "free space equals the direct sum over the grid of G(x_i - x_j) f_j, 1-D to 3-D, 1 to 4 ranks, the 1-D four-step" {
    python_serial - <<'EOF2'
import h5py, numpy as np
rng = np.random.default_rng(11)
with h5py.File("a.h5", "w") as f:
    f["e"] = rng.standard_normal((8, 6, 4))
    f["o"] = rng.standard_normal((7, 5, 9))
    f["c"] = rng.standard_normal((6, 5, 7)) + 1j * rng.standard_normal((6, 5, 7))
    f["s"] = rng.standard_normal((9, 8, 6)).astype(np.float32)
    f["one"] = rng.standard_normal(33)
    f["two"] = rng.standard_normal((10, 9))
    f["long"] = rng.standard_normal(1500)
EOF2
    fftshard 1 -q --apply=poisson --boundary=free a.h5:/e f1.h5
    fftshard 2 -q --apply=poisson --boundary=free --box-size=3,2,5 a.h5:/o f2.h5
    fftshard 3 -q --real --apply=poisson --boundary=free a.h5:/o f3.h5
    fftshard 4 -q --decomp=pencil --apply=poisson --boundary=free a.h5:/e f4.h5
    fftshard 2 -q --axes=0,2 --apply=poisson --boundary=free a.h5:/c f5.h5
    fftshard 2 -q --apply=poisson --boundary=free a.h5:/s f6.h5
    fftshard 2 -q --apply=poisson --boundary=free a.h5:/one f7.h5
    fftshard 3 -q --real --box-size=2,7 --apply=poisson --boundary=free a.h5:/two f8.h5
    # 3000 padded points on 2 and 3 ranks: the 1-D four-step
    run --separate-stderr fftshard 3 --apply=poisson --boundary=free a.h5:/long f9.h5
    [[ ${stderr_lines[0]} == *"1-D four-step"* ]]
    fftshard 2 -q --apply=poisson --boundary=free a.h5:/long f10.h5
    run solved "in=a.h5:/e out=f1.h5 apply=poisson boundary=free" \
        "in=a.h5:/o out=f2.h5 apply=poisson boundary=free box=3,2,5" \
        "in=a.h5:/o out=f3.h5 apply=poisson boundary=free" \
        "in=a.h5:/e out=f4.h5 apply=poisson boundary=free" \
        "in=a.h5:/c out=f5.h5 apply=poisson boundary=free axes=0,2" \
        "in=a.h5:/s out=f6.h5 apply=poisson boundary=free" \
        "in=a.h5:/one out=f7.h5 apply=poisson boundary=free" \
        "in=a.h5:/two out=f8.h5 apply=poisson boundary=free box=2,7" \
        "in=a.h5:/long out=f9.h5 apply=poisson boundary=free" \
        "in=a.h5:/long out=f10.h5 apply=poisson boundary=free"
    echo "$output"
    assert_success
    run python_serial -c 'import h5py; print(h5py.File("f2.h5")["o"].attrs["boundary"])'
    assert_output "free,free,free"
}



@test "free space: the ranks share the data's planes, not the doubled axis: every strategy, in place too, 1 to 6 ranks, slabs, pencils and batch axes" {
    python_serial - <<'EOF2'
import h5py, numpy as np
rng = np.random.default_rng(12)
with h5py.File("a.h5", "w") as f:
    f["o"] = rng.standard_normal((7, 6, 5))
    f["c"] = rng.standard_normal((5, 4, 6)) + 1j * rng.standard_normal((5, 4, 6))
    f["b"] = rng.standard_normal((3, 9, 4))
    f["q"] = rng.standard_normal((6, 6, 6))
EOF2
    # (a first stage split of the data's own 7 planes leaves ranks 4 to 5 of
    # 6 without a plane, and the doubled half of every second-stage box to
    # be zeroed after the exchange, in place or not)
    local checks=() i=0
    for t in alltoall random xorswap pairwise; do
        for p in 2 3 6; do
            i=$((i + 1))
            fftshard "$p" -q --real --transpose="$t" --apply=poisson --boundary=free a.h5:/o "r$i.h5"
            checks+=("in=a.h5:/o out=r$i.h5 apply=poisson boundary=free")
        done
        i=$((i + 1))
        fftshard 4 -q --transpose="$t" --apply=poisson --boundary=free a.h5:/c "r$i.h5"
        checks+=("in=a.h5:/c out=r$i.h5 apply=poisson boundary=free")
    done
    fftshard 6 -q --decomp=pencil --grid=2x3 --apply=poisson --boundary=free a.h5:/o p1.h5
    fftshard 6 -q --decomp=pencil --grid=3x2 --apply=poisson --boundary=free a.h5:/c p2.h5
    # in place (xorswap, pairwise): a second-stage box larger than the
    # blocks it receives (its doubled half is zeroed after the exchange)
    fftshard 2 -q --decomp=pencil --transpose=pairwise --apply=poisson --boundary=free a.h5:/o p3.h5
    fftshard 5 -q --decomp=pencil --transpose=xorswap --apply=poisson --boundary=free a.h5:/c p4.h5
    fftshard 6 -q --axes=1,2 --transpose=pairwise --apply=poisson --boundary=free a.h5:/b p5.h5
    fftshard 4 -q --axes=1,2 --transpose=xorswap --real --apply=poisson --boundary=free a.h5:/b p6.h5
    fftshard 5 -q --axes=1,2 --real --apply=poisson --boundary=free a.h5:/b b1.h5
    fftshard 3 -q --axes=0,2 --apply=poisson --boundary=free a.h5:/b b2.h5
    fftshard 1 -q --real --apply=poisson --boundary=free a.h5:/o one.h5
    # a cube of one spacing (the Green's table by its symmetry), and not
    fftshard 2 -q --real --box-size=3 --apply=poisson --boundary=free a.h5:/q q1.h5
    fftshard 3 -q --box-size=1,2,1 --apply=poisson --boundary=free a.h5:/q q2.h5
    run solved "${checks[@]}" \
        "in=a.h5:/o out=p1.h5 apply=poisson boundary=free" \
        "in=a.h5:/c out=p2.h5 apply=poisson boundary=free" \
        "in=a.h5:/o out=p3.h5 apply=poisson boundary=free" \
        "in=a.h5:/c out=p4.h5 apply=poisson boundary=free" \
        "in=a.h5:/b out=p5.h5 apply=poisson boundary=free axes=1,2" \
        "in=a.h5:/b out=p6.h5 apply=poisson boundary=free axes=1,2" \
        "in=a.h5:/b out=b1.h5 apply=poisson boundary=free axes=1,2" \
        "in=a.h5:/b out=b2.h5 apply=poisson boundary=free axes=0,2" \
        "in=a.h5:/o out=one.h5 apply=poisson boundary=free" \
        "in=a.h5:/q out=q1.h5 apply=poisson boundary=free box=3,3,3" \
        "in=a.h5:/q out=q2.h5 apply=poisson boundary=free box=1,2,1"
    echo "$output"
    assert_success
}

@test "free space refusals: mixed with other boundaries, other operators, --pad, four axes; walls and free space out of core" {
    oracle make a.h5 6x5x4:float64 -- b.h5 3x3x3x3:float64
    run --separate-stderr fftshard 2 --apply=poisson --boundary=free,periodic,free a.h5 o.h5
    assert_error "$EXIT_USAGE" "--boundary" "does not mix"
    run --separate-stderr fftshard 2 --apply=gaussian:1,poisson --boundary=free a.h5 o.h5
    assert_error "$EXIT_USAGE" "--boundary=free" "--apply=poisson alone"
    run --separate-stderr fftshard 2 --apply=poisson --boundary=free --out-of-core a.h5 o.h5
    assert_error "$EXIT_USAGE" "--out-of-core: fftshard cannot read an input padded" "--boundary=free"
    run --separate-stderr fftshard 2 --apply=poisson --boundary=dirichlet --out-of-core a.h5 o.h5
    assert_error "$EXIT_USAGE" "--out-of-core: fftshard cannot compute cosine or sine" "--boundary's walls"
    run --separate-stderr fftshard 2 --apply=poisson --boundary=free --pad=2x a.h5 o.h5
    assert_error "$EXIT_USAGE" "--boundary=free, --pad"
    run --separate-stderr fftshard 2 --apply=poisson --boundary=free b.h5 o.h5
    assert_error "$EXIT_USAGE" "4 transformed axes" "1 to 3 dimensions"
    [ ! -e o.h5 ]
}
