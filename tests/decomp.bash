# SPDX-License-Identifier: GPL-3.0-or-later
# decomp.bash: --real on the decompositions of tests/decomp_scan.py's CONFIGS,
# for tests/decompositions.bats (all of them, and --correlate on those whose
# first stage splits the halved last axis). Load after helpers.

# decomp_matrix all|first-real RUN...: each configuration's dry run must still
# show its class (else CONFIGS is stale: tests/decomp_scan.py scan prints it
# anew); then the RUNs on float64 inputs a and b of its shape, with its
# options, each against its numpy oracle:
#   check      --check: status 0, the result kept and numpy's rfftn
#   xi         --correlation-function: xi(r) of a, the transformed array beside it
#   cross      --cross --correlation-function: xi(r) of a with b, a's transform
#   apply      --apply=gaussian:1.5,deriv:R, R the halved axis (its Nyquist plane)
#   correlate  --correlate: ifftn(X_a conj X_b) / N
# Prints the configurations (the oracles name their files by number) and
# every failure; fails when anything failed.
decomp_matrix() {
    local selection=() rows=() shape np opts axes real cls i what op kind
    [ "$1" = all ] || selection=("$1")
    shift
    local make=() dry=() classes=() checks=() xis=() applies=() corrs=() bad=()
    mapfile -t rows < <(python_serial "$srcdir/tests/decomp_scan.py" configs "${selection[@]}")
    [ "${#rows[@]}" -gt 0 ] || fail "decomp_scan.py listed no configuration"
    for i in "${!rows[@]}"; do
        IFS=';' read -r shape np opts axes real cls <<<"${rows[i]}"
        # shellcheck disable=SC2086
        "$FFTSHARD" --dry-run --ranks="$np" --real --dtype=float64 --shape="$shape" \
            --report=- $opts >dry$i.json 2>/dev/null || true
        dry+=("dry$i.json")
        make+=(-- "a$i.h5" "/a=$shape:float64" -- "b$i.h5" "/b=$shape:float64")
    done
    oracle make "${make[@]:1}"
    mapfile -t classes < <(python_serial "$srcdir/tests/decomp_scan.py" class "${dry[@]}")
    for i in "${!rows[@]}"; do
        IFS=';' read -r shape np opts axes real cls <<<"${rows[i]}"
        what="$i: $shape on $np ranks ${opts:-(no options)}, $cls"
        echo "$what"
        [ "${classes[i]}" = "$cls" ] ||
            bad+=("$what: the dry run shows '${classes[i]}' (tests/decomp_scan.py scan)")
        op="gaussian:1.5,deriv:$real"
        for kind in "$@"; do
            # shellcheck disable=SC2086
            case $kind in
            check)
                decomp_run "$what: --check" fftshard "$np" -q --real --check $opts a$i.h5 c$i.h5 &&
                    checks+=("in=a$i.h5 out=c$i.h5 real axes=$axes ranks=$np") ;;
            xi)
                decomp_run "$what: --correlation-function" \
                    fftshard "$np" -q --real --correlation-function $opts a$i.h5 x$i.h5 &&
                    xis+=("in=a$i.h5 out=x$i.h5 axes=$axes field=real") ;;
            cross)
                decomp_run "$what: --cross --correlation-function" fftshard "$np" -q --real \
                    --cross --correlation-function $opts a$i.h5 b$i.h5 y$i.h5 &&
                    xis+=("in=a$i.h5,b$i.h5 out=y$i.h5 axes=$axes cross=1 field=real") ;;
            apply)
                decomp_run "$what: --apply" \
                    fftshard "$np" -q --real --apply="$op" $opts a$i.h5 p$i.h5 &&
                    applies+=("in=a$i.h5 out=p$i.h5 axes=$axes apply=$op") ;;
            correlate)
                decomp_run "$what: --correlate" \
                    fftshard "$np" -q --real --correlate $opts a$i.h5 b$i.h5 q$i.h5 &&
                    corrs+=("op=correlate a=a$i.h5 b=b$i.h5 out=q$i.h5 axes=$axes") ;;
            *) bad+=("decomp_matrix: no run $kind") ;;
            esac || true
        done
    done
    oracle_cases "$ORACLE" "${checks[@]}"
    oracle_cases "$srcdir/tests/xi_oracle.py" "${xis[@]}"
    oracle_cases "$srcdir/tests/apply_oracle.py" "${applies[@]}"
    oracle_cases "$srcdir/tests/combine_oracle.py" "${corrs[@]}"
    echo "${#rows[@]} configurations: $*"
    [ "${#bad[@]}" = 0 ] || {
        printf '%s\n' "${bad[@]}"
        fail "$(printf '%s\n' "${bad[@]}" | grep -c .) failures"
    }
}

# decomp_run WHAT COMMAND...: COMMAND; its failure (status, message) added
# to decomp_matrix's. Succeeds when COMMAND did.
decomp_run() {
    local what=$1
    shift
    run "$@"
    [ "$status" = 0 ] && return 0
    bad+=("$what: status $status: $output")
    return 1
}

# oracle_cases SCRIPT CASE...: SCRIPT's check of the cases (none: nothing),
# its failures added to decomp_matrix's.
oracle_cases() {
    local script=$1
    shift
    [ "$#" -gt 0 ] || return 0
    run python_serial "$script" check "$@"
    # each failure's first line (numpy continues its arrays on lines of their own)
    [ "$status" = 0 ] || bad+=("$(grep -Ev '^( |ok )' <<<"$output" | cut -c1-300)")
}
