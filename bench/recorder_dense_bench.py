"""What recording a segmentation batch costs, beside torchmetrics' own
MulticlassJaccardIndex.update of the same batch, measured in one run.

Usage: recorder_dense_bench.py [--batch B] [--classes C] [--height H] [--width W]
                               [--repeats R] [--threads T]
Default: a Cityscapes-sized batch, 8 images of 512 x 1024, 19 classes, 255 over 5 % of the
pixels, logits [B, C, H, W] float32 on the CPU, one torch thread. Each repeat times, in turn:
  metric:   MulticlassJaccardIndex(C, ignore_index=255).update(logits, target): the metric
            alone (its validate_args default), what an unwatched module pays;
  watched:  the same update through the Lightning callback's wrapper (MetricWatch, as
            ShardLensCallback attaches it) and the callback's recording of the batch
            (ShardLensRecorder.add_dense of the class ids the wrapper computed): what a
            watched module pays. The wrapper computes the argmax once and passes the class ids
            to the metric, which would have computed the same argmax itself;
  cells:    ShardLensRecorder.add_dense(index, target, class ids) alone: the histogram and
            its compaction, the recorder's own work.
Prints the median and best of R for each, and one RESULT line: metric_s, watched_s, cells_s
(medians, seconds), overhead_ratio = (watched - metric) / metric, cells_ratio = cells /
metric, kept_bytes_per_image (the non-zero cells the recorder keeps of an image).
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integrations", "python"))


def parse():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--classes", type=int, default=19)
    p.add_argument("--height", type=int, default=512)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--threads", type=int, default=1)
    return p.parse_args()


def main():
    args = parse()
    import torch
    from torchmetrics.classification import MulticlassJaccardIndex
    from shardlens_recorder import ShardLensRecorder
    from shardlens_recorder._metrics import MetricWatch

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    b, c, h, w = args.batch, args.classes, args.height, args.width
    # Class regions as a segmentation network's logits make them: the argmax is the true
    # class over most of each image, another class in blocks; 5 % ignored.
    target = torch.randint(0, c, (b, h // 16, w // 16)).repeat_interleave(16, 1) \
        .repeat_interleave(16, 2)
    target[torch.rand(b, h, w) < 0.05] = 255
    logits = torch.randn(b, c, h, w)
    logits.scatter_add_(1, target.clamp(max=c - 1).unsqueeze(1), torch.full((b, 1, h, w), 3.0))
    index = torch.arange(b)

    class Module(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.iou = MulticlassJaccardIndex(c, ignore_index=255)

    out = tempfile.mkdtemp(prefix="shardlens_dense_bench_")
    rec = ShardLensRecorder(out, num_classes=c, ignore_index=255, rank=0, world_size=1)
    bare = MulticlassJaccardIndex(c, ignore_index=255)
    module = Module()
    watch = MetricWatch()
    watch.attach(module)

    def metric():
        bare.update(logits, target)

    def watched():
        module.iou.update(logits, target)
        for t, ids in watch.take()["iou"]:
            rec.add_dense(index, t, ids)

    ids = logits.argmax(1)

    def cells():
        rec.add_dense(index, target, ids)

    times = {"metric": [], "watched": [], "cells": []}
    phases = (("metric", metric), ("watched", watched), ("cells", cells))
    for _ in range(args.repeats + 1):  # the first round warms up, untimed
        for name, f in phases:
            start = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - start)
    for name in times:
        times[name] = times[name][1:]
    # every watched update reached the metric: its state is the unwatched one's
    assert torch.equal(module.iou.confmat, bare.confmat)
    watch.detach()
    arrays = rec._cells.arrays()
    kept = sum(arrays[k].nbytes for k in ("cell_target", "cell_prediction", "cell_count",
                                          "cells_per_record", "sample_size", "ignored"))
    kept_per_image = kept / max(1, rec.count)
    med = {k: statistics.median(v) for k, v in times.items()}
    print("segmentation batch %d x %d x %d, %d classes, %d thread(s), torch %s, %d repeats"
          % (b, h, w, c, args.threads, torch.__version__, args.repeats))
    for name, label in (("metric", "MulticlassJaccardIndex.update alone"),
                        ("watched", "the same, watched and recorded"),
                        ("cells", "add_dense of class ids alone")):
        print("  %-40s median %8.1f ms, best %8.1f ms"
              % (label, med[name] * 1e3, min(times[name]) * 1e3))
    overhead = (med["watched"] - med["metric"]) / med["metric"]
    print("  recorder overhead of a watched update: %+.2f %% (target < 2 %%); the histogram "
          "alone %.2f %% of the metric's update; %.0f bytes kept an image (%d pixels)"
          % (100 * overhead, 100 * med["cells"] / med["metric"], kept_per_image, h * w))
    print("RESULT metric_s=%.6f watched_s=%.6f cells_s=%.6f overhead_ratio=%.5f "
          "cells_ratio=%.5f kept_bytes_per_image=%.0f"
          % (med["metric"], med["watched"], med["cells"], overhead,
             med["cells"] / med["metric"], kept_per_image))


if __name__ == "__main__":
    main()
