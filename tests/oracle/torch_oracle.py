#!/usr/bin/python3
"""Oracle tests: shardlens-cli against real PyTorch (Debian's python3-torch).

Every expectation here comes from torch itself: DistributedSampler (after set_epoch), a
DataLoader over it, torch.bincount on the samples the loader yields, and torch tensors of
the counter dtype for the precision case. Only Lightning's limit_val_batches rule is
written out (Lightning is not packaged in Debian); it follows Lightning's
_parse_num_batches line by line.

Usage: torch_oracle.py CLI [--only vectors|random|dtype] [--cases N] [--seed S]
Exit status: 0 all agree, 1 a mismatch (each one printed with a command to reproduce it),
77 when torch or numpy cannot be imported (ctest reports the test as skipped).
"""
import argparse
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

SKIP = 77

try:
    import numpy as np
    import torch
    from torch.utils.data import DataLoader, DistributedSampler
except ImportError as error:  # the oracle is meaningless without the real thing
    print(f"SKIPPED: {sys.executable} cannot import torch/numpy ({error}); "
          "install Debian's python3-torch to run the oracle tests")
    sys.exit(SKIP)

# The committed vectors (scripts/oracles/make_reference_vectors.py) that the core tests also read.
REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "reference",
                         "vectors.json")


class LightningLimitError(Exception):
    """What Lightning raises (MisconfigurationException) when a fraction gives 0 batches."""


def lightning_limit(length, limit):
    """Lightning's _parse_num_batches for a finite loader length (None: no limit)."""
    if limit is None:
        return length
    if length == 0:
        return 0
    if isinstance(limit, int):
        num = min(length, limit)
    else:
        num = int(length * limit)
    if num == 0 and isinstance(limit, float) and limit > 0.0:
        raise LightningLimitError(f"{limit} of {length} batches is 0 batches")
    return num


def limit_arg(limit):
    # repr() round-trips the double exactly and always keeps a '.' or 'e' for floats, so
    # the CLI sees a fraction for 1.0 and a count for 1, as Lightning distinguishes them.
    return repr(limit)


class Case:
    def __init__(self, rng, index):
        self.index = index
        self.classes = rng.choice([1, 2, 3, 5, 10, 17])
        self.world = rng.choice([1, 2, 3, 4, 5, 7, 8, 8, 16, 33])
        shape = rng.random()
        if shape < 0.15:
            self.n = rng.randint(1, max(1, self.world - 1)) if self.world > 1 else 1  # n < W
        elif shape < 0.35:
            self.n = self.world * rng.randint(1, 60)  # n % W == 0
        elif shape < 0.9:
            self.n = rng.randint(1, 400)
        else:
            self.n = rng.randint(400, 3000)
        self.batch = rng.choice([1, 2, 3, 4, 7, 8, 16, 32, self.n, self.n + 1,
                                 self.n + rng.randint(1, 50)])  # includes B > n
        self.batch = max(1, self.batch)
        self.shuffle = rng.random() < 0.6
        self.seed = rng.choice([0, 0, 1, 42, rng.randint(0, 2**31), rng.randint(-2**40, -1),
                                rng.randint(2**32, 2**40)])
        self.epoch = rng.choice([0, 0, 1, 2, rng.randint(0, 1000)])
        self.sampler_drop_last = rng.random() < 0.3
        self.loader_drop_last = rng.random() < 0.3
        kind = rng.random()
        if kind < 0.3:
            self.limit = None
        elif kind < 0.6:
            self.limit = rng.choice([0, 1, 2, 3, 5, 10, rng.randint(0, 50)])
        else:
            self.limit = rng.choice([0.0, 0.01, 0.1, 0.25, 0.29, 0.5, 0.99, 1.0, rng.random()])
        self.labels = None
        self.preds = None

    def common_flags(self):
        flags = ["--world-size", str(self.world), "--batch-size", str(self.batch),
                 "--seed", str(self.seed), "--epoch", str(self.epoch), "--format", "json"]
        if self.shuffle:
            flags.append("--shuffle")
        if self.sampler_drop_last:
            flags.append("--sampler-drop-last")
        if self.loader_drop_last:
            flags.append("--loader-drop-last")
        if self.limit is not None:
            flags += ["--limit-batches", limit_arg(self.limit)]
        return flags

    def describe(self):
        return (f"case {self.index}: n={self.n} C={self.classes} W={self.world} B={self.batch} "
                f"shuffle={self.shuffle} seed={self.seed} epoch={self.epoch} "
                f"sampler_drop_last={self.sampler_drop_last} "
                f"loader_drop_last={self.loader_drop_last} limit={self.limit!r}")


