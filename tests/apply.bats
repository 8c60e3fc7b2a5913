#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# --apply: operators in Fourier space between the forward transform and its
# inverse. Every result equals tests/apply_oracle.py's numpy computation of
# the documented formula (1e-12 relative in double, 1e-5 in single) on odd
# and even shapes, real and complex input, batch axes, the 1-D four-step,
# slabs and pencils, every strategy, 1 to 8 ranks, ranks owning nothing;
# a Poisson solve matches an analytic answer; the round trip costs two
# exchanges for slabs; refusals come before any work.

load helpers

# applied CASE...: the oracle's check of each case.
applied() {
    python_serial "$srcdir/tests/apply_oracle.py" check "$@"
}

# A transfer table T(k) = 1 / (1 + k^2) on 0 .. KMAX (default 4).
transfer_table() {
    python_serial -c 'import numpy as np, sys
k = np.linspace(0, float(sys.argv[2]), 200)
np.savetxt(sys.argv[1], np.c_[k, 1 / (1 + k * k)], header="k T")' "$1" "${2:-4}"
}

OPS=(gaussian:1.5 tophat:2 sharpk:1.2 lowpass:0.8 highpass:0.8:3 deriv:0 deriv:-1 laplacian
     poisson transfer:t.txt "gaussian:1,deriv:1,deriv:1")

@test "every operator, --real and complex, odd and even lengths, every strategy, slab and pencil, 1 to 8 ranks" {
    oracle make r.h5 10x7x6:float64 -- c.h5 9x8x7:complex128 -- e.h5 8x6x4:float64
    transfer_table t.txt 6
    local strategies=(alltoall random xorswap pairwise) cases=() i=0 op np s in real
    for op in "${OPS[@]}"; do
        for in in r.h5 c.h5 e.h5; do
            np=$((1 + i % 4))
            [ "$i" -lt 30 ] || np=$((5 + i % 4))
            s=${strategies[i % 4]}
            real=
            [ "$in" = c.h5 ] || real=--real
            fftshard "$np" -q --transpose="$s" $real --apply="$op" "$in" o$i.h5
            cases+=("in=$in out=o$i.h5 apply=$op")
            i=$((i + 1))
        done
        s=${strategies[i % 4]}
        in=r.h5
        [ $((i % 2)) = 0 ] || in=c.h5
        fftshard 4 -q --transpose="$s" --decomp=pencil --apply="$op" "$in" o$i.h5
        cases+=("in=$in out=o$i.h5 apply=$op")
        i=$((i + 1))
    done
    run applied "${cases[@]}"
    echo "$output"
    assert_success
}

@test "a cut at exactly a mode's |k|: the modes numpy keeps on 1 to 4 ranks, slab and pencil, every strategy, odd and even, --real and complex" {
    # k^2 summed in another order than the definition's (kx**2 + ky**2 + kz**2)
    # moves a mode across sharpk:K for K at its |k| (apply_oracle.py cut picks
    # such modes); lowpass and highpass at the same K give H = 1/2 there
    oracle make e.h5 10x8x6:float64 -- o.h5 9x7x5:complex128 -- c.h5 10x8x6:complex128 \
        -- r.h5 7x6x5:float64
    local strategies=(alltoall random xorswap pairwise) ranks=(1 2 3 4 pencil) cases=() i=0
    local in shape at below op real np lists n
    for in in e.h5:10x8x6 o.h5:9x7x5 c.h5:10x8x6 r.h5:7x6x5; do
        shape=${in#*:} in=${in%:*}
        read -r at below < <(python_serial "$srcdir/tests/apply_oracle.py" cut "$shape")
        [ -n "$below" ]
        lists=("sharpk:$at" "sharpk:$below" "lowpass:$at:64,sharpk:$at" "highpass:$below:64,sharpk:$below")
        real=
        case $in in e.h5 | r.h5) real=--real ;; esac
        for n in 1 2 3; do
            op=${lists[i % 4]} np=${ranks[i % 5]}
            if [ "$np" = pencil ]; then
                fftshard 4 -q --decomp=pencil --transpose="${strategies[i % 4]}" $real --apply="$op" "$in" out$i.h5
            else
                fftshard "$np" -q --transpose="${strategies[(i / 2) % 4]}" $real --apply="$op" "$in" out$i.h5
            fi
            cases+=("in=$in out=out$i.h5 apply=$op")
            i=$((i + 1))
        done
    done
    run applied "${cases[@]}"
    echo "$output"
    assert_success
}

