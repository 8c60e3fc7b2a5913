#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# --vector=gradient|curl|divergence|helmholtz: the forward results of the
# components kept on the ranks that hold them, each result made element by
# element there, brought back by the inverse and written. Every result
# equals tests/vector_oracle.py's numpy computation of the documented
# formulas (1e-12 relative in double, 1e-5 in single) on odd and even
# shapes, real and complex input, batch axes, 2-D transforms, --box-size,
# the 1-D four-step, slabs and pencils, every strategy, 1 to 4 ranks, ranks
# owning nothing; the Helmholtz parts add up to the field, S has no
# divergence and C no curl; the gradient of a sine is its derivative;
# refusals come before any work.

load helpers

# vectors CASE...: the oracle's check of each case.
vectors() {
    python_serial "$srcdir/tests/vector_oracle.py" check "$@"
}

@test "each operation, --real and complex, odd and even lengths, every strategy, slab and pencil, 1 to 4 ranks" {
    oracle make r.h5 /a=10x7x6:float64 /b=10x7x6:float64 /c=10x7x6:float64 \
        -- c.h5 /a=9x8x7:complex128 /b=9x8x7:complex128 /c=9x8x7:complex128 \
        -- e.h5 /a=8x6x4:float64 /b=8x6x4:float64 /c=8x6x4:float64
    local strategies=(alltoall random xorswap pairwise) cases=() i=0 op np s in real ins
    for op in gradient curl divergence helmholtz; do
        for in in r.h5 c.h5 e.h5; do
            for real in --real ""; do
                [ "$in" != c.h5 ] || [ -z "$real" ] || continue
                np=$((1 + i % 4))
                s=${strategies[i % 4]}
                ins="$in:/a $in:/b $in:/c"
                [ "$op" != gradient ] || ins="$in:/b"
                fftshard "$np" -q --transpose="$s" $real --vector="$op" $ins o$i.h5
                cases+=("op=$op in=${ins// /,} out=o$i.h5")
                i=$((i + 1))
            done
        done
        s=${strategies[i % 4]}
        ins="r.h5:/a r.h5:/b r.h5:/c"
        [ "$op" != gradient ] || ins="r.h5:/c"
        fftshard 4 -q --transpose="$s" --decomp=pencil --real --vector="$op" $ins o$i.h5
        cases+=("op=$op in=${ins// /,} out=o$i.h5")
        i=$((i + 1))
        ins="c.h5:/a c.h5:/b c.h5:/c"
        [ "$op" != gradient ] || ins="c.h5:/a"
        fftshard 4 -q --transpose="$s" --decomp=pencil --vector="$op" $ins o$i.h5
        cases+=("op=$op in=${ins// /,} out=o$i.h5")
        i=$((i + 1))
    done
    run vectors "${cases[@]}"
    echo "$output"
    assert_success
    assert_output --partial "28 cases, 91 results match"
}

