"""Writes the seed corpus of fuzz_pt (fuzz/corpus/pt/): valid dumps and the
bounded-* files that claim more than their storages hold or than the fuzz targets' 64 MiB
load budget allows. Each seed's first byte is fuzz_pt's mode (fuzz/fuzz_pt.cpp): 0 a whole
.pt file, 1 a member list, 2 a pickle over fuzz_pt's fixed storages (data/0..2: 15 int64
each, data/3: one float64).

Usage: python3 fuzz/make_pt_corpus.py (from the repository root; standard library, plus a
torch.save'd seed when /usr/bin/python3 has torch). The pickle and ZIP writers are the
hostile-.pt test's (tests/integration/hostile_pt.py).
"""
import os
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import hostile_pt as t  # noqa: E402
h = t.h

OUT = os.path.join(ROOT, "fuzz", "corpus", "pt")


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def p_float(x):
    return b"G" + struct.pack(">d", x)


def pack_members(members):
    """fuzz_util.h's member list: 1 byte name length, name, 2 bytes data length, data."""
    out = b""
    for name, data in members:
        n = name.encode()
        out += bytes([len(n)]) + n + struct.pack("<H", len(data)) + data
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    good = t.p_dict(t.good_entries())
    # A matrix over data/3 (one value), a 3x5 view of data/0 (a transposed one too), a
    # stride-0 expansion, an empty tensor, and metadata of every scalar kind.
    rich = t.p_dict(t.good_entries() + [
        ("reported", t.p_tensor("DoubleStorage", "3", 1, 0, [1, 1], [1, 1])),
        ("view", t.p_tensor("LongStorage", "0", 15, 0, [3, 5], [5, 1])),
        ("transposed", t.p_tensor("LongStorage", "0", 15, 0, [5, 3], [1, 5])),
        ("repeated", t.p_tensor("LongStorage", "1", 15, 14, [4, 4], [0, 0])),
        ("empty", t.p_tensor("LongStorage", "2", 15, 0, [0], [1])),
        ("world_size", t.p_int(4)),
        ("epoch", t.p_int(-1)),
        ("big", t.p_int(2**40)),
        ("loss", p_float(0.25)),
        ("note", t.p_str("settings")),
        ("flag", b"\x88"),
        ("nothing", b"N"),
    ])
    write("valid-good-pickle", b"\2" + good)
    write("valid-rich-pickle", b"\2" + rich)
    write("valid-good.pt", b"\0" + t.pt_bytes(good, t.good_storages()))
    members = [("dump/data.pkl", rich)] + [("dump/data/" + k, v) for k, v in t.good_storages()]
    members += [("dump/data/3", struct.pack("<d", 1.0)), ("dump/version", b"3\n")]
    write("valid-rich-members", b"\1" + pack_members(members))

    py = t.torch_python()
    if py:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "saved.pt")
            subprocess.run([py, "-c",
                            "import sys, torch\n"
                            "torch.save({'index': torch.arange(6), 'target': torch.tensor("
                            "[0, 1, 2, 0, 1, 2]), 'prediction': torch.tensor([0, 1, 1, 0, 2, 2],"
                            " dtype=torch.uint8), 'reported': torch.eye(3, dtype=torch.float64),"
                            " 'settings_json': torch.tensor(list(b'{}'), dtype=torch.uint8),"
                            " 'world_size': 1}, sys.argv[1])\n", path], check=True)
            with open(path, "rb") as f:
                write("valid-torch-save.pt", b"\0" + f.read())
    else:
        print("note: /usr/bin/python3 has no torch; valid-torch-save.pt not written")

    # Tensors past their storages (hostile_pt.py's files, over fuzz_pt's fixed storages).
    lying = {
        "index-1e9": t.p_tensor("LongStorage", "0", 15, 0, [10**9], [1]),
        "offset-2p30": t.p_tensor("LongStorage", "0", 15, 2**30, [15], [1]),
        "storage-numel-1e9": t.p_tensor("LongStorage", "0", 10**9, 0, [10**9], [1]),
        "stride-overflow": t.p_tensor("LongStorage", "0", 15, 0, [3, 5], [2**62, 1]),
        "negative-stride": t.p_tensor("LongStorage", "0", 15, 14, [15], [-1]),
        # Within the storage, but 10^7 values of 8 bytes: over the 64 MiB budget.
        "stride0-over-budget": t.p_tensor("LongStorage", "0", 15, 0, [10**7], [0]),
    }
    for name, tensor in lying.items():
        write("bounded-%s-pickle" % name, b"\2" + t.p_dict(t.good_entries(tensor)))
    reported = t.p_tensor("DoubleStorage", "3", 1, 0, [32, 32], [32, 1])
    write("bounded-reported-32x32-pickle",
          b"\2" + t.p_dict(t.good_entries() + [("reported", reported)]))
    # Pickles LibTorch 1.13's unpickler would act on unchecked (core/io/pt_pickle.h): a memo
    # index of 2^32 - 1, a 4 GB string, SETITEMS without a MARK, tuples nested 10^4 deep, a
    # storage type that is a plain integer.
    write("bounded-memo-index-pickle", b"\2\x80\x02}r\xff\xff\xff\xff.")
    write("bounded-string-length-pickle", b"\2\x80\x02X\xff\xff\xff\xff.")
    write("bounded-setitems-without-mark-pickle", b"\2\x80\x02}u.")
    write("bounded-nested-tuples-pickle", b"\2\x80\x02)" + b"\x85" * 10000 + b".")
    storage = t.p_tuple([t.p_str("storage"), t.p_int(1000), t.p_str("0"), t.p_str("cpu"),
                         t.p_int(15)]) + b"Q"
    write("bounded-storage-type-int-pickle", b"\2\x80\x02" + storage + b".")
    # A storage deflating to 128 MiB, twice the budget (about 130 kB).
    zeros = 128 << 20
    pieces, crc = h.deflated_zeros(b"", zeros)
    big = t.p_tensor("DoubleStorage", "3", zeros // 8, 0, [zeros // 8], [1])
    write("bounded-deflated-storage.pt",
          b"\0" + t.pt_bytes(t.p_dict(t.good_entries() + [("reported", big)]),
                             t.good_storages() + [("3", (pieces, crc, zeros))]))


if __name__ == "__main__":
    main()
