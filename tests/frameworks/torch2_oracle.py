"""torch 2.x (the venv's, from PyPI) as the oracle of ShardLens's randperm and
DistributedSampler, and of the torch version it assumes by default.

  torch2_oracle.py small CLI [--cases K]
      K random cases (n, world size, seed, epoch, shuffle, drop_last, --torch-version or the
      default): `shardlens-cli shards` must give every rank exactly what the real
      DistributedSampler yields (list(sampler) after set_epoch) in the venv's torch.
      Also: ShardLens's default --torch-version is the venv's torch (major.minor).
  torch2_oracle.py full DIGESTS
      n = 214,748,363 and 214,748,364, on both sides of torch >= 2.7's randperm branch:
      torch.randperm(n, generator=g.manual_seed(seed + epoch)) and every rank's shard
      against ShardLens (tests/frameworks/torch2_digests.cpp) for --torch-version 2.7 and the
      default, by SHA-256 of the int64 bytes; --torch-version 1.13 must differ at 214,748,364.
      DistributedSampler.__iter__ would first build a Python list of n ints (~7.7 GB), so the
      shards are cut from the permutation by __iter__'s arithmetic (padding by repeating the
      order from its start, then positions rank::W), the arithmetic `small` checks against
      the real iteration, with num_samples and total_size read from real sampler objects.
"""
import hashlib
import json
import os
import random
import resource
import subprocess
import sys
import threading
import time

import frameworks

frameworks.require_venv()
sys.path.insert(0, os.path.join(frameworks.ROOT, "scripts", "oracles"))
import torch  # noqa: E402
from torch.utils.data.distributed import DistributedSampler  # noqa: E402
from torch_draws import distributed_shards  # noqa: E402

BRANCH = 214748364  # UINT32_MAX / 20: torch >= 2.7 shuffles differently from here on


def torch_major_minor():
    major, minor = torch.__version__.split("+")[0].split(".")[:2]
    return "%s.%s" % (major, minor)


def default_version(cli):
    """The torch version a simulation without --torch-version imitates (its report says)."""
    return frameworks.cli_json(cli, "simulate", "--dataset", "synthetic:counts=10")["torch_version"]


def small(cli, cases):
    rng = random.Random(2215)
    default = default_version(cli)
    # One place decides the default (core/torchsem/randperm.h); it must be the torch users
    # get from pip today, the one this venv pins.
    assert default == torch_major_minor(), (
        "ShardLens assumes torch %s by default, the venv has %s: update kDefaultTorchMajor/Minor "
        "with requirements/frameworks.txt" % (default, torch.__version__))
    versions = [None, "2.7", torch.__version__, "2.15.0+cu130", "1.13.1"]
    t0 = time.time()
    checked = 0
    for case in range(cases):
        n = rng.choice([1, 2, 3, 7, 10, 64, 101, 150, 257, 1000, 1023, rng.randint(1, 3000)])
        w = rng.randint(1, 9)
        shuffle = rng.random() < 0.75
        seed = rng.choice([0, 1, 42, -1, 2**31, 2**32 + 7, rng.randint(-2**40, 2**40)])
        epoch = rng.randint(0, 5)
        drop_last = rng.random() < 0.4
        version = versions[case % len(versions)]
        args = ["shards", "--dataset", "synthetic:counts=%d" % n, "--world-size", str(w),
                "--seed", str(seed), "--epoch", str(epoch),
                "--shuffle" if shuffle else "--no-shuffle"]
        if drop_last:
            args.append("--sampler-drop-last")
        if version:
            args += ["--torch-version", version]
        got = frameworks.cli_json(cli, *args)
        want = distributed_shards(n, w, shuffle, seed, epoch, drop_last)
        where = "n=%d W=%d shuffle=%s seed=%d epoch=%d drop_last=%s torch=%s" % (
            n, w, shuffle, seed, epoch, drop_last, version or "default")
        assert len(got["ranks"]) == w, where
        for r in range(w):
            assert got["ranks"][r]["indices"] == want[r], "%s rank %d: %s != %s" % (
                where, r, got["ranks"][r]["indices"][:20], want[r][:20])
        checked += 1
    print("small: %d cases (shards of every rank == DistributedSampler of torch %s), default "
          "--torch-version %s, %.1f s" % (checked, torch.__version__, default, time.time() - t0))


