"""One rank of real Hugging Face Trainer token-classification evaluations (CPU processes over
gloo): OUT [CASE...].

A tiny BertForTokenClassification built from a config (random weights, no download) over
sequences of 3 to 16 tokens made here, labelled per token with -100 on the first token and on
about one in five others (as a tokenizer's sub-word continuations are), padded in each batch
by the collator with -100 labels and an attention mask. Every case is what a user writes plus
one ShardLens line; each writes OUT/<case>/oracle_rank<r>.json with, per evaluation, what the
framework computed, seen without ShardLens:
- "rows": this rank's evaluated sequences in order, each [dataset index, labels, predicted
  ids] as the model was given them (a forward hook; the first two token ids encode the index);
- "gathered": the token confusion matrix of what compute_metrics was given (EvalPrediction's
  label_ids and the argmax of its predictions, -100 left out), "gathered_rows" how many
  sequences it held, and "accuracy" the token accuracy compute_metrics returned;
- rank 0's "reference": the token confusion matrix of one process running the model over each
  sequence alone, in order (no Trainer, no padding).
"""
import json
import os
import sys

import numpy as np
import torch
from torch.utils.data import Dataset, IterableDataset
from transformers import BertConfig, BertForTokenClassification, Trainer, TrainingArguments

import shardlens_recorder

C, N, B, V = 5, 41, 4, 100  # classes, sequences, batch per device, vocabulary
IGNORE = -100


def length(i):
    return 3 + (i * 7) % 14


def tokens(i):
    g = torch.Generator().manual_seed(5000 + i)
    rest = torch.randint(2, V, (length(i) - 2,), generator=g)
    return torch.cat([torch.tensor([2 + i // (V - 2), 2 + i % (V - 2)]), rest])


def labels(i):
    g = torch.Generator().manual_seed(9000 + i)
    y = torch.randint(0, C, (length(i),), generator=g)
    y[torch.rand(length(i), generator=g) < 0.2] = IGNORE
    y[0] = IGNORE
    return y


def item(i):
    return {"input_ids": tokens(i), "labels": labels(i)}


def index_of(ids):
    return int(ids[0] - 2) * (V - 2) + int(ids[1] - 2)


def collate(items, to=None):
    """Pads each batch to its longest sequence (or to `to` tokens): token 0, attention 0,
    label -100."""
    t = to or max(len(x["input_ids"]) for x in items)
    ids = torch.zeros(len(items), t, dtype=torch.long)
    mask = torch.zeros(len(items), t, dtype=torch.long)
    y = torch.full((len(items), t), IGNORE, dtype=torch.long)
    for k, x in enumerate(items):
        n = len(x["input_ids"])
        ids[k, :n], mask[k, :n], y[k, :n] = x["input_ids"], 1, x["labels"]
    return {"input_ids": ids, "attention_mask": mask, "labels": y}


class Sentences(Dataset):
    def __len__(self):
        return N

    def __getitem__(self, i):
        if not 0 <= i < N:
            raise IndexError(i)
        return item(i)


class SentenceStream(IterableDataset):
    """A stream (no length), sequences in index order."""

    def __iter__(self):
        return (item(i) for i in range(N))


def confusion(y, p):
    y, p = np.asarray(y).reshape(-1), np.asarray(p).reshape(-1)
    keep = y != IGNORE
    m = np.zeros((C, C), np.int64)
    np.add.at(m, (y[keep], p[keep]), 1)
    return m.tolist()


def steps(x):
    """EvalPrediction's field as a list of arrays: whole, or one a step (concat off)."""
    if isinstance(x, (list, tuple)):
        return [as_array(v) for v in x]
    return [as_array(x)]


def as_array(x):
    return x.detach().cpu().numpy() if torch.is_tensor(x) else np.asarray(x)


def confusion_of(pairs):
    """The token matrix of (labels, logits or ids) pairs: argmax of logits, -100 left out."""
    m = np.zeros((C, C), np.int64)
    for y, p in pairs:
        ids = p.argmax(-1) if p.ndim == 3 else p
        m += np.array(confusion(y, ids))
    return m.tolist()


def build_model():
    torch.manual_seed(0)
    config = BertConfig(vocab_size=V, hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32,
                        max_position_embeddings=32, num_labels=C)
    return BertForTokenClassification(config).eval()


def argmax(logits, labels):
    return logits.argmax(-1)


def reference(model):
    ys, ps = [], []
    with torch.no_grad():
        for i in range(N):
            logits = model(input_ids=tokens(i)[None]).logits[0]
            ys.append(labels(i).numpy())
            ps.append(logits.argmax(-1).numpy())
    return confusion(np.concatenate(ys), np.concatenate(ps))


def collate_to_max(items):
    """Padding to the model's length, as a stream dispatched by rank 0 needs: Accelerate's
    DataLoaderDispatcher concatenates the ranks' batches before slicing them, which fails on
    batches of different lengths."""
    return collate(items, MAX_TOKENS)


MAX_TOKENS = 16
CASES = {
    # name: (dataset, collator, TrainingArguments extras, also predict)
    "map": (Sentences, collate, {}, True),
    # per-step lists, and the logits reduced to ids before the gather (the memory saver
    # token-classification scripts use)
    "map_steps": (Sentences, collate, {"eval_do_concat_batches": False}, False),
    "map_batch_metrics": (Sentences, collate, {"batch_eval_metrics": True}, False),
    "stream_dispatched": (SentenceStream, collate_to_max, {}, False),
    "stream_sharded": (SentenceStream, collate,
                       {"accelerator_config": {"dispatch_batches": False}}, False),
}


def run_case(out, name, model):
    dataset_class, collator, extra, predict = CASES[name]
    case_dir = os.path.join(out, name)
    rows, seen = [], []

    def forward_hook(module, args, kwargs, output):
        for ids, y, p in zip(kwargs["input_ids"], kwargs["labels"], output.logits.argmax(-1)):
            rows[-1].append([index_of(ids), y.tolist(), p.tolist()])

    def compute_metrics(ep, compute_result=None):  # batch by batch with batch_eval_metrics
        seen.extend(zip(steps(ep.label_ids), steps(ep.predictions)))
        m = np.array(confusion_of(seen))
        return {"token_accuracy": float(np.trace(m) / m.sum())}

    args = TrainingArguments(output_dir=os.path.join(case_dir, "trainer"), report_to=[],
                             per_device_eval_batch_size=B, use_cpu=True, disable_tqdm=True,
                             **extra)
    trainer = Trainer(model=model, args=args, eval_dataset=dataset_class(),
                      data_collator=collator, compute_metrics=compute_metrics,
                      preprocess_logits_for_metrics=argmax if name == "map_steps" else None)
    shardlens_recorder.watch(trainer, os.path.join(case_dir, "runs"))
    handle = model.register_forward_hook(forward_hook, with_kwargs=True)
    records = []
    for what in ("evaluate", "predict") if predict else ("evaluate",):
        rows.append([])
        seen.clear()
        if what == "evaluate":
            metrics = trainer.evaluate()
            pairs = list(seen)
            accuracy = metrics["eval_token_accuracy"]
        else:
            output = trainer.predict(dataset_class())
            pairs = list(zip(steps(output.label_ids), steps(output.predictions)))
            accuracy = output.metrics["test_token_accuracy"]
        records.append({"rows": rows[-1], "gathered": confusion_of(pairs),
                        "gathered_rows": sum(len(y) for y, _ in pairs), "accuracy": accuracy})
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
