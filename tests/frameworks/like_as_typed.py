"""`shardlens-cli simulate --like RUN` with no other flag, on runs the recorder wrote from the
real frameworks: each must say EQUALS (per rank and synced) and exit 0.

  - Lightning (2 DDP ranks on CPU over gloo): a shuffled validation loader (Lightning's
    DistributedSampler) over a dataset without labels, limit_val_batches=3: most samples are
    never evaluated and their labels unknown; the run file is rank 0's own (the callback's
    verdict). Asking for more batches than the run evaluated names --predictor and --dataset.
  - Accelerate (2 processes, watch): a sequential loader with even_batches=True and a short
    last batch, then a loader holding a shuffled DistributedSampler (the index gathered too).
  - Plain torch (2 processes over gloo): ShardLensRecorder without batch_size (the first
    batch's length) and sync="all-reduce" on a shuffled, padded DistributedSampler; and one
    given the loader (its batch size and drop_last=True) that reports no matrix.

Usage: like_as_typed.py SHARDLENS_CLI
"""
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import frameworks  # noqa: E402

frameworks.require_venv()
sys.path.insert(0, frameworks.RECORDER_DIR)

C = 3  # classes


def model_and_data(n, seed=0):
    import torch
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    y = torch.randint(0, C, (n,), generator=g)
    torch.manual_seed(seed)
    return torch.nn.Linear(4, C), x, y


# -- the workers (each runs as one rank) ------------------------------------------------------
def lightning_worker(out, cli):
    import lightning.pytorch as L
    import torch
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, Dataset, TensorDataset
    from torchmetrics.classification import MulticlassConfusionMatrix

    from shardlens_recorder import ShardLensCallback

    class Unlabelled(Dataset):  # no targets / labels attribute: the labels stay unknown
        def __init__(self, x, y):
            self.x, self.y = x, y

        def __len__(self):
            return len(self.x)

        def __getitem__(self, i):
            return self.x[i], self.y[i]

    net, x, y = model_and_data(101)

    class Model(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = net
            self.confmat = MulticlassConfusionMatrix(num_classes=C)

        def training_step(self, batch, batch_idx):
            return F.cross_entropy(self.net(batch[0]), batch[1])

        def validation_step(self, batch, batch_idx):
            self.confmat.update(self.net(batch[0]), batch[1])

        def on_validation_epoch_end(self):
            self.confmat.compute()
            self.confmat.reset()

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_epochs=1,
                        limit_train_batches=1, limit_val_batches=3, num_sanity_val_steps=0,
                        enable_progress_bar=False, enable_model_summary=False, logger=False,
                        enable_checkpointing=False,
                        callbacks=[ShardLensCallback(out, cli=cli)])
    trainer.fit(Model(), DataLoader(TensorDataset(x, y), batch_size=8),
                DataLoader(Unlabelled(x, y), batch_size=8, shuffle=True))


def accelerate_worker(out, cli):
    import torch
    from accelerate import Accelerator
    from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

    import shardlens_recorder
    from shardlens_recorder import IndexedDataset

    acc = Accelerator(cpu=True)
    net, x, y = model_and_data(37)
    data = TensorDataset(x, y)
    indexed = IndexedDataset(data)
    sharded = DistributedSampler(indexed, num_replicas=acc.num_processes,
                                 rank=acc.process_index, shuffle=True, seed=3)
    model, sequential, shuffled = acc.prepare(net, DataLoader(data, batch_size=4),
                                              DataLoader(indexed, batch_size=4, sampler=sharded))
    acc.gather_for_metrics = shardlens_recorder.watch(acc, out, cli=cli)
    with torch.no_grad():
        for xb, yb in sequential:  # 37 samples, 4 a batch, 2 ranks: the last batch is short
            acc.gather_for_metrics((model(xb).argmax(-1), yb))
        for ib, xb, yb in shuffled:
            acc.gather_for_metrics((ib, model(xb).argmax(-1), yb))


def torch_worker(out, cli):
    import torch
    import torch.distributed as dist
    from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

    from shardlens_recorder import IndexedDataset, ShardLensRecorder

    dist.init_process_group("gloo")
    net, x, y = model_and_data(45)
    data = IndexedDataset(TensorDataset(x, y))
    sampler = DistributedSampler(data, shuffle=True, seed=7)  # 45 on 2 ranks: 1 padded
    sampler.set_epoch(1)
    first = ShardLensRecorder(out, name="first", num_classes=C, sampler=sampler,
                              sync="all-reduce")
    loader = DataLoader(data, batch_size=4, sampler=sampler, drop_last=True)
    given = ShardLensRecorder(out, name="loader", num_classes=C, loader=loader)
    confmat = torch.zeros(C, C, dtype=torch.int64)
    with torch.no_grad():
        for index, xb, yb in DataLoader(data, batch_size=5, sampler=sampler):
            pred = net(xb).argmax(1)
            confmat += torch.bincount(yb * C + pred, minlength=C * C).reshape(C, C)
            first.update(index, yb, pred)
        for index, xb, yb in loader:
            given.update(index, yb, net(xb).argmax(1))
    dist.all_reduce(confmat)
    first.set_reported(confmat)
    first.save()
    given.save()
    dist.destroy_process_group()


