#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# Under Slurm: a one-node cluster started for this file (tests/slurm/fixture.sh;
# root, slurm-wlm and munge, else every test skips), and fftshard as its users
# run it there: the batch job of the manual (fftshard(1), BATCH JOBS) given to
# sbatch with the MPI's own launcher (mpiexec.mpich, or mpirun for Open MPI)
# and with srun (--mpi=pmi2 for MPICH, --mpi=pmix for Open MPI), a job that
# reaches its time limit, SIGTERM to one rank of an srun step. The build
# under test decides the MPI. `make check-slurm`; a part of
# share/run-tests.sh for each MPI.

load helpers

# The PMI srun gives the ranks of this build's MPI.
srun_mpi() {
    [ "$MPI_FLAVOUR" = openmpi ] && echo pmix || echo pmi2
}

setup_file() {
    export SLURM_FIXTURE_DIR="$BATS_FILE_TMPDIR/slurm"
    # the jobs run in a directory every process of the node can reach
    export JOBDIR="$BATS_FILE_TMPDIR/jobs"
    mkdir -p "$JOBDIR"
    SLURM_FIXTURE_STATUS=0
    "$srcdir/tests/slurm/fixture.sh" start "$SLURM_FIXTURE_DIR" >"$BATS_FILE_TMPDIR/fixture.log" 2>&1 ||
        SLURM_FIXTURE_STATUS=$?
    export SLURM_FIXTURE_STATUS
}

teardown_file() {
    "$srcdir/tests/slurm/fixture.sh" stop "$SLURM_FIXTURE_DIR"
}

setup() {
    case $SLURM_FIXTURE_STATUS in
    0) ;;
    77) skip "no one-node Slurm here: $(cat "$BATS_FILE_TMPDIR/fixture.log")" ;;
    *) fail "the Slurm fixture did not start: $(cat "$BATS_FILE_TMPDIR/fixture.log")" ;;
    esac
    # shellcheck disable=SC1091 # made by the fixture
    . "$SLURM_FIXTURE_DIR/env"
    if [ "$(srun_mpi)" = pmix ] && ! srun --mpi=list 2>&1 | grep -qw pmix; then
        skip "this srun has no PMIx plugin (srun --mpi=list) for Open MPI"
    fi
    cd "$JOBDIR" || return 1
    rm -rf "$BATS_TEST_NUMBER" && mkdir "$BATS_TEST_NUMBER" && cd "$BATS_TEST_NUMBER" || return 1
}

# job_script LAUNCH...: job.sh, the batch job of fftshard(1) with LAUNCH as
# its launcher and $FFTSHARD as the program: status in job.status,
# "written" or not by OUTPUT's time.
job_script() {
    cat >job.sh <<EOF
#!/bin/sh
#SBATCH --ntasks=3
#SBATCH --output=job.out
#SBATCH --error=job.err
set -u
touch job.start
sleep 1
$* "$FFTSHARD" --force in.h5 out.h5
status=\$?
echo "\$status" >job.status
if [ "\$status" -eq 0 ] && [ out.h5 -nt job.start ]; then
    echo "out.h5 written"
else
    echo "out.h5 not written (status \$status)" >&2
    exit \$(( status ? status : 1 ))
fi
EOF
}

# submit [SBATCH OPTIONS...]: sbatch job.sh, wait for the job to end (at
# most 3 minutes); its id in $jobid.
submit() {
    jobid=$(sbatch --parsable --chdir="$PWD" --export=ALL "$@" job.sh) || fail "sbatch refused the job"
    local waited=0
    while [ -n "$(squeue -h -j "$jobid" -o %i 2>/dev/null)" ]; do
        ((waited < 1800)) || fail "job $jobid did not end within 3 minutes"
        sleep 0.1
        waited=$((waited + 1))
    done
}

