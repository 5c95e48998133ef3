"""What recording costs an evaluation loop, in microseconds a sample, at 100 and 1000 classes.

Usage: recorder_bench.py [--samples N] [--repeats R] [--baseline PATH]. One process, CPU,
one torch thread. The bare loop is what an evaluation does per batch of 256: logits -> argmax
-> the batch's confusion-matrix bincount added to a running matrix. Beside it, side by side:
  before: the same loop + ShardLensRecorder.update(index, target, logits) of PATH (the
          recorder to compare with, e.g. commit 4f3246a's list of Python ints per batch), + save();
  after:  the same loop + this tree's ShardLensRecorder.update(index, target, logits), +
          save() (one transfer, one bincount, one file); after_ids: given the loop's own class
          ids instead of the logits (no second argmax);
  watch:  MulticlassConfusionMatrix.update(logits, target) per batch (torchmetrics) bare, and
          with the update() wrapper ShardLensCallback puts on it plus the recording of what
          it saw (the callback's per-batch path), + save().
Times are CPU seconds of the process (best of R rounds, the variants interleaved). Prints one
RESULT line per class count: *_us = (loop with - bare loop) / samples, *_ratio = with / bare,
and *_calls_us = the CPU time inside the recorder's own calls (update, save; for the watch,
take and the recording, not the wrapper's argmax, which replaces torchmetrics') / samples.
The differences of totals count everything but are noisy: at 1000 classes the bare loop's
bincount of 10^6 cells per batch varies by more than the recorder costs; the in-call times
are what the recorder itself spends. --cuda-sync-check (on a GPU) instead runs the per-batch
paths under torch.cuda's sync debug mode "error".
"""
import argparse
import importlib.util
import os
import sys
import tempfile
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integrations", "python"))
import shardlens_recorder as after  # noqa: E402

B = 256


def _clock():
    # CPU time of this (one-threaded) process: on a shared, loaded machine wall time says
    # how much of a core the process got, CPU time what it did.
    return time.process_time()
