import numpy as np
import torch
from torch.utils.data import Dataset
from transformers import BertConfig, BertForTokenClassification, Trainer, TrainingArguments

import shardlens_recorder


class Sentences(Dataset):  # token ids and a tag per token (no tokenizer, nothing downloaded)
    def __init__(self, n=250, tags=5):
        g = torch.Generator().manual_seed(0)
        lengths = torch.randint(4, 17, (n,), generator=g)
        self.input_ids = [torch.randint(1, 100, (k,), generator=g) for k in lengths]
        self.labels = [torch.randint(0, tags, (k,), generator=g) for k in lengths]
        for y in self.labels:
            y[0] = -100  # a [CLS]-like token, not scored

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.input_ids[i], "labels": self.labels[i]}


def pad(items):  # each batch to its longest sentence: token 0, label -100 (not scored)
    t = max(len(x["input_ids"]) for x in items)
    out = {"input_ids": torch.zeros(len(items), t, dtype=torch.long),
           "attention_mask": torch.zeros(len(items), t, dtype=torch.long),
           "labels": torch.full((len(items), t), -100)}
    for k, x in enumerate(items):
        n = len(x["input_ids"])
        out["input_ids"][k, :n], out["attention_mask"][k, :n] = x["input_ids"], 1
        out["labels"][k, :n] = x["labels"]
    return out


def token_accuracy(p):
    scored = p.label_ids != -100  # the collator's and the Trainer's padding is -100 too
    return {"accuracy": float((np.argmax(p.predictions, -1) == p.label_ids)[scored].mean())}


torch.manual_seed(0)  # the same weights on every rank, as a checkpoint loaded by each
config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=64, num_labels=5)
args = TrainingArguments("out", per_device_eval_batch_size=16, use_cpu=True, report_to=[])
trainer = Trainer(model=BertForTokenClassification(config), args=args, data_collator=pad,
                  eval_dataset=Sentences(), compute_metrics=token_accuracy)
shardlens_recorder.watch(trainer, "runs/")  # the one line
print(trainer.accelerator.process_index, trainer.evaluate()["eval_accuracy"])
