#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-3.0-or-later
# JSON on standard output and the dry run's JSON: --report=- prints the run's
# report and nothing else on stdout, equal to the one a file gets; a failed
# write there says the result was written; --dry-run --report writes the
# plan as JSON whose figures are the text's; and a dry run whose plan does
# not fit --mem-per-rank exits 1.

load helpers

# same_report A B: the two run reports are equal but for what differs from
# one run to the next (times, rates, peak memory) and the command line.
same_report() {
    python_serial - "$1" "$2" <<'EOF'
import json, sys

VARYING = {"command_line", "phases", "seconds", "gflops", "gflops_file_to_file", "seconds_max",
           "bandwidth_gbs", "pack_seconds_max", "communication_seconds_max",
           "unpack_seconds_max", "block_fft_seconds", "block_fft_overlapped_seconds",
           "peak_bytes_max", "peak_over_rank_share", "peak_memory_bytes", "io_overlap"}

def steady(v):
    if isinstance(v, dict):
        return {k: steady(x) for k, x in v.items() if k not in VARYING}
    if isinstance(v, list):
        return [steady(x) for x in v]
    return v

a, b = (steady(json.load(open(f))) for f in sys.argv[1:3])
if a != b:
    sys.exit(f"the reports differ:\n{a}\n{b}")
EOF
}

