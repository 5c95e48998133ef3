"""One real Lightning Trainer for an oracle test: lightning_worker.py CONFIG OUT.

Lightning's DDP launcher re-runs this script (same argv) for ranks 1..3; each rank writes
OUT/results_rank<r>.json with what its torchmetrics metrics held at every evaluation, and
ShardLensCallback writes its dumps under OUT/dumps. The configurations (CONFIGS) are the
ones the tests name; lightning_common.py explains the data.
"""
import json
import os
import sys

import torch
import torch.nn.functional as F
import lightning.pytorch as L
from lightning.pytorch.strategies import DDPStrategy
from torch.utils.data import DataLoader, Dataset, WeightedRandomSampler
from torchmetrics.classification import MulticlassAccuracy, MulticlassConfusionMatrix

from lightning_common import C, W, labels_of, predictions_of
from shardlens_recorder import ShardLensCallback, ShardLensRecorder

B = 2
# name -> (n, label multiplier): the tables the test wrote as OUT/<name>_labels.npy/_preds.npy
TABLES = {"val": (103, 7), "val2": (101, 3), "x": (37, 2), "train": (16, 1)}

CONFIGS = {
    # The seed's configuration: bf16-mixed, a shuffled and an unshuffled loader, sanity 2.
    # validation_step returns only the logits: targets from the batch, indices replayed.
    "seed": dict(precision="bf16-mixed", sanity=2, epochs=3, limit=10, interval=1.0,
                 loaders=[("val", True), ("val2", False)], output="logits"),
    # 16-mixed on CPU, no sanity check, two validations per epoch, a dict with its own key
    # names; then trainer.validate(dataloaders=X) over another dataset, and trainer.test over
    # X shuffled (limit_test_batches: all).
    "variants": dict(precision="16-mixed", sanity=0, epochs=2, limit=10, interval=0.5,
                     loaders=[("val", True)], output="dict", validate_after=("x", False),
                     test_after=("x", True), formats=("npz", "pt")),
    # DistributedSamplerWrapper over a WeightedRandomSampler drawing from the global RNG,
    # with and without seed_everything; validation_step returns (preds, target).
    "wrapper_seeded": dict(precision="32-true", sanity=0, epochs=2, limit=10, interval=1.0,
                           loaders=[("val", "weighted")], output="tuple", seed=7),
    "wrapper_unseeded": dict(precision="32-true", sanity=0, epochs=2, limit=10, interval=1.0,
                             loaders=[("val", "weighted")], output="tuple"),
}
WEIGHTED_SAMPLES = 61  # 61 = 4 * 15 + 1: the wrapper pads 3 positions

# Every list a WeightedRandomSampler drew on this rank, in order: the ground truth of what
# the wrapper sharded, observed without changing the sampler's class.
DRAWS = []
_weighted_iter = WeightedRandomSampler.__iter__


def _recording_iter(self):
    drawn = list(_weighted_iter(self))
    DRAWS.append(drawn)
    return iter(drawn)


WeightedRandomSampler.__iter__ = _recording_iter


class Items(Dataset):
    """Item i: (i, its table prediction, its label)."""

    def __init__(self, name):
        n, mult = TABLES[name]
        self.labels = labels_of(n, mult)
        self.preds = predictions_of(self.labels)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return torch.tensor(i), torch.tensor(self.preds[i]), torch.tensor(self.labels[i])


def loader(name, kind):
    data = Items(name)
    if kind == "weighted":
        weights = torch.linspace(1.0, 2.0, len(data))
        sampler = WeightedRandomSampler(weights, WEIGHTED_SAMPLES, replacement=True)
        return DataLoader(data, batch_size=B, sampler=sampler)
    return DataLoader(data, batch_size=B, shuffle=kind)


