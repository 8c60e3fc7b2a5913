#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# --apply: operators in Fourier space between the forward transform and its
# inverse. Every result equals tests/apply_oracle.py's numpy computation of
# the documented formula (1e-12 relative in double, 1e-5 in single) on odd
# and even shapes, real and complex input, batch axes, the 1-D four-step,
# slabs and pencils, every strategy, 1 to 8 ranks, ranks owning nothing;
# a Poisson solve matches an analytic answer; the round trip costs two
# exchanges for slabs; refusals come before any work; a transfer table that
# is no regular file, or is not text, is refused at once (never waited on),
# one written to while it is read is not taken.

load helpers

# applied CASE...: the oracle's check of each case.
applied() {
    python_serial "$srcdir/tests/apply_oracle.py" check "$@"
}

# A transfer table T(k) = 1 / (1 + k^2) on 0 .. KMAX (default 4).
transfer_table() {
    python_serial -c 'import numpy as np, sys
k = np.linspace(0, float(sys.argv[2]), 200)
np.savetxt(sys.argv[1], np.c_[k, 1 / (1 + k * k)], header="k T")' "$1" "${2:-4}"
}

# A job held at a pause point (FFTSHARD_PAUSE) must not outlive its test.
teardown() {
    kill_job
}

# table_refused NP STATUS FILE FRAGMENT...: --apply=transfer:FILE on NP ranks
# ends within 20 s (longer is a hang) with STATUS and the one line
# "--apply: transfer:FILE: ..." holding every FRAGMENT; o.h5 is as it was
# and no temporary is left. Standard input is the launcher's pipe.
table_refused() {
    local np=$1 want=$2 file=$3
    shift 3
    run --separate-stderr timeout -k 5 20 "${AS[@]}" "$MPIEXEC" -n "$np" "$FFTSHARD" \
        --apply="transfer:$file" r.h5 o.h5 </dev/null
    [ "$status" -ne 124 ] && [ "$status" -ne 137 ] ||
        fail "transfer:$file on $np ranks: no answer within 20 s"
    assert_error "$want" "--apply: transfer:$file: " "$@"
    assert_equal "$(cat o.h5)" keep
    assert_no_temporaries
}
AS=()

OPS=(gaussian:1.5 tophat:2 sharpk:1.2 lowpass:0.8 highpass:0.8:3 deriv:0 deriv:-1 laplacian
     poisson transfer:t.txt "gaussian:1,deriv:1,deriv:1")

@test "every operator, --real and complex, odd and even lengths, every strategy, slab and pencil, 1 to 8 ranks" {
    oracle make r.h5 10x7x6:float64 -- c.h5 9x8x7:complex128 -- e.h5 8x6x4:float64
    transfer_table t.txt 6
    local strategies=(alltoall random xorswap pairwise) cases=() i=0 op np s in real
    for op in "${OPS[@]}"; do
        for in in r.h5 c.h5 e.h5; do
            np=$((1 + i % 4))
            [ "$i" -lt 30 ] || np=$((5 + i % 4))
            s=${strategies[i % 4]}
            real=
            [ "$in" = c.h5 ] || real=--real
            fftshard "$np" -q --transpose="$s" $real --apply="$op" "$in" o$i.h5
            cases+=("in=$in out=o$i.h5 apply=$op")
            i=$((i + 1))
        done
        s=${strategies[i % 4]}
        in=r.h5
        [ $((i % 2)) = 0 ] || in=c.h5
        fftshard 4 -q --transpose="$s" --decomp=pencil --apply="$op" "$in" o$i.h5
        cases+=("in=$in out=o$i.h5 apply=$op")
        i=$((i + 1))
    done
    run applied "${cases[@]}"
    echo "$output"
    assert_success
}

