import numpy as np
import torch
from torch.utils.data import Dataset
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

import shardlens_recorder


class Reviews(Dataset):  # token ids and a label per review (no tokenizer, nothing downloaded)
    def __init__(self, n=250, classes=3):
        g = torch.Generator().manual_seed(0)
        self.input_ids = torch.randint(1, 100, (n, 16), generator=g)
        self.labels = torch.randint(0, classes, (n,), generator=g)  # read by ShardLens

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.input_ids[i], "labels": self.labels[i]}


def accuracy(p):
    return {"accuracy": float((np.argmax(p.predictions, -1) == p.label_ids).mean())}


torch.manual_seed(0)  # the same weights on every rank, as a checkpoint loaded by each
config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=64, num_labels=3)
args = TrainingArguments("out", per_device_eval_batch_size=16, use_cpu=True, report_to=[])
trainer = Trainer(model=BertForSequenceClassification(config), args=args,
                  eval_dataset=Reviews(), compute_metrics=accuracy)
shardlens_recorder.watch(trainer, "runs/")  # the one line
print(trainer.accelerator.process_index, trainer.evaluate()["eval_accuracy"])
