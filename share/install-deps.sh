#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# install-deps.sh: install the Debian 12 packages fftshard needs to build,
# test and run. This is the one list of packages; share/quickstart.sh and
# share/run-tests.sh both call this script.
#
# The build of the quick start is MPICH's, called by its flavour's names
# (mpicc.mpich, mpiexec.mpich, pkg-config hdf5-mpich). Open MPI and its
# parallel HDF5 are here for the Open MPI build of share/run-tests.sh (by
# mpicc.openmpi, mpirun.openmpi, hdf5-openmpi), and slurm-wlm, slurmd,
# slurmctld and munge for its one-node Slurm (tests/slurm/fixture.sh).
# Installing Open MPI would move Debian's unsuffixed mpicc, mpirun, mpiexec
# and hdf5.pc to it (its alternatives rank higher): the alternatives "mpi"
# and "mpirun" are set to MPICH's first (manual mode, which later installs
# keep), unless an administrator chose otherwise. Never install
# libfftw3-mpi-dev, python3-mpi4py or python3-h5py-mpi: they pull in
# another MPI's runtime under the oracle's Python.
#
# valgrind is for tests/valgrind.bats (make check); iproute2 (ip netns) for
# the hosts of tests/netns.bats (make check-net); python3-scipy for the
# oracle of the cosine and sine transforms (tests/r2r.bats, r2r-long.bats)
# and the scipy reference rows of `make bench` (tests/bench/bench.py); python3-matplotlib
# for share/fftshard-plot (tests/plot.bats); clang and its runtime
# libraries (libFuzzer, the sanitizers) for `make fuzz`; libsimgrid-dev (smpicc,
# smpirun; needs no MPI package) for `make simulate`; python3-netcdf4,
# python3-xarray and python3-h5netcdf for the netCDF and xarray reads of
# tests/netcdf.bats.
#
# Idempotent: when every package is installed it changes nothing and needs
# no network; otherwise it runs apt-get update once, then apt-get install.
# Uses sudo only when not run as root.
set -eu

PACKAGES="build-essential autoconf automake libtool pkg-config
mpich libmpich-dev libhdf5-mpich-dev hdf5-tools libfftw3-dev
openmpi-bin libopenmpi-dev libhdf5-openmpi-dev
slurm-wlm slurmd slurmctld munge
bats bats-assert bats-support
python3-numpy python3-h5py python3-scipy python3-matplotlib valgrind iproute2
python3-netcdf4 python3-xarray python3-h5netcdf
clang libclang-rt-14-dev
libsimgrid-dev"

# Keep the unsuffixed MPI commands MPICH's (see above): an alternative in
# auto mode is set to MPICH's member, which Open MPI's install then leaves.
keep_mpich_alternatives() {
    for pair in mpi:/usr/bin/mpicc.mpich mpirun:/usr/bin/mpirun.mpich; do
        name=${pair%%:*}
        path=${pair#*:}
        [ -e "$path" ] || continue
        if update-alternatives --query "$name" 2>/dev/null | grep -q '^Status: auto'; then
            $as_root update-alternatives --set "$name" "$path" >/dev/null
        fi
    done
}

missing=
for pkg in $PACKAGES; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    case $status in
    "install ok installed") ;;
    *) missing="$missing $pkg" ;;
    esac
done

if [ "$(id -u)" -eq 0 ]; then
    as_root=
elif command -v sudo >/dev/null 2>&1; then
    as_root=sudo
elif [ -z "$missing" ]; then
    echo "install-deps: all packages are installed"
    exit 0
else
    echo "install-deps: need root to install:$missing" >&2
    echo "install-deps: run this script as root, or install sudo" >&2
    exit 1
fi

if [ -z "$missing" ]; then
    keep_mpich_alternatives
    echo "install-deps: all packages are installed"
    exit 0
fi

echo "install-deps: installing:$missing"
# $as_root (empty or sudo) and $missing are split into words on purpose.
# shellcheck disable=SC2086
$as_root env DEBIAN_FRONTEND=noninteractive apt-get update
# shellcheck disable=SC2086
$as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
keep_mpich_alternatives
