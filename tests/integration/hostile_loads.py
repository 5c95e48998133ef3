"""Hostile and broken files cost nothing, standard library only.

Usage: hostile_loads.py SHARDLENS_CLI. Each file below claims far more than it holds or
than the memory budget allows; `shardlens-cli` must refuse it with exit 2 and a one-line
message naming the file (and, for a budget refusal, the size needed and the budget),
without ever becoming large: the peak resident size of each child is the ru_maxrss that
wait4 returns for it (an upper bound: it counts this Python process's pages before exec).
"""
import os
import struct
import subprocess
import sys
import tempfile
import zlib

# The example: a 1.9 MB .npz whose index.npy declares 250,000,000 int64 values.
HOSTILE_VALUES = 250_000_000
RSS_LIMIT_MB = 200


def npy_header(descr, shape):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d," % s for s in shape))
    d += " " * ((64 - (10 + len(d) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode()


def npy(values, descr="<i8"):
    return npy_header(descr, (len(values),)) + struct.pack("<%dq" % len(values), *values)


def deflated_zeros(prefix, zero_bytes):
    """Raw deflate of prefix + zero_bytes zeros, and its CRC-32, without deflating (or
    holding) gigabytes: after a full flush the compressor forgets its history, so every
    further chunk of zeros compresses to the same bytes, and the CRC of the zeros is
    extended chunk by chunk."""
    chunk = 1 << 24
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = c.compress(prefix) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(bytes(chunk)) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(bytes(chunk)) + c.flush(zlib.Z_FULL_FLUSH)
    assert block == again, "deflate did not repeat after a full flush"
    full, rest = divmod(zero_bytes, chunk)
    crc = zlib.crc32(prefix)
    zeros = bytes(chunk)
    for _ in range(full):
        crc = zlib.crc32(zeros, crc)
    tail = c.compress(bytes(rest)) + c.flush(zlib.Z_FINISH)
    crc = zlib.crc32(bytes(rest), crc)
    return [head] + [block] * full + [tail], crc


def write_zip(path, members):
    """A ZIP (no zip64: every size here is under 4 GiB) of (name, pieces, crc, size, method)
    with pieces the member's compressed bytes."""
    with open(path, "wb") as f:
        central = b""
        for name, pieces, crc, size, method in members:
            comp = sum(len(p) for p in pieces)
            offset = f.tell()
            n = name.encode()
            f.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0, crc, comp,
                                size, len(n), 0) + n)
            for p in pieces:
                f.write(p)
            central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0,
                                   crc, comp, size, len(n), 0, 0, 0, 0, 0, offset) + n
        at = f.tell()
        f.write(central)
        f.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members),
                            len(central), at, 0))
    return path


def write_many_empty_members(path, names):
    """A ZIP64 archive of empty stored members, packed by hand: Python's zipfile takes 15 s
    for a million. Every record is what zipfile writes, but for the end records."""
    local, central = [], []
    offset = 0
    for name in names:
        n = name.encode()
        header = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0, 0, 0, 0, len(n), 0) + n
        central.append(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 20, 0, 0, 0, 0, 0, 0,
                                   0, len(n), 0, 0, 0, 0, 0, offset) + n)
        local.append(header)
        offset += len(header)
    directory = b"".join(central)
    count = len(names)
    end64_at = offset + len(directory)
    with open(path, "wb") as f:
        f.write(b"".join(local))
        f.write(directory)
        f.write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count,
                            len(directory), offset))
        f.write(struct.pack("<IIQI", 0x07064B50, 0, end64_at, 1))
        f.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF,
                            min(len(directory), 0xFFFFFFFF), min(offset, 0xFFFFFFFF), 0))
    return path


def stored(name, data):
    return (name, [data], zlib.crc32(data), len(data), 0)


def zeros_member(name, values):
    header = npy_header("<i8", (values,))
    pieces, crc = deflated_zeros(header, values * 8)
    return (name, pieces, crc, len(header) + values * 8, 8)


