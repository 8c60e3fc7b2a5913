#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# What fftshard may delete or replace in a shared directory: an old shard
# set only when it carries fftshard's marker and is not reached through a
# link; a leftover temporary never through a name swapped for a link, and
# never while a live run (whatever its program is called) holds it; OUTPUT
# without --force never over a file that appeared during the run; and
# names up to NAME_MAX work.

load helpers

setup_file() {
    cd "$BATS_FILE_TMPDIR" || return 1
    oracle make in.h5 9x4x4:complex128 -- in2.h5 6x5x4:complex128
}

setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    cp "$BATS_FILE_TMPDIR/in.h5" "$BATS_FILE_TMPDIR/in2.h5" .
    job=
}

# A failed test must not leave a paused job behind.
teardown() {
    kill_job
}

# paused_job POINT[:SECONDS] PROGRAM ARGS...: start PROGRAM (fftshard or a
# link to it) on 2 ranks in the background, held at POINT (FFTSHARD_PAUSE);
# returns once rank 0 says so. Its pid is $job, its stderr job.err.
paused_job() {
    local point=$1 program=$2
    shift 2
    rm -f job.out job.err # (not another job's "pausing" line)
    FFTSHARD_PAUSE=$point "$MPIEXEC" -n 2 "$program" --quiet "$@" >job.out 2>job.err &
    job=$!
    await_pause job.err "pausing at" "${point%%:*}"
}


# files_of DIR: its entries, one a line, sorted (dot files too).
files_of() {
    (cd "$1" && ls -A | LC_ALL=C sort)
}

@test "--force --shard-output: an old set reached through a link, or without the marker, is left alone" {
    fftshard 2 --quiet --shard-output in.h5 o.h5
    local set first second before
    set=$(compgen -G 'o.h5.shards-*')
    first=$set
    # The set's name made a link to another directory holding files of the
    # same names (and one more): nothing in it may go.
    mkdir victim
    cp "$set"/o.*.h5 victim/
    echo precious >victim/notes.txt
    mv "$set" moved-set
    ln -s victim "$set"
    before=$(files_of victim)
    run --separate-stderr fftshard 2 --quiet --force --shard-output in.h5 o.h5
    assert_success
    assert_equal "$(files_of victim)" "$before"
    [ -L "$set" ] || fail "the link $set was removed"
    [[ $stderr == *"$set: not removed: not a shard directory written by fftshard"* ]] ||
        fail "no warning about the linked set: $stderr"
    # A directory without the marker (made by hand, or by another program)
    # is not fftshard's either.
    set=$(compgen -G 'o.h5.shards-*' | grep -vx "$first")
    second=$set
    rm "$set/.fftshard-shards"
    before=$(files_of "$set")
    run --separate-stderr fftshard 2 --quiet --force --shard-output in.h5 o.h5
    assert_success
    assert_equal "$(files_of "$set")" "$before"
    [[ $stderr == *"$set: not removed"* ]] || fail "no warning about the unmarked set: $stderr"
    # A marked set holding a file its master did not name: only the named
    # shard files go, the stranger and the directory stay.
    set=$(compgen -G 'o.h5.shards-*' | grep -vx -e "$first" -e "$second")
    echo mine >"$set/mine.txt"
    run --separate-stderr fftshard 2 --quiet --force --shard-output in.h5 o.h5
    assert_success
    assert_equal "$(files_of "$set")" "$(printf '.fftshard-shards\nmine.txt')"
    [[ $stderr == *"$set: not removed: it holds files the replaced master did not name"* ]] ||
        fail "no warning about the set with a stranger: $stderr"
    run oracle check "in=in.h5 out=o.h5 ranks=2"
    assert_success
    assert_no_temporaries
}