def torch_expectation(case):
    """What real torch does for the case: per rank the sampler output, its padding flags,
    the evaluated batches and the bincount state; or the Lightning error."""
    dataset = range(case.n)  # DistributedSampler and DataLoader only need len() / indexing
    c = case.classes
    target = torch.from_numpy(case.labels)
    pred = torch.from_numpy(case.preds)
    ranks = []
    error = None
    for r in range(case.world):
        sampler = DistributedSampler(dataset, num_replicas=case.world, rank=r,
                                     shuffle=case.shuffle, seed=case.seed,
                                     drop_last=case.sampler_drop_last)
        sampler.set_epoch(case.epoch)
        indices = list(iter(sampler))
        # Position r + k*W of the padded order; positions >= n repeat the order's start.
        padding = [1 if r + k * case.world >= case.n else 0 for k in range(len(indices))]
        loader = DataLoader(dataset, batch_size=case.batch, sampler=sampler,
                            drop_last=case.loader_drop_last, collate_fn=list)
        try:
            limit = lightning_limit(len(loader), case.limit)
        except LightningLimitError as e:
            error = str(e)
            break
        evaluated = []
        state = torch.zeros(c * c, dtype=torch.int64)
        for b, batch in enumerate(loader):
            if b >= limit:
                break
            evaluated += batch
            idx = torch.tensor(batch, dtype=torch.int64)
            state += torch.bincount(target[idx] * c + pred[idx], minlength=c * c)
        ranks.append({"indices": indices, "padding": padding, "evaluated": evaluated,
                      "batches": limit, "matrix": state.reshape(c, c).tolist()})
    if error is not None:
        return {"error": error}
    synced = [[sum(rk["matrix"][i][j] for rk in ranks) for j in range(c)] for i in range(c)]
    return {"ranks": ranks, "synced": synced}


