#!/usr/bin/python3
"""Reference vectors for Lightning's DistributedSamplerWrapper, made with real torch objects.

Each rank builds its own torch.utils.data.WeightedRandomSampler (replacement=True) with a
torch.Generator seeded with that rank's seed, iterates it `iteration` times before (earlier
validations), materialises list(sampler) as Lightning's _DatasetSamplerWrapper does, and
shards the list with a real torch DistributedSampler over its positions (what
DistributedSamplerWrapper inherits), after set_epoch(epoch). Sequential and recorded inner
samplers use torch's SequentialSampler and a plain list.

Usage: make_lightning_wrapper_vectors.py OUT.json   (Debian's python3-torch)
"""
import json
import random
import sys

import torch
from torch.utils.data import DistributedSampler, SequentialSampler, WeightedRandomSampler

from torch_draws import list_dataset


def rank_shard(inner_list, world, rank, shuffle, seed, epoch, drop_last):
    ds = list_dataset(inner_list)
    sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=shuffle, seed=seed,
                                 drop_last=drop_last)
    sampler.set_epoch(epoch)
    return [ds[i] for i in sampler]


def inner_list(case, rank_seed):
    kind = case["inner"]["kind"]
    if kind == "sequential":
        return list(SequentialSampler(range(case["n"])))
    if kind == "recorded":
        return list(case["inner"]["indices"])
    weights = case["inner"]["weights"] or [1.0] * case["n"]
    num = case["inner"]["num_samples"] or len(weights)
    g = torch.Generator()
    g.manual_seed(rank_seed)
    s = WeightedRandomSampler(weights, num, replacement=True, generator=g)
    for _ in range(case["iteration"]):
        list(s)
    return list(s)


def make_case(rng):
    n = rng.choice([1, 2, 5, 10, 17, 64, 101, 500])
    world = rng.choice([1, 2, 3, 4, 8])
    kind = rng.choice(["weighted-random", "weighted-random", "sequential", "recorded"])
    inner = {"kind": kind, "weights": [], "num_samples": 0, "indices": []}
    if kind == "weighted-random":
        if rng.random() < 0.5:
            inner["weights"] = [round(rng.uniform(0, 3), 3) for _ in range(rng.randint(1, n))]
            if sum(inner["weights"]) == 0:
                inner["weights"][0] = 1.0
        inner["num_samples"] = rng.choice([0, 2, 7, n + 3])
        if inner["num_samples"] == 0 and len(inner["weights"] or [0] * n) < 2:
            inner["num_samples"] = 2
    if kind == "recorded":
        inner["indices"] = [rng.randrange(n) for _ in range(rng.randint(1, 2 * n + 1))]
    shared = rng.random() < 0.4
    seed = rng.choice([0, 1, 42, 1234])
    rank_seeds = [] if shared else [seed + 7 * r + 1 for r in range(world)]
    return {"n": n, "world_size": world, "inner": inner, "seed": seed, "rank_seeds": rank_seeds,
            "shuffle": rng.random() < 0.3, "epoch": rng.choice([0, 1, 3]),
            "iteration": rng.choice([0, 0, 1, 2]), "drop_last": rng.random() < 0.2}


def main():
    rng = random.Random(13)
    cases = []
    for _ in range(60):
        c = make_case(rng)
        ranks = []
        for r in range(c["world_size"]):
            rank_seed = c["rank_seeds"][r] if c["rank_seeds"] else c["seed"]
            lst = inner_list(c, rank_seed)
            ranks.append(rank_shard(lst, c["world_size"], r, c["shuffle"], rank_seed, c["epoch"],
                                    c["drop_last"]))
        c["ranks"] = ranks
        cases.append(c)
    # torch.multinomial with replacement itself, for a few weight vectors.
    draws = []
    for seed, weights, num in [(0, [1.0] * 10, 10), (7, [0.1, 0.0, 2.5, 1.0], 33),
                               (4294967301, [3.0, 1.0], 16), (-1, [1e-9, 1.0, 1e9], 12)]:
        g = torch.Generator()
        g.manual_seed(seed)
        t = torch.multinomial(torch.tensor(weights, dtype=torch.double), num, True, generator=g)
        draws.append({"seed": seed, "weights": weights, "num_samples": num, "draws": t.tolist()})
    out = {"source": "torch %s: WeightedRandomSampler(generator), SequentialSampler, "
                     "DistributedSampler over the materialised list (Lightning's "
                     "DistributedSamplerWrapper), torch.multinomial" % torch.__version__,
           "multinomial": draws, "cases": cases}
    with open(sys.argv[1], "w") as f:
        json.dump(out, f)
        f.write("\n")


if __name__ == "__main__":
    main()
