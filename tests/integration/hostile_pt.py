"""Hostile .pt dumps: `shardlens-cli import` never reads past a tensor's storage
nor allocates past the load budget.

Usage: hostile_pt.py SHARDLENS_CLI (a build with LibTorch). Standard library only: the dumps
are torch.save's ZIP layout (ARCHIVE/data.pkl, ARCHIVE/data/<key>, ARCHIVE/version) with the
pickle written here opcode by opcode, so a tensor's sizes, strides, storage offset and its
storage's element count can say anything. Where /usr/bin/python3 has torch, a dump saved by
torch.save itself is imported too, and torch.load reads the honest hand-written dump to the
same values (the writer below says what torch.save says).

Each hostile dump must be refused with exit 2 and a one-line message naming the file and the
tensor, with a peak resident size under hostile_loads.RSS_LIMIT_MB (200 MB); the good dumps
must import to the matrix the values give.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile_loads as h  # noqa: E402 (write_zip, deflated_zeros, run_measured)

N = 15
INDEX = list(range(N))
TARGET = [i % 3 for i in range(N)]
PREDICTION = [(i * i) % 3 for i in range(N)]


# --- a pickle (protocol 2) as torch.save writes it ---

def p_int(v):
    if 0 <= v < 256:
        return b"K" + bytes([v])
    if 0 <= v < 65536:
        return b"M" + struct.pack("<H", v)
    if -2**31 <= v < 2**31:
        return b"J" + struct.pack("<i", v)
    return b"\x8a\x08" + struct.pack("<q", v)  # LONG1 of 8 bytes, what torch's unpickler reads


def p_str(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def p_tuple(items):
    return b"(" + b"".join(items) + b"t"


def p_global(module, name):
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def p_tensor(storage_type, key, numel, offset, sizes, strides):
    """torch._utils._rebuild_tensor_v2((storage), offset, sizes, strides, False, OrderedDict())
    with the storage a persistent id ('storage', torch.<storage_type>, key, 'cpu', numel)."""
    storage = p_tuple([p_str("storage"), p_global("torch", storage_type), p_str(key),
                       p_str("cpu"), p_int(numel)]) + b"Q"
    args = (b"(" + storage + p_int(offset) + p_tuple([p_int(s) for s in sizes]) +
            p_tuple([p_int(s) for s in strides]) + b"\x89" +
            p_global("collections", "OrderedDict") + b")R" + b"t")
    return p_global("torch._utils", "_rebuild_tensor_v2") + args + b"R"


def p_dict(entries):
    """{key: value pickle} as torch.save writes a dict: EMPTY_DICT MARK ... SETITEMS STOP."""
    return b"\x80\x02}(" + b"".join(p_str(k) + v for k, v in entries) + b"u."


def longs(values):
    return struct.pack("<%dq" % len(values), *values)


def zip_bytes(members):
    """A ZIP of hostile_loads' member tuples, as bytes."""
    with tempfile.TemporaryDirectory() as d:
        with open(h.write_zip(os.path.join(d, "x.pt"), members), "rb") as f:
            return f.read()


def pt_bytes(pickle, storages, archive="dump"):
    """A torch.save ZIP: ARCHIVE/data.pkl, ARCHIVE/data/<key> (stored, or given as
    (pieces, crc, size) to deflate), ARCHIVE/version."""
    members = [h.stored(archive + "/data.pkl", pickle)]
    for key, data in storages:
        name = archive + "/data/" + key
        if isinstance(data, bytes):
            members.append(h.stored(name, data))
        else:
            pieces, crc, size = data
            members.append((name, pieces, crc, size, 8))
    members.append(h.stored(archive + "/version", b"3\n"))
    return zip_bytes(members)


def good_entries(index=None):
    """index, target and prediction, each a LongStorage of N elements (keys 0, 1, 2)."""
    return [("index", index or p_tensor("LongStorage", "0", N, 0, [N], [1])),
            ("target", p_tensor("LongStorage", "1", N, 0, [N], [1])),
            ("prediction", p_tensor("LongStorage", "2", N, 0, [N], [1]))]


def good_storages():
    return [("0", longs(INDEX)), ("1", longs(TARGET)), ("2", longs(PREDICTION))]


