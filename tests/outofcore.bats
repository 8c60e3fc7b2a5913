#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Out of core (fftshard(1), OUT OF CORE): --out-of-core and a plan that does
# not fit --mem-per-rank stream blocks through a scratch file in passes.
# The transforms against numpy (tests/oracle.py); spectra, --apply and
# --check against the in-memory run's file (tests/ooc_same.py: the same
# datasets, shapes, types, chunks and attributes, values within rounding);
# the refusals, the dry run, the report's passes, the scratch's place and its
# removal on failure and SIGTERM, and by the next run after a SIGKILL. The memory-cgroup runs are in
# tests/outofcore-cgroup.bats.

load helpers

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    CASES=()
}

# check_all for runs out of core: no exchange strategy ran (transpose none).
check_all_ooc() {
    CASES=("${CASES[@]/%/ transpose=none}")
    check_all
}

same() {
    run python_serial "$srcdir/tests/ooc_same.py" "$@"
    assert_output same
}

# passes_of NP ARGS...: fftshard on NP ranks; for each dataset of its
# report, its scratch files and what each pass moves, a line each.
passes_of() {
    local np=$1
    shift
    run --separate-stderr fftshard "$np" --report=- -q "$@"
    assert_success
    run python_serial -c 'import json, sys
for d in json.loads(sys.argv[1])["datasets"]:
    o = d["out_of_core"]
    print(o["scratch_files"], [p["moves"] for p in o["passes"]])' "$output"
}

# bats test_tags=sanitized
@test "--out-of-core: complex and real, double and single, odd shapes, 1 to 4 ranks, against numpy" {
    oracle make c.h5 17x9x11:complex128 -- s.h5 12x10x7:complex64 -- r.h5 13x10x7:float64 \
        -- f.h5 9x6x5x4:float32 -- p.h5 30x28:complex128
    local np
    for np in 1 2 3 4; do
        fs "$np" c.h5 c$np.h5 --out-of-core
        fs "$np" s.h5 s$np.h5 --out-of-core
        fs "$np" r.h5 r$np.h5 --out-of-core --real
        fs "$np" f.h5 f$np.h5 --out-of-core --real
        fs "$np" p.h5 p$np.h5 --out-of-core --norm=ortho
    done
    check_all_ooc
}

@test "--out-of-core: inverse, irfftn, some axes, pencils, a slice, against numpy" {
    oracle make c.h5 16x10x12:complex128 -- r.h5 11x8x9:float64
    fs 2 c.h5 i2.h5 --out-of-core --inverse
    fs 3 c.h5 a3.h5 --out-of-core --axes=1,2
    fs 2 c.h5 a2.h5 --out-of-core --axes=0,2
    fs 4 c.h5 p4.h5 --out-of-core --decomp=pencil
    fs 3 r.h5 rf.h5 --out-of-core --real
    fs 2 rf.h5 rb.h5 --out-of-core --real --inverse --last-size=9
    check_all_ooc
    run fftshard 3 --quiet --out-of-core "c.h5:/data[2:15:3, :, 1:9]" sl.h5
    assert_success
    run python_serial -c 'import h5py, numpy as np
a = h5py.File("c.h5")["data"][2:15:3, :, 1:9]; b = h5py.File("sl.h5")["data"][()]
print(np.abs(np.fft.fftn(a) - b).max() <= 1e-12 * np.abs(b).max())'
    assert_output True
}

