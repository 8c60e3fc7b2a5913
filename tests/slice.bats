#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Input slices, INPUT:/path[START:STOP:STEP, ...] (fftshard(1), INPUT):
# numpy's basic slicing read in parallel, each rank its part of the slice.
# Results against numpy's FFT of h5py's file[path][slice]
# (tests/slice_oracle.py), the input_slice attribute selecting the same
# elements; ranges with steps, negative indices, an index that drops an
# axis, '...', 1-D (four-step too), --real, batch axes, --inverse, 1 to 4
# ranks (ranks that own nothing), --check, several inputs, --cross,
# --shards, the I/O thread (which reads whole rows: a slice goes through
# HDF5); a dataset whose chunks outside the slice are damaged is read
# without error (nothing else is read); refusals (status 2 for text that is
# no slice, 3 for a slice the dataset cannot have); names ending in ']'.

load helpers

CASES=()

# sfs NP IN DS SLICE OUT [KEYS] -- [OPTIONS...]: fftshard on NP ranks of
# IN:DS[SLICE] into OUT, the case queued for the oracle (KEYS: its extra
# words, e.g. "real axes=0,1").
sfs() {
    local np=$1 in=$2 ds=$3 sl=$4 out=$5 keys=$6
    shift 6
    [ "${1:-}" = -- ] && shift
    run --separate-stderr fftshard "$np" --quiet "$@" "$in:$ds[$sl]" "$out"
    assert_success
    CASES+=("in=$in ds=$ds sl=${sl// /} out=$out $keys")
}

check_slices() {
    run python_serial "$srcdir/tests/slice_oracle.py" check "${CASES[@]}"
    assert_success
    assert_output --partial "0 of ${#CASES[@]} cases differ"
}

# make_inputs: a.h5 with u (12x10x8 complex128), r (12x10x8 float64), i
# (9x7 int16) and v (65536 float64), random.
make_inputs() {
    python_serial -c 'import h5py, numpy as np
rng = np.random.default_rng(7)
with h5py.File("a.h5", "w") as f:
    f["u"] = rng.standard_normal((12, 10, 8)) + 1j * rng.standard_normal((12, 10, 8))
    f["r"] = rng.standard_normal((12, 10, 8))
    f["i"] = rng.integers(-300, 300, (9, 7)).astype(np.int16)
    f["v"] = rng.standard_normal(65536)'
}

# bats test_tags=sanitized
@test "slices against numpy: steps, negative indices, an index dropping an axis, '...', 1 to 4 ranks, --check" {
    make_inputs
    sfs 1 a.h5 /u "0:10:2, :, 5" o1.h5 "expect=0:10:2,_:,_5" -- --check
    sfs 2 a.h5 /u "-4:, ::3" o2.h5 "expect=8:12,_0:10:3,_:" -- --check
    sfs 3 a.h5 /u "3" o3.h5 "expect=3,_:,_:" -- --check
    sfs 4 a.h5 /u "..., 1:7:2" o4.h5 "expect=:,_:,_1:7:2" -- --check
    # 2 rows on 4 ranks: ranks 2 and 3 own nothing
    sfs 4 a.h5 /u "10:, 2" o5.h5 "" -- --check
    sfs 3 a.h5 /u "-1, -3:" o6.h5 "expect=11,_7:10,_:"
    # stops past the end are clipped as numpy clips them
    sfs 2 a.h5 /r "1:100:5, -100:4" o7.h5 "expect=1:12:5,_0:4,_:" -- --check
    # integers, converted in the read
    sfs 2 a.h5 /i "1::2, -3" o8.h5 "expect=1:9:2,_4" -- --check
    # bounds and steps past 64 bits are clipped as numpy clips them; -2^63 fits
    sfs 1 a.h5 /u "0:99999999999999999999, -99999999999999999999:3" o9.h5 "expect=:,_0:3,_:"
    sfs 2 a.h5 /r "1::99999999999999999999, 4" o10.h5 "expect=1:12:9223372036854775807,_4,_:"
    sfs 3 a.h5 /u "-9223372036854775808:, 3:9223372036854775807:4, -2" o11.h5 \
        "expect=:,_3:10:4,_6"
    sfs 4 a.h5 /v "+7:123456789012345678901234567890:9999999999999999999" o12.h5 \
        "expect=7:65536:9223372036854775807"
    check_slices
}