def run_cli(cli, args):
    proc = subprocess.run([cli] + args, capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


def as_ints(matrix):
    return [[int(round(v)) if float(v) == round(v) else v for v in row] for row in matrix]


class Checker:
    def __init__(self):
        self.failures = 0
        self.checks = 0

    def expect(self, ok, what, command=None):
        self.checks += 1
        if not ok:
            self.failures += 1
            if self.failures <= 30:
                print(f"MISMATCH {what}")
                if command:
                    print("  reproduce: " + " ".join(shlex.quote(a) for a in command))


def check_random_case(cli, case, workdir, checker):
    want = torch_expectation_cached(case)
    labels_path = os.path.join(workdir, f"labels{case.index}.npy")
    preds_path = os.path.join(workdir, f"preds{case.index}.npy")
    np.save(labels_path, case.labels)
    np.save(preds_path, case.preds)
    shards_args = ["shards", "--dataset", f"npy:{labels_path},classes={case.classes}"]
    shards_args += case.common_flags()
    sim_args = ["simulate", "--dataset", f"npy:{labels_path},classes={case.classes}",
                "--predictor", f"npy:{preds_path}"] + case.common_flags()
    results = {}
    for name, args in (("shards", shards_args), ("simulate", sim_args)):
        code, out, err = run_cli(cli, args)
        results[name] = (args, code, out, err)
    for name, (args, code, out, err) in results.items():
        command = [cli] + args
        if "error" in want:
            # Lightning raises: the CLI must refuse with exit 2 and one clear line.
            checker.expect(code == 2 and err.strip() and "limit" in err,
                           f"{case.describe()} [{name}]: Lightning raises ({want['error']}) "
                           f"but the CLI exited {code}: {err.strip()[:200]}", command)
            continue
        if code != 0:
            checker.expect(False, f"{case.describe()} [{name}]: exit {code}: {err.strip()[:300]}",
                           command)
            continue
        got = json.loads(out)
        if name == "shards":
            checker.expect(got["n"] == case.n and got["world_size"] == case.world and
                           len(got["ranks"]) == case.world,
                           f"{case.describe()} [shards]: header {got['n']}, {got['world_size']}",
                           command)
            for r, (g, w) in enumerate(zip(got["ranks"], want["ranks"])):
                for key in ("indices", "padding", "evaluated", "batches"):
                    checker.expect(g["rank"] == r and g[key] == w[key],
                                   f"{case.describe()} [shards] rank {r} {key}: "
                                   f"cli {str(g[key])[:200]} torch {str(w[key])[:200]}", command)
        else:
            checker.expect(len(got["per_rank"]) == case.world,
                           f"{case.describe()} [simulate]: {len(got['per_rank'])} ranks", command)
            for r, (g, w) in enumerate(zip(got["per_rank"], want["ranks"])):
                checker.expect(as_ints(g) == w["matrix"],
                               f"{case.describe()} [simulate] rank {r} matrix: "
                               f"cli {g} torch {w['matrix']}", command)
            checker.expect(as_ints(got["synced"]) == want["synced"],
                           f"{case.describe()} [simulate] synced: cli {got['synced']} "
                           f"torch {want['synced']}", command)


def random_cases(count, seed):
    rng = random.Random(seed)
    cases = []
    for i in range(count):
        case = Case(rng, i)
        nprng = np.random.default_rng(rng.randint(0, 2**32 - 1))
        case.labels = nprng.integers(0, case.classes, size=case.n).astype(
            rng.choice([np.int64, np.int32, np.int16]))
        # Mostly right, sometimes wrong: every cell of the matrix gets exercised.
        noise = nprng.integers(0, case.classes, size=case.n)
        keep = nprng.random(case.n) < 0.7
        case.preds = np.where(keep, case.labels, noise).astype(np.int64)
        cases.append(case)
    # Force the edge cases the brief names, whatever the random draw gave.
    cases[0].n, cases[0].world = 3, 8                      # n < W, padding wraps around twice
    cases[1].n, cases[1].world = 64, 8                     # n % W == 0: no padding
    cases[2].batch = cases[2].n + 5                        # B > n
    cases[3].limit = 0                                     # limit 0: nothing evaluated
    cases[4].n, cases[4].world, cases[4].batch = 100, 2, 5
    cases[4].limit, cases[4].loader_drop_last = 0.01, False  # 10 batches * 0.01 -> Lightning raises
    cases[5].n, cases[5].world, cases[5].batch = 100, 1, 1
    cases[5].limit = 0.29                                  # int(100 * 0.29) == 28
    cases[6].limit = 1                                     # one batch, not all of them
    cases[7].limit = 1.0                                   # all batches
    cases[8].n, cases[8].world, cases[8].sampler_drop_last = 3, 8, True  # every rank empty
    for case in cases[:9]:
        nprng = np.random.default_rng(case.index)
        case.labels = nprng.integers(0, case.classes, size=case.n).astype(np.int64)
        case.preds = nprng.integers(0, case.classes, size=case.n).astype(np.int64)
    return cases


def check_random(cli, count, seed, checker):
    cases = random_cases(count, seed)
    errors = sum(1 for c in cases if "error" in torch_expectation_cached(c))
    workdir = tempfile.mkdtemp(prefix="shardlens-oracle-")
    failures_before = checker.failures
    # The CLI runs are independent processes: two at a time keeps a shared box usable.
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda c: check_random_case(cli, c, workdir, checker), cases))
    if checker.failures == failures_before:
        shutil.rmtree(workdir)
    else:  # the reproduce commands above name these files
        print(f"  inputs of the failing cases kept in {workdir}")
    # Say what the draw covered, so a narrowed generator shows up in the log.
    ok = [c for c in cases if "error" not in _cache[c.index]]
    cover = {
        "n<W": sum(c.n < c.world for c in ok),
        "n%W==0": sum(c.n % c.world == 0 for c in ok),
        "B>n": sum(c.batch > c.n for c in ok),
        "shuffle": sum(c.shuffle for c in ok),
        "sampler_drop_last": sum(c.sampler_drop_last for c in ok),
        "loader_drop_last": sum(c.loader_drop_last for c in ok),
        "limit int": sum(isinstance(c.limit, int) for c in ok),
        "limit 0": sum(c.limit == 0 for c in ok),
        "limit float": sum(isinstance(c.limit, float) for c in ok),
        "padded": sum(any(any(r["padding"]) for r in _cache[c.index]["ranks"]) for c in ok),
        "nothing evaluated": sum(not any(r["evaluated"] for r in _cache[c.index]["ranks"])
                                 for c in ok),
    }
    print(f"random: {len(cases)} cases (shards + simulate each): {len(ok)} compared with "
          f"torch's output, {errors} where Lightning raises and the CLI must exit 2")
    print("  covered: " + ", ".join(f"{k} {v}" for k, v in cover.items()))