class Module(L.LightningModule):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.lin = torch.nn.Linear(C, C, bias=False)
        with torch.no_grad():
            self.lin.weight.copy_(torch.eye(C))
        n = len(cfg["loaders"])
        self.confmat = torch.nn.ModuleList(MulticlassConfusionMatrix(C) for _ in range(n))
        # The same metric, but on_validation_epoch_end skips it during the sanity check (a
        # common "don't log during sanity" early return): nothing resets it then.
        self.leaky = torch.nn.ModuleList(MulticlassConfusionMatrix(C) for _ in range(n))
        self.acc = torch.nn.ModuleList(MulticlassAccuracy(C, average="micro")
                                       for _ in range(n))
        self.records, self.current, self.counts = [], None, {}

    def forward(self, p):
        return self.lin(F.one_hot(p, C).float())

    def training_step(self, batch, batch_idx):
        index, p, y = batch
        return self(p).float().sum()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.0)

    def _stage(self):
        return self.trainer.state.fn if self.trainer.state.fn in ("validate", "test") else "fit"

    def on_validation_epoch_start(self):
        t = self.trainer
        key = (self._stage(), t.sanity_checking, t.current_epoch)
        self.counts[key] = self.counts.get(key, 0) + 1
        loaders = t._evaluation_loop._combined_loader.flattened  # the loaders in use
        self.current = {
            "stage": key[0], "sanity": key[1], "epoch": key[2], "val": self.counts[key] - 1,
            "indices": {}, "dtype": None, "autocast": None,
            "acc_updates_at_start": [int(a._update_count) for a in self.acc],
            "leaky_updates_at_start": [int(m._update_count) for m in self.leaky],
            "samplers": [{"type": type(dl.sampler).__name__,
                          "epoch": getattr(dl.sampler, "epoch", None),
                          "seed": getattr(dl.sampler, "seed", None),
                          "dataset": len(dl.dataset)} for dl in loaders],
        }

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        index, p, y = batch
        logits = self(p)
        cur = self.current
        cur["dtype"] = str(logits.dtype)
        cur["autocast"] = torch.is_autocast_enabled("cpu")
        if batch_idx == 0:  # the loader's iterator has started: its inner list is drawn
            cur["draws"], cur["n_draws"] = (DRAWS[-1] if DRAWS else None), len(DRAWS)
        cur["indices"].setdefault(str(dataloader_idx), []).extend(index.tolist())
        d = dataloader_idx
        self.confmat[d].update(logits, y)
        self.leaky[d].update(logits, y)
        self.acc[d].update(logits, y)
        self.log("acc%d" % d, self.acc[d], add_dataloader_idx=False)
        if self.cfg["output"] == "dict":
            # "bad4d" and a missing key feed the two callbacks that must refuse them.
            return {"scores": logits, "gt": y, "loss_like": logits.float().mean(),
                    "bad4d": logits.reshape(len(y), C, 1, 1)}
        if self.cfg["output"] == "tuple":
            return logits, y
        return logits

    def on_validation_epoch_end(self):
        cur, t = self.current, self.trainer
        for d in range(len(t._evaluation_loop._combined_loader.flattened)):
            rec = dict(cur, dl=d, indices=cur["indices"].get(str(d), []))
            rec["local"] = self.confmat[d].confmat.tolist()  # this rank's state, unsynced
            rec["synced"] = self.confmat[d].compute().tolist()  # all_gather + sum
            rec["local_after_compute"] = self.confmat[d].confmat.tolist()
            self.confmat[d].reset()
            if not t.sanity_checking:
                rec["leaky_local"] = self.leaky[d].confmat.tolist()
                rec["leaky_synced"] = self.leaky[d].compute().tolist()
                self.leaky[d].reset()
            self.records.append(rec)
        self._write()

    # trainer.test: the same records, under stage "test".
    def on_test_epoch_start(self):
        self.on_validation_epoch_start()

    def test_step(self, batch, batch_idx, dataloader_idx=0):
        return self.validation_step(batch, batch_idx, dataloader_idx)

    def on_test_epoch_end(self):
        self.on_validation_epoch_end()

    def _write(self):
        out = sys.argv[2]
        path = os.path.join(out, "results_rank%d.json" % self.global_rank)
        with open(path + ".tmp", "w") as f:
            json.dump(self.records, f)
        os.replace(path + ".tmp", path)

    def train_dataloader(self):
        return loader("train", True)

    def val_dataloader(self):
        return [loader(name, kind) for name, kind in self.cfg["loaders"]]


class Logged(L.Callback):
    """What Lightning logged for the metric object: its compute() after each validation."""

    def on_validation_end(self, trainer, pl_module):
        if not trainer.sanity_checking and pl_module.records:
            pl_module.records[-1]["logged_acc0"] = float(trainer.callback_metrics["acc0"])
            pl_module._write()


def main():
    name, out = sys.argv[1], sys.argv[2]
    cfg = CONFIGS[name]
    torch.set_num_threads(1)
    if "seed" in cfg:
        L.seed_everything(cfg["seed"])
    keys = {"prediction": "scores", "target": "gt"} if cfg["output"] == "dict" else None
    recorder = ShardLensRecorder(os.path.join(out, "dumps"), num_classes=C,
                                 formats=cfg.get("formats", ("npz",)))
    # verdict=False: these tests import and diagnose the dumps themselves (tests/python/
    # test_callback_lightning.py tests the verdict).
    callbacks = [ShardLensCallback(recorder, keys=keys, verdict=False), Logged()]
    if cfg["output"] == "dict":  # what the callback cannot read: said once, fit goes on
        for bad in ("bad4d", "nothing"):
            callbacks.append(ShardLensCallback(
                ShardLensRecorder(os.path.join(out, bad), num_classes=C),
                keys={"prediction": bad, "target": "gt"}, verdict=False))
    trainer = L.Trainer(
        accelerator="cpu", devices=W, strategy=DDPStrategy(find_unused_parameters=True),
        precision=cfg["precision"], limit_val_batches=cfg["limit"],
        reload_dataloaders_every_n_epochs=1, num_sanity_val_steps=cfg["sanity"],
        max_epochs=cfg["epochs"], val_check_interval=cfg["interval"],
        callbacks=callbacks,
        logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False, default_root_dir=out)
    module = Module(cfg)
    trainer.fit(module)
    if "validate_after" in cfg:
        x_name, x_shuffle = cfg["validate_after"]
        trainer.validate(module, dataloaders=loader(x_name, x_shuffle), verbose=False)
    if "test_after" in cfg:
        x_name, x_shuffle = cfg["test_after"]
        trainer.test(module, dataloaders=loader(x_name, x_shuffle), verbose=False)
    if trainer.global_rank == 0:
        print("precision plugin: %s" % type(trainer.precision_plugin).__name__, flush=True)


if __name__ == "__main__":
    main()
