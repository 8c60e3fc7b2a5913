#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# --correlate, --convolve, --phase-correlate: the forward results of two
# INPUTs (or one) combined on the ranks that hold them, then the inverse.
# Every result equals tests/combine_oracle.py's numpy computation of the
# documented formula (1e-12 relative in double, 1e-5 in single) on odd and
# even shapes, real and complex input, batch axes, the 1-D four-step, slabs
# and pencils, every strategy, 1 to 5 ranks, ranks owning nothing; phase
# correlation finds a known np.roll shift; refusals come before any work.

load helpers

# combined CASE...: the oracle's check of each case.
combined() {
    python_serial "$srcdir/tests/combine_oracle.py" check "$@"
}

OPS=(correlate convolve phase-correlate)

@test "each operation, --real and complex, odd and even lengths, every strategy, slab and pencil, 1 to 4 ranks" {
    oracle make r.h5 /a=10x7x6:float64 /b=10x7x6:float64 -- c.h5 /a=9x8x7:complex128 /b=9x8x7:complex128 \
        -- e.h5 /a=8x6x4:float64 /b=8x6x4:float64
    local strategies=(alltoall random xorswap pairwise) cases=() i=0 op np s in real
    for op in "${OPS[@]}"; do
        for in in r.h5 c.h5 e.h5; do
            for real in --real ""; do
                [ "$in" != c.h5 ] || [ -z "$real" ] || continue
                np=$((1 + i % 4))
                s=${strategies[i % 4]}
                fftshard "$np" -q --transpose="$s" $real --"$op" "$in:/a" "$in:/b" o$i.h5
                cases+=("op=$op a=$in:/a b=$in:/b out=o$i.h5")
                i=$((i + 1))
            done
        done
        s=${strategies[i % 4]}
        fftshard 4 -q --transpose="$s" --decomp=pencil --real --"$op" r.h5:/a r.h5:/b o$i.h5
        cases+=("op=$op a=r.h5:/a b=r.h5:/b out=o$i.h5")
        i=$((i + 1))
        fftshard 4 -q --transpose="$s" --decomp=pencil --"$op" c.h5:/a c.h5:/b o$i.h5
        cases+=("op=$op a=c.h5:/a b=c.h5:/b out=o$i.h5")
        i=$((i + 1))
    done
    run combined "${cases[@]}"
    echo "$output"
    assert_success
}

@test "one INPUT's autocorrelation, batch axes, single precision, the 1-D four-step, ranks that own nothing" {
    oracle make b.h5 /a=5x8x9:float64 /b=5x8x9:float64 -- f.h5 /a=8x6x10:float32 /b=8x6x10:float32 \
        -- g.h5 /a=6x7x5:complex64 /b=6x7x5:complex64 -- one.h5 /a=60:float64 /b=60:float64 \
        -- onec.h5 /a=45:complex128 /b=45:complex128 -- s.h5 /a=4x4x4:float64 /b=4x4x4:float64
    fftshard 3 -q --correlate b.h5:/a auto.h5
    fftshard 2 -q --real --axes=1,2 --correlate f.h5:/a autof.h5:/r
    fftshard 3 -q --axes=1,2 --real --convolve b.h5:/a b.h5:/b o1.h5
    fftshard 2 -q --axes=0,2 --phase-correlate b.h5:/a b.h5:/b o2.h5
    fftshard 4 -q --axes=1,2 --decomp=pencil --real --correlate b.h5:/a b.h5:/b o3.h5
    fftshard 2 -q --real --convolve f.h5:/a f.h5:/b o4.h5
    fftshard 3 -q --correlate g.h5:/a g.h5:/b o5.h5
    fftshard 4 -q --decomp=pencil --phase-correlate g.h5:/a g.h5:/b o6.h5
    fftshard 3 -q --correlate one.h5:/a one.h5:/b o7.h5
    fftshard 4 -q --real --convolve one.h5:/a one.h5:/b o8.h5
    fftshard 2 -q --phase-correlate onec.h5:/a onec.h5:/b o9.h5
    fftshard 5 -q --real --correlate s.h5:/a s.h5:/b o10.h5
    fftshard 5 -q --decomp=pencil --convolve s.h5:/a s.h5:/b o11.h5
    run combined "op=correlate a=b.h5:/a out=auto.h5" \
        "op=correlate a=f.h5:/a out=autof.h5:/r axes=1,2" \
        "op=convolve a=b.h5:/a b=b.h5:/b out=o1.h5 axes=1,2" \
        "op=phase-correlate a=b.h5:/a b=b.h5:/b out=o2.h5 axes=0,2" \
        "op=correlate a=b.h5:/a b=b.h5:/b out=o3.h5 axes=1,2" \
        "op=convolve a=f.h5:/a b=f.h5:/b out=o4.h5" \
        "op=correlate a=g.h5:/a b=g.h5:/b out=o5.h5" \
        "op=phase-correlate a=g.h5:/a b=g.h5:/b out=o6.h5" \
        "op=correlate a=one.h5:/a b=one.h5:/b out=o7.h5" \
        "op=convolve a=one.h5:/a b=one.h5:/b out=o8.h5" \
        "op=phase-correlate a=onec.h5:/a b=onec.h5:/b out=o9.h5" \
        "op=correlate a=s.h5:/a b=s.h5:/b out=o10.h5" \
        "op=convolve a=s.h5:/a b=s.h5:/b out=o11.h5"
    echo "$output"
    assert_success
}

