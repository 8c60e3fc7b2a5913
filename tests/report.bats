#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# --report (the JSON report), the summary, --progress, and the parallel
# prefix broadcast behind the offsets: the report parses, its offsets are the
# hyperslab starts and the running sums of the element counts, phase times
# add up, byte counts balance, and a failed run leaves no report behind.

load helpers

# json FILE EXPR [ARGS...]: print a Python expression on the parsed report
# `r` (ARGS are sys.argv[2:]).
json() {
    local file=$1 expr=$2
    shift 2
    python_serial -c "import json, sys; r = json.load(open(sys.argv[1])); print($expr)" "$file" "$@"
}

# bats test_tags=sanitized
@test "13x7x4 on 5 ranks: offsets 0,3,6,9,11 are the hyperslab starts; result equals numpy" {
    oracle make x.h5 13x7x4:float64
    run --separate-stderr fftshard 5 --quiet --report=r.json x.h5 y.h5
    assert_success
    run oracle check "in=x.h5 out=y.h5 ranks=5"
    assert_success
    run python_serial -m json.tool r.json
    assert_success
    assert_equal "$(json r.json '[p["offset"] for p in r["per_rank"]]')" "[0, 3, 6, 9, 11]"
    assert_equal "$(json r.json '[p["input_start"] for p in r["per_rank"]]')" \
        "[[0, 0, 0], [3, 0, 0], [6, 0, 0], [9, 0, 0], [11, 0, 0]]"
    assert_equal "$(json r.json '[p["input_count"][0] for p in r["per_rank"]]')" "[3, 3, 3, 2, 2]"
    # After the exchange the split is along axis 1 (7 over 5 ranks).
    assert_equal "$(json r.json '[p["output_start"][1] for p in r["per_rank"]]')" "[0, 2, 4, 5, 6]"
    assert_equal "$(json r.json 'r["decomposition"]')" \
        "{'type': 'slab', 'split_axis_before': 0, 'split_axis_after': 1, 'grid': [5, 1], 'stages': [[0, -1], [1, -1]]}"
    assert_equal "$(json r.json '(r["schema"], r["ranks"], r["shape"], r["dtype"], r["transform"])')" \
        "('fftshard-report/1', 5, [13, 7, 4], 'float64', 'c2c')"
}

@test "element offsets and prefixes are the scans of the element counts (uneven, idle ranks)" {
    oracle make a.h5 11x5x3:complex128 -- b.h5 3x9x2:complex64
    fftshard 4 --quiet --report=a.json a.h5 ao.h5
    fftshard 5 --quiet --report=b.json --transpose=xorswap b.h5 bo.h5
    local f
    for f in a.json b.json; do
        run json "$f" '
all(p["element_offset"] == sum(q["elements"] for q in r["per_rank"][:i])
    and p["prefix"] == sum(q["elements"] for q in r["per_rank"][:i + 1])
    for i, p in enumerate(r["per_rank"]))
and r["prefix"]["elements"] == [p["prefix"] for p in r["per_rank"]]
and r["prefix"]["output_elements"][-1] == r["per_rank"][-1]["prefix"]
and sum(p["elements"] for p in r["per_rank"]) == __import__("math").prod(r["shape"])'
        assert_output True
    done
    # 3 rows on 5 ranks: two ranks read nothing.
    assert_equal "$(json b.json '[p["elements"] for p in r["per_rank"]]')" "[18, 18, 18, 0, 0]"
}

# bats test_tags=openmpi
@test "phase times add up to no more than the total; bytes sent and received balance" {
    oracle make a.h5 12x10x6:complex128
    local s
    for s in alltoall random xorswap pairwise; do
        fftshard 3 --quiet --report="$s.json" --transpose="$s" a.h5 "$s.h5"
        run json "$s.json" '
all(sum(p["seconds"][k] for k in ("read", "plan", "fft", "exchange", "operate", "write", "check", "commit"))
    <= p["seconds"]["total"] * (1 + 1e-9) + 1e-6 for p in r["per_rank"])
and all(p["seconds"]["total"] > 0 for p in r["per_rank"])
and sum(p["bytes_sent"] for p in r["per_rank"]) == r["exchange"]["bytes_sent"]
    == sum(p["bytes_received"] for p in r["per_rank"]) == r["exchange"]["bytes_received"] > 0
and r["prefix"]["bytes_sent"][-1] == r["exchange"]["bytes_sent"]
and r["strategy"]["name"] == sys.argv[2]' "$s"
        assert_output True
    done
}

