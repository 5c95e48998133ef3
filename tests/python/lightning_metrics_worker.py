"""One real 4-rank Lightning Trainer whose LightningModule knows nothing of ShardLens:
lightning_metrics_worker.py CONFIG OUT. The Trainer gets `ShardLensCallback(OUT/runs)` and nothing
else changes: validation_step updates torchmetrics metrics and returns only its loss.

Lightning's DDP launcher re-runs this script for ranks 1..3. Each rank writes
OUT/oracle_rank<r>.json: per validation, the dataset items its loader fetched (in order, from
the dataset's __getitem__), every metric's own state before sync and compute() after, and the
host transfers (Tensor.cpu/item/tolist/numpy/__bool__/__int__/__float__) that ShardLens code
made between the validation's start and its end of epoch, and how many batches ran.
"""
import json
import os
import sys
import traceback

import torch
import torch.nn.functional as F
import lightning.pytorch as L
from lightning.pytorch.loggers import TensorBoardLogger
from torch.utils.data import DataLoader, Dataset
from torchmetrics.classification import (BinaryConfusionMatrix, MulticlassAUROC,
                                         MulticlassAccuracy, MulticlassConfusionMatrix,
                                         MulticlassF1Score)

C, W = 5, 4
N = 103
FETCHED = []  # dataset indices __getitem__ served on this rank, in order