@test "out of core by itself when the plan does not fit --mem-per-rank: it says so; the in-memory run's file" {
    mkdata 2 -q 96x80x64 a.h5
    run --separate-stderr fftshard 2 --mem-per-rank=34M --report=r.json a.h5 o.h5
    assert_success
    [[ $stderr == *"out of core: 2 passes over "*" blocks, no exchange"* ]] || fail "$stderr"
    [[ $stderr == *"out of core: the in-memory plan needs "*" MiB per rank, more than 34.0 MiB (--mem-per-rank)"* ]] ||
        fail "$stderr"
    [[ $stderr == *"pass 1, INPUT -> the scratch: read 7.9 MB, wrote 7.9 MB in "* ]] || fail "$stderr"
    [[ $stderr == *"pass 2, the scratch -> OUTPUT: read 7.9 MB, wrote 7.9 MB in "* ]] || fail "$stderr"
    run python_serial -c 'import json; r = json.load(open("r.json"))["out_of_core"]
print(len(r["passes"]), [p["read_bytes"] for p in r["passes"]], r["scratch_bytes"])'
    assert_output "2 [7864320, 7864320] 7864320"
    # every write is one run a block: the scratch in the blocks of the pass
    # that writes it, OUTPUT in whole planes (the last pass's blocks split
    # axis 0), the dataset's elements from a page boundary on
    run python_serial -c 'import json, h5py; r = json.load(open("r.json"))["out_of_core"]
print([p["written_ranges"] == r["blocks"] for p in r["passes"]],
      h5py.File("o.h5")["data"].id.get_offset() % 4096)'
    assert_output "[True, True] 0"
    # 2-D complex too (rows last); a 2-D real forward takes its halved axis
    # first, so its OUTPUT is written in runs of a block's columns
    mkdata 2 -q 300x256 p.h5
    mkdata 2 -q -t float64 300x256 q.h5
    fftshard 2 --quiet --out-of-core --report=p.json p.h5 po.h5
    fftshard 2 --quiet --out-of-core --real --report=q.json q.h5 qo.h5
    run python_serial -c 'import json
for name in ("p.json", "q.json"):
    r = json.load(open(name))["out_of_core"]
    print([p["written_ranges"] == r["blocks"] for p in r["passes"]])'
    assert_output $'[True, True]\n[True, False]'
    CASES+=("in=p.h5 out=po.h5 ranks=2 transpose=none" "in=q.h5 out=qo.h5 ranks=2 real transpose=none")
    fftshard 2 --quiet --in-memory --mem-per-rank=34M a.h5 m.h5
    # the passes take axis 0 first (OUTPUT written in whole planes), the
    # in-memory run last: the same file within rounding
    same o.h5 m.h5 2e-15
    CASES+=("in=a.h5 out=o.h5 ranks=2 transpose=none")
    check_all
    assert_no_temporaries
}

# A budget below every plan: the run goes on (--mem-per-rank), with blocks
# of 1 MiB at least, not of one pencil each (65536 blocks of 4 KiB for
# 256^3 on 2 ranks: hours, and I/O records eight times the plan).
@test "--mem-per-rank below every out-of-core plan: blocks of 1 MiB at least, the in-memory run's file" {
    mkdata 2 -q 128x96x64 a.h5
    run --separate-stderr fftshard 2 --dry-run --out-of-core --mem-per-rank=20M --report=d.json a.h5 o.h5
    assert_failure 1
    [[ $stderr == *"not enough memory"* ]] || fail "$stderr"
    run python_serial -c 'import json; r = json.load(open("d.json"))
print(r["mem_per_rank"]["fits"], r["out_of_core"]["block_bytes"] >= 2**20, r["out_of_core"]["blocks"] > 2)'
    assert_output "False True True"
    fftshard 2 --quiet --out-of-core --mem-per-rank=20M --report=r.json a.h5 o.h5
    run python_serial -c 'import json; d = json.load(open("d.json")); r = json.load(open("r.json"))
print(r["out_of_core"]["blocks"] == d["out_of_core"]["blocks"],
      r["memory"]["peak_bytes_max"] <= d["out_of_core"]["memory_per_rank_bytes"])'
    assert_output "True True"
    fftshard 2 --quiet --in-memory a.h5 m.h5
    same o.h5 m.h5 2e-15
}

@test "--scratch=DIR: the scratch goes there and is gone after; a DIR that is not one is refused" {
    oracle make c.h5 24x20x16:complex128
    mkdir scr
    run --separate-stderr fftshard 2 --out-of-core --scratch=scr --report=r.json c.h5 o.h5
    assert_success
    [[ $stderr == *"scratch 1 x 0.1 MiB in scr"* ]] || fail "$stderr"
    assert_equal "$(python_serial -c 'import json; print(json.load(open("r.json"))["out_of_core"]["scratch_dir"])')" scr
    assert_equal "$(ls -A scr)" ""
    assert_no_temporaries
    CASES+=("in=c.h5 out=o.h5 ranks=2 transpose=none")
    check_all
    run --separate-stderr fftshard 2 --out-of-core --scratch=nowhere c.h5 o2.h5
    [ "$status" -ne 0 ] || fail "a missing --scratch directory was taken"
    [ "${#stderr_lines[@]}" -le 2 ] || fail "$stderr"
    [[ ${stderr_lines[0]} == "fftshard: error: "*nowhere* ]] || fail "$stderr"
    [ ! -e o2.h5 ] || fail "a refused run left OUTPUT"
    assert_no_temporaries
}

