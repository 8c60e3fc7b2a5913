#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# The --help texts equal their stored copies (a change to them is a
# deliberate act: update tests/help.txt and the man page with it), and every
# long option they show is documented in the man page; the README's
# formulas agree with what the command writes.

load helpers

# bats file_tags=quick

# long_options_missing_from MANPAGE: print the long options of the help text
# on stdin that MANPAGE does not mention (troff writes them \-\-name).
long_options_missing_from() {
    local man=$1 text option
    [ -s "$man" ] || { echo "(the man page $man is missing or empty)"; return; }
    text=$(sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$man")
    for option in $(grep -o -- '--[a-z][a-z-]*' | sort -u); do
        grep -qE -- "${option}([^a-z-]|\$)" <<<"$text" || echo "$option"
    done
}

@test "fftshard --help equals tests/help.txt" {
    fftshard 1 --help >help.out
    diff -u "$srcdir/tests/help.txt" help.out ||
        fail "--help differs from tests/help.txt (diff above)"
}

@test "every long option of fftshard --help is in man/fftshard.1" {
    local missing
    missing=$(fftshard 1 --help | long_options_missing_from "$srcdir/man/fftshard.1")
    [ -z "$missing" ] || fail "not in man/fftshard.1: $missing"
}

@test "fftshard-mkdata --help equals tests/mkdata-help.txt" {
    mkdata 1 --help >help.out
    diff -u "$srcdir/tests/mkdata-help.txt" help.out ||
        fail "--help differs from tests/mkdata-help.txt (diff above)"
}

@test "every long option of fftshard-mkdata --help is in man/fftshard-mkdata.1" {
    local missing
    missing=$(mkdata 1 --help | long_options_missing_from "$srcdir/man/fftshard-mkdata.1")
    [ -z "$missing" ] || fail "not in man/fftshard-mkdata.1: $missing"
}

# The default strategy's order of expected speed is written once, in the
# strategy table (src/exchange/exchange.c): --help lists the strategies in
# that order, and the man page's sentence names the same order.
@test "every long option of fftshard-plot --help, and of each command's, is in man/fftshard-plot.1" {
    local plot=${FFTSHARD_PLOT:-$srcdir/share/fftshard-plot} missing
    missing=$(for command in "" spectrum xi report; do
        # shellcheck disable=SC2086  # no command: the program's own --help
        python_serial "$plot" $command --help
    done | long_options_missing_from "$srcdir/man/fftshard-plot.1")
    [ -z "$missing" ] || fail "not in man/fftshard-plot.1: $missing"
}

@test "the default strategy order: --help's list is the strategy table's and the man page's" {
    local table help man
    table=$(sed -n '/^#define STRATEGIES(X)/,/^$/p' "$srcdir/src/exchange/exchange.c" |
        grep -o 'X(fs_exchange_[a-z0-9_]*)' | sed -e 's/^X(fs_exchange_//' -e 's/)$//' | tr '\n' ' ')
    help=$(fftshard 1 --help | sed -n '/--transpose=NAME/,/--seed=/p' |
        grep -E '^ {28}[a-z0-9_]+ ' | awk '$1 != "auto" && $1 != "default" { print $1 }' | tr '\n' ' ')
    man=$(grep -A1 '^\.\\" The order of the strategy table' "$srcdir/man/fftshard.1" | sed -n 2p |
        tr -d ',.' | tr ' ' '\n' | grep . | tr '\n' ' ')
    [ -n "$table" ] && [ "$(wc -w <<<"$table")" -ge 4 ] || fail "no strategy table found: '$table'"
    assert_equal "$help" "$table"
    assert_equal "$man" "$table"
}

# The front page's formulas are the man page's: the README's kinetic energy
# per shell, applied to what its command writes, sums to 0.5 <|u|^2> (numpy,
# from the fields themselves).
@test "the README's E(k) line sums to the mean kinetic energy 0.5 <|u|^2>" {
    local line formula
    line=$(grep -F 'snap.h5:/u snap.h5:/v snap.h5:/w ek.h5' "$srcdir/README.md")
    formula=$(sed -n 's/.*# E_i = \(.*\) (N points.*/\1/p' <<<"$line")
    [ -n "$formula" ] || fail "no E_i formula on the README's line: $line"
    [[ "$line" == *"fftshard --real --spectrum-only snap.h5:/u snap.h5:/v snap.h5:/w ek.h5"* ]] ||
        fail "the README's command changed: $line"
    python_serial - <<'PY'
import h5py, numpy as np
rng = np.random.default_rng(7)
with h5py.File("snap.h5", "w") as f:
    for c in "uvw":
        f[c] = rng.standard_normal((16, 12, 10)) + 0.3
PY
    fftshard 2 -q --real --spectrum-only snap.h5:/u snap.h5:/v snap.h5:/w ek.h5
    FORMULA=$formula python_serial - <<'PY'
import os, h5py, numpy as np
with h5py.File("snap.h5", "r") as f:
    u, v, w = (f[c][()] for c in "uvw")
with h5py.File("ek.h5", "r") as f:
    power, modes = f["power_spectrum/power"][()], f["power_spectrum/modes"][()]
N = u.size
E = eval(os.environ["FORMULA"], {"power": power, "modes": modes, "N": N, "np": np})
want = 0.5 * np.mean(u**2 + v**2 + w**2)
assert abs(E.sum() - want) <= 1e-12 * want, (E.sum(), want)
print("sum", E.sum(), "== 0.5 <|u|^2>", want)
PY
}
