# SPDX-License-Identifier: GPL-3.0-or-later
# r2r.bash: cosine and sine transforms (--dct, --dst, --r2r) against
# scipy.fft, for tests/r2r.bats (make check) and tests/r2r-long.bats (the
# full matrix, make check-long). Load after helpers.

R2R_ORACLE=$srcdir/tests/r2r_oracle.py
KINDS=(dct1 dct2 dct3 dct4 dst1 dst2 dst3 dst4)
NORMS=(backward ortho forward)

# rr NP IN OUT [OPTIONS...]: run fftshard on NP ranks and queue the case
# for rr_check (one oracle call for many runs: python's start-up costs more
# than a small transform). The options the oracle must know are passed on.
rr() {
    local np=$1 in=$2 out=$3 opt key
    shift 3
    run fftshard "$np" --quiet "$@" "$in" "$out"
    [ "$status" -eq 0 ] || fail "fftshard -n $np $* $in $out: status $status: $output"
    local c="in=$in out=$out ranks=$np"
    for opt in "$@"; do
        case $opt in
        --inverse | --real) c+=" ${opt#--}" ;;
        --last-size=*) c+=" last=${opt#*=}" ;;
        --dct=* | --dst=* | --r2r=* | --axes=* | --norm=* | --precision=* | --transpose=*)
            key=${opt%%=*}
            c+=" ${key#--}=${opt#*=}"
            ;;
        esac
    done
    R2R_CASES+=("$c")
}

# rr_check [EXTRA CASES...]: every queued case against scipy.fft.
rr_check() {
    run python_serial "$R2R_ORACLE" check "${R2R_CASES[@]}" "$@"
    echo "$output"
    assert_success
    assert_line --regexp '^0 of [0-9]+ cases failed$'
    R2R_CASES=()
}

# kind_option KIND: the option that asks for KIND on every transformed axis
# (dct2 -> --dct=2).
kind_option() {
    echo "--${1:0:3}=${1:3}"
}

# rr_round_trip NP IN OPTIONS...: forward with OPTIONS, then a plain
# --inverse (--inverse --real after --real: kinds, axes, norm and size
# taken from the attributes) that must give IN back; both checked.
rr_round_trip() {
    local np=$1 in=$2 case real=()
    shift 2
    local tag=$RANDOM$RANDOM
    [[ " $* " != *" --real "* ]] || real=(--real)
    rr "$np" "$in" "f$tag.h5" "$@"
    case=${R2R_CASES[-1]}
    run fftshard "$np" --quiet --inverse "${real[@]}" "f$tag.h5" "b$tag.h5"
    [ "$status" -eq 0 ] || fail "--inverse of f$tag.h5: status $status: $output"
    case=${case/in=$in out=f$tag.h5/in=f$tag.h5 out=b$tag.h5}
    R2R_CASES+=("$case inverse recorded expect=$in")
}
