#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# run-tests.sh: the CI run, in parts:
#   deps       share/install-deps.sh: what the build and the tests need
#   build      ./autogen.sh (in a checkout), ./configure, make -j2
#   check      make -j2 check: the suite but the long matrices and valgrind's
#   long       make -j2 check-long: the long matrices (pencils, batch axes,
#              spectra over every strategy and 1 to 8 ranks)
#   net        make check-net: runs across hosts made of network namespaces,
#              over TCP (tests/netns.bats; skipped unless root)
#   valgrind   make -j2 check-valgrind: every strategy under memcheck
#   distcheck  make -j2 distcheck-quick: the tarball builds, installs and
#              passes the quick slice of the suite (see Makefile.am)
#   san-build  ../configure --enable-sanitizers and make -j2 in _san/
#   san-check  make -j2 check-sanitized there: the C unit tests and the
#              sanitized slice under AddressSanitizer and UBSan
#   slurm      make check-slurm (MPICH): a one-node Slurm started by
#              tests/slurm/fixture.sh, the batch job under sbatch with
#              mpiexec and with srun --mpi=pmi2, a time limit, SIGTERM to
#              one rank of an srun step, make install into a prefix and
#              the batch job from it (tests/slurm.bats; skipped unless root)
#   openmpi    ../configure CC=mpicc.openmpi and make -j2 in _ompi/, then
#              make check-openmpi there: the openmpi slice (see
#              Makefile.am) under Open MPI's mpirun, with tests/slurm.bats
#              under srun --mpi=pmix and mpirun
# It stops at the first part that fails (printing the test logs when tests
# failed) and exits non-zero. At the end, also after a failure, it prints
# the time of each part, then as its last line the tests counted over all
# parts: "N passed, N failed", with ", N skipped" when tests were skipped.
# A part that fails without a failed test (deps, a build) counts as one
# failure, so that a failed run never ends with "0 failed". Run it from
# anywhere.
set -eu

cd "$(dirname "$0")/.."

PARTS="deps build check long net slurm valgrind distcheck san-build san-check openmpi"
started=$(date +%s)
passed=0
failed=0
skipped=0
# Each part's standard output is copied to $work/PART.out, for its counts;
# $work/times holds "PART SECONDS STATUS" for every part that ran.
work=$(mktemp -d)
: >"$work/times"
# automake's summaries without colour codes, to be counted.
AM_COLOR_TESTS=no
export AM_COLOR_TESTS

# m:ss of $1 seconds.
minutes() {
    printf '%d:%02d' $(($1 / 60)) $(($1 % 60))
}

# The closing report; the EXIT trap, so it runs however the script ends.
report() {
    status=$?
    # A failure outside any part (the script itself) is a failure too.
    if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
        failed=1
    fi
    echo
    echo "run-tests: time of each part (m:ss):"
    for p in $PARTS; do
        line=$(grep "^$p " "$work/times" || true)
        if [ -z "$line" ]; then
            printf '  %-10s %5s  not run\n' "$p" -
            continue
        fi
        # shellcheck disable=SC2086 # PART SECONDS STATUS
        set -- $line
        if [ "$3" -eq 0 ]; then
            printf '  %-10s %5s  ok\n' "$p" "$(minutes "$2")"
        else
            printf '  %-10s %5s  FAILED (status %d)\n' "$p" "$(minutes "$2")" "$3"
        fi
    done
    printf '  %-10s %5s\n' total "$(minutes $(($(date +%s) - started)))"
    rm -rf "$work"
    summary="$passed passed, $failed failed"
    [ "$skipped" -eq 0 ] || summary="$summary, $skipped skipped"
    echo "$summary"
    exit "$status"
}
trap report EXIT

