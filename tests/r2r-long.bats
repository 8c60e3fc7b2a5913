#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# The full matrix of cosine and sine transforms against scipy.fft (make
# check-long; tests/r2r.bats runs a sample of it in make check): every type
# and norm forward, inverse and in round trips on odd and even shapes, on
# 1 to 8 ranks; every strategy on slabs and pencils; batch axes in every
# position; mixed with complex, real and complex-to-real FFT axes; single
# precision; the edge sizes 1 and 2 along every axis (tests/r2r_oracle.py:
# 1e-12 double, 1e-5 single).

load helpers
load r2r

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    R2R_CASES=()
}

@test "every type and norm, forward and inverse, odd and even shapes, 1 to 8 ranks" {
    oracle make e.h5 8x6x10:float64 -- o.h5 7x9x5:float64
    local i=0 k n in
    for k in "${KINDS[@]}"; do
        for n in "${NORMS[@]}"; do
            for in in e.h5 o.h5; do
                rr $((i % 8 + 1)) "$in" "f$i.h5" "$(kind_option "$k")" --norm="$n"
                rr $(((i + 3) % 8 + 1)) "$in" "b$i.h5" --inverse "$(kind_option "$k")" --norm="$n"
                i=$((i + 1))
            done
        done
    done
    rr_check
}

@test "round trips of every type and norm through the recorded attributes, 1 to 8 ranks" {
    oracle make a.h5 9x8x7:float64 -- z.h5 6x7x4:complex128
    local i=0 k n
    for k in "${KINDS[@]}"; do
        for n in "${NORMS[@]}"; do
            rr_round_trip $((i % 8 + 1)) a.h5 "$(kind_option "$k")" --norm="$n"
            i=$((i + 1))
        done
        rr_round_trip $((i % 7 + 2)) z.h5 --r2r=0:"$k",2:"${KINDS[(i + 3) % 8]}" --norm="${NORMS[i % 3]}"
    done
    rr_check
}

@test "every strategy on slabs and pencils, 2 to 8 ranks, kinds alone and mixed" {
    oracle make a.h5 9x10x8:float64 -- z.h5 8x6x9:complex128
    local s np d i=0
    for s in alltoall random xorswap pairwise auto; do
        for np in 2 3 4 6 8; do
            for d in slab pencil; do
                rr "$np" a.h5 "a$i.h5" "$(kind_option "${KINDS[i % 8]}")" --decomp="$d" --transpose="$s" \
                    --norm="${NORMS[i % 3]}"
                rr "$np" z.h5 "z$i.h5" --r2r=0:"${KINDS[(i + 1) % 8]}",2:"${KINDS[(i + 5) % 8]}" \
                    --decomp="$d" --transpose="$s"
                i=$((i + 1))
            done
        done
    done
    rr_check
}

@test "batch axes in every position, slabs and pencils, 1 to 8 ranks" {
    oracle make a.h5 4x6x5x7:float64
    local axes i=0
    for axes in 0 1 2 3 0,1 1,2 2,3 0,3 0,1,2 1,2,3 0,2,3; do
        rr $((i % 8 + 1)) a.h5 "s$i.h5" --axes="$axes" "$(kind_option "${KINDS[i % 8]}")"
        rr $(((i + 4) % 8 + 1)) a.h5 "m$i.h5" --axes="$axes" --r2r="${axes%%,*}:${KINDS[(i + 2) % 8]}"
        [ "$((i % 8 + 1))" -lt 2 ] ||
            rr $((i % 7 + 2)) a.h5 "p$i.h5" --axes="$axes" --decomp=pencil --dst=2
        i=$((i + 1))
    done
    rr_check
}

@test "mixed with rfftn and irfftn: every kind beside the halved axis, last or not, 1 to 8 ranks" {
    oracle make a.h5 6x7x8:float64 -- h.h5 6x7x5:complex128
    local i=0 k
    for k in "${KINDS[@]}"; do
        rr $((i % 8 + 1)) a.h5 "r$i.h5" --r2r=0:"$k" --real --norm="${NORMS[i % 3]}"
        rr $(((i + 2) % 8 + 1)) a.h5 "q$i.h5" --r2r=2:"$k" --real --axes=2,0,1
        rr $(((i + 5) % 8 + 1)) h.h5 "c$i.h5" --r2r=1:"$k" --real --inverse --last-size=9 \
            --norm="${NORMS[(i + 1) % 3]}"
        rr_round_trip $(((i + 1) % 8 + 1)) a.h5 --r2r=1:"$k" --real --axes=0,1
        i=$((i + 1))
    done
    rr_check
}

@test "single precision: every kind on float32 and complex64 at 1e-5, 1 to 8 ranks" {
    oracle make f.h5 7x8x6:float32 -- c.h5 6x5x7:complex64
    local i=0 k
    for k in "${KINDS[@]}"; do
        rr $((i % 8 + 1)) f.h5 "f$i.h5" "$(kind_option "$k")" --norm="${NORMS[i % 3]}"
        rr $(((i + 4) % 8 + 1)) c.h5 "c$i.h5" --r2r=1:"$k" --inverse
        i=$((i + 1))
    done
    rr_check
}

@test "lengths 1 and 2 along every axis, every kind that takes them, 1 to 4 ranks" {
    oracle make a.h5 1x2x3:float64 -- b.h5 2x1x4:float64 -- c.h5 3x2x1:complex128
    local i=0 k in
    for k in "${KINDS[@]}"; do
        for in in a.h5 b.h5 c.h5; do
            if [ "$k" = dct1 ]; then
                # only the axes of two points or more
                case $in in
                a.h5) rr $((i % 4 + 1)) "$in" "o$i.h5" --r2r=1:dct1,2:dct1 ;;
                b.h5) rr $((i % 4 + 1)) "$in" "o$i.h5" --r2r=0:dct1,2:dct1 --norm=ortho ;;
                c.h5) rr $((i % 4 + 1)) "$in" "o$i.h5" --r2r=0:dct1,1:dct1 --inverse ;;
                esac
            else
                rr $((i % 4 + 1)) "$in" "o$i.h5" "$(kind_option "$k")" --norm="${NORMS[i % 3]}"
            fi
            i=$((i + 1))
        done
    done
    rr_check
}