@test "spectra, --apply and --check out of core: the in-memory run's results" {
    oracle make c.h5 24x20x16:complex128 -- r.h5 20x18x14:float64
    local args
    for args in "--power-spectrum c.h5" "--power-spectrum --spectrum-only c.h5" \
        "--power-spectrum --real --los=0 r.h5" "--apply=gaussian:2 c.h5" "--apply=poisson --real r.h5" \
        "--check c.h5" "--check --real r.h5"; do
        # shellcheck disable=SC2086
        fftshard 2 --quiet --out-of-core $args o.h5
        # shellcheck disable=SC2086
        fftshard 2 --quiet --in-memory $args m.h5
        same o.h5 m.h5 1e-12
        rm o.h5 m.h5
    done
    fftshard 3 --quiet --out-of-core --power-spectrum c.h5 o.h5
    fftshard 1 --quiet --power-spectrum c.h5 m.h5
    same o.h5 m.h5 1e-12
}

# bats test_tags=sanitized
@test "--cross out of core: the cross spectrum and both power spectra are numpy's, the transforms the in-memory run's; the kept file gone after" {
    oracle make c.h5 /u=20x18x14:complex128 /v=20x18x14:complex128 \
        -- r.h5 /u=17x12x10:float64 /v=17x12x10:float64 -- s.h5 /u=16x12x9:float32 /v=16x12x9:float32
    local np
    for np in 1 2 3 4; do
        fftshard "$np" --quiet --out-of-core --cross --power-spectrum c.h5:/u c.h5:/v c$np.h5
        fftshard "$np" --quiet --out-of-core --real --cross --los=0 --multipoles=0,2 --spectrum-only \
            r.h5:/u r.h5:/v r$np.h5
        CASES+=("in=c.h5:/u in=c.h5:/v out=c$np.h5 cross power"
            "in=r.h5:/u in=r.h5:/v out=r$np.h5 cross los=0 poles=0,2 only")
    done
    fftshard 4 --quiet --out-of-core --decomp=pencil --cross --spectrum-only s.h5:/u s.h5:/v p4.h5
    fftshard 3 --quiet --out-of-core --real --cross --power-spectrum --los=2 s.h5:/u s.h5:/v s3.h5
    CASES+=("in=s.h5:/u in=s.h5:/v out=p4.h5 cross only"
        "in=s.h5:/u in=s.h5:/v out=s3.h5 cross power los=2")
    run python_serial "$srcdir/tests/spectrum_oracle.py" check "${CASES[@]}"
    assert_success
    # the whole file, the transforms of both INPUTs too, as in memory
    fftshard 2 --quiet --in-memory --cross --power-spectrum c.h5:/u c.h5:/v m.h5
    same c2.h5 m.h5 1e-12
    fftshard 3 --quiet --in-memory --real --cross --power-spectrum --los=2 s.h5:/u s.h5:/v m3.h5
    same s3.h5 m3.h5 1e-5
    assert_no_temporaries
    # OUTPUT chunked, written through HDF5 (which packs a block's rows in place)
    fftshard 3 --quiet --out-of-core --chunks=8x6x7 --cross --power-spectrum c.h5:/u c.h5:/v ch.h5
    fftshard 3 --quiet --in-memory --chunks=8x6x7 --cross --power-spectrum c.h5:/u c.h5:/v mh.h5
    same ch.h5 mh.h5 1e-12
    # --check beside it: the kept block written before the block is undone
    fftshard 2 --quiet --out-of-core --check --cross --power-spectrum c.h5:/u c.h5:/v k.h5
    same k.h5 m.h5 1e-12
    # the passes: the first INPUT's last writes the kept file, the second's reads it
    passes_of 2 --out-of-core --cross --power-spectrum c.h5:/u c.h5:/v o.h5
    assert_line --index 0 "2 ['INPUT -> the scratch', 'the scratch -> OUTPUT and a kept file']"
    assert_line --index 1 "2 ['INPUT -> the scratch', 'the scratch and the kept file -> OUTPUT']"
}