def label(i):
    return (i * 7 + i // 11) % C


def prediction(i):
    y = label(i)
    return y if i % 3 else (y + 1 + i % 2) % C


class Items(Dataset):
    def __len__(self):
        return N

    def __getitem__(self, i):
        FETCHED.append(int(i))
        return F.one_hot(torch.tensor(prediction(i)), C).float(), torch.tensor(label(i))


class Labeled(Dataset):
    """torchvision style: the labels as a `targets` attribute, served under a Subset-like
    wrapper (.dataset + .indices) whose index j is Items' index PERM[j]: the callback reads
    the true class counts from them, unwrapping the Subset."""

    def __init__(self):
        self.targets = [label(i) for i in range(N)]

    def __len__(self):
        return N

    def __getitem__(self, i):
        return Items()[i]


PERM = [(j * 37) % N for j in range(N)]  # 37 is prime to 103: a permutation


class Module(L.LightningModule):
    """What a user writes: metrics as attributes and in a ModuleDict, nothing returned but
    the loss."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(C, C, bias=False)
        with torch.no_grad():
            self.lin.weight.copy_(torch.eye(C) * 4)
        self.val_metrics = torch.nn.ModuleDict({
            "confmat": MulticlassConfusionMatrix(C), "f1": MulticlassF1Score(C)})
        self.acc = MulticlassAccuracy(C, average="micro")
        self.is_two = BinaryConfusionMatrix()
        self.auroc = MulticlassAUROC(C)  # not one ShardLens reads: said once, ignored
        # The oracle's twins, outside the module's registered children: ShardLens does not
        # see them, so they show what the metrics hold without it.
        object.__setattr__(self, "twins", {"confmat": MulticlassConfusionMatrix(C),
                                           "acc": MulticlassAccuracy(C, average="micro")})

    def forward(self, x):
        return self.lin(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.0)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.val_metrics["confmat"].update(logits, y)
        self.twins["confmat"].update(logits, y)
        self.twins["acc"].update(logits, y)
        self.val_metrics["f1"].update(logits, y)
        self.acc(logits, y)  # forward: update through the same wrapper
        self.is_two.update(logits[:, 2] - logits.max(1).values, (y == 2).long())
        self.auroc.update(logits.softmax(1), y)
        self.log("val_acc", self.acc)
        return F.cross_entropy(logits, y)

    def on_validation_epoch_end(self):
        for m in (*self.val_metrics.values(), self.is_two, self.auroc):
            m.compute()
            m.reset()


class Oracle(L.Callback):
    """Listed before ShardLensCallback: its epoch-end hook runs first, so it reads the
    metrics as they stand and stops counting before ShardLens's end-of-validation work."""

    def __init__(self, out):
        self.out, self.records, self.counting, self.calls = out, [], False, 0

    def on_validation_epoch_start(self, trainer, pl_module):
        self.start, self.counting, self.calls, self.batches = len(FETCHED), True, 0, 0
        self.per_batch = []

    def on_validation_batch_end(self, trainer, pl_module, *args, **kwargs):
        # Runs before ShardLensCallback's hook: calls[k] = transfers up to batch k's step.
        self.batches += 1
        self.per_batch.append(self.calls)

    def on_validation_epoch_end(self, trainer, pl_module):
        self.counting = False
        m = pl_module.val_metrics["confmat"]
        rec = {"sanity": trainer.sanity_checking, "epoch": trainer.current_epoch,
               "fetched": FETCHED[self.start:], "batches": self.batches,
               "host_calls": self.per_batch + [self.calls],
               "local": m.confmat.tolist(), "binary_local": pl_module.is_two.confmat.tolist(),
               "f1_tp": pl_module.val_metrics["f1"].tp.tolist()}
        rec["synced"] = m.compute().tolist()
        twins = pl_module.twins
        rec["twin_local"] = twins["confmat"].confmat.tolist()
        rec["twin_synced"] = twins["confmat"].compute().tolist()
        rec["twin_acc"] = float(twins["acc"].compute())
        for t in twins.values():
            t.reset()
        rec["binary_synced"] = pl_module.is_two.compute().tolist()
        rec["acc"] = float(pl_module.acc.compute())
        rec["logged_acc"] = None
        self.records.append(rec)
        path = os.path.join(self.out, "oracle_rank%d.json" % trainer.global_rank)
        with open(path, "w") as f:
            json.dump(self.records, f)


ORACLE = None
HOST = ("cpu", "item", "tolist", "numpy", "__bool__", "__int__", "__float__")
RECORDER = "shardlens_recorder"


def count_host_transfers():
    """Wraps Tensor's host-transfer methods: a call made by the recorder's code while
    counting counts."""
    for name in HOST:
        original = getattr(torch.Tensor, name)

        def wrapped(self, *a, __original=original, __name=name, **k):
            # The direct caller only: torchmetrics' own checks run inside the recorder's
            # update() wrapper and are the user's cost, not the recorder's. argmax_ids views
            # a tensor already on the CPU as numpy (no transfer; off the CPU it keeps torch's
            # argmax, recorder_metrics.py checks that), so its numpy() does not count.
            caller = sys._getframe(1).f_code
            if ORACLE is not None and ORACLE.counting and RECORDER in caller.co_filename \
                    and not (__name == "numpy" and caller.co_name == "argmax_ids"):
                ORACLE.calls += 1
            return __original(self, *a, **k)
        setattr(torch.Tensor, name, wrapped)


CONFIGS = {
    # shuffled, 3 batches of 4 per rank of 26: batch-limit-subset and shuffled-eval.
    "limited": dict(limit=3, epochs=2, sanity=2, shuffle=True),
    # the same, but fail_on_wrong=True: the first validation's diagnosis stops fit; the
    # validation set is Subset(Labeled(), PERM): the dataset's labels are known.
    "fail": dict(limit=3, epochs=2, sanity=0, shuffle=True, fail_on_wrong=True, subset=True),
    # rank 2 cannot write its dumps (its directory lies under a file): fit goes on, rank 0
    # names the missing dumps, no run file is made.
    "badout": dict(limit=3, epochs=2, sanity=0, shuffle=False, bad_rank=2),
}


def main():
    global ORACLE
    name, out = sys.argv[1], sys.argv[2]
    cfg = CONFIGS[name]
    torch.set_num_threads(1)
    count_host_transfers()
    from shardlens_recorder import ShardLensCallback
    ORACLE = Oracle(out)
    runs = os.path.join(out, "runs")
    # Lightning's launcher starts ranks 1.. with LOCAL_RANK set; rank 0 is this process.
    if str(cfg.get("bad_rank")) == os.environ.get("LOCAL_RANK"):
        os.makedirs(out, exist_ok=True)
        blocker = os.path.join(out, "not_a_directory")
        open(blocker, "w").close()
        runs = os.path.join(blocker, "runs")
    trainer = L.Trainer(
        accelerator="cpu", devices=W, strategy="ddp", limit_val_batches=cfg["limit"],
        num_sanity_val_steps=cfg["sanity"], max_epochs=cfg["epochs"], limit_train_batches=2,
        callbacks=[ORACLE, ShardLensCallback(runs,
                                             fail_on_wrong=cfg.get("fail_on_wrong", False))],
        logger=TensorBoardLogger(out, name="tb", version=0), enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False, default_root_dir=out)
    val = torch.utils.data.Subset(Labeled(), PERM) if cfg.get("subset") else Items()
    try:
        trainer.fit(Module(), train_dataloaders=DataLoader(Items(), batch_size=4),
                    val_dataloaders=DataLoader(val, batch_size=4, shuffle=cfg["shuffle"]))
    except BaseException:
        traceback.print_exc()
        raise


if __name__ == "__main__":
    main()
