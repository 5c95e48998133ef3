#!/usr/bin/python3
"""Metric and sampler-wrapper oracle tests against numpy and real torch (Debian's python3-torch).

metrics: for random simulations, `shardlens-cli simulate --format json` must report, for the
  reported and the expected matrix, the metrics numpy computes from those matrices with
  torchmetrics' conventions (accuracy = trace / total; per-class precision, recall and F1
  with zero division as 0; macro F1 over classes with tp + fp + fn > 0; weighted F1 by
  support), and their difference.
wrapper: `shardlens-cli shards --sampler lightning-wrapper` must give each rank what real
  torch gives: a WeightedRandomSampler(replacement=True) with a generator seeded with the
  rank's seed, materialised with list(), sharded by a real DistributedSampler over the
  list's positions (Lightning's DistributedSamplerWrapper).

Usage: framework_oracle.py CLI [--only metrics|wrapper] [--cases N]
Exit: 0 all agree, 1 a mismatch (printed with the command), 77 without numpy/torch.
"""
import argparse
import json
import os
import random
import shlex
import subprocess
import sys

try:
    import numpy as np
    import torch
    from torch.utils.data import DistributedSampler, WeightedRandomSampler
except ImportError as e:
    print("SKIP: numpy/torch not available for %s (%s)" % (sys.executable, e))
    sys.exit(77)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                                "oracles"))
from torch_draws import list_dataset  # noqa: E402


def cli(exe, args):
    r = subprocess.run([exe] + args, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise RuntimeError("%s %s: exit %d\n%s" % (exe, " ".join(map(shlex.quote, args)),
                                                 r.returncode, r.stderr))
    return json.loads(r.stdout)


def numpy_metrics(m):
    m = np.asarray(m, dtype=np.float64)
    tp = np.diag(m)
    fp = m.sum(axis=0) - tp
    fn = m.sum(axis=1) - tp

    def div(a, b):
        return np.where(b == 0, 0.0, a / np.where(b == 0, 1.0, b))

    f1 = div(2 * tp, 2 * tp + fp + fn)
    present = (tp + fp + fn) > 0
    support = tp + fn
    return {
        "accuracy": float(div(np.array(tp.sum()), np.array(m.sum()))),
        "precision": div(tp, tp + fp).tolist(),
        "recall": div(tp, tp + fn).tolist(),
        "f1": f1.tolist(),
        "macro_f1": float(f1[present].mean()) if present.any() else 0.0,
        "weighted_f1": float((f1 * support).sum() / support.sum()) if support.sum() else 0.0,
    }


def close(a, b):
    if isinstance(a, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    return abs(a - b) <= 1e-12 * max(1.0, abs(b))


def check_metrics(exe, rng, cases):
    bad = 0
    for _ in range(cases):
        classes = rng.randint(2, 6)
        counts = ",".join(str(rng.randint(0, 30)) for _ in range(classes))
        if all(c == "0" for c in counts.split(",")):
            counts = "3," + counts[2:]
        sampler = rng.choice(["distributed", "accelerate", "sequential", "none"])
        sync = rng.choice(["all-reduce", "local", "double", "gather", "gather-for-metrics",
                           "normalize-then-sum", "gather-zero-pad"])
        args = ["simulate", "--format", "json", "--dataset", "synthetic:counts=" + counts,
                "--predictor", "noisy:accuracy=%.2f,seed=%d" % (rng.uniform(0.2, 1.0),
                                                                 rng.randint(0, 99)),
                "--world-size", str(rng.randint(1, 5)), "--batch-size", str(rng.randint(1, 6)),
                "--sampler", sampler, "--sync", sync]
        if rng.random() < 0.4:
            args.append("--shuffle")
        j = cli(exe, args)
        got = j["metrics"]
        for side, key in (("reported", "synced"), ("expected", "expected")):
            if j[key] is None:
                if got[side] is not None:
                    print("FAIL %s: %s metrics without a matrix" % (" ".join(args), side))
                    bad += 1
                continue
            want = numpy_metrics(j[key])
            for k, v in want.items():
                if not close(got[side][k], v):
                    print("FAIL shardlens-cli %s: %s %s = %r, numpy %r" %
                          (" ".join(map(shlex.quote, args)), side, k, got[side][k], v))
                    bad += 1
        if j["synced"] is not None and j["expected"] is not None:
            r, e = numpy_metrics(j["synced"]), numpy_metrics(j["expected"])
            for k in r:
                d = ([x - y for x, y in zip(r[k], e[k])] if isinstance(r[k], list)
                     else r[k] - e[k])
                if not close(got["difference"][k], d):
                    print("FAIL %s: difference %s" % (" ".join(args), k))
                    bad += 1
    return bad


def check_wrapper(exe, rng, cases):
    bad = 0
    for _ in range(cases):
        n = rng.randint(2, 80)
        world = rng.randint(1, 6)
        num = rng.choice([0, rng.randint(2, 3 * n)])
        seeds = [rng.randint(0, 2 ** 40) for _ in range(world)]
        epoch = rng.randint(0, 3)
        shuffle = rng.random() < 0.3
        args = ["shards", "--format", "json", "--dataset", "synthetic:counts=%d" % n,
                "--world-size", str(world), "--sampler", "lightning-wrapper",
                "--inner-sampler", "weighted-random", "--epoch", str(epoch),
                "--rank-seeds", ",".join(map(str, seeds))]
        weights = None
        if rng.random() < 0.5:
            weights = [round(rng.uniform(0.0, 2.0), 4) for _ in range(rng.randint(2, n))]
            weights[0] += 0.5
            args += ["--inner-weights", ",".join(map(str, weights))]
        if num:
            args += ["--inner-num-samples", str(num)]
        if shuffle:
            args.append("--shuffle")
        j = cli(exe, args)
        w = weights or [1.0] * n
        for r in range(world):
            g = torch.Generator()
            g.manual_seed(seeds[r])
            s = WeightedRandomSampler(w, num or len(w), replacement=True, generator=g)
            for _ in range(epoch):  # earlier passes of the same sampler (one per epoch)
                list(s)
            ds = list_dataset(list(s))
            d = DistributedSampler(ds, num_replicas=world, rank=r, shuffle=shuffle,
                                   seed=seeds[r])
            d.set_epoch(epoch)
            want = [ds[i] for i in d]
            if j["ranks"][r]["indices"] != want:
                print("FAIL shardlens-cli %s: rank %d\n  got  %s\n  want %s" %
                      (" ".join(map(shlex.quote, args)), r, j["ranks"][r]["indices"], want))
                bad += 1
    return bad


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cli")
    p.add_argument("--only", choices=["metrics", "wrapper"])
    p.add_argument("--cases", type=int, default=150)
    p.add_argument("--seed", type=int, default=13)
    a = p.parse_args()
    rng = random.Random(a.seed)
    bad = 0
    if a.only in (None, "metrics"):
        bad += check_metrics(a.cli, rng, a.cases)
    if a.only in (None, "wrapper"):
        bad += check_wrapper(a.cli, rng, a.cases)
    print("%d mismatches" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
