"""The lessons of many counts a sample (resources/lessons: voc-padding-miou, ade20k-batch-limit,
ade20k-rank-mean-miou, voc-unsynced, conll-plain-gather) measured with the real
frameworks, and ShardLens's simulation of each against them.

Usage: dense_lessons.py SHARDLENS_CLI [--print]. Runs in the framework venv (frameworks.py).

For each lesson, `shardlens-cli simulate --preset NAME --save-run` writes the run: every
rank's records with their cells (each image's (true, predicted) pixel histogram, each
sentence's tokens). From the cells of each dataset index the test builds the sample as the
tensors a model and its labels would give: 1-D target and prediction tensors whose bincount
is the sample's cells, plus ignored pixels (255) or tokens (-100) that must not count. Then:

- segmentation: every rank iterates a DataLoader over torch's own DistributedSampler (num_replicas,
  rank, shuffle, seed, set_epoch), stopping after limit_val_batches batches as Lightning's
  evaluation loop does, and updates a real torchmetrics MulticlassJaccardIndex (whose state is
  MulticlassConfusionMatrix's confmat) with each image of each batch; the synced state is the
  ranks' states summed (dist_reduce_fx="sum"), or rank 0's own when the metric does not sync;
  the true one a single metric fed every image once. The big metrics count without
  ignore_index (its mask over every pixel is most of an update's time); a metric with
  ignore_index=255 fed 255 pixels too is checked to hold the same state on 20 images;
- tokens: Accelerate's own BatchSamplerShard deals the batches of each process (even_batches);
  accelerator.gather returns every process's batch each step, gather_for_metrics cuts the last
  step to len(dataset) % (batch size x processes) rows, as Accelerate's gradient state does
  (accelerator.py); a real MulticlassConfusionMatrix(ignore_index=-100) counts the tokens.

Each rank's state, the synced and the true matrix must equal ShardLens's per-rank, synced and
expected matrices exactly, ShardLens's reported, true and per-rank-mean mIoU and its IoUs
(`simulate --format json`, task_metrics) torchmetrics' compute() of them, and each lesson's
text must quote the mIoU, IoU and counts measured here (--print prints them; --only=A,B
measures those lessons alone).
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import frameworks  # noqa: E402

frameworks.require_venv()

import numpy as np  # noqa: E402
import torch  # noqa: E402
from accelerate.data_loader import BatchSamplerShard  # noqa: E402
from torch.utils.data import BatchSampler, DataLoader, DistributedSampler  # noqa: E402
from torch.utils.data import SequentialSampler  # noqa: E402
from torchmetrics.classification import MulticlassConfusionMatrix  # noqa: E402
from torchmetrics.classification import MulticlassJaccardIndex  # noqa: E402
from torchmetrics.functional.classification import multiclass_accuracy  # noqa: E402
from torchmetrics.functional.classification import multiclass_f1_score  # noqa: E402

LESSONS = os.path.join(frameworks.ROOT, "resources", "lessons")
SEG_IGNORE = 255
TOKEN_IGNORE = -100
# Ignored pixels / tokens added to each sample: torchmetrics must leave them out as ShardLens
# never counted them.
IGNORED_PER_SAMPLE = 7


def read_run(path):
    """meta.json, the matrices, and each dataset index's cells (keys, counts) as the first
    record of it holds them."""
    z = zipfile.ZipFile(path)

    def npy(name):
        with z.open(name) as f:
            return np.load(f)

    meta = json.loads(z.read("meta.json"))
    w = meta["world_size"]
    names = set(z.namelist())
    cells = {}
    for r in range(w):
        if "rank%d_cells_per_record.npy" % r not in names:
            raise AssertionError("%s holds no cells: rebuild shardlens-cli" % path)
        index = npy("rank%d_index.npy" % r)
        per = npy("rank%d_cells_per_record.npy" % r)
        keys = npy("rank%d_cell_key.npy" % r)
        counts = npy("rank%d_cell_count.npy" % r)
        begin = np.concatenate([[0], np.cumsum(per)])
        for k, i in enumerate(index.tolist()):
            row = (keys[begin[k]:begin[k + 1]], counts[begin[k]:begin[k + 1]])
            if i in cells:
                assert np.array_equal(cells[i][0], row[0]) and np.array_equal(cells[i][1], row[1])
            else:
                cells[i] = row
    c = meta["classes"]

    def matrix(stem):
        # [C, C], or its nonzero cells [K, 3] of (row, column, value) where that is smaller.
        if stem + ".npy" in names:
            return npy(stem + ".npy").astype(np.int64)
        out = np.zeros((c, c), dtype=np.int64)
        for row, col, value in npy(stem + "_sparse.npy").astype(np.int64):
            out[row, col] = value
        return out

    per_rank = [matrix("rank%d_matrix" % r) for r in range(w)]
    return meta, cells, per_rank, matrix("synced"), matrix("expected")


def sample_tensors(cells, c, ignore=None):
    """A sample's target and prediction tensors: each cell (t, p) repeated count times, then,
    given `ignore`, IGNORED_PER_SAMPLE positions labelled with it (predicted 0)."""
    keys, counts = cells
    keys = torch.from_numpy(keys.astype(np.int64))
    counts = torch.from_numpy(counts.astype(np.int64))
    target = torch.repeat_interleave(keys // c, counts)
    pred = torch.repeat_interleave(keys % c, counts)
    if ignore is None:
        return target, pred
    pad = torch.full((IGNORED_PER_SAMPLE,), ignore, dtype=torch.int64)
    return torch.cat([target, pad]), torch.cat([pred, torch.zeros_like(pad)])


def batch_tensors(batch, cells, c, ignore=None):
    parts = [sample_tensors(cells[int(i)], c, ignore) for i in batch]
    return torch.cat([t for t, _ in parts]), torch.cat([p for _, p in parts])


def jaccard(c, average="macro", ignore_index=None):
    # validate_args=False: the value checks (torch.unique over every pixel) would make this
    # test minutes long; the counting is the same.
    return MulticlassJaccardIndex(num_classes=c, average=average, ignore_index=ignore_index,
                                  validate_args=False, sync_on_compute=False)


def computed(state, c, average="macro"):
    """What MulticlassJaccardIndex(ignore_index=255).compute() returns for a confmat state."""
    m = jaccard(c, average, SEG_IGNORE)
    m.confmat = torch.as_tensor(state, dtype=torch.int64).clone()
    m._update_count = 1
    return m.compute()


def miou_of(state, c):
    return float(computed(state, c))


def iou_per_class(state, c):
    return computed(state, c, "none").numpy()


def ignore_is_left_out(cells, c, images):
    """The lessons' metrics count without ignore_index (its masking of every pixel is most of
    an update's time): on `images`, a metric with ignore_index=255 fed the ignored pixels too
    must hold the same state."""
    plain, ignoring = jaccard(c), jaccard(c, ignore_index=SEG_IGNORE)
    for i in images:
        plain.update(*reversed(sample_tensors(cells[i], c)))
        ignoring.update(*reversed(sample_tensors(cells[i], c, SEG_IGNORE)))
    assert torch.equal(plain.confmat, ignoring.confmat)


def limit_of(text, batches):
    """limit_val_batches as Lightning reads it: an int is batches, a float a fraction."""
    if text in ("all", "1.0"):
        return batches
    if "." in text:
        return int(batches * float(text))
    return min(int(text), batches)


def check_task_metrics(name, cli, measured, iou_reported, iou_true):
    """ShardLens's own mIoU and IoUs (the report's task_metrics) against torchmetrics' compute()
    of the same states: reported (synced), true (expected) and the mean of the ranks' mIoUs.
    torchmetrics divides in float32, ShardLens in double: equal within 1e-6."""
    report = json.loads(subprocess.run([cli, "simulate", "--preset", name, "--format", "json"],
                                       check=True, capture_output=True, text=True).stdout)
    if "task_metrics" not in report:
        raise AssertionError("%s: the report has no task_metrics" % name)
    miou = report["task_metrics"]["metrics"]["miou"]
    for side, key in (("reported", "mIoU reported"), ("true", "mIoU true"),
                      ("per_rank_mean", "mIoU rank mean")):
        assert abs(miou[side] - measured[key]) < 1e-6, (name, side, miou[side], measured[key])
    iou = report["task_metrics"]["per_class"]["iou"]
    assert np.allclose(iou["reported"], iou_reported, atol=1e-6), name
    assert np.allclose(iou["true"], iou_true, atol=1e-6), name


def measure_segmentation(name, cli, tmp):
    scenario = json.load(open(os.path.join(LESSONS, name + ".json")))
    run = os.path.join(tmp, name + ".slrun")
    subprocess.run([cli, "simulate", "--preset", name, "--save-run", run], check=True,
                   stdout=subprocess.DEVNULL)
    meta, cells, sl_per_rank, sl_synced, sl_expected = read_run(run)
    c = meta["classes"]
    n = meta["dataset_size"]
    if len(cells) < n:
        # Images the run never evaluated have no record: their cells come from the same
        # dataset and predictor evaluated whole (a sample's cells are its own, whatever rank or
        # setting evaluates it).
        whole_run = os.path.join(tmp, name + "-whole.slrun")
        subprocess.run([cli, "simulate", "--preset", name, "--limit-batches", "1.0",
                        "--sync", "all-reduce", "--save-run", whole_run], check=True,
                       stdout=subprocess.DEVNULL)
        all_cells = read_run(whole_run)[1]
        for i, row in cells.items():
            assert all(np.array_equal(a, b) for a, b in zip(row, all_cells[i])), i
        cells = all_cells
    w = scenario["world_size"]
    b = scenario["batch_size"]
    ignore_is_left_out(cells, c, range(min(n, 20)))
    # The true matrix: every image once, fed where an image is first evaluated (its tensors
    # are built once), the rest after.
    whole = jaccard(c)
    fed = set()
    states, seen = [], []
    for r in range(w):
        sampler = DistributedSampler(range(n), num_replicas=w, rank=r,
                                     shuffle=scenario["shuffle"], seed=scenario["seed"])
        sampler.set_epoch(scenario["epoch"])
        loader = DataLoader(range(n), batch_size=b, sampler=sampler)
        limit = limit_of(scenario["limit_batches"], len(loader))
        metric = jaccard(c)
        images = []
        for j, batch in enumerate(loader):
            if j >= limit:
                break
            for i in batch.tolist():
                target, pred = sample_tensors(cells[i], c)
                metric.update(pred, target)
                if i not in fed:
                    whole.update(pred, target)
                    fed.add(i)
            images += batch.tolist()
        states.append(metric.confmat.clone().numpy())
        seen.append(images)
    for i in range(n):
        if i not in fed:
            whole.update(*reversed(sample_tensors(cells[i], c)))
    true_state = whole.confmat.numpy()
    summed = np.sum(states, axis=0)
    synced = summed if scenario["sync"] == "all-reduce" else states[0]
    for r in range(w):
        assert np.array_equal(states[r], sl_per_rank[r]), "%s: rank %d's confmat differs" % (name, r)
    assert np.array_equal(synced, sl_synced), "%s: the synced confmat differs" % name
    assert np.array_equal(true_state, sl_expected), "%s: the true confmat differs" % name
    evaluated = [i for images in seen for i in images]
    out = {
        "images": n,
        "evaluated": len(evaluated),
        "distinct": len(set(evaluated)),
        "pixels true": int(true_state.sum()),
        "pixels reported": int(synced.sum()),
        "mIoU reported": miou_of(synced, c),
        "mIoU true": miou_of(true_state, c),
        "mIoU rank mean": float(np.mean([miou_of(s, c) for s in states])),
        "mIoU rank min": min(miou_of(s, c) for s in states),
        "mIoU rank max": max(miou_of(s, c) for s in states),
        "classes never seen": int(np.sum((true_state.sum(axis=1) > 0) & (synced.sum(axis=1) == 0))),
    }
    iou_reported, iou_true = iou_per_class(synced, c), iou_per_class(true_state, c)
    check_task_metrics(name, cli, out, iou_reported, iou_true)
    worst = int(np.argmax(np.abs(iou_reported - iou_true)))
    out["most moved class"] = meta.get("class_names", [str(k) for k in range(c)])[worst]
    out["its IoU reported"] = float(iou_reported[worst])
    out["its IoU true"] = float(iou_true[worst])
    return scenario, out


def measure_tokens(name, cli, tmp):
    scenario = json.load(open(os.path.join(LESSONS, name + ".json")))
    w, b = scenario["world_size"], scenario["batch_size"]
    results = {}
    for sync in ("gather", "gather-for-metrics"):
        run = os.path.join(tmp, "%s-%s.slrun" % (name, sync))
        subprocess.run([cli, "simulate", "--preset", name, "--sync", sync, "--save-run", run],
                       check=True, stdout=subprocess.DEVNULL)
        results[sync] = read_run(run)
    meta, cells, sl_per_rank, _, sl_expected = results["gather"]
    c, n = meta["classes"], meta["dataset_size"]
    shards = [list(BatchSamplerShard(BatchSampler(SequentialSampler(range(n)), b, False),
                                     num_processes=w, process_index=r, even_batches=True))
              for r in range(w)]
    steps = len(shards[0])
    assert all(len(s) == steps for s in shards)
    remainder = n % (b * w)  # GradientState.remainder of a sized dataset
    gathered = {"gather": [], "gather-for-metrics": []}
    for step in range(steps):
        rows = [i for r in range(w) for i in shards[r][step]]
        gathered["gather"] += rows
        cut = rows[:remainder] if step == steps - 1 and remainder > 0 else rows
        gathered["gather-for-metrics"] += cut
    for r in range(w):
        metric = MulticlassConfusionMatrix(num_classes=c, ignore_index=TOKEN_IGNORE)
        for batch in shards[r]:
            metric.update(*reversed(batch_tensors(batch, cells, c, TOKEN_IGNORE)))
        assert np.array_equal(metric.confmat.numpy(), sl_per_rank[r]), "%s: rank %d" % (name, r)
    out = {"sentences": n}
    for sync, rows in gathered.items():
        metric = MulticlassConfusionMatrix(num_classes=c, ignore_index=TOKEN_IGNORE)
        target, pred = batch_tensors(rows, cells, c, TOKEN_IGNORE)
        metric.update(pred, target)
        state = metric.confmat.numpy()
        assert np.array_equal(state, results[sync][3]), "%s: %s's matrix differs" % (name, sync)
        out["%s sentences" % sync] = len(rows)
        out["%s tokens" % sync] = int(state.sum())
        # ShardLens's token accuracy and macro F1 against torchmetrics' on the same tokens.
        report = json.loads(subprocess.run(
            [cli, "simulate", "--preset", name, "--sync", sync, "--format", "json"],
            check=True, capture_output=True, text=True).stdout)["task_metrics"]["metrics"]
        accuracy = float(multiclass_accuracy(pred, target, c, average="micro",
                                             ignore_index=TOKEN_IGNORE))
        f1 = float(multiclass_f1_score(pred, target, c, average="macro",
                                       ignore_index=TOKEN_IGNORE))
        assert abs(report["accuracy"]["reported"] - accuracy) < 1e-6, (name, sync, accuracy)
        assert abs(report["macro_f1"]["reported"] - f1) < 1e-6, (name, sync, f1)
    whole = MulticlassConfusionMatrix(num_classes=c, ignore_index=TOKEN_IGNORE)
    target, pred = batch_tensors(range(n), cells, c, TOKEN_IGNORE)
    whole.update(pred, target)
    assert np.array_equal(whole.confmat.numpy(), sl_expected), "%s: the true matrix" % name
    out["tokens true"] = int(whole.confmat.sum())
    return scenario, out


def quoted(value):
    """How a lesson's text writes a measured value."""
    if isinstance(value, float):
        return "%.4f" % value
    if isinstance(value, int):
        return "{:,}".format(value)
    return value


