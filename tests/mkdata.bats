#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# fftshard-mkdata --power-law: the Gaussian random field has the power
# spectrum it was asked for, measured by numpy from the definition in
# fftshard-mkdata(1) (VALUES), is the same file on any rank count, and bad
# values are refused in one line. The other kinds of values are in
# results.bats.

load helpers

# measure FILE: numpy's spectrum of the field against the attributes. Bins of
# one fundamental frequency 2 pi / max(L); in the middle of the k range (3
# fundamentals up to 2/3 of the Nyquist frequency) the fitted slope must be
# within 0.1 of the index and the mean of power / (A k^n) within 10% of 1;
# the power at k = 0 nothing but rounding.
measure() {
    python_serial - "$1" <<'PY'
import sys
import h5py
import numpy as np

with h5py.File(sys.argv[1], "r") as f:
    d = f["/data"]
    x = d[()]
    n_index = float(d.attrs["power_law_index"])
    amp = float(d.attrs["amplitude"])
    box = np.asarray(d.attrs["box_size"], dtype=float)
if x.dtype.kind == "c":
    assert np.all(x.imag == 0), "complex types must hold zero imaginary parts"
    x = x.real
x = x.astype(np.float64)
shape, npoints, volume = x.shape, x.size, np.prod(box)
X = np.fft.rfftn(x)
freqs = [np.fft.fftfreq(n, 1 / n) for n in shape[:-1]] + [np.fft.rfftfreq(shape[-1], 1 / shape[-1])]
grids = np.meshgrid(*[2 * np.pi * f / l for f, l in zip(freqs, box)], indexing="ij")
k = np.sqrt(sum(g**2 for g in grids))
# a half-spectrum mode stands for two but on the planes 0 and Nyquist of the last axis
weight = np.full(X.shape, 2.0)
weight[..., 0] = 1
if shape[-1] % 2 == 0:
    weight[..., -1] = 1
shell = np.rint(k / (2 * np.pi / box.max())).astype(int).ravel()
modes = np.bincount(shell, weight.ravel())
power = np.bincount(shell, (weight * np.abs(X)**2).ravel()) * volume / npoints**2 / np.maximum(modes, 1)
kmean = np.bincount(shell, (weight * k).ravel()) / np.maximum(modes, 1)
i = np.arange(len(modes))
middle = (i >= 3) & (kmean <= 2 / 3 * np.pi * min(n / l for n, l in zip(shape, box)))
slope = np.polyfit(np.log(kmean[middle]), np.log(power[middle]), 1)[0]
ratio = np.mean(power[middle] / (amp * kmean[middle]**n_index))
print(f"{middle.sum()} shells: slope {slope:.4f} (asked {n_index}), amplitude ratio {ratio:.4f}, "
      f"P(0) {power[0]:.2g}, mean {x.mean():.2g}")
# k = 0 holds only the rounding of the mean (float32's is the largest)
ok = abs(slope - n_index) < 0.1 and abs(ratio - 1) < 0.1 and power[0] < 1e-9 * power[middle].mean()
sys.exit(0 if ok and middle.sum() >= 8 else 1)
PY
}

# bats test_tags=quick
@test "--power-law: numpy measures the slope and the amplitude asked for (64^3)" {
    mkdata 2 --quiet --type=float64 --power-law=-2 --amplitude=3 --box-size=200 --seed=4 64x64x64 a.h5
    run measure a.h5
    assert_success
    # the units: a box of side 1000 gives another slope and k scale
    mkdata 2 --quiet --type=float32 --power-law=1.5 --amplitude=0.02 --box-size=1000 64x64x64 b.h5
    run measure b.h5
    assert_success
    # complex types: the same field in the real parts
    mkdata 3 --quiet --power-law=-1 --box-size=40,40,20 48x48x24 c.h5
    run measure c.h5
    assert_success
}

@test "--power-law: the same file on 1 and 3 ranks, uneven and odd shapes, 1-D to 4-D" {
    local case np
    for case in "float64 9x6x5" "float32 33x16" "complex64 7x5x4x3" "float64 31"; do
        set -- $case
        for np in 1 3; do
            mkdata "$np" --quiet --type="$1" --power-law=-2.5 --seed=9 "$2" "f$np.h5"
        done
        run h5diff f1.h5 f3.h5
        assert_success
        rm f1.h5 f3.h5
    done
    # and the seed matters
    mkdata 1 --quiet --type=float64 --power-law=-2.5 --seed=9 9x6x5 s9.h5
    mkdata 1 --quiet --type=float64 --power-law=-2.5 --seed=8 9x6x5 s8.h5
    run h5diff -q s9.h5 s8.h5
    assert_failure
}