# dry_text_is_json TEXT JSON: every figure of the dry run's text (the file
# TEXT) equals the JSON's (the file JSON), to the text's rounding.
dry_text_is_json() {
    python_serial - "$1" "$2" <<'EOF'
import json, re, sys

text = open(sys.argv[1]).read().splitlines()
p = json.load(open(sys.argv[2]))
MiB = 1048576
errors = []

def same(what, got, want):
    if got != want:
        errors.append(f"{what}: text {got!r}, JSON {want!r}")

def shape(s):
    return [int(n) for n in s.split("x")]

def mib(b, digits):
    return f"{b / MiB:.{digits}f}"

same("schema", p["schema"], "fftshard-dry-run/1")
m = re.match(r"fftshard dry run: (\S+) (\S+) on (\d+) ranks: (\S+), (\S+) precision, (\S+)$", text[0])
same("first line", m.groups(), ("x".join(map(str, p["shape"])), p["dtype"], str(p["ranks"]),
                                p["transform"], p["precision"], p["direction"]))
d = p["decomposition"]
m = re.match(r"decomposition: pencil, grid (\d+) x (\d+)", text[1])
same("pencil", bool(m), d["type"] == "pencil")
if m:
    same("grid", [int(m[1]), int(m[2])], d["grid"])
    same("reason", text[1].endswith(f"({d['pencil_reason']})"), True)
m = re.match(r"decomposition: slab, axis (\d+) -> axis (\d+)$", text[1])
if m:
    same("slab axes", [int(m[1]), int(m[2])], [d["split_axis_before"], d["split_axis_after"]])
m = re.match(r"decomposition: slab on axis (\d+), (no exchange|gathered on rank 0 for the last pass)$",
             text[1])
if m:
    same("slab", [int(m[1]), m[2] == "no exchange"],
         [d["split_axis_before"], d["split_axis_after"] == d["split_axis_before"]])
m = re.match(r"decomposition: 1-D four-step, (\d+) x (\d+)$", text[1])
same("four steps", [int(m[1]), int(m[2])] if m else None, d["four_step"])
same("type", d["type"], "four-step" if m else d["type"])

stages = [l for l in text if l.startswith("stage ")]
same("stages", len(stages), len(p["stages"]))
for line, s in zip(stages, p["stages"]):
    m = re.match(r"stage \d+: (.*); local blocks (\S+) to (\S+) \(up to (\d+) elements, ([\d.]+) MiB\)$", line)
    split = [f"axis {x['axis']} over {x['ranks']}" + (" (batch)" if x["batch"] else "")
             for x in s["split"]] + (["all on rank 0"] if s["gathered"] else [])
    same("split", m[1], ", ".join(split) or "not split")
    same("blocks", [shape(m[2]), shape(m[3]), int(m[4]), m[5]],
         [s["smallest_block"], s["largest_block"], s["largest_elements"], mib(s["largest_bytes"], 1)])
empty = [int(re.match(r"  (\d+) of", l)[1]) for l in text if "hold nothing" in l]
same("empty ranks", empty, [s["empty_ranks"] for s in p["stages"] if s["empty_ranks"]])

exchanges = [l for l in text if l.startswith("exchange ")]
same("exchanges", len(exchanges), len(p["exchanges"]))
for line, e in zip(exchanges, p["exchanges"]):
    m = re.match(r"exchange \d+: among (\d+) ranks \((.*)\), blocks of up to (\d+) elements "
                 r"\(([\d.]+) MiB\); messages per rank: (.*)$", line)
    msgs = {k: int(v) for k, v in (x.split(" ") for x in m[5].split(", "))}
    same("exchange", [int(m[1]), m[2], int(m[3]), m[4], msgs],
         [e["ranks"], e["among"], e["largest_block_elements"], mib(e["largest_block_bytes"], 2),
          e["messages_per_rank"]])

line = next(l for l in text if l.startswith("memory per rank"))
m = re.match(r"memory per rank \((.*)\): array ([\d.]+) MiB \+ exchange ([\d.]+) MiB \+ plans and "
             r"I/O ~([\d.]+) MiB \+ libraries ~(\d+) MiB = about ([\d.]+) MiB$", line)
mem = p["memory_per_rank"]
same("memory", list(m.groups()[1:]),
     [mib(mem["array_bytes"], 1), mib(mem["exchange_bytes"], 1), mib(mem["plans_and_io_bytes"], 1),
      mib(mem["libraries_bytes"], 0), mib(mem["total_bytes"], 1)])
who = mem["strategy"] or "no exchange"
same("memory of", who in m[1], True)
st = p["strategy"]
same("strategy requested", st["requested"], p["transpose"])
if mem["strategy"]:
    # the particles' buffers (--paint) are the run's, counted in its total alone
    same("the strategy's memory", {k: v for k, v in mem.items() if k != "paint_bytes"},
         dict(p["strategies"][who], strategy=who))
if p["transpose"] == "auto" and mem["strategy"]:
    same("the largest", mem["total_bytes"], max(s["total_bytes"] for s in p["strategies"].values()))
elif mem["strategy"]:
    same("the strategy", st["name"], who)
if p["transpose"] == "default" and mem["strategy"]:
    line = [l for l in text if l.startswith("strategy: ")]
    same("the default's line", line, [f"strategy: {st['name']} (default: {st['reason']})"])
limit = [l for l in text if l.startswith("--mem-per-rank")]
lim = p["mem_per_rank"]
if limit:
    m = re.match(r"--mem-per-rank ([\d.]+) MiB: (fits|does NOT fit)$", limit[0])
    same("limit", [m[1], m[2] == "fits"], [mib(lim["limit_bytes"], 1), lim["fits"]])
    same("fits", lim["fits"], mem["total_bytes"] <= lim["limit_bytes"])
else:
    same("no limit", [lim["limit_bytes"], lim["fits"]], [None, None])
if errors:
    sys.exit("\n".join(errors))
EOF
}

# dry_both ARGS...: the dry run with --report=plan.json (text on stdout) and
# with --report=- (JSON on stdout, text on stderr): the same text and JSON,
# the text's figures the JSON's.
dry_both() {
    run --separate-stderr "$FFTSHARD" --dry-run --report=plan.json "$@"
    assert_success
    [ -z "$stderr" ] || fail "stderr: $stderr"
    printf '%s\n' "$output" >text.txt
    assert_no_temporaries
    run --separate-stderr "$FFTSHARD" --dry-run --report=- "$@"
    assert_success
    printf '%s\n' "$output" >stdout.json
    printf '%s\n' "$stderr" >stderr.txt
    # The default strategy's reason quotes the node's available memory,
    # which moves between the two runs: the figure alone is left out.
    local node_mem='s/of [0-9.]* MiB per rank (MemAvailable/of N MiB per rank (MemAvailable/'
    diff -u <(sed "$node_mem" text.txt) <(sed "$node_mem" stderr.txt) ||
        fail "--report=-: the text on stderr differs"
    python_serial -c 'import json, re, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
a.pop("command_line"), b.pop("command_line")
for p in a, b:
    p["strategy"]["reason"] = re.sub(r"of [0-9.]+ MiB per rank \(MemAvailable",
                                     "of N MiB per rank (MemAvailable", p["strategy"]["reason"])
    p["out_of_core"]["reason"] = re.sub(r"[0-9.]+ MiB \(MemAvailable", "N MiB (MemAvailable",
                                        p["out_of_core"]["reason"])
sys.exit(a != b)' plan.json stdout.json || fail "--report=- and --report=FILE differ"
    dry_text_is_json text.txt plan.json
}

