#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""decomp_scan: the decompositions of --real that tests/decompositions.bats runs.

A decomposition is told apart by its class, read from the dry run's JSON
(fftshard(1), DRY RUN REPORT): the kind (slab, pencil, four-step), "~" when
the halved axis is not the array's last, then each stage's split axes by
their role (R the halved axis, T another transformed axis, B a batch axis;
in lower case when split over a grid dimension of one rank, which still
decides the plan; "-" none; "g" when the stage is gathered on rank 0), and
" *" when some rank holds nothing in some stage. "slab R|T" is a slab whose
first stage splits the halved axis (the full complex rows then kept, of
which the half is written).

CONFIGS holds one configuration (shape, ranks, options) of each class that
the dry run shows for the shapes and options of `scan` on 1 to 8 ranks, the
fewest ranks found for it: `scan` prints the table again when the planner
changes (decompositions.bats checks that every row still shows its class).

  decomp_scan.py configs [first-real]
      The rows, fields separated by ";": shape, ranks, options
      (space-separated, "" for none), the transformed axes (comma-separated),
      the halved axis, the class. first-real: only the classes whose first
      stage splits the halved axis, which is also the last of an array of 2
      or more axes.
  decomp_scan.py class FILE...
      The class of each dry run's JSON, one a line ("none" for a file that
      holds none).
  decomp_scan.py scan FFTSHARD
      Run FFTSHARD's dry run (--real, float64) on every candidate (the
      shapes below, 1 to 8 ranks, --decomp=pencil, every --grid, --axes
      leaving out axes) and print CONFIGS anew (a few minutes).

