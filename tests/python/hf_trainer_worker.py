"""One rank of real Hugging Face Trainer evaluations (CPU processes over gloo): OUT.

Sequence classification with a tiny BERT built from a config (random weights, no download,
token ids made here). Every case is what a user writes plus one ShardLens line; each writes
OUT/<case>/oracle_rank<r>.json with, per evaluation (evaluate, then predict), what the
framework computed, seen without ShardLens:
- "rows": this rank's evaluated rows in order (dataset index, label, argmax of the logits),
  read by a forward hook on the model from the token ids (the first two encode the index);
- "gathered": the confusion matrix of what compute_metrics was given (EvalPrediction, whole
  or batch by batch) or predict() returned, and "gathered_rows" its length;
- rank 0's "reference": the confusion matrix of one process running the model over the
  dataset in order (no Trainer).
"""
import json
import os
import sys

import numpy as np
import torch
from torch.utils.data import Dataset, IterableDataset
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

import shardlens_recorder

C, N, B, V, T = 3, 103, 4, 64, 8  # classes, samples, batch per device, vocabulary, tokens


def tokens(i):
    g = torch.Generator().manual_seed(1000 + i)
    rest = torch.randint(2, V, (T - 2,), generator=g)
    return torch.cat([torch.tensor([2 + i // V, i % V]), rest])


def label(i):
    return (i * 7 + i // 5) % C


def item(i):
    return {"input_ids": tokens(i), "labels": label(i)}


class Reviews(Dataset):
    """Map-style; `labels` lets ShardLens read the true class counts."""
    labels = [label(i) for i in range(N)]

    def __len__(self):
        return N

    def __getitem__(self, i):
        if not 0 <= i < N:  # the end of `for x in dataset`, as for a list
            raise IndexError(i)
        return item(i)


class ReviewStream(IterableDataset):
    """A stream (no length), items in index order."""

    def __iter__(self):
        return (item(i) for i in range(N))


def index_of(ids):
    return int(ids[0] - 2) * V + int(ids[1])


def confusion(labels, preds):
    m = np.zeros((C, C), np.int64)
    np.add.at(m, (np.asarray(labels).reshape(-1), np.asarray(preds).reshape(-1)), 1)
    return m.tolist()


def as_array(x):
    """EvalPrediction's field: an array, or a list of per-step arrays (concat off)."""
    if isinstance(x, (list, tuple)):
        return np.concatenate([as_array(v) for v in x])
    return x.detach().cpu().numpy() if torch.is_tensor(x) else np.asarray(x)


def build_model():
    torch.manual_seed(0)
    config = BertConfig(vocab_size=V + 4, hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=T,
                        num_labels=C)
    return BertForSequenceClassification(config).eval()


def reference(model):
    with torch.no_grad():
        logits = model(input_ids=torch.stack([tokens(i) for i in range(N)])).logits
    return confusion([label(i) for i in range(N)], logits.argmax(-1))


CASES = {
    # name: (dataset, hook, TrainingArguments extras)
    "map_concat": (Reviews, "watch", {}),
    "map_lists": (Reviews, "callback", {"eval_do_concat_batches": False}),
    "map_batch_metrics": (Reviews, "watch", {"batch_eval_metrics": True}),
    "stream_dispatched": (ReviewStream, "watch", {}),
    "stream_sharded": (ReviewStream, "watch",
                       {"accelerator_config": {"dispatch_batches": False}}),
}


def run_case(out, name, model):
    dataset_class, hook, extra = CASES[name]
    case_dir = os.path.join(out, name)
    rows, seen = [], []

    def forward_hook(module, args, kwargs, output):
        for ids, y, p in zip(kwargs["input_ids"], kwargs["labels"], output.logits.argmax(-1)):
            rows[-1].append([index_of(ids), int(y), int(p)])

    def compute_metrics(ep, compute_result=None):
        seen.append((as_array(ep.label_ids), as_array(ep.predictions).argmax(-1)))
        return {"n": float(sum(len(y) for y, _ in seen))}

    args = TrainingArguments(output_dir=os.path.join(case_dir, "trainer"), report_to=[],
                             per_device_eval_batch_size=B, use_cpu=True, disable_tqdm=True,
                             **extra)
    runs = os.path.join(case_dir, "runs")
    callbacks = [shardlens_recorder.ShardLensTrainerCallback(runs)] if hook == "callback" \
        else None
    trainer = Trainer(model=model, args=args, eval_dataset=dataset_class(),
                      compute_metrics=compute_metrics, callbacks=callbacks)
    if hook == "watch":
        shardlens_recorder.watch(trainer, runs)
    handle = model.register_forward_hook(forward_hook, with_kwargs=True)
    records = []
    for what in ("evaluate", "predict"):
        rows.append([])
        seen.clear()
        if what == "evaluate":
            trainer.evaluate()
            labels = np.concatenate([y for y, _ in seen])
            preds = np.concatenate([p for _, p in seen])
        else:
            output = trainer.predict(dataset_class())
            labels, preds = as_array(output.label_ids), as_array(output.predictions).argmax(-1)
        records.append({"rows": rows[-1], "gathered": confusion(labels, preds),
                        "gathered_rows": int(len(labels))})
    handle.remove()
    rank = trainer.accelerator.process_index
    if rank == 0:
        records[0]["reference"] = reference(model)
    with open(os.path.join(case_dir, "oracle_rank%d.json" % rank), "w") as f:
        json.dump(records, f)
    trainer.accelerator.wait_for_everyone()


def main():
    out = sys.argv[1]
    torch.set_num_threads(1)
    model = build_model()
    for name in sys.argv[2:] or CASES:
        run_case(out, name, model)
    torch.distributed.destroy_process_group()  # Gloo's threads stopped before exit


if __name__ == "__main__":
    main()