@test "--report=-: the run's report alone on stdout, equal to the file's; a failed run prints none" {
    oracle make in.h5 12x10x6:complex128
    run --separate-stderr fftshard 2 --report=- --transpose=alltoall in.h5 out.h5
    assert_success
    printf '%s\n' "$output" >stdout.json
    # Nothing else on stdout: the whole of it is one JSON document.
    python_serial -m json.tool stdout.json >/dev/null || fail "stdout is not JSON: $output"
    [ ! -e ./- ] || fail "--report=- wrote a file named -"
    [[ $stderr == "fftshard: 12x10x6 complex128"* ]] || fail "no summary on stderr: $stderr"
    run oracle check "in=in.h5 out=out.h5 ranks=2 transpose=alltoall"
    assert_success
    fftshard 2 -q -f --report=file.json --transpose=alltoall in.h5 out.h5
    same_report stdout.json file.json
    # A run that fails prints no report.
    run --separate-stderr fftshard 2 --report=- in.h5 out.h5
    assert_error "$EXIT_OUTPUT" "out.h5" "exists"
}

@test "--report=-: a failed write on stdout is status 1 after the result is in place" {
    oracle make in.h5 8x6x4:float64
    run --separate-stderr bash -c '"$0" --report=- "$1" "$2" >/dev/full' "$FFTSHARD" in.h5 out.h5
    assert_error "$EXIT_RUNTIME" "standard output" "(the result was written)"
    run oracle check "in=in.h5 out=out.h5 ranks=1"
    assert_success
    assert_no_temporaries
    [ ! -e ./- ] || fail "--report=- wrote a file named -"
}

@test "--report=./- writes a file named -, --report=- none, with and without --dry-run" {
    oracle make in.h5 8x6:complex128
    run --separate-stderr "$FFTSHARD" --dry-run --report=- in.h5
    assert_success
    [ ! -e ./- ] || fail "--dry-run --report=- wrote a file named -"
    run --separate-stderr "$FFTSHARD" --dry-run --report=./- in.h5
    assert_success
    assert_line "nothing was read, computed or written"
    assert_equal "$(python_serial -c 'import json; print(json.load(open("-"))["schema"])')" \
        "fftshard-dry-run/1"
    rm ./-
    run --separate-stderr fftshard 1 --report=./- in.h5 out.h5
    assert_success
    assert_output ""
    assert_equal "$(python_serial -c 'import json; print(json.load(open("-"))["schema"])')" \
        "fftshard-report/1"
}

@test "--dry-run --report: the JSON's figures are the text's, for a file on slabs" {
    oracle make in.h5 20x12x9:complex64
    dry_both --ranks=3 in.h5
    assert_equal "$(python_serial -c 'import json; p = json.load(open("plan.json"))
print(p["input"], p["decomposition"]["type"], len(p["exchanges"]))')" "in.h5:/data slab 1"
    # Every strategy for auto, and a batch axis.
    dry_both --ranks=4 --transpose=auto --axes=1,2 in.h5
}