@test "min <= mean <= max for every phase, imbalance = max/mean, rates are consistent" {
    oracle make a.h5 16x8x8:complex128
    fftshard 4 --quiet --report=r.json a.h5 o.h5
    run json r.json '
all(v["min"] <= v["mean"] * (1 + 1e-12) and v["mean"] <= v["max"] * (1 + 1e-12)
    and (v["mean"] == 0 or abs(v["imbalance"] - v["max"] / v["mean"]) < 1e-6)
    for v in r["phases"].values())
and set(r["phases"]) == {"read", "paint", "plan", "fft", "exchange", "operate", "write", "check", "commit", "total"}
and abs(r["flops"] - 5 * 1024 * 10) < 1e-6
and r["memory"]["peak_bytes_max"] >= max(p["peak_memory_bytes"] for p in r["per_rank"]) > 0'
    assert_output True
}

@test "the report of a failed run is not written; an existing report stays unchanged" {
    huge_input big.h5
    echo '{"old": true}' > r.json
    local before
    before=$(checksum r.json)
    run --separate-stderr "$MPIEXEC" -n 2 "$FFTSHARD" --quiet --in-memory --transpose=xorswap --report=r.json \
        big.h5 out.h5
    assert_error "$EXIT_RUNTIME" "out of memory"
    assert_equal "$(checksum r.json)" "$before"
    [ ! -e out.h5 ] || fail "a failed run left out.h5"
    assert_no_temporaries
}

@test "an unwritable report path fails before any work (exit 4); --report may not be an operand (exit 4)" {
    oracle make a.h5 4x4:complex128
    run --separate-stderr fftshard 2 --report=nodir/r.json a.h5 o.h5
    assert_error "$EXIT_OUTPUT" "nodir/r.json"
    [ ! -e o.h5 ] || fail "the output was written although the report cannot be"
    assert_no_temporaries
    run --separate-stderr fftshard 2 --report=o.h5 a.h5 o.h5
    assert_error "$EXIT_OUTPUT" "--report=o.h5" "output"
    run --separate-stderr fftshard 2 --report=./a.h5 a.h5 o.h5
    assert_error "$EXIT_OUTPUT" "input"
    run --separate-stderr fftshard 2 --report= a.h5 o.h5
    assert_error "$EXIT_USAGE" "--report"
    [ ! -e o.h5 ] || fail "a refused run wrote the output"
}

@test "an existing report is replaced without --force" {
    oracle make a.h5 5x4:complex128
    echo old > r.json
    fftshard 2 --quiet --report=r.json a.h5 o.h5
    run json r.json 'r["schema"]'
    assert_output fftshard-report/1
}

# bats test_tags=openmpi
@test "the summary: phase table with max/mean, rates, memory; one copy on 4 ranks" {
    oracle make a.h5 8x8x8:complex128
    run --separate-stderr fftshard 4 a.h5 o.h5
    assert_success
    [ "$(grep -c '^fftshard: 8x8x8 complex128' <<<"$stderr")" -eq 1 ] || fail "$stderr"
    grep -Eq '^  phase +min s +mean s +max s max/mean$' <<<"$stderr" || fail "$stderr"
    local ph
    for ph in read plan fft exchange write total; do
        [ "$(grep -Ec "^  $ph +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$" <<<"$stderr")" -eq 1 ] ||
            fail "phase $ph: $stderr"
    done
    grep -q 'GFlop/s' <<<"$stderr" && grep -q 'peak memory' <<<"$stderr" || fail "$stderr"
    run --separate-stderr fftshard 4 --quiet --force a.h5 o.h5
    assert_success
    [ -z "$stderr" ] || fail "--quiet printed: $stderr"
}