def expected_matrix():
    m = [[0] * 3 for _ in range(3)]
    for t, p in zip(TARGET, PREDICTION):
        m[t][p] += 1
    return m


def hostile_dumps():
    """(label, file name, bytes, extra CLI args, needles the message must hold)."""
    out = []
    # `index` claims 10^9 elements over its 15-element storage.
    out.append(("index 10^9 elements", "index_rank0.pt",
                pt_bytes(p_dict(good_entries(p_tensor("LongStorage", "0", N, 0, [10**9], [1]))),
                         good_storages()),
                [], ["tensor 'index' needs 8000000000 bytes but its storage holds 120"]))
    # A storage offset of 2^30 over the same storage.
    out.append(("offset 2^30", "offset_rank0.pt",
                pt_bytes(p_dict(good_entries(p_tensor("LongStorage", "0", N, 2**30, [N], [1]))),
                         good_storages()),
                [], ["tensor 'index' needs %d bytes but its storage holds 120"
                     % ((2**30 + N) * 8)]))
    # The storage itself lies: the pickle says 10^9 elements, data/0 holds 120 bytes.
    out.append(("storage numel 10^9", "numel_rank0.pt",
                pt_bytes(p_dict(good_entries(p_tensor("LongStorage", "0", 10**9, 0, [10**9],
                                                      [1]))), good_storages()),
                [], ["tensor 'index' needs 8000000000 bytes but its storage holds 120"]))
    # `reported`: 32x32 float64 over an 8-byte storage (it imported and leaked heap bytes).
    reported = p_tensor("DoubleStorage", "3", 1, 0, [32, 32], [32, 1])
    out.append(("reported 32x32 over 8 bytes", "reported_rank0.pt",
                pt_bytes(p_dict(good_entries() + [("reported", reported)]),
                         good_storages() + [("3", struct.pack("<d", 1.0))]),
                [], ["tensor 'reported' needs 8192 bytes but its storage holds 8"]))
    # Strides that overflow 64-bit byte offsets; a negative stride (LibTorch 1.13 makes it
    # the contiguous one, so the view [14, 13, ..., 0] becomes [14, 15, ...] past the end);
    # a negative size (LibTorch's own numel check refuses it while unpickling).
    out.append(("stride overflow", "overflow_rank0.pt",
                pt_bytes(p_dict(good_entries(p_tensor("LongStorage", "0", N, 0, [3, 5],
                                                      [2**62, 1]))), good_storages()),
                [], ["tensor 'index' needs more than 2^64 bytes but its storage holds 120"]))
    out.append(("negative stride", "negative_rank0.pt",
                pt_bytes(p_dict(good_entries(p_tensor("LongStorage", "0", N, 14, [N], [-1]))),
                         good_storages()),
                [], ["tensor 'index' needs 232 bytes but its storage holds 120"]))
    out.append(("negative size", "negative_size_rank0.pt",
                pt_bytes(p_dict(good_entries(p_tensor("LongStorage", "0", N, 0, [-1], [1]))),
                         good_storages()),
                [], ["not a readable torch.save file", "overflow"]))
    # Stride 0 stays within the storage but expands to 8 GB of values: the budget refuses it.
    out.append(("stride 0 expansion", "expand_rank0.pt",
                pt_bytes(p_dict(good_entries(p_tensor("LongStorage", "0", N, 0, [10**9], [0]))),
                         good_storages()),
                ["--max-memory", "256M"], ["memory budget", "256 MiB", "GiB of memory"]))
    # data/3 deflates to 1 GB (about 1 MB in the file).
    zeros = 1 << 30
    pieces, crc = h.deflated_zeros(b"", zeros)
    big = p_tensor("DoubleStorage", "3", zeros // 8, 0, [zeros // 8], [1])
    out.append(("1 GB deflated storage", "deflated_rank0.pt",
                pt_bytes(p_dict(good_entries() + [("reported", big)]),
                         good_storages() + [("3", (pieces, crc, zeros))]),
                ["--max-memory", "512M"],
                ["needs 1.0 GiB of memory (its members decompressed and unpickled)",
                 "512 MiB memory budget"]))
    # The ZIP itself: the reader of the sizes held against the budget (libzip) is the reader
    # of the bytes, so a directory two readers would parse differently cannot slip through.
    # A storage member twice (which one would a reader take?), a tensor whose storage has no
    # member, a pickle outside any folder.
    pickle = h.stored("dump/data.pkl", p_dict(good_entries()))
    storages = [h.stored("dump/data/" + k, v) for k, v in good_storages()]
    out.append(("storage member twice", "twice_rank0.pt",
                zip_bytes([pickle] + storages + [h.stored("dump/data/0", longs(INDEX * 2))]),
                [], ["corrupt ZIP archive (duplicate member names)"]))
    out.append(("storage without a member", "nomember_rank0.pt",
                zip_bytes([pickle] + storages[:2]),
                [], ["storage '2' has no data member"]))
    out.append(("pickle outside a folder", "nofolder_rank0.pt",
                zip_bytes([h.stored("data.pkl", p_dict(good_entries()))] + storages),
                [], ["member 'data.pkl' is not in a folder"]))
    return out


def torch_python():
    """/usr/bin/python3 when it imports torch (Debian's python3-torch), else None."""
    try:
        r = subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True)
    except OSError:
        return None
    return "/usr/bin/python3" if r.returncode == 0 else None


