#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Data that is not periodic, the matrix (make check-long; tests/window.bats
# holds the quick part): --pad and --window, --mode's linear convolution and
# correlation, and --check of them, over every strategy, slabs and pencils,
# 1 to 8 ranks, odd and even lengths, real and complex, batch axes, the 1-D
# four-step and single precision, against tests/window_oracle.py (numpy,
# scipy): the zeros of the padding are never read from a file, and the first
# pass leaves the lines of them alone, on every decomposition.

load helpers

STRATEGIES=(alltoall xorswap pairwise random)

windowed() {
    python_serial "$srcdir/tests/window_oracle.py" "$@"
}

@test "--pad and --window: every strategy, slab and pencil, 1 to 8 ranks, odd and even, real and complex" {
    oracle make a.h5 /c=9x8x7:complex128 /r=10x7x6:float64 /e=8x6x4:float64
    local cases=() i=0 np in real decomp pads=(2x 11,9,8 12,2x,5 4,3,9) wins=(hann "" tukey:0.3,none,kaiser:4 blackman)
    for np in 1 2 3 4 5 6 7 8; do
        for in in c r e; do
            real="" decomp=slab
            [ "$in" = c ] || [ $((i % 2)) = 0 ] || real=--real
            [ "$np" -ge 2 ] && [ $((i % 3)) = 1 ] && decomp=pencil
            local pad=${pads[i % 4]} win=${wins[i % 4]} opts=()
            opts=(--decomp=$decomp --transpose=${STRATEGIES[i % 4]} --pad=$pad)
            [ -z "$win" ] || opts+=(--window=$win)
            fftshard "$np" -q $real "${opts[@]}" "a.h5:/$in" o$i.h5
            cases+=("in=a.h5:/$in out=o$i.h5 pad=$pad${win:+ window=$win}${real:+ real}")
            i=$((i + 1))
        done
    done
    run windowed check "${cases[@]}"
    echo "$output"
    assert_success
}

@test "--pad and --window on batch axes, the 1-D four-step and single precision, 2 to 8 ranks" {
    oracle make a.h5 /b=5x8x9:float64 /v=3x12x10:complex128 /one=60:float64 /onec=45:complex128 \
        /f=8x6x10:float32 /g=6x7x5:complex64
    local cases=() np s
    for np in 2 3 4 5 6 7 8; do
        s=${STRATEGIES[np % 4]}
        fftshard "$np" -q --transpose="$s" --axes=1,2 --real --pad=2x --window=hann a.h5:/b b$np.h5
        fftshard "$np" -q --transpose="$s" --axes=0,2 --pad=7,13 --window=none,hamming a.h5:/v v$np.h5
        fftshard "$np" -q --transpose="$s" --pad=2x --window=tukey a.h5:/one one$np.h5
        fftshard "$np" -q --transpose="$s" --real --pad=64 --window=kaiser:5 a.h5:/one r$np.h5
        fftshard "$np" -q --transpose="$s" --pad=50 a.h5:/onec c$np.h5
        cases+=("in=a.h5:/b out=b$np.h5 axes=1,2 real pad=2x window=hann"
            "in=a.h5:/v out=v$np.h5 axes=0,2 pad=7,13 window=none,hamming"
            "in=a.h5:/one out=one$np.h5 pad=2x window=tukey"
            "in=a.h5:/one out=r$np.h5 real pad=64 window=kaiser:5" "in=a.h5:/onec out=c$np.h5 pad=50")
    done
    fftshard 3 -q --real --pad=2x --window=hann a.h5:/f f1.h5
    fftshard 4 -q --decomp=pencil --pad=9,2x,3 --window=blackman a.h5:/g g1.h5
    fftshard 5 -q --decomp=pencil --transpose=pairwise --real --pad=3x --window=tukey:0.5 a.h5:/f f2.h5
    cases+=("in=a.h5:/f out=f1.h5 real pad=2x window=hann" "in=a.h5:/g out=g1.h5 pad=9,2x,3 window=blackman"
        "in=a.h5:/f out=f2.h5 real pad=3x window=tukey:0.5")
    run windowed check "${cases[@]}"
    echo "$output"
    assert_success
}

@test "--check of padded and windowed transforms with every strategy, slab and pencil, 1 to 8 ranks" {
    oracle make a.h5 /c=7x6x9:complex128 /r=8x5x6:float64 /one=36:float64
    local np s
    for np in 1 2 3 4 5 6 7 8; do
        s=${STRATEGIES[np % 4]}
        fftshard "$np" -q --check --transpose="$s" --pad=2x --window=hann a.h5:/c c$np.h5
        fftshard "$np" -q --check --transpose="$s" --real --pad=11,8,2x a.h5:/r r$np.h5
        fftshard "$np" -q --check --transpose="$s" --pad=2x --window=blackman a.h5:/one o$np.h5
        [ "$np" -lt 2 ] ||
            fftshard "$np" -q --check --transpose="$s" --decomp=pencil --real --pad=2x \
                --window=tukey a.h5:/r p$np.h5
    done
}

@test "--mode=full, same, valid: every strategy, slab and pencil, 1 to 8 ranks, real and complex, odd and even" {
    oracle make a.h5 /a=9x7x6:float64 /b=4x5x3:float64 /e=8x6x4:float64 /d=3x4x2:float64 \
        /ca=7x8x5:complex128 /cb=4x3x5:complex128 /a1=41:float64 /b1=12:float64 \
        /s=10x7x6:float32 /t=3x4x3:float32
    local cases=() i=0 np op mode pair real decomp modes=(full same valid) ops=(convolve correlate)
    for np in 1 2 3 4 5 6 7 8; do
        for pair in a,b e,d ca,cb b,a a1,b1; do
            op=${ops[i % 2]} mode=${modes[i % 3]} real="" decomp=slab
            case $pair in c*) ;; *) [ $((i % 2)) = 0 ] || real=--real ;; esac
            [ "$np" -ge 2 ] && [ "$pair" != a1,b1 ] && [ $((i % 4)) = 1 ] && decomp=pencil
            fftshard "$np" -q $real --decomp=$decomp --transpose=${STRATEGIES[i % 4]} --$op \
                --mode=$mode "a.h5:/${pair%,*}" "a.h5:/${pair#*,}" o$i.h5
            cases+=("op=$op mode=$mode a=a.h5:/${pair%,*} b=a.h5:/${pair#*,} out=o$i.h5")
            i=$((i + 1))
        done
    done
    fftshard 3 -q --real --convolve --mode=full a.h5:/s a.h5:/t f1.h5
    fftshard 4 -q --correlate --mode=same a.h5:/s a.h5:/t f2.h5
    cases+=("op=convolve mode=full a=a.h5:/s b=a.h5:/t out=f1.h5"
        "op=correlate mode=same a=a.h5:/s b=a.h5:/t out=f2.h5")
    run windowed linear "${cases[@]}"
    echo "$output"
    assert_success
}
