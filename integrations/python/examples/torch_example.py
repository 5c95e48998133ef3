import os

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from shardlens_recorder import IndexedDataset, ShardLensRecorder

dist.init_process_group("gloo")  # RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT from torchrun
g = torch.Generator().manual_seed(0)
labels = torch.randint(0, 10, (1000,), generator=g)
data = IndexedDataset(TensorDataset(torch.randn(1000, 16, generator=g), labels))
if dist.get_rank() == 0:  # the true label of every dataset index, for `import --dataset npy:`
    os.makedirs("runs", exist_ok=True)
    np.save("runs/labels.npy", labels.numpy())
loader = DataLoader(data, batch_size=64, sampler=DistributedSampler(data, shuffle=True))
model = torch.nn.Linear(16, 10)
# loader: its sampler, batch size and drop_last; sync: how confmat is synced (below)
rec = ShardLensRecorder("runs", num_classes=10, loader=loader, sync="all-reduce")
for epoch in range(2):
    loader.sampler.set_epoch(epoch)  # the recorder takes the epoch from sampler.epoch
    rec.reset()
    confmat = torch.zeros(10, 10, dtype=torch.int64)
    with torch.no_grad():
        for index, x, y in loader:
            pred = model(x).argmax(1)  # one argmax, for the matrix and the recorder
            confmat += torch.bincount(y * 10 + pred, minlength=100).reshape(10, 10)
            rec.update(index, y, pred)  # kept as tensors: no host transfer per batch
    dist.all_reduce(confmat)  # the matrix this evaluation reports
    rec.set_reported(confmat)
    rec.save()  # runs/eval_epoch<e>_rank<r>.npz
dist.destroy_process_group()
# then: shardlens-cli import runs/eval_epoch1_rank*.npz --dataset npy:runs/labels.npy --out e1.slrun
#       shardlens-cli diagnose --run e1.slrun