@test "slices: 1-D (four-step), --real, batch axes, --inverse of a slice of a forward result" {
    make_inputs
    sfs 3 a.h5 /v "5::3" v3.h5 "" -- --check
    sfs 1 a.h5 /v "-1000:" v1.h5 ""
    sfs 2 a.h5 /r "2:11:2, 3" r2.h5 "real axes=0,1" -- --real --axes=0,1 --check
    sfs 3 a.h5 /r "..., 1:7" r3.h5 "real" -- --real
    sfs 3 a.h5 /u "1:11, :, 0:6" b3.h5 "axes=1" -- --axes=1 --check
    sfs 4 a.h5 /u "::2, 4" b4.h5 "axes=0" -- --axes=0
    # the half spectrum's rows 1 and 2, back to reals of the recorded length
    sfs 2 r2.h5 /r "1:3" i2.h5 "inverse real last=8" -- --inverse --real
    check_slices
}

@test "several inputs, --cross, --correlate and --shards take slices; the results name them" {
    make_inputs
    run --separate-stderr fftshard 3 --quiet "a.h5:/u[1:4]" "a.h5:/r[..., 2]" m.h5
    assert_success
    CASES+=("in=a.h5 ds=/u sl=1:4 out=m.h5" "in=a.h5 ds=/r sl=...,2 out=m.h5")
    python_serial -c 'import h5py
x = h5py.File("a.h5", "r")["u"][()]
for i in range(3):
    with h5py.File("s.%d.h5" % i, "w") as f:
        f["u"] = x[4 * i:4 * i + 4]'
    run --separate-stderr fftshard 3 --quiet --shards --check "s.%d.h5:/u[3:9:2, 1::3]" s.h5
    assert_success
    CASES+=("in=a.h5 ds=/u sl=3:9:2,1::3 out=s.h5 expect=3:9:2,_1:10:3,_:")
    check_slices
    # the cross spectrum of two slices is that of the same arrays stored alone
    python_serial -c 'import h5py
f = h5py.File("a.h5", "r")
with h5py.File("c.h5", "w") as g:
    g["u"] = f["u"][:, 0:8]
    g["r"] = f["r"][:, 2:]'
    run --separate-stderr fftshard 2 --quiet --cross --spectrum-only "a.h5:/u[:, 0:8]" \
        "a.h5:/r[:, 2:]" x1.h5
    assert_success
    run --separate-stderr fftshard 2 --quiet --cross --spectrum-only c.h5:/u c.h5:/r x2.h5
    assert_success
    run python_serial -c 'import h5py, numpy as np
a, b = h5py.File("x1.h5", "r"), h5py.File("x2.h5", "r")
names = []
a.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
assert names, "no spectrum"
for n in names:
    assert np.allclose(a[n][()], b[n][()], rtol=1e-12, atol=0), n
print(a["cross_spectrum"].attrs["inputs"])'
    assert_success
    assert_output "a.h5:/u[:, 0:8, :], a.h5:/r[:, 2:10, :]"
    # --correlate of two slices: ifftn(X_a conj X_b) / N, the second named with its slice
    run --separate-stderr fftshard 3 --quiet --correlate "a.h5:/u[0:6]" "a.h5:/u[6:12, :, ::2]" \
        cc.h5
    assert_error "$EXIT_USAGE" "one shape" # 6x10x8 and 6x10x4
    run --separate-stderr fftshard 3 --quiet --correlate "a.h5:/u[0:6]" "a.h5:/u[6:]" cc.h5
    assert_success
    run python_serial -c 'import h5py, numpy as np
f = h5py.File("a.h5", "r")
a, b = f["u"][0:6], f["u"][6:]
want = np.fft.ifftn(np.fft.fftn(a) * np.conj(np.fft.fftn(b))) / a.size
d = h5py.File("cc.h5", "r")["correlation"]
assert np.abs(d[()] - want).max() < 1e-12 * np.abs(want).max()
print(d.attrs["input_slice"], d.attrs["second_input"])'
    assert_success
    assert_output "[0:6, :, :] a.h5:/u[6:12, :, :]"
}

