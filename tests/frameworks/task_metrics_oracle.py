"""ShardLens's segmentation, token and multilabel metrics against torchmetrics' own.

Random cases (several class counts, classes that never occur, ignore_index unset, outside the
classes, -100 and inside them; multilabel items with ignored labels; 1 to 4 ranks, a rank of
ignored pixels only): each rank's raw (target, prediction) elements go through torchmetrics'
update() (MulticlassJaccardIndex, MulticlassAccuracy, MulticlassPrecision / Recall /
F1Score, Multilabel* the same), and the counts they leave (the ignored elements dropped, as
ShardLens's cells drop them) are written for task_metrics_probe, which prints ShardLens's
task_metrics of the ranks' matrices, their sum (the synced matrix) and the expected matrix.

torchmetrics computes in float32 (its reductions call .float() on the state). To compare to
1e-12 its states are made float64 after update() and its Jaccard reduction's .float() keeps
float64 (torch.Tensor.float patched for that call only): the same torchmetrics code, in
double. Its float32 values are compared too, to 2e-6.

The per-rank mean is each rank's torchmetrics value averaged over the ranks that counted
something (what self.log(name, value, sync_dist=True) logs), beside compute() of a metric
fed every rank's elements (the synced value) and one fed the expected elements (the true).

Usage: task_metrics_oracle.py TASK_METRICS_PROBE [--cases N]
"""
import contextlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import frameworks  # noqa: E402

frameworks.require_venv()

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchmetrics  # noqa: E402
from torchmetrics.classification import (  # noqa: E402
    BinaryJaccardIndex, MulticlassAccuracy, MulticlassF1Score, MulticlassJaccardIndex, MulticlassPrecision,
    MulticlassRecall, MultilabelAccuracy, MultilabelF1Score, MultilabelPrecision,
    MultilabelRecall)

PROBE = sys.argv[1]
CASES = int(sys.argv[sys.argv.index("--cases") + 1]) if "--cases" in sys.argv else 160
TOL64, TOL32 = 1e-12, 2e-6


@contextlib.contextmanager
def float_keeps_double():
    """torch.Tensor.float() keeps a float64 tensor float64 (the Jaccard reduction's cast)."""
    original = torch.Tensor.float

    def keep(self, *args, **kwargs):
        return self if self.dtype == torch.float64 else original(self, *args, **kwargs)

    torch.Tensor.float = keep
    try:
        yield
    finally:
        torch.Tensor.float = original


def compute(metric, elements, double):
    """torchmetrics' compute() of `metric` after update() with each (preds, target) of
    `elements`; with `double`, its states cast to float64 first."""
    metric.reset()
    for preds, target in elements:
        metric.update(preds, target)
    if double:
        for name in metric._defaults:
            setattr(metric, name, getattr(metric, name).double())
        with float_keeps_double():
            value = metric.compute()
    else:
        value = metric.compute()
    return value.double().numpy()


def multiclass_metrics(c, ignore):
    kw = {"num_classes": c, "ignore_index": ignore, "validate_args": True}
    binary = {("overall", "binary_iou"): BinaryJaccardIndex(ignore_index=ignore)} if c == 2 else {}
    return {**binary,
        ("overall", "miou"): MulticlassJaccardIndex(average="macro", **kw),
        ("overall", "accuracy"): MulticlassAccuracy(average="micro", **kw),
        ("overall", "mean_class_accuracy"): MulticlassAccuracy(average="macro", **kw),
        ("overall", "macro_f1"): MulticlassF1Score(average="macro", **kw),
        ("overall", "macro_precision"): MulticlassPrecision(average="macro", **kw),
        ("overall", "macro_recall"): MulticlassRecall(average="macro", **kw),
        ("per_class", "iou"): MulticlassJaccardIndex(average="none", **kw),
        ("per_class", "f1"): MulticlassF1Score(average="none", **kw),
        ("per_class", "precision"): MulticlassPrecision(average="none", **kw),
        ("per_class", "recall"): MulticlassRecall(average="none", **kw),
        # Segmentation's per-class accuracy is MulticlassAccuracy(average=None): the recall.
        ("per_class", "accuracy"): MulticlassAccuracy(average="none", **kw),
    }


def multilabel_metrics(labels, ignore):
    kw = {"num_labels": labels, "ignore_index": ignore, "validate_args": True}
    return {
        ("overall", "macro_f1"): MultilabelF1Score(average="macro", **kw),
        ("overall", "macro_precision"): MultilabelPrecision(average="macro", **kw),
        ("overall", "macro_recall"): MultilabelRecall(average="macro", **kw),
        ("overall", "accuracy"): MultilabelAccuracy(average="micro", **kw),
        ("per_class", "f1"): MultilabelF1Score(average="none", **kw),
        ("per_class", "precision"): MultilabelPrecision(average="none", **kw),
        ("per_class", "recall"): MultilabelRecall(average="none", **kw),
    }


