#!/usr/bin/env python3
"""Reference vectors from today's torch, Lightning, torchmetrics and Accelerate.

Runs on the GPU machine's python3 (scripts/gpu/check.sh starts it in the background), CPU
only, Gloo processes on 127.0.0.1, and writes one file, OUT/modern_oracles.json:

  randperm             torch.randperm(n, generator=g.manual_seed(seed)) for n = 214,748,363
                       and 214,748,364 (torch >= 2.7 changes the loop from 214,748,364 on)
                       and a few seeds: first and last 1000 values and sum((i + 1) * perm[i])
  distributed_sampler  DistributedSampler shards (shuffled cases), as in vectors.json;
  ..._large            and at n = 214,748,364 summarised per rank like randperm (last)
  lightning            a real Trainer(accelerator="cpu", strategy="ddp", devices=4,
                       limit_val_batches=10, reload_dataloaders_every_n_epochs=1,
                       max_epochs=3, num_sanity_val_steps=2, precision="bf16-mixed") with a
                       shuffled and an unshuffled val loader, torchmetrics'
                       MulticlassConfusionMatrix per loader, and the project's recorder
                       callback (integrations/python): every dump, the reported (synced)
                       matrices, and the epoch each val sampler had
  accelerate           Accelerator.prepare + gather_for_metrics and gather with 4 CPU
                       processes for (n, batch size, even_batches, split_batches) cases, as
                       in accelerate_vectors.json plus "gather"

A part whose library is missing is skipped with a line "SKIPPED part: reason" (and its
reason in the JSON); "FAILED part: ..." marks a part that ran and broke (exit 1). --quick
runs small sizes (tests/oracle runs it with Debian's torch 1.13: randperm and samplers).
tests/core/test_modern_vectors.cpp checks the file against the C++ implementation.

Usage: modern_oracles.py [--out DIR] [--quick] [--time-limit S] [--only PART,...]
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

from torch_draws import distributed_samplers, distributed_shards

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RECORDER_DIR = os.path.join(ROOT, "integrations", "python")
# In this order: the frameworks never run here first; the full-size draws (tens of seconds
# each on a busy CPU) last, each only while the time limit allows.
PARTS = ("accelerate", "lightning", "distributed_sampler", "randperm", "distributed_sampler_large")

# torch >= 2.7 uses another shuffle loop from n >= UINT32_MAX / 20 = 214,748,364 on.
BRANCH = 214748364
RANDPERM_SIZES = (BRANCH - 1, BRANCH)
RANDPERM_SEEDS = (0, 2024)
QUICK_RANDPERM_SIZES = (1000, 100003, 5000003)  # the last one's weighted sum exceeds 2^64
EDGE = 1000  # values kept from each end of a long list

# (n, world_size, shuffle, seed, epoch, drop_last), as in vectors.json (shuffled cases).
SAMPLER_CASES = [
    (10, 4, True, 0, 0, False),
    (101, 6, True, 3, 5, False),
    (1000, 8, True, 42, 1, True),
    (150, 4, True, 0, 2, False),
]
LARGE_SAMPLER_CASES = [(BRANCH, 4, True, 0, 1, False)]
QUICK_LARGE_SAMPLER_CASES = [(100003, 4, True, 0, 1, False)]
# The largest n whose DistributedSampler is iterated for real (its list costs ~36 bytes an
# index); SHARDLENS_ORACLE_ITER_MAX_N raises it on a machine with the memory.
ITER_CHECK_MAX_N = int(os.environ.get("SHARDLENS_ORACLE_ITER_MAX_N", 20_000_000))

# (n, batch_size, even_batches, split_batches) with 4 processes.
ACCELERATE_CASES = [
    (10, 2, True, False), (10, 2, False, False), (37, 4, True, False), (37, 4, False, False),
    (40, 4, False, False), (37, 8, True, True), (10, 4, True, True), (7, 4, True, False),
    (101, 3, True, False), (64, 8, True, False),
]
WORLD = 4

# The Lightning run: 150 samples, 4 ranks, batch 4: 38 per rank with 2 padding duplicates,
# so limit_val_batches=10 keeps every batch (the last has 2) and padding shows.
LIGHTNING = {"n": 150, "classes": 5, "features": 8, "val_batch_size": 4, "train_batch_size": 8,
             "devices": 4, "max_epochs": 3, "limit_val_batches": 10, "limit_train_batches": 2,
             "num_sanity_val_steps": 2, "reload_dataloaders_every_n_epochs": 1,
             "precision": "bf16-mixed", "strategy": "ddp", "accelerator": "cpu"}
LOADERS = ("shuffled", "sequential")
# The worker processes: CPU only, Gloo on loopback (the host name may not resolve there),
# few threads each (the build runs beside them).
LOCAL_ONLY = {"CUDA_VISIBLE_DEVICES": "", "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "2"}


def log(line):
    print(line, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def versions():
    out = {"python": sys.version.split()[0]}
    for name in ("torch", "lightning", "pytorch_lightning", "torchmetrics", "accelerate",
                 "numpy"):
        try:
            out[name] = __import__(name).__version__
        except Exception as e:  # noqa: BLE001 - any import failure means "not there"
            out[name] = None
            out[name + "_missing"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:200])
    return out


def weighted_sum(t):
    """sum((i + 1) * t[i]) exactly, as a decimal string (it exceeds 64 bits at n ~ 2e8).
    With values and positions below 2^28 the int64 sum of a row of 128 products cannot
    overflow (< 2^63); the row sums are added as Python ints."""
    import torch
    n = t.numel()
    if n >= 1 << 28 or (n and int(t.max()) >= 1 << 28):
        raise ValueError("weighted_sum: values and length must be below 2^28")
    total = 0
    chunk = 1 << 24  # bounds the memory beside t
    for start in range(0, n, chunk):
        part = torch.empty(min(chunk, n - start), dtype=torch.int64)
        part.copy_(t[start:start + chunk])  # a copy: t (perhaps a view of more) stays as it is
        part *= torch.arange(start + 1, start + part.numel() + 1, dtype=torch.int64)
        full = part.numel() // 128 * 128
        total += sum(part[:full].view(-1, 128).sum(1).tolist()) + int(part[full:].sum())
    return str(total)


def summary(t):
    return {"count": int(t.numel()), "weighted_sum": weighted_sum(t),
            "first": t[:EDGE].tolist(), "last": t[-EDGE:].tolist() if t.numel() else []}


# --- torch only ------------------------------------------------------------------------------
def part_randperm(args):
    import torch
    out = []
    # A first full-size draw takes tens of seconds on a busy CPU (97 s on a loaded 2-core
    # machine with torch 1.13): start one only with that much time left.
    slowest = 0.0 if args.quick else 40.0
    # The full run keeps the quick sizes too, so its vectors are checked in every test run
    # (the full sizes only where a test asks for SHARDLENS_FULL_SIZE=1).
    for n in (QUICK_RANDPERM_SIZES if args.quick else QUICK_RANDPERM_SIZES + RANDPERM_SIZES):
        for seed in RANDPERM_SEEDS:
            t0 = time.time()
            if t0 + 1.5 * slowest + 5 > args.deadline:
                log("randperm n=%d seed=%d: not drawn, the time limit is near" % (n, seed))
                continue
            g = torch.Generator()
            g.manual_seed(seed)
            perm = torch.randperm(n, generator=g)
            entry = {"n": n, "seed": seed}
            entry.update(summary(perm))
            del perm
            out.append(entry)
            slowest = max(slowest, time.time() - t0)
            log("randperm n=%d seed=%d: %.1f s" % (n, seed, time.time() - t0))
    if not out:
        raise RuntimeError("no randperm drawn within the time limit")
    return out


def part_distributed_sampler(args):
    small = []
    for n, w, sh, seed, e, d in SAMPLER_CASES:
        small.append({"n": n, "world_size": w, "shuffle": sh, "seed": seed, "epoch": e,
                      "drop_last": d,
                      "ranks": distributed_shards(n, w, sh, seed, e, d)})
    return {"cases": small}


def part_distributed_sampler_large(args):
    import torch
    large = []
    cases = QUICK_LARGE_SAMPLER_CASES + ([] if args.quick else LARGE_SAMPLER_CASES)
    for n, w, sh, seed, e, d in cases:
        t0 = time.time()
        if n > ITER_CHECK_MAX_N and args.deadline - t0 < 90:
            log("distributed_sampler_large n=%d: not run, the time limit is near" % n)
            continue
        # DistributedSampler.__iter__ makes a Python list of n ints (seconds and gigabytes
        # per rank at this n), so the shards come from the same permutation, padding and
        # stride as its __iter__ computes them, checked against the real iteration of the
        # last rank (the one whose stride offset and padding differ most from rank 0).
        samplers = distributed_samplers(n, w, sh, seed, e, d)
        g = torch.Generator()
        g.manual_seed(seed + e)
        order = torch.randperm(n, generator=g) if sh else torch.arange(n)
        total = samplers[0].total_size
        if total > n:
            reps = (total - n + n - 1) // n
            order = torch.cat([order] + [order] * reps)[:total]
        else:
            order = order[:total]
        ranks = []
        for r in range(w):
            ranks.append(summary(order[r:total:w]))
        if any(s.num_samples != ranks[0]["count"] for s in samplers):
            raise AssertionError("DistributedSampler's num_samples differs from the shards "
                                 "computed here (n=%d)" % n)
        # __iter__ first turns the whole permutation into a Python list (about 36 bytes an
        # index: 7.7 GB at n = 214,748,364), more than a shared machine can spare; above
        # ITER_CHECK_MAX_N the arithmetic is the one checked against __iter__ at smaller n.
        if n <= ITER_CHECK_MAX_N:
            real = list(iter(samplers[-1]))
            if real[:EDGE] != ranks[-1]["first"] or real[-EDGE:] != ranks[-1]["last"] or \
                    len(real) != ranks[-1]["count"]:
                raise AssertionError("DistributedSampler's own list differs from the shards "
                                     "computed here (n=%d, rank %d)" % (n, w - 1))
            del real
        large.append({"n": n, "world_size": w, "shuffle": sh, "seed": seed, "epoch": e,
                      "drop_last": d, "rank_summaries": ranks})
        log("distributed_sampler_large n=%d: %.1f s" % (n, time.time() - t0))
    if not large:
        raise RuntimeError("no large case ran within the time limit")
    return {"cases": large}


# --- Lightning -------------------------------------------------------------------------------
def lightning_modules():
    try:
        import lightning.pytorch as pl
    except ImportError:
        try:
            import pytorch_lightning as pl
        except ImportError:
            raise ImportError("neither lightning nor pytorch_lightning can be imported",
                              name="lightning") from None
    return pl


def run_lightning_worker(out_dir):
    """Runs in the process started by part_lightning and in every DDP rank Lightning starts
    (strategy="ddp" re-runs this script with the same arguments and LOCAL_RANK set)."""
    import torch
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset
    from torchmetrics.classification import MulticlassConfusionMatrix

    sys.path.insert(0, RECORDER_DIR)
    from shardlens_recorder import IndexedDataset, ShardLensCallback, ShardLensRecorder

    pl = lightning_modules()
    cfg = LIGHTNING
    g = torch.Generator()
    g.manual_seed(7)
    features = torch.randn(cfg["n"], cfg["features"], generator=g)
    labels = torch.arange(cfg["n"]) % cfg["classes"]
    data = IndexedDataset(TensorDataset(features, labels))

    class LoaderCallback(ShardLensCallback):
        """The recorder callback for one of several val loaders (the callback alone records
        a stage's single loader)."""

        def __init__(self, recorder, loader_index):
            super().__init__(recorder, stages=("validate",))
            self.loader_index = loader_index

        def _start(self, trainer, stage):
            super()._start(trainer, stage)
            if self._recording:
                loaders = trainer.val_dataloaders
                if isinstance(loaders, (list, tuple)) and len(loaders) > self.loader_index:
                    self.recorder.sampler = loaders[self.loader_index].sampler

        def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx,
                                    dataloader_idx=0):
            if dataloader_idx == self.loader_index:
                self._batch(outputs)

    recorders = [ShardLensRecorder(out_dir, name=name, num_classes=cfg["classes"],
                                   batch_size=cfg["val_batch_size"]) for name in LOADERS]

    class Model(pl.LightningModule):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.net = torch.nn.Linear(cfg["features"], cfg["classes"])
            self.confmats = torch.nn.ModuleList(
                [MulticlassConfusionMatrix(num_classes=cfg["classes"]) for _ in LOADERS])
            self.sampler_epochs = []

        def forward(self, x):
            return self.net(x)

        def training_step(self, batch, batch_idx):
            _, x, y = batch
            return F.cross_entropy(self(x).float(), y)

        def validation_step(self, batch, batch_idx, dataloader_idx=0):
            index, x, y = batch
            pred = self(x).argmax(-1)
            self.confmats[dataloader_idx].update(pred, y)
            if batch_idx == 0:
                sampler = self.trainer.val_dataloaders[dataloader_idx].sampler
                self.sampler_epochs.append({
                    "loader": LOADERS[dataloader_idx], "rank": self.global_rank,
                    "sanity": bool(self.trainer.sanity_checking),
                    "trainer_epoch": int(self.current_epoch),
                    "sampler": type(sampler).__name__,
                    "sampler_epoch": getattr(sampler, "epoch", None),
                    "sampler_shuffle": getattr(sampler, "shuffle", None),
                    "sampler_seed": getattr(sampler, "seed", None)})
            return {"index": index, "target": y, "prediction": pred}

        def on_validation_epoch_end(self):
            for i, metric in enumerate(self.confmats):
                matrix = metric.compute()  # synced over the ranks (torchmetrics' sum)
                recorders[i].set_reported(matrix)
                self.log("val_accuracy_" + LOADERS[i],
                         matrix.diag().sum().float() / matrix.sum().clamp(min=1))
                metric.reset()

        def on_fit_end(self):
            path = os.path.join(out_dir, "meta_rank%d.json" % self.global_rank)
            with open(path, "w") as f:
                json.dump(self.sampler_epochs, f)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

        def train_dataloader(self):
            return DataLoader(data, batch_size=cfg["train_batch_size"], shuffle=True)

        def val_dataloader(self):
            return [DataLoader(data, batch_size=cfg["val_batch_size"], shuffle=True),
                    DataLoader(data, batch_size=cfg["val_batch_size"], shuffle=False)]

    trainer = pl.Trainer(
        accelerator=cfg["accelerator"], strategy=cfg["strategy"], devices=cfg["devices"],
        max_epochs=cfg["max_epochs"], limit_val_batches=cfg["limit_val_batches"],
        limit_train_batches=cfg["limit_train_batches"],
        reload_dataloaders_every_n_epochs=cfg["reload_dataloaders_every_n_epochs"],
        num_sanity_val_steps=cfg["num_sanity_val_steps"], precision=cfg["precision"],
        callbacks=[LoaderCallback(r, i) for i, r in enumerate(recorders)],
        logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False)
    trainer.fit(Model())