Exit status: 0, or 2 on a usage error.
"""

import json
import subprocess
import sys

# The candidates of scan: small axes (3, 5, 7) last, 1-D to 4-D.
SHAPES = ["60", "7", "1000x5", "1000x3", "7x5", "12x3", "2x7", "9x8", "5x6",
          "3x200x5", "6x4x5", "5x6x7", "2x3x5", "7x3x3", "4x5x6", "8x6x4",
          "3x4x5x3", "2x3x4x5", "5x2x3x7"]
AXES = {2: ["1", "0"], 3: ["1,2", "0,2", "0,1", "2"],
        4: ["1,2,3", "0,1,3", "2,3", "1,3"]}

CONFIGS = [
    # shape, ranks, options, class (decomp_scan.py scan)
    ('60', 1, '', 'four-step b'),
    ('7', 1, '', 'slab -'),
    ('60', 2, '', 'four-step B|R'),
    ('7', 2, '', 'slab R|-g *'),
    ('60', 7, '', 'four-step B|R *'),
    ('1000x5', 1, '--axes=0', 'slab~ -'),
    ('1000x5', 2, '--axes=1', 'slab B'),
    ('1000x5', 2, '', 'slab T|R'),
    ('1000x5', 2, '--axes=0', 'slab~ B'),
    ('2x7', 3, '--axes=1', 'slab B *'),
    ('1000x3', 3, '', 'slab R|T'),
    ('2x7', 3, '', 'slab T|R *'),
    ('1000x3', 4, '--axes=0', 'slab~ B *'),
    ('3x200x5', 2, '--grid=2x1', 'pencil Tt|Tr|Tr'),
    ('3x200x5', 2, '--decomp=pencil', 'pencil tT|tR|tR'),
    ('3x200x5', 2, '', 'slab T|T'),
    ('2x3x5', 3, '--grid=3x1', 'pencil Tr|Tt|Rt'),
    ('7x3x3', 3, '--grid=1x3', 'pencil tR|tT|rT'),
    ('2x3x5', 4, '--axes=2', 'pencil BB'),
    ('3x200x5', 4, '--axes=1,2', 'pencil BT|BR'),
    ('3x200x5', 4, '--decomp=pencil', 'pencil TT|TR|TR'),
    ('2x3x5', 4, '--grid=4x1', 'pencil Tt|Tr|Tr *'),
    ('6x4x5', 4, '--grid=1x4', 'pencil rT|rT|tT'),
    ('2x3x5', 4, '--grid=1x4', 'pencil tT|tR|tR *'),
    ('7x3x3', 4, '--axes=0,1', 'pencil~ BT|BR'),
    ('7x3x3', 5, '', 'slab T|T *'),
    ('8x6x4', 5, '--axes=0,1', 'slab~ T|R'),
    ('2x3x5', 6, '--grid=3x2', 'pencil TR|TT|RT'),
    ('2x3x5', 8, '--axes=2', 'pencil BB *'),
    ('3x200x5', 8, '--axes=1,2', 'pencil BR|BT'),
    ('2x3x5', 8, '--axes=1,2', 'pencil BT|BR *'),
    ('2x3x5', 8, '', 'pencil TT|TR|TR *'),
    ('8x6x4', 8, '--grid=1x8', 'pencil rT|rT|tT *'),
    ('7x3x3', 8, '--axes=0,1', 'pencil~ BT|BR *'),
    ('3x4x5x3', 2, '--grid=2x1', 'pencil Tt|Tt|Tt'),
    ('3x4x5x3', 2, '--decomp=pencil', 'pencil tT|tT|tT'),
    ('2x3x4x5', 4, '--axes=1,2,3', 'pencil BT|BT'),
    ('3x4x5x3', 4, '--grid=2x2', 'pencil TT|TT|TT'),
    ('3x4x5x3', 5, '--decomp=pencil', 'pencil tT|tT|tT *'),
    ('2x3x4x5', 6, '--axes=0,1,3', 'pencil TT|TB|TB'),
]


def axes_of(shape, options):
    ndim = shape.count("x") + 1
    for opt in options.split():
        if opt.startswith("--axes="):
            return [int(a) % ndim for a in opt[7:].split(",")]
    return list(range(ndim))


def first_real(shape, cls):
    """Whether the first stage splits the halved axis, the last of rows of
    several (the full complex rows are kept, their halves written)."""
    kind, stages = cls.split()[:2]
    return kind in ("slab", "pencil") and "x" in shape and "|" in stages and \
        "R" in stages.split("|")[0].upper()


def role(split, real, axes):
    r = "R" if split["axis"] == real else "T" if split["axis"] in axes else "B"
    return r if split["ranks"] > 1 else r.lower()


def class_of(report):
    ndim = len(report["shape"])
    axes = report["axes"]
    real = axes[-1]
    dec = report["decomposition"]
    kind = "four-step" if dec["four_step"] is not None else dec["type"]
    if real != ndim - 1:
        kind += "~"
    stages = []
    for st in report["stages"]:
        roles = "".join(role(sp, real, axes) for sp in st["split"]) or "-"
        stages.append(roles + ("g" if st["gathered"] else ""))
    empty = any(st["empty_ranks"] > 0 for st in report["stages"])
    return kind + " " + "|".join(stages) + (" *" if empty else "")


def dry_run(fftshard, shape, ranks, options):
    r = subprocess.run([fftshard, "--dry-run", f"--ranks={ranks}", "--real", "--dtype=float64",
                        f"--shape={shape}", "--report=-", *options.split()],
                       capture_output=True, text=True, check=False)
    return json.loads(r.stdout) if r.returncode == 0 else None


def candidates():
    for shape in SHAPES:
        ndim = shape.count("x") + 1
        for ranks in range(1, 9):
            options = [""] + ["--axes=" + a for a in AXES.get(ndim, [])]
            if ndim >= 3 and ranks > 1:
                options.append("--decomp=pencil")
                options += [f"--grid={a}x{ranks // a}" for a in range(1, ranks + 1)
                            if ranks % a == 0]
            for opt in options:
                yield shape, ranks, opt


def scan(fftshard):
    best = {}
    for shape, ranks, opt in candidates():
        report = dry_run(fftshard, shape, ranks, opt)
        if report is None:
            continue
        cls = class_of(report)
        if cls not in best or ranks < best[cls][1]:
            best[cls] = (shape, ranks, opt, cls)
    for row in sorted(best.values(), key=lambda r: (r[0].count("x"), r[1], r[3])):
        print(f"    {row!r},")


def main(argv):
    if len(argv) >= 2 and argv[1] == "configs" and argv[2:] in ([], ["first-real"]):
        for shape, ranks, opt, cls in CONFIGS:
            if argv[2:] and not first_real(shape, cls):
                continue
            axes = axes_of(shape, opt)
            print(f"{shape};{ranks};{opt};{','.join(map(str, axes))};{axes[-1]};{cls}")
        return 0
    if len(argv) >= 3 and argv[1] == "class":
        for path in argv[2:]:
            try:
                with open(path, encoding="utf-8") as f:
                    print(class_of(json.load(f)))
            except (OSError, ValueError, KeyError):
                print("none")
        return 0
    if len(argv) == 3 and argv[1] == "scan":
        scan(argv[2])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