@test "--cross by itself out of core: the second INPUT goes as the first went; a second that does not fit after a first in memory is refused" {
    python_serial -c 'import h5py, numpy as np
r = np.random.default_rng(3); s = (160, 128, 128)
with h5py.File("ab.h5", "w") as f:
    c = (r.standard_normal(s) + 1j * r.standard_normal(s)).astype(np.complex64)
    f["c"] = c  # correlated: a cross spectrum far from 0, where single precision holds
    f["f"] = (0.8 * c.real + 0.6 * r.standard_normal(s)).astype(np.float32)'
    # the real one needs more in memory (its staging): first, it takes both out of core
    run --separate-stderr fftshard 2 --verbose --cross --power-spectrum --spectrum-only \
        --mem-per-rank=60M ab.h5:/f ab.h5:/c o.h5
    assert_success
    [[ $stderr == *"out of core: the in-memory plan needs "*"more than 60.0 MiB"* ]] || fail "$stderr"
    [[ $stderr == *"out of core: as the first INPUT, whose forward result is kept on the disk beside this one's"* ]] || fail "$stderr"
    run python_serial "$srcdir/tests/spectrum_oracle.py" check "in=ab.h5:/f in=ab.h5:/c out=o.h5 cross power only"
    assert_success
    # second, it is refused before any work, naming --out-of-core; which takes both
    run --separate-stderr fftshard 2 --cross --power-spectrum --spectrum-only --mem-per-rank=60M \
        ab.h5:/c ab.h5:/f x.h5
    assert_error "$EXIT_USAGE" "and the first INPUT's fits in memory: give --out-of-core to take both out of core"
    [ ! -e x.h5 ] || fail "a refused run left OUTPUT"
    fftshard 2 --quiet --out-of-core --cross --power-spectrum --spectrum-only --mem-per-rank=60M \
        ab.h5:/c ab.h5:/f x.h5
    run python_serial "$srcdir/tests/spectrum_oracle.py" check "in=ab.h5:/c in=ab.h5:/f out=x.h5 cross power only"
    assert_success
    assert_no_temporaries
}