@test "a cut at exactly a mode's |k|: the modes numpy keeps on 1 to 4 ranks, slab and pencil, every strategy, odd and even, --real and complex" {
    # k^2 summed in another order than the definition's (kx**2 + ky**2 + kz**2)
    # moves a mode across sharpk:K for K at its |k| (apply_oracle.py cut picks
    # such modes); lowpass and highpass at the same K give H = 1/2 there
    oracle make e.h5 10x8x6:float64 -- o.h5 9x7x5:complex128 -- c.h5 10x8x6:complex128 \
        -- r.h5 7x6x5:float64
    local strategies=(alltoall random xorswap pairwise) ranks=(1 2 3 4 pencil) cases=() i=0
    local in shape at below op real np lists n
    for in in e.h5:10x8x6 o.h5:9x7x5 c.h5:10x8x6 r.h5:7x6x5; do
        shape=${in#*:} in=${in%:*}
        read -r at below < <(python_serial "$srcdir/tests/apply_oracle.py" cut "$shape")
        [ -n "$below" ]
        lists=("sharpk:$at" "sharpk:$below" "lowpass:$at:64,sharpk:$at" "highpass:$below:64,sharpk:$below")
        real=
        case $in in e.h5 | r.h5) real=--real ;; esac
        for n in 1 2 3; do
            op=${lists[i % 4]} np=${ranks[i % 5]}
            if [ "$np" = pencil ]; then
                fftshard 4 -q --decomp=pencil --transpose="${strategies[i % 4]}" $real --apply="$op" "$in" out$i.h5
            else
                fftshard "$np" -q --transpose="${strategies[(i / 2) % 4]}" $real --apply="$op" "$in" out$i.h5
            fi
            cases+=("in=$in out=out$i.h5 apply=$op")
            i=$((i + 1))
        done
    done
    run applied "${cases[@]}"
    echo "$output"
    assert_success
}

@test "batch axes, --box-size, single precision, the 1-D four-step, ranks that own nothing" {
    oracle make b.h5 5x8x9:float64 -- f.h5 8x6x10:float32 -- g.h5 6x7x5:complex64 \
        -- one.h5 60:float64 -- onec.h5 45:complex128 -- thin.h5 2x9x8:float64 -- i.h5 6x5x4:int32 \
        -- c2.h5 64x48:complex128
    transfer_table t.txt 20
    fftshard 3 -q --axes=1,2 --real --apply=gaussian:1,deriv:2 b.h5 o1.h5
    fftshard 2 -q --axes=0,2 --apply=laplacian,lowpass:1:4 b.h5 o2.h5
    fftshard 4 -q --axes=1,2 --decomp=pencil --real --apply=poisson b.h5 o3.h5
    fftshard 2 -q --real --box-size=100,50,30 --apply=gaussian:3,deriv:1 f.h5 o4.h5
    fftshard 3 -q --box-size=2.5 --apply=tophat:0.3,transfer:t.txt g.h5 o5.h5
    fftshard 3 -q --apply=deriv:0,gaussian:2 one.h5 o6.h5
    fftshard 4 -q --real --apply=poisson one.h5 o7.h5
    fftshard 2 -q --apply=highpass:0.5,deriv:0 onec.h5 o8.h5
    fftshard 4 -q --real --apply=laplacian,gaussian:1 thin.h5 o9.h5
    fftshard 8 -q --apply=deriv:1,sharpk:2 thin.h5 o10.h5
    fftshard 3 -q --real --apply=gaussian:1 i.h5 o11.h5
    # one rank, one stage: its FFTs may run on the pieces as they are read
    fftshard 1 -q --axes=0 --apply=gaussian:2,deriv:0 c2.h5 o12.h5
    run applied "in=b.h5 out=o1.h5 axes=1,2 apply=gaussian:1,deriv:2" \
        "in=b.h5 out=o2.h5 axes=0,2 apply=laplacian,lowpass:1:4" \
        "in=b.h5 out=o3.h5 axes=1,2 apply=poisson" \
        "in=f.h5 out=o4.h5 box=100,50,30 apply=gaussian:3,deriv:1" \
        "in=g.h5 out=o5.h5 box=2.5 apply=tophat:0.3,transfer:t.txt" \
        "in=one.h5 out=o6.h5 apply=deriv:0,gaussian:2" \
        "in=one.h5 out=o7.h5 apply=poisson" \
        "in=onec.h5 out=o8.h5 apply=highpass:0.5,deriv:0" \
        "in=thin.h5 out=o9.h5 apply=laplacian,gaussian:1" \
        "in=thin.h5 out=o10.h5 apply=deriv:1,sharpk:2" \
        "in=i.h5 out=o11.h5 apply=gaussian:1 tol=1e-12" \
        "in=c2.h5 out=o12.h5 axes=0 apply=gaussian:2,deriv:0"
    echo "$output"
    assert_success
}

