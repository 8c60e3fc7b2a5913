#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""structure.py: the shape of the source tree, as HACKING.md draws it.

    structure.py SRCDIR CHECK

CHECK is one of:
  layers     every #include of src/ runs down the folder order (core < io,
             exchange < plan < compute < stages < exec < report < output < the top;
             tools over them all), never up and never into tools/
  sizes      no file of src/ over 800 lines, no function over 110
  pipeline   src/pipeline.c at most 450 lines, naming no stage
  hacking    every backticked fs_ name of HACKING.md is defined in src/
  dead       every function src/ defines is called (or is a stage's, a
             strategy's or main's)
  sim        sim/ holds no stand-in for a product function
Prints what breaks the rule, one line each, and exits 1; nothing and 0 when
it holds. Reads the files as text: no compiler, no build needed.
"""
import os
import re
import sys

LAYERS = {"core": 0, "io": 1, "exchange": 1, "plan": 2, "compute": 3, "stages": 4,
          "exec": 5, "report": 6, "output": 7, ".": 8, "tools": 9}
MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 110
MAX_PIPELINE_LINES = 450


def sources(src, exts=(".c", ".h")):
    for root, _, files in os.walk(src):
        for name in sorted(files):
            if name.endswith(exts):
                path = os.path.join(root, name)
                yield path, os.path.relpath(path, src)


def folder(rel):
    return os.path.dirname(rel) or "."


def check_layers(src):
    bad = []
    for path, rel in sources(src):
        mine = folder(rel)
        for n, line in enumerate(open(path, encoding="utf-8"), 1):
            m = re.match(r'#include "([a-z_0-9]+)/[a-z_0-9]+\.h"', line)
            if not m or m.group(1) == mine:
                continue
            theirs = m.group(1)
            if theirs not in LAYERS or LAYERS[theirs] >= LAYERS.get(mine, 99) or theirs == "tools":
                bad.append("%s:%d: %s includes %s (up or across the layers)"
                           % (rel, n, mine, line.strip()[10:-1]))
    return bad


# A function definition at column 0: its name on the line, its body from
# the "{" at column 0 to the next "}" at column 0.
DEFINITION = re.compile(r"^(?:static\s+)?(?:inline\s+)?[A-Za-z_][\w\s\*]*?\b([a-z_][a-z_0-9]*)\s*\(")


def functions(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    name, start = None, None
    for i, line in enumerate(lines):
        m = DEFINITION.match(line)
        if m and not line.rstrip().endswith(";") and not line.startswith(("typedef", "#")):
            name = m.group(1)
        if line.startswith("{") and name:
            start = i
        if line.startswith("}") and start is not None:
            yield name, start + 1, i - start + 1
            name, start = None, None


def check_sizes(src):
    bad = []
    for path, rel in sources(src):
        n = sum(1 for _ in open(path, encoding="utf-8"))
        if n > MAX_FILE_LINES:
            bad.append("%s: %d lines (at most %d)" % (rel, n, MAX_FILE_LINES))
        if rel.endswith(".c"):
            for name, line, length in functions(path):
                if length > MAX_FUNCTION_LINES:
                    bad.append("%s:%d: %s has %d lines (at most %d)"
                               % (rel, line, name, length, MAX_FUNCTION_LINES))
    return bad


def stage_names(src):
    """The words a stage is known by: each stage file's name, its options."""
    words = set()
    stages = os.path.join(src, "stages")
    table = open(os.path.join(stages, "stage.c"), encoding="utf-8").read()
    for ops in re.findall(r"&fs_stage_(\w+)", table):
        words.add(ops)
        text = open(os.path.join(stages, ops + ".c"), encoding="utf-8").read()
        words.update(re.findall(r'FS_OPT\("([a-z-]+)"', text))
    return words


def check_pipeline(src):
    path = os.path.join(src, "pipeline.c")
    text = open(path, encoding="utf-8").read()
    bad = []
    n = text.count("\n")
    if n > MAX_PIPELINE_LINES:
        bad.append("pipeline.c: %d lines (at most %d)" % (n, MAX_PIPELINE_LINES))
    for word in sorted(stage_names(src)):
        for m in re.finditer(r"\b%s\b" % re.escape(word), text):
            line = text.count("\n", 0, m.start()) + 1
            bad.append("pipeline.c:%d: names the stage word '%s'" % (line, word))
    return bad


