#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# install-deps.sh: install the Debian 12 packages fftshard needs to build,
# test and run. This is the one list of packages; share/quickstart.sh and
# share/run-tests.sh both call this script.
#
# Everything MPI here is MPICH. Parallel HDF5, the compiler wrapper and
# mpiexec must all be the same MPI: packages that bring in the other MPI
# re-point mpicc and mpiexec to it, so this list must only ever name
# MPICH builds.
#
# valgrind is for tests/valgrind.bats (make check); iproute2 (ip netns) for
# the hosts of tests/netns.bats (make check-net); python3-scipy for the
# scipy reference rows of `make bench` (tests/bench/bench.py); python3-matplotlib
# for share/fftshard-plot (tests/plot.bats); clang and its runtime
# libraries (libFuzzer, the sanitizers) for `make fuzz`; libsimgrid-dev (smpicc,
# smpirun; needs no MPI package) for `make simulate`.
#
# Idempotent: when every package is installed it changes nothing and needs
# no network; otherwise it runs apt-get update once, then apt-get install.
# Uses sudo only when not run as root.
set -eu

PACKAGES="build-essential autoconf automake libtool pkg-config
mpich libmpich-dev libhdf5-mpich-dev hdf5-tools libfftw3-dev
bats bats-assert bats-support
python3-numpy python3-h5py python3-scipy python3-matplotlib valgrind iproute2
clang libclang-rt-14-dev
libsimgrid-dev"

missing=
for pkg in $PACKAGES; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    case $status in
    "install ok installed") ;;
    *) missing="$missing $pkg" ;;
    esac
done

if [ -z "$missing" ]; then
    echo "install-deps: all packages are installed"
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    as_root=
elif command -v sudo >/dev/null 2>&1; then
    as_root=sudo
else
    echo "install-deps: need root to install:$missing" >&2
    echo "install-deps: run this script as root, or install sudo" >&2
    exit 1
fi

echo "install-deps: installing:$missing"
# $as_root (empty or sudo) and $missing are split into words on purpose.
# shellcheck disable=SC2086
$as_root env DEBIAN_FRONTEND=noninteractive apt-get update
# shellcheck disable=SC2086
$as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