@test "poisson solves laplacian(phi) = f: a product of sines, to 1e-12" {
    python_serial "$srcdir/tests/apply_oracle.py" sines s.h5 16x12x10 1000,600,500
    fftshard 2 -q --real --box-size=1000,600,500 --apply=poisson s.h5:/f phi.h5:/phi
    fftshard 4 -q --decomp=pencil --box-size=1000,600,500 --apply=poisson s.h5:/f phic.h5:/phi
    # and back: the Laplacian of the solution is f
    fftshard 3 -q --real --box-size=1000,600,500 --apply=laplacian phi.h5:/phi f.h5:/f
    run applied "in=s.h5:/f out=phi.h5:/phi apply=poisson expect=s.h5:/phi" \
        "in=s.h5:/f out=phic.h5:/phi apply=poisson expect=s.h5:/phi" \
        "in=phi.h5:/phi out=f.h5:/f apply=laplacian expect=s.h5:/f"
    echo "$output"
    assert_success
}

@test "several inputs, each filtered; the attributes record the operation, the input's are kept" {
    oracle make a.h5 /u=8x6x5:float64 /v=8x6x5:float64 /w=7x6x5:complex128
    python_serial -c 'import h5py
with h5py.File("a.h5", "a") as f:
    f["u"].attrs["units"] = "km/s"
    f["v"].attrs["time"] = 2.5'
    fftshard 3 -q --real --apply=lowpass:1.1:3,deriv:2 a.h5:/u a.h5:/v out.h5
    fftshard 2 -q --apply=lowpass:1.1:3,deriv:2 a.h5:/w outc.h5
    run applied "in=a.h5:/u out=out.h5:/u apply=lowpass:1.1:3,deriv:2" \
        "in=a.h5:/v out=out.h5:/v apply=lowpass:1.1:3,deriv:2" \
        "in=a.h5:/w out=outc.h5:/w apply=lowpass:1.1:3,deriv:2"
    echo "$output"
    assert_success
    run python_serial -c 'import h5py
a = h5py.File("out.h5")["u"].attrs
print(a["operation"], a["direction"], list(a["box_size"]), a["units"])'
    assert_output "lowpass:1.1000000000000001:3,deriv:2 round trip [8.0, 6.0, 5.0] km/s"
}

@test "the round trip: two exchanges for slabs, four for 2x2 pencils; an operate phase; the summary says so" {
    oracle make r.h5 16x12x10:float64
    fftshard 2 -q --real --apply=gaussian:2 --report=a.json r.h5 a.h5
    fftshard 2 -q --real --report=p.json r.h5 p.h5
    fftshard 4 -q --real --decomp=pencil --apply=gaussian:2 --report=b.json r.h5 b.h5
    fftshard 2 -q --real --axes=1,2 --apply=gaussian:2 --report=n.json r.h5 n.h5
    run python_serial -c 'import json
a, p, b, n = (json.load(open(n)) for n in ("a.json", "p.json", "b.json", "n.json"))
print(a["exchange"]["count"], p["exchange"]["count"], b["exchange"]["count"],
      a["operation"], p["operation"], "operate" in a["phases"], a["exchange"]["bytes_sent"] == 2 * p["exchange"]["bytes_sent"],
      a["operation_in_pass"], b["operation_in_pass"], n["operation_in_pass"], "operation_in_pass" in p)'
    # slabs and pencils end in a strided pass, which the operators run inside;
    # with a batch axis first (split, no exchange) the last pass is contiguous:
    # the operation is a pass of its own
    assert_output "2 1 4 gaussian:2 None True True True True False False"
    run --separate-stderr fftshard 2 --real --apply=gaussian:2 r.h5 c.h5
    assert_success
    [[ $stderr == *"operation: gaussian:2 in Fourier space, inside the last FFT pass; 2 exchanges in all"* ]]
    [[ $stderr == *"  operate "* ]]
    run --separate-stderr fftshard 2 --real --axes=1,2 --apply=gaussian:2 r.h5 e.h5
    [[ $stderr == *"operation: gaussian:2 in Fourier space; 0 exchanges in all"* ]]
    [[ $stderr == *"  operate "* ]]
    run --separate-stderr fftshard 2 --real r.h5 d.h5
    [[ $stderr != *"operate"* ]]
}

