#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# quickstart.sh: from a fresh Debian 12 machine to a verified first run.
# Installs the packages, builds fftshard, writes a sample of plane waves with
# fftshard-mkdata, transforms it on 2 ranks and checks with numpy that the
# spectrum has its peaks where the waves' attributes say; then measures the
# power spectrum of a Gaussian random field and draws it and the run's phase
# times with fftshard-plot. Run it from anywhere.
set -eu

cd "$(dirname "$0")/.."
top=$(pwd)

share/install-deps.sh
# A checkout needs autogen.sh to make configure; a release tarball has configure.
if [ -x autogen.sh ]; then
    ./autogen.sh
fi
./configure
make -j2

work=$(mktemp -d "${TMPDIR:-/tmp}/fftshard-quickstart.XXXXXX")
sample=$work/waves.h5
spectrum=$work/spectrum.h5

echo
echo "quickstart: a sample of 4 plane waves, written on 2 ranks"
mpiexec.mpich -n 2 "$top/src/fftshard-mkdata" --waves=4 --seed=7 64x48x40 "$sample"

echo
echo "quickstart: its FFT on 2 ranks"
mpiexec.mpich -n 2 "$top/src/fftshard" "$sample" "$spectrum"

echo
echo "quickstart: checking the spectrum with numpy"
# Debian's python3 with numpy and h5py, run outside mpiexec and without the
# variables of an MPI job.
env -u PMI_RANK -u PMI_SIZE -u PMI_FD -u PMI_PORT -u HYDRA_CONTROL_FD \
    /usr/bin/python3 - "$sample" "$spectrum" <<'PY'
import sys
import h5py
import numpy as np

sample, spectrum = sys.argv[1], sys.argv[2]
with h5py.File(sample, "r") as f:
    d = f["/data"]
    waves = d.attrs["wave_vectors"]
    amplitudes = d.attrs["wave_amplitudes"] @ np.array([1, 1j])
with h5py.File(spectrum, "r") as f:
    X = f["/data"][...]

# fftn of sum_j a_j exp(2 pi i k_j.n/N) is N a_j at k_j, zero elsewhere.
expected = np.zeros(X.shape, dtype=complex)
for k, a in zip(waves, amplitudes):
    expected[tuple(k)] += X.size * a
peaks = {tuple(int(i) for i in k) for k in np.argwhere(np.abs(X) > 1e-6 * np.abs(X).max())}
wanted = {tuple(int(i) for i in k) for k in waves}
error = np.abs(X - expected).max() / np.abs(expected).max()
for k, a in zip(waves, amplitudes):
    k = tuple(int(i) for i in k)
    print("  peak at %-14s %12.3f%+12.3fj  (N*a = %12.3f%+12.3fj)"
          % (k, X[k].real, X[k].imag, (X.size * a).real, (X.size * a).imag))
print("  peaks found at the wave vectors: %s; relative error %.1e" % (peaks == wanted, error))
if peaks != wanted or error > 1e-9:
    sys.exit("quickstart: the spectrum does not match the waves")
PY

echo
echo "quickstart: a Gaussian random field with P(k) = k^-2, its power spectrum on 2 ranks"
field=$work/field.h5
power=$work/power.h5
mpiexec.mpich -n 2 "$top/src/fftshard-mkdata" -q --type=float64 --power-law=-2 --box-size=100 \
    --seed=7 128x128x128 "$field"
mpiexec.mpich -n 2 "$top/src/fftshard" --real --spectrum-only --box-size=100 \
    --report="$work/report.json" "$field" "$power"
env -u PMI_RANK -u PMI_SIZE -u PMI_FD -u PMI_PORT -u HYDRA_CONTROL_FD \
    /usr/bin/python3 "$top/share/fftshard-plot" spectrum "$power" -o "$work/spectrum.png"
env -u PMI_RANK -u PMI_SIZE -u PMI_FD -u PMI_PORT -u HYDRA_CONTROL_FD \
    /usr/bin/python3 "$top/share/fftshard-plot" report "$work/report.json" -o "$work/phases.png"
echo "quickstart: drawn: $work/spectrum.png, $work/phases.png"

echo
echo "quickstart: success. The samples, the spectra and their pictures are in $work"
echo "quickstart: see README.md and 'man -l man/fftshard.1' for more."
