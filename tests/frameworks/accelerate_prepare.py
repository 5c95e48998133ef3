"""Accelerate's prepare() and gathers in 4 real processes against `shardlens-cli`.

Usage: accelerate_prepare.py SHARDLENS_CLI. Runs in the framework venv (frameworks.py).

Four processes (RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT/LOCAL_RANK, gloo) each build
`Accelerator(cpu=True, dataloader_config=DataLoaderConfiguration(...))` per case, prepare a
DataLoader over a dataset that yields its index, and iterate it, calling
`gather_for_metrics` and plain `gather` on the batch of indices at every step. For every case
and epoch: each rank's evaluated indices equal `shardlens-cli shards` for that rank, and the
matrices built from the gathered indices (labels and predictions are fixed tables, given to
ShardLens as npy:) equal `shardlens-cli simulate --sync gather-for-metrics` and `--sync
gather`. Cases whose ranks would run different steps or last batches (even_batches=False)
are not run with a per-step gather (it hangs, or fails on unequal sizes): ShardLens must
diagnose them `uneven-steps` (different step counts) or `unequal-last-batches` instead
(accelerate_uneven.py runs those gathers).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import frameworks  # noqa: E402

frameworks.require_venv()

import numpy as np  # noqa: E402

W = 4
CLASSES = 5
GLOBAL_SEED = 1234


def label_of(i):
    return (i * 7 + i // 11) % CLASSES


def prediction_of(i):
    return label_of(i) if i % 3 else (label_of(i) + 1) % CLASSES


def case(n, b, split=False, even=True, drop=False, shuffle=False, seedable=False, double=False,
         epochs=1):
    return dict(n=n, b=b, split=split, even=even, drop=drop, shuffle=shuffle,
                seedable=seedable, double=double, epochs=epochs)


CASES = [
    case(510, 16),                              # 510 = 7 x 64 + 62: cycled padding
    case(510, 16, drop=True),
    case(512, 16),                              # a multiple of B x W: nothing cycled
    case(510, 16, split=True),
    case(510, 16, split=True, drop=True),
    case(61, 4, even=False),                    # uneven: refused, not run with gathers
    case(64, 4, even=False),                    # even_batches off but every rank even
    case(76, 4, even=False, drop=True),         # defect 10: (n / B) % W == 0, n % B > 0
    case(510, 16, split=True, even=False),      # uneven last slice: refused
    case(510, 16, shuffle=True, seedable=False, epochs=2),   # Accelerate's default shuffle
    case(101, 8, shuffle=True, seedable=True, epochs=2),     # use_seedable_sampler=True
    case(510, 16, double=True),                 # prepare() of a DistributedSampler loader
    case(510, 16, double=True, shuffle=True, epochs=2),
    case(37, 4, double=True, drop=True),        # each shard of 10 has 2 batches: none dealt
    case(37, 2, double=True, drop=True),
    case(10, 8),                                # fewer samples than one round
]

# One process: prepare() leaves the loader's batch sampler alone (no cycling), and the
# default shuffle then seeds every iteration from the global RNG.
CASES_ONE = [
    case(11, 3),
    case(11, 3, split=True),
    case(10, 4, shuffle=True, epochs=3),
    case(10, 4, shuffle=True, seedable=True, epochs=2),
]


def world_cases(w):
    return CASES if w == W else CASES_ONE


def uneven(c, w):
    """Whether the ranks' step counts or batch sizes differ (from Accelerate's own class)."""
    return len(layouts(c, w)) > 1


def different_steps(c, w):
    """Whether the ranks' step counts differ (else only their last batches do)."""
    return len({len(layout) for layout in layouts(c, w)}) > 1


def layouts(c, w):
    """Each rank's batch lengths under Accelerate's own BatchSamplerShard, as a set."""
    from accelerate.data_loader import BatchSamplerShard
    from torch.utils.data import BatchSampler, DistributedSampler, SequentialSampler
    if w == 1:
        return set()
    layouts = set()
    for r in range(w):
        inner = (DistributedSampler(range(c["n"]), num_replicas=w, rank=r, shuffle=False)
                 if c["double"] else SequentialSampler(range(c["n"])))
        shard = BatchSamplerShard(BatchSampler(inner, c["b"], c["drop"]), num_processes=w,
                                  process_index=r, split_batches=c["split"],
                                  even_batches=c["even"])
        layouts.add(tuple(len(batch) for batch in shard))
    return layouts


def worker(out_dir):
    import torch
    from accelerate import Accelerator
    from accelerate.utils import DataLoaderConfiguration
    from torch.utils.data import DataLoader, Dataset, DistributedSampler

    class Indices(Dataset):
        def __init__(self, n):
            self.n = n

        def __len__(self):
            return self.n

        def __getitem__(self, i):
            return i

    rank = int(os.environ["RANK"])
    w = int(os.environ["WORLD_SIZE"])
    results = []
    for c in world_cases(w):
        acc = Accelerator(cpu=True, dataloader_config=DataLoaderConfiguration(
            split_batches=c["split"], even_batches=c["even"],
            use_seedable_sampler=c["seedable"]))
        assert acc.num_processes == w, acc.num_processes
        # The user's global seed, set right before the loader is made and prepared: the order
        # Accelerate's default shuffle draws then follows from it alone.
        torch.manual_seed(GLOBAL_SEED)
        dataset = Indices(c["n"])
        if c["double"]:
            sampler = DistributedSampler(dataset, num_replicas=w, rank=rank, shuffle=c["shuffle"],
                                         seed=GLOBAL_SEED)
            loader = DataLoader(dataset, batch_size=c["b"], sampler=sampler, drop_last=c["drop"])
        else:
            loader = DataLoader(dataset, batch_size=c["b"], shuffle=c["shuffle"],
                                drop_last=c["drop"])
        prepared = acc.prepare(loader)
        run_gathers = not uneven(c, w)
        epochs = []
        for _ in range(c["epochs"]):
            local, gfm, gathered = [], [], []
            for batch in prepared:
                local += batch.tolist()
                if run_gathers:
                    gfm += acc.gather_for_metrics(batch).tolist()
                    gathered += acc.gather(batch).tolist()
            epochs.append(dict(local=local, gfm=gfm if run_gathers else None,
                               gather=gathered if run_gathers else None))
        results.append(epochs)
        acc.wait_for_everyone()
    with open(os.path.join(out_dir, "rank%d.json" % rank), "w") as f:
        json.dump(results, f)
    # Gloo's threads stopped before exit: left running they ended a process with "terminate
    # called without an active exception" (exit 134) on a loaded machine.
    acc.wait_for_everyone()
    torch.distributed.destroy_process_group()


