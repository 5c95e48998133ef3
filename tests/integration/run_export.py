"""A real 4-rank Gloo run is the same thing as a simulation to `diagnose` and `export`.

Usage: run_export.py SHARDLENS_CLI. Exits 77 (ctest SKIP) when the CLI has no LibTorch.

Runs the reference model on Fashion-MNIST's test set with 4 real rank processes and a batch
limit, then checks that `export --run` writes the data and the figures (PNG, SVG, PDF) of
the run, that `report.json` agrees with the run file's own arrays (read with numpy, an
independent reader), that the synced matrix is the sum of the per-rank ones (all-reduce),
and that `diagnose --run` and `simulate --run` print the same report.
"""
import json
import os
import subprocess
import sys
import tempfile
import zipfile

import numpy as np


def main():
    cli = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as d:
        run = os.path.join(d, "real.slrun")
        r = subprocess.run([cli, "run", "--dataset", "fashion-mnist:test", "--world-size", "4",
                            "--batch-size", "64", "--limit-batches", "3", "--out", run],
                           capture_output=True, text=True, timeout=300)
        if "no LibTorch" in r.stderr:
            print("SKIP: shardlens-cli was built without LibTorch")
            sys.exit(77)
        if r.returncode != 0:
            print("FAIL: run exited %d: %s" % (r.returncode, r.stderr))
            sys.exit(1)
        out = os.path.join(d, "figs")
        e = subprocess.run([cli, "export", "--run", run, "--out", out, "--formats",
                            "csv,json,latex,npy,png,svg,pdf"], capture_output=True, text=True)
        if e.returncode != 0:
            print("FAIL: export --run exited %d: %s" % (e.returncode, e.stderr))
            sys.exit(1)
        written = set(os.listdir(out))
        for name in ["per-rank.png", "per-rank.svg", "per-rank.pdf", "synced.png", "synced.svg",
                     "synced.pdf", "report.json", "synced.csv", "synced.tex", "synced.npy"] + \
                    ["per_rank_%d.npy" % k for k in range(4)]:
            if name not in written:
                failures.append("export --run did not write " + name)
        magic = {".png": b"\x89PNG", ".pdf": b"%PDF", ".svg": b"<?xml"}
        for name in written:
            ext = os.path.splitext(name)[1]
            if ext in magic:
                with open(os.path.join(out, name), "rb") as f:
                    if not f.read(8).startswith(magic[ext]):
                        failures.append(name + " is not a " + ext)
        z = np.load(run)
        per_rank = [z["rank%d_matrix" % k] for k in range(4)]
        synced = z["synced"]
        if not np.array_equal(synced, sum(per_rank)):
            failures.append("synced != sum of per-rank matrices in the run file")
        report = json.load(open(os.path.join(out, "report.json")))
        if report["source"] != "real" or report["world_size"] != 4:
            failures.append("report.json source/world_size: %s %s"
                            % (report["source"], report["world_size"]))
        if not np.array_equal(np.array(report["synced"]), synced):
            failures.append("report.json synced differs from the run file's")
        if not np.array_equal(np.load(os.path.join(out, "synced.npy")), synced):
            failures.append("synced.npy differs from the run file's")
        # 3 batches of 64 on each of 4 ranks were evaluated.
        if int(synced.sum()) != 4 * 3 * 64:
            failures.append("synced total %d, want %d" % (synced.sum(), 4 * 3 * 64))
        meta = json.loads(zipfile.ZipFile(run).read("meta.json"))
        if report["class_names"] != meta["class_names"]:
            failures.append("class names differ between report and run file")
        diag = subprocess.run([cli, "diagnose", "--run", run], capture_output=True, text=True)
        sim = subprocess.run([cli, "simulate", "--run", run], capture_output=True, text=True)
        if diag.returncode != 1 or "[batch-limit-subset]" not in diag.stdout:
            failures.append("diagnose --run: exit %d\n%s" % (diag.returncode, diag.stdout))
        if sim.stdout != diag.stdout:
            failures.append("simulate --run and diagnose --run print different reports")
        print("real 4-rank run: %d files exported, synced total %d" % (len(written), synced.sum()))
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
