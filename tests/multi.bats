#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Several inputs in one run (fftshard INPUT... OUTPUT) and --add: every
# result equals numpy under its own path in the one OUTPUT, the compute plan
# is made once for datasets of one shape, the summary and the report have a
# section per dataset and the totals, the refusals come before any work, an
# interrupted run of several datasets leaves an existing OUTPUT byte for byte
# as it was, and --add keeps the other datasets of OUTPUT bit for bit.

load helpers

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    job=
}

# A failed test must not leave a paused job behind.
teardown() {
    if [ -n "$job" ] && kill -0 "$job" 2>/dev/null; then
        kill -KILL "$job" 2>/dev/null || true
        wait "$job" 2>/dev/null || true
    fi
}

# json FILE EXPR [ARGS...]: a Python expression on the parsed report `r`.
json() {
    local file=$1 expr=$2
    shift 2
    python_serial -c "import json, sys; r = json.load(open(sys.argv[1])); print($expr)" "$file" "$@"
}

# bats test_tags=sanitized
@test "three datasets into one file on 4 ranks: each equals numpy; planned once; a line per dataset" {
    oracle make snap.h5 /u=12x10x6:float64 /v=12x10x6:float64 /w=12x10x6:float64
    run --separate-stderr fftshard 4 --report=r.json snap.h5:/u snap.h5:/v snap.h5:/w spec.h5
    assert_success
    CASES=()
    local d
    for d in u v w; do
        CASES+=("in=snap.h5:/$d out=spec.h5:/$d ranks=4")
    done
    check_all
    # one summary line per dataset, then the totals
    local ds
    for ds in /u /v /w; do
        [ "$(grep -c "^fftshard: snap.h5:$ds: 12x10x6 float64, .* s (read " <<<"$stderr")" -eq 1 ] ||
            fail "no summary line for $ds: $stderr"
    done
    [ "$(grep -c '^fftshard: 3 datasets into spec.h5, 4 ranks$' <<<"$stderr")" -eq 1 ] || fail "$stderr"
    grep -Eq '^  total +[0-9.]+' <<<"$stderr" || fail "$stderr"
    # the report: the totals on top, a section per dataset; /v and /w reuse
    # /u's plans (FFTW planned nothing for them)
    run json r.json '
[d["output"] for d in r["datasets"]] == ["spec.h5:/u", "spec.h5:/v", "spec.h5:/w"]
and r["inputs"] == ["snap.h5:/u", "snap.h5:/v", "snap.h5:/w"] and r["output"] == "spec.h5"
and r["datasets"][0]["fftw_plans"]["made"] > 0
and [d["fftw_plans"]["made"] for d in r["datasets"][1:]] == [0, 0]
and r["exchange"]["bytes_sent"] == sum(d["exchange"]["bytes_sent"] for d in r["datasets"]) > 0
and sum(p["elements"] for p in r["per_rank"]) == 3 * 12 * 10 * 6
and all(sum(p["elements"] for p in d["per_rank"]) == 720 for d in r["datasets"])
and r["phases"]["total"]["max"] >= sum(d["phases"]["total"]["max"] for d in r["datasets"]) * 0.99'
    assert_output True
}

# bats test_tags=sanitized
@test "datasets of other shapes and types are planned anew; options apply to every dataset" {
    oracle make a.h5 /x=9x8:complex128 -- b.h5 /g/y=7x6x5:float32 /z=10:float64
    run fftshard 3 --quiet --norm=ortho --report=r.json a.h5:/x b.h5:/g/y b.h5:/z out.h5
    assert_success
    CASES=("in=a.h5:/x out=out.h5:/x ranks=3 norm=ortho"
        "in=b.h5:/g/y out=out.h5:/g/y ranks=3 norm=ortho"
        "in=b.h5:/z out=out.h5:/z ranks=3 norm=ortho")
    check_all
    run json r.json 'all(d["fftw_plans"]["made"] > 0 for d in r["datasets"])'
    assert_output True
}

@test "several inputs with --check: every dataset checked; the report's check is the worst" {
    oracle make a.h5 /p=8x6:float64 /q=8x6:complex128
    run --separate-stderr fftshard 2 --check --report=r.json a.h5:/p a.h5:/q out.h5
    assert_success
    run json r.json '[d["check"]["passed"] for d in r["datasets"]] == [True, True]
and r["check"]["roundtrip_error"] == max(d["check"]["roundtrip_error"] for d in r["datasets"])'
    assert_output True
}

@test "refused before any work: one path twice, a path inside another, OUTPUT:/path, shard options" {
    oracle make a.h5 /x=4x4:float64 /x2=4x4:float64 -- b.h5 /x=4x4:float64 /y=3:float64 -- c.h5 /x/y=3:float64
    run --separate-stderr fftshard 2 a.h5:/x b.h5:/x out.h5
    assert_error "$EXIT_USAGE" "a.h5:/x" "b.h5:/x" "out.h5:/x"
    run --separate-stderr fftshard 2 a.h5:/x a.h5:/x out.h5
    assert_error "$EXIT_USAGE" "out.h5:/x"
    run --separate-stderr fftshard 2 a.h5:/x c.h5:/x/y out.h5
    assert_error "$EXIT_USAGE" "c.h5:/x/y"
    run --separate-stderr fftshard 2 a.h5:/x a.h5:/x2 out.h5:/r
    assert_error "$EXIT_USAGE" "out.h5:/r" "one INPUT"
    run --separate-stderr fftshard 2 --shard-output a.h5:/x a.h5:/x2 out.h5
    assert_error "$EXIT_USAGE" "--shard-output"
    run --separate-stderr fftshard 2 --shards a.h5:/x a.h5:/x2 out.h5
    assert_error "$EXIT_USAGE" "--shards"
    # every input is probed before any work, and OUTPUT may be none of them
    run --separate-stderr fftshard 2 a.h5:/x missing.h5:/x out.h5
    assert_error "$EXIT_INPUT" "missing.h5"
    run --separate-stderr fftshard 2 --force a.h5:/x b.h5:/y b.h5
    assert_error "$EXIT_OUTPUT" "b.h5" "input"
    [ ! -e out.h5 ] || fail "a refused run wrote out.h5"
    assert_no_temporaries
}

@test "paths HDF5 reads as one (//u, /./u, /u/) collide before any work; '..' refused; the result under the plain path" {
    oracle make a.h5 /u=4x4:float64 /g/v=4x4:float64 -- b.h5 /u=4x4:float64 /g/v=4x4:float64 \
        -- c.h5 /u/w=3:float64
    echo "the old out.h5" >out.h5
    local before pair
    before=$(checksum out.h5)
    for pair in "a.h5:/u b.h5://u" "a.h5:/u b.h5:/./u" "a.h5:/./u b.h5:/u/" "a.h5:/g//v b.h5:/g/./v" \
        "a.h5:/u c.h5://u//w"; do
        # shellcheck disable=SC2086  # the two inputs split on purpose
        run --separate-stderr fftshard 2 --force $pair out.h5
        assert_error "$EXIT_USAGE" "both would be written to out.h5:/"
        assert_equal "$(checksum out.h5)" "$before"
    done
    # one input: the result goes under the path as HDF5 reads it
    run --separate-stderr fftshard 2 --force a.h5:/u out.h5:/.//r//
    assert_success
    run python_serial -c 'import h5py; f = h5py.File("out.h5"); print(list(f), f["r"].attrs["input"])'
    # beside it its coordinates k0, k1 and the complex type netCDF-4 reads
    assert_output "['_PFNC_DOUBLE_COMPLEX_TYPE', 'k0', 'k1', 'r'] a.h5:/u"
    # '..' is a link name to HDF5, not the parent group: refused, whatever the side
    for pair in "a.h5:/g/../u out.h5" "a.h5:/u out.h5:/x/.." "a.h5:/.. out.h5"; do
        # shellcheck disable=SC2086
        run --separate-stderr fftshard 2 --force $pair
        assert_error "$EXIT_USAGE" "'..' in the dataset path"
    done
    assert_no_temporaries
}

@test "SIGTERM at the second dataset's write: an existing OUTPUT unchanged, no temporary" {
    oracle make snap.h5 /u=16x8x8:float64 /v=16x8x8:float64 /w=16x8x8:float64
    echo "the old spec.h5" >spec.h5
    local before
    before=$(checksum spec.h5)
    rm -f run.err
    FFTSHARD_PAUSE=write@2:60 "$MPIEXEC" -n 3 "$FFTSHARD" --quiet --force \
        snap.h5:/u snap.h5:/v snap.h5:/w spec.h5 >run.out 2>run.err &
    job=$!
    local deadline=$((${EPOCHREALTIME/./} + 30000000))
    until grep -q "pausing at the start of the write phase of dataset 2" run.err 2>/dev/null; do
        kill -0 "$job" 2>/dev/null || fail "the job ended before the pause: $(cat run.err)"
        ((${EPOCHREALTIME/./} < deadline)) || fail "write@2 was not reached in 30 s"
        sleep 0.05
    done
    # dataset 1 is in the temporary by now
    [ -n "$(temporaries)" ] || fail "no temporary while the run is paused"
    kill -TERM "$job"
    local status=0
    wait "$job" || status=$?
    job=
    assert_equal "$status" 143
    grep -q "interrupted by SIGTERM during the write phase of dataset 2 (rank 0): the temporary output was removed" run.err ||
        fail "not the message of dataset 2: $(cat run.err)"
    assert_equal "$(checksum spec.h5)" "$before"
    assert_no_temporaries
}

# bats test_tags=sanitized
@test "--add: the other datasets of OUTPUT stay bit-identical (h5diff), its permissions kept" {
    oracle make snap.h5 /u=8x6x4:float64 /v=8x6x4:complex128 -- \
        spec.h5 /keep=5x4:float64 /g/keep2=3:complex128 /g/n=2x2:int16
    chmod 640 spec.h5
    cp -p spec.h5 orig.h5
    run fftshard 2 --quiet --add snap.h5:/u snap.h5:/v spec.h5
    assert_success
    CASES=("in=snap.h5:/u out=spec.h5:/u ranks=2" "in=snap.h5:/v out=spec.h5:/v ranks=2")
    check_all
    local ds
    for ds in /keep /g/keep2 /g/n; do
        run h5diff orig.h5 spec.h5 "$ds" "$ds"
        assert_success
    done
    # h5diff compares attributes too: nothing else in the file changed
    run h5diff -c orig.h5 spec.h5 /g /g
    assert_success
    assert_equal "$(stat -c %a spec.h5)" 640
    assert_no_temporaries
}

@test "--add refuses an existing dataset (exit 4, file unchanged) unless --force, which replaces it" {
    oracle make snap.h5 /u=6x4:float64 -- new.h5 /u=5x3:complex128 -- \
        spec.h5 /u=2:float64 /keep=3x3:float64 /grp/inner=2:float64
    cp spec.h5 orig.h5
    local before
    before=$(checksum spec.h5)
    run --separate-stderr fftshard 2 --add snap.h5:/u spec.h5
    assert_error "$EXIT_OUTPUT" "spec.h5:/u" "--force"
    assert_equal "$(checksum spec.h5)" "$before"
    # a group is never replaced, nor is a dataset written below a dataset
    oracle make g.h5 /grp=3:float64 /keep/x=3:float64
    run --separate-stderr fftshard 2 --add --force g.h5:/grp spec.h5
    assert_error "$EXIT_OUTPUT" "spec.h5:/grp" "group"
    run --separate-stderr fftshard 2 --add --force g.h5:/keep/x spec.h5
    assert_error "$EXIT_OUTPUT" "spec.h5:/keep/x"
    assert_equal "$(checksum spec.h5)" "$before"
    assert_no_temporaries
    # --force replaces the dataset of that path, and only it
    fs 2 new.h5:/u spec.h5 --add --force
    CASES=("in=new.h5:/u out=spec.h5:/u ranks=2")
    check_all
    run h5diff orig.h5 spec.h5 /keep /keep
    assert_success
    run h5diff orig.h5 spec.h5 /grp/inner /grp/inner
    assert_success
}

@test "--add never replaces a coordinate another dataset uses (exit 4 naming it, OUTPUT unchanged), 1 to 4 ranks; an unused one and the result itself are replaced" {
    oracle make a.h5 /a=6x5x4:float64 /b=3x7:complex128 -- other.h5 /x=6x5x4:float64
    fftshard 2 --quiet a.h5:/a spec.h5
    fftshard 1 --quiet --add --axes=1 a.h5:/b spec.h5:/g/b
    # scales made by h5py: /t used by /series, /free by nothing, and a
    # spectrum's group holding one that /outside uses
    python_serial -c 'import h5py, numpy as np
with h5py.File("spec.h5", "r+") as f:
    t = f.create_dataset("t", data=np.arange(4.0))
    t.make_scale("t")
    f["series"] = np.zeros(4)
    f["series"].dims[0].attach_scale(t)
    f.create_dataset("free", data=np.arange(6.0)).make_scale("free")
    k = f.create_dataset("power_spectrum/k", data=np.arange(3.0))
    k.make_scale("k")
    f["outside"] = np.zeros(3)
    f["outside"].dims[0].attach_scale(k)'
    local before np=1 item path user force
    before=$(checksum spec.h5)
    for item in "/k0|axis 0 of /a" "/k2|axis 2 of /a" "/g/axis0|axis 0 of /g/b" \
        "/g/k1|axis 1 of /g/b" "/t|axis 0 of /series"; do
        path=${item%%|*} user=${item#*|}
        for force in --force ""; do
            np=$((np % 4 + 1))
            run --separate-stderr fftshard "$np" --add $force other.h5:/x "spec.h5:$path"
            assert_error "$EXIT_OUTPUT" "spec.h5:$path: the dataset is the coordinate of $user" \
                "replaces no coordinate"
        done
    done
    # a spectrum's group replaced with --force would take its coordinate along
    run --separate-stderr fftshard 3 --add --force --power-spectrum --spectrum-only other.h5:/x spec.h5
    assert_error "$EXIT_OUTPUT" "spec.h5:/power_spectrum: the group holds /power_spectrum/k, the coordinate of axis 0 of /outside"
    # inside a coordinate: a dataset on the way
    run --separate-stderr fftshard 2 --add --force other.h5:/x spec.h5:/k0/x
    assert_error "$EXIT_OUTPUT" "spec.h5:/k0/x"
    assert_equal "$(checksum spec.h5)" "$before"
    assert_no_temporaries
    # a scale no other dataset uses is replaced, and so is a result: its own
    # coordinates detached and made again
    fs 4 other.h5:/x spec.h5:/free --add --force
    fs 3 other.h5:/x spec.h5:/a --add --force
    CASES=("in=other.h5:/x out=spec.h5:/free ranks=4" "in=other.h5:/x out=spec.h5:/a ranks=3")
    check_all
    run python_serial -c 'import h5py
f = h5py.File("spec.h5", "r")
print([[s.name for s in f[n].dims[a].values()] for n in ("a", "free", "g/b") for a in range(f[n].ndim)])
print(f["k0"].shape, f["g/axis0"].shape, f["t"].shape, f["power_spectrum/k"].shape)'
    assert_success
    assert_line --index 0 "[['/k0'], ['/k1'], ['/k2'], ['/k0'], ['/k1'], ['/k2'], ['/g/axis0'], ['/g/k1']]"
    assert_line --index 1 "(6,) (3,) (4,) (3,)"
}

@test "--add: a missing OUTPUT is created; not an HDF5 file, or with --shard-output, refused" {
    oracle make snap.h5 /u=6x4:float64
    fs 2 snap.h5:/u fresh.h5 --add
    CASES=("in=snap.h5:/u out=fresh.h5:/u ranks=2")
    check_all
    echo "not hdf5" >text.h5
    run --separate-stderr fftshard 2 --add snap.h5:/u text.h5
    assert_error "$EXIT_OUTPUT" "text.h5" "not an HDF5 file"
    assert_equal "$(cat text.h5)" "not hdf5"
    run --separate-stderr fftshard 2 --add --shard-output snap.h5:/u fresh.h5
    assert_error "$EXIT_USAGE" "--add" "--shard-output"
    assert_no_temporaries
}

@test "SIGTERM during --add: OUTPUT unchanged, its copy removed" {
    oracle make snap.h5 /u=16x8x8:float64 /v=16x8x8:float64 -- spec.h5 /keep=4x4:float64
    local before
    before=$(checksum spec.h5)
    rm -f run.err
    FFTSHARD_PAUSE=read@2:60 "$MPIEXEC" -n 2 "$FFTSHARD" --quiet --add snap.h5:/u snap.h5:/v spec.h5 \
        >run.out 2>run.err &
    job=$!
    local deadline=$((${EPOCHREALTIME/./} + 30000000))
    until grep -q "pausing at the start of the read phase of dataset 2" run.err 2>/dev/null; do
        kill -0 "$job" 2>/dev/null || fail "the job ended before the pause: $(cat run.err)"
        ((${EPOCHREALTIME/./} < deadline)) || fail "read@2 was not reached in 30 s"
        sleep 0.05
    done
    kill -TERM "$job"
    local status=0
    wait "$job" || status=$?
    job=
    assert_equal "$status" 143
    assert_equal "$(checksum spec.h5)" "$before"
    assert_no_temporaries
}

# paused POINT:SECONDS ERR ARGS...: fftshard --quiet ARGS on 2 ranks in the
# background ($job), once rank 0 says in ERR that it holds at POINT (for
# SECONDS: what the test does meanwhile must take less).
paused() {
    local point=$1 err=$2
    shift 2
    rm -f "$err"
    FFTSHARD_PAUSE=$point "$MPIEXEC" -n 2 "$FFTSHARD" --quiet "$@" >/dev/null 2>"$err" &
    job=$!
    local deadline=$((${EPOCHREALTIME/./} + 30000000))
    until grep -q "pausing at" "$err" 2>/dev/null; do
        kill -0 "$job" 2>/dev/null || fail "the job ended before the pause: $(cat "$err")"
        ((${EPOCHREALTIME/./} < deadline)) || fail "$point was not reached in 30 s"
        sleep 0.05
    done
}

# wait_job: the end of $job, its status in $job_status.
wait_job() {
    job_status=0
    wait "$job" || job_status=$?
    job=
}

@test "--add follows no link on the result's path: external, soft, into the INPUT, the result itself (exit 4, nothing written)" {
    oracle make snap.h5 /u=8x6:float64 -- other.h5 /g/keep=3:float64
    python_serial -c 'import h5py, numpy as np
with h5py.File("spec.h5", "w") as f:
    f["keep"] = np.arange(3.0)
    f.create_group("real")
    f["ext"] = h5py.ExternalLink("other.h5", "/g")
    f["soft"] = h5py.SoftLink("/real")
    f["inp"] = h5py.ExternalLink("snap.h5", "/")
    f["deep"] = h5py.SoftLink("/real")
    f["dsoft"] = h5py.SoftLink("/keep")
    f["dangling"] = h5py.SoftLink("/nowhere")'
    local before other input path
    before=$(checksum spec.h5)
    other=$(checksum other.h5)
    input=$(checksum snap.h5)
    for path in "/ext/x|/ext is an external link" "/soft/x|/soft is a soft link" \
        "/inp/x|/inp is an external link" "/deep/a/b|/deep is a soft link" \
        "/dsoft|/dsoft is a soft link" "/dangling|/dangling is a soft link" \
        "//inp/./x|/inp is an external link"; do
        run --separate-stderr fftshard 2 --add --force snap.h5:/u "spec.h5:${path%%|*}"
        assert_error "$EXIT_OUTPUT" "${path#*|}" "follows no link"
    done
    # several inputs: the spectrum's group behind a link too
    python_serial -c 'import h5py
with h5py.File("spec2.h5", "w") as f:
    f["power_spectrum"] = h5py.ExternalLink("other.h5", "/g")'
    run --separate-stderr fftshard 2 --add --force --power-spectrum snap.h5:/u spec2.h5
    assert_error "$EXIT_OUTPUT" "/power_spectrum is an external link"
    assert_equal "$(checksum spec.h5)" "$before"
    assert_equal "$(checksum other.h5)" "$other"
    assert_equal "$(checksum snap.h5)" "$input"
    assert_no_temporaries
    # a group reached by hard links only is written, in OUTPUT's copy
    fs 2 snap.h5:/u spec.h5:/real/x --add
    CASES=("in=snap.h5:/u out=spec.h5:/real/x ranks=2")
    check_all
    assert_equal "$(checksum other.h5)" "$other"
}

@test "--add: a link that appears on the path after the check, before the copy: exit 4, nothing written" {
    oracle make snap.h5 /u=8x6:float64 -- other.h5 /g/keep=3:float64 -- spec.h5 /real/keep=3:float64
    local other
    other=$(checksum other.h5)
    paused add-copy:5 run.err --add snap.h5:/u spec.h5:/real/x
    python_serial -c 'import h5py
with h5py.File("spec.h5", "r+") as f:
    del f["real"]
    f["real"] = h5py.ExternalLink("other.h5", "/g")'
    local after
    after=$(checksum spec.h5)
    wait_job
    assert_equal "$job_status" "$EXIT_OUTPUT"
    grep -q "spec.h5:/real/x: /real is an external link" run.err || fail "$(cat run.err)"
    assert_equal "$(checksum spec.h5)" "$after"
    assert_equal "$(checksum other.h5)" "$other"
    assert_no_temporaries
}

@test "--add: OUTPUT written, replaced, removed or created by another program during the run: exit 4, left as that program left it" {
    oracle make snap.h5 /u=8x6:float64 -- orig.h5 /keep=3:float64
    local how
    for how in write replace remove create; do
        rm -f spec.h5
        [ "$how" = create ] || cp orig.h5 spec.h5
        paused read:4 run.err --add snap.h5:/u spec.h5:/new
        case $how in
        write) python_serial -c 'import h5py
with h5py.File("spec.h5", "r+") as f:
    f["q"] = [1.0]' ;;
        replace) cp orig.h5 other.h5 && mv other.h5 spec.h5 ;;
        remove) rm spec.h5 ;;
        create) cp orig.h5 spec.h5 ;;
        esac
        local after=none
        [ ! -e spec.h5 ] || after=$(checksum spec.h5)
        wait_job
        assert_equal "$job_status" "$EXIT_OUTPUT"
        grep -q "spec.h5: OUTPUT changed during the run" run.err || fail "$how: $(cat run.err)"
        [ "$(grep -c error run.err)" -eq 1 ] || fail "$how: $(cat run.err)"
        if [ "$after" = none ]; then
            [ ! -e spec.h5 ] || fail "$how: spec.h5 appeared"
        else
            assert_equal "$(checksum spec.h5)" "$after"
        fi
        assert_no_temporaries
    done
}