def torch_order(n, seed):
    g = torch.Generator()
    g.manual_seed(seed)
    return torch.randperm(n, generator=g)


def rank_digest(perm, n, w, rank, num_samples):
    """sha256 of rank `rank`'s DistributedSampler indices as int64: positions rank + k * w of
    the order padded by repeating it from its start (position p >= n is order[p % n])."""
    h = hashlib.sha256()
    chunk = 1 << 22
    for k0 in range(0, num_samples, chunk):
        k = torch.arange(k0, min(num_samples, k0 + chunk), dtype=torch.int64)
        h.update(perm[torch.remainder(rank + k * w, n)].numpy())
    return h.hexdigest()


# (n, seed, epoch, world size, drop_last): 363 pads one sample on 4 ranks; 364 on 5 ranks
# pads one, or drops 4 with drop_last.
FULL_CASES = [(BRANCH - 1, 0, 1, 4, False), (BRANCH, 2024, 3, 5, False), (BRANCH, 2024, 3, 5, True)]


def full(digests):
    t0 = time.time()
    ours = {}  # (case, version) -> digests from ShardLens

    def shardlens_side():
        for case in FULL_CASES:
            n, seed, epoch, w, drop = case
            versions = ["2.7", "default"] + (["1.13"] if n >= BRANCH and not drop else [])
            for v in versions:
                out = subprocess.run([digests, str(n), str(seed), str(epoch), str(w),
                                      "1" if drop else "0", v],
                                     capture_output=True, text=True, check=True).stdout
                ours[(case, v)] = json.loads(out)

    # ShardLens's side runs beside torch's draws (one core each).
    side = threading.Thread(target=shardlens_side)
    side.start()
    theirs = {}
    perm_of = {}
    for case in FULL_CASES:
        n, seed, epoch, w, drop = case
        key = (n, seed + epoch)
        if key not in perm_of:
            perm = None  # one permutation (1.7 GB as int64) held at a time
            perm_of.clear()
            t = time.time()
            perm = torch_order(n, seed + epoch)
            perm_of[key] = (perm, hashlib.sha256(perm.numpy()).hexdigest())
            print("torch.randperm(%d), seed %d: %.1f s" % (n, seed + epoch, time.time() - t),
                  flush=True)
        perm, order_digest = perm_of[key]
        samplers = [DistributedSampler(range(n), num_replicas=w, rank=r, shuffle=True, seed=seed,
                                       drop_last=drop) for r in range(w)]
        num_samples = samplers[0].num_samples
        assert all(s.num_samples == num_samples for s in samplers)
        assert samplers[0].total_size == num_samples * w
        theirs[case] = {"order": order_digest, "num_samples": num_samples,
                        "ranks": [rank_digest(perm, n, w, r, num_samples) for r in range(w)]}
    perm_of.clear()
    side.join()
    for case in FULL_CASES:
        n, seed, epoch, w, drop = case
        where = "n=%d seed=%d epoch=%d W=%d drop_last=%s" % case
        for v in ("2.7", "default"):
            got = ours[(case, v)]
            assert got["order"] == theirs[case]["order"], "%s --torch-version %s: order" % (where, v)
            assert got["num_samples"] == theirs[case]["num_samples"], where
            assert got["ranks"] == theirs[case]["ranks"], "%s --torch-version %s: shards" % (where, v)
        if (case, "1.13") in ours:  # the branch is real: 1.13's loop gives another order
            assert ours[(case, "1.13")]["order"] != theirs[case]["order"], where
        print("full: %s: order and %d shards equal torch %s (--torch-version 2.7 and default %s)"
              % (where, w, torch.__version__, ours[(case, "default")]["torch"]))
    peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
               resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024 / 1024
    print("full: %d cases in %.1f s, peak resident %.2f GB (largest process)"
          % (len(FULL_CASES), time.time() - t0, peak))


def main():
    torch.set_num_threads(1)
    if sys.argv[1] == "small":
        cases = int(sys.argv[sys.argv.index("--cases") + 1]) if "--cases" in sys.argv else 300
        small(sys.argv[2], cases)
    elif sys.argv[1] == "full":
        full(sys.argv[2])
    else:
        raise SystemExit("usage: torch2_oracle.py small CLI [--cases K] | full DIGESTS")


if __name__ == "__main__":
    main()