POOL = 8  # distinct batches, cycled: memory stays small at 1000 classes


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def batches(classes, samples):
    g = torch.Generator().manual_seed(0)
    pool = [(torch.randn(B, classes, generator=g), torch.randint(0, classes, (B,), generator=g))
            for _ in range(POOL)]
    for k in range(samples // B):
        logits, y = pool[k % POOL]
        yield torch.arange(k * B, (k + 1) * B), logits, y


class Stopwatch:
    """CPU time spent inside the recorder's own calls: measured around them, it does not
    carry the noise of the loop's 8 MB bincount per batch at 1000 classes, whose time
    varies by more than the recorder costs on a shared machine."""

    def __init__(self):
        self.spent = 0.0

    def call(self, fn, *args):
        start = _clock()
        result = fn(*args)
        self.spent += _clock() - start
        return result


def loop(classes, samples, recorder=None, ids=False):
    """(CPU seconds of the loop, of which inside the recorder's calls)."""
    cm = torch.zeros(classes * classes, dtype=torch.int64)
    watch = Stopwatch()
    start = _clock()
    for index, logits, y in batches(classes, samples):
        pred = logits.argmax(1)
        cm += torch.bincount(y * classes + pred, minlength=classes * classes)
        if recorder is not None:  # ids: the loop's own class ids, else its logits
            watch.call(recorder.update, index, y, pred if ids else logits)
    if recorder is not None:
        watch.call(recorder.save)
    return _clock() - start, watch.spent


def metric_loop(classes, samples, watched, out):
    """(CPU seconds, of which recording what the wrapped update() saw). The wrapper's own
    argmax replaces torchmetrics' and is not counted in the second figure; the difference
    of the totals with and without the wrapper counts everything."""
    from torchmetrics.classification import MulticlassConfusionMatrix
    metric = MulticlassConfusionMatrix(classes, validate_args=False)
    rec = None
    stopwatch = Stopwatch()
    if watched:
        watch = after._metrics.MetricWatch()
        holder = torch.nn.Module()
        holder.cm = metric
        watch.attach(holder)
        rec = after.ShardLensRecorder(out, num_classes=classes, rank=0, world_size=1)
    start = _clock()
    for index, logits, y in batches(classes, samples):
        metric.update(logits, y)
        if watched:  # what ShardLensCallback.on_validation_batch_end does with it
            for target, ids in stopwatch.call(watch.take)["cm"]:
                stopwatch.call(rec.update, index, target, ids)
    if watched:
        stopwatch.call(rec.save)
        watch.detach()
    return _clock() - start, stopwatch.spent


def cuda_sync_check(classes, batches_n=20):
    """On a GPU: the per-batch paths (recorder.update with logits, the metric watch) run
    under torch.cuda.set_sync_debug_mode("error"), which raises on any operation that waits
    for the device; save() (the one transfer) runs after it is switched off."""
    from torchmetrics.classification import MulticlassConfusionMatrix
    dev = torch.device("cuda")
    logits = torch.randn(B, classes, device=dev)
    y = torch.randint(0, classes, (B,), device=dev)
    with tempfile.TemporaryDirectory() as out:
        rec = after.ShardLensRecorder(out, num_classes=classes, rank=0, world_size=1)
        metric = MulticlassConfusionMatrix(classes, validate_args=False).to(dev)
        holder = torch.nn.Module()
        holder.cm = metric
        watch = after._metrics.MetricWatch()
        watch.attach(holder)
        mrec = after.ShardLensRecorder(out, name="watch", num_classes=classes, rank=0,
                                       world_size=1)
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")
        try:
            for k in range(batches_n):
                index = torch.arange(k * B, (k + 1) * B, device=dev)
                rec.update(index, y, logits)
                metric.update(logits, y)
                for target, ids in watch.take()["cm"]:
                    mrec.update(index, target, ids)
        finally:
            torch.cuda.set_sync_debug_mode("default")
        rec.save()
        mrec.save()
        watch.detach()
    print("RESULT cuda_sync_check classes=%d batches=%d syncs_per_batch=0" % (classes,
                                                                          batches_n))


def interleaved_best(repeats, runs):
    """The best time of each run over `repeats` rounds, each round running every run once:
    a slow spell of a shared machine then slows every variant of a round alike instead of
    one variant's whole series, which the differences below would read as its cost."""
    times = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            times[name].append(run())
    return {name: tuple(min(column) for column in zip(*values))
            for name, values in times.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=B * 400)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--baseline", help="the recorder to compare with (a .py file)")
    ap.add_argument("--classes", type=int, nargs="+", default=[100, 1000])
    ap.add_argument("--cuda-sync-check", action="store_true",
                    help="on a GPU: fail if a per-batch path waits for the device")
    args = ap.parse_args()
    if args.cuda_sync_check:
        for classes in args.classes:
            cuda_sync_check(classes)
        return
    torch.set_num_threads(1)
    before = load(args.baseline, "recorder_before") if args.baseline else None
    n = args.samples // B * B
    with tempfile.TemporaryDirectory() as out:
        for classes in args.classes:
            def rec(module):
                return module.ShardLensRecorder(out, num_classes=classes, rank=0, world_size=1)
            runs = {"bare": lambda: loop(classes, n),
                    "new": lambda: loop(classes, n, rec(after)),
                    "new_ids": lambda: loop(classes, n, rec(after), ids=True)}
            if before:
                runs["old"] = lambda: loop(classes, n, rec(before))
            try:
                import torchmetrics  # noqa: F401
            except ImportError:  # Debian's torch alone: the explicit recorder only
                pass
            else:
                runs["mbare"] = lambda: metric_loop(classes, n, False, out)
                runs["mwatch"] = lambda: metric_loop(classes, n, True, out)
            t = interleaved_best(args.repeats, runs)
            (bare, _), (new, new_in), (new_ids, new_ids_in) = t["bare"], t["new"], t["new_ids"]
            old, old_in = t.get("old", (None, None))
            mbare, mwatch, mwatch_in = t.get("mbare", (None,))[0], *t.get("mwatch", (None, None))
            us = lambda t, base: (t - base) / n * 1e6  # noqa: E731
            line = "RESULT classes=%d samples=%d bare_us=%.3f after_us=%.3f after_ratio=%.3f" % (
                classes, n, bare / n * 1e6, us(new, bare), new / bare)
            line += " after_ids_us=%.3f after_ids_ratio=%.3f" % (us(new_ids, bare), new_ids / bare)
            line += " after_calls_us=%.3f after_ids_calls_us=%.3f" % (us(new_in, 0),
                                                                      us(new_ids_in, 0))
            if old is not None:
                line += " before_us=%.3f before_ratio=%.3f before_calls_us=%.3f" % (
                    us(old, bare), old / bare, us(old_in, 0))
                line += " speedup_calls=%.1f" % (old_in / max(new_in, 1e-9))
            if mbare is not None:
                line += " metric_bare_us=%.3f watch_us=%.3f watch_ratio=%.3f" % (
                    mbare / n * 1e6, us(mwatch, mbare), mwatch / mbare)
                line += " watch_calls_us=%.3f" % us(mwatch_in, 0)
            print(line, flush=True)


if __name__ == "__main__":
    main()
