#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""make-seeds: write the seed corpora of the fuzz targets (run once; the
files are kept in the source tree).

    make-seeds.py DIR     (DIR is tests/fuzz)

corpus-probe/: small valid HDF5 files made by h5py, each holding what
fs_h5_probe looks at: float, integer and complex types, 1 to 3 axes, a
last_size attribute, chunks and compression, big-endian data, groups and a
soft link, the newest file format, a string dataset it refuses.
corpus-options/: command lines as fuzz_options.c reads them, the arguments
each ended by a NUL byte, covering every option of fftshard --help.
"""

import os
import sys

import h5py
import numpy as np


def probe_seeds(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(3)

    def path(name):
        return os.path.join(out, name)

    with h5py.File(path("c128-3d.h5"), "w") as h:
        h.create_dataset("data", data=(rng.uniform(size=(2, 3, 2)) + 1j).astype("c16"))
    with h5py.File(path("f32-1d.h5"), "w") as h:
        h.create_dataset("data", data=rng.uniform(size=5).astype("f4"))
    with h5py.File(path("i16-2d.h5"), "w") as h:
        h.create_dataset("data", data=np.arange(6, dtype="i2").reshape(2, 3))
    with h5py.File(path("gzip-be.h5"), "w") as h:
        h.create_dataset("data", data=np.arange(8, dtype=">f8").reshape(2, 4), chunks=(1, 4),
                         compression="gzip")
    with h5py.File(path("c64-attr.h5"), "w") as h:
        d = h.create_dataset("data", data=np.ones((2, 3), dtype="c8"))
        d.attrs["last_size"] = np.int64(4)
    with h5py.File(path("groups.h5"), "w") as h:
        h.create_dataset("g/a", data=np.zeros(3))
        h.create_dataset("g/h/b", data=np.zeros((2, 2), dtype="u1"))
        h["data"] = h5py.SoftLink("/g/a")
    with h5py.File(path("latest.h5"), "w", libver="latest") as h:
        h.create_dataset("data", data=np.ones((3, 2)), chunks=(1, 2), maxshape=(None, 2))
    with h5py.File(path("string.h5"), "w") as h:
        h.create_dataset("data", data=np.array([b"ab"], dtype="S2"))


OPTION_LINES = [
    ["in.h5", "out.h5"],
    ["--axes=0,-1", "--norm=ortho", "--inverse", "in.h5:/data", "out.h5:/g/x"],
    ["--real", "--inverse", "--last-size=7", "--precision=single", "a.h5", "b.h5"],
    ["--check", "--check-tolerance=1e-6", "--plan=measure", "--wisdom=w.txt", "a.h5", "b.h5"],
    ["-fqv", "--transpose=random", "--packet=64K", "--queues=3", "--seed=7", "a.h5", "b.h5"],
    ["--transpose=auto", "--decomp=pencil", "--grid=2x3", "--report=r.json", "--progress", "a", "b"],
    ["--dry-run", "--shape=64x48x30", "--dtype=float32", "--ranks=8", "--mem-per-rank=4G"],
    ["--dry-run", "in.h5", "--report", "r.json", "--", "-odd.h5"],
    ["--help"],
    ["-V"],
]


def option_seeds(out):
    os.makedirs(out, exist_ok=True)
    for i, words in enumerate(OPTION_LINES):
        with open(os.path.join(out, "line%02d" % i), "wb") as f:
            f.write(b"".join(w.encode() + b"\0" for w in words))


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: make-seeds.py DIR\n")
        return 2
    probe_seeds(os.path.join(argv[1], "corpus-probe"))
    option_seeds(os.path.join(argv[1], "corpus-options"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