@test "refusals: unknown operators, bad parameters, deriv on a batch axis, with --inverse or spectra: status 2" {
    oracle make r.h5 8x6x4:float64
    local bad
    for bad in "--apply=blur:2" "--apply=gaussian" "--apply=gaussian:-1" "--apply=gaussian:x" \
        "--apply=lowpass:1:0" "--apply=laplacian:2" "--apply=deriv:9" "--apply=gaussian:1," \
        "--apply=sharpk:1 --inverse" "--apply=sharpk:1 --check" "--apply=sharpk:1 --power-spectrum --shot-noise=1" \
        "--apply=sharpk:1 --shard-output" "--apply=poisson --axes=0,1 --box-size=1,2,3"; do
        echo "$bad" >o.h5
        run --separate-stderr fftshard 2 $bad r.h5 o.h5
        assert_error "$EXIT_USAGE"
        assert_equal "$(cat o.h5)" "$bad"
    done
    run --separate-stderr fftshard 2 --axes=1,2 --apply=deriv:0 r.h5 o2.h5
    assert_error "$EXIT_USAGE" "deriv:0" "not a transformed axis"
    [ ! -e o2.h5 ]
    run --separate-stderr fftshard 1 --box-size=3 r.h5 o2.h5
    assert_error "$EXIT_USAGE" "--box-size"
    assert_no_temporaries
}

@test "a transfer table that does not cover the grid's |k|, or is not a table: status 3 before any work" {
    oracle make r.h5 8x6x4:float64
    transfer_table short.txt 2     # the grid's |k| goes to about 4.8
    printf '0.5 1\n1 2\n9 3\n' >nozero.txt
    printf '0 1\n2 x\n' >text.txt
    printf '0 1\n3 1\n2 1\n9 1\n' >order.txt
    echo keep >o.h5
    run --separate-stderr fftshard 2 --real --apply=transfer:short.txt r.h5 o.h5
    assert_error "$EXIT_INPUT" "transfer:short.txt" "does not cover"
    run --separate-stderr fftshard 2 --real --apply=gaussian:1,transfer:nozero.txt r.h5 o.h5
    assert_error "$EXIT_INPUT" "does not cover the grid's |k| from 0"
    run --separate-stderr fftshard 2 --apply=transfer:text.txt r.h5 o.h5
    assert_error "$EXIT_INPUT" "line 2"
    run --separate-stderr fftshard 2 --apply=transfer:order.txt r.h5 o.h5
    assert_error "$EXIT_INPUT" "k must increase"
    run --separate-stderr fftshard 2 --apply=transfer:missing.txt r.h5 o.h5
    assert_error "$EXIT_INPUT" "missing.txt"
    assert_equal "$(cat o.h5)" keep
    assert_no_temporaries
}

@test "a transfer table that is no regular file is refused at once, never waited on, on 1 and 2 ranks" {
    oracle make r.h5 8x6x4:float64
    echo keep >o.h5
    mkfifo fifo
    python_serial -c 'import socket; socket.socket(socket.AF_UNIX).bind("sock")'
    mkdir dir
    ln -s fifo to-fifo
    ln -s /dev/zero to-zero
    ln -s dir to-dir
    # a 2 GiB file of a table and holes: sparse, it takes no room
    printf '0 1\n10 1\n' >huge.txt
    truncate -s 2G huge.txt
    local np
    for np in 1 2; do
        table_refused "$np" "$EXIT_INPUT" fifo "not a regular file (a FIFO)"
        table_refused "$np" "$EXIT_INPUT" to-fifo "not a regular file (a FIFO)"
        table_refused "$np" "$EXIT_INPUT" /dev/zero "not a regular file (a device)"
        table_refused "$np" "$EXIT_INPUT" to-zero "not a regular file (a device)"
        # the launcher's pipe, or a device where it gives none
        table_refused "$np" "$EXIT_INPUT" /dev/stdin "not a regular file (a "
        table_refused "$np" "$EXIT_INPUT" sock "not a regular file (a socket)"
        table_refused "$np" "$EXIT_INPUT" dir "is a directory"
        table_refused "$np" "$EXIT_INPUT" to-dir "is a directory"
        table_refused "$np" "$EXIT_INPUT" missing "no such file"
        table_refused "$np" "$EXIT_INPUT" huge.txt "larger than 1 GiB (2147483648 bytes)"
    done
    [ -p fifo ] && [ -S sock ] || fail "a special file was replaced"
    # without the permission to read it (root reads everything: the
    # capabilities that let it are dropped for the run)
    printf '0 1\n10 1\n' >secret.txt
    chmod 000 secret.txt
    if [ "$(id -u)" -eq 0 ]; then
        AS=(setpriv --bounding-set -dac_override,-dac_read_search)
        "${AS[@]}" true || fail "root cannot drop the capabilities to bypass permissions"
    fi
    table_refused 2 "$EXIT_INPUT" secret.txt "Permission denied"
}