def part_lightning(args):
    lightning_modules()  # ImportError -> skipped, naming what is missing
    import torchmetrics  # noqa: F401
    import numpy as np  # the recorder's .npz dumps
    with tempfile.TemporaryDirectory(prefix="shardlens-lightning-") as tmp:
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()),
                   **LOCAL_ONLY)
        for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "NODE_RANK", "LOCAL_WORLD_SIZE"):
            env.pop(var, None)
        cmd = [sys.executable, os.path.abspath(__file__), "--lightning-worker", tmp]
        limit = max(30, args.deadline - time.time() - 5)
        # A session of its own: on a timeout the DDP ranks Lightning started go too.
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, start_new_session=True)
        try:
            output = p.communicate(timeout=limit)[0]
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 9)
            p.communicate()
            raise RuntimeError("the Lightning run did not finish in %.0f s" % limit)
        finally:
            if p.poll() is None:
                os.killpg(p.pid, 9)
                p.wait()
        if p.returncode != 0:
            raise RuntimeError("the Lightning run failed (exit %d): %s" %
                               (p.returncode, output[-3000:]))
        dumps = []
        for name in sorted(os.listdir(tmp)):
            if not name.endswith(".npz"):
                continue
            with np.load(os.path.join(tmp, name)) as z:
                d = {"file": name, "loader": name.split("_")[0]}
                for key in z.files:
                    v = z[key]
                    d[key] = v.tolist()
                dumps.append(d)
        meta = []
        for name in sorted(os.listdir(tmp)):
            if name.startswith("meta_rank"):
                with open(os.path.join(tmp, name)) as f:
                    meta.extend(json.load(f))
        if not dumps:
            raise RuntimeError("the Lightning run wrote no dumps: " + output[-2000:])
        return {"config": dict(LIGHTNING, loaders=list(LOADERS), loader_shuffle=[True, False]),
                "dumps": dumps, "sampler_epochs": meta}