# bats test_tags=sanitized
@test "--vector out of core: every operation equals numpy, 2-D and 3-D, real and complex, single and double, 1 to 4 ranks, slabs and pencils; the kept files gone after" {
    oracle make v.h5 /x=17x12x10:float64 /y=17x12x10:float64 /z=17x12x10:float64 \
        -- c.h5 /x=12x10x9:complex128 /y=12x10x9:complex128 /z=12x10x9:complex128 \
        -- s.h5 /x=16x14:float32 /y=16x14:float32 -- g.h5 /f=13x11x8:complex64
    local np op cases=() ops=([1]="gradient curl" [2]="divergence helmholtz"
        [3]="gradient helmholtz" [4]="divergence curl")
    for np in 1 2 3 4; do # each operation on two rank counts
        for op in ${ops[$np]}; do
            local in=v.h5:/x,v.h5:/y,v.h5:/z
            [ "$op" != gradient ] || in=v.h5:/x
            # shellcheck disable=SC2086
            fftshard "$np" --quiet --out-of-core --real --vector=$op ${in//,/ } v$np$op.h5
            cases+=("op=$op in=$in out=v$np$op.h5")
        done
    done
    fftshard 2 --quiet --out-of-core --vector=curl c.h5:/x c.h5:/y c.h5:/z c2.h5
    fftshard 4 --quiet --out-of-core --decomp=pencil --vector=helmholtz c.h5:/x c.h5:/y c.h5:/z c4.h5
    fftshard 3 --quiet --out-of-core --real --vector=divergence s.h5:/x s.h5:/y s2.h5
    fftshard 2 --quiet --out-of-core --vector=gradient --box-size=2,3,5 g.h5:/f g2.h5:/grad
    cases+=("op=curl in=c.h5:/x,c.h5:/y,c.h5:/z out=c2.h5"
        "op=helmholtz in=c.h5:/x,c.h5:/y,c.h5:/z out=c4.h5"
        "op=divergence in=s.h5:/x,s.h5:/y out=s2.h5"
        "op=gradient in=g.h5:/f out=g2.h5:/grad box=2,3,5")
    run python_serial "$srcdir/tests/vector_oracle.py" check "${cases[@]}"
    assert_success
    assert_no_temporaries
    # the whole file as in memory: the datasets, their attributes and coordinates
    fftshard 2 --quiet --in-memory --real --vector=helmholtz v.h5:/x v.h5:/y v.h5:/z m.h5
    same v2helmholtz.h5 m.h5 1e-12
    # the passes: each INPUT's forward result into its kept file; the
    # results' passes once per result, the first reading every kept file
    passes_of 2 --out-of-core --vector=curl c.h5:/x c.h5:/y c.h5:/z o.h5
    assert_line --index 0 "4 ['INPUT -> the scratch', 'the scratch -> a kept file']"
    assert_line --index 1 "4 ['INPUT -> the scratch', 'the scratch -> a kept file']"
    assert_line --index 2 "4 ['INPUT -> the scratch', 'the scratch -> a kept file', 'the kept files -> the scratch', 'the scratch -> OUTPUT']"
    # the summary and the report name OUTPUT and the command line beside five scratch files' names
    run --separate-stderr fftshard 2 --out-of-core --report=r.json --vector=curl c.h5:/x c.h5:/y c.h5:/z n.h5
    assert_success
    [[ $stderr == *"fftshard: 3 datasets into n.h5, 2 ranks"* ]] || fail "$stderr"
    run python_serial -c 'import json; r = json.load(open("r.json"))
print(r["output"], r["command_line"].split()[-5:], {d["output"] for d in r["datasets"]})'
    assert_output "n.h5 ['--vector=curl', 'c.h5:/x', 'c.h5:/y', 'c.h5:/z', 'n.h5'] {'n.h5:/curl_x'}"
    # the dry run: the results' passes, six block buffers, the kept files
    run --separate-stderr "$FFTSHARD" --dry-run --out-of-core --vector=helmholtz \
        --shape=256x256x256 --ranks=2 --mem-per-rank=256M --disk-rate=500M
    assert_success
    assert_line "pass 2: the scratch -> a kept file, read 268.4 MB, write 268.4 MB, about 1.0 s"
    assert_line "pass 3 (6 runs, one per result): the kept files -> the scratch, read 4831.8 MB, write 1610.6 MB, about 12.3 s"
    assert_line "pass 4 (6 runs, one per result): the scratch -> OUTPUT, read 1610.6 MB, write 1610.6 MB, about 6.1 s"
    assert_line "the other 2 INPUTs: passes 1 to 2 each, their forward results kept"
    assert_line --regexp '^memory per rank \(out of core\): 6 blocks '
    assert_line "scratch: 4 files of 268435456 bytes (256.0 MiB) beside OUTPUT, 3 of them kept: each INPUT's forward result"
    assert_line "predicted time: about 24.6 s at 524 MB/s read, 524 MB/s write (--disk-rate)"
    run --separate-stderr "$FFTSHARD" --dry-run --out-of-core --vector=helmholtz \
        --shape=256x256x256 --ranks=2 --mem-per-rank=256M --report=- -q
    assert_success
    assert_equal "$(python_serial -c 'import json, sys; o = json.loads(sys.argv[1])["out_of_core"]
print(o["scratch_files"], [p["runs"] for p in o["passes"]])' "$output")" "4 [1, 1, 6, 6]"
    run --separate-stderr "$FFTSHARD" --dry-run --out-of-core --vector=divergence --shape=256x200 \
        --ranks=2 --mem-per-rank=40M
    assert_success
    assert_line "the other INPUT: passes 1 to 2, its forward result kept"
    assert_line "scratch: 3 files of 819200 bytes (0.8 MiB) beside OUTPUT, 2 of them kept: each INPUT's forward result"
}

# within_plan: for each dataset of r.json, its passes and whether the rank's
# peak stayed within the memory per rank its out-of-core plan counts.
within_plan() {
    run python_serial -c 'import json
for d in json.load(open("r.json"))["datasets"]:
    o = d["out_of_core"]
    peak, plan = d["memory"]["peak_bytes_max"], o["memory_per_rank"]["total_bytes"]
    print(len(o["passes"]), "within" if peak <= plan else "%.1f MiB over %.1f" % (peak / 2**20, plan / 2**20))'
}

@test "--cross and --vector out of core: each dataset's peak within the memory per rank its plan counts" {
    [ "$FFTSHARD_SANITIZERS" != yes ] || skip "peak memory under the sanitizers"
    python_serial -c 'import h5py, numpy as np
r = np.random.default_rng(7)
with h5py.File("v.h5", "w") as f:
    for n in "xyz":
        f[n] = r.standard_normal((96, 80, 64)) + 1j * r.standard_normal((96, 80, 64))'
    # six results' runs of blocks of about 1 MiB: each run's block buffers
    # made again would not fit back among the last run's allocations
    fftshard 2 --quiet --out-of-core --mem-per-rank=45M --report=r.json --vector=helmholtz \
        v.h5:/x v.h5:/y v.h5:/z o.h5
    within_plan
    assert_output "2 within
2 within
4 within"
    # four block buffers leave pencils of 1 or 2 elements along axis 2:
    # OUTPUT written in 300000 runs of 25 bytes, each noted until on the disk
    rm o.h5
    fftshard 2 --quiet --out-of-core --mem-per-rank=38M --report=r.json --cross --power-spectrum \
        v.h5:/x v.h5:/y o.h5
    within_plan
    assert_output "3 within
3 within"
}

@test "what out of core cannot compute is refused with --out-of-core (status 2, one line)" {
    oracle make a.h5 8x6x4:complex128 -- b.h5 8x6x4:complex128
    local opt
    for opt in --correlate --correlation-function --shard-output; do
        run --separate-stderr fftshard 2 --out-of-core "$opt" a.h5 o.h5
        assert_error "$EXIT_USAGE" "--out-of-core: fftshard cannot" "out of core"
        [ ! -e o.h5 ] || fail "$opt left OUTPUT"
    done
    # --vector's results are binned whole, after the operation
    run --separate-stderr fftshard 2 --out-of-core --vector=gradient --power-spectrum a.h5 o.h5
    assert_error "$EXIT_USAGE" "--out-of-core: fftshard cannot compute --power-spectrum out of core"
    # --cross's kept result goes through the disk for spectra alone
    run --separate-stderr fftshard 2 --out-of-core --cross --correlation-function a.h5 b.h5 o.h5
    assert_error "$EXIT_USAGE" "--out-of-core: fftshard cannot compute --correlation-function out of core"
    # INPUTs not alike: the stage's refusal, not out of core's of their blocks
    oracle make d.h5 /a=7x5x3:complex128 /b=7x5x4:complex128
    run --separate-stderr fftshard 2 --out-of-core --cross --power-spectrum d.h5:/a d.h5:/b o.h5
    assert_error "$EXIT_USAGE" "--cross: the two INPUTs must have one shape"
    run --separate-stderr fftshard 2 --out-of-core --vector=curl d.h5:/a d.h5:/b d.h5:/a o.h5
    assert_error "$EXIT_USAGE" "--vector=curl: the INPUTs must have one shape"
    [ ! -e o.h5 ] || fail "a refused run left OUTPUT"
    # the spectrum of --apply's result is binned after the operation, whole
    run --separate-stderr fftshard 2 --out-of-core --apply=gaussian:2 --power-spectrum a.h5 o.h5
    assert_error "$EXIT_USAGE" "--out-of-core: fftshard cannot compute --power-spectrum out of core"
    for opt in --pad=16,12,8 --window=hann; do
        run --separate-stderr fftshard 2 --out-of-core "$opt" a.h5 o.h5
        assert_error "$EXIT_USAGE" "--out-of-core: fftshard cannot read an input padded, cut or windowed"
    done
    # a cosine or sine axis would be a Fourier one in the passes
    oracle make r.h5 8x6x4:float64
    for opt in --dct=2 --dst=1 --r2r=0:dct2; do
        run --separate-stderr fftshard 2 --out-of-core "$opt" r.h5 o.h5
        assert_error "$EXIT_USAGE" "--out-of-core: fftshard cannot compute cosine or sine transforms"
    done
    # not forced but needed: refused alike; --in-memory runs it in memory
    mkdata 2 -q 96x80x64 big.h5
    run --separate-stderr fftshard 2 --mem-per-rank=34M --correlate big.h5 o.h5
    assert_error "$EXIT_USAGE" "more than 34.0 MiB (--mem-per-rank), and fftshard cannot compute --correlate out of core (--in-memory tries it in memory)"
    run --separate-stderr "$FFTSHARD" --dry-run --mem-per-rank=34M --correlate big.h5 o.h5
    assert_error "$EXIT_USAGE" "fftshard cannot compute --correlate out of core"
    fftshard 2 --quiet --in-memory --mem-per-rank=34M --correlate big.h5 o.h5
    [ -e o.h5 ] || fail "--in-memory made no OUTPUT"
    rm o.h5
    run --separate-stderr fftshard 2 --out-of-core --in-memory a.h5 o.h5
    assert_error "$EXIT_USAGE" "--out-of-core, --in-memory: the two contradict each other"
    assert_no_temporaries
}

@test "the dry run: the passes, the memory per rank, the scratch bytes, the time at --disk-rate" {
    run --separate-stderr "$FFTSHARD" --dry-run --out-of-core --shape=512x512x512 --dtype=complex128 \
        --ranks=2 --mem-per-rank=256M --disk-rate=500M,100M --scratch=/var/tmp
    assert_success
    assert_line "out of core: --out-of-core"
    assert_line --regexp '^out of core: 2 passes over [0-9]+ blocks \(slabs, [0-9]+ per rank\), up to [0-9.]+ MiB each$'
    assert_line "pass 1: INPUT -> the scratch, read 2147.5 MB, write 2147.5 MB, about 24.6 s"
    assert_line "pass 2: the scratch -> OUTPUT, read 2147.5 MB, write 2147.5 MB, about 24.6 s"
    assert_line --regexp '^memory per rank \(out of core\): 2 blocks .* = about [0-9.]+ MiB$'
    assert_line "scratch: 1 file of 2147483648 bytes (2048.0 MiB) in /var/tmp"
    assert_line "predicted time: about 49.2 s at 524 MB/s read, 105 MB/s write (--disk-rate)"
    assert_line "--mem-per-rank 256.0 MiB: fits out of core"
    # by itself: the in-memory plan does not fit
    run --separate-stderr "$FFTSHARD" --dry-run --shape=512x512x512 --ranks=2 --mem-per-rank=256M
    assert_success
    assert_line --regexp '^out of core: the in-memory plan needs [0-9.]+ MiB per rank, more than 256.0 MiB'
    assert_line "predicted time: give --disk-rate (a run probes the disk)"
    run --separate-stderr "$FFTSHARD" --dry-run --shape=512x512x512 --ranks=2 --mem-per-rank=256M --report=- -q
    assert_success
    assert_equal "$(python_serial -c 'import json, sys; o = json.loads(sys.argv[1])["out_of_core"]
print(o["on"], len(o["passes"]), o["scratch_bytes"])' "$output")" "True 2 2147483648"
}

@test "out of core, NaN refused (3) and SIGTERM in a pass (143): no OUTPUT, no scratch left" {
    python_serial -c 'import h5py, numpy as np
a = np.ones((16, 12, 10), complex); a[9, 3, 2] = np.nan
h5py.File("nan.h5", "w")["data"] = a'
    run --separate-stderr fftshard 2 --out-of-core nan.h5 o.h5
    assert_error "$EXIT_INPUT" "NaN"
    [ ! -e o.h5 ] || fail "a refused run left OUTPUT"
    assert_no_temporaries
    mkdata 2 -q 192x160x128 big.h5
    local pass job
    # every rank held at the start of the pass (FFTSHARD_PAUSE), so that the
    # signal finds it there however quick the pass
    for pass in 1 2; do
        # (removed first: the background job truncates it only once it runs,
        # and the last pass's "pausing" line must not be taken for this one's)
        rm -f log
        FFTSHARD_PAUSE="pass $pass:30" "$MPIEXEC" -n 2 "$FFTSHARD" --out-of-core \
            --disk-rate=500M big.h5 o.h5 2>log &
        job=$!
        await_pause log "pausing at" "pass $pass"
        kill -TERM "$job"
        status=0
        wait "$job" || status=$?
        assert_equal "$status" 143
        grep -q "interrupted by SIGTERM during the pass $pass phase" log || fail "$(cat log)"
        [ ! -e o.h5 ] || fail "SIGTERM in pass $pass left OUTPUT"
        assert_no_temporaries
    done
    # --vector's results' passes, every INPUT's kept file on the disk
    python_serial -c 'import h5py, numpy as np
r = np.random.default_rng(5)
with h5py.File("v.h5", "w") as f:
    for n in "xyz":
        f[n] = r.standard_normal((96, 80, 64))'
    rm -f log
    FFTSHARD_PAUSE="pass 4:30" "$MPIEXEC" -n 2 "$FFTSHARD" --out-of-core --vector=curl \
        v.h5:/x v.h5:/y v.h5:/z o.h5 2>log &
    job=$!
    await_pause log "pausing at" "pass 4"
    [ "$(temporaries | wc -l)" -ge 5 ] || fail "not OUTPUT's temporary and four scratch files: $(temporaries)"
    kill -TERM "$job"
    status=0
    wait "$job" || status=$?
    assert_equal "$status" 143
    [ ! -e o.h5 ] || fail "SIGTERM in pass 4 left OUTPUT"
    assert_no_temporaries
}

# progress_at PASS PERCENT: the log's progress has reached PERCENT of PASS
# (or a later pass, or the end).
progress_at() {
    local last
    last=$(grep -aoE "progress: pass [0-9]+ +[0-9.]+%" log 2>/dev/null | tail -n 1 | awk '{print $3, int($4)}')
    [ -n "$last" ] || return 1
    set -- "$1" "$2" $last
    (($3 > $1 || ($3 == $1 && $4 >= $2)))
}

@test "SIGKILL of a rank at moments through each pass: OUTPUT as it was or whole; the next run removes the scratch and writes the whole result" {
    mkdata 2 -q 192x160x128 big.h5
    oracle make o.h5 6x5:complex128
    local before pass at pid job status landed=0
    before=$(cksum <o.h5)
    # the moments: as a pass starts, a quarter and half way through it (its
    # progress lines), the rank killed chosen at random
    for pass in 1 2; do
        for at in 0 25 50; do
            rm -f log # (not the last run's progress)
            "$MPIEXEC" -n 2 "$FFTSHARD" --out-of-core --force --progress --disk-rate=500M \
                big.h5 o.h5 2>log &
            job=$!
            pid=$(rank_pid "$job" $((RANDOM % 2)))
            [ -n "$pid" ] || skip "cannot find the ranks among mpiexec's processes"
            local deadline=$((SECONDS + 60))
            until progress_at "$pass" "$at" || ((SECONDS > deadline)); do sleep 0.01; done
            progress_at "$pass" "$at" || fail "pass $pass never reached $at%: $(cat log)"
            kill -KILL "$pid" 2>/dev/null || true
            status=0
            wait "$job" || status=$?
            echo "pass $pass at $at%: status $status, $(grep -aoE "progress: pass [0-9]+ +[0-9.]+%" log | tail -n 1)"
            [ "$status" = 0 ] || landed=$((landed + 1))
            # OUTPUT is as it was, or the whole result: a run that ended
            # before the kill landed, or one killed after its commit (the
            # rename), whose status cannot say success but whose file is whole
            if [ "$status" = 0 ] || [ "$(cksum <o.h5)" != "$before" ]; then
                run oracle check "in=big.h5 out=o.h5 ranks=2 transpose=none"
                assert_success
            fi
            before=$(cksum <o.h5)
        done
    done
    ((landed > 0)) || fail "no kill landed in a pass"
    # what a killed run leaves (OUTPUT's temporary and the scratch, beside
    # it; one held in pass 2, as a run above that ended before its kill
    # removed what the earlier ones left) is removed by the next run, which
    # says so and succeeds
    rm -f log
    FFTSHARD_PAUSE="pass 2:30" "$MPIEXEC" -n 2 "$FFTSHARD" --out-of-core --force big.h5 o.h5 2>log &
    job=$!
    pid=$(rank_pid "$job" $((RANDOM % 2)))
    await_pause log "pausing at" "pass 2"
    kill -KILL "$pid" 2>/dev/null || true
    wait "$job" || true
    [ -n "$(temporaries)" ] || fail "the killed run left nothing"
    run --separate-stderr fftshard 2 --out-of-core --force big.h5 o.h5
    assert_success
    [[ $stderr == *"left by an interrupted run"* ]] || fail "no note of the removed leftovers: $stderr"
    assert_no_temporaries
    run oracle check "in=big.h5 out=o.h5 ranks=2 transpose=none"
    assert_success
}
