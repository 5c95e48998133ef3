"""Accelerate's own BatchSamplerShard against `shardlens-cli shards --sampler accelerate`.

Usage: accelerate_sampler_grid.py SHARDLENS_CLI. Runs in the framework venv (frameworks.py).

No processes are needed: BatchSamplerShard(batch_sampler, num_processes=W, process_index=r)
is instantiated for every rank, as accelerator.prepare() does (with one process it leaves the
loader's BatchSampler alone, and so does the grid), over the identity order, for
an exhaustive small grid of (n, batch size, W, split_batches, even_batches, the loader's
drop_last), and for the double-sharding mistake (the loader's sampler already a
DistributedSampler, so BatchSamplerShard wraps each rank's DistributedSampler shard). Each
rank's yielded indices must equal ShardLens's evaluated indices, and ShardLens's padding
flags must mark exactly the positions past the wrapped list's end (the cycled copies).
"""
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import frameworks  # noqa: E402

frameworks.require_venv()

from accelerate.data_loader import BatchSamplerShard  # noqa: E402
from torch.utils.data import BatchSampler, DistributedSampler, SequentialSampler  # noqa: E402

NS = range(1, 21)
BATCHES = (1, 2, 3, 4)
WORLDS = (1, 2, 3, 4)


def accelerate_ranks(n, b, w, split, even, drop, double):
    """Each rank's (indices, padding) as the real classes yield them."""
    out = []
    for r in range(w):
        if double:
            inner = DistributedSampler(range(n), num_replicas=w, rank=r, shuffle=False)
            listed = list(inner)
        else:
            inner = SequentialSampler(range(n))
            listed = list(range(n))
        shard = BatchSampler(inner, b, drop)
        if w > 1:  # prepare() wraps the batch sampler only with several processes
            shard = BatchSamplerShard(shard, num_processes=w, process_index=r,
                                      split_batches=split, even_batches=even)
        indices, padding = [], []
        for j, batch in enumerate(shard):
            for i, value in enumerate(batch):
                # Where this item sits in the wrapped list: batch j of rank r is the loader's
                # batch j * W + r (whole batches), or slice r of batch j (split_batches).
                pos = (j * b + r * (b // w) + i) if split else ((j * w + r) * b + i)
                if value != listed[pos % len(listed)]:
                    raise AssertionError("unexpected layout at n=%d b=%d w=%d" % (n, b, w))
                indices.append(value)
                # Padding: BatchSamplerShard's cycled copies, and (double sharding) the
                # DistributedSampler's own, the positions past n of its padded order.
                cycled = pos >= len(listed)
                own = double and r + (pos % len(listed)) * w >= n
                padding.append(int(cycled or own))
        out.append((indices, padding))
    return out


def shardlens_ranks(cli, n, b, w, split, even, drop, double):
    args = [cli, "shards", "--dataset", "synthetic:counts=%d" % n, "--sampler",
            "accelerate", "--world-size", str(w), "--batch-size", str(b), "--format", "json"]
    if split:
        args.append("--split-batches")
    if not even:
        args.append("--no-even-batches")
    if drop:
        args.append("--loader-drop-last")
    if double:
        args += ["--accelerate-input", "distributed-sampler"]
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        return "exit %d: %s" % (proc.returncode, proc.stderr.strip()[-300:])
    plan = json.loads(proc.stdout)
    out = []
    for rank in plan["ranks"]:
        indices = rank["evaluated"]
        flags = rank["padding"][:len(indices)] if rank["indices"] == indices else None
        out.append((indices, [f & 1 for f in flags] if flags is not None else None))
    return out


def main():
    cli = sys.argv[1]
    start = time.time()
    cases = []
    for n in NS:
        for b in BATCHES:
            for w in WORLDS:
                for split in (False, True):
                    if split and b % w != 0:
                        continue  # Accelerate raises (ShardLens refuses too: checked below)
                    for even in (True, False):
                        for drop in (False, True):
                            for double in (False, True):
                                cases.append((n, b, w, split, even, drop, double))

    def check(case):
        want = accelerate_ranks(*case)
        got = shardlens_ranks(cli, *case)
        if isinstance(got, str):
            return "%s: %s" % (case, got)
        for r, ((wi, wp), (gi, gp)) in enumerate(zip(want, got)):
            if wi != gi:
                return "%s rank %d: Accelerate %s, ShardLens %s" % (case, r, wi, gi)
            if gp is not None and wp != gp:
                return "%s rank %d padding: Accelerate %s, ShardLens %s" % (case, r, wp, gp)
        return None

    with ThreadPoolExecutor(max_workers=2) as pool:
        failures = [f for f in pool.map(check, cases) if f]
    # What Accelerate refuses, ShardLens refuses.
    refused = subprocess.run([cli, "shards", "--dataset", "synthetic:counts=10", "--sampler",
                              "accelerate", "--world-size", "4", "--batch-size", "6",
                              "--split-batches"], capture_output=True, text=True)
    if refused.returncode == 0:
        failures.append("split_batches with B=6, W=4 was not refused")
    print("%d cases (n 1..%d, batch sizes %s, W %s, split/even/drop_last/double-sharding), "
          "%d mismatches, %.1f s" % (len(cases), NS[-1], BATCHES, WORLDS, len(failures),
                                    time.time() - start))
    for f in failures[:20]:
        print("MISMATCH", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