@test "two --add jobs on one OUTPUT: the later commit refuses (exit 4) and OUTPUT keeps the other's dataset; at once, no dataset is lost" {
    oracle make snap.h5 /u=8x6:float64 /v=8x6:float64 -- spec.h5 /keep=3:float64
    # A copies OUTPUT, then waits; B adds /q and is done; A must not undo it
    paused read:12 a.err --add snap.h5:/u spec.h5:/p
    fftshard 2 --quiet --add snap.h5:/v spec.h5:/q
    local after
    after=$(checksum spec.h5)
    wait_job
    assert_equal "$job_status" "$EXIT_OUTPUT"
    grep -q "OUTPUT changed during the run" a.err || fail "$(cat a.err)"
    assert_equal "$(checksum spec.h5)" "$after"
    CASES=("in=snap.h5:/v out=spec.h5:/q ranks=2")
    check_all
    # started together, four times: a job that says 0 has its dataset in
    # OUTPUT, one that says 4 has not, and /keep is always there
    local round pa pb sa sb
    for round in 1 2 3 4; do
        oracle make spec$round.h5 /keep=3:float64
        fftshard 2 --quiet --add snap.h5:/u "spec$round.h5:/p" 2>a.err &
        pa=$!
        fftshard 2 --quiet --add snap.h5:/v "spec$round.h5:/q" 2>b.err &
        pb=$!
        sa=0 sb=0
        wait "$pa" || sa=$?
        wait "$pb" || sb=$?
        [[ $sa =~ ^[04]$ && $sb =~ ^[04]$ ]] || fail "round $round: status $sa, $sb: $(cat a.err b.err)"
        [ "$sa$sb" != 44 ] || fail "round $round: both refused"
        # the datasets, not the results' coordinates nor their complex type
        run python_serial -c 'import h5py, sys
with h5py.File(sys.argv[1]) as f:
    print(sorted(n for n, o in f.items()
                 if isinstance(o, h5py.Dataset) and not h5py.h5ds.is_scale(o.id)))' "spec$round.h5"
        local want="'keep'"
        [ "$sa" != 0 ] || want="'keep', 'p'"
        [ "$sb" != 0 ] || want="${want}, 'q'"
        assert_output "[$want]"
    done
    assert_no_temporaries
}

