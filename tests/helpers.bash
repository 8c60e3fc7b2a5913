# SPDX-License-Identifier: GPL-3.0-or-later
# helpers.bash: what every bats file of fftshard shares.
#
# Paths come from the environment Makefile.am sets for `make check`
# (AM_TESTS_ENVIRONMENT); the defaults below let a built source tree run
# `bats tests/cli.bats` by hand. Every test runs in its own empty temporary
# directory, so the source tree (read-only under `make distcheck`) and the
# build tree are never written to.

bats_require_minimum_version 1.5.0  # run --separate-stderr

bats_load_library bats-support 2>/dev/null || load "${BATS_LIB_PATH:-/usr/lib/bats}/bats-support/load"
bats_load_library bats-assert 2>/dev/null || load "${BATS_LIB_PATH:-/usr/lib/bats}/bats-assert/load"

# Exit statuses: the mirror of enum fs_status in src/core/errors.h (cli.bats checks
# that the two agree). Change both together.
EXIT_OK=0
EXIT_RUNTIME=1
EXIT_USAGE=2
EXIT_INPUT=3
EXIT_OUTPUT=4
EXIT_CHECK=5

# Absolute paths: tests cd into their temporary directory.
srcdir=$(cd "${srcdir:-$BATS_TEST_DIRNAME/..}" && pwd)
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
# The MPI and the kind of launcher the build was configured with (make check
# says; by hand they are asked of $FFTSHARD and $MPIEXEC): mpich, openmpi,
# ...; hydra, openmpi, slurm or other.
if [ -z "${MPI_FLAVOUR:-}" ]; then
    MPI_FLAVOUR=mpich
    ldd "${FFTSHARD:-$srcdir/src/fftshard}" 2>/dev/null | grep -q 'libmpi\.so\.4' && MPI_FLAVOUR=openmpi
fi
if [ -z "${MPI_LAUNCHER_KIND:-}" ]; then
    case $("$MPIEXEC" --version 2>&1 | head -n 5) in
    *HYDRA*) MPI_LAUNCHER_KIND=hydra ;;
    *"Open MPI"* | *OpenRTE*) MPI_LAUNCHER_KIND=openmpi ;;
    *slurm*) MPI_LAUNCHER_KIND=slurm ;;
    *) MPI_LAUNCHER_KIND=other ;;
    esac
fi
# Open MPI's mpirun refuses root without these, and more ranks than cores
# without oversubscription (the tests run up to 8 ranks on 2 cores).
if [ "$MPI_LAUNCHER_KIND" = openmpi ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_rmaps_base_oversubscribe=1
fi

# mpich_only WHY: skip the rest of a test that holds only under MPICH's
# hydra launcher (WHY says what it depends on).
mpich_only() {
    [ "$MPI_LAUNCHER_KIND" = hydra ] || skip "MPICH-specific ($1): this build runs under $MPI_LAUNCHER_KIND"
}
FFTSHARD=${FFTSHARD:-$srcdir/src/fftshard}
FFTSHARD_MKDATA=${FFTSHARD_MKDATA:-$srcdir/src/fftshard-mkdata}
PYTHON_ORACLE=${PYTHON_ORACLE:-/usr/bin/python3}
TEST_BINDIR=${TEST_BINDIR:-$srcdir/tests}
ORACLE=$srcdir/tests/oracle.py

# Sanitizers. A build configured with --enable-sanitizers (make check says so
# in FFTSHARD_SANITIZERS; run by hand, the program tells) runs with options
# that stop at the first error and exit with SANITIZER_EXIT, a status that is
# none of fftshard's, so every test that checks a status catches a report.
# LeakSanitizer unwinds fully (slower) so that tests/lsan.supp can name the
# library calls whose leaks are not fftshard's; allocations too large for
# the machine return NULL as they do without the sanitizers.
SANITIZER_EXIT=86
if [ -z "${FFTSHARD_SANITIZERS:-}" ]; then
    FFTSHARD_SANITIZERS=no
    grep -q __asan_init "$FFTSHARD" 2>/dev/null && FFTSHARD_SANITIZERS=yes
fi
if [ "$FFTSHARD_SANITIZERS" = yes ]; then
    export ASAN_OPTIONS="halt_on_error=1:exitcode=$SANITIZER_EXIT:detect_leaks=1:allocator_may_return_null=1:fast_unwind_on_malloc=0"
    export LSAN_OPTIONS="suppressions=$srcdir/tests/lsan.supp:print_suppressions=0"
    export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=$SANITIZER_EXIT"
fi

# fftshard NP ARGS...: run fftshard on NP ranks.
fftshard() {
    local np=$1
    shift
    "$MPIEXEC" -n "$np" "$FFTSHARD" "$@"
}

# mkdata NP ARGS...: run fftshard-mkdata on NP ranks.
mkdata() {
    local np=$1
    shift
    "$MPIEXEC" -n "$np" "$FFTSHARD_MKDATA" "$@"
}

# python_serial ARGS...: the oracle's Python (numpy, serial h5py), outside
# mpiexec: the MPI variables of an enclosing job must not reach it. The
# oracles import tests/oracle_common.py: no bytecode cache is left beside it.
python_serial() {
    local unset=() name
    for name in $(compgen -e); do
        case $name in
        PMI_* | PMIX_* | HYDRA_* | HYDI_* | MPI_* | OMPI_* | SLURM_* | PALS_*) unset+=(-u "$name") ;;
        esac
    done
    env "${unset[@]}" PYTHONDONTWRITEBYTECODE=1 "$PYTHON_ORACLE" "$@"
}