# Each lesson: how it is measured, and the measured values its text must quote. A lesson of
# another framework (mmengine's collect_results, a streaming dataset) adds its row here with a
# measure(name, cli, tmp) -> (scenario, values) of its own.
LESSON_MEASURES = {
    "voc-padding-miou": (measure_segmentation, [
        "evaluated", "pixels true", "pixels reported", "mIoU reported", "mIoU true",
        "most moved class", "its IoU reported", "its IoU true"]),
    "ade20k-batch-limit": (measure_segmentation, [
        "evaluated", "pixels reported", "pixels true", "mIoU reported", "mIoU true",
        "most moved class", "its IoU reported", "its IoU true"]),
    "ade20k-rank-mean-miou": (measure_segmentation, [
        "mIoU rank mean", "mIoU true", "mIoU rank min", "mIoU rank max"]),
    "voc-unsynced": (measure_segmentation, [
        "pixels reported", "pixels true", "mIoU reported", "mIoU true", "most moved class",
        "its IoU reported", "its IoU true"]),
    "conll-plain-gather": (measure_tokens, [
        "gather sentences", "gather tokens", "gather-for-metrics tokens", "tokens true"]),
}


def main():
    cli = sys.argv[1]
    show = "--print" in sys.argv
    only = [a.split("=", 1)[1].split(",") for a in sys.argv if a.startswith("--only=")]
    failures, measured = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, (measure, quotes) in LESSON_MEASURES.items():
            if only and name not in only[0]:
                continue
            start = time.time()
            scenario, out = measure(name, cli, tmp)
            measured += 1
            print("%s (%.1f s): %s" % (name, time.time() - start, json.dumps(out)), flush=True)
            text = scenario["description"] + " " + scenario["title"]
            for key in quotes:
                if quoted(out[key]) not in text:
                    failures.append("%s: its text does not quote %s = %s" % (name, key,
                                                                            quoted(out[key])))
    for f in failures:
        print("FAIL " + f)
    if failures and not show:
        sys.exit(1)
    print("ok: %d lessons, each rank's state, the synced and the true matrix equal to "
          "torchmetrics' (%s)" % (measured, json.dumps(frameworks.versions())))


if __name__ == "__main__":
    main()