@test "--progress: one line per phase from one rank; none with --quiet or when not a terminal" {
    oracle make a.h5 9x8x7:complex128
    run --separate-stderr fftshard 4 --progress a.h5 o.h5
    assert_success
    local progress
    progress=$(grep '^fftshard: progress: ' <<<"$stderr")
    [ "$(grep -c ' read ' <<<"$progress")" -eq 1 ] || fail "$stderr"
    [ "$(grep -c ' exchange ' <<<"$progress")" -eq 1 ] || fail "$stderr"
    [ "$(grep -c ' write ' <<<"$progress")" -eq 1 ] || fail "$stderr"
    [ "$(grep -c ' fft ' <<<"$progress")" -eq 2 ] || fail "$stderr"
    grep -Evq '^fftshard: progress: (read|fft|exchange|write) +100\.0% +[0-9.]+ (GB|GFlop)/s +[0-9.]+ s$' \
        <<<"$progress" && fail "malformed progress line: $progress"
    run --separate-stderr fftshard 4 --force a.h5 o.h5
    assert_success
    grep -q 'progress' <<<"$stderr" && fail "progress without --progress on a pipe: $stderr"
    run --separate-stderr fftshard 2 --progress --quiet --force a.h5 o.h5
    assert_success
    [ -z "$stderr" ] || fail "--quiet printed: $stderr"
}

@test "every top-level member of the report is documented in the man page" {
    oracle make a.h5 6x6:complex128
    fftshard 2 --quiet --report=r.json a.h5 o.h5
    local key
    for key in $(json r.json '" ".join(list(r) + list(r["per_rank"][0]) + list(r["exchange"]) + list(r["memory"]) + list(r["prefix"]))'); do
        grep -q -- "$key" "$srcdir/man/fftshard.1" || fail "report member $key is not in man/fftshard.1"
    done
}

# A spectrum bin whose |X|^2 exceeds float64 (finite input of 1e200): the
# report stays strict JSON, null for what is not finite; numpy's binned
# power from the full fftn says which bins those are, and the others match.
@test "strict JSON: a spectrum bin beyond float64 is null, never a bare inf or nan; the rest equals numpy" {
    local scale
    for scale in 1e200 1; do
        python_serial -c 'import h5py, numpy as np, sys
x = np.random.default_rng(1).standard_normal((8, 6, 4)) * float(sys.argv[1])
with h5py.File("big.h5", "w") as f:
    f["data"] = x' "$scale"
        fftshard 2 --quiet --force --real --power-spectrum --spectrum-only --report=r.json big.h5 s.h5
        run python_serial - "$srcdir/tests" "$scale" <<'PY'
import json, sys
import h5py, numpy as np
sys.path.insert(0, sys.argv[1])
from spectrum_oracle import geometry, bin_index, binned, means
def refuse(constant):
    raise ValueError("bare %s in the report" % constant)
text = open("r.json").read()
r = json.loads(text, parse_constant=refuse)   # strict: NaN, Infinity refused
assert "nan" not in text.lower() and "inf" not in text.lower().replace("info", ""), text
with h5py.File("big.h5") as f:
    x = f["data"][()]
with np.errstate(over="ignore", invalid="ignore"):
    X = np.fft.fftn(x.astype(np.complex128))
    q, comp, kf, kmax, factor = geometry(x.shape, [0, 1, 2], None)
    idx, nb, edges = bin_index(np.sqrt(q), kf, kmax, None)
    modes = binned(idx.ravel(), nb, np.ones(q.size))
    ref = means(idx.ravel(), nb, np.abs(X.ravel()) ** 2, modes)
got = r["spectra"]["power_spectrum"]["power"]
assert len(got) == nb, (len(got), nb)
for g, want, m in zip(got, ref, modes):
    if m == 0 or not np.isfinite(want):
        assert g is None, (g, want, m)
    else:
        assert g is not None and abs(g - want) <= 1e-8 * abs(want), (g, want)
print(sum(g is None for g in got), "of", nb, "null")
PY
        assert_success
        if [ "$scale" = 1e200 ]; then
            assert_output "8 of 8 null"
        else
            assert_output "0 of 8 null"
        fi
    done
}