def run_measured(args):
    """Runs the CLI and returns (exit code, stderr, the child's own peak RSS in MB), the
    peak from the rusage wait4 gives for that one process."""
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read().decode()
    p.stderr.close()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    return p.returncode, err.strip(), usage.ru_maxrss / 1024.0


def expect_refused(failures, cli, label, args, path, needles):
    """Runs `cli args` on a hostile input: exit 2, a one-line message naming `path` and
    holding every needle, a peak RSS under RSS_LIMIT_MB; what fails is added to `failures`."""
    code, err, rss = run_measured([cli] + args)
    print("%s: exit %d, peak RSS %.0f MB: %s" % (label, code, rss, err))
    if code != 2:
        failures.append("%s: exit %d, expected 2 (%s)" % (label, code, err))
    if not err.startswith("shardlens-cli: " + path + ":") or "\n" in err:
        failures.append("%s: message is not one line naming %s: %r" % (label, path, err))
    for needle in needles:
        if needle not in err:
            failures.append("%s: message lacks %r: %r" % (label, needle, err))
    if rss >= RSS_LIMIT_MB:
        failures.append("%s: peak RSS %.0f MB, limit %d MB" % (label, rss, RSS_LIMIT_MB))


def main():
    cli = sys.argv[1]
    failures = []

    def expect(label, args, path, *needles):
        expect_refused(failures, cli, label, args, path, needles)

    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.slrun")
        small = [stored("target.npy", npy([0] * 10)), stored("prediction.npy", npy([0] * 10))]

        # The example's file: index.npy really holds 2 GB of zeros, deflated to ~1.9 MB; the
        # others hold 10 values. Refused from the .npy headers, before any data is inflated.
        lengths = write_zip(os.path.join(d, "hostile_rank0.npz"),
                            [zeros_member("index.npy", HOSTILE_VALUES)] + small)
        print("hostile .npz: %d bytes" % os.path.getsize(lengths))
        expect("lengths", ["import", lengths, "--out", out], lengths,
               "different lengths (250000000, 10, 10)")

        # Consistent arrays of 250,000,000 records each (6 MB): refused by the budget.
        consistent = write_zip(os.path.join(d, "huge_rank0.npz"),
                               [zeros_member(n + ".npy", HOSTILE_VALUES)
                                for n in ("index", "target", "prediction")])
        expect("budget", ["import", consistent, "--out", out, "--max-memory", "512M"],
               consistent, "memory budget", "512 MiB", "GiB of memory")

        # A member whose directory entry and .npy header say 10 values (208 bytes) but whose
        # data inflates to 2 GB: refused at the first byte past the declared size.
        pieces, crc = deflated_zeros(npy_header("<i8", (10,)), HOSTILE_VALUES * 8)
        liar = write_zip(os.path.join(d, "liar_rank0.npz"),
                         [("index.npy", pieces, crc, 208, 8)] + small)
        expect("liar", ["import", liar, "--out", out], liar, "index.npy")

        # A run file whose members claim 2 GB each.
        run_file = write_zip(os.path.join(d, "hostile.slrun"),
                             [stored("meta.json", b"{}"),
                              zeros_member("rank0_index.npy", HOSTILE_VALUES)])
        expect("run file", ["diagnose", "--run", run_file, "--max-memory", "256M"], run_file,
               "memory budget")

        # A gzip IDX label file whose header announces 10 labels and inflates to 1 GB.
        c = zlib.compressobj(9, zlib.DEFLATED, 31)
        gz = c.compress(struct.pack(">II", 0x801, 10))
        for _ in range(64):
            gz += c.compress(bytes(1 << 24))
        gz += c.flush()
        idx = os.path.join(d, "labels-idx1-ubyte.gz")
        with open(idx, "wb") as f:
            f.write(gz)
        expect("idx gzip", ["simulate", "--dataset", "idx:" + idx], idx,
               "more than the 18 bytes its header announces")

        # Bad sizes are refused with the flag named.
        p = subprocess.run([cli, "simulate", "--max-memory", "lots"], capture_output=True,
                           text=True)
        if p.returncode != 2 or "--max-memory" not in p.stderr:
            failures.append("--max-memory lots: exit %d: %s" % (p.returncode, p.stderr))

    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
