"""Token classification under real Accelerate gathers, recorded by shardlens_recorder.watch,
against `shardlens-cli`.

Usage: accelerate_tokens.py SHARDLENS_CLI. Runs in the framework venv (frameworks.py).

Three processes (gloo, CPU) prepare loaders of 41 sequences (and of 7: one round shorter than
3 batches) of 3 to 16 tokens (labels -100 on the first token and on about one in five others,
padded per batch with -100) in batches of 4,
and evaluate them as the Hugging Face course's token-classification loop does: predicted ids,
accelerator.pad_across_processes(dim=1, pad_index=-100) of the ids and of the labels, then one
gather each. Cases:
- map_gather: accelerator.gather, as the course writes it: the last round's even_batches
  copies reach the metric;
- map_gather_for_metrics: the same loop with gather_for_metrics, which cuts them (a loss
  gathered first, as loops that report the eval loss do, passes unrecorded);
- stream_sharded: an IterableDataset, dispatch_batches=False (IterableDatasetShard):
  gather_for_metrics, which knows no length, returns the cycled copies (accelerate#3013);
- stream_dispatched: an IterableDataset dispatched by rank 0 (Accelerate's default; the
  batches padded to 16 tokens, as its concatenation of the ranks' batches needs):
  gather_for_metrics cuts the copies.
The streams pass (index, ids, labels) in one gather (their rows are not replayed). For each
case: every rank's records carry the (label, prediction) tokens of the sequences it evaluated,
the copies flagged; `shardlens-cli import` gives each rank's token matrix, the synced one equal
to what the real gather returned (the copies' tokens counted again where they were), and the
expected one equal to one process counting every sequence once; `simulate --like RUN` with no
other flag equals the run.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import frameworks  # noqa: E402

frameworks.require_venv()

import numpy as np  # noqa: E402

W, B, C = 3, 4, 5
SIZES = (41, 7)  # several rounds; one round, shorter than W * B
IGNORE = -100
MAX_TOKENS = 16
CASES = ("map_gather", "map_gather_for_metrics", "stream_sharded", "stream_dispatched")


def length(i):
    return 3 + (i * 7) % 14


def labels(i):
    y = [(i * 3 + j * 5 + (i * j) % 7) % C for j in range(length(i))]
    return [IGNORE if j == 0 or (i + 2 * j) % 5 == 0 else v for j, v in enumerate(y)]


def predictions(i):
    """The model's predicted ids, fixed per token: right two times in three."""
    return [(v + (1 if (i + j) % 3 == 0 else 0)) % C if v != IGNORE else (i + j) % C
            for j, v in enumerate(labels(i))]


def token_matrix(pairs):
    m = np.zeros((C, C), np.int64)
    for y, p in pairs:
        y, p = np.asarray(y).reshape(-1), np.asarray(p).reshape(-1)
        keep = y != IGNORE
        np.add.at(m, (y[keep], p[keep]), 1)
    return m