@test "a leftover swapped for a link to another directory between check and use: nothing there removed" {
    [ "$FFTSHARD_SANITIZERS" != yes ] || skip "LD_PRELOAD does not mix with the sanitizers"
    # An attacker who wins every race: right after any stat of a leftover's
    # name, the name is exchanged (renameat2 RENAME_EXCHANGE) with "swap", a
    # link to victim/.
    cat >swap.c <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#define AT_FDCWD -100 /* (no <fcntl.h>: its stat prototypes would clash) */
static void swap_after(int dfd, const char *name)
{
    if (!strstr(name, "fftshard-tmp-") || !strstr(name, "-race"))
        return;
    char other[4096];
    const char *slash = strrchr(name, '/');
    snprintf(other, sizeof other, "%.*sswap", slash ? (int)(slash - name + 1) : 0, name);
    if (syscall(SYS_renameat2, dfd, name, dfd, other, 2 /* RENAME_EXCHANGE */) == 0) {
        FILE *log = fopen("swaps.log", "a");
        if (log) {
            fprintf(log, "%s\n", name);
            fclose(log);
        }
    }
}
#define WRAP(fn, params, args, dfd, name) \
    int fn params { \
        static int (*real) params; \
        if (!real) real = (int (*) params)dlsym(RTLD_NEXT, #fn); \
        int r = real args; \
        swap_after(dfd, name); \
        return r; \
    }
WRAP(lstat, (const char *p, void *s), (p, s), AT_FDCWD, p)
WRAP(lstat64, (const char *p, void *s), (p, s), AT_FDCWD, p)
WRAP(fstatat, (int d, const char *p, void *s, int f), (d, p, s, f), d, p)
WRAP(fstatat64, (int d, const char *p, void *s, int f), (d, p, s, f), d, p)
EOF
    "${CC:-cc}" -shared -fPIC -o swap.so swap.c -ldl || skip "no C compiler to build the shim"
    mkdir victim
    echo precious >victim/a.txt
    echo precious >victim/b.txt
    local dead
    dead=$(sh -c 'echo $$')
    mkdir ".out.h5.fftshard-tmp-$(hostname)-$dead-race01"
    : >".out.h5.fftshard-tmp-$(hostname)-$dead-race01/out.0000.h5"
    ln -s victim swap
    run --separate-stderr env LD_PRELOAD="$PWD/swap.so" "$MPIEXEC" -n 1 "$FFTSHARD" --quiet in.h5 out.h5
    assert_success
    [ -s swaps.log ] || fail "the names were never exchanged: the test proves nothing"
    assert_equal "$(files_of victim)" "$(printf 'a.txt\nb.txt')"
    run oracle check "in=in.h5 out=out.h5 ranks=1"
    assert_success
}

@test "a live run started through a link with another name keeps its temporary" {
    mkdir bin
    ln -s "$FFTSHARD" bin/other-name
    paused_job read:4 bin/other-name in.h5 out.h5
    local tmp
    tmp=$(temporaries)
    [ -n "$tmp" ] || fail "the paused run has no temporary"
    # A second run for the same OUTPUT cleans leftovers; it fails later (an
    # impossible --check tolerance), so it never writes OUTPUT itself.
    run --separate-stderr fftshard 1 --check --check-tolerance=1e-300 in.h5 out.h5
    assert_equal "$status" "$EXIT_CHECK"
    [[ $stderr != *"removed"* ]] || fail "the second run removed something: $stderr"
    [ -e "$tmp" ] || fail "the live run's temporary $tmp was removed"
    end_job
    assert_equal "$job_status" 0
    run oracle check "in=in.h5 out=out.h5 ranks=2"
    assert_success
    assert_no_temporaries
}

# bats test_tags=openmpi
@test "without --force, an OUTPUT that appears during the run is kept: of two runs one succeeds, one exits 4" {
    paused_job commit:5 "$FFTSHARD" in.h5 out.h5
    # The second run starts and finishes while the first one waits.
    run --separate-stderr fftshard 1 --quiet in2.h5 out.h5
    assert_success
    local theirs
    theirs=$(checksum out.h5)
    end_job
    assert_equal "$job_status" "$EXIT_OUTPUT"
    grep -q "^fftshard: error: out.h5: appeared during the run; use --force to replace it$" job.err ||
        fail "no message that OUTPUT appeared: $(cat job.err)"
    assert_equal "$(checksum out.h5)" "$theirs"
    run oracle check "in=in2.h5 out=out.h5 ranks=1"
    assert_success
    assert_no_temporaries
    # Any file, and with --shard-output: the set goes too.
    rm out.h5
    paused_job commit:3 "$FFTSHARD" --shard-output in.h5 out.h5
    echo precious >out.h5
    end_job
    assert_equal "$job_status" "$EXIT_OUTPUT"
    assert_equal "$(cat out.h5)" precious
    [ -z "$(compgen -G 'out.h5.shards-*')" ] || fail "a shard directory was left"
    assert_no_temporaries
}

# bats test_tags=openmpi
@test "an OUTPUT name of 250 bytes: the temporaries' names fit NAME_MAX, leftovers still recognised" {
    local long
    long=$(printf 'n%.0s' {1..247}).h5
    fftshard 2 --quiet in.h5 "$long"
    run oracle check "in=in.h5 out=$long ranks=2"
    assert_success
    assert_no_temporaries
    # the set's directory and files too, and --force finds the old set
    fftshard 2 --quiet --force --shard-output in.h5 "$long"
    fftshard 2 --quiet --force --shard-output=1 in.h5 "$long"
    run oracle check "in=in.h5 out=$long ranks=2"
    assert_success
    [ "$(compgen -G 'nnn*.shards-*' | wc -l)" -eq 1 ] || fail "sets: $(compgen -G 'nnn*.shards-*')"
    assert_no_temporaries
    # A leftover of a killed run has the same shortened name: the next run
    # knows it. (--verbose names the temporary.)
    run --separate-stderr fftshard 2 --verbose --force in.h5 "$long"
    assert_success
    local prefix dead
    prefix=$(grep -o '\./\.n[^ ]*\.fftshard-tmp-' <<<"$stderr" | head -1)
    [ -n "$prefix" ] || fail "--verbose does not name the temporary: $stderr"
    [ "${#prefix}" -lt 255 ] || fail "a temporary's name too long: $prefix"
    dead=$(sh -c 'echo $$')
    : >"$prefix$(hostname)-$dead-abcdef"
    run --separate-stderr fftshard 2 --quiet --force in.h5 "$long"
    assert_success
    [[ $stderr == *"note: removed $prefix$(hostname)-$dead-abcdef, left by an interrupted run"* ]] ||
        fail "the leftover was not recognised: $stderr"
    assert_no_temporaries
}
