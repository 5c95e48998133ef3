#!/usr/bin/python3
"""Regenerates tests/data/reference/vectors.json with real PyTorch (Debian's python3-torch).

The file holds what the core tests (Randperm.MatchesTorchReferenceVectors,
Sampler.MatchesTorchDistributedSamplerVectors) and tests/oracle/torch_oracle.py compare
ShardLens against:
  randperm             torch.randperm(n, generator=torch.Generator().manual_seed(seed))
  distributed_sampler  torch.utils.data.distributed.DistributedSampler, every rank, after
                       set_epoch(epoch)
The cases (the inputs) are listed below; torch computes every output. The layout is the
committed one (one case per line), so regenerating with the same torch gives the same bytes.

Usage: scripts/oracles/make_reference_vectors.py [--out PATH] [--check]
  --out PATH  where to write (default: tests/data/reference/vectors.json of this checkout)
  --check     write nothing; compare with PATH and exit 1 if they differ
Run it with /usr/bin/python3: a pyenv python3 on PATH may lack torch.

Accelerate's vectors (BatchSamplerShard, gather_for_metrics) are not made here: they need
Hugging Face Accelerate's own code, which Debian does not package.
"""
import argparse
import json
import os
import subprocess
import sys

try:
    import torch
except ImportError as error:
    sys.exit(f"{sys.executable} cannot import torch ({error}); install Debian's python3-torch "
             "and run this with /usr/bin/python3")

from torch_draws import distributed_shards, randperm  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_OUT = os.path.join(ROOT, "tests", "data", "reference", "vectors.json")

# (seed, n): small and odd sizes, a seed past 32 bits and a negative one (the generator keeps
# the low 32 bits).
RANDPERM_CASES = [(0, 10), (42, 20), (1, 7), (123456789, 31), (4294967301, 12), (-1, 9)]

# (n, world_size, shuffle, seed, epoch, drop_last): padding, drop_last, padding longer than
# the dataset, an empty drop_last result, and a shuffled later epoch.
SAMPLER_CASES = [
    (10, 4, False, 0, 0, False),
    (10, 4, True, 0, 0, False),
    (10, 4, True, 0, 0, True),
    (3, 8, False, 0, 0, False),
    (3, 8, True, 7, 2, True),
    (101, 6, True, 3, 5, False),
]


def torch_version():
    """The Debian package's upstream version (torch.__version__ says 1.13.0a0 there)."""
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "python3-torch"],
                             capture_output=True, text=True, check=True).stdout.strip()
        if out:
            return out.split("+")[0].split("-")[0], "Debian python3-torch"
    except (OSError, subprocess.CalledProcessError):
        pass
    return torch.__version__, "torch " + torch.__version__


def vectors():
    version, package = torch_version()
    source = (f"generated with torch {version} ({package}): torch.randperm with a seeded "
              "torch.Generator, and torch.utils.data.distributed.DistributedSampler after "
              "set_epoch")
    return {
        "source": source,
        "randperm": [{"seed": s, "n": n, "perm": randperm(s, n)} for s, n in RANDPERM_CASES],
        "distributed_sampler": [
            {"n": n, "world_size": w, "shuffle": sh, "seed": s, "epoch": e, "drop_last": d,
             "ranks": distributed_shards(n, w, sh, s, e, d)}
            for n, w, sh, s, e, d in SAMPLER_CASES
        ],
    }


def dump(v):
    """The committed layout: one-space indent, one case per line."""
    def one(case):
        return json.dumps(case, separators=(", ", ": "))

    lines = ["{", f' "source": {json.dumps(v["source"])},']
    for key, last in (("randperm", False), ("distributed_sampler", True)):
        lines.append(f' "{key}": [')
        lines += ["  " + one(c) + ("," if i + 1 < len(v[key]) else "")
                  for i, c in enumerate(v[key])]
        lines.append(" ]" if last else " ],")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    v = vectors()
    text = dump(v)
    assert json.loads(text) == v
    if args.check:
        try:
            with open(args.out) as f:
                committed = f.read()
        except OSError as error:
            sys.exit(f"{args.out}: {error}")
        if committed == text:
            print(f"{args.out}: identical to what torch {torch.__version__} generates")
            return 0
        same_data = json.loads(committed) == json.loads(text)
        print(f"{args.out}: differs from what torch {torch.__version__} generates"
              + (" (same vectors, other layout or source text)" if same_data else ""))
        return 1
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