# --- Accelerate ------------------------------------------------------------------------------
def run_accelerate_worker(result_path):
    """One of WORLD processes (RANK etc. in the environment): every case, rank 0 writes."""
    import torch
    import torch.distributed as dist
    from torch.utils.data import DataLoader
    from accelerate import Accelerator
    from accelerate.utils import DataLoaderConfiguration

    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()

    class Indices(torch.utils.data.Dataset):
        def __init__(self, n):
            self.n = n

        def __len__(self):
            return self.n

        def __getitem__(self, i):
            return torch.tensor(i, dtype=torch.int64)

    cases = []
    for n, b, even, split in ACCELERATE_CASES:
        acc = Accelerator(cpu=True, dataloader_config=DataLoaderConfiguration(
            split_batches=split, even_batches=even))
        loader = acc.prepare(DataLoader(Indices(n), batch_size=b, shuffle=False))
        mine = [batch.tolist() for batch in loader]
        layout = [None] * world
        dist.all_gather_object(layout, mine)
        steps = {len(r) for r in layout}
        last = {len(r[-1]) if r else 0 for r in layout}
        case = {"n": n, "world_size": world, "batch_size": b, "split_batches": split,
                "even_batches": even, "drop_last": False, "shuffle": False, "seed": 0,
                "epoch": 0, "ranks": layout, "gather_for_metrics": None, "gather": None}
        if len(steps) == 1 and len(last) == 1:
            kept, gathered = [], []
            for batch in loader:
                kept.extend(acc.gather_for_metrics(batch).tolist())
                gathered.extend(acc.gather(batch).tolist())
            case["gather_for_metrics"] = kept
            case["gather"] = gathered
        cases.append(case)
    if rank == 0:
        with open(result_path, "w") as f:
            json.dump(cases, f)
    dist.barrier()
    dist.destroy_process_group()