def worker(out_dir, cli):
    import torch
    from accelerate import Accelerator
    from accelerate.utils import DataLoaderConfiguration
    from torch.utils.data import DataLoader, Dataset, IterableDataset

    sys.path.insert(0, frameworks.RECORDER_DIR)
    import shardlens_recorder

    def item(i):
        return {"index": i, "labels": torch.tensor(labels(i)),
                "preds": torch.tensor(predictions(i))}

    class Sentences(Dataset):
        def __init__(self, n):
            self.n = n

        def __len__(self):
            return self.n

        def __getitem__(self, i):
            return item(i)

    class SentenceStream(IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return (item(i) for i in range(self.n))

    def collate(items, to=None):
        t = to or max(len(x["labels"]) for x in items)
        out = {"index": torch.tensor([x["index"] for x in items]),
               "labels": torch.full((len(items), t), IGNORE, dtype=torch.long),
               "preds": torch.zeros((len(items), t), dtype=torch.long)}
        for k, x in enumerate(items):
            n = len(x["labels"])
            out["labels"][k, :n], out["preds"][k, :n] = x["labels"], x["preds"]
        return out

    torch.set_num_threads(1)
    rank = int(os.environ["RANK"])
    results = {}
    for name, n in ((name, n) for n in SIZES for name in CASES):
        stream = name.startswith("stream")
        config = DataLoaderConfiguration(dispatch_batches=False) if name == "stream_sharded" \
            else DataLoaderConfiguration()
        acc = Accelerator(cpu=True, dataloader_config=config)
        fixed = name == "stream_dispatched"
        loader = acc.prepare(DataLoader(
            SentenceStream(n) if stream else Sentences(n), batch_size=B,
            collate_fn=(lambda items: collate(items, MAX_TOKENS)) if fixed else collate))
        method = "gather" if name == "map_gather" else "gather_for_metrics"
        original = getattr(acc, method)
        key = "%s_n%d" % (name, n)
        setattr(acc, method, shardlens_recorder.watch(
            acc, os.path.join(out_dir, key), cli=cli, verdict=rank == 0, gather=method))
        gather = getattr(acc, method)
        own, gathered = [], []
        for batch in loader:
            p, y = batch["preds"], batch["labels"]  # the model's argmax, the batch's labels
            own += [[int(i), yy.tolist(), pp.tolist()] for i, yy, pp in zip(batch["index"], y, p)]
            p = acc.pad_across_processes(p, dim=1, pad_index=IGNORE)
            y = acc.pad_across_processes(y, dim=1, pad_index=IGNORE)
            if stream:
                index_g, p_g, y_g = gather((batch["index"], p, y))
            else:  # the course's two gathers (and, in one case, a loss's before them)
                if name == "map_gather_for_metrics":
                    gather(torch.tensor(0.5).repeat(len(p)))
                p_g = gather(p)
                y_g = gather(y)
            gathered += [[yy.tolist(), pp.tolist()] for yy, pp in zip(y_g, p_g)]
        verdicts = [v.get("line") for v in gather.verdicts] if rank == 0 else []
        setattr(acc, method, original)
        results[key] = {"own": own, "gathered": gathered, "verdicts": verdicts}
        acc.wait_for_everyone()
    with open(os.path.join(out_dir, "rank%d.json" % rank), "w") as f:
        json.dump(results, f)
    acc.wait_for_everyone()
    torch.distributed.destroy_process_group()


def launch(out_dir, cli):
    procs = frameworks.rank_processes(__file__, W, [out_dir, cli])
    logs = [p.communicate(timeout=240)[0] for p in procs]
    if any(p.returncode for p in procs):
        raise AssertionError("the Accelerate processes failed: %s" % [g[-2000:] for g in logs])
    return [json.load(open(os.path.join(out_dir, "rank%d.json" % r))) for r in range(W)], logs


def dump_records(path):
    """(index, flags, sorted cells) of each record of a dump."""
    d = np.load(path)
    ends = np.cumsum(d["cells_per_record"])
    out = []
    for k, index in enumerate(d["index"].tolist()):
        at = slice(ends[k] - d["cells_per_record"][k], ends[k])
        out.append((index, int(d["flags"][k]), sorted(zip(
            d["cell_target"][at].tolist(), d["cell_prediction"][at].tolist(),
            d["cell_count"][at].tolist()))))
    return out, d


def cells_of(y, p):
    m = token_matrix([(y, p)])
    return sorted((int(t), int(q), int(m[t, q])) for t, q in zip(*np.nonzero(m)))


def check_case(cli, d, case, n, ranks, failures):
    """Compares what Accelerate gathered with the dumps, their import and simulate --like."""
    from shardlens_recorder import PADDING
    name = "%s_n%d" % (case, n)
    reference = token_matrix([(labels(i), predictions(i)) for i in range(n)])
    real = token_matrix(ranks[0][name]["gathered"])
    if any(token_matrix(ranks[r][name]["gathered"]).tolist() != real.tolist()
           for r in range(W)):
        failures.append("%s: the ranks gathered differently" % name)
    runs = os.path.join(d, name)
    dumps = [os.path.join(runs, "eval_epoch0_rank%d.npz" % r) for r in range(W)]
    copies, per_rank = [], []
    for r, path in enumerate(dumps):
        records, dump = dump_records(path)
        own = ranks[r][name]["own"]
        if [rec[0] for rec in records] != [i for i, _, _ in own]:
            failures.append("%s rank %d: records %s, evaluated %s" % (
                name, r, [rec[0] for rec in records], [i for i, _, _ in own]))
            continue
        for rec, (i, y, p) in zip(records, own):
            if rec[2] != cells_of(y, p):
                failures.append("%s rank %d: sequence %d's cells %s, its tokens %s" % (
                    name, r, i, rec[2], cells_of(y, p)))
            if rec[1] & PADDING:
                copies.append((y, p))
        if dump["reported"].tolist() != real.tolist():
            failures.append("%s rank %d: reported %s, gathered %s" % (
                name, r, dump["reported"].tolist(), real.tolist()))
        per_rank.append(token_matrix([(y, p) for _, y, p in own]).tolist())
    copies_gathered = len(ranks[0][name]["gathered"]) - n
    cut = case in ("map_gather_for_metrics", "stream_dispatched")
    want = reference if cut else reference + token_matrix(copies)
    if real.tolist() != want.tolist() or copies_gathered != (0 if cut else len(copies)):
        failures.append("%s: gathered %d sequences (%d copies flagged): %s, expected %s" % (
            name, len(ranks[0][name]["gathered"]), len(copies), real.tolist(), want.tolist()))
    run = os.path.join(d, name + ".slrun")
    proc = subprocess.run([cli, "import", *dumps, "--out", run, "--format", "json"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        failures.append("%s: import exited %d: %s" % (name, proc.returncode, proc.stderr[-600:]))
        return 3
    report = json.loads(proc.stdout)
    for key, value in (("per_rank", per_rank), ("synced", real.tolist()),
                       ("expected", reference.tolist())):
        if report.get(key) != value:
            failures.append("%s: imported %s %s, real %s" % (name, key, report.get(key), value))
    like = subprocess.run([cli, "simulate", "--like", run], capture_output=True, text=True)
    if like.returncode != 0 or "the simulation EQUALS the run" not in like.stdout:
        failures.append("%s: simulate --like exited %d: %s" % (
            name, like.returncode, (like.stdout + like.stderr)[-800:]))
    print("%s: %d sequences gathered for %d (%d copies), %d tokens counted for %d; accuracy "
          "%.4f reported, %.4f true; rank 0 said: %s" % (
              name, len(ranks[0][name]["gathered"]), n, len(copies), real.sum(),
              reference.sum(), np.trace(real) / real.sum(),
              np.trace(reference) / reference.sum(), ranks[0][name]["verdicts"]))
    return 6


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3])
        return 0
    cli = os.path.abspath(sys.argv[1])
    sys.path.insert(0, frameworks.RECORDER_DIR)
    start = time.time()
    failures, checks = [], 0
    with tempfile.TemporaryDirectory() as d:
        ranks, _ = launch(d, cli)
        for n in SIZES:
            for case in CASES:
                checks += check_case(cli, d, case, n, ranks, failures)
    for f in failures:
        print("FAIL:", f)
    print("%d cases, %d checks, %d failures, %.1f s" % (
        len(CASES) * len(SIZES), checks, len(failures), time.time() - start))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
