"""What the verdict costs a validation, beside the validation itself, at 1000 classes and
100,000 samples on 4 ranks (what rank 0 does after every validation).

Usage: verdict_bench.py --cli PATH [--package DIR] [--classes C] [--samples N] [--world W]
                        [--repeats R]
One process, one torch thread; each phase timed as wall-clock seconds and as CPU seconds (this
process and its children together: the verdict runs shardlens-cli in a child process; on a
shared, loaded machine wall time says how much of a core it got, CPU time what it did), best
of R. What a user's validation loop does, on rank 0's shard (N / W samples):
  bare:     logits -> argmax -> the batch's confusion-matrix bincount added to a running matrix
            (the validation alone);
  recorder: the same loop + ShardLensRecorder.update(index, target, logits) per batch,
            set_matrix(the rank's matrix), set_reported(the synced matrix) and save();
  verdict:  _verdict.judge(): rank 0 imports the W ranks' dumps (the other ranks' written
            beforehand, as they would have been) with the dataset's labels, diagnoses them and
            prints its line; then the heatmap the TensorBoard logger gets;
  wait:     what the evaluation waits for on rank 0: the callback and watch() judge on a
            thread (Recording.in_background) while training goes on, so the validation pays
            for starting it; the judging itself is `verdict` (waited for, untimed, after).
--package: the shardlens_recorder package's parent directory to measure (default: this
tree's), e.g. a copy of an older commit's, to compare with its own shardlens-cli.
Prints one RESULT line: *_s wall seconds and *_cpu_s CPU seconds, verdict_ratio = verdict /
bare (wall) and verdict_cpu_ratio (CPU), recorder_ratio = (recorder - bare) / bare (wall),
dump_mb (rank 0's dump) and run_mb (the run file).
"""
import argparse
import contextlib
import io
import os
import resource
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def parse():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cli", required=True)
    p.add_argument("--package", default=os.path.join(HERE, "..", "integrations", "python"))
    p.add_argument("--classes", type=int, default=1000)
    p.add_argument("--samples", type=int, default=100_000)
    p.add_argument("--world", type=int, default=4)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--repeats", type=int, default=3)
    return p.parse_args()


def main():
    args = parse()
    sys.path.insert(0, os.path.abspath(args.package))
    import numpy as np
    import torch
    import shardlens_recorder as sl
    from shardlens_recorder import _verdict
    torch.set_num_threads(1)
    c, w, b = args.classes, args.world, args.batch
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, c, (args.samples,), generator=g)
    # Each rank's shard as a DistributedSampler without shuffle gives it: r, r + W, ...
    shards = [torch.arange(r, args.samples, w) for r in range(w)]
    pool = [torch.randn(b, c, generator=g) for _ in range(8)]  # logits, cycled

    def batches(rank):
        idx = shards[rank]
        for k, start in enumerate(range(0, len(idx), b)):
            index = idx[start:start + b]
            yield index, labels[index], pool[k % len(pool)][:len(index)]

    def validate(rank, rec=None):
        cm = torch.zeros(c * c, dtype=torch.int64)
        for index, y, logits in batches(rank):
            pred = logits.argmax(1)
            cm += torch.bincount(y * c + pred, minlength=c * c)
            if rec is not None:
                rec.update(index, y, logits)
        return cm.reshape(c, c)

    # The synced matrix every rank reports: the sum of the ranks' own.
    local = [validate(r) for r in range(w)]
    synced = sum(local)
    out = tempfile.mkdtemp(prefix="shardlens-verdict-bench.")
    labels_npy = os.path.join(out, "labels.npy")
    np.save(labels_npy, labels.numpy().astype(np.int64))

    def recorder(rank):
        return sl.ShardLensRecorder(out, num_classes=c, rank=rank, world_size=w,
                                    dataset_size=args.samples, batch_size=b)

    def record(rank):
        rec = recorder(rank)
        cm = validate(rank, rec)
        rec.set_matrix(cm)
        rec.set_reported(synced)
        return rec.save()

    files = [record(r)[0] for r in range(1, w)]  # the other ranks' dumps, untimed
    run = os.path.join(out, "eval_epoch0.slrun")
    from shardlens_recorder import _recording
    background = hasattr(_recording.Recording, "in_background")
    keys = ("bare", "recorder", "verdict", "heatmap") + (("wait",) if background else ())
    best = {k: float("inf") for k in keys}
    best_cpu = {k: float("inf") for k in keys}

    def cpu():
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.process_time() + children.ru_utime + children.ru_stime

    def timed(key, fn):
        start, start_cpu = time.perf_counter(), cpu()
        result = fn()
        best[key] = min(best[key], time.perf_counter() - start)
        best_cpu[key] = min(best_cpu[key], cpu() - start_cpu)
        return result

    v = None
    for _ in range(args.repeats):
        timed("bare", lambda: validate(0))
        rank0 = timed("recorder", lambda: record(0))
        lines = io.StringIO()
        with contextlib.redirect_stdout(lines):
            v = timed("verdict", lambda: _verdict.judge(args.cli, [rank0[0]] + files, run,
                                                        None, labels_npy))
        if background:
            judging = _recording.Recording(lambda: 0)
            with contextlib.redirect_stdout(lines):
                timed("wait", lambda: judging.in_background(lambda deliver: _verdict.judge(
                    args.cli, [rank0[0]] + files, run, None, labels_npy)))
                judging.settle()
        if hasattr(_verdict, "heatmap_of"):
            timed("heatmap", lambda: _verdict.heatmap_of(v))
        else:  # the dense path: synced and expected matrices from the report
            timed("heatmap", lambda: _verdict.heatmap(v["synced"], v["expected"],
                                                      v["row_difference"]))
    dump_mb = os.path.getsize(rank0[0]) / 1e6
    run_mb = os.path.getsize(run) / 1e6
    print("verdict line: %s" % v["line"])
    # The waiting evaluation's CPU is not the thread's: only its wall time means something.
    times = " ".join("%s_s=%.4f %s_cpu_s=%.4f" % (k, best[k], k, best_cpu[k])
                     for k in keys if k != "wait")
    if background:
        times += " wait_s=%.4f" % best["wait"]
    print("RESULT classes=%d samples=%d world=%d %s verdict_ratio=%.3f verdict_cpu_ratio=%.3f "
          "recorder_ratio=%.3f dump_mb=%.2f run_mb=%.2f" % (
              c, args.samples, w, times, best["verdict"] / best["bare"],
              best_cpu["verdict"] / best_cpu["bare"],
              (best["recorder"] - best["bare"]) / best["bare"], dump_mb, run_mb))
    import shutil
    shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
