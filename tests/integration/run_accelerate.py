"""Real rank processes with Accelerate's sampler (`shardlens-cli run --sampler accelerate`).

Usage: run_accelerate.py SHARDLENS_CLI. Exits 77 (ctest SKIP) when the CLI has no LibTorch.

The reference model on the first 101 Fashion-MNIST test images with 3 real Gloo ranks and
batches of 8 (101 is not a multiple of 24, so Accelerate cycles 19 samples):
- every rank's records are the batches Accelerate's BatchSamplerShard deals it (identity
  order: batch k of 8 consecutive stream positions goes to rank k % 3, positions past 101
  wrap round to the start and are flagged as padding), read from the run file with numpy;
- gather_for_metrics over the real collectives reports each sample once (diagnose exits 0);
- a plain gather reports 120 records (diagnose exits 1: plain-gather-padding);
- split batches (B = 6, slices of 2) are dealt as Accelerate splits them;
- even_batches=False with a per-step gather is refused (it would hang): uneven-steps.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

N, W, B = 101, 3, 8
DATASET = "fashion-mnist:test,first=%d" % N


def run(cli, out, *extra):
    return subprocess.run([cli, "run", "--dataset", DATASET, "--world-size", str(W),
                           "--sampler", "accelerate", "--out", out] + list(extra),
                          capture_output=True, text=True, timeout=300)


def expected_ranks(batch, split):
    """Accelerate's layout with the identity order (even_batches on)."""
    ranks = [[] for _ in range(W)]
    total = -(-N // (batch if split else batch * W)) * (batch if split else batch * W)
    if split:
        part = batch // W
        for start in range(0, total, batch):
            for r in range(W):
                ranks[r] += list(range(start + r * part, start + (r + 1) * part))
    else:
        for k in range(total // batch):
            ranks[k % W] += list(range(k * batch, (k + 1) * batch))
    return ranks


def main():
    cli = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as d:
        for name, extra, batch, split in [("gfm", ["--sync", "gather-for-metrics"], B, False),
                                          ("gather", ["--sync", "gather"], B, False),
                                          ("split", ["--sync", "gather-for-metrics",
                                                     "--split-batches"], 6, True)]:
            path = os.path.join(d, name + ".slrun")
            r = run(cli, path, "--batch-size", str(batch), *extra)
            if "no LibTorch" in r.stderr:
                print("SKIP: shardlens-cli was built without LibTorch")
                sys.exit(77)
            if r.returncode != 0:
                failures.append("%s: run exited %d: %s" % (name, r.returncode, r.stderr))
                continue
            z = np.load(path)
            for rank, positions in enumerate(expected_ranks(batch, split)):
                got = z["rank%d_index" % rank].tolist()
                flags = z["rank%d_flags" % rank].tolist()
                if got != [p % N for p in positions]:
                    failures.append("%s: rank %d evaluated %s" % (name, rank, got[:30]))
                if [f & 1 for f in flags] != [int(p >= N) for p in positions]:
                    failures.append("%s: rank %d padding flags %s" % (name, rank, flags))
            total = int(z["synced"].sum())
            want_total = N if name != "gather" else 120
            if total != want_total:
                failures.append("%s: synced total %d, want %d" % (name, total, want_total))
            diag = subprocess.run([cli, "diagnose", "--run", path, "--format", "json"],
                                  capture_output=True, text=True)
            want_code = 1 if name == "gather" else 0
            if diag.returncode != want_code:
                failures.append("%s: diagnose exited %d: %s" % (name, diag.returncode,
                                                               diag.stdout[-400:]))
            if name == "gather":
                pats = [f["pattern"] for f in json.loads(diag.stdout)["diagnosis"]]
                if "plain-gather-padding" not in pats:
                    failures.append("gather: diagnosed %s" % pats)
        r = run(cli, os.path.join(d, "uneven.slrun"), "--batch-size", str(B), "--sync",
                "gather-for-metrics", "--no-even-batches")
        if r.returncode == 0 or "uneven-steps" not in r.stderr:
            failures.append("uneven: run exited %d: %s" % (r.returncode, r.stderr[-400:]))
    for f in failures:
        print("FAIL:", f)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