# bats test_tags=sanitized
@test "a slice is all that is read: the damaged chunks outside it are never touched, 1 to 4 ranks" {
    # 64x16x16 complex128 in deflated chunks of 4 rows; the slice [8:24:2,
    # :, 3] lies in chunks 2 to 5, every other chunk is overwritten with junk
    python_serial -c 'import h5py, numpy as np
rng = np.random.default_rng(3)
x = rng.standard_normal((64, 16, 16)) + 1j * rng.standard_normal((64, 16, 16))
with h5py.File("good.h5", "w") as f:
    f["u"] = x
with h5py.File("bad.h5", "w") as f:
    f.create_dataset("u", data=x, chunks=(4, 16, 16), compression="gzip")
with h5py.File("bad.h5", "r") as f:
    d = f["u"].id
    spots = [d.get_chunk_info(i) for i in range(d.get_num_chunks())]
with open("bad.h5", "r+b") as raw:
    for s in spots:
        if not 2 <= s.chunk_offset[0] // 4 <= 5:
            raw.seek(s.byte_offset)
            raw.write(b"\xff" * s.size)'
    # what a read of a damaged chunk does: the whole dataset cannot be read
    run --separate-stderr fftshard 2 --quiet bad.h5:/u whole.h5
    assert_failure
    [ ! -e whole.h5 ]
    for np in 1 2 4; do
        run --separate-stderr fftshard "$np" --quiet --check "bad.h5:/u[8:24:2, :, 3]" "o$np.h5"
        assert_success
        CASES+=("in=good.h5 ds=/u sl=8:24:2,:,3 out=o$np.h5")
    done
    check_slices
}

@test "the I/O thread leaves a sliced input to HDF5: exact with FFTSHARD_IO_THREAD=on" {
    python_serial -c 'import h5py, numpy as np
rng = np.random.default_rng(5)
with h5py.File("c.h5", "w") as f:
    f["u"] = rng.standard_normal((40, 32, 24)) + 1j * rng.standard_normal((40, 32, 24))'
    export FFTSHARD_IO_THREAD=on
    # unsliced, the same file is read by the thread (the path exists)
    run --separate-stderr fftshard 2 --quiet --report=w.json c.h5:/u w.h5
    assert_success
    run python_serial -c 'import json; print(json.load(open("w.json"))["io_overlap"]["read_seconds"] > 0)'
    assert_output True
    sfs 2 c.h5 /u "2:38, 1:31:2" t2.h5 "" -- --check
    sfs 1 c.h5 /u "5:" t1.h5 ""
    sfs 3 c.h5 /u "..., 3:20" t3.h5 "" -- --check
    check_slices
}