def draw_multiclass(rng, c, ignore, n):
    """n elements (one image or sequence batch): targets from a few present classes, some
    ignored, predictions mostly right. Returns (preds, target) tensors."""
    present = rng.choice(c, size=rng.integers(1, c + 1), replace=False)
    target = rng.choice(present, size=n)
    right = rng.random(n) < rng.uniform(0.3, 0.95)
    preds = np.where(right, target, rng.integers(0, c, size=n))
    if ignore is not None:
        target = np.where(rng.random(n) < rng.uniform(0, 0.3), ignore, target)
    return torch.from_numpy(preds.astype(np.int64)), torch.from_numpy(target.astype(np.int64))


def draw_multilabel(rng, labels, ignore, n):
    prevalence = rng.uniform(0, 0.8, size=labels) * (rng.random(labels) < 0.8)
    target = (rng.random((n, labels)) < prevalence).astype(np.int64)
    flip = rng.random((n, labels)) < rng.uniform(0.05, 0.4)
    preds = np.where(flip, 1 - target, target)
    if ignore is not None:
        target = np.where(rng.random((n, labels)) < 0.15, ignore, target)
    return torch.from_numpy(preds), torch.from_numpy(target)


def multiclass_counts(elements, c, ignore):
    cells = np.zeros(c * c, dtype=np.int64)
    for preds, target in elements:
        keep = target != ignore if ignore is not None else torch.ones_like(target, dtype=bool)
        key = target[keep].numpy() * c + preds[keep].numpy()
        cells += np.bincount(key, minlength=c * c)
    return cells


def multilabel_counts(elements, labels, ignore):
    c = 2 * labels  # class 2l + t is "label l is t"
    cells = np.zeros(c * c, dtype=np.int64)
    for preds, target in elements:
        for l in range(labels):
            t, p = target[:, l].numpy(), preds[:, l].numpy()
            keep = t != ignore if ignore is not None else np.ones_like(t, dtype=bool)
            key = (2 * l + t[keep]) * c + (2 * l + p[keep])
            cells += np.bincount(key, minlength=c * c)
    return cells


