"""Real Lightning Trainers (DDP on CPU processes over gloo) whose modules log accuracies the
ways users do: lightning_logged_worker.py CONFIG OUT. Lightning's DDP launcher re-runs this
script for ranks 1..; rank 0 writes OUT/logged.json: per validate() call what Lightning logged
(trainer.callback_metrics) and what the callback says it proved (callback.logged).

  metric      4 ranks, 103 samples, batch 4: a DistributedSampler pads 1 sample. The module
              logs torchmetrics objects (micro accuracy, macro F1, beside the confusion matrix
              the callback records), a per-batch accuracy tensor and each rank's own accuracy
              at the epoch's end (both sync_dist=True); a CSVLogger.
  unrecorded  2 ranks, 11 samples (1 padded): validation_step returns nothing and logs its
              batch accuracy with sync_dist=True; then the same with limit_val_batches=1 (8 samples) and
              validation_step returning (logits, y).
"""
import json
import os
import sys

import torch
import torch.nn.functional as F
import lightning.pytorch as L
from lightning.pytorch.loggers import CSVLogger
from torch.utils.data import DataLoader, Dataset

C = 5


def label(i):
    return (i * 7 + i // 11) % C


def prediction(i):
    y = label(i)
    return y if i % 3 else (y + 1 + i % 2) % C


class Items(Dataset):
    """No labels attribute: the callback knows the labels only from what it records."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return F.one_hot(torch.tensor(prediction(i)), C).float(), torch.tensor(label(i))


class Module(L.LightningModule):
    def __init__(self, metrics):
        super().__init__()
        from torchmetrics.classification import (MulticlassAccuracy, MulticlassConfusionMatrix,
                                                 MulticlassF1Score)
        self.lin = torch.nn.Linear(C, C, bias=False)
        with torch.no_grad():
            self.lin.weight.copy_(torch.eye(C) * 4)
        self.metrics = metrics
        self.returns = True
        if metrics:
            self.confmat = MulticlassConfusionMatrix(C)
            self.acc = MulticlassAccuracy(C, average="micro")
            self.f1 = MulticlassF1Score(C)  # macro

    def forward(self, x):
        return self.lin(x)

    def on_validation_epoch_start(self):
        self.correct = torch.zeros(())
        self.seen = torch.zeros(())

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        hit = (logits.argmax(1) == y).float()
        self.correct += hit.sum()
        self.seen += len(y)
        self.log("batch_acc", hit.mean(), sync_dist=True)
        if self.metrics:
            self.confmat.update(logits, y)
            self.acc.update(logits, y)
            self.f1.update(logits, y)
            self.log("val_acc", self.acc)
            self.log("val_f1", self.f1)
            return None
        return (logits, y) if self.returns else None

    def on_validation_epoch_end(self):
        self.log("rank_acc", self.correct / self.seen, sync_dist=True)
        if self.metrics:
            self.confmat.compute()
            self.confmat.reset()


def main():
    config, out = sys.argv[1], sys.argv[2]
    torch.set_num_threads(1)
    from shardlens_recorder import ShardLensCallback
    world, n = {"metric": (4, 103), "unrecorded": (2, 11)}[config]
    callback = ShardLensCallback(os.path.join(out, "runs"))
    trainer = L.Trainer(accelerator="cpu", devices=world, strategy="ddp",
                        callbacks=[callback], logger=CSVLogger(out, name="csv", version=0),
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, default_root_dir=out)
    model = Module(metrics=config == "metric")
    results = []

    def validate():
        trainer.validate(model, dataloaders=DataLoader(Items(n), batch_size=4), verbose=False)
        results.append({"lightning": {k: float(v) for k, v in trainer.callback_metrics.items()},
                        "shardlens": list(callback.logged)})
        callback.logged.clear()

    if config == "metric":
        validate()
    else:
        model.returns = False
        validate()
        model.returns = True
        trainer.limit_val_batches = 1
        validate()
    if trainer.global_rank == 0:
        with open(os.path.join(out, "logged.json"), "w") as f:
            json.dump(results, f)


if __name__ == "__main__":
    main()
