"""Real Lightning Trainers (DDP on CPU processes over gloo) evaluating several datasets with
one ShardLensCallback: lightning_labels_worker.py CONFIG OUT. Lightning's DDP launcher re-runs
this script for ranks 1..; rank 0 writes OUT/verdicts.json (what the callback said of each
evaluation, in order).

  loaders  3 ranks. fit: two val loaders, a torchvision-style dataset (its labels a `targets`
           attribute, read by the callback) and one without labels, whose labels come as
           labels={1: array}; then trainer.validate(dataloaders=X) on a TensorDataset (its
           last tensor the labels) whose first loader's labels differ from fit's.
  limited  2 ranks, limit_val_batches=2, two loaders of 30 and 26 samples, no labels in the
           datasets: labels=one array of 30 (the second loader's length differs: said once,
           not used), then labels=[array, array] (one per loader).
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
import lightning.pytorch as L
from torch.utils.data import DataLoader, Dataset, TensorDataset

C = 5
# name -> (samples, label multiplier): each dataset its own labels
DATASETS = {"tv": (53, 7), "plain": (41, 3), "tensor": (47, 2), "a": (30, 7), "b": (26, 4)}


def labels(name):
    n, mult = DATASETS[name]
    return [(i * mult + i // 11) % C for i in range(n)]


def prediction(y, i):
    return y if i % 3 else (y + 1 + i % 2) % C


class Plain(Dataset):
    """(one-hot prediction, label) of each index; no labels attribute."""

    def __init__(self, name):
        self.y = labels(name)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return F.one_hot(torch.tensor(prediction(self.y[i], i)), C).float(), \
            torch.tensor(self.y[i])


class Torchvisionish(Plain):
    def __init__(self, name):
        super().__init__(name)
        self.targets = list(self.y)


def tensor_dataset(name):
    y = labels(name)
    x = torch.stack([F.one_hot(torch.tensor(prediction(v, i)), C).float()
                     for i, v in enumerate(y)])
    return TensorDataset(x, torch.tensor(y))


class Module(L.LightningModule):
    """No metrics: validation_step returns (logits, y), which the callback records."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(C, C, bias=False)
        with torch.no_grad():
            self.lin.weight.copy_(torch.eye(C) * 4)

    def forward(self, x):
        return self.lin(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.0)

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        x, y = batch
        return self(x), y


def main():
    config, out = sys.argv[1], sys.argv[2]
    torch.set_num_threads(1)
    from shardlens_recorder import ShardLensCallback
    world = {"loaders": 3, "limited": 2}[config]
    runs = os.path.join(out, "runs")
    if config == "loaders":
        callback = ShardLensCallback(runs, labels={1: np.array(labels("plain"))})
    else:
        callback = ShardLensCallback(runs, labels=labels("a"))
    trainer = L.Trainer(accelerator="cpu", devices=world, strategy="ddp", callbacks=[callback],
                        logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, default_root_dir=out, max_epochs=1,
                        limit_train_batches=1, num_sanity_val_steps=0,
                        limit_val_batches=2 if config == "limited" else None)
    model = Module()
    said = []

    def keep():
        said.extend({k: v[k] for k in ("line", "run", "rows_wrong", "labels_known",
                                       "duplicates", "never_evaluated")}
                    for v in callback.verdicts[len(said):])

    if config == "loaders":
        trainer.fit(model, train_dataloaders=DataLoader(Plain("plain"), batch_size=4),
                    val_dataloaders=[DataLoader(Torchvisionish("tv"), batch_size=4),
                                     DataLoader(Plain("plain"), batch_size=4)])
        keep()
        trainer.validate(model, dataloaders=DataLoader(tensor_dataset("tensor"), batch_size=4),
                         verbose=False)
        keep()
    else:
        loaders = [DataLoader(Plain("a"), batch_size=4), DataLoader(Plain("b"), batch_size=4)]
        trainer.validate(model, dataloaders=loaders, verbose=False)
        keep()
        callback.labels = [labels("a"), torch.tensor(labels("b"))]
        trainer.validate(model, dataloaders=loaders, verbose=False)
        keep()
    if trainer.global_rank == 0:
        with open(os.path.join(out, "verdicts.json"), "w") as f:
            json.dump(said, f)


if __name__ == "__main__":
    main()
