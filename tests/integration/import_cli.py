"""`shardlens-cli import` end to end, standard library only.

Usage: import_cli.py SHARDLENS_CLI. Good dumps import (exit 0) and `diagnose --run` flags
the padding duplicate (exit 1); each malformed dump exits 2 with a message naming it.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile


def npy(values, shape, descr="<i8"):
    """A little .npy writer so the test needs no numpy."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d," % s for s in shape))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    fmt = {"<i8": "q", "<f8": "d"}[descr]
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() +
            struct.pack("<%d%s" % (len(values), fmt), *values))


def run(*args):
    return subprocess.run([sys.argv[1]] + list(args), capture_output=True, text=True)


def write(path, data):
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
    return path


def main():
    failures = []
    with tempfile.TemporaryDirectory() as d:
        rows = [(0, 0, 0, 0), (0, 2, 1, 1), (0, 4, 2, 2), (1, 1, 0, 0), (1, 3, 1, 1), (1, 0, 0, 0)]
        r0 = write(os.path.join(d, "eval_rank0.csv"),
                   "index,target,prediction,rank\n" +
                   "".join("%d,%d,%d,%d\n" % (i, t, p, r) for r, i, t, p in rows if r == 0))
        r1 = write(os.path.join(d, "eval_rank1.npy"),
                   npy([v for row in rows if row[0] == 1 for v in row], (3, 4)))
        out = os.path.join(d, "run.slrun")
        r = run("import", r0, r1, "--out", out, "--format", "json")
        if r.returncode != 0:
            failures.append("good import failed: " + r.stderr)
        else:
            report = json.loads(r.stdout)
            if report["synced"] != [[3, 0, 0], [0, 2, 0], [0, 0, 1]]:
                failures.append("synced matrix wrong: %s" % report["synced"])
            if report["world_size"] != 2:
                failures.append("world size wrong: %s" % report["world_size"])
        r = run("diagnose", "--run", out)
        if r.returncode != 1 or "padding" not in r.stdout.lower():
            failures.append("diagnose --run: expected exit 1 naming padding, got %d\n%s%s"
                            % (r.returncode, r.stdout, r.stderr))

        bad = {
            "letters.csv": "rank,index,target,prediction\n0,1,x,0\n",
            "short.csv": "rank,index,target\n0,1,0\n",
            "wide.npy": npy([0] * 6, (2, 3)),
            "floats.npy": npy([0.5] * 8, (2, 4), "<f8"),
            "cut.npy": npy([0] * 8, (2, 4))[:-5],
            "junk.npz": b"PK\x03\x04 this is not really a zip",
            "empty.npz": b"",
            "dump.txt": "0,1,0,0\n",
        }
        for name, data in bad.items():
            path = write(os.path.join(d, name), data)
            r = run("import", path, "--out", os.path.join(d, "bad.slrun"))
            if r.returncode != 2 or name not in r.stderr:
                failures.append("%s: expected exit 2 naming the file, got %d: %s"
                                % (name, r.returncode, r.stderr.strip()))
            if os.path.exists(os.path.join(d, "bad.slrun")):
                failures.append("%s: a run file was written despite the error" % name)
        # A truncated run file is refused by diagnose with exit 2, naming it.
        with open(out, "rb") as f:
            data = f.read()
        cut = write(os.path.join(d, "cut.slrun"), data[: len(data) // 2])
        r = run("diagnose", "--run", cut)
        if r.returncode != 2 or "cut.slrun" not in r.stderr:
            failures.append("truncated run file: exit %d: %s" % (r.returncode, r.stderr.strip()))
    for f in failures:
        print("FAIL:", f)
    print("import_cli: %d failure(s)" % len(failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
