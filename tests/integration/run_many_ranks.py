"""A real run of 64 rank processes on a small machine completes (`slow` label).

Usage: run_many_ranks.py SHARDLENS_CLI. 64 Gloo ranks evaluate the reference model on
Fashion-MNIST's test set (two batches each); the run file must hold 64 ranks whose records
cover what the sampler gave each, and `diagnose --run` must read it. Exits 77 without
LibTorch.
"""
import json
import os
import subprocess
import sys
import tempfile
import time


def find(node, key):
    """The first value of `key` anywhere in the JSON report."""
    if isinstance(node, dict):
        if key in node:
            return node[key]
        node = list(node.values())
    if isinstance(node, list):
        for child in node:
            found = find(child, key)
            if found is not None:
                return found
    return None


def main():
    cli = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        run = os.path.join(d, "many.slrun")
        start = time.time()
        r = subprocess.run([cli, "run", "--dataset", "fashion-mnist:test", "--world-size", "64",
                            "--batch-size", "16", "--limit-batches", "2", "--out", run],
                           capture_output=True, text=True, timeout=900)
        took = time.time() - start
        if "no LibTorch" in r.stderr:
            print("SKIP: shardlens-cli was built without LibTorch")
            return 77
        if r.returncode != 0:
            print("FAIL: run --world-size 64 exited %d after %.1f s:\n%s%s" %
                  (r.returncode, took, r.stdout, r.stderr))
            return 1
        diag = subprocess.run([cli, "diagnose", "--run", run, "--format", "json"],
                              capture_output=True, text=True, timeout=300)
        if diag.returncode not in (0, 1):
            print("FAIL: diagnose --run exited %d: %s" % (diag.returncode, diag.stderr))
            return 1
        report = json.loads(diag.stdout)
        world = find(report, "world_size")
        records = find(report, "evaluated_records")
        per_rank = find(report, "per_rank")
        print("64-rank run: %.1f s, world size %s, %s records" % (took, world, records))
        failures = []
        if world != 64:
            failures.append("the run file's world size is %r, expected 64" % world)
        if not isinstance(per_rank, list) or len(per_rank) != 64:
            failures.append("the report does not have 64 per-rank entries")
        # 10,000 samples over 64 ranks is 157 each; two batches of 16 evaluate 32 on every
        # rank.
        if records != 64 * 32:
            failures.append("%r records evaluated, expected %d" % (records, 64 * 32))
        for f in failures:
            print("FAIL:", f)
        if failures:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
