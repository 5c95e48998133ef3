"""One real Lightning DDP Trainer (CPU ranks over gloo) validating a segmentation and a
multilabel module that knows nothing of ShardLens: seg_lightning_worker.py CONFIG OUT.

Three validation loaders (seg_common.py): 0, segmentation shuffled, updating
MulticlassJaccardIndex(ignore_index=255) and MulticlassAccuracy; 1, segmentation sequential,
updating MulticlassConfusionMatrix(ignore_index=255, normalize="true") of one class more; 2,
multilabel, updating MultilabelConfusionMatrix(ignore_index=-1) and MultilabelF1Score. The
Trainer gets
ShardLensCallback(OUT/runs) and nothing else changes.

Lightning's launcher re-runs this script for the other ranks. Each rank writes
OUT/oracle_rank<r>.json: per validation and loader, the dataset items its loader fetched (in
order, from __getitem__), the metric's own confusion-matrix state before sync, that state
summed over the ranks by dist.all_reduce (what the metric's sync amounts to), and compute().
"""
import json
import os
import sys
import traceback

import torch
import torch.distributed as dist
import lightning.pytorch as L
from torch.utils.data import DataLoader, Dataset
from torchmetrics.classification import (MulticlassAccuracy, MulticlassConfusionMatrix,
                                         MulticlassJaccardIndex, MultilabelConfusionMatrix,
                                         MultilabelF1Score)

import seg_common as S

FETCHED = {0: [], 1: [], 2: []}  # loader -> dataset indices served on this rank, in order

CONFIGS = {
    # 3 ranks: 203 images (2 padding positions... 203 = 3 * 67 + 2: 1 duplicate), batch 4,
    # limit 12 batches (of 17); 97 images sequential (2 duplicates), 101 multilabel items.
    "three": dict(world=3, limit=12, epochs=2, batch=(4, 8, 8), sanity=0),
    # 2 ranks, no limit: every image once, the odd one duplicated; a sanity check of 2
    # batches first (recorded, flagged SANITY).
    "two": dict(world=2, limit=1.0, epochs=1, batch=(6, 8, 16), sanity=2),
}


class Seg(Dataset):
    def __init__(self, loader, watched=True):
        self.loader, self.n, self.watched = loader, S.SEG_SIZES[loader], watched

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.watched:
            FETCHED[self.loader].append(int(i))
        return S.seg_logits(i), S.seg_target(i)


class Multilabel(Dataset):
    def __len__(self):
        return S.ML_SIZE

    def __getitem__(self, i):
        FETCHED[2].append(int(i))
        return S.ml_logits(i), S.ml_target(i)


class Module(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(1))
        self.iou = MulticlassJaccardIndex(S.C, ignore_index=S.IGNORE)
        self.pixel_acc = MulticlassAccuracy(S.C, ignore_index=S.IGNORE, average="micro")
        self.confmat = MulticlassConfusionMatrix(S.C1, ignore_index=S.IGNORE, normalize="true")
        self.ml_confmat = MultilabelConfusionMatrix(S.L, ignore_index=S.ML_IGNORE)
        self.ml_f1 = MultilabelF1Score(S.L, ignore_index=S.ML_IGNORE)

    def training_step(self, batch, batch_idx):
        return (self.scale * 0.0).sum()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.0)

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        x, y = batch
        logits = x * self.scale.detach()
        if dataloader_idx == 0:
            self.iou.update(logits, y)
            self.pixel_acc.update(logits, y)
        elif dataloader_idx == 1:
            self.confmat.update(S.with_extra_class(logits), y)
        else:
            self.ml_confmat.update(logits, y)
            self.ml_f1.update(logits, y)

    def on_validation_epoch_end(self):
        self.log("val_miou", self.iou.compute())
        for m in (self.iou, self.pixel_acc, self.confmat, self.ml_confmat, self.ml_f1):
            m.reset()


class Oracle(L.Callback):
    """Listed before ShardLensCallback: its epoch-end hook reads the metrics first."""

    def __init__(self, out):
        self.out, self.records, self.start = out, [], None

    def on_validation_epoch_start(self, trainer, pl_module):
        self.start = {d: len(v) for d, v in FETCHED.items()}

    def on_validation_epoch_end(self, trainer, pl_module):
        rec = {"epoch": trainer.current_epoch, "sanity": trainer.sanity_checking,
               "loaders": {}}
        for d, m in ((0, pl_module.iou), (1, pl_module.confmat), (2, pl_module.ml_confmat)):
            local = m.confmat.clone()
            synced = local.clone()
            dist.all_reduce(synced)
            rec["loaders"][d] = {"fetched": FETCHED[d][self.start[d]:],
                                 "local": local.tolist(), "synced": synced.tolist()}
        rec["loaders"][0]["miou"] = float(pl_module.iou.compute())
        rec["loaders"][1]["compute"] = pl_module.confmat.compute().tolist()
        rec["loaders"][2]["compute"] = pl_module.ml_confmat.compute().tolist()
        self.records.append(rec)
        with open(os.path.join(self.out, "oracle_rank%d.json" % trainer.global_rank), "w") as f:
            json.dump(self.records, f)


def main():
    name, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    cfg = CONFIGS[name]
    torch.set_num_threads(1)
    from shardlens_recorder import ShardLensCallback
    trainer = L.Trainer(
        accelerator="cpu", devices=cfg["world"], strategy="ddp",
        limit_val_batches=cfg["limit"], num_sanity_val_steps=cfg["sanity"],
        max_epochs=cfg["epochs"],
        limit_train_batches=1, callbacks=[Oracle(out), ShardLensCallback(
            os.path.join(out, "runs"))],
        logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False, default_root_dir=out)
    b0, b1, b2 = cfg["batch"]
    val = [DataLoader(Seg(0), batch_size=b0, shuffle=True),
           DataLoader(Seg(1), batch_size=b1, shuffle=False),
           DataLoader(Multilabel(), batch_size=b2, shuffle=False)]
    try:
        trainer.fit(Module(), train_dataloaders=DataLoader(Seg(1, watched=False), batch_size=4),
                    val_dataloaders=val)
    except BaseException:
        traceback.print_exc()
        raise


if __name__ == "__main__":
    main()
