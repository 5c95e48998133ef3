"""One rank of a real Accelerate evaluation (4 CPU processes over gloo): RANK OUT.

The loop is what a user writes, plus the one line
`accelerator.gather_for_metrics = shardlens_recorder.watch(accelerator, OUT/runs)`.
Writes OUT/oracle_rank<r>.json: per evaluation, the dataset items this rank's loader fetched
and the confusion matrix torchmetrics computed from what gather_for_metrics returned.
"""
import json
import os
import sys

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader, Dataset
from torchmetrics.classification import MulticlassConfusionMatrix

import shardlens_recorder

C, N, B = 5, 103, 4
FETCHED = []


def label(i):
    return (i * 7 + i // 11) % C


class Items(Dataset):
    def __len__(self):
        return N

    def __getitem__(self, i):
        FETCHED.append(int(i))
        y = label(i)
        p = y if i % 3 else (y + 1) % C
        return F.one_hot(torch.tensor(p), C).float(), torch.tensor(y)


def main():
    out = sys.argv[1]
    torch.set_num_threads(1)
    accelerator = Accelerator(cpu=True)
    model = torch.nn.Linear(C, C, bias=False)
    with torch.no_grad():
        model.weight.copy_(torch.eye(C))
    model, loader = accelerator.prepare(model, DataLoader(Items(), batch_size=B))
    accelerator.gather_for_metrics = shardlens_recorder.watch(
        accelerator, os.path.join(out, "runs"), fail_on_wrong=os.environ.get("FAIL") == "1")
    records = []
    for evaluation in range(2):
        start = len(FETCHED)
        metric = MulticlassConfusionMatrix(C, sync_on_compute=False)
        model.eval()
        with torch.no_grad():
            for x, y in loader:
                preds, refs = accelerator.gather_for_metrics((model(x).argmax(-1), y))
                metric.update(preds, refs)
        records.append({"fetched": FETCHED[start:], "gathered": metric.compute().tolist()})
    with open(os.path.join(out, "oracle_rank%d.json" % accelerator.process_index), "w") as f:
        json.dump(records, f)
    accelerator.wait_for_everyone()
    torch.distributed.destroy_process_group()  # Gloo's threads stopped before exit


if __name__ == "__main__":
    main()