@test "bad slices: status 2 for text that is no slice, 3 for one the dataset cannot have; one line, no OUTPUT" {
    make_inputs
    local usage=("0:10:0|step 0" "::-1|negative step" "1,,2|empty entry" "abc|'abc' is no slice entry"
        "1:2:3:4|no slice entry" "..., ...|more than one '...'" "1,|empty entry"
        "0,0,0,0,0,0,0,0,0|more than 8 slice entries" "...,0,0,0,0,0,0,0,0,0|more than 8 slice entries"
        "0,0,0,0,0,0,0,0,...,0,0|more than 8 slice entries"
        "9999999999999999999999|slice index 9999999999999999999999 is out of range for any axis (it does not fit in 64 bits)"
        ":, -9223372036854775809|slice index -9223372036854775809 is out of range for any axis"
        "::-99999999999999999999|negative step" "1:2:3x|no slice entry" "1:-|no slice entry"
        "+|no slice entry")
    local item text why
    for item in "${usage[@]}"; do
        text=${item%%|*} why=${item#*|}
        run --separate-stderr fftshard 2 "a.h5:/u[$text]" o.h5
        assert_error "$EXIT_USAGE" "'a.h5:/u[$text]'" "$why"
        [ ! -e o.h5 ]
    done
    local input=("0,0,0,0|the slice has 4 entries; the dataset has 3 axes"
        "12|slice index 12 is out of range for axis 0 of length 12"
        "-13|slice index -13 is out of range for axis 0 of length 12"
        ":, 10|slice index 10 is out of range for axis 1 of length 10"
        "-9223372036854775808|slice index -9223372036854775808 is out of range for axis 0 of length 12"
        "99999999999999999999:|the slice takes nothing of axis 0 of length 12 (12:12)"
        "5:5|the slice takes nothing of axis 0 of length 12 (5:5)"
        "-2:3|the slice takes nothing of axis 0"
        "1, 2, 3|the slice leaves no axis")
    for item in "${input[@]}"; do
        text=${item%%|*} why=${item#*|}
        run --separate-stderr fftshard 3 "a.h5:/u[$text]" o.h5
        assert_error "$EXIT_INPUT" "a.h5:/u" "$why"
        [ ! -e o.h5 ]
        # the dry run says the same
        run --separate-stderr fftshard 1 --dry-run "a.h5:/u[$text]"
        assert_error "$EXIT_INPUT" "$why"
    done
    assert_no_temporaries
}

@test "names with spaces, colons and brackets: a name ending in ']' is named with '[]' after it" {
    python_serial -c 'import h5py, numpy as np
rng = np.random.default_rng(9)
with h5py.File("b.h5", "w") as f:
    f["odd[3]"] = rng.standard_normal((6, 4))
    f["g: x/y [1]"] = rng.standard_normal((6, 4))'
    run --separate-stderr fftshard 2 --quiet "b.h5:/odd[3][]" w.h5
    assert_success
    run python_serial -c 'import h5py, numpy as np
d = h5py.File("w.h5", "r")["odd[3]"]
assert "input_slice" not in d.attrs
print(np.abs(d[()] - np.fft.fftn(h5py.File("b.h5", "r")["odd[3]"][()])).max() < 1e-12)'
    assert_output True
    run --separate-stderr fftshard 2 --quiet "b.h5:/odd[3][1:5]" s.h5
    assert_success
    run --separate-stderr fftshard 2 --quiet "b.h5:/g: x/y [1][::2]" g.h5
    assert_success
    # the oracle's words are split on blanks: '_' stands for one
    CASES+=("in=b.h5 ds=/odd[3] sl=1:5 out=s.h5 expect=1:5,_:"
        "in=b.h5 ds=/g:_x/y_[1] sl=::2 out=g.h5 expect=0:6:2,_:")
    check_slices
    # without '[]' the brackets are a slice of a dataset that is not there
    run --separate-stderr fftshard 2 "b.h5:/odd[3]" o.h5
    assert_error "$EXIT_INPUT" "no dataset /odd"
    run --separate-stderr fftshard 2 "b.h5:/odd]" o.h5
    assert_error "$EXIT_USAGE" "ends in ']' without a slice" "'[]' after it"
    run --separate-stderr fftshard 2 "b.h5:/[]" o.h5
    assert_error "$EXIT_USAGE" "no dataset name before '[]'"
}

@test "the dry run, the summary and the report give the sliced shape and name the slice" {
    make_inputs
    run --separate-stderr fftshard 2 --dry-run "a.h5:/u[0:10:2, :, 5]"
    assert_success
    assert_line --index 0 --partial "fftshard dry run: 5x10 complex128 on 2 ranks"
    assert_line --index 1 "input: the slice [0:10:2, :, 5] of the 12x10x8 dataset, read alone"
    run --separate-stderr fftshard 2 --dry-run --report=d.json "a.h5:/u[0:10:2, :, 5]"
    assert_success
    run python_serial -c 'import json; d = json.load(open("d.json")); print(d["input"], d["shape"])'
    assert_output "a.h5:/u[0:10:2, :, 5] [5, 10]"
    run --separate-stderr fftshard 2 --report=r.json "a.h5:/u[0:10:2, :, 5]" o.h5
    assert_success
    [[ ${stderr_lines[0]} == "fftshard: 5x10 complex128 (slice [0:10:2, :, 5] of 12x10x8), c2c"* ]] ||
        fail "summary: ${stderr_lines[0]}"
    run python_serial -c 'import json, h5py; r = json.load(open("r.json"))
d = h5py.File("o.h5", "r")["u"]
print(r["input"], r["shape"], d.attrs["input_slice"], list(d.attrs["input_shape"]), d.attrs["input"])'
    assert_output "a.h5:/u[0:10:2, :, 5] [5, 10] [0:10:2, :, 5] [5, 10] a.h5:/u"
}
