"""One real Lightning DDP validation (CPU ranks over gloo) of a segmentation module that logs
its mIoU two ways: the metric's compute() (synced by torchmetrics), and each rank's own mIoU
with self.log(..., sync_dist=True), the per-rank-mean mistake. ShardLensCallback records it.

Usage: task_metrics_lightning_worker.py WORLD OUT. Lightning's launcher re-runs this script
for the other ranks; rank 0 writes OUT/logged.json, what trainer.validate() returned.
"""
import json
import os
import sys

import torch
import lightning.pytorch as L
from torch.utils.data import DataLoader, Dataset
from torchmetrics.classification import MulticlassJaccardIndex

C, H, W, IGNORE, N = 5, 12, 16, 255, 41  # 41 images: not a multiple of 2 or 3 ranks


def target(i):
    """Bands of classes whose heights depend on the index; ignored pixels on a left strip."""
    g = torch.Generator().manual_seed(i)
    t = torch.zeros(H, W, dtype=torch.int64)
    cuts = sorted(torch.randint(0, H, (2,), generator=g).tolist())
    classes = torch.randint(0, C, (3,), generator=g).tolist()
    t[:cuts[0]], t[cuts[0]:cuts[1]], t[cuts[1]:] = classes
    t[:, :i % 5] = IGNORE
    return t


def prediction(i):
    """The target with a block of pixels moved to another class; ignored pixels predicted."""
    p = target(i).clone()
    p[p == IGNORE] = i % C
    r, c, size = (i * 3) % (H - 4), (i * 7) % (W - 4), 2 + i % 3
    p[r:r + size, c:c + size] = (p[r:r + size, c:c + size] + 1 + i % 2) % C
    return p


class Images(Dataset):
    def __len__(self):
        return N

    def __getitem__(self, i):
        logits = torch.nn.functional.one_hot(prediction(i), C).permute(2, 0, 1).float()
        return logits, target(i)


class Module(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(1))
        self.iou = MulticlassJaccardIndex(C, ignore_index=IGNORE)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.iou.update(x * self.scale.detach(), y)

    def on_validation_epoch_end(self):
        # This rank's own mIoU: the same metric's state, computed without its sync.
        own = MulticlassJaccardIndex(C, ignore_index=IGNORE, sync_on_compute=False)
        own.confmat = self.iou.confmat.clone()
        own._update_count = 1
        self.log("miou_rank_mean", own.compute(), sync_dist=True)
        self.log("miou", self.iou.compute())
        self.iou.reset()


def main():
    world, out = int(sys.argv[1]), sys.argv[2]
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    from shardlens_recorder import ShardLensCallback
    trainer = L.Trainer(accelerator="cpu", devices=world, strategy="ddp", logger=False,
                        callbacks=[ShardLensCallback(os.path.join(out, "runs"))],
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, default_root_dir=out)
    logged = trainer.validate(Module(), dataloaders=DataLoader(Images(), batch_size=4),
                              verbose=False)
    if trainer.global_rank == 0:
        with open(os.path.join(out, "logged.json"), "w") as f:
            json.dump(logged, f)


if __name__ == "__main__":
    main()