@test "--power-law, --amplitude, --box-size: bad values give one line and status 2" {
    local args cases=(
        "--power-law=abc" "--power-law=nan" "--power-law=11"
        "--power-law=-2 --amplitude=0" "--power-law=-2 --amplitude=-1" "--power-law=-2 --amplitude=inf"
        "--power-law=-2 --box-size=0" "--power-law=-2 --box-size=1,2" "--power-law=-2 --box-size=1,,2"
        "--power-law=-2 --box-size=" "--amplitude=2" "--box-size=3" "--power-law=1 --waves=3"
    )
    for args in "${cases[@]}"; do
        # shellcheck disable=SC2086  # the options of a case split on purpose
        run --separate-stderr mkdata 2 $args 8x8x8 out.h5
        assert_equal "$status" "$EXIT_USAGE"
        [ "${#stderr_lines[@]}" -eq 2 ] || fail "$args: expected 2 lines, got: $stderr"
        [[ ${stderr_lines[0]} == "fftshard-mkdata: error: "?* ]] || fail "$args: $stderr"
        assert_equal "${stderr_lines[1]}" "Try 'fftshard-mkdata --help' for more information."
        [ ! -e out.h5 ] || fail "$args: wrote out.h5"
    done
    # a field beyond the range of the type: one line, no file
    run --separate-stderr mkdata 2 --type=float32 --power-law=10 --amplitude=1e30 --box-size=1e-30 8x8 out.h5
    assert_equal "$status" "$EXIT_USAGE"
    assert_equal "${#stderr_lines[@]}" 1
    [[ ${stderr_lines[0]} == "fftshard-mkdata: error: "*overflow* ]] || fail "$stderr"
    [ ! -e out.h5 ] || fail "wrote out.h5"
}

@test "a seed beyond 2^64-1 is refused, not clamped; an unknown short option inside a word is named as given" {
    local seed
    for seed in 18446744073709551616 99999999999999999999999; do
        run --separate-stderr mkdata 1 --seed="$seed" 4x4 out.h5
        assert_equal "$status" "$EXIT_USAGE"
        assert_equal "${stderr_lines[0]}" \
            "fftshard-mkdata: error: --seed=$seed: expected an integer from 0 to 18446744073709551615"
        [ ! -e out.h5 ] || fail "--seed=$seed wrote out.h5"
    done
    # the largest seed is still taken
    mkdata 1 --quiet --seed=18446744073709551615 4x4 top.h5
    # -4x4 (a shape taken for options): the word and the option, not the program's path
    run --separate-stderr mkdata 1 -4x4 out.h5
    assert_equal "$status" "$EXIT_USAGE"
    assert_equal "${stderr_lines[0]}" "fftshard-mkdata: error: '-4x4': unknown option '-4'"
    assert_equal "${stderr_lines[1]}" "Try 'fftshard-mkdata --help' for more information."
    run --separate-stderr mkdata 1 -qz 4x4 out.h5
    assert_equal "${stderr_lines[0]}" "fftshard-mkdata: error: '-qz': unknown option '-z'"
    run --separate-stderr mkdata 1 --bogus 4x4 out.h5
    assert_equal "${stderr_lines[0]}" "fftshard-mkdata: error: '--bogus': unknown option"
    [ ! -e out.h5 ] || fail "wrote out.h5"
}

# tables FILE...: P(k) in p.txt (a bump on a falling slope) and T(k) in
# t.txt, both on 0 .. 2 in 301 rows.
tables() {
    python_serial -c 'import numpy as np
k = np.linspace(0, 2, 301)
np.savetxt("p.txt", np.c_[k, 2e4 * np.exp(-k / 0.3) + 3e3 * np.exp(-((k - 0.8) / 0.1) ** 2) + 10],
           header="k P")
np.savetxt("t.txt", np.c_[k, 1 / (1 + (k / 0.4) ** 2)], header="k T")'
}