@test "batch axes, --box-size, single precision, the 1-D four-step, ranks that own nothing" {
    oracle make b.h5 5x8x9:float64 -- f.h5 8x6x10:float32 -- g.h5 6x7x5:complex64 \
        -- one.h5 60:float64 -- onec.h5 45:complex128 -- thin.h5 2x9x8:float64 -- i.h5 6x5x4:int32 \
        -- c2.h5 64x48:complex128
    transfer_table t.txt 20
    fftshard 3 -q --axes=1,2 --real --apply=gaussian:1,deriv:2 b.h5 o1.h5
    fftshard 2 -q --axes=0,2 --apply=laplacian,lowpass:1:4 b.h5 o2.h5
    fftshard 4 -q --axes=1,2 --decomp=pencil --real --apply=poisson b.h5 o3.h5
    fftshard 2 -q --real --box-size=100,50,30 --apply=gaussian:3,deriv:1 f.h5 o4.h5
    fftshard 3 -q --box-size=2.5 --apply=tophat:0.3,transfer:t.txt g.h5 o5.h5
    fftshard 3 -q --apply=deriv:0,gaussian:2 one.h5 o6.h5
    fftshard 4 -q --real --apply=poisson one.h5 o7.h5
    fftshard 2 -q --apply=highpass:0.5,deriv:0 onec.h5 o8.h5
    fftshard 4 -q --real --apply=laplacian,gaussian:1 thin.h5 o9.h5
    fftshard 8 -q --apply=deriv:1,sharpk:2 thin.h5 o10.h5
    fftshard 3 -q --real --apply=gaussian:1 i.h5 o11.h5
    # one rank, one stage: its FFTs may run on the pieces as they are read
    fftshard 1 -q --axes=0 --apply=gaussian:2,deriv:0 c2.h5 o12.h5
    run applied "in=b.h5 out=o1.h5 axes=1,2 apply=gaussian:1,deriv:2" \
        "in=b.h5 out=o2.h5 axes=0,2 apply=laplacian,lowpass:1:4" \
        "in=b.h5 out=o3.h5 axes=1,2 apply=poisson" \
        "in=f.h5 out=o4.h5 box=100,50,30 apply=gaussian:3,deriv:1" \
        "in=g.h5 out=o5.h5 box=2.5 apply=tophat:0.3,transfer:t.txt" \
        "in=one.h5 out=o6.h5 apply=deriv:0,gaussian:2" \
        "in=one.h5 out=o7.h5 apply=poisson" \
        "in=onec.h5 out=o8.h5 apply=highpass:0.5,deriv:0" \
        "in=thin.h5 out=o9.h5 apply=laplacian,gaussian:1" \
        "in=thin.h5 out=o10.h5 apply=deriv:1,sharpk:2" \
        "in=i.h5 out=o11.h5 apply=gaussian:1 tol=1e-12" \
        "in=c2.h5 out=o12.h5 axes=0 apply=gaussian:2,deriv:0"
    echo "$output"
    assert_success
}

@test "poisson solves laplacian(phi) = f: a product of sines, to 1e-12" {
    python_serial "$srcdir/tests/apply_oracle.py" sines s.h5 16x12x10 1000,600,500
    fftshard 2 -q --real --box-size=1000,600,500 --apply=poisson s.h5:/f phi.h5:/phi
    fftshard 4 -q --decomp=pencil --box-size=1000,600,500 --apply=poisson s.h5:/f phic.h5:/phi
    # and back: the Laplacian of the solution is f
    fftshard 3 -q --real --box-size=1000,600,500 --apply=laplacian phi.h5:/phi f.h5:/f
    run applied "in=s.h5:/f out=phi.h5:/phi apply=poisson expect=s.h5:/phi" \
        "in=s.h5:/f out=phic.h5:/phi apply=poisson expect=s.h5:/phi" \
        "in=phi.h5:/phi out=f.h5:/f apply=laplacian expect=s.h5:/f"
    echo "$output"
    assert_success
}

@test "several inputs, each filtered; the attributes record the operation, the input's are kept" {
    oracle make a.h5 /u=8x6x5:float64 /v=8x6x5:float64 /w=7x6x5:complex128
    python_serial -c 'import h5py
with h5py.File("a.h5", "a") as f:
    f["u"].attrs["units"] = "km/s"
    f["v"].attrs["time"] = 2.5'
    fftshard 3 -q --real --apply=lowpass:1.1:3,deriv:2 a.h5:/u a.h5:/v out.h5
    fftshard 2 -q --apply=lowpass:1.1:3,deriv:2 a.h5:/w outc.h5
    run applied "in=a.h5:/u out=out.h5:/u apply=lowpass:1.1:3,deriv:2" \
        "in=a.h5:/v out=out.h5:/v apply=lowpass:1.1:3,deriv:2" \
        "in=a.h5:/w out=outc.h5:/w apply=lowpass:1.1:3,deriv:2"
    echo "$output"
    assert_success
    run python_serial -c 'import h5py
a = h5py.File("out.h5")["u"].attrs
print(a["operation"], a["direction"], list(a["box_size"]), a["units"])'
    assert_output "lowpass:1.1000000000000001:3,deriv:2 round trip [8.0, 6.0, 5.0] km/s"
}