def launch(out_dir, w):
    port = str(frameworks.free_port())
    procs = []
    for r in range(w):
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=port, RANK=str(r),
                   WORLD_SIZE=str(w), LOCAL_RANK=str(r), LOCAL_WORLD_SIZE=str(w),
                   OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker",
                                       out_dir], env=env))
    deadline = time.time() + 240
    for p in procs:
        try:
            p.wait(timeout=max(1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise AssertionError("the Accelerate processes did not finish in 240 s")
    codes = [p.returncode for p in procs]
    if any(codes):
        raise AssertionError("Accelerate processes exited %s" % codes)
    return [json.load(open(os.path.join(out_dir, "rank%d.json" % r))) for r in range(w)]


def flags(c, epoch, w):
    args = ["--sampler", "accelerate", "--world-size", str(w), "--batch-size", str(c["b"]),
            "--epoch", str(epoch)]
    if c["split"]:
        args.append("--split-batches")
    if not c["even"]:
        args.append("--no-even-batches")
    if c["drop"]:
        args.append("--loader-drop-last")
    if c["shuffle"]:
        args += ["--shuffle", "--seed", str(GLOBAL_SEED), "--accelerate-shuffle",
                 "seedable" if c["seedable"] else "global-rng"]
    if c["double"]:
        args += ["--accelerate-input", "distributed-sampler"]
    return args


def matrix(indices):
    m = np.zeros((CLASSES, CLASSES), dtype=np.int64)
    for i in indices:
        m[label_of(i), prediction_of(i)] += 1
    return m.tolist()


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        worker(sys.argv[2])
        return
    cli = sys.argv[1]
    start = time.time()
    failures = []
    checks = 0
    cases = 0
    for w in (W, 1):
        with tempfile.TemporaryDirectory() as d:
          ranks = launch(d, w)
          for k, c in enumerate(world_cases(w)):
              cases += 1
              n = c["n"]
              np.save(os.path.join(d, "labels%d.npy" % n),
                      np.array([label_of(i) for i in range(n)], dtype=np.int64))
              np.save(os.path.join(d, "preds%d.npy" % n),
                      np.array([prediction_of(i) for i in range(n)], dtype=np.int64))
              data = ["--dataset", "npy:%s/labels%d.npy" % (d, n),
                      "--predictor", "npy:%s/preds%d.npy" % (d, n)]
              for e in range(c["epochs"]):
                  where = "case %s epoch %d" % (c, e)
                  shards = frameworks.cli_json(cli, "shards", *data, *flags(c, e, w))
                  for r in range(w):
                      checks += 1
                      if shards["ranks"][r]["evaluated"] != ranks[r][k][e]["local"]:
                          failures.append("%s rank %d: Accelerate %s..., ShardLens %s..." % (
                              where, r, ranks[r][k][e]["local"][:12],
                              shards["ranks"][r]["evaluated"][:12]))
                  real = ranks[0][k][e]
                  if e == 0:  # what Accelerate did, for the log
                      print("W=%d n=%d B=%d split=%d even=%d drop=%d shuffle=%d seedable=%d "
                            "double=%d: "
                            "evaluated %d, gather_for_metrics %s, gather %s" % (
                                w, n, c["b"], c["split"], c["even"], c["drop"], c["shuffle"],
                                c["seedable"], c["double"],
                                sum(len(ranks[r][k][0]["local"]) for r in range(w)),
                                None if real["gfm"] is None else len(real["gfm"]),
                                None if real["gather"] is None else len(real["gather"])))
                  for sync, key in (("gather-for-metrics", "gfm"), ("gather", "gather")):
                      sim = frameworks.cli_json(cli, "simulate", *data, *flags(c, e, w),
                                                "--sync", sync)
                      checks += 1
                      if real[key] is None:
                          pats = [f.get("pattern") for f in sim["diagnosis"]]
                          want = ("uneven-steps" if different_steps(c, w)
                                  else "unequal-last-batches")
                          if want not in pats or sim.get("synced") is not None:
                              failures.append("%s %s: %s not diagnosed (%s)" % (
                                  where, sync, want, pats))
                          continue
                      if any(ranks[r][k][e][key] != real[key] for r in range(w)):
                          failures.append("%s %s: ranks gathered differently" % (where, sync))
                      if sim.get("synced") != matrix(real[key]):
                          failures.append("%s %s: Accelerate total %d, ShardLens %s" % (
                              where, sync, len(real[key]),
                              None if sim.get("synced") is None else
                              int(np.array(sim["synced"]).sum())))
    print("%d cases, %d checks (each rank's indices, gather_for_metrics and gather matrices "
          "per epoch), %d mismatches, %.1f s" % (cases, checks, len(failures),
                                                time.time() - start))
    for f in failures[:20]:
        print("MISMATCH", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