_cache = {}


def torch_expectation_cached(case):
    if case.index not in _cache:
        _cache[case.index] = torch_expectation(case)
    return _cache[case.index]


def check_vectors(cli, checker):
    with open(REFERENCE) as f:  # committed: a missing file is an error, not a skip
        vectors = json.load(f)
    for v in vectors["randperm"]:
        # Torch first: the vectors file itself must still be right.
        g = torch.Generator()
        g.manual_seed(v["seed"])
        checker.expect(torch.randperm(v["n"], generator=g).tolist() == v["perm"],
                       f"vectors.json randperm seed={v['seed']} n={v['n']} disagrees with torch")
        # One rank, shuffled, epoch 0: the sampler's order is randperm(n) with the seed.
        args = ["shards", "--dataset", f"synthetic:counts={v['n']}", "--world-size", "1",
                "--batch-size", "1", "--shuffle", "--seed", str(v["seed"]), "--epoch", "0",
                "--format", "json"]
        code, out, err = run_cli(cli, args)
        got = json.loads(out)["ranks"][0]["indices"] if code == 0 else err
        checker.expect(got == v["perm"],
                       f"randperm seed={v['seed']} n={v['n']}: cli {got} want {v['perm']}",
                       [cli] + args)
    for v in vectors["distributed_sampler"]:
        args = ["shards", "--dataset", f"synthetic:counts={v['n']}", "--world-size",
                str(v["world_size"]), "--batch-size", "1", "--seed", str(v["seed"]), "--epoch",
                str(v["epoch"]), "--format", "json"]
        args += ["--shuffle"] if v["shuffle"] else []
        args += ["--sampler-drop-last"] if v["drop_last"] else []
        code, out, err = run_cli(cli, args)
        got = [r["indices"] for r in json.loads(out)["ranks"]] if code == 0 else err
        checker.expect(got == v["ranks"], f"distributed_sampler vector {v}: cli {got}",
                       [cli] + args)
    # Longer permutations than the vectors hold: many generator refills (624 words each)
    # and swap blocks, against torch.randperm itself.
    for n, seed in ((623, 5), (1249, 0), (100_003, 2024), (250_000, -7)):
        g = torch.Generator()
        g.manual_seed(seed)
        want = torch.randperm(n, generator=g).tolist()
        args = ["shards", "--dataset", f"synthetic:counts={n}", "--world-size", "1",
                "--batch-size", "1000", "--shuffle", "--seed", str(seed), "--format", "json"]
        code, out, err = run_cli(cli, args)
        got = json.loads(out)["ranks"][0]["indices"] if code == 0 else err
        checker.expect(got == want, f"randperm n={n} seed={seed}: cli and torch differ",
                       [cli] + args)
    print(f"vectors: {len(vectors['randperm'])} randperm, "
          f"{len(vectors['distributed_sampler'])} distributed_sampler, 4 long randperm")


