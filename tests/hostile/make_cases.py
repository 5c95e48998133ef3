"""The hostile-input suite: writes about 200 hostile files and, for each, the
shardlens-cli command that reads it and what that command must do.

Usage: make_cases.py SHARDLENS_CLI OUTDIR [--no-figures] (a build without Qt: no SVG). Writes the files under OUTDIR and OUTDIR/cases.json,
a list of cases:
  name, category   a short unique name and the kind of input (docs/ROBUSTNESS.md's table)
  args             the CLI's arguments (the runner puts the CLI in front)
  exit             the exit code expected: 2 a refused input, 1 a wrong diagnosis, 0 success
  needles          strings stderr must hold (the file's path, the flag or the key)
  rss_mb           bound on the child's peak resident size
  time_s           wall-clock limit (the runner kills the process group past it)
  as_mb            address-space limit (RLIMIT_AS) the child runs under
  cwd              the folder the command runs in (OUTDIR/work/dir)
  checks           checks on files after the run: [kind, path, argument]
                   unchanged (sha256 given), svg_xml, svg_inert, csv_quoted, tex_no_input,
                   text_clean, absent, not_regular
  stdout           where the runner writes the command's stdout (for a text_clean check);
                   absent: stdout is thrown away. stderr is always checked: no raw control
                   character, bidi override or invalid UTF-8 reaches the terminal
Standard library and numpy (Debian's /usr/bin/python3). The CLI makes the one good run file
the run-file cases start from (`simulate --save-run`); every other file is written here byte
by byte, so a file can lie about anything (sizes, shapes, checksums, counts).
"""
import gzip
import hashlib
import io
import json
import os
import stat
import struct
import subprocess
import sys
import zipfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import hostile_loads as hl  # noqa: E402 (write_zip, stored, deflated_zeros, npy_header)
import hostile_pt as hp  # noqa: E402 (torch.save ZIPs written opcode by opcode)

BUDGET_MB = 256  # --max-memory of every case
RSS_MARGIN_MB = 96  # the process itself (Qt's and, for .pt, LibTorch's pages) beyond the budget
TIME_S = 15
AS_MB = 4096  # RLIMIT_AS: a regression is killed here, not the machine
AS_TORCH_MB = 8192  # LibTorch (dlopen of the .pt reader) maps more address space

# A good scenario: 12 samples, 3 classes, 2 ranks of 3 batches of 2: every sample once, so the
# reported matrix is right and `diagnose` exits 0 on it.
GOOD_DATASET = "synthetic:classes=3,per-class=4"
GOOD_FLAGS = ["--dataset", GOOD_DATASET, "--world-size", "2", "--batch-size", "2"]


class Suite:
    def __init__(self, cli, out):
        self.cli = cli
        self.out = out
        self.cases = []
        # Every command runs two folders below OUTDIR: "../../x" from there is OUTDIR/x.
        self.cwd = os.path.join(out, "work", "dir")
        os.makedirs(self.cwd, exist_ok=True)

    def path(self, name):
        return os.path.join(self.out, name)

    def write(self, name, data):
        p = self.path(name)
        if isinstance(data, str):
            data = data.encode()
        with open(p, "wb") as f:
            f.write(data)
        return p

    def add(self, category, name, args, exit=2, needles=(), rss_mb=None, time_s=TIME_S,
            as_mb=AS_MB, checks=(), budget=True, stdout=None, fsize_kb=None):
        assert all(c["name"] != name for c in self.cases), name
        args = list(args) + (["--max-memory", "%dM" % BUDGET_MB] if budget else [])
        self.cases.append({
            "name": name, "category": category, "args": args, "exit": exit,
            "needles": list(needles),
            "rss_mb": rss_mb or BUDGET_MB + RSS_MARGIN_MB, "time_s": time_s, "as_mb": as_mb,
            "checks": [list(c) for c in checks], "cwd": self.cwd, "stdout": stdout,
            "fsize_kb": fsize_kb})


# --- .npy and .npz by hand ---