@test "--add waits at its commit while another holds the commit lock, then finds OUTPUT changed: exit 4" {
    oracle make snap.h5 /u=8x6:float64 -- spec.h5 /keep=3:float64
    # the lock as another fftshard's commit holds it (a POSIX lock meets
    # the OFD lock): while held, the job must not commit
    python_serial - <<'PY' &
import fcntl, os, time
fd = os.open(".spec.h5.fftshard-lock", os.O_RDWR | os.O_CREAT, 0o600)
fcntl.lockf(fd, fcntl.LOCK_EX)
open("locked", "w").close()
while not os.path.exists("release"):
    time.sleep(0.05)
import h5py
with h5py.File("spec.h5", "r+") as f:
    f["q"] = [1.0]
os.unlink(".spec.h5.fftshard-lock")
os.close(fd)
PY
    local holder=$!
    until [ -e locked ]; do sleep 0.05; done
    local before
    before=$(checksum spec.h5)
    fftshard 2 --quiet --add snap.h5:/u spec.h5:/p 2>run.err &
    job=$!
    sleep 6
    kill -0 "$job" 2>/dev/null || fail "the job did not wait for the lock: $(cat run.err)"
    assert_equal "$(checksum spec.h5)" "$before"
    touch release
    wait "$holder"
    local after
    after=$(checksum spec.h5)
    wait_job
    assert_equal "$job_status" "$EXIT_OUTPUT"
    grep -q "OUTPUT changed during the run" run.err || fail "$(cat run.err)"
    assert_equal "$(checksum spec.h5)" "$after"
    assert_no_temporaries
}