# oracle SUBCOMMAND ARGS...: the numpy/h5py checker (tests/oracle.py).
oracle() {
    python_serial "$ORACLE" "$@"
}

# Every test starts in its own empty directory (removed by bats afterwards).
setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
}

# The temporaries and commit lock files fftshard leaves in DIR (default .):
# none are allowed after any run, successful or not.
temporaries() {
    find "${1:-.}" -maxdepth 1 \( -name '.*.fftshard-tmp-*' -o -name '.*.fftshard-lock' \)
}

assert_no_temporaries() {
    local left
    left=$(temporaries "${1:-.}")
    [ -z "$left" ] || fail "temporary files left behind: $left"
}

# After `run --separate-stderr fftshard ...`: the command failed with STATUS,
# printed nothing on stdout and exactly one line `fftshard: error: ...` on
# stderr containing every FRAGMENT (plus the "Try" line for usage errors):
# one line however many ranks, and no HDF5 error stack.
assert_error() {
    local want=$1 fragment
    shift
    assert_equal "$status" "$want"
    [ -z "$output" ] || fail "stdout should be empty on error, got: $output"
    local expected_lines=1
    [ "$want" -eq "$EXIT_USAGE" ] && expected_lines=2
    [ "${#stderr_lines[@]}" -eq "$expected_lines" ] ||
        fail "expected $expected_lines line(s) on stderr, got ${#stderr_lines[@]}:
$stderr"
    # fftshard(1), MESSAGES: "fftshard: error: <what>: <why>"
    [[ ${stderr_lines[0]} == "fftshard: error: "?*": "?* ]] ||
        fail "not of the form 'fftshard: error: <what>: <why>': ${stderr_lines[0]}"
    if [ "$want" -eq "$EXIT_USAGE" ]; then
        assert_equal "${stderr_lines[1]}" "Try 'fftshard --help' for more information."
    fi
    for fragment in "$@"; do
        [[ ${stderr_lines[0]} == *"$fragment"* ]] ||
            fail "message lacks '$fragment': ${stderr_lines[0]}"
    done
}

# huge_input FILE: a 4096x4096x800 complex128 dataset (200 GiB) whose
# chunks were never written, so the file is tiny. fftshard on 2 ranks needs
# 100 GiB per rank for it: more than this machine's memory, so with
# --in-memory (else it goes out of core) the allocation fails at once and
# the run must end with exit 1, cleanly.
huge_input() {
    python_serial -c 'import h5py, sys
with h5py.File(sys.argv[1], "w") as f:
    f.create_dataset("x", shape=(4096, 4096, 800), dtype="c16", chunks=(64, 64, 64))' "$1"
}