def main():
    cli = sys.argv[1]
    failures = []

    def expect_refused(label, args, path, needles):
        h.expect_refused(failures, cli, label, args, path, needles)

    def expect_imports(label, path):
        r = subprocess.run([cli, "import", path, "--out", os.path.join(d, "good.slrun"),
                            "--format", "json"], capture_output=True, text=True)
        print("%s: exit %d %s" % (label, r.returncode, r.stderr.strip()))
        if r.returncode != 0:
            failures.append("%s: import failed (exit %d): %s" % (label, r.returncode, r.stderr))
            return
        synced = json.loads(r.stdout)["synced"]
        if synced != expected_matrix():
            failures.append("%s: synced %s, expected %s" % (label, synced, expected_matrix()))

    with tempfile.TemporaryDirectory() as d:
        good = os.path.join(d, "good_rank0.pt")
        with open(good, "wb") as f:
            f.write(pt_bytes(p_dict(good_entries()), good_storages()))
        expect_imports("hand-written good dump", good)

        py = torch_python()
        if py:
            saved = os.path.join(d, "saved_rank0.pt")
            script = ("import sys, torch\n"
                      "torch.save({'index': torch.tensor(%r), 'target': torch.tensor(%r),"
                      " 'prediction': torch.tensor(%r)}, sys.argv[1])\n"
                      "d = torch.load(sys.argv[2])\n"
                      "assert [d[k].tolist() for k in ('index', 'target', 'prediction')] =="
                      " [%r, %r, %r], d\n" % (INDEX, TARGET, PREDICTION, INDEX, TARGET,
                                             PREDICTION))
            r = subprocess.run([py, "-c", script, saved, good], capture_output=True, text=True)
            if r.returncode != 0:
                failures.append("torch.save / torch.load of the good dumps: " + r.stderr[-500:])
            else:
                expect_imports("torch.save'd dump", saved)
        else:
            print("note: /usr/bin/python3 has no torch; the torch.save'd dump is not checked")

        for label, name, data, args, needles in hostile_dumps():
            path = os.path.join(d, name)
            with open(path, "wb") as f:
                f.write(data)
            if label == "1 GB deflated storage":
                print("%s: %d bytes" % (label, len(data)))
            expect_refused(label, ["import", path, "--out", os.path.join(d, "out.slrun")] + args,
                           path, needles)

        # A FIFO named like a dump: refused at once, not opened and waited on.
        fifo = os.path.join(d, "fifo_rank0.pt")
        os.mkfifo(fifo)
        try:
            r = subprocess.run([cli, "import", fifo, "--out", os.path.join(d, "out.slrun")],
                               capture_output=True, text=True, timeout=60)
            print("fifo: exit %d: %s" % (r.returncode, r.stderr.strip()))
            if r.returncode != 2 or fifo not in r.stderr:
                failures.append("fifo: exit %d: %s" % (r.returncode, r.stderr))
        except subprocess.TimeoutExpired:
            failures.append("fifo: import blocked on a FIFO")

    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