# bats test_tags=slurm,openmpi
@test "make install into a prefix, then the batch job with the prefix on PATH, with srun" {
    oracle make in.h5 12x10x8:complex128
    local builddir prefix=$BATS_FILE_TMPDIR/prefix
    builddir=$(dirname "$TEST_BINDIR")
    run make -C "$builddir" install prefix="$prefix"
    assert_success
    [ -x "$prefix/bin/fftshard" ] || fail "make install did not install bin/fftshard"
    FFTSHARD=fftshard job_script srun --mpi="$(srun_mpi)"
    sed -i "s|^set -u\$|set -u; PATH='$prefix/bin':\$PATH; command -v fftshard >job.which|" job.sh
    submit
    assert_equal "$(cat job.status)" 0
    assert_equal "$(cat job.which)" "$prefix/bin/fftshard"
    CASES+=("in=in.h5 out=out.h5 ranks=3")
    check_all
}

# The MPI's own launcher (mpiexec.mpich, mpirun.openmpi), inside the
# allocation.
own_launcher() {
    echo "$MPIEXEC -n \$SLURM_NTASKS"
}

# bats test_tags=slurm,openmpi
@test "the manual's batch job under sbatch with the MPI's own launcher: equals numpy" {
    oracle make in.h5 12x10x8:complex128
    job_script "$(own_launcher)"
    submit
    assert_equal "$(cat job.status)" 0
    run cat job.out
    assert_output "out.h5 written"
    CASES+=("in=in.h5 out=out.h5 ranks=3")
    check_all
    assert_no_temporaries
}

# bats test_tags=slurm,openmpi
@test "the manual's batch job with srun (--mpi=pmi2 for MPICH, pmix for Open MPI): equals numpy" {
    oracle make in.h5 12x10x8:complex128
    job_script srun --mpi="$(srun_mpi)"
    submit
    assert_equal "$(cat job.status)" 0
    CASES+=("in=in.h5 out=out.h5 ranks=3")
    check_all
    assert_no_temporaries
}

# bats test_tags=slurm,openmpi
@test "a job that reaches its time limit: OUTPUT untouched, no temporary, one message" {
    oracle make in.h5 12x10x8:complex128
    oracle make out.h5 3x3:complex128
    local before
    before=$(checksum out.h5)
    job_script srun --mpi="$(srun_mpi)"
    # held in the exchange past the limit of one minute
    sed -i 's/^set -u$/set -u; export FFTSHARD_PAUSE=exchange:300/' job.sh
    submit --time=1
    assert_equal "$(sacct_state)" TIMEOUT
    assert_equal "$(checksum out.h5)" "$before"
    assert_no_temporaries
    # one message, the interruption's
    run grep -c '^fftshard: error:' job.err
    assert_output 1
}

# The state of $jobid as slurmctld has it.
sacct_state() {
    scontrol show job "$jobid" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'
}

# bats test_tags=slurm,openmpi
@test "SIGTERM to one rank of an srun step: 143 and one fftshard message" {
    oracle make in.h5 16x16x16:complex128
    rm -f run.err
    FFTSHARD_PAUSE=exchange:60 srun --mpi="$(srun_mpi)" -n 3 "$FFTSHARD" --quiet in.h5 new.h5 \
        >run.out 2>run.err &
    job=$!
    await_pause run.err "pausing at" "the exchange"
    local pid
    pid=$(slurm_rank_pid 1)
    [ -n "$pid" ] || fail "rank 1 not found among the processes of the node"
    kill -TERM "$pid"
    end_job
    assert_equal "$job_status" 143
    run grep '^fftshard: ' run.err
    assert_equal "${#lines[@]}" 2
    assert_line --index 1 --regexp '^fftshard: error: interrupted by SIGTERM during the exchange phase \(rank 1\)'
    [ ! -e new.h5 ] || fail "OUTPUT created"
    assert_no_temporaries
}

# slurm_rank_pid R: rank R of the step running $FFTSHARD here (a child of
# slurmstepd with SLURM_PROCID=R).
slurm_rank_pid() {
    local pid
    for pid in $(pgrep -f "^$FFTSHARD --quiet in.h5 new.h5"); do
        [ "$(ps -o comm= -p "$(ps -o ppid= -p "$pid" | tr -d ' ')")" = slurmstepd ] || continue
        if tr '\0' '\n' <"/proc/$pid/environ" | grep -qx "SLURM_PROCID=$1"; then
            echo "$pid"
            return
        fi
    done
}

teardown() {
    kill_job
}