@test "a transfer table of bad text (NUL byte, long line, byte order mark, NaN, Inf, one row) is refused naming the line" {
    oracle make r.h5 8x6x4:float64
    echo keep >o.h5
    printf '0 1\n10 1\0 5\n' >nul.txt
    { printf '0 1'; head -c 70000 /dev/zero | tr '\0' ' '; printf '\n10 1\n'; } >long.txt
    printf '\357\273\2770 1\n10 1\n' >bom.txt
    printf '0 1\nnan 1\n' >nan.txt
    printf '0 1\n10 inf\n' >inf.txt
    printf '0 1\n10 1e999\n' >overflow.txt
    printf '0 1\n5 1 2\n10 1\n' >three.txt
    printf '# k T\n0 1\n' >one.txt
    printf '0 1\n10 1\n10 2\n' >same.txt
    local np
    for np in 1 2; do
        table_refused "$np" "$EXIT_INPUT" nul.txt "line 2 holds a NUL byte"
        table_refused "$np" "$EXIT_INPUT" long.txt "line 1 is longer than 65536 bytes"
        table_refused "$np" "$EXIT_INPUT" bom.txt "line 1 starts with a UTF-8 byte order mark"
        table_refused "$np" "$EXIT_INPUT" nan.txt "line 2: k is nan, not a finite number"
        table_refused "$np" "$EXIT_INPUT" inf.txt "line 2: T is inf, not a finite number"
        table_refused "$np" "$EXIT_INPUT" overflow.txt "line 2: T is inf, not a finite number"
        table_refused "$np" "$EXIT_INPUT" three.txt "line 2: expected two numbers k T"
        table_refused "$np" "$EXIT_INPUT" one.txt "expected at least two rows k T"
        table_refused "$np" "$EXIT_INPUT" same.txt "line 3: k must increase (10 after 10)"
    done
}

@test "a transfer table with CRLF line ends, no final line end or a long comment is the same table" {
    oracle make r.h5 8x6x4:float64
    transfer_table t.txt 6
    fftshard 2 -q --apply=transfer:t.txt r.h5 lf.h5
    sed 's/$/\r/' t.txt >crlf.txt
    head -c -1 t.txt >noend.txt
    head -c -2 crlf.txt >crlf-noend.txt
    { printf '# '; head -c 20000 /dev/zero | tr '\0' x; echo; cat t.txt; } >comment.txt
    local f
    for f in crlf noend crlf-noend comment; do
        run --separate-stderr timeout -k 5 60 "$MPIEXEC" -n 2 "$FFTSHARD" -q --apply=transfer:$f.txt \
            r.h5 $f.h5
        assert_success
        python_serial -c 'import h5py, numpy as np, sys
a, b = (h5py.File(n, "r")["data"][()] for n in sys.argv[1:])
sys.exit(0 if np.array_equal(a, b) else "%s differs from the table with LF line ends" % sys.argv[2])' \
            lf.h5 $f.h5
    done
}

@test "a transfer table written to while rank 0 reads it is not taken (status 1), on 1 and 2 ranks" {
    oracle make r.h5 8x6x4:float64
    transfer_table t.txt 6
    local np change
    for np in 1 2; do
        for change in append touch; do
            rm -f run.err
            FFTSHARD_PAUSE=text-read:4 "$MPIEXEC" -n "$np" "$FFTSHARD" -q --apply=transfer:t.txt \
                r.h5 o.h5 2>run.err &
            job=$!
            await_pause run.err "pausing at text-read" "the table's end ($np ranks, $change)"
            if [ "$change" = append ]; then
                echo "$((6 + np)) 0.02" >>t.txt
            else
                touch -d "2001-01-01 00:00:0$np" t.txt
            fi
            end_job
            assert_equal "$job_status" "$EXIT_RUNTIME"
            grep -q "^fftshard: error: --apply: transfer:t.txt: changed while it was read" run.err ||
                fail "$(cat run.err)"
            [ ! -e o.h5 ] || fail "o.h5 was written"
            assert_no_temporaries
        done
    done
}