def npy_raw(descr, shape, payload, fortran=False, header=None):
    if header is None:
        d = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
            descr, "True" if fortran else "False", "".join("%d," % s for s in shape))
    else:
        d = header
    d += " " * ((64 - (10 + len(d) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode() + payload


def npy_of(array):
    b = io.BytesIO()
    np.save(b, array, allow_pickle=False)
    return b.getvalue()


def zip_bytes(members):
    """A ZIP of (name, bytes) stored members, duplicates and odd names allowed."""
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_STORED) as z:
        for name, data in members:
            with __import__("warnings").catch_warnings():
                __import__("warnings").simplefilter("ignore")
                z.writestr(zipfile.ZipInfo(name), data)
    return b.getvalue()


def dump_members(n=12, classes=3):
    index = np.arange(n, dtype=np.int64)
    target = index % classes
    prediction = (index * index) % classes
    return {"index.npy": npy_of(index), "target.npy": npy_of(target),
            "prediction.npy": npy_of(prediction)}


# --- run files: the CLI's own file, members edited and checksums made right again ---

def read_zip(data):
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {n: z.read(n) for n in z.namelist()}


def run_bytes(members, meta, fix=True):
    if fix:
        meta = dict(meta)
        meta["members"] = {n: {"bytes": len(b), "sha256": hashlib.sha256(b).hexdigest()}
                           for n, b in members.items() if n != "meta.json"}
    out = [(n, b) for n, b in members.items() if n != "meta.json"]
    out.append(("meta.json", json.dumps(meta).encode()))
    return zip_bytes(out)


def make_good_run(s):
    good = s.path("good.slrun")
    r = subprocess.run([s.cli, "simulate"] + GOOD_FLAGS + ["--save-run", good],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise SystemExit("make_cases: cannot make the good run file: " + r.stderr)
    with open(good, "rb") as f:
        members = read_zip(f.read())
    meta = json.loads(members["meta.json"])
    return good, members, meta


# --- the categories ---

def non_regular(s, good_run):
    """FIFOs, directories and character devices as every kind of input."""
    fifo_dir = s.path("fifos")
    os.makedirs(fifo_dir)
    kinds = {
        "scenario": lambda p: ["simulate", "--preset", p],
        "csv": lambda p: ["simulate", "--dataset", "csv:" + p],
        "idx": lambda p: ["simulate", "--dataset", "idx:" + p],
        "npy": lambda p: ["simulate", "--dataset", "npy:" + p],
        "names": lambda p: ["simulate", "--dataset", GOOD_DATASET + ",names=" + p],
        "hierarchy": lambda p: ["simulate", "--dataset", GOOD_DATASET + ",hierarchy=" + p],
        "indices": lambda p: ["simulate", "--dataset", GOOD_DATASET + ",indices=" + p],
        "diagnose-run": lambda p: ["diagnose", "--run", p],
        "export-run": lambda p: ["export", "--run", p, "--out", s.path("nr-export"),
                                 "--formats", "csv"],
        "import-npz": lambda p: ["import", p, "--out", s.path("nr-out.slrun"), "--classes", "3"],
        "import-npy": lambda p: ["import", good_dump_npz(s), "--predictions", p,
                                 "--dataset", GOOD_DATASET, "--out", s.path("nr-out.slrun")],
        "compare-a": lambda p: ["compare", p, good_run],
        "compare-b": lambda p: ["compare", good_run, p],
    }
    suffix = {"scenario": ".json", "csv": ".csv", "idx": "-idx1-ubyte", "npy": ".npy",
              "names": ".txt", "hierarchy": ".txt", "indices": ".npy", "diagnose-run": ".slrun",
              "export-run": ".slrun", "import-npz": "_rank0.npz", "import-npy": ".npy",
              "compare-a": ".slrun", "compare-b": ".slrun"}
    for kind, args in kinds.items():
        fifo = os.path.join(fifo_dir, kind + suffix[kind])
        os.mkfifo(fifo)
        s.add("non-regular", "fifo-" + kind, args(fifo), needles=[fifo])
        d = os.path.join(fifo_dir, kind + "-dir" + suffix[kind])
        os.makedirs(d)
        s.add("non-regular", "dir-" + kind, args(d), needles=[d])
        s.add("non-regular", "devzero-" + kind, args("/dev/zero"), needles=["/dev/zero"])
    # The .pt dump reader (LibTorch plugin) and an empty character device.
    fifo = os.path.join(fifo_dir, "dump_rank0.pt")
    os.mkfifo(fifo)
    s.add("non-regular", "fifo-import-pt", ["import", fifo, "--out", s.path("nr-out.slrun")],
          needles=[fifo])
    s.add("non-regular", "devnull-diagnose-run", ["diagnose", "--run", "/dev/null"],
          needles=["/dev/null"])
    s.add("non-regular", "devnull-scenario", ["simulate", "--preset", "/dev/null"],
          needles=["/dev/null"])


_good_dump = None


def good_dump_npz(s):
    global _good_dump
    if _good_dump is None:
        _good_dump = s.write("good_rank0.npz", zip_bytes(list(dump_members().items())))
    return _good_dump


def npy_cases(s):
    """Broken .npy files read as a dataset (npy:PATH) and as a dump's member."""
    labels = np.array([0, 1, 2] * 4, dtype=np.int64)
    good = npy_of(labels)
    broken = {
        "truncated-payload": good[:-5],
        "truncated-header": good[:20],
        "empty": b"",
        "bad-magic": b"\x93NUMPX" + good[6:],
        "header-len-lies": good[:8] + struct.pack("<H", 65535) + good[10:],
        "shape-lies-big": npy_raw("<i8", (10**12,), labels.tobytes()),
        "shape-product-overflow": npy_raw("<i8", (2**40, 2**40), labels.tobytes()),
        "shape-negative": npy_raw("<i8", (-12,), labels.tobytes()),
        "shape-2d": npy_raw("<i8", (3, 4), labels.tobytes()),
        "dtype-object": npy_raw("|O", (12,), labels.tobytes()),
        "dtype-unicode": npy_raw("<U4", (12,), bytes(48 * 4)),
        "dtype-complex": npy_raw("<c16", (12,), bytes(16 * 12)),
        "dtype-float-nan": npy_of(np.array([0, 1, np.nan] * 4)),
        "dtype-bogus": npy_raw("<q9", (12,), labels.tobytes()),
        "fortran-3d": npy_raw("<i8", (2, 2, 3), labels.tobytes(), fortran=True),
        "header-not-dict": npy_raw("", (), labels.tobytes(), header="[1, 2, 3]"),
        "header-python-code": npy_raw("", (), labels.tobytes(),
                                      header="__import__('os').system('false')"),
        "header-unclosed": npy_raw("", (), labels.tobytes(),
                                   header="{'descr': '<i8', 'fortran_order': False, 'shape': (12,"),
        "negative-labels": npy_of(np.array([0, -1, 2] * 4, dtype=np.int64)),
        "label-2^40": npy_of(np.array([0, 1, 2**40] * 4, dtype=np.int64)),
        "label-32767": npy_of(np.array([0, 1, 32767] * 4, dtype=np.int64)),
        "version-9": b"\x93NUMPY\x09\x00" + good[8:],
        "trailing-garbage": good + b"\x00" * 100,
    }
    for label, data in broken.items():
        p = s.write("ds-" + label + ".npy", data)
        s.add("npy", "npy-" + label, ["simulate", "--dataset", "npy:" + p], needles=[p])
    # The same corruptions as the index member of an imported dump (.npz).
    for label in ("truncated-payload", "shape-lies-big", "shape-product-overflow",
                  "shape-negative", "dtype-object", "dtype-float-nan", "header-python-code"):
        m = dump_members()
        m["index.npy"] = broken[label]
        p = s.write("dump-" + label + "_rank0.npz", zip_bytes(list(m.items())))
        s.add("npz", "npz-member-" + label,
              ["import", p, "--out", s.path("npz-out.slrun"), "--classes", "3"], needles=[p])


def npz_cases(s):
    good = zip_bytes(list(dump_members().items()))
    cases = {}
    cases["truncated-half"] = good[:len(good) // 2]
    cases["truncated-eocd"] = good[:-10]
    cases["not-a-zip"] = b"PK\x03\x04" + b"\xff" * 200
    cases["empty"] = b""
    # A CRC that does not match the member.
    bad_crc = bytearray(good)
    at = bad_crc.find(b"PK\x03\x04")
    bad_crc[at + 14:at + 18] = b"\xde\xad\xbe\xef"
    cases["bad-crc-local"] = bytes(bad_crc)
    m = dump_members()
    items = list(m.items())
    cases["duplicate-member"] = zip_bytes(items + [("index.npy", m["index.npy"])])
    # Members named outside the folder: a dump's other members are never read nor extracted
    # (numpy's .npz may hold more arrays), so the import succeeds and writes nothing there.
    for label, name in (("dotdot", "../../evil-shardlens-hostile.npy"),
                        ("absolute", s.path("evil-absolute.npy"))):
        p = s.write("npz-traversal-" + label + "_rank0.npz",
                    zip_bytes(items + [(name, m["index.npy"])]))
        s.add("npz", "npz-traversal-" + label, ["import", p, "--out", s.path("npz-out.slrun"),
                                                "--classes", "3"], exit=0,
              checks=[("absent", os.path.join(s.out, os.path.basename(name)), "")])
    cases["missing-target"] = zip_bytes([(n, b) for n, b in items if n != "target.npy"])
    cases["lengths-differ"] = zip_bytes(items[:2] + [("prediction.npy",
                                                      npy_of(np.zeros(5, np.int64)))])
    cases["member-name-nul"] = zip_bytes(items + [("index.npy\x00.txt", m["index.npy"])])
    # A member whose directory entry says 208 bytes but inflates to 256 MB.
    pieces, crc = hl.deflated_zeros(hl.npy_header("<i8", (10,)), 1 << 28)
    liar = s.path("npz-liar-size_rank0.npz")
    hl.write_zip(liar, [("index.npy", pieces, crc, 208, 8)] +
                 [hl.stored(n, b) for n, b in items if n != "index.npy"])
    s.add("npz", "npz-liar-size", ["import", liar, "--out", s.path("npz-out.slrun"),
                                   "--classes", "3"], needles=[liar])
    # Consistent 250,000,000-record members (6 MB): refused by the budget from the headers.
    huge = s.path("npz-budget_rank0.npz")
    hl.write_zip(huge, [hl.zeros_member(n + ".npy", 250_000_000)
                        for n in ("index", "target", "prediction")])
    s.add("npz", "npz-budget-250M", ["import", huge, "--out", s.path("npz-out.slrun"),
                                     "--classes", "3"], needles=[huge, "memory budget"])
    # A million empty members (a 98 MB file): libzip's directory alone took 433 MB at 64 MiB.
    many = hl.write_many_empty_members(s.path("npz-many-members_rank0.npz"),
                                       ["rank0_x%d.npy" % i for i in range(1_000_000)])
    s.add("npz", "npz-many-members-1M", ["import", many, "--out", s.path("npz-out.slrun"),
                                         "--classes", "3", "--max-memory", "64M"],
          needles=[many, "ZIP directory of 1000000 members"], budget=False,
          rss_mb=64 + RSS_MARGIN_MB)
    # An index near 2^32 with 15 records (a per-index array would be 2^32 entries).
    m = dump_members(15)
    m["index.npy"] = npy_of(np.array([2**32 - 2] + list(range(1, 15)), dtype=np.int64))
    p = s.write("npz-index-2^32_rank0.npz", zip_bytes(list(m.items())))
    s.add("npz", "npz-index-near-2^32", ["import", p, "--out", s.path("npz-out.slrun"),
                                         "--classes", "3"], needles=[p])
    # A dump of a format version newer than this build reads: refused, both versions named.
    m = dump_members()
    m["format_version.npy"] = npy_of(np.array(999, dtype=np.int64))
    p = s.write("npz-format-version-999_rank0.npz", zip_bytes(list(m.items())))
    s.add("npz", "npz-format-version-999", ["import", p, "--out", s.path("npz-out.slrun"),
                                            "--classes", "3"],
          needles=[p, "dump format version 999 is newer than this ShardLens reads"])
    for label, data in cases.items():
        p = s.write("npz-" + label + "_rank0.npz", data)
        s.add("npz", "npz-" + label, ["import", p, "--out", s.path("npz-out.slrun"),
                                      "--classes", "3"], needles=[p])


def sparse_cases(s):
    """Dumps whose matrix is written as its nonzero cells (reported_sparse [K, 3] with
    sparse_classes, dump format 2) lying in every way a list of cells can: each refused with
    the file named, nothing allocated past the budget."""
    classes = 80  # 6400 cells: past the size where the recorder writes a matrix sparse
    good_cells = np.array([[0, 0, 3], [1, 2, 4], [79, 79, 5]], dtype=np.int64)

    def dump(cells, classes_given=classes, extra=None):
        m = dump_members(12, 3)
        m["format_version.npy"] = npy_of(np.array(2, dtype=np.int64))
        m["sparse_classes.npy"] = npy_of(np.array(classes_given, dtype=np.int64))
        m["reported_sparse.npy"] = cells if isinstance(cells, bytes) else npy_of(cells)
        m.update(extra or {})
        return zip_bytes(list(m.items()))

    def with_row(row, dtype=np.int64):
        return np.vstack([good_cells.astype(dtype), np.array([row], dtype=dtype)])

    cases = {
        "row-out-of-range": with_row([80, 0, 1]),
        "column-negative": with_row([0, -1, 1]),
        "cell-twice": with_row([1, 2, 9]),
        "listed-zero": with_row([2, 2, 0]),
        "negative-count": with_row([3, 3, -7]),
        "nan-count": with_row([3, 3, np.nan], np.float64),
        "inf-count": with_row([3, 3, np.inf], np.float64),
        "fractional-coordinate": with_row([3.5, 3, 1], np.float64),
        "two-columns": good_cells[:, :2].copy(),
        "three-dimensions": good_cells.reshape(1, 3, 3),
        "more-cells-than-the-matrix": np.tile(good_cells, (3000, 1)),
        # 2^53 + 1 cannot be a double: counts past 2^53 are not exact
        "count-past-2^53": with_row([4, 4, 2**53 + 1]),
    }
    for label, cells in cases.items():
        p = s.write("sparse-" + label + "_rank0.npz", dump(cells))
        s.add("sparse", "sparse-" + label, ["import", p, "--out", s.path("sparse-out.slrun")],
              needles=[p])
    # A class count that lies: 2^31 classes is a 32 EiB dense matrix, refused from the
    # header; one class fewer than a listed cell needs is refused as out of range.
    for label, claimed in (("classes-2^31", 2**31), ("classes-too-few", 79), ("classes-0", 0)):
        p = s.write("sparse-" + label + "_rank0.npz", dump(good_cells, claimed))
        s.add("sparse", "sparse-" + label, ["import", p, "--out", s.path("sparse-out.slrun")],
              needles=[p])
    # A sparse matrix without its class count, and one beside a dense form of the same name.
    m = dump_members(12, 3)
    m["format_version.npy"] = npy_of(np.array(2, dtype=np.int64))
    m["reported_sparse.npy"] = npy_of(good_cells)
    p = s.write("sparse-no-classes_rank0.npz", zip_bytes(list(m.items())))
    s.add("sparse", "sparse-no-classes", ["import", p, "--out", s.path("sparse-out.slrun")],
          needles=[p, "sparse_classes"])
    # Every record a row pad_across_processes added (flag 4): no sample is left to import.
    m = dump_members(12, 3)
    m["flags.npy"] = npy_of(np.full(12, 4, dtype=np.uint8))
    p = s.write("pad-rows-only_rank0.npz", zip_bytes(list(m.items())))
    s.add("sparse", "pad-rows-only", ["import", p, "--out", s.path("sparse-out.slrun"),
                                      "--classes", "3"], needles=[p])


def dense_dump(edit=None, drop=()):
    """A good segmentation dump (dump format 3): 3 images of 3 classes, ignore_index 255,
    each record's (true, predicted, count) cells, then `edit(arrays, settings)`."""
    arrays = {
        "index": np.array([0, 1, 2], np.int64), "target": np.zeros(3, np.int64),
        "prediction": np.zeros(3, np.int64), "format_version": np.array(3, np.int64),
        "cells_per_record": np.array([3, 2, 0], np.int64),
        "cell_target": np.array([0, 1, 1, 2, 0], np.int64),
        "cell_prediction": np.array([0, 0, 1, 2, 2], np.int64),
        "cell_count": np.array([5, 2, 3, 4, 1], np.int64),
        "sample_size": np.array([12, 5, 4], np.int64), "ignored": np.array([2, 0, 4], np.int64),
    }
    settings = {"task": "segmentation", "num_classes": 3, "ignore_index": 255}
    if edit:
        edit(arrays, settings)
    arrays["settings_json"] = np.frombuffer(json.dumps(settings).encode(), np.uint8)
    return zip_bytes([(k + ".npy", v if isinstance(v, bytes) else npy_of(v))
                      for k, v in arrays.items() if k not in drop])


def dense_cases(s):
    """Dumps of samples of many counts (segmentation, tokens, multilabel: cells_per_record,
    cell_target, cell_prediction, cell_count, sample_size, ignored) lying in every way a
    sample's cells can, and a run file whose cells lie: each refused naming the file (and
    the record and value where there is one), never a matrix that reads as exact."""
    def setter(name, value):
        def edit(a, settings):
            a[name] = value
        return edit

    def setting(key, value):
        def edit(a, settings):
            settings[key] = value
        return edit

    big = np.iinfo(np.int64).max
    cases = {
        # shapes: the target tensor of another shape than the predictions
        "cells-per-record-length": (setter("cells_per_record", np.array([3, 2], np.int64)),
                                    ["'cells_per_record' has 2 entries for 3 records"]),
        "cell-arrays-of-other-lengths": (setter("cell_prediction", np.array([0, 0, 1, 2], np.int64)),
                                         ["the cell arrays have different lengths"]),
        "cell-target-2d": (setter("cell_target", np.zeros((5, 1), np.int64)), ["not a 1-D array"]),
        # class ids
        "target-past-classes": (setter("cell_target", np.array([0, 1, 7, 2, 0], np.int64)),
                                ["record 0 of rank 0", "target 7", "not the ignore_index 255"]),
        "prediction-past-classes": (setter("cell_prediction", np.array([0, 0, 1, 3, 2], np.int64)),
                                    ["record 1 of rank 0", "prediction 3"]),
        "prediction-negative": (setter("cell_prediction", np.array([0, -1, 1, 2, 2], np.int64)),
                                ["prediction -1"]),
        "float-target": (setter("cell_target", np.array([0, 1, 1, 2, 0], np.float64)),
                         ["'cell_target' is a float array"]),
        "float-count": (setter("cell_count", np.array([5, 2, 3, 4, 1.5])),
                        ["'cell_count' is a float array"]),
        # the histogram against the sample
        "histogram-not-sample-size": (setter("sample_size", np.array([12, 6, 4], np.int64)),
                                      ["record 1 of rank 0", "add up to 5 pixels", "sample_size says 6"]),
        "ignored-past-size": (setter("ignored", np.array([2, 0, 5], np.int64)),
                              ["record 2 of rank 0", "ignored 5"]),
        "ignored-negative": (setter("ignored", np.array([2, -1, 4], np.int64)), ["ignored -1"]),
        "sample-size-past-2^53": (setter("sample_size", np.array([12, 2**53 + 1, 4], np.int64)),
                                  ["sample_size 9007199254740993"]),
        # counts
        "count-zero": (setter("cell_count", np.array([5, 0, 3, 4, 1], np.int64)), ["count 0"]),
        "count-negative": (setter("cell_count", np.array([5, 2, -3, 4, 1], np.int64)), ["count -3"]),
        "count-past-2^32": (setter("cell_count", np.array([5, 2, 3, 2**32, 1], np.int64)),
                            ["count 4294967296"]),
        "count-int64-max": (setter("cell_count", np.array([5, 2, 3, big, 1], np.int64)),
                            ["count %d" % big]),
        # cells_per_record that lies
        "cells-per-record-short": (setter("cells_per_record", np.array([3, 1, 0], np.int64)),
                                   ["adds up to 4 cells, but the cell arrays hold 5"]),
        "cells-per-record-long": (setter("cells_per_record", np.array([3, 2, 9], np.int64)),
                                  ["adds up to more than the 5 cells"]),
        "cells-per-record-negative": (setter("cells_per_record", np.array([-1, 6, 0], np.int64)),
                                      ["cells_per_record -1 is negative"]),
        "cells-per-record-int64-max": (setter("cells_per_record", np.array([big, 2, 0], np.int64)),
                                       ["adds up to more than the 5 cells"]),
        "cell-given-twice": (setter("cell_prediction", np.array([0, 0, 0, 2, 2], np.int64)),
                             ["record 0 of rank 0", "the cell (1, 0) is given twice"]),
        # what the settings say
        "task-unknown": (setting("task", "detection"), ["task 'detection'"]),
        "task-classification-with-cells": (setting("task", "classification"),
                                           ["task 'classification' but the dump holds cell arrays"]),
        "num-labels-of-segmentation": (setting("num_labels", 2), ["'num_labels' = 2"]),
    }
    for label, (edit, needles) in cases.items():
        p = s.write("dense-" + label + "_rank0.npz", dense_dump(edit))
        s.add("dense", "dense-" + label, ["import", p, "--out", s.path("dense-out.slrun")],
              needles=[p] + needles)
    # A task of cells without them, and the cell arrays without the count.
    p = s.write("dense-no-cells_rank0.npz", dense_dump(drop=(
        "cells_per_record", "cell_target", "cell_prediction", "cell_count")))
    s.add("dense", "dense-no-cells", ["import", p, "--out", s.path("dense-out.slrun")],
          needles=[p, "task 'segmentation' needs"])
    p = s.write("dense-no-count_rank0.npz", dense_dump(drop=("cell_count",)))
    s.add("dense", "dense-no-count", ["import", p, "--out", s.path("dense-out.slrun")],
          needles=[p, "missing: cell_count"])
    # Multilabel: num_labels against num_classes, and a cell that mixes two labels.
    def multilabel(a, settings):
        settings.update(task="multilabel", num_labels=3, num_classes=4, ignore_index=None)
    p = s.write("dense-num-labels-vs-classes_rank0.npz", dense_dump(multilabel))
    s.add("dense", "dense-num-labels-vs-classes", ["import", p, "--out",
                                                   s.path("dense-out.slrun")],
          needles=[p, "num_classes 4 is not 2 x num_labels (3)"])
    def mixed(a, settings):
        settings.update(task="multilabel", num_labels=2, num_classes=4, ignore_index=None)
        a.update(cells_per_record=np.array([2, 1, 0], np.int64),
                 cell_target=np.array([0, 2, 3], np.int64),
                 cell_prediction=np.array([1, 3, 1], np.int64),
                 cell_count=np.array([1, 1, 1], np.int64),
                 sample_size=np.array([2, 1, 0], np.int64), ignored=np.zeros(3, np.int64))
    p = s.write("dense-multilabel-mixed_rank0.npz", dense_dump(mixed))
    s.add("dense", "dense-multilabel-mixed", ["import", p, "--out", s.path("dense-out.slrun")],
          needles=[p, "record 1 of rank 0", "mixes label 1 and label 0"])
    # A cell array whose header claims 2^40 cells in a small file: refused from its header.
    p = s.write("dense-claims-2^40-cells_rank0.npz", dense_dump(setter(
        "cell_count", npy_raw("<i8", (2**40,), b"\0" * 40))))
    s.add("dense", "dense-claims-2^40-cells", ["import", p, "--out", s.path("dense-out.slrun")],
          needles=[p])
    # A CSV of cells (count column) that gives one record two dataset indices.
    p = s.write("dense-csv-record-two-indices_rank0.csv",
                "rank,index,record,target,prediction,count\n0,4,0,0,0,7\n0,5,0,1,1,2\n")
    s.add("dense", "dense-csv-record-two-indices",
          ["import", p, "--out", s.path("dense-out.slrun")],
          needles=[p, "line 3", "dataset index 5 here but 4 on line 2"])
    # The good dump imports (the control), and its run file's cells may not lie either.
    good = s.write("dense-good_rank0.npz", dense_dump())
    run = s.path("dense-good.slrun")
    subprocess.run([s.cli, "import", good, "--out", run], check=True, capture_output=True)
    s.add("dense", "dense-control", ["import", good, "--out", s.path("dense-control.slrun")],
          exit=0)
    with open(run, "rb") as f:
        members = read_zip(f.read())
    meta = json.loads(members.pop("meta.json"))
    for label, name, value, needle in (
            ("cells-per-record-lies", "rank0_cells_per_record.npy", [3, 2, 1],
             "gives record 2 1 cells, of the 0 left"),
            ("cell-count-zero", "rank0_cell_count.npy", [5, 2, 0, 4, 1], "count 0"),
            ("cell-key-past-c2", "rank0_cell_key.npy", [0, 3, 9, 8, 2], "key 9 is outside [0, 9)"),
            ("cell-count-not-the-matrix", "rank0_cell_count.npy", [5, 2, 3, 4, 2],
             "rank0_matrix.npy holds")):
        m = dict(members)
        m[name] = npy_of(np.array(value, np.int64))
        p = s.write("dense-run-" + label + ".slrun", run_bytes(m, meta))
        s.add("dense", "dense-run-" + label, ["diagnose", "--run", p], needles=[p, needle])


def run_count_cases(s, members, meta):
    """Run files whose matrices hold counts no evaluation makes."""
    synced = np.load(io.BytesIO(members["synced.npy"]))

    def with_cell(name, value, dtype=np.float64):
        m = np.load(io.BytesIO(members[name])).astype(dtype)
        m[1, 1] = value
        return npy_of(m)

    values = {"nan": np.nan, "-inf": -np.inf, "negative": -50.0, "1e300": 1e300,
              "half": 0.5, "2^53": float(2**53), "2^63": 2.0**63}
    for member in ("synced.npy", "rank0_matrix.npy", "expected.npy"):
        for label, v in values.items():
            mm = dict(members)
            mm[member] = with_cell(member, v)
            p = s.write("counts-%s-%s.slrun" % (member[:-4], label), run_bytes(mm, meta))
            if member == "synced.npy" and label == "half":
                # A reported matrix may hold fractions (a normalize-then-sum sync): diagnosed
                # wrong (exit 1), never called exact.
                s.add("run-counts", "counts-synced-half", ["diagnose", "--run", p], exit=1)
                continue
            s.add("run-counts", "counts-%s-%s" % (member[:-4], label), ["diagnose", "--run", p],
                  needles=[p, member[:-4]])
    # int64 cells whose sum passes int64 (each cell fits).
    mm = dict(members)
    m = np.full((3, 3), 2**62, dtype=np.int64)
    mm["synced.npy"] = npy_of(m)
    p = s.write("counts-sum-past-int64.slrun", run_bytes(mm, meta))
    s.add("run-counts", "counts-synced-sum-past-int64", ["diagnose", "--run", p],
          needles=[p, "synced"])
    mm = dict(members)
    m = np.load(io.BytesIO(members["synced.npy"])).astype(np.int64)
    m[0, 0] = -50
    mm["synced.npy"] = npy_of(m)
    p = s.write("counts-int64-negative.slrun", run_bytes(mm, meta))
    s.add("run-counts", "counts-synced-int64-negative", ["diagnose", "--run", p],
          needles=[p, "synced"])
    # The export of a 1e300 cell must not write INT64_MIN either: refused at load.
    mm = dict(members)
    mm["synced.npy"] = with_cell("synced.npy", 1e300)
    p = s.write("counts-export-1e300.slrun", run_bytes(mm, meta))
    s.add("run-counts", "counts-export-1e300", ["export", "--run", p, "--out",
                                                s.path("export-1e300"), "--formats", "npy"],
          needles=[p])
    # A doctored expected matrix equal to a wrong synced one: the records contradict it.
    mm = dict(members)
    wrong = synced.copy()
    wrong[1, 1] += 100
    mm["synced.npy"] = npy_of(wrong)
    mm["expected.npy"] = npy_of(wrong)
    p = s.write("doctored-expected.slrun", run_bytes(mm, meta))
    s.add("run-counts", "doctored-expected-equals-wrong-synced", ["diagnose", "--run", p],
          exit=2, needles=[p, "expected"])
    # A synced matrix the file calls the ranks' sum, which the ranks do not sum to: it would
    # be labelled "computed" in every report. The honest label is read (exit 0: a good run).
    for label, cell in (("honest", 0), ("forged", 1), ("forged-minus", -1)):
        mm = dict(members)
        forged = synced.copy()
        forged[2, 0] += cell
        mm["synced.npy"] = npy_of(forged)
        p = s.write("sum-of-ranks-%s.slrun" % label, run_bytes(mm, {**meta,
                                                               "synced_origin": "sum-of-ranks"}))
        s.add("run-counts", "sum-of-ranks-" + label, ["diagnose", "--run", p],
              exit=0 if cell == 0 else 2,
              needles=[] if cell == 0 else [p, "synced.npy", "row 2, column 0", "sum-of-ranks"])


def run_structure_cases(s, good_path, members, meta):
    with open(good_path, "rb") as f:
        good = f.read()
    cases = {
        "truncated": good[:len(good) // 2],
        "empty": b"",
        "not-zip": b"shardlens" * 10,
        "checksum-wrong": run_bytes(
            {**members, "rank0_index.npy": npy_of(np.arange(6, dtype=np.int64))}, meta,
            fix=False),
        "missing-synced-member-listed": zip_bytes(
            [(n, b) for n, b in members.items() if n != "rank1_target.npy"]),
        "duplicate-member": zip_bytes(list(members.items()) + [("synced.npy",
                                                                members["synced.npy"])]),
        "traversal-member": zip_bytes(list(members.items()) + [("../evil.npy",
                                                                members["synced.npy"])]),
        "matrix-shape-4x4": run_bytes({**members, "synced.npy": npy_of(np.zeros((4, 4),
                                                                               np.int64))}, meta),
        "matrix-shape-negative": run_bytes(
            {**members, "synced.npy": npy_raw("<i8", (-3, -3), bytes(72))}, meta),
        "matrix-shape-overflow": run_bytes(
            {**members, "synced.npy": npy_raw("<i8", (2**32, 2**32), bytes(72))}, meta),
        "matrix-dtype-string": run_bytes(
            {**members, "synced.npy": npy_raw("<U8", (3, 3), bytes(9 * 32))}, meta),
        "index-out-of-range": run_bytes(
            {**members, "rank0_index.npy": npy_of(np.array([0, 1, 2, 3, 4, 10**9],
                                                           dtype=np.int64))}, meta),
        "target-class-99": run_bytes(
            {**members, "rank0_target.npy": npy_of(np.array([0, 1, 2, 0, 1, 99],
                                                            dtype=np.int64))}, meta),
        "records-length-differ": run_bytes(
            {**members, "rank0_target.npy": npy_of(np.array([0, 1], dtype=np.int64))}, meta),
    }
    for label, data in cases.items():
        p = s.write("run-" + label + ".slrun", data)
        s.add("run-structure", "run-" + label, ["diagnose", "--run", p], needles=[p])
    # A deflated member that inflates to 2 GB (the budget, from the directory entry).
    p = s.path("run-member-2GB.slrun")
    hl.write_zip(p, [hl.stored("meta.json", json.dumps(meta).encode()),
                     hl.zeros_member("rank0_index.npy", 250_000_000)])
    s.add("run-structure", "run-member-2GB", ["diagnose", "--run", p], needles=[p])
    # 300,000 empty members (took 176 MB at 64 MiB before the directory was charged).
    p = hl.write_many_empty_members(s.path("run-many-members.slrun"),
                                    ["rank%d_index.npy" % i for i in range(300_000)])
    s.add("run-structure", "run-many-members-300k",
          ["diagnose", "--run", p, "--max-memory", "64M"],
          needles=[p, "ZIP directory of 300000 members"], budget=False,
          rss_mb=64 + RSS_MARGIN_MB)


def crowded(document, value, count):
    """`document` (a JSON object's bytes) with `count` copies of `value` in a list under an
    unknown key: a few bytes of text each, over forty bytes each once parsed."""
    return document[:-1] + b', "zz": [' + b",".join([value] * count) + b"]}"


def meta_cases(s, members, meta):
    def edited(**changes):
        m = json.loads(json.dumps(meta))
        for k, v in changes.items():
            if v is KeyError:
                m.pop(k, None)
            else:
                m[k] = v
        return m

    deep = 5_000_000
    cases = {
        "classes-string": edited(classes="3"),
        "classes-negative": edited(classes=-3),
        "classes-huge": edited(classes=2**31),
        "classes-float": edited(classes=3.5),
        "world-size-disagrees": edited(world_size=3),
        "world-size-zero": edited(world_size=0),
        "world-size-65537": edited(world_size=65537),
        "class-names-number": edited(class_names=7),
        "class-names-long": edited(class_names=["a", "b" * 100_000, "c"]),
        "class-names-1025": edited(class_names=["a", "b" * 1025, "c"]),
        "class-names-count": edited(class_names=["a", "b"]),
        "synced-origin-unknown": edited(synced_origin="from-the-moon"),
        "synced-origin-number": edited(synced_origin=3),
        "format-version-99": edited(format_version=99),
        "format-version-string": edited(format_version="1"),
        "format-name-wrong": edited(format="not-shardlens"),
        "dataset-size-2^32": edited(dataset_size=2**32 - 1, class_counts=[2**32 - 9, 4, 4]),
        "world-size-one": edited(world_size=1),
        "dataset-size-negative": edited(dataset_size=-1),
        "records-per-rank-lies": edited(records_per_rank=[6, 600]),
        "class-counts-negative": edited(class_counts=[4, -4, 4]),
        "class-counts-nan-text": edited(class_counts=["nan", 4, 4]),
        "classes-missing": edited(classes=KeyError),
        "members-missing": edited(members=KeyError),
        "failed-ranks-out-of-range": edited(failed_ranks=[7]),
        "epoch-negative": edited(epoch=-5),
    }
    for label, m in cases.items():
        fix = label != "members-missing"
        p = s.write("meta-" + label + ".slrun", run_bytes(members, m, fix=fix))
        s.add("run-meta", "meta-" + label, ["diagnose", "--run", p], needles=[p])
    # Not JSON, JSON not an object, and a 5-million-deep array under an unknown key.
    full = json.dumps(meta).encode()
    for label, text in (("not-json", b"{\"format\": "), ("array", b"[1, 2, 3]"),
                        ("deep-unknown-key",
                         full[:-1] + b', "zz": ' + b"[" * deep + b"]" * deep + b"}"),
                        # Parsed trees past the budget from a few bytes a value: a list of
                        # empty objects, of zeros, and an object of many short keys.
                        ("many-empty-objects-4M", crowded(full, b"{}", 4_000_000)),
                        ("many-empty-objects-20M", crowded(full, b"{}", 20_000_000)),
                        ("many-zeros-20M", crowded(full, b"0", 20_000_000)),
                        ("many-keys-3M", full[:-1] + b', "zz": {' + b",".join(
                            b'"%x":0' % i for i in range(3_000_000)) + b"}}")):
        out = [(n, b) for n, b in members.items() if n != "meta.json"] + [("meta.json", text)]
        p = s.write("meta-" + label + ".slrun", zip_bytes(out))
        s.add("run-meta", "meta-" + label, ["diagnose", "--run", p], needles=[p])


def spec_cases(s):
    def names_file(label, text):
        return s.write("names-" + label + ".txt", text)

    cases = [
        ("synthetic-classes-0", "synthetic:classes=0,per-class=4", "--dataset"),
        ("synthetic-classes-10^6", "synthetic:classes=1000000,per-class=1", "--dataset"),
        ("synthetic-per-class-10^12", "synthetic:classes=3,per-class=1000000000000",
         "--dataset"),
        ("synthetic-n-10^9", "synthetic:classes=10,n=1000000000,zipf=1.2", "--dataset"),
        ("synthetic-n-2^32", "synthetic:classes=10,n=4294967296,zipf=1.2", "--dataset"),
        ("synthetic-n-negative", "synthetic:classes=10,n=-5,zipf=1.2", "--dataset"),
        ("synthetic-per-class-2^32-1", "synthetic:classes=1,per-class=4294967295", "--dataset"),
        ("synthetic-zipf-nan", "synthetic:classes=10,n=100,zipf=nan", "--dataset"),
        ("synthetic-counts-huge", "synthetic:counts=3,99999999999999,7", "--dataset"),
        ("synthetic-unknown-key", "synthetic:classes=3,per-class=4,evil=1", "--dataset"),
        ("unknown-kind", "mnist-of-doom:train", "--dataset"),
        ("first-negative", GOOD_DATASET + ",first=-1", "--dataset"),
        ("first-2^63", GOOD_DATASET + ",first=9223372036854775808", "--dataset"),
        ("names-long", GOOD_DATASET + ",names=" + names_file("long", "a\n" + "b" * 100_000 +
                                                             "\nc\n"), "names-long.txt"),
        ("names-too-few", GOOD_DATASET + ",names=" + names_file("few", "a\n"), "names-few.txt"),
        ("names-missing-file", GOOD_DATASET + ",names=" + s.path("no-such-names.txt"),
         "no-such-names.txt"),
        ("csv-missing-file", "csv:" + s.path("no-such.csv"), "no-such.csv"),
        ("predictor-accuracy-2", None, "--predictor"),
    ]
    for label, spec, needle in cases:
        if spec is None:
            args = ["simulate", "--dataset", GOOD_DATASET, "--predictor", "noisy:accuracy=2"]
        else:
            args = ["simulate", "--dataset", spec, "--world-size", "2"]
        s.add("spec", "spec-" + label, args, needles=[needle])
    # CSVs: a label 32767 (32768 classes: 1 G cells per rank), 2^40, negative, text, empty.
    for label, text in (("label-32767", "label\n" + "0\n1\n" * 29 + "32767\n"),
                        ("label-2^40", "label\n0\n1\n1099511627776\n"),
                        ("label-negative", "label\n0\n-1\n2\n"),
                        ("label-text", "label\n0\ncat\n2\n"),
                        ("label-float", "label\n0\n1.5\n2\n"),
                        ("no-rows", "label\n"),
                        ("nul-byte", "label\n0\n1\x002\n"),
                        ("long-line", "label\n" + "7" * 1_000_000 + "\n"),
                        # 15 million rows ended by \r alone (30 MB): a table of 960 MB.
                        ("cr-line-ends", "label\r" + "0\r1\r" * 7_500_000)):
        p = s.write("csv-" + label + ".csv", text)
        s.add("spec", "csv-" + label, ["simulate", "--dataset", "csv:" + p, "--world-size",
                                       "64"], needles=[p])
    # IDX: a header announcing 2^31 labels with 12 bytes of data, and a bad magic.
    for label, data in (("count-lies", struct.pack(">II", 0x801, 2**31 - 1) + bytes(12)),
                        ("bad-magic", struct.pack(">II", 0x999, 12) + bytes(12)),
                        ("images-huge", struct.pack(">IIII", 0x803, 2**31 - 1, 65535, 65535))):
        p = s.write("idx-" + label + "-idx1-ubyte", data)
        s.add("spec", "idx-" + label, ["simulate", "--dataset", "idx:" + p], needles=[p])
    # 200 million labels in an 870 KB gzip: 1.8 GB once inflated and widened, refused first.
    p = s.write("idx-200M-labels-idx1-ubyte.gz", gzip.compress(
        struct.pack(">II", 0x801, 200_000_000) + bytes(200_000_000), compresslevel=1))
    s.add("spec", "idx-200M-labels-gzip", ["simulate", "--dataset", "idx:" + p],
          needles=[p, "memory budget"])
    # A NUL byte inside a spec (argv cannot hold one: a scenario file can).
    sc = json.loads(json.dumps(SCENARIO))
    sc["dataset"] = "synthetic:classes=3\u0000,per-class=4000000000"
    p = s.write("scenario-dataset-nul.json", json.dumps(sc))
    s.add("spec", "spec-nul-in-scenario-dataset", ["simulate", "--preset", p],
          needles=[p, "dataset"])
    sc = json.loads(json.dumps(SCENARIO))
    sc["dataset"] = "synthetic:classes=10,n=4294967295,zipf=1.2"
    p = s.write("scenario-dataset-2^32.json", json.dumps(sc))
    s.add("spec", "spec-scenario-dataset-2^32", ["simulate", "--preset", p],
          needles=[p, "dataset"])


SCENARIO = {
    "dataset": GOOD_DATASET, "predictor": "noisy:accuracy=0.9,seed=1", "world_size": 2,
    "batch_size": 2, "sampler": "distributed", "shuffle": False, "seed": 0, "epoch": 0,
    "sync": "all-reduce"}


def scenario_cases(s):
    bad = [("batch_size", 0), ("batch_size", -3), ("batch_size", 2**40), ("world_size", 0),
           ("world_size", 10**6), ("epoch", -1), ("sanity_steps", -5), ("ignore_index", -7),
           ("validations_per_epoch", 10**6), ("validations_per_epoch", 0),
           ("batch_size", "two"), ("world_size", 2.5), ("shuffle", "yes"),
           ("sampler", "mystery"), ("sync", "telepathy"), ("counter_dtype", "int3"),
           ("limit_batches", -1), ("rank_seeds", list(range(100))), ("torch_version", "0.0"),
           ("seed", 2**70), ("dataset", 42), ("predictor", "oracle:of-delphi")]
    seen = {}
    for key, value in bad:
        seen[key] = seen.get(key, 0) + 1
        sc = dict(SCENARIO)
        sc[key] = value
        label = "%s-%d" % (key, seen[key])
        p = s.write("scenario-" + label + ".json", json.dumps(sc))
        s.add("scenario", "scenario-" + label, ["simulate", "--preset", p], needles=[p, key])
    for label, text in (("not-json", "{\"dataset\": "), ("array", "[1, 2]"),
                        ("unknown-key", json.dumps({**SCENARIO, "wolrd_size": 2})),
                        ("deep", "[" * 1_000_000 + "]" * 1_000_000),
                        ("deep-unknown-key", json.dumps(SCENARIO)[:-1] + ', "zz": ' +
                         "[" * 5_000_000 + "]" * 5_000_000 + "}"),
                        ("over-16MB", json.dumps({**SCENARIO,
                                                  "description": "x" * (17 << 20)}))):
        p = s.write("scenario-" + label + ".json", text)
        needles = [p] + (["wolrd_size"] if label == "unknown-key" else [])
        s.add("scenario", "scenario-" + label, ["simulate", "--preset", p], needles=needles)
    # Five million objects (15 MB of text) under a 64 MiB budget: refused before the parser
    # builds them (they took 572 MB), not after, by the unknown key.
    small_budget = 64
    p = s.write("scenario-many-objects.json",
                crowded(json.dumps(SCENARIO).encode(), b"{}", 5_000_000))
    s.add("scenario", "scenario-many-objects",
          ["simulate", "--preset", p, "--max-memory", "%dM" % small_budget], needles=[p],
          budget=False, rss_mb=small_budget + RSS_MARGIN_MB)


def pt_cases(s):
    for label, name, data, args, needles in hp.hostile_dumps():
        p = s.write("pt-" + name, data)
        s.add("pt", "pt-" + label.replace(" ", "-"),
              ["import", p, "--out", s.path("pt-out.slrun")] + args,
              needles=[p] + needles, as_mb=AS_TORCH_MB, budget="--max-memory" not in args)
    good = hp.pt_bytes(hp.p_dict(hp.good_entries()), hp.good_storages())
    # A pickle calling os.system, a truncated dump, and a pickle that is not one.
    evil = (b"\x80\x02cos\nsystem\n(X\x05\x00\x00\x00falset" + b"R.")
    for label, data in (("truncated", good[:len(good) // 2]),
                        ("global-os-system", hp.pt_bytes(evil, hp.good_storages())),
                        ("pickle-garbage", hp.pt_bytes(b"\x80\x02\xff\xfe\xfd", [])),
                        ("tensor-size-2^40", hp.pt_bytes(hp.p_dict(hp.good_entries(
                            hp.p_tensor("LongStorage", "0", hp.N, 0, [2**40], [1]))),
                            hp.good_storages()))):
        p = s.write("pt-" + label + "_rank0.pt", data)
        s.add("pt", "pt-" + label, ["import", p, "--out", s.path("pt-out.slrun")],
              needles=[p], as_mb=AS_TORCH_MB)


def null_device(s):
    """A character device to write to. Never the machine's /dev/null when root: a regression
    that replaces its output with a regular file (as main did) would replace the real one.
    As root a private node (1, 3) is made in the folder; others cannot replace /dev/null."""
    if os.geteuid() != 0:
        return "/dev/null"
    p = s.path("null-device")
    try:
        os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except OSError as e:
        raise SystemExit("make_cases: running as root and cannot make a private character "
                         "device (%s); refusing to aim output cases at /dev/null" % e)
    return p


def output_cases(s, good_run):
    devnull = null_device(s)
    dump = good_dump_npz(s)
    with open(dump, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    s.add("outputs", "out-import-onto-its-input", ["import", dump, "--out", dump, "--classes", "3"],
          needles=[dump], checks=[("unchanged", dump, digest)])
    with open(good_run, "rb") as f:
        run_digest = hashlib.sha256(f.read()).hexdigest()
    s.add("outputs", "out-save-run-onto-run-input",
          ["simulate", "--run", good_run, "--save-run", good_run], needles=[good_run],
          checks=[("unchanged", good_run, run_digest)])
    names = s.write("names-kept.txt", "a\nb\nc\n")
    names_digest = hashlib.sha256(b"a\nb\nc\n").hexdigest()
    s.add("outputs", "out-save-run-onto-names-file",
          ["simulate", "--dataset", GOOD_DATASET + ",names=" + names, "--save-run", names],
          needles=[names], checks=[("unchanged", names, names_digest)])
    s.add("outputs", "out-import-devnull", ["import", dump, "--out", devnull,
                                            "--classes", "3"],
          needles=[devnull], checks=[("not_regular", devnull, "")])
    s.add("outputs", "out-save-run-devnull", ["simulate"] + GOOD_FLAGS + ["--save-run",
                                                                          devnull],
          needles=[devnull], checks=[("not_regular", devnull, "")])
    fifo = s.path("out-fifo.slrun")
    os.mkfifo(fifo)
    s.add("outputs", "out-import-fifo", ["import", dump, "--out", fifo, "--classes", "3"],
          needles=[fifo], checks=[("not_regular", fifo, "")])
    s.add("outputs", "out-export-dir-is-file", ["export", "--run", good_run, "--out", dump,
                                                "--formats", "csv"],
          needles=[dump], checks=[("unchanged", dump, digest)])
    s.add("outputs", "out-export-devnull", ["export", "--run", good_run, "--out", devnull,
                                            "--formats", "csv"],
          needles=[devnull], checks=[("not_regular", devnull, "")])
    s.add("outputs", "out-simulate-out-fifo", ["simulate"] + GOOD_FLAGS + ["--out", fifo],
          needles=[fifo], checks=[("not_regular", fifo, "")])


def export_cases(s, members, meta, figures):
    """Class names that attack the formats: the export succeeds and each file is safe. A
    build without figures (no Qt) exports no SVG: its cases check CSV and LaTeX only."""
    formats = "csv,latex,svg" if figures else "csv,latex"
    hostile = {
        "esc-bel": ["red\x1b[31m", "bell\x07", "plain"],
        "latex-input": ["\\input{/etc/passwd}", "a_b&c%d$e#f", "{}~^"],
        "csv-formula": ["=HYPERLINK(\"http://x\",\"y\")", "+1+1", "@SUM(A1)"],
        "xml-markup": ["<svg onload=alert(1)>", "]]>&amp;", "\"quoted'"],
    }
    for label, names in hostile.items():
        p = s.write("names-" + label + ".txt", "\n".join(names) + "\n")
        if label == "esc-bel":
            # A names file refuses control characters (file and line named).
            s.add("exports", "export-names-file-control-chars",
                  ["export", "--dataset", GOOD_DATASET + ",names=" + p, "--out",
                   s.path("export-refused"), "--formats", "csv"], needles=[p])
        else:
            out = s.path("export-" + label)
            checks = [("svg_xml", out, ""), ("csv_quoted", out, json.dumps(names)),
                      ("tex_no_input", out, "")][0 if figures else 1:]
            s.add("exports", "export-" + label,
                  ["export", "--dataset", GOOD_DATASET + ",names=" + p, "--world-size", "2",
                   "--batch-size", "2", "--out", out, "--formats", formats],
                  exit=0, checks=checks)
        # The same names from a run file's meta.json (no names-file reader in between).
        m = json.loads(json.dumps(meta))
        m["class_names"] = names
        p = s.write("export-names-" + label + ".slrun", run_bytes(members, m))
        out = s.path("export-run-" + label)
        checks = [("svg_xml", out, ""), ("csv_quoted", out, json.dumps(names)),
                  ("tex_no_input", out, "")][0 if figures else 1:]
        s.add("exports", "export-run-" + label,
              ["export", "--run", p, "--out", out, "--formats", formats],
              exit=0, checks=checks)


def hierarchy_cases(s, figures):
    """Class hierarchy files (",hierarchy=FILE", core/io/class_hierarchy.h): every malformed
    kind refused with the file named, and group names that attack the output formats exported
    safely (the groups figures name them in SVG; the reports in JSON, CSV and LaTeX)."""
    def hierarchy(label, data):
        return s.write("hierarchy-" + label + ".txt", data)

    deep = " > ".join("g%d" % k for k in range(33))  # kMaxHierarchyLevels is 32
    refused = {
        "name-100k": "0 " + "b" * 100_000 + "\n1 a\n2 a\n",
        "too-deep": "0 %s\n1 %s\n2 %s\n" % (deep, deep, deep),
        "empty-element": "0 a > > b\n1 a\n2 a\n",
        "two-parents": "0 a > x\n1 b > x\n2 a\n",
        "cycle": "0 a > b > a\n1 a\n2 a\n",
        "escape-in-name": "0 red\x1b[31m\n1 a\n2 a\n",
        "bell-in-path": "0 a > b\x07\n1 a\n2 a\n",
        "nul-byte": "0 a\x00b\n1 a\n2 a\n",
        "missing-class": "0 a\n1 a\n",
        "class-twice": "0 a\n0 b\n1 a\n2 a\n",
        "class-2^63": "9223372036854775808 a\n0 a\n1 a\n2 a\n",
        "class-negative": "-1 a\n0 a\n1 a\n2 a\n",
        "no-parent": "0\n1 a\n2 a\n",
        # One class line, then 65 MB of comment: past kMaxClassNamesFileBytes (64 MiB).
        "65MB": "0 a\n1 a\n2 a\n" + ("#" + "x" * 1023 + "\n") * (65 << 10),
    }
    for label, text in refused.items():
        p = hierarchy(label, text)
        s.add("hierarchy", "hierarchy-" + label,
              ["simulate", "--dataset", GOOD_DATASET + ",hierarchy=" + p], needles=[p])
    p = hierarchy("not-utf8", b"0 caf\xe9\n1 a\n2 a\n")
    s.add("hierarchy", "hierarchy-not-utf8",
          ["simulate", "--dataset", GOOD_DATASET + ",hierarchy=" + p], needles=[p])
    # Group names that are code in another format: the export succeeds, every file is safe.
    formats = "csv,json,latex,svg" if figures else "csv,json,latex"
    attacks = {
        "xml-markup": ("<svg onload=alert(1)>", "]]>&amp; \"quoted'"),
        "latex-input": ("\\input{/etc/passwd}", "a_b&c%d$e#f {}~^"),
        "csv-formula": ("=HYPERLINK(\"http://x\",\"y\")", "@SUM(A1) > +1+1"),
    }
    for label, (top, below) in attacks.items():
        p = hierarchy("export-" + label, "0 %s > %s\n1 %s > %s\n2 %s\n" %
                      (top, below, top, below, top))
        out = s.path("export-hierarchy-" + label)
        checks = [("svg_xml", out, ""), ("svg_inert", out, ""), ("text_clean", out, ""),
                  ("csv_quoted", out, "[]"), ("tex_no_input", out, "")][0 if figures else 2:]
        s.add("hierarchy", "export-hierarchy-" + label,
              ["export", "--dataset", GOOD_DATASET + ",hierarchy=" + p, "--world-size", "3",
               "--batch-size", "1", "--out", out, "--formats", formats], exit=0, checks=checks)


def transaction_cases(s, good_run, figures):
    """Exports into places prepared to make them write outside --out, fail half way or trip
    on what an earlier one left: nothing outside --out changes, a failed export replaces no
    file, and no staging directory is left behind."""
    two = s.path("tx-two-validations.slrun")
    r = subprocess.run([s.cli, "simulate"] + GOOD_FLAGS + ["--validations-per-epoch", "2",
                                                           "--save-run", two],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise SystemExit("make_cases: cannot make the two-validation run file: " + r.stderr)
    old = b"old export\n"
    digest = hashlib.sha256(old).hexdigest()

    def prepared(name, *files):
        out = s.path(name)
        os.makedirs(out)
        for rel in files:
            os.makedirs(os.path.dirname(os.path.join(out, rel)), exist_ok=True)
            with open(os.path.join(out, rel), "wb") as f:
                f.write(old)
        return out

    def kept(out, *files):
        return [("unchanged", os.path.join(out, f), digest) for f in files] + \
            [("no_staging", out, "")]

    # An epoch folder that is a link to another folder: nothing is written there.
    elsewhere = prepared("tx-elsewhere", "synced.csv")
    out = prepared("tx-epoch-link", "epoch0_validation0/synced.csv")
    link = os.path.join(out, "epoch0_validation1")
    os.symlink(elsewhere, link)
    s.add("exports", "tx-epoch-folder-is-a-link",
          ["export", "--run", two, "--out", out, "--formats", "csv,json"],
          needles=[link, "symbolic link"],
          checks=kept(out, "epoch0_validation0/synced.csv") +
          [("unchanged", os.path.join(elsewhere, "synced.csv"), digest),
           ("absent", os.path.join(elsewhere, "report.json"), "")])
    # A file's place held by a folder: refused before any file is replaced, in an epoch's
    # folder and at the top.
    out = prepared("tx-report-is-a-folder", "epoch0_validation0/synced.csv",
                   "epoch0_validation1/report.json/inner/kept")
    s.add("exports", "tx-report-json-is-a-folder",
          ["export", "--run", two, "--out", out, "--formats", "csv,json"],
          needles=[os.path.join(out, "epoch0_validation1", "report.json"), "is a directory"],
          checks=kept(out, "epoch0_validation0/synced.csv",
                      "epoch0_validation1/report.json/inner/kept"))
    out = prepared("tx-report-is-a-folder-top", "synced.csv", "report.json/inner/kept")
    s.add("exports", "tx-report-json-is-a-folder-top",
          ["export", "--run", good_run, "--out", out, "--formats", "csv,json"],
          needles=[os.path.join(out, "report.json"), "is a directory"],
          checks=kept(out, "synced.csv", "report.json/inner/kept"))
    # A write that fails half way (files over 64 KB cannot be written: a disk that fills): the
    # small data files written before it replace nothing.
    formats = "csv,json,npy,png" if figures else "csv,json,npy"
    out = prepared("tx-disk-full", "synced.csv", "per_rank_0.csv", "metrics.json")
    s.add("exports", "tx-write-fails-half-way",
          ["export", "--preset", "padding-duplicates", "--world-size", "64", "--out", out,
           "--formats", formats], needles=[out], fsize_kb=64,
          checks=kept(out, "synced.csv", "per_rank_0.csv", "metrics.json"))
    out = s.path("tx-disk-full-new")
    s.add("exports", "tx-write-fails-half-way-new-folder",
          ["simulate", "--preset", "padding-duplicates", "--world-size", "64", "--out", out],
          needles=["tx-disk-full-new"], fsize_kb=64,
          checks=[("absent", out, ""), ("no_staging", out, "")])
    # What a killed export left (its process gone): removed by the next one, which succeeds.
    out = prepared("tx-abandoned", "synced.csv",
                   ".shardlens-staging-2147483647-AbCdEf/synced.csv")
    s.add("exports", "tx-abandoned-staging-removed",
          ["export", "--run", two, "--out", out, "--formats", "csv"], exit=0,
          checks=[("no_staging", out, "")])


# Strings a file can carry into every output: markup that runs in a browser, control
# characters a terminal acts on (NUL makes an SVG that is not XML), bidi overrides that
# reorder what a reader sees, and a string long enough to find a quadratic escaper.
HOSTILE_TEXT = {
    "script": "<script>alert(document.domain)</script>",
    "attribute": "\"/><svg onload=alert(1)><x a='",
    "nul-esc": "ti\x00tle \x1b[2J\x1b]0;owned\x07 \r\x08\x7f \x9b31m",
    "bidi": "safe\u202etxt.exe\u2066x\u2069\u202a",
    "long": "<&\x1b\u202e" * 25_000,
}


def output_text_cases(s, members, meta, figures):
    """Text from a run file (the scenario's title, name and description, the class names) and
    from a scenario file reaches SVG, PDF, LaTeX, CSV, JSON and the terminal as text: every
    output is valid UTF-8 with no raw control character, no SVG runs anything."""
    formats = "csv,json,latex,svg,pdf" if figures else "csv,json,latex"
    checks_for = lambda out: ([("svg_xml", out, ""), ("svg_inert", out, "")] if figures else []) \
        + [("tex_no_input", out, ""), ("text_clean", out, "")]
    for label, text in HOSTILE_TEXT.items():
        m = json.loads(json.dumps(meta))
        for key in ("title", "name", "description"):
            m["scenario"][key] = text
        m["class_names"] = [text + str(c) for c in range(len(m["class_names"]))]
        run = s.write("text-" + label + ".slrun", run_bytes(members, m))
        out = s.path("text-export-" + label)
        said = s.path("text-export-" + label + ".stdout")
        s.add("output text", "text-export-run-" + label,
              ["export", "--run", run, "--out", out, "--formats", formats], exit=0,
              checks=checks_for(out) + [("text_clean", said, "")], stdout=said,
              time_s=60 if label == "long" else TIME_S)
        for command, args in (("diagnose", ["--run", run]), ("compare", [run, run])):
            said = s.path("text-%s-%s.stdout" % (command, label))
            s.add("output text", "text-%s-run-%s" % (command, label), [command] + args,
                  exit=0, checks=[("text_clean", said, "")], stdout=said)
        said = s.path("text-diagnose-json-%s.stdout" % label)
        s.add("output text", "text-diagnose-json-run-" + label,
              ["diagnose", "--run", run, "--format", "json"], exit=0,
              checks=[("text_clean", said, "")], stdout=said)
        # The same strings in a scenario file a colleague sends.
        scenario = s.write("text-scenario-" + label + ".json",
                           json.dumps({**SCENARIO, "title": text, "name": text,
                                       "description": text}))
        said = s.path("text-simulate-" + label + ".stdout")
        s.add("output text", "text-simulate-scenario-" + label,
              ["simulate", "--preset", scenario], exit=0,
              checks=[("text_clean", said, "")], stdout=said)
        out = s.path("text-export-scenario-" + label)
        s.add("output text", "text-export-scenario-" + label,
              ["export", "--preset", scenario, "--out", out, "--formats", formats], exit=0,
              checks=checks_for(out), time_s=60 if label == "long" else TIME_S)
    # Invalid UTF-8 in a JSON file is refused, naming the file (JSON is UTF-8 by definition).
    raw = json.dumps({**SCENARIO, "title": "TITLE"}).encode().replace(b"TITLE", b"\xff\xfe\xc0")
    p = s.write("text-scenario-invalid-utf8.json", raw)
    s.add("output text", "text-scenario-invalid-utf8", ["simulate", "--preset", p], needles=[p])


def controls(s, good_run):
    """Good inputs still work (so each refusal above is about the hostile part)."""
    s.add("controls", "control-diagnose-good-run", ["diagnose", "--run", good_run], exit=0)
    s.add("controls", "control-import-good-npz",
          ["import", good_dump_npz(s), "--out", s.path("control.slrun"), "--classes", "3"],
          exit=0)
    s.add("controls", "control-simulate-padding", ["simulate", "--dataset",
                                                   "synthetic:classes=3,per-class=5",
                                                   "--world-size", "2", "--batch-size", "2"],
          exit=0)
    s.add("controls", "control-diagnose-padding-wrong",
          ["diagnose", "--dataset", "synthetic:classes=3,per-class=5", "--world-size", "2",
           "--batch-size", "2"], exit=1)
    p = s.write("control-scenario.json", json.dumps(SCENARIO))
    s.add("controls", "control-scenario-file", ["simulate", "--preset", p], exit=0)
    p = s.write("control-labels.npy", npy_of(np.array([0, 1, 2] * 4, dtype=np.int64)))
    s.add("controls", "control-npy-dataset", ["simulate", "--dataset", "npy:" + p], exit=0)


def make(cli, out, figures=True):
    s = Suite(cli, out)
    good_run, members, meta = make_good_run(s)
    controls(s, good_run)
    non_regular(s, good_run)
    npy_cases(s)
    npz_cases(s)
    sparse_cases(s)
    dense_cases(s)
    run_count_cases(s, members, meta)
    run_structure_cases(s, good_run, members, meta)
    meta_cases(s, members, meta)
    spec_cases(s)
    scenario_cases(s)
    pt_cases(s)
    output_cases(s, good_run)
    export_cases(s, members, meta, figures)
    hierarchy_cases(s, figures)
    output_text_cases(s, members, meta, figures)
    transaction_cases(s, good_run, figures)
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(s.cases, f, indent=1)
    return s.cases


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or sys.argv[3:] not in ([], ["--no-figures"]):
        raise SystemExit(__doc__)
    os.makedirs(sys.argv[2], exist_ok=True)
    cases = make(sys.argv[1], sys.argv[2], figures=sys.argv[3:] == [])
    print("%d cases in %s" % (len(cases), sys.argv[2]))
