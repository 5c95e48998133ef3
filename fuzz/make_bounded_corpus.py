"""Writes the bounded-memory seeds (fuzz/corpus/<target>/bounded-*): files that
declare far more than the fuzz targets' 64 MiB load budget, or than they hold, so a reader
that allocates from an unchecked size fails libFuzzer's -malloc_limit_mb at once.

Usage: python3 fuzz/make_bounded_corpus.py (from the repository root; standard library).
The ZIP and deflate helpers are the hostile-file test's (tests/integration/hostile_loads.py).
"""
import importlib.util
import os
import struct
import tempfile
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location(
    "hostile_loads", os.path.join(ROOT, "tests", "integration", "hostile_loads.py"))
h = importlib.util.module_from_spec(spec)
spec.loader.exec_module(h)

OVER_BUDGET = 16_000_000  # int64 values: 128 MB, twice the budget


def zip_bytes(members):
    with tempfile.TemporaryDirectory() as d:
        path = h.write_zip(os.path.join(d, "seed.npz"), members)
        with open(path, "rb") as f:
            return f.read()


def write(target, name, data):
    with open(os.path.join(ROOT, "fuzz", "corpus", target, "bounded-" + name), "wb") as f:
        f.write(data)


def gzip(*pieces):
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    return b"".join(c.compress(p) for p in pieces) + c.flush()


def main():
    small = [h.stored("target.npy", h.npy([0] * 10)), h.stored("prediction.npy", h.npy([0] * 10))]
    big = h.zeros_member("index.npy", OVER_BUDGET)
    # index.npy's header says 10 values, its data inflates to 16 MB past the declared size.
    pieces, crc = h.deflated_zeros(h.npy_header("<i8", (10,)), 2_000_000 * 8)
    liar = ("index.npy", pieces, crc, 208, 8)
    write("npz", "member-over-budget.npz", zip_bytes([big]))
    write("npz", "member-past-declared-size.npz", zip_bytes([liar]))
    # fuzz_import's first byte 0: the rest is a raw .npz.
    write("import", "lengths.npz", b"\0" + zip_bytes([big] + small))
    write("import", "past-declared-size.npz", b"\0" + zip_bytes([liar] + small))
    write("import", "budget.npz", b"\0" + zip_bytes(
        [h.zeros_member(n + ".npy", 1_500_000) for n in ("index", "target", "prediction")]))
    # fuzz_runfile's first byte 0: a raw archive.
    write("runfile", "member-over-budget", b"\0" + zip_bytes(
        [h.stored("meta.json", b"{}"), h.zeros_member("rank0_index.npy", OVER_BUDGET)]))
    write("idx", "gzip-past-header.gz", gzip(struct.pack(">II", 0x801, 10), bytes(16 << 20)))
    write("idx", "gzip-header-over-budget.gz", gzip(struct.pack(">II", 0x801, 4000000000),
                                                    bytes(1000)))
    write("npy", "claims-more-than-it-holds.npy", h.npy_header("<i8", (10**12,)) + bytes(80))


if __name__ == "__main__":
    main()