@test "the round trip: two exchanges for slabs, four for 2x2 pencils; an operate phase; the summary says so" {
    oracle make r.h5 16x12x10:float64
    fftshard 2 -q --real --apply=gaussian:2 --report=a.json r.h5 a.h5
    fftshard 2 -q --real --report=p.json r.h5 p.h5
    fftshard 4 -q --real --decomp=pencil --apply=gaussian:2 --report=b.json r.h5 b.h5
    fftshard 2 -q --real --axes=1,2 --apply=gaussian:2 --report=n.json r.h5 n.h5
    run python_serial -c 'import json
a, p, b, n = (json.load(open(n)) for n in ("a.json", "p.json", "b.json", "n.json"))
print(a["exchange"]["count"], p["exchange"]["count"], b["exchange"]["count"],
      a["operation"], p["operation"], "operate" in a["phases"], a["exchange"]["bytes_sent"] == 2 * p["exchange"]["bytes_sent"],
      a["operation_in_pass"], b["operation_in_pass"], n["operation_in_pass"], "operation_in_pass" in p)'
    # slabs and pencils end in a strided pass, which the operators run inside;
    # with a batch axis first (split, no exchange) the last pass is contiguous:
    # the operation is a pass of its own
    assert_output "2 1 4 gaussian:2 None True True True True False False"
    run --separate-stderr fftshard 2 --real --apply=gaussian:2 r.h5 c.h5
    assert_success
    [[ $stderr == *"operation: gaussian:2 in Fourier space, inside the last FFT pass; 2 exchanges in all"* ]]
    [[ $stderr == *"  operate "* ]]
    run --separate-stderr fftshard 2 --real --axes=1,2 --apply=gaussian:2 r.h5 e.h5
    [[ $stderr == *"operation: gaussian:2 in Fourier space; 0 exchanges in all"* ]]
    [[ $stderr == *"  operate "* ]]
    run --separate-stderr fftshard 2 --real r.h5 d.h5
    [[ $stderr != *"operate"* ]]
}

@test "refusals: unknown operators, bad parameters, deriv on a batch axis, with --inverse or spectra: status 2" {
    oracle make r.h5 8x6x4:float64
    local bad
    for bad in "--apply=blur:2" "--apply=gaussian" "--apply=gaussian:-1" "--apply=gaussian:x" \
        "--apply=lowpass:1:0" "--apply=laplacian:2" "--apply=deriv:9" "--apply=gaussian:1," \
        "--apply=sharpk:1 --inverse" "--apply=sharpk:1 --check" "--apply=sharpk:1 --power-spectrum" \
        "--apply=sharpk:1 --shard-output" "--apply=poisson --axes=0,1 --box-size=1,2,3"; do
        echo "$bad" >o.h5
        run --separate-stderr fftshard 2 $bad r.h5 o.h5
        assert_error "$EXIT_USAGE"
        assert_equal "$(cat o.h5)" "$bad"
    done
    run --separate-stderr fftshard 2 --axes=1,2 --apply=deriv:0 r.h5 o2.h5
    assert_error "$EXIT_USAGE" "deriv:0" "not a transformed axis"
    [ ! -e o2.h5 ]
    run --separate-stderr fftshard 1 --box-size=3 r.h5 o2.h5
    assert_error "$EXIT_USAGE" "--box-size"
    assert_no_temporaries
}

@test "a transfer table that does not cover the grid's |k|, or is not a table: status 3 before any work" {
    oracle make r.h5 8x6x4:float64
    transfer_table short.txt 2     # the grid's |k| goes to about 4.8
    printf '0.5 1\n1 2\n9 3\n' >nozero.txt
    printf '0 1\n2 x\n' >text.txt
    printf '0 1\n3 1\n2 1\n9 1\n' >order.txt
    echo keep >o.h5
    run --separate-stderr fftshard 2 --real --apply=transfer:short.txt r.h5 o.h5
    assert_error "$EXIT_INPUT" "transfer:short.txt" "does not cover"
    run --separate-stderr fftshard 2 --real --apply=gaussian:1,transfer:nozero.txt r.h5 o.h5
    assert_error "$EXIT_INPUT" "does not cover the grid's |k| from 0"
    run --separate-stderr fftshard 2 --apply=transfer:text.txt r.h5 o.h5
    assert_error "$EXIT_INPUT" "line 2"
    run --separate-stderr fftshard 2 --apply=transfer:order.txt r.h5 o.h5
    assert_error "$EXIT_INPUT" "k must increase"
    run --separate-stderr fftshard 2 --apply=transfer:missing.txt r.h5 o.h5
    assert_error "$EXIT_INPUT" "missing.txt"
    assert_equal "$(cat o.h5)" keep
    assert_no_temporaries
}
