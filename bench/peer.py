#!/usr/bin/python3
"""PyTorch peers of bench/engine_bench.cpp (run with Debian's /usr/bin/python3).

(a) peer: what a user writes today to get per-rank and synced confusion matrices of a
    shuffled DistributedSampler evaluation from recorded predictions: one
    DistributedSampler per rank (set_epoch, iterate), index the recorded targets and
    predictions with it (no DataLoader: batching does not change int64 counts), one
    torch.bincount per rank, sum over ranks.
(b) floor: a single torch.randperm(n) plus a single torch.bincount over n keys, the least
    work any exact tool has to do.

The data come from the same integer hash as engine_bench, and the synced matrix's
checksum is printed so both sides can be seen to compute the same thing.
"""
import argparse
import sys
import time

try:
    import numpy as np
    import torch
    from torch.utils.data import DistributedSampler
except ImportError as error:
    print(f"peer.py: {sys.executable} cannot import torch/numpy ({error}); "
          "use Debian's /usr/bin/python3 with python3-torch", file=sys.stderr)
    sys.exit(77)


def make_data(n, c):
    """Same labels and predictions as engine_bench.cpp's make_data (uint64 wraps)."""
    i = np.arange(n, dtype=np.uint64)
    h = (i * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32)
    target = (h % np.uint64(c)).astype(np.int64)
    correct = ((h >> np.uint64(16)) & np.uint64(0xFF)) < np.uint64(230)
    pred = np.where(correct, target, (h >> np.uint64(8)) % np.uint64(c)).astype(np.int64)
    return torch.from_numpy(target), torch.from_numpy(pred)


def checksum(synced):
    return int((synced.to(torch.int64) * torch.arange(synced.numel())).sum())


def peer(target, pred, c, world, seed, epoch):
    dataset = range(len(target))  # the sampler only needs len()
    per_rank = []
    for r in range(world):
        sampler = DistributedSampler(dataset, num_replicas=world, rank=r, shuffle=True,
                                     seed=seed)
        sampler.set_epoch(epoch)
        idx = torch.tensor(list(iter(sampler)), dtype=torch.int64)
        per_rank.append(torch.bincount(target[idx] * c + pred[idx], minlength=c * c))
    return torch.stack(per_rank).sum(0)


def best_of(repeats, f):
    """Best wall time of `repeats` runs, and the CPU time of that run (on a shared box the
    two differ by however much of a core the process was given)."""
    best, best_cpu, result = float("inf"), float("inf"), None
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = f()
        wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        if wall < best:
            best, best_cpu = wall, cpu
    best_of.cpu = best_cpu
    return best, result


def main():
    parser = argparse.ArgumentParser(description="PyTorch peers of engine_bench")
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--classes", type=int, default=1000)
    parser.add_argument("--world-size", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3, help="for the floor (b)")
    parser.add_argument("--peer-repeats", type=int, default=1, help="for the peer (a): slow")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save-npy", metavar="DIR",
                        help="also write the labels and predictions as DIR/labels.npy and "
                        "DIR/preds.npy, for timing the CLI on the same data")
    args = parser.parse_args()
    n, c, w = args.n, args.classes, args.world_size

    target, pred = make_data(n, c)
    if args.save_npy:
        np.save(f"{args.save_npy}/labels.npy", target.numpy())
        np.save(f"{args.save_npy}/preds.npy", pred.numpy())
    keys = target * c + pred

    def floor():
        g = torch.Generator()
        g.manual_seed(args.seed)
        perm = torch.randperm(n, generator=g)
        return perm, torch.bincount(keys, minlength=c * c)

    t_randperm, _ = best_of(args.repeats, lambda: torch.randperm(
        n, generator=torch.Generator().manual_seed(args.seed)))
    t_bincount, _ = best_of(args.repeats, lambda: torch.bincount(keys, minlength=c * c))
    t_floor, _ = best_of(args.repeats, floor)
    cpu_floor = best_of.cpu
    t_peer, synced = best_of(args.peer_repeats, lambda: peer(target, pred, c, w, args.seed, 0))
    cpu_peer = best_of.cpu

    print(f"peer.py: n={n} C={c} W={w} shuffled, torch {torch.__version__}, "
          f"{torch.get_num_threads()} torch threads")
    print(f"  randperm(n)            {t_randperm:8.3f} s")
    print(f"  bincount(n)            {t_bincount:8.3f} s")
    print(f"  randperm + bincount    {t_floor:8.3f} s  (floor, best of {args.repeats}; "
          f"{cpu_floor:.3f} s CPU)")
    print(f"  peer (sampler/rank)    {t_peer:8.3f} s  (best of {args.peer_repeats}; "
          f"{cpu_peer:.3f} s CPU)")
    print(f"RESULT peer_s={t_peer:.6f} floor_s={t_floor:.6f} randperm_s={t_randperm:.6f} "
          f"bincount_s={t_bincount:.6f} peer_cpu_s={cpu_peer:.6f} floor_cpu_s={cpu_floor:.6f} "
          f"checksum={checksum(synced)}")


if __name__ == "__main__":
    main()
