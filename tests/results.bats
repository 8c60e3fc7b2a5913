#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Results against numpy: fftshard's output must equal numpy.fft.fftn/ifftn of
# the input (tests/oracle.py states the tolerances) for shapes of 1 to 8 axes,
# every input type, 1 to 8 ranks, --axes subsets, every --norm both ways, and
# round trips. Each test runs fftshard a few times and checks every result in
# one oracle call (python start-up costs more than a small transform).

load helpers

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    CASES=()
}

# ---------------------------------------------------------------- shapes and rank counts

# bats test_tags=quick,openmpi
@test "7x5x3 complex128 on 4 ranks" {
    oracle make a.h5 7x5x3:complex128
    fs 4 a.h5 out.h5
    check_all
}

@test "2x9 on 5 ranks: more ranks than rows, lengths not dividing the rank count" {
    oracle make a.h5 2x9:complex128
    fs 5 a.h5 out.h5
    check_all
}

@test "3x40 on 8 ranks: more ranks than rows" {
    oracle make a.h5 3x40:complex128
    fs 8 a.h5 out.h5
    check_all
}

@test "1-D: prime length 17 on 3 ranks, length 2 on 5 ranks, length 1 on 2 ranks" {
    oracle make p.h5 17:complex128 -- two.h5 2:float64 -- one.h5 1:complex128
    fs 3 p.h5 p3.h5
    fs 5 two.h5 two5.h5
    fs 2 one.h5 one2.h5
    fs 2 p.h5 p2i.h5 --inverse
    check_all
}

# bats test_tags=openmpi
@test "2-D to 5-D with prime and uneven lengths on 2, 3, 4 and 5 ranks" {
    # 5x2x9 on 4 ranks: axis 1 is shorter than the rank count, axis 2 is not
    oracle make d2.h5 11x7:complex128 -- d3.h5 5x3x13:complex128 -- e3.h5 5x2x9:complex128 \
        -- d4.h5 6x5x7x2:complex128 -- d5.h5 3x2x5x1x4:complex128
    fs 2 d2.h5 o2.h5
    fs 3 d3.h5 o3.h5
    fs 4 e3.h5 p3.h5
    fs 4 d4.h5 o4.h5
    fs 5 d5.h5 o5.h5
    check_all
}

# bats test_tags=sanitized
@test "8-D small shapes on 3 and on 8 ranks" {
    oracle make a.h5 2x1x3x1x2x2x1x3:complex128 -- b.h5 3x2x1x2x3x1x2x2:complex128
    fs 3 a.h5 a3.h5
    fs 8 b.h5 b8.h5
    check_all
}

@test "axes of length 1" {
    oracle make a.h5 1x6x1x5:complex128 -- b.h5 4x1x3:complex128 -- c.h5 1x1:float64
    fs 2 a.h5 a2.h5
    fs 2 a.h5 a2b.h5 --axes=0,2
    fs 2 b.h5 b2.h5 --axes=1
    fs 3 c.h5 c3.h5
    check_all
}

@test "the same input on 1, 2, 3, 4, 5 and 8 ranks" {
    oracle make a.h5 13x11x3:complex128
    local np
    for np in 1 2 3 4 5 8; do
        fs "$np" a.h5 "out$np.h5"
    done
    check_all
}

@test "strided axes: odd lengths, lines left over after the last trip of 32, lines longer than the buffer" {
    # 37x45x3: axis 0 is 37 long with 135 lines beside each other (4 trips
    # of 32 and 7 left); 5000x40: lines of 5000 take fewer per trip.
    oracle make s1.h5 37x45x3:complex128 -- s2.h5 37x45x3:complex64 -- s3.h5 5000x40:complex128
    fs 3 s1.h5 o1.h5
    fs 2 s2.h5 o2.h5
    fs 2 s3.h5 o3.h5
    fs 1 s1.h5 o1i.h5 --inverse
    check_all
}