@test "--dry-run --report: the JSON's figures are the text's, for pencils, --real and idle ranks" {
    dry_both --shape=64x48x30 --dtype=complex128 --ranks=12 --decomp=pencil --mem-per-rank=1G
    assert_equal "$(python_serial -c 'import json; p = json.load(open("plan.json"))
print(p["input"], p["decomposition"]["grid"], len(p["stages"]), p["mem_per_rank"]["fits"])')" \
        "None [4, 3] 3 True"
    dry_both --shape=256x100 --dtype=float64 --real --ranks=6 --transpose=auto
    assert_equal "$(python_serial -c 'import json; print(json.load(open("plan.json"))["transform"])')" "r2c"
    # More ranks than slabs: some hold nothing.
    dry_both --shape=5x64 --ranks=8 --decomp=slab
    # No exchange, and a 1-D transform in four steps.
    dry_both --shape=40x8 --ranks=2 --axes=1
    dry_both --shape=4096 --ranks=4
    # A 1-D transform gathered on rank 0 for its last pass.
    dry_both --shape=4099 --ranks=4
    assert_equal "$(python_serial -c 'import json; p = json.load(open("plan.json"))
print(p["decomposition"]["split_axis_after"], [s["gathered"] for s in p["stages"]])')" "-1 [False, True]"
}

@test "--dry-run --in-memory --mem-per-rank: status 1 when the plan does not fit, 0 when it does" {
    run --separate-stderr "$FFTSHARD" --dry-run --in-memory --shape=256x256x256 --ranks=4 --mem-per-rank=50M \
        --report=plan.json
    assert_failure "$EXIT_RUNTIME"
    assert_line --partial "--mem-per-rank 50.0 MiB: does NOT fit"
    assert_line "nothing was read, computed or written"
    [[ $stderr == "fftshard: error: --mem-per-rank: the plan needs about "*" MiB per rank, more than 50.0 MiB (not enough memory)" ]] ||
        fail "$stderr"
    printf '%s\n' "$output" >text.txt
    dry_text_is_json text.txt plan.json
    assert_equal "$(python_serial -c 'import json; print(json.load(open("plan.json"))["mem_per_rank"]["fits"])')" False
    # The same on 2 ranks of a job, and with the JSON on stdout.
    run --separate-stderr fftshard 2 --dry-run --in-memory --shape=256x256x256 --ranks=4 --mem-per-rank=50M --report=- -q
    assert_failure "$EXIT_RUNTIME"
    assert_equal "$(python_serial -c 'import json, sys; print(json.loads(sys.argv[1])["mem_per_rank"]["fits"])' "$output")" False
    [[ $stderr == *"(not enough memory)" && ${#stderr_lines[@]} -eq 1 ]] || fail "$stderr"
    run --separate-stderr "$FFTSHARD" --dry-run --shape=256x256x256 --ranks=4 --mem-per-rank=1G
    assert_success
    assert_line --partial "--mem-per-rank 1024.0 MiB: fits"
    [ -z "$stderr" ] || fail "stderr: $stderr"
}

@test "--dry-run --report: refused when it is the input (4), the input unchanged" {
    oracle make in.h5 8x6:complex128
    local before
    before=$(checksum in.h5)
    run --separate-stderr "$FFTSHARD" --dry-run --report=in.h5 in.h5
    assert_error "$EXIT_OUTPUT" "--report=in.h5" "is the input file"
    assert_equal "$(checksum in.h5)" "$before"
    assert_no_temporaries
}

@test "--dry-run --report: the exchange settings, as given and by default" {
    run --separate-stderr "$FFTSHARD" --dry-run --report=- --shape=16x16x16 --ranks=4 \
        --seed=7 --packet=64K --queues=2
    assert_success
    assert_equal "$(python_serial -c 'import json, sys; s = json.loads(sys.argv[1])["strategy"]
print(s["seed"], s["packet_bytes"], s["queues"])' "$output")" "7 65536 2"
    run --separate-stderr "$FFTSHARD" --dry-run --report=- --shape=16x16x16 --ranks=4
    assert_success
    assert_equal "$(python_serial -c 'import json, sys; s = json.loads(sys.argv[1])["strategy"]
print(s["seed"], s["packet_bytes"], s["queues"])' "$output")" "1 1048576 4"
}
