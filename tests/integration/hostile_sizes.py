"""Sizes that files and flags declare are checked against the load budget,
standard library only.

Usage: hostile_sizes.py SHARDLENS_CLI. Each input below is small (a few KB, or a flag) but
declares an evaluation of gigabytes: a run file's dataset_size, a label file's largest
class, a dump's largest index, a synthetic dataset's size from a flag or a scenario file,
a wrapped sampler's num_samples, a meta.json nested five million levels deep. With a small
--max-memory, `shardlens-cli` must refuse each with exit 2 and a one-line message naming
the file or flag, what it needs and the budget, and its peak resident size (ru_maxrss of
the child, from wait4) must stay under hostile_loads.RSS_LIMIT_MB. A legitimate evaluation of the same
shape but small sizes still runs.
"""
import json
import os
import struct
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostile_loads import expect_refused, run_measured  # noqa: E402


def npy(values, descr="<i8"):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, len(values))
    d += " " * ((64 - (10 + len(d) + 1) % 64) % 64) + "\n"
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode() +
            struct.pack("<%dq" % len(values), *values))


def rewrite_meta(src, dst, change):
    """A copy of run file `src` whose meta.json text is change(text) (meta.json is not
    checksummed; every other member is copied as it is)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == "meta.json":
                data = change(data.decode()).encode()
            zout.writestr(info.filename, data)
    return dst


def main():
    cli = sys.argv[1]
    failures = []

    def expect(label, args, origin, *needles):
        expect_refused(failures, cli, label, args, origin, needles)

    def expect_ok(label, args):
        code, err, rss = run_measured([cli] + args)
        print("%s: exit %d, peak RSS %.0f MB" % (label, code, rss))
        if code not in (0, 1):
            failures.append("%s: exit %d: %s" % (label, code, err))

    with tempfile.TemporaryDirectory() as d:
        small = os.path.join(d, "small.slrun")
        expect_ok("small run", ["simulate", "--dataset", "synthetic:classes=10,per-class=5",
                                "--world-size", "2", "--save-run", small])

        # 1. A run file of 50 samples whose meta.json declares 2^32 - 1 (class counts
        # estimated, so nothing else contradicts it): per-index arrays of 12 GB.
        def huge_dataset(text):
            meta = json.loads(text)
            meta["dataset_size"] = 4294967295
            meta["class_counts_source"] = "distinct-records"
            return json.dumps(meta)
        run = rewrite_meta(small, os.path.join(d, "huge_dataset.slrun"), huge_dataset)
        print("run file: %d bytes" % os.path.getsize(run))
        expect("run file dataset_size", ["diagnose", "--run", run, "--max-memory", "512M"], run,
               "4294967295 samples", "GiB of memory", "512 MiB memory budget")
        expect("export dataset_size", ["export", "--run", run, "--out", os.path.join(d, "x"),
                                       "--max-memory", "512M"], run, "4294967295 samples")

        # 2. A 60-line label CSV whose largest label is 32767: 32768 classes, 8 GiB a matrix.
        labels = os.path.join(d, "labels.csv")
        with open(labels, "w") as f:
            f.write("label\n" + "".join("%d\n" % (i % 7) for i in range(59)) + "32767\n")
        expect("label csv", ["simulate", "--dataset", "csv:" + labels, "--max-memory", "512M"],
               labels, "32768 classes", "512 MiB memory budget")

        # 3. A 15-record .npz dump whose largest index is near 2^32: a dataset of that size.
        dump = os.path.join(d, "far_rank0.npz")
        with zipfile.ZipFile(dump, "w") as z:
            z.writestr("index.npy", npy([4294967000 - i for i in range(15)]))
            z.writestr("target.npy", npy([i % 3 for i in range(15)]))
            z.writestr("prediction.npy", npy([i % 3 for i in range(15)]))
        expect("dump index", ["import", dump, "--out", os.path.join(d, "far.slrun"),
                              "--max-memory", "512M"], dump, "4294967001 samples",
               "512 MiB memory budget")

        # 4. 10^9 samples from a flag, 2^32 - 1 from a scenario file.
        expect("synthetic flag", ["simulate", "--dataset",
                                  "synthetic:classes=10,n=1000000000,zipf=0",
                                  "--max-memory", "512M"], "--dataset", "1000000000 samples")
        scenario = os.path.join(d, "huge.json")
        with open(scenario, "w") as f:
            json.dump({"dataset": "synthetic:classes=1,per-class=4294967295"}, f)
        expect("scenario file", ["simulate", "--preset", scenario, "--max-memory", "512M"],
               scenario, "4294967295 samples")

        # 5. Lightning's wrapper around a WeightedRandomSampler of 4 * 10^9 draws.
        expect("wrapped sampler", ["simulate", "--sampler", "lightning-wrapper",
                                   "--inner-sampler", "weighted-random",
                                   "--inner-num-samples", "4000000000", "--max-memory", "512M"],
               "--inner-num-samples", "4000000500 samples")

        # 6. Five million nested lists under an unknown key of meta.json (10 MB of text).
        deep = rewrite_meta(small, os.path.join(d, "deep.slrun"),
                            lambda text: text.rstrip()[:-1] + ', "junk": ' +
                            "[" * 5000000 + "]" * 5000000 + "}")
        expect("deep meta.json", ["diagnose", "--run", deep, "--max-memory", "100M"],
               deep + ": meta.json", "deeper than 256 levels")

        # The same shapes at honest sizes still load under a small budget.
        expect_ok("honest run", ["diagnose", "--run", small, "--max-memory", "512M"])
        expect_ok("honest csv", ["simulate", "--dataset", "synthetic:classes=1000,per-class=10",
                                 "--world-size", "8", "--max-memory", "512M"])

    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