@test "a larger array: 48x36x20 float64 on 4 ranks" {
    oracle make a.h5 48x36x20:float64
    fs 4 a.h5 out.h5
    check_all
}

# ---------------------------------------------------------------- input types

@test "every floating input type: float32, float64, complex64, complex128" {
    oracle make f32.h5 11x6:float32 -- f64.h5 7x4x3:float64 -- c64.h5 6x7x5:complex64 \
        -- c128.h5 5x8:complex128
    fs 2 f32.h5 of32.h5
    fs 3 f64.h5 of64.h5
    fs 2 c64.h5 oc64.h5
    fs 2 c128.h5 oc128.h5
    fs 2 c64.h5 oc64i.h5 --inverse --axes=-1
    check_all
}

# bats test_tags=sanitized
@test "integer input types: int8 to int64, uint8 to uint64" {
    local t types=(int8 int16 int32 int64 uint8 uint16 uint32 uint64) specs=()
    for t in "${types[@]}"; do
        specs+=("/$t=5x4:$t")
    done
    oracle make ints.h5 "${specs[@]}"
    for t in "${types[@]}"; do
        fs 2 "ints.h5:/$t" "o$t.h5"
    done
    fs 3 ints.h5:/int16 oint16i.h5 --inverse --norm=ortho
    check_all
}

@test "chunked and compressed, big-endian, and soft-linked input datasets" {
    oracle make s.h5 /gz=9x8x5:complex128:gzip /be=6x7:float64:be /bec=5x6:complex64:be \
        /bei=10x3:int32:be,gzip '/link->/be'
    fs 3 s.h5:/gz o_gz.h5
    fs 2 s.h5:/be o_be.h5
    fs 2 s.h5:/bec o_bec.h5
    fs 2 s.h5:/bei o_bei.h5
    fs 2 s.h5:/link o_link.h5
    check_all
}

# ---------------------------------------------------------------- options

@test "--axes subsets: negative, a single axis 0, axes without 0, unsorted" {
    oracle make a.h5 6x5x4:complex128
    fs 3 a.h5 o12.h5 --axes=1,2
    fs 4 a.h5 o0.h5 --axes=0
    fs 2 a.h5 om1.h5 --axes=-1
    fs 2 a.h5 om10.h5 --axes=-1,0
    fs 2 a.h5 o20.h5 --axes=2,0
    fs 5 a.h5 o1.h5 --axes=1
    fs 2 a.h5 oall.h5 --axes=-3,-2,-1
    check_all
}

@test "--axes without axis 0 on 8 ranks: ranks owning nothing" {
    oracle make a.h5 3x40x5:complex128
    fs 8 a.h5 o.h5 --axes=1,2 --inverse
    check_all
}

@test "every --norm in both directions" {
    oracle make a.h5 9x4x3:complex128
    local norm
    for norm in backward ortho forward; do
        fs 2 a.h5 "f$norm.h5" "--norm=$norm"
        fs 2 a.h5 "i$norm.h5" "--norm=$norm" --inverse
    done
    fs 2 a.h5 default.h5
    fs 2 a.h5 idefault.h5 --inverse
    check_all
}

# bats test_tags=openmpi
@test "--inverse round trip gives back the input" {
    oracle make a.h5 7x6x5:complex128 -- s.h5 10x3:float32
    # forward then inverse, as the same norm on both sides expects
    fs 3 a.h5 fwd.h5
    fs 4 fwd.h5 back.h5:/data --inverse
    fs 2 a.h5 fwd_o.h5 --norm=ortho
    fs 2 fwd_o.h5 back_o.h5 --inverse --norm=ortho
    fs 2 a.h5 fwd_f.h5 --norm=forward --axes=0,2
    fs 2 fwd_f.h5 back_f.h5 --inverse --norm=forward --axes=2,0
    fs 2 s.h5 fwd_s.h5
    fs 2 fwd_s.h5 back_s.h5 --inverse
    check_all "in=fwd.h5 out=back.h5 ranks=4 inverse expect=a.h5" \
        "in=fwd_o.h5 out=back_o.h5 ranks=2 inverse norm=ortho expect=a.h5" \
        "in=fwd_f.h5 out=back_f.h5 ranks=2 inverse norm=forward axes=2,0 expect=a.h5" \
        "in=fwd_s.h5 out=back_s.h5 ranks=2 inverse expect=s.h5"
}