@test "--power-table: fftshard measures the table within its cosmic variance, and T^2 times it after --apply=transfer" {
    tables
    mkdata 3 --quiet --type=float64 --power-table=p.txt --box-size=100 --seed=5 32x32x32 g.h5
    fftshard 2 -q --power-spectrum --spectrum-only --box-size=100 g.h5 pk.h5
    run python_serial "$srcdir/tests/power_table_oracle.py" check pk.h5 p.txt 32x32x32 100
    echo "$output"
    assert_success
    fftshard 2 -q --real --apply=transfer:t.txt --box-size=100 g.h5 f.h5
    fftshard 3 -q --power-spectrum --spectrum-only --box-size=100 f.h5 pf.h5
    run python_serial "$srcdir/tests/power_table_oracle.py" check pf.h5 p.txt 32x32x32 100 t.txt
    echo "$output"
    assert_success
    # the filtered field's spectrum is not the table's
    run python_serial "$srcdir/tests/power_table_oracle.py" check pf.h5 p.txt 32x32x32 100
    assert_failure
    # the same file on 1 rank; the attributes say how it was made
    mkdata 1 --quiet --type=float64 --power-table=p.txt --box-size=100 --seed=5 32x32x32 g1.h5
    cmp <(h5dump -d /data g.h5 | tail -n +3) <(h5dump -d /data g1.h5 | tail -n +3)
    run python_serial -c 'import h5py; a = h5py.File("g.h5")["data"].attrs
print(a["generator"], a["power_table"], "power_law_index" in a)'
    assert_output "gaussian random field p.txt False"
}

@test "--power-table: a table that does not cover the grid's |k|, or is not k P, is refused in one line" {
    python_serial -c 'import numpy as np
np.savetxt("short.txt", np.c_[np.linspace(0.1, 1, 10), np.ones(10)])
np.savetxt("late.txt", np.c_[np.linspace(0.5, 3, 10), np.ones(10)])
np.savetxt("neg.txt", np.c_[np.linspace(0, 3, 10), np.linspace(1, -1, 10)])'
    printf '0 1\n0.5 2 3\n' > bad.txt
    local f
    for f in short late neg bad missing; do
        run --separate-stderr mkdata 2 --type=float64 --power-table=$f.txt --box-size=10 8x8x8 out.h5
        assert_equal "$status" "$EXIT_INPUT"
        assert_equal "${#stderr_lines[@]}" 1
        [[ ${stderr_lines[0]} == "fftshard-mkdata: error: --power-table=$f.txt: "* ]] || fail "$stderr"
        [ ! -e out.h5 ] || fail "$f: wrote out.h5"
    done
    run --separate-stderr mkdata 2 --power-table=short.txt 8x8x8 out.h5
    [[ ${stderr_lines[0]} == *"does not cover the grid's nonzero |k| from 0.78539816339744828 to 5.441398092702653"* ]] ||
        fail "$stderr"
    run --separate-stderr mkdata 2 --power-table=p.txt --power-law=-2 8x8x8 out.h5
    assert_equal "$status" "$EXIT_USAGE"
    run --separate-stderr mkdata 2 --power-table=p.txt --waves=2 8x8x8 out.h5
    assert_equal "$status" "$EXIT_USAGE"
}

@test "--power-table: a FIFO, a device, a directory, a huge file or a NUL byte is refused at once in one line, on 1 and 2 ranks" {
    mkfifo fifo
    mkdir dir
    printf '0 1\n10 1\0 5\n' >nul.txt
    # 2 GiB of a table and holes: sparse, it takes no room
    printf '0 1\n10 1\n' >huge.txt
    truncate -s 2G huge.txt
    local np c f fragment
    for np in 1 2; do
        for c in "fifo:not a regular file (a FIFO)" "/dev/zero:not a regular file (a device)" \
            "dir:is a directory" "huge.txt:larger than 1 GiB (2147483648 bytes)" \
            "nul.txt:line 2 holds a NUL byte"; do
            f=${c%%:*} fragment=${c#*:}
            run --separate-stderr timeout -k 5 20 "$MPIEXEC" -n "$np" "$FFTSHARD_MKDATA" --type=float64 \
                --power-table="$f" --box-size=10 8x8x8 out.h5 </dev/null
            [ "$status" -ne 124 ] && [ "$status" -ne 137 ] ||
                fail "--power-table=$f on $np ranks: no answer within 20 s"
            assert_equal "$status" "$EXIT_INPUT"
            assert_equal "${#stderr_lines[@]}" 1
            [[ ${stderr_lines[0]} == "fftshard-mkdata: error: --power-table=$f: $fragment"* ]] ||
                fail "$np ranks: $stderr"
            [ ! -e out.h5 ] || fail "$f on $np ranks: wrote out.h5"
        done
    done
    [ -p fifo ] || fail "the FIFO was replaced"
}