# part NAME COMMAND...: run COMMAND as the part NAME: timed, its standard
# output copied to $work/NAME.out, its tests added to the counts. Returns
# COMMAND's status.
part() {
    name=$1
    shift
    echo "run-tests: ---- $name"
    t0=$(date +%s)
    # sh has no pipefail: the status goes through a file.
    {
        st=0
        "$@" || st=$?
        echo "$st" >"$work/$name.status"
    } | tee "$work/$name.out"
    st=$(cat "$work/$name.status")
    echo "$name $(($(date +%s) - t0)) $st" >>"$work/times"
    # automake prints "# PASS:  N" and so on once per make check.
    # shellcheck disable=SC2046 # three numbers
    set -- $(awk '$1 == "#" && ($2 == "PASS:" || $2 == "XFAIL:") { p += $3 }
        $1 == "#" && ($2 == "FAIL:" || $2 == "XPASS:" || $2 == "ERROR:") { f += $3 }
        $1 == "#" && $2 == "SKIP:" { s += $3 }
        END { print p + 0, f + 0, s + 0 }' "$work/$name.out")
    [ "$st" -eq 0 ] || [ "$2" -gt 0 ] || set -- "$1" 1 "$3"
    passed=$((passed + $1))
    failed=$((failed + $2))
    skipped=$((skipped + $3))
    return "$st"
}

# The logs of a failed `make check` run in the build directory $1:
# test-suite.log when automake wrote one, else every failed test's own log.
print_test_logs() {
    dir=$1
    found=
    for log in "$dir/test-suite.log" "$dir/tests/test-suite.log"; do
        if [ -f "$log" ]; then
            echo "======== $log"
            cat "$log"
            found=yes
        fi
    done
    [ -n "$found" ] && return 0
    find "$dir" -name '*.trs' -type f | sort | while IFS= read -r trs; do
        if grep -Eq '^:test-result: (FAIL|XPASS|ERROR)' "$trs"; then
            echo "======== ${trs%.trs}.log"
            cat "${trs%.trs}.log" 2>/dev/null || echo "(no log)"
        fi
    done
}

# The commands of the parts. (Chained with &&: set -e does not act inside
# a function called where its status is tested.)
build() {
    # A checkout needs autogen.sh to make configure; a release tarball has configure.
    if [ -x autogen.sh ]; then
        ./autogen.sh || return
    fi
    ./configure && make -j2
}

# The Open MPI build beside the others (the source tree is distcleaned by
# then) and its slice of the suite.
ompi_build_check() {
    rm -rf _ompi && mkdir _ompi &&
        (cd _ompi && ../configure CC=mpicc.openmpi && make -j2 && make -j2 check-openmpi)
}

# configure refuses to build elsewhere while the source tree itself is
# configured: distclean it first.
san_build() {
    make distclean && rm -rf _san && mkdir _san &&
        (cd _san && ../configure --enable-sanitizers && make -j2)
}

part deps share/install-deps.sh
part build build

if ! part check make -j2 check; then
    echo "run-tests: make check failed; the test logs follow" >&2
    print_test_logs .
    exit 1
fi

if ! part long make -j2 check-long; then
    echo "run-tests: make check-long failed; the test logs follow" >&2
    print_test_logs .
    exit 1
fi

if ! part net make check-net; then
    echo "run-tests: make check-net failed; the test logs follow" >&2
    print_test_logs .
    exit 1
fi

if ! part slurm make check-slurm; then
    echo "run-tests: make check-slurm failed; the test logs follow" >&2
    print_test_logs .
    exit 1
fi

if ! part valgrind make -j2 check-valgrind; then
    echo "run-tests: make check-valgrind failed; the test logs follow" >&2
    print_test_logs .
    exit 1
fi

if ! part distcheck make -j2 distcheck-quick; then
    echo "run-tests: make distcheck-quick failed" >&2
    # distcheck leaves its build directory behind when it fails.
    for build in fftshard-*/_build/sub fftshard-*/_build; do
        [ -d "$build" ] && print_test_logs "$build"
    done
    exit 1
fi

# The sanitized build in _san/ finds this tree's test logs through VPATH
# and would take them for its own results: they have been read above.
rm -f tests/*.log tests/*.trs test-suite.log
part san-build san_build
if ! part san-check make -C _san -j2 check-sanitized; then
    echo "run-tests: make check-sanitized of the sanitized build (_san) failed; the test logs follow" >&2
    print_test_logs _san
    exit 1
fi

if ! part openmpi ompi_build_check; then
    echo "run-tests: the Open MPI build (_ompi) failed; the test logs follow" >&2
    print_test_logs _ompi
    exit 1
fi

echo "run-tests: make check, make check-long, make check-net, make check-slurm, make check-valgrind, make distcheck-quick, the sanitized make check-sanitized and the Open MPI build's make check-openmpi passed"