# checksum FILE: its SHA-256, to prove a file was left byte for byte alone.
checksum() {
    sha256sum "$1" | cut -d' ' -f1
}

# fs NP IN OUT [OPTIONS...]: run fftshard on NP ranks and queue the case for
# check_all, which compares every queued output with numpy in one oracle call
# (python start-up costs more than a small transform). The options the oracle
# must know of are passed on to it.
fs() {
    local np=$1 in=$2 out=$3 opt
    shift 3
    run fftshard "$np" --quiet "$@" "$in" "$out"
    assert_success
    local c="in=$in out=$out ranks=$np"
    for opt in "$@"; do
        case $opt in
        --inverse) c+=" inverse" ;;
        --real) c+=" real" ;;
        --axes=*) c+=" axes=${opt#--axes=}" ;;
        --norm=*) c+=" norm=${opt#--norm=}" ;;
        --last-size=*) c+=" last=${opt#--last-size=}" ;;
        --precision=*) c+=" precision=${opt#--precision=}" ;;
        --transpose=*) c+=" transpose=${opt#--transpose=}" ;;
        esac
    done
    CASES+=("$c")
}

# check_all [EXTRA CASES...]: one oracle call for the queued cases.
check_all() {
    run oracle check "${CASES[@]}" "$@"
    assert_success
    assert_output --partial "0 of"
}

# rank_pid LAUNCHER_PID R: the process id of rank R of the job the launcher
# LAUNCHER_PID runs, or nothing: the nearest of its descendants (hydra's
# proxy, or none, in between) whose environment names rank R in a
# launcher's variable (PMI_RANK, PMIX_RANK, OMPI_COMM_WORLD_RANK,
# SLURM_PROCID, PALS_RANKID); rank 0's start-up probe helper, its child,
# is farther. Waits up to 10 s for it.
rank_pid() {
    local deadline=$((${EPOCHREALTIME/./} + 10000000)) level pid depth
    local vars="^(PMI_RANK|PMIX_RANK|OMPI_COMM_WORLD_RANK|SLURM_PROCID|PALS_RANKID)=$2\$"
    while ((${EPOCHREALTIME/./} < deadline)); do
        level=$1
        for depth in 1 2 3; do
            level=$(ps -o pid= --ppid "$level" | tr -s ' \n' ',,' | sed 's/^,//; s/,$//')
            [ -n "$level" ] || break
            for pid in ${level//,/ }; do
                if { tr '\0' '\n' <"/proc/$pid/environ"; } 2>/dev/null | grep -Eq "$vars"; then
                    echo "$pid"
                    return
                fi
            done
        done
    done
}

# Background jobs held at a pause point (FFTSHARD_PAUSE): the files that use
# these keep the job's mpiexec pid in $job and call kill_job from teardown.

# kill_job: a failed test must not leave its paused job behind.
kill_job() {
    if [ -n "${job:-}" ] && kill -0 "$job" 2>/dev/null; then
        kill -KILL "$job" 2>/dev/null || true
        wait "$job" 2>/dev/null || true
    fi
}

# await_pause FILE REGEX WHAT: wait until FILE, the stderr of $job, has a
# line matching REGEX (rank 0's "pausing at" line); fail naming WHAT when
# the job ends first or 30 s pass. The caller removes FILE before starting
# the job: the job truncates it only once it runs, and an earlier job's
# line must not be taken for this one's.
await_pause() {
    local file=$1 regex=$2 what=$3
    local deadline=$((${EPOCHREALTIME/./} + 30000000))
    until grep -Eq "$regex" "$file" 2>/dev/null; do
        kill -0 "$job" 2>/dev/null || fail "the job ended before $what: $(cat "$file")"
        ((${EPOCHREALTIME/./} < deadline)) || fail "$what was not reached in 30 s"
        sleep 0.05
    done
}

# end_job: wait for $job (at most 60 s: a hang fails the test); its status
# goes to $job_status.
end_job() {
    local waited=0
    while kill -0 "$job" 2>/dev/null; do
        ((waited < 600)) || fail "the job did not end within 60 s"
        sleep 0.1
        waited=$((waited + 1))
    done
    job_status=0
    wait "$job" || job_status=$?
    job=
}
