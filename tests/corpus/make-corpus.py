#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""make-corpus: write the bad inputs of tests/corpus.bats into a directory.

    make-corpus.py DIR

Every file is made the same way on every run (fixed seeds), with h5py and
numpy only, so the corpus needs no stored binaries. Run it serially and
outside mpiexec (serial h5py). tests/corpus.bats names each file and says
what fftshard must answer; the list here is what the files are:

  ok.h5                4x3x5 complex128, a good input for the option cases
  truncated-*.h5       ok-sized files cut inside the superblock, inside the
                       object headers, and short of their last raw data
  random.h5            random bytes; random-signature.h5: the HDF5 signature,
                       then random bytes
  text.h5, empty.h5    a line of text; no bytes at all
  dir.h5/              a directory
  fifo.h5              a FIFO (opening it for reading would wait forever)
  zero-axis.h5         float64 of shape 3x0x2
  scalar.h5, null.h5   a scalar dataset; a dataset with a null dataspace
  string.h5, vlen-string.h5, enum.h5, opaque.h5, array.h5, vlen.h5,
  reference.h5, float16.h5
                       element types fftshard does not read
  compound-xy.h5, compound-rij.h5, compound-mixed.h5, compound-int.h5
                       compounds that are not {r, i} of two equal floats
  nine-d.h5            9 dimensions (fftshard handles 1 to 8)
  huge.h5              2^40 x 2^40 x 2^40 complex128, never written: more
                       elements than fftshard can count
  dangling.h5          /data is a soft link to nothing
  external.h5          /data is an external link into a missing file
  half-attr.h5         4x4 complex128 whose last_size attribute (11) does
                       not fit its last axis (11 // 2 + 1 != 4)
  half.h5              4x4 complex128 without the attribute
  wisdom-*.txt         --wisdom files that are not fftshard wisdom: binary,
                       an HDF5 file, a text, another version, a bad entry,
                       FFTW wisdom FFTW rejects, a key longer than any
  wisdom-dir/          a directory given as the wisdom file
  wisdom-fifo          a FIFO given as the wisdom file
  afile                a regular file (a report path afile/r.json cannot be)
  damaged-*.h5         4x6 float64 files whose metadata contradicts itself
                       (bytes of the dataspace message patched; the
                       earliest file format has no checksums):
                       damaged-beyond-max.h5 declares 40000x6000 (1.8 GB,
                       5 KB of file) where its maximum is 4x6;
                       damaged-beyond-max-small.h5 declares 8x6;
                       damaged-contiguous.h5 declares 8x6 over the 4x6
                       elements stored; damaged-chunks.h5 has chunks of
                       4x6 in a 2x6 dataset whose maximum is 2x6
"""

import os
import struct
import sys

import h5py
import numpy as np


def ok_file(path, shape=(4, 3, 5)):
    rng = np.random.default_rng(1)
    data = rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)
    with h5py.File(path, "w") as f:
        f.create_dataset("data", data=data)


def one(path, **kwargs):
    """A file holding the single dataset /data."""
    with h5py.File(path, "w") as f:
        f.create_dataset("data", **kwargs)


def patch(path, old, new):
    """Replace the one occurrence of the bytes old in the file."""
    data = bytearray(open(path, "rb").read())
    at = data.find(old)
    assert at >= 0 and data.find(old, at + 1) < 0, path
    data[at:at + len(old)] = new
    write_bytes(path, bytes(data))


def lengths(*values):
    """Dimension lengths as a dataspace message stores them."""
    return b"".join(struct.pack("<Q", v) for v in values)


def damaged_files():
    """Datasets whose shape, maximum shape, chunks or storage disagree."""
    values = np.arange(24.0).reshape(4, 6)
    for name in ("damaged-beyond-max.h5", "damaged-beyond-max-small.h5"):
        with h5py.File(name, "w", libver="earliest") as f:
            f.create_dataset("data", data=values, maxshape=(4, 6), chunks=(2, 3))
    patch("damaged-beyond-max.h5", lengths(4, 6, 4, 6), lengths(40000, 6000, 4, 6))
    patch("damaged-beyond-max-small.h5", lengths(4, 6, 4, 6), lengths(8, 6, 4, 6))
    with h5py.File("damaged-contiguous.h5", "w", libver="earliest") as f:
        f.create_dataset("data", data=values)
    patch("damaged-contiguous.h5", lengths(4, 6, 4, 6), lengths(8, 6, 8, 6))
    with h5py.File("damaged-chunks.h5", "w", libver="earliest") as f:
        f.create_dataset("data", data=values[:2], maxshape=(None, 6), chunks=(4, 6))
    patch("damaged-chunks.h5", lengths(2, 6, 2**64 - 1, 6), lengths(2, 6, 2, 6))


def write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: make-corpus.py DIR\n")
        return 2
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    os.chdir(out)
    rng = np.random.default_rng(20261122)

    ok_file("ok.h5")
    whole = open("ok.h5", "rb").read()
    # A larger file, so that a cut short of the end leaves the metadata whole.
    ok_file("big.h5", (16, 16, 8))
    big = open("big.h5", "rb").read()
    write_bytes("truncated-superblock.h5", whole[:40])
    write_bytes("truncated-header.h5", whole[:1500])
    write_bytes("truncated-data.h5", big[:len(big) - 4096])
    os.remove("big.h5")

    write_bytes("random.h5", rng.integers(0, 256, 4096, dtype=np.uint8).tobytes())
    write_bytes("random-signature.h5",
                b"\x89HDF\r\n\x1a\n" + rng.integers(0, 256, 2040, dtype=np.uint8).tobytes())
    write_bytes("text.h5", b"just text\n")
    write_bytes("empty.h5", b"")
    os.makedirs("dir.h5", exist_ok=True)
    os.mkfifo("fifo.h5")

    one("zero-axis.h5", shape=(3, 0, 2), dtype="<f8")
    one("scalar.h5", data=np.float64(1.5))
    one("null.h5", data=h5py.Empty("<f8"))
    one("string.h5", data=np.array([b"ab", b"cd", b"ef"], dtype="S2"))
    one("vlen-string.h5", data=["ab", "cde"], dtype=h5py.string_dtype())
    one("enum.h5", data=np.array([0, 1, 1], dtype=np.int8),
        dtype=h5py.enum_dtype({"off": 0, "on": 1}, basetype=np.int8))
    one("opaque.h5", data=np.array([b"\x01\x02", b"\x03\x04"], dtype="V2"))
    one("array.h5", shape=(3,), dtype=np.dtype(("<f8", (2,))))
    one("vlen.h5", shape=(3,), dtype=h5py.vlen_dtype(np.float64))
    with h5py.File("reference.h5", "w") as f:
        target = f.create_dataset("target", data=np.zeros(2))
        f.create_dataset("data", data=np.array([target.ref, target.ref]),
                         dtype=h5py.ref_dtype)
    one("float16.h5", data=np.ones(4, dtype=np.float16))
    one("compound-xy.h5", shape=(3,), dtype=[("x", "<f8"), ("y", "<f8")])
    one("compound-rij.h5", shape=(3,), dtype=[("r", "<f8"), ("i", "<f8"), ("j", "<f8")])
    one("compound-mixed.h5", shape=(3,), dtype=[("r", "<f4"), ("i", "<f8")])
    one("compound-int.h5", shape=(3,), dtype=[("r", "<i4"), ("i", "<i4")])
    one("nine-d.h5", shape=(1, 1, 1, 1, 1, 1, 1, 2, 3), dtype="<f8")
    one("huge.h5", shape=(2**40, 2**40, 2**40), dtype="<c16", chunks=(1, 1, 64))
    with h5py.File("dangling.h5", "w") as f:
        f["data"] = h5py.SoftLink("/nowhere")
    with h5py.File("external.h5", "w") as f:
        f["data"] = h5py.ExternalLink("missing-file.h5", "/data")
    half = (rng.uniform(-1, 1, (4, 4)) + 1j * rng.uniform(-1, 1, (4, 4)))
    one("half.h5", data=half)
    with h5py.File("half-attr.h5", "w") as f:
        f.create_dataset("data", data=half).attrs["last_size"] = np.int64(11)

    write_bytes("wisdom-binary.txt", b"# fftshard wisdom 1\n\x00\x01\x02"
                + rng.integers(0, 256, 300, dtype=np.uint8).tobytes())
    write_bytes("wisdom-h5.txt", whole)
    write_bytes("wisdom-text.txt", b"not wisdom\n")
    write_bytes("wisdom-version.txt", b"# fftshard wisdom 2\n%fftw\n")
    write_bytes("wisdom-entry.txt", b"# fftshard wisdom 1\ntranspose x\n")
    write_bytes("wisdom-fftw.txt", b"# fftshard wisdom 1\n%fftw\n(garbage\n")
    write_bytes("wisdom-long-key.txt", b"# fftshard wisdom 1\ntranspose " + b"k" * 600
                + b" alltoall 1.0\n")
    os.makedirs("wisdom-dir", exist_ok=True)
    os.mkfifo("wisdom-fifo")
    write_bytes("afile", b"a regular file\n")
    damaged_files()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