@test "single precision, a batch axis, 2-D transforms, --box-size, the 1-D four-step, ranks that own nothing" {
    oracle make f.h5 /a=8x6x10:float32 /b=8x6x10:float32 /c=8x6x10:float32 \
        -- g.h5 /a=6x7x5:complex64 /b=6x7x5:complex64 /c=6x7x5:complex64 \
        -- b.h5 /a=3x8x9x6:float64 /b=3x8x9x6:float64 /c=3x8x9x6:float64 \
        -- p.h5 /a=12x9:float64 /b=12x9:float64 -- one.h5 /a=60:float64 -- onec.h5 /a=45:complex128 \
        -- s.h5 /a=3x4x5:float64 /b=3x4x5:float64 /c=3x4x5:float64
    fftshard 2 -q --real --vector=curl f.h5:/a f.h5:/b f.h5:/c o1.h5
    fftshard 3 -q --decomp=pencil --vector=helmholtz g.h5:/a g.h5:/b g.h5:/c o2.h5
    fftshard 4 -q --real --transpose=pairwise --vector=gradient f.h5:/c o3.h5
    fftshard 3 -q --real --axes=1,2,3 --vector=curl b.h5:/a b.h5:/b b.h5:/c o4.h5
    fftshard 4 -q --axes=1,2,3 --decomp=pencil --vector=helmholtz b.h5:/a b.h5:/b b.h5:/c o5.h5
    fftshard 2 -q --real --axes=1,2,3 --box-size=2,3,5 --vector=gradient b.h5:/b o6.h5
    fftshard 3 -q --real --vector=divergence p.h5:/a p.h5:/b o7.h5
    fftshard 2 -q --box-size=7 --vector=helmholtz p.h5:/a p.h5:/b o8.h5
    fftshard 4 -q --real --axes=0,2 --vector=gradient b.h5:/a o9.h5
    fftshard 3 -q --vector=gradient --box-size=3.5 one.h5:/a o10.h5
    fftshard 2 -q --vector=gradient onec.h5:/a o11.h5
    fftshard 4 -q --real --vector=curl s.h5:/a s.h5:/b s.h5:/c o12.h5
    fftshard 4 -q --decomp=pencil --vector=helmholtz s.h5:/a s.h5:/b s.h5:/c o13.h5
    fftshard 4 -q --real --vector=divergence s.h5:/a s.h5:/b s.h5:/c o14.h5
    # the gradient along one axis, made in place (no spectrum kept)
    fftshard 3 -q --real --axes=2 --vector=gradient b.h5:/c o15.h5
    fftshard 4 -q --decomp=pencil --axes=0 --vector=gradient g.h5:/b o16.h5
    fftshard 1 -q --real --vector=gradient one.h5:/a o17.h5
    run vectors "op=curl in=f.h5:/a,f.h5:/b,f.h5:/c out=o1.h5" \
        "op=helmholtz in=g.h5:/a,g.h5:/b,g.h5:/c out=o2.h5" \
        "op=gradient in=f.h5:/c out=o3.h5" \
        "op=curl in=b.h5:/a,b.h5:/b,b.h5:/c out=o4.h5 axes=1,2,3" \
        "op=helmholtz in=b.h5:/a,b.h5:/b,b.h5:/c out=o5.h5 axes=1,2,3" \
        "op=gradient in=b.h5:/b out=o6.h5 axes=1,2,3 box=2,3,5" \
        "op=divergence in=p.h5:/a,p.h5:/b out=o7.h5" \
        "op=helmholtz in=p.h5:/a,p.h5:/b out=o8.h5 box=7" \
        "op=gradient in=b.h5:/a out=o9.h5 axes=0,2" \
        "op=gradient in=one.h5:/a out=o10.h5 box=3.5" \
        "op=gradient in=onec.h5:/a out=o11.h5" \
        "op=curl in=s.h5:/a,s.h5:/b,s.h5:/c out=o12.h5" \
        "op=helmholtz in=s.h5:/a,s.h5:/b,s.h5:/c out=o13.h5" \
        "op=divergence in=s.h5:/a,s.h5:/b,s.h5:/c out=o14.h5" \
        "op=gradient in=b.h5:/c out=o15.h5 axes=2" \
        "op=gradient in=g.h5:/b out=o16.h5 axes=0" \
        "op=gradient in=one.h5:/a out=o17.h5"
    echo "$output"
    assert_success
    assert_output --partial "17 cases, 46 results match"
}

@test "helmholtz of 3 x 32^3 float32: S + C is the field, S has no divergence, C no curl" {
    oracle make v.h5 /x=32x32x32:float32 /y=32x32x32:float32 /z=32x32x32:float32
    fftshard 3 -q --real --vector=helmholtz v.h5:/x v.h5:/y v.h5:/z h.h5
    run python_serial "$srcdir/tests/vector_oracle.py" helmholtz v.h5:/x,v.h5:/y,v.h5:/z h.h5
    echo "$output"
    assert_success
    fftshard 4 -q --decomp=pencil --transpose=xorswap --vector=helmholtz v.h5:/x v.h5:/y v.h5:/z h2.h5
    run python_serial "$srcdir/tests/vector_oracle.py" helmholtz v.h5:/x,v.h5:/y,v.h5:/z h2.h5
    echo "$output"
    assert_success
}

@test "the gradient of a sine is its analytic derivative to 1e-12, with --box-size" {
    python_serial "$srcdir/tests/vector_oracle.py" sine s.h5:/f 24x18x15 2,3,5 float64
    fftshard 3 -q --real --box-size=2,3,5 --vector=gradient s.h5:/f g.h5
    run python_serial "$srcdir/tests/vector_oracle.py" sine-check s.h5:/f g.h5 2,3,5 1e-12
    echo "$output"
    assert_success
    fftshard 4 -q --decomp=pencil --box-size=2,3,5 --vector=gradient s.h5:/f g2.h5
    run python_serial "$srcdir/tests/vector_oracle.py" sine-check s.h5:/f g2.h5 2,3,5 1e-12
    echo "$output"
    assert_success
}