@test "every member of a report of several inputs is documented in the man page" {
    oracle make a.h5 /p=6x6:float64 /q=6x6:float64
    fftshard 2 --quiet --report=r.json a.h5:/p a.h5:/q o.h5
    local key
    # named in bold on a line of its own (.B, .BR), not just somewhere in the text
    for key in $(json r.json '" ".join(list(r) + list(r["per_rank"][0]) + list(r["datasets"][0]))'); do
        grep -Eq "^\.(B|BR|RB) (.*[ \"])?$key([ \",]|\$)" "$srcdir/man/fftshard.1" ||
            fail "report member $key is not in man/fftshard.1"
    done
    run json r.json '"input" not in r and "shape" not in r and len(r["datasets"]) == 2'
    assert_output True
}

@test "several inputs: each result carries its own input's attributes" {
    python_serial -c 'import h5py, numpy as np
with h5py.File("snap.h5", "w") as f:
    for name, t in (("u", 1.5), ("v", 2.5)):
        d = f.create_dataset(name, data=np.arange(48.0).reshape(4, 3, 4))
        d.attrs["time"] = t
        d.attrs["units"] = name + " units"'
    fftshard 2 --quiet snap.h5:/u snap.h5:/v spec.h5
    run python_serial -c 'import h5py
with h5py.File("spec.h5") as f:
    print([(n, float(f[n].attrs["time"]), f[n].attrs["units"]) for n in ("u", "v")])'
    assert_success
    assert_output "[('u', 1.5, 'u units'), ('v', 2.5, 'v units')]"
}
