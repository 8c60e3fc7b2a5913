#!/bin/sh
# run-tests.sh: install what the build and the tests need, build fftshard,
# run `make check` and `make distcheck`, then `make check` again on a build
# with AddressSanitizer and UndefinedBehaviorSanitizer (--enable-sanitizers)
# in _san/. Exits non-zero on any failure and prints the test logs when
# tests fail. Run it from anywhere.
set -eu

cd "$(dirname "$0")/.."

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

share/install-deps.sh
# A checkout needs autogen.sh to make configure; a release tarball has configure.
if [ -x autogen.sh ]; then
    ./autogen.sh
fi
./configure
make -j2

if ! make check; then
    echo "run-tests: make check failed; the test logs follow" >&2
    print_test_logs .
    exit 1
fi

if ! make distcheck; then
    echo "run-tests: make distcheck failed" >&2
    # distcheck leaves its build directory behind when it fails.
    for build in fftshard-*/_build/sub fftshard-*/_build; do
        [ -d "$build" ] && print_test_logs "$build"
    done
    exit 1
fi

# The sanitized build, in a directory of its own. configure refuses to build
# elsewhere while the source tree itself is configured: distclean it first.
make distclean
rm -rf _san
mkdir _san
cd _san
../configure --enable-sanitizers
make -j2
if ! make check; then
    echo "run-tests: make check of the sanitized build (_san) failed; the test logs follow" >&2
    print_test_logs .
    exit 1
fi
cd ..

echo "run-tests: make check, make distcheck and the sanitized make check passed"