# bats test_tags=openmpi
@test "every strategy in --help gives the same result" {
    oracle make a.h5 9x7x5:complex128
    local names name
    names=$(fftshard 1 --help | sed -n 's/^ \{28\}\([a-z][a-z0-9_-]*\) .*/\1/p')
    [ -n "$names" ] || fail "no strategy found in --help"
    for name in $names; do
        fs 4 a.h5 "o_$name.h5" "--transpose=$name"
        fs 2 a.h5 "oi_$name.h5" "--transpose=$name" --inverse --axes=0,1
    done
    check_all
}

# ---------------------------------------------------------------- dataset paths

@test "output dataset path given explicitly: OUTPUT:/a/b/c creates the groups" {
    oracle make a.h5 5x4:complex128
    fs 2 a.h5 out.h5:/a/b/c
    fs 2 a.h5 out2.h5:/top/ --axes=1
    fs 2 "$PWD/a.h5" abs.h5:/x
    check_all
    run h5ls -r out.h5
    assert_success
    assert_line --regexp '^/a +Group$'
    assert_line --regexp '^/a/b +Group$'
    assert_line --regexp '^/a/b/c +Dataset \{5, 4\}$'
    run h5ls -r out2.h5
    assert_line --regexp '^/top +Dataset \{5, 4\}$'
}

@test "input dataset selected in a multi-dataset file; output keeps its path" {
    oracle make m.h5 /data=4x5:complex128 /grp/sub=5x3x2:float64 /z=7:complex64
    fs 2 m.h5:/grp/sub o1.h5 --axes=-3,2
    fs 2 m.h5:/z o2.h5
    fs 2 m.h5:/data o3.h5:/renamed
    fs 2 m.h5:/grp/sub/ o4.h5
    check_all
    run h5ls -r o1.h5
    assert_line --regexp '^/grp/sub +Dataset \{5, 3, 2\}$'
}

# ---------------------------------------------------------------- fftshard-mkdata

@test "fftshard-mkdata: the same file on 1 and 4 ranks" {
    mkdata 1 --quiet 9x6x5 n1.h5
    mkdata 4 --quiet 9x6x5 n4.h5
    run h5diff n1.h5 n4.h5
    assert_success
    mkdata 1 --quiet --type=float32 --seed=5 7x3 f1.h5:/g/x
    mkdata 4 --quiet --type=float32 --seed=5 7x3 f4.h5:/g/x
    run h5diff f1.h5 f4.h5
    assert_success
    mkdata 1 --quiet --type=complex64 --waves=4 --seed=2 5x6x7 w1.h5
    mkdata 4 --quiet --type=complex64 --waves=4 --seed=2 5x6x7 w4.h5
    run h5diff w1.h5 w4.h5
    assert_success
    # and the seed matters
    mkdata 1 --quiet --seed=2 9x6x5 s2.h5
    run h5diff -q n1.h5 s2.h5
    assert_failure
}

@test "fftshard-mkdata --waves: the spectrum peaks where the attributes say" {
    mkdata 2 --quiet --waves=5 --seed=7 12x10x6 c.h5
    fs 3 c.h5 oc.h5
    run oracle waves c.h5 oc.h5
    assert_success
    mkdata 2 --quiet --type=float64 --waves=3 --seed=3 9x8 r.h5
    fs 2 r.h5 or.h5
    run oracle waves r.h5 or.h5
    assert_success
    check_all
}