WORKERS = {"lightning": lightning_worker, "accelerate": accelerate_worker,
           "torch": torch_worker}


# -- the test ---------------------------------------------------------------------------------
def env_of(extra=None):
    env = dict(os.environ, OMP_NUM_THREADS="1",
               PYTHONPATH=frameworks.RECORDER_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "PL_GLOBAL_SEED"):
        env.pop(var, None)
    env["MASTER_PORT"] = str(frameworks.free_port())
    env.update(extra or {})
    return env


def ranks(kind, out, cli, world=2):
    """WORKERS[kind] as WORLD processes with the variables torchrun sets."""
    port = str(frameworks.free_port())
    procs = []
    for r in range(world):
        env = env_of(dict(RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(world),
                          LOCAL_WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                          MASTER_PORT=port))
        procs.append(subprocess.Popen([sys.executable, __file__, kind, out, cli], env=env,
                                      text=True, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT))
    logs = [p.communicate(timeout=240)[0] for p in procs]
    assert [p.returncode for p in procs] == [0] * world, "\n".join(x[-3000:] for x in logs)


def like(cli, run):
    """simulate --like RUN, no other flag: (exit code, JSON or None, stderr)."""
    proc = subprocess.run([cli, "simulate", "--like", run, "--format", "json"],
                          capture_output=True, text=True)
    j = json.loads(proc.stdout) if proc.returncode in (0, 1) else None
    return proc.returncode, j, proc.stderr


def main():
    cli = os.path.abspath(sys.argv[1])
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            failures.append(what)

    def equals(run, where, no_note=()):
        rc, j, err = like(cli, run)
        notes = [n for e in (j or {}).get("evaluations", []) for n in e["notes"]]
        check(rc == 0 and j["equal"], "%s: simulate --like %s EQUALS, exit %d %s" % (
            where, os.path.basename(run), rc, err.strip() or
            [(e["label"], e["why"], e["flags"]) for e in (j or {}).get("evaluations", [])
             if not e["equal"]]))
        for text in no_note:
            check(not any(text in n for n in notes), "%s: no note says '%s': %s" % (
                where, text, notes))
        return j

    with tempfile.TemporaryDirectory() as d:
        start = time.time()
        out = os.path.join(d, "lightning")
        proc = subprocess.run([sys.executable, __file__, "lightning", out, cli], cwd=d,
                              env=env_of(), capture_output=True, text=True, timeout=300)
        check(proc.returncode == 0, "Lightning fit: %s" % (proc.stdout + proc.stderr)[-3000:])
        run = os.path.join(out, "eval_epoch0.slrun")
        if os.path.exists(run):
            labels = glob.glob(os.path.join(out, "*labels*"))
            check(not labels, "Lightning: no dataset labels were known: %s" % labels)
            equals(run, "Lightning, no labels, limit_val_batches=3, shuffled",
                   ("all-reduce assumed", "batch size"))
            more = subprocess.run([cli, "simulate", "--like", run, "--limit-batches", "5"],
                                  capture_output=True, text=True)
            check(more.returncode == 2 and "--predictor" in more.stderr and
                  "--dataset" in more.stderr and more.stderr.count("\n") == 1,
                  "Lightning: 5 batches where the run evaluated 3 name --predictor and "
                  "--dataset in one line: %s" % more.stderr.strip())
        else:
            check(False, "Lightning: no run file %s: %s" % (run, os.listdir(out)
                                                            if os.path.isdir(out) else "-"))
        print("Lightning: %.0f s" % (time.time() - start), flush=True)

        start = time.time()
        out = os.path.join(d, "accelerate")
        ranks("accelerate", out, cli)
        runs = sorted(glob.glob(os.path.join(out, "*.slrun")))
        check(len(runs) == 2, "Accelerate: two run files: %s" % runs)
        for run, what in zip(runs, ("sequential, even_batches, short last batch",
                                    "shuffled DistributedSampler")):
            j = equals(run, "Accelerate watch, " + what, ("all-reduce", "seed"))
            if j:
                flags = j["evaluations"][0]["flags"]
                check("--sync gather-for-metrics" in flags, "Accelerate: %s" % flags)
        print("Accelerate: %.0f s" % (time.time() - start), flush=True)

        start = time.time()
        out = os.path.join(d, "torch")
        ranks("torch", out, cli)
        for name, no_note in (("first", ("all-reduce assumed",)),
                              ("loader", ("batch size", "drop_last", "all-reduce assumed"))):
            run = os.path.join(out, name + ".slrun")
            dumps = sorted(glob.glob(os.path.join(out, name + "_epoch1_rank*.npz")))
            proc = subprocess.run([cli, "import", *dumps, "--out", run], capture_output=True,
                                  text=True)
            check(proc.returncode == 0, "torch: import %s: %s" % (name, proc.stderr.strip()))
            equals(run, "plain torch, " + name, no_note)
        print("plain torch: %.0f s" % (time.time() - start), flush=True)

    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] in WORKERS:
        WORKERS[sys.argv[1]](sys.argv[2], sys.argv[3])
    else:
        sys.exit(main())