def check_dtype(cli, checker):
    """float16 / bfloat16 / float32 counters: `state += bincount` on a torch tensor of that
    dtype, per batch, must equal the CLI's emulation (stalls and round-to-nearest-even)."""
    dtypes = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}
    configs = [  # (n, world, batch, shuffle): float16 must go past 2048, bfloat16 past 256
        (5000, 1, 7, False), (12000, 2, 7, True), (9000, 3, 13, True), (8000, 2, 1, False),
        (9010, 2, 64, False, 0.001)]  # nearly all class 0: float16 cells round up too
    cases = 0
    above_exact = []  # per narrow-dtype case: did torch's total land above the true count?
    with tempfile.TemporaryDirectory(prefix="shardlens-oracle-dtype-") as workdir:
        for ci, (n, world, batch, shuffle, *rest) in enumerate(configs):
            rng = np.random.default_rng(100 + ci)
            c = 2
            class1 = rest[0] if rest else 0.2
            labels = (rng.random(n) < class1).astype(np.int64)  # mostly class 0: past 2048
            preds = np.where(rng.random(n) < 0.9, labels, 1 - labels).astype(np.int64)
            lp, pp = os.path.join(workdir, f"l{ci}.npy"), os.path.join(workdir, f"p{ci}.npy")
            np.save(lp, labels)
            np.save(pp, preds)
            target, pred = torch.from_numpy(labels), torch.from_numpy(preds)
            for name, dt in dtypes.items():
                want = []
                for r in range(world):
                    sampler = DistributedSampler(range(n), num_replicas=world, rank=r,
                                                 shuffle=shuffle, seed=7)
                    sampler.set_epoch(1)
                    loader = DataLoader(range(n), batch_size=batch, sampler=sampler,
                                        collate_fn=list)
                    state = torch.zeros(c * c, dtype=dt)
                    for b in loader:
                        idx = torch.tensor(b, dtype=torch.int64)
                        state += torch.bincount(target[idx] * c + pred[idx], minlength=c * c)
                    want.append(state.double().reshape(c, c).tolist())
                args = ["simulate", "--dataset", f"npy:{lp},classes={c}", "--predictor",
                        f"npy:{pp}", "--world-size", str(world), "--batch-size", str(batch),
                        "--seed", "7", "--epoch", "1", "--counter-dtype", name, "--format",
                        "json"] + (["--shuffle"] if shuffle else [])
                code, out, err = run_cli(cli, args)
                got = json.loads(out)["per_rank"] if code == 0 else err
                checker.expect(got == want, f"counter dtype {name} n={n} W={world} B={batch}: "
                               f"cli {got} torch {want}", [cli] + args)
                cases += 1
                exact_rows = np.bincount(labels, minlength=c).tolist()
                synced = [[sum(m[i][j] for m in want) for j in range(c)] for i in range(c)]
                if name != "float32" and any(sum(row) != exact_rows[i]
                                             for i, row in enumerate(synced)):
                    # torch's rows are off, up or down: the diagnosis must blame the counter.
                    args[0] = "diagnose"
                    code, out, err = run_cli(cli, args)
                    found = [f["pattern"] for f in json.loads(out)["diagnosis"]] if out else err
                    checker.expect(found == ["counter-precision"],
                                   f"counter dtype {name} n={n}: diagnosis {found}", [cli] + args)
                if name in ("float16", "bfloat16"):
                    # The case is only worth having if the narrow dtype really changed counts.
                    cells = [v for m in want for row in m for v in row]
                    exact = np.bincount(labels * c + preds, minlength=c * c)
                    checker.expect(any(sum(row) != exact_rows[i] for i, row in enumerate(synced)),
                                   f"counter dtype {name} n={n}: torch kept every row exact, "
                                   "the case does not exercise rounding")
                    above_exact.append(sum(cells) > exact.sum())
    checker.expect(any(above_exact), "no counter dtype case rounded above the true count")
    print(f"dtype: {cases} cases (float16, bfloat16, float32)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cli")
    parser.add_argument("--only", choices=["vectors", "random", "dtype"])
    parser.add_argument("--cases", type=int, default=600)
    parser.add_argument("--seed", type=int, default=20240601)
    args = parser.parse_args()
    if not os.access(args.cli, os.X_OK):
        print(f"{args.cli}: not an executable shardlens-cli")
        return 2
    torch.set_num_threads(1)  # tiny tensors: threads only cost start-up time
    checker = Checker()
    print(f"torch {torch.__version__}, numpy {np.__version__}")
    if args.only in (None, "vectors"):
        check_vectors(args.cli, checker)
    if args.only in (None, "random"):
        check_random(args.cli, args.cases, args.seed, checker)
    if args.only in (None, "dtype"):
        check_dtype(args.cli, checker)
    print(f"{checker.checks} checks, {checker.failures} mismatches")
    return 1 if checker.failures else 0


if __name__ == "__main__":
    sys.exit(main())