@test "the results' paths and attributes, OUTPUT:/group, the report's operate phase and the summary" {
    oracle make a.h5 /u=8x6x5:float64 /v=8x6x5:float64 /w=8x6x5:float64
    python_serial -c 'import h5py
with h5py.File("a.h5", "a") as f:
    f["u"].attrs["units"] = "km/s"'
    run --separate-stderr fftshard 2 --real --box-size=4 --report=c.json --vector=curl \
        a.h5:/u a.h5:/v a.h5:/w out.h5
    assert_success
    [[ $stderr == *"curl of 3 INPUTs in out.h5: /curl_x, /curl_y, /curl_z"* ]] || fail "$stderr"
    fftshard 2 -q --vector=helmholtz a.h5:/u a.h5:/v a.h5:/w named.h5:/grp/
    fftshard 1 -q --vector=divergence a.h5:/u a.h5:/v a.h5:/w div.h5:/d
    run vectors "op=curl in=a.h5:/u,a.h5:/v,a.h5:/w out=out.h5 box=4" \
        "op=helmholtz in=a.h5:/u,a.h5:/v,a.h5:/w out=named.h5:/grp" \
        "op=divergence in=a.h5:/u,a.h5:/v,a.h5:/w out=div.h5:/d"
    echo "$output"
    assert_success
    run python_serial -c 'import h5py, json
f = h5py.File("out.h5")
a = f["curl_y"].attrs
r = json.load(open("c.json"))
print(sorted(f), a["operation"], a["direction"], a["input"], a["components"], "second_input" in a,
      a["units"], list(a["box_size"]),
      sorted(h5py.File("named.h5")["grp"]), list(h5py.File("div.h5")["d"]), "operate" in r["phases"],
      r["combine"]["operation"], r["combine"]["inputs"], r["combine"]["results"])
# every result on the coordinates x_a = j L_a / n_a of the box (fftshard(1), What readers see)
import numpy as np
for name in ("curl_x", "curl_y", "curl_z"):
    for a, n in enumerate((8, 6, 5)):
        scale = f[name].dims[a][0]
        assert scale.name == "/x%d" % a, (name, a, scale.name)
        assert np.allclose(scale[()], np.arange(n) * 4.0 / n, rtol=1e-14, atol=0), (name, a)'
    assert_output "['curl_x', 'curl_y', 'curl_z', 'x0', 'x1', 'x2'] curl round trip a.h5:/u a.h5:/u, a.h5:/v, a.h5:/w False km/s [4.0, 4.0, 4.0] ['compressive_x', 'compressive_y', 'compressive_z', 'solenoidal_x', 'solenoidal_y', 'solenoidal_z', 'x0', 'x1', 'x2'] ['divergence', 'x0', 'x1', 'x2'] True curl 3 /curl_x, /curl_y, /curl_z"
}

@test "refusals: curl of two INPUTs or of a 2-D transform, counts, shapes, with --correlate or --apply: status 2" {
    oracle make r.h5 /a=8x6x4:float64 /b=8x6x4:float64 /c=8x6x5:float64 /d=8x6x4:complex128 \
        -- p.h5 /a=8x6:float64 /b=8x6:float64 /c=8x6:float64
    local bad
    for bad in "--vector=curl r.h5:/a r.h5:/b" "--vector=gradient r.h5:/a r.h5:/b" \
        "--vector=curl r.h5:/a r.h5:/b r.h5:/c" "--vector=divergence r.h5:/a r.h5:/b r.h5:/d" \
        "--vector=divergence r.h5:/a r.h5:/b" "--vector=helmholtz r.h5:/a" \
        "--vector=curl p.h5:/a p.h5:/b p.h5:/c" "--vector=divergence p.h5:/a p.h5:/b p.h5:/c" \
        "--vector=grad r.h5:/a" "--vector=curl --correlate r.h5:/a r.h5:/b r.h5:/a" \
        "--correlate --vector=gradient r.h5:/a" "--vector=gradient --apply=gaussian:1 r.h5:/a" \
        "--vector=gradient --inverse r.h5:/a" "--vector=gradient --power-spectrum --shot-noise=1 r.h5:/a" \
        "--vector=gradient --shard-output r.h5:/a" "--vector=gradient --box-size=1,2 r.h5:/a"; do
        echo "$bad" >o.h5
        run --separate-stderr fftshard 2 $bad o.h5
        assert_error "$EXIT_USAGE"
        [ "$(grep -c '^fftshard: error: ' <<<"$stderr")" = 1 ] || fail "$bad: $stderr"
        assert_equal "$(cat o.h5)" "$bad"
    done
    run --separate-stderr fftshard 2 --vector=curl r.h5:/a r.h5:/b o2.h5
    assert_error "$EXIT_USAGE" "--vector=curl: expected three INPUTs"
    run --separate-stderr fftshard 2 --vector=curl p.h5:/a p.h5:/b p.h5:/c o2.h5
    assert_error "$EXIT_USAGE" "--vector=curl: needs a 3-D transform"
    run --separate-stderr fftshard 2 --vector=divergence r.h5:/a r.h5:/b r.h5:/c o2.h5
    assert_error "$EXIT_USAGE" "--vector=divergence: the INPUTs must have one shape"
    [ ! -e o2.h5 ]
    assert_no_temporaries
}