def make_case(rng, index):
    task = ("segmentation", "tokens", "multilabel")[index % 3]
    world = int(rng.integers(1, 5))
    if task == "multilabel":
        labels = int(rng.choice([2, 3, 5, 8]))  # torchmetrics needs 2 or more
        ignore = [None, -1, 255][(index // 3) % 3]
        c = 2 * labels
        draw = lambda n: draw_multilabel(rng, labels, ignore, n)  # noqa: E731
        counts = lambda el: multilabel_counts(el, labels, ignore)  # noqa: E731
        metrics = multilabel_metrics(labels, ignore)
    else:
        c = int(rng.choice([2, 3, 5, 8, 21]))
        choices = [None, 255 if task == "segmentation" else -100, int(rng.integers(0, c))]
        ignore = choices[(index // 3) % 3]
        draw = lambda n: draw_multiclass(rng, c, ignore, n)  # noqa: E731
        counts = lambda el: multiclass_counts(el, c, ignore)  # noqa: E731
        metrics = multiclass_metrics(c, ignore)
    ranks = []
    for r in range(world):
        batches = [draw(int(rng.integers(1, 60))) for _ in range(int(rng.integers(1, 4)))]
        if ignore is not None and index % 7 == 0 and r == world - 1:
            # A rank whose images hold ignored pixels only: it counts nothing.
            batches = [(p, torch.full_like(t, ignore)) for p, t in batches]
        ranks.append(batches)
    expected = [draw(int(rng.integers(1, 80))) for _ in range(3)]
    if index % 11 == 5:  # an expected matrix with nothing counted: every element ignored
        # (no update at all without an ignore_index: compute() of the zero state)
        expected = [] if ignore is None else [(p, torch.full_like(t, ignore)) for p, t in expected]
    probe_case = {"task": task, "ignore_index": -1 if ignore is None else ignore, "classes": c,
                  "per_rank": [counts(b).tolist() for b in ranks],
                  "expected": counts(expected).tolist()}
    return probe_case, ranks, expected, metrics, ignore


def counted(ranks, ignore):
    """The ranks that counted something: ShardLens averages those (a rank whose elements are
    all ignored logs nothing)."""
    def counts(target):
        return bool((target != ignore).any()) if ignore is not None else target.numel() > 0
    return [b for b in ranks if any(counts(t) for _, t in b)]


def reference(ranks, expected, metrics, ignore, double):
    """{(kind, key): {"reported", "true", "per_rank_mean"}} from torchmetrics."""
    every = [e for batches in ranks for e in batches]
    averaged = counted(ranks, ignore)
    out = {}
    for k, metric in metrics.items():
        per_rank = [compute(metric, b, double) for b in averaged]
        out[k] = {
            "reported": compute(metric, every, double),
            "true": compute(metric, expected, double),
            "per_rank_mean": sum(per_rank) / len(per_rank) if len(per_rank) >= 2 else None,
        }
    return out


# What each task reports (binary_iou: segmentation of 2 classes).
REPORTED = {
    "segmentation": ({"miou", "accuracy", "mean_class_accuracy"}, {"iou", "accuracy"}),
    "tokens": ({"accuracy", "macro_f1", "macro_precision", "macro_recall"},
               {"f1", "precision", "recall"}),
    "multilabel": ({"macro_f1", "macro_precision", "macro_recall", "accuracy"},
                   {"f1", "precision", "recall"}),
}


def close(ours, theirs, tol):
    if theirs is None:
        return ours is None or ours == []
    theirs = np.atleast_1d(theirs)
    ours = ours if isinstance(ours, list) else [ours]
    if len(ours) != len(theirs):
        return False
    for a, b in zip(ours, theirs):
        if math.isnan(b):
            if a is not None:
                return False
        elif a is None or abs(a - b) > tol * max(1.0, abs(b)):
            return False
    return True


def main():
    started = time.time()
    # compute() of a metric never updated (the expected matrix of nothing) is a case here.
    warnings.filterwarnings("ignore", message=".*was called before the ``update`` method.*")
    rng = np.random.default_rng(20261207)
    torch.manual_seed(0)
    cases = [make_case(rng, i) for i in range(CASES)]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cases.json")
        with open(path, "w") as f:
            json.dump({"cases": [c[0] for c in cases]}, f)
        run = subprocess.run([PROBE, path], capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        print(run.stdout, run.stderr)
        return 1
    ours_all = json.loads(run.stdout)["cases"]
    failures, compared = [], 0
    for i, ((probe_case, ranks, expected, metrics, ignore), ours) in enumerate(
            zip(cases, ours_all)):
        overall, per_class = REPORTED[probe_case["task"]]
        if probe_case["task"] == "segmentation" and probe_case["classes"] == 2:
            overall = overall | {"binary_iou"}
        if set(ours["metrics"]) != overall or set(ours["per_class"]) != per_class:
            failures.append("case %d: metrics %s, per class %s" % (
                i, sorted(ours["metrics"]), sorted(ours["per_class"])))
        for double, tol in ((True, TOL64), (False, TOL32)):
            theirs = reference(ranks, expected, metrics, ignore, double)
            for (kind, key), want in theirs.items():
                if kind == "overall":
                    if key not in ours["metrics"]:
                        continue  # a metric the task does not report
                    got = ours["metrics"][key]
                else:
                    if key not in ours["per_class"]:
                        continue
                    got = ours["per_class"][key]
                for side in ("reported", "true", "per_rank_mean"):
                    compared += 1
                    if not close(got[side], want[side], tol):
                        failures.append("case %d (%s, C=%d, ignore %s, %d ranks) %s %s %s: "
                                        "ShardLens %s, torchmetrics %s%s" % (
                                            i, probe_case["task"], probe_case["classes"],
                                            probe_case["ignore_index"], len(ranks), kind, key,
                                            side, got[side], want[side],
                                            "" if double else " (float32)"))
        averaged = len(counted(ranks, ignore))
        if ours["ranks_averaged"] != (averaged if averaged >= 2 else 0):
            failures.append("case %d: ranks_averaged %s of %d" % (
                i, ours["ranks_averaged"], averaged))
    for f in failures[:30]:
        print("FAIL", f)
    inside = sum(1 for c in cases if c[4] is not None and 0 <= c[4] < c[0]["classes"]
                 and c[0]["task"] != "multilabel")
    empty = sum(1 for c in cases if not any(c[0]["expected"]))
    print("torchmetrics %s, torch %s: %d cases (%d with ignore_index a class, %d with nothing "
          "expected), %d values compared, %d failures, %.1f s" % (
              torchmetrics.__version__, torch.__version__, len(cases), inside, empty, compared,
              len(failures), time.time() - started))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