@test "phase correlation recovers a known np.roll shift: the report, the summary and numpy's argmax agree" {
    oracle make b.h5 /b=12x9x10:float64 -- c.h5 /b=16x15:complex128 -- v.h5 /b=3x16x12:float64 \
        -- f.h5 /b=10x12x8:float32
    python_serial "$srcdir/tests/combine_oracle.py" roll b.h5:/b b.h5:/a 3,-2,7
    python_serial "$srcdir/tests/combine_oracle.py" roll c.h5:/b c.h5:/a -5,6
    python_serial "$srcdir/tests/combine_oracle.py" roll v.h5:/b v.h5:/a 0,9,-1
    python_serial "$srcdir/tests/combine_oracle.py" roll f.h5:/b f.h5:/a 5,-4,1
    fftshard 3 -q --real --phase-correlate --report=r1.json b.h5:/a b.h5:/b o1.h5
    fftshard 4 -q --transpose=pairwise --phase-correlate --report=r2.json c.h5:/a c.h5:/b o2.h5
    fftshard 2 -q --real --axes=1,2 --phase-correlate --report=r3.json v.h5:/a v.h5:/b o3.h5
    fftshard 4 -q --real --decomp=pencil --phase-correlate --report=r5.json f.h5:/a f.h5:/b o5.h5
    run combined "op=phase-correlate a=b.h5:/a b=b.h5:/b out=o1.h5 report=r1.json shift=3,-2,-3" \
        "op=phase-correlate a=c.h5:/a b=c.h5:/b out=o2.h5 report=r2.json shift=-5,6" \
        "op=phase-correlate a=v.h5:/a b=v.h5:/b out=o3.h5 axes=1,2 report=r3.json shift=-7,-1" \
        "op=phase-correlate a=f.h5:/a b=f.h5:/b out=o5.h5 report=r5.json shift=5,-4,1"
    echo "$output"
    assert_success
    run --separate-stderr fftshard 2 --real --phase-correlate b.h5:/a b.h5:/b o4.h5
    assert_success
    [[ $stderr == *"phase-correlate: the correlation of 2 INPUTs in o4.h5:/phase_correlation; shift (3, -2, -3) at peak 1"* ]] ||
        fail "$stderr"
}

@test "the result's path and attributes; an operate phase in the report; OUTPUT:DSET names it" {
    oracle make a.h5 /u=8x6x5:float64 /v=8x6x5:float64
    python_serial -c 'import h5py
with h5py.File("a.h5", "a") as f:
    f["u"].attrs["units"] = "km/s"
    f["v"].attrs["time"] = 2.5'
    fftshard 2 -q --real --correlate --report=c.json a.h5:/u a.h5:/v out.h5
    fftshard 2 -q --real --convolve a.h5:/u a.h5:/v named.h5:/grp/conv
    run combined "op=correlate a=a.h5:/u b=a.h5:/v out=out.h5" \
        "op=convolve a=a.h5:/u b=a.h5:/v out=named.h5:/grp/conv"
    echo "$output"
    assert_success
    run python_serial -c 'import h5py, json
f = h5py.File("out.h5")
a = f["correlation"].attrs
r = json.load(open("c.json"))
print(list(f), a["operation"], a["direction"], a["input"], a["second_input"], a["units"],
      "time" in a, list(h5py.File("named.h5")["grp"]), "operate" in r["phases"],
      [(d["output"], d["operation"]) for d in r["datasets"]],
      r["combine"]["operation"], r["combine"]["inputs"], r["exchange"]["count"])'
    # beside each result its coordinates x0, x1, x2 (fftshard(1), What readers see)
    assert_output "['correlation', 'x0', 'x1', 'x2'] correlate round trip a.h5:/u a.h5:/v km/s False ['conv', 'x0', 'x1', 'x2'] True [('out.h5:/correlation', 'correlate'), ('out.h5:/correlation', 'correlate')] correlate 2 3"
}

@test "refusals: a third INPUT, one for --convolve, shapes or types that differ, with --apply, spectra or --inverse: status 2" {
    oracle make r.h5 /a=8x6x4:float64 /b=8x6x4:float64 /c=8x6x5:float64 /d=8x6x4:complex128 \
        /s=8x6x4:float32
    local bad
    for bad in "--correlate r.h5:/a r.h5:/b r.h5:/a" "--convolve r.h5:/a" "--phase-correlate r.h5:/a" \
        "--correlate r.h5:/a r.h5:/c" "--convolve r.h5:/a r.h5:/d" "--correlate r.h5:/a r.h5:/s" \
        "--correlate --convolve r.h5:/a r.h5:/b" "--correlate --apply=gaussian:1 r.h5:/a" \
        "--correlate --spectrum-only r.h5:/a r.h5:/b" "--correlate --power-spectrum r.h5:/a" \
        "--convolve --inverse r.h5:/a r.h5:/b" "--correlate --check r.h5:/a" \
        "--convolve --shard-output r.h5:/a r.h5:/b" "--correlate --box-size=2 r.h5:/a"; do
        echo "$bad" >o.h5
        run --separate-stderr fftshard 2 $bad o.h5
        assert_error "$EXIT_USAGE"
        [ "$(grep -c '^fftshard: error: ' <<<"$stderr")" = 1 ] || fail "$bad: $stderr"
        assert_equal "$(cat o.h5)" "$bad"
    done
    run --separate-stderr fftshard 2 --correlate r.h5:/a r.h5:/c o2.h5
    assert_error "$EXIT_USAGE" "--correlate: the two INPUTs must have one shape"
    run --separate-stderr fftshard 2 --convolve r.h5:/a r.h5:/s o2.h5
    assert_error "$EXIT_USAGE" "--convolve: the two INPUTs must be transformed alike"
    [ ! -e o2.h5 ]
    assert_no_temporaries
}