def part_accelerate(args):
    import accelerate  # noqa: F401 - ImportError -> skipped
    with tempfile.TemporaryDirectory(prefix="shardlens-accelerate-") as tmp:
        result = os.path.join(tmp, "cases.json")
        port = str(free_port())
        procs = []
        for rank in range(WORLD):
            env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(WORLD), LOCAL_RANK=str(rank),
                       LOCAL_WORLD_SIZE=str(WORLD), MASTER_ADDR="127.0.0.1", MASTER_PORT=port,
                       ACCELERATE_USE_CPU="true", **LOCAL_ONLY)
            procs.append(subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--accelerate-worker", result],
                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        limit = max(30, args.deadline - time.time() - 5)
        outputs = []
        try:
            for p in procs:
                outputs.append(p.communicate(timeout=limit)[0])
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        bad = [(r, p.returncode) for r, p in enumerate(procs) if p.returncode != 0]
        if bad:
            raise RuntimeError("Accelerate ranks failed %s: %s" % (bad, outputs[bad[0][0]][-3000:]))
        with open(result) as f:
            return {"cases": json.load(f)}


# --- driver ----------------------------------------------------------------------------------
def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--lightning-worker":
        run_lightning_worker(sys.argv[2])
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == "--accelerate-worker":
        run_accelerate_worker(sys.argv[2])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.environ.get("OUT") or ".")
    ap.add_argument("--quick", action="store_true", help="small sizes (a test here)")
    ap.add_argument("--time-limit", type=float, default=225.0,
                    help="seconds for everything (default 225)")
    ap.add_argument("--only", default=",".join(PARTS), help="comma-separated parts")
    args = ap.parse_args()
    args.deadline = time.time() + args.time_limit
    only = [p for p in args.only.split(",") if p]
    unknown = set(only) - set(PARTS)
    if unknown:
        ap.error("unknown parts: %s" % ", ".join(sorted(unknown)))
    os.makedirs(args.out, exist_ok=True)
    out_path = os.path.join(args.out, "modern_oracles.json")

    # The source as the committed vectors name it (this script's path when they were made).
    doc = {"source": "scripts/modern_oracles.py" + (" --quick" if args.quick else ""),
           "versions": versions(), "parts": {}}
    doc["torch_version"] = (doc["versions"]["torch"] or "").split("+")[0]
    failed = False
    runners = {"randperm": part_randperm, "distributed_sampler": part_distributed_sampler,
               "distributed_sampler_large": part_distributed_sampler_large,
               "lightning": part_lightning, "accelerate": part_accelerate}

    def write():
        tmp = out_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, separators=(",", ":"))
        os.replace(tmp, out_path)

    for part in only:
        left = args.deadline - time.time()
        if left < 10:
            doc["parts"][part] = {"status": "skipped", "reason": "the time limit was spent"}
            log("SKIPPED %s: the time limit was spent" % part)
            continue
        t0 = time.time()
        try:
            doc[part] = runners[part](args)
            doc["parts"][part] = {"status": "ok", "seconds": round(time.time() - t0, 1)}
            log("done %s in %.1f s" % (part, time.time() - t0))
        except ImportError as e:
            reason = "%s is not installed here (%s)" % (getattr(e, "name", None) or "a library", e)
            doc["parts"][part] = {"status": "skipped", "reason": reason}
            log("SKIPPED %s: %s" % (part, reason))
        except Exception as e:  # noqa: BLE001 - reported per part, the others still run
            failed = True
            reason = "%s: %s" % (type(e).__name__, str(e)[-3000:])
            doc["parts"][part] = {"status": "failed", "reason": reason}
            log("FAILED %s: %s" % (part, reason))
        write()  # what is done so far survives a later timeout
    write()
    log("wrote %s (%d bytes)" % (out_path, os.path.getsize(out_path)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
