import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset
from torchmetrics.classification import MulticlassConfusionMatrix

import shardlens_recorder

accelerator = Accelerator(cpu=True)
g = torch.Generator().manual_seed(0)
data = TensorDataset(torch.randn(1000, 16, generator=g), torch.randint(0, 10, (1000,), generator=g))
model, loader = accelerator.prepare(torch.nn.Linear(16, 10), DataLoader(data, batch_size=64))
accelerator.gather_for_metrics = shardlens_recorder.watch(accelerator, "runs/")  # the one line

confmat = MulticlassConfusionMatrix(num_classes=10, sync_on_compute=False)
model.eval()
with torch.no_grad():
    for x, y in loader:
        preds, refs = accelerator.gather_for_metrics((model(x).argmax(-1), y))
        confmat.update(preds, refs)
print(accelerator.process_index, confmat.compute().sum().item())