def defined_names(src):
    names = set()
    for path, _ in sources(src):
        text = open(path, encoding="utf-8").read()
        names.update(re.findall(r"\b(fs_[a-z_0-9]+)\b", text))
    return names


def check_hacking(src, hacking):
    text = open(hacking, encoding="utf-8").read()
    known = set()
    for path, _ in sources(src):
        body = open(path, encoding="utf-8").read()
        known.update(re.findall(r"\b(fs_[a-z_0-9]+)\s*\(", body))
        known.update(re.findall(r"\}\s*(fs_[a-z_0-9]+)\s*;", body))
        known.update(re.findall(r"typedef\s+(?:struct|enum)\s+(fs_[a-z_0-9]+)", body))
        known.update(re.findall(r"struct\s+(fs_[a-z_0-9]+)\s*\{", body))
        known.update(re.findall(r"fs_[a-z_0-9]+\s+(fs_[a-z_0-9]+)\s*[=;\[]", body))
        known.update(re.findall(r"\*const\s+(fs_[a-z_0-9]+)\s*\[", body))
        known.update(re.findall(r"fs_opt\s+(fs_[a-z_0-9]+)\s*\[", body))
        known.update(re.findall(r"typedef[^;]*\(\*\s*(fs_[a-z_0-9]+)\)", body))
    bad = []
    for m in re.finditer(r"`[^`]*?\b(fs_[a-z_0-9]+)\b[^`]*`", text):
        name = m.group(1)
        if name not in known:
            line = text.count("\n", 0, m.start()) + 1
            bad.append("HACKING.md:%d: %s is not defined in src/" % (line, name))
    return bad


def check_dead(src, others):
    defs = {}
    for path, rel in sources(src, (".c",)):
        for name, line, _ in functions(path):
            defs.setdefault(name, "%s:%d" % (rel, line))
    lines = []
    for root in [src] + others:
        for path, _ in sources(root, (".c", ".h")):
            lines.extend(open(path, encoding="utf-8").read().split("\n"))
    # A use is a mention on an indented line (a call, a table's entry, an
    # initializer); a mention at column 0 is a definition or a declaration.
    used = set()
    for line in lines:
        if line[:1] in (" ", "\t"):
            used.update(re.findall(r"\b([a-z_][a-z_0-9]*)\b", line))
    bad = []
    for name, where in sorted(defs.items()):
        if name not in used and name not in ("main", "LLVMFuzzerTestOneInput"):
            bad.append("%s: %s is defined and never used" % (where, name))
    return bad


def check_sim(sim, src):
    product = set()
    for path, _ in sources(src, (".c",)):
        text = open(path, encoding="utf-8").read()
        product.update(re.findall(r"^(?!static)[A-Za-z_][\w\s\*]*?\b(fs_[a-z_0-9]+)\s*\(", text, re.M))
    bad = []
    for path, rel in sources(sim, (".c",)):
        for name, line, _ in functions(path):
            if name in product:
                bad.append("sim/%s:%d: defines %s, a product function" % (rel, line, name))
    return bad


def main():
    srcdir, check = sys.argv[1], sys.argv[2]
    src = os.path.join(srcdir, "src")
    if check == "layers":
        bad = check_layers(src)
    elif check == "sizes":
        bad = check_sizes(src)
    elif check == "pipeline":
        bad = check_pipeline(src)
    elif check == "hacking":
        bad = check_hacking(src, os.path.join(srcdir, "HACKING.md"))
    elif check == "dead":
        bad = check_dead(src, [os.path.join(srcdir, d) for d in ("tests", "sim")])
    elif check == "sim":
        bad = check_sim(os.path.join(srcdir, "sim"), src)
    else:
        sys.exit("structure.py: unknown check %s" % check)
    for line in bad:
        print(line)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
