"""The per-rank-mean mistake as a real Lightning DDP Trainer logs it, against ShardLens's
task metrics of the recorded run.

task_metrics_lightning_worker.py validates 41 segmentation images (ignore_index 255) on 3 CPU
ranks over gloo (2 work too), its padded DistributedSampler duplicating 1 image, and logs the
MulticlassJaccardIndex's compute() (synced) and each rank's own mIoU with sync_dist=True.
`shardlens-cli import` of the ShardLensCallback's dumps must give, in task_metrics:
  mIoU reported      = the logged compute() of the synced state;
  mIoU per-rank mean = the logged sync_dist=True mean of the ranks' own mIoU;
  mIoU true          = torchmetrics' mIoU of every image once, in one process;
to torchmetrics' float32 (2e-6).

Usage: task_metrics_lightning.py SHARDLENS_CLI
"""
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import frameworks  # noqa: E402

frameworks.require_venv()

import torch  # noqa: E402
from torchmetrics.classification import MulticlassJaccardIndex  # noqa: E402

import task_metrics_lightning_worker as worker  # noqa: E402

CLI = sys.argv[1]
TOL = 2e-6


def one_process_miou():
    m = MulticlassJaccardIndex(worker.C, ignore_index=worker.IGNORE)
    for i in range(worker.N):
        m.update(worker.prediction(i)[None], worker.target(i)[None])
    return float(m.compute())


def check(world, tmp, truth):
    out = os.path.join(tmp, "world%d" % world)
    started = time.time()
    proc = frameworks.lightning_worker(os.path.join(frameworks.HERE,
                                                    "task_metrics_lightning_worker.py"),
                                       [str(world), out], CLI)
    if proc.returncode != 0:
        return ["%d ranks: the Trainer failed:\n%s" % (world, (proc.stdout + proc.stderr)[-4000:])]
    logged = json.load(open(os.path.join(out, "logged.json")))[0]
    files = sorted(glob.glob(os.path.join(out, "runs", "*_rank*.npz")))
    imported = subprocess.run([CLI, "import", *files, "--out", os.path.join(out, "run.slrun"),
                               "--format", "json"], capture_output=True, text=True, timeout=120)
    if imported.returncode != 0:
        return ["%d ranks: import of %s failed: %s" % (world, files, imported.stderr[-2000:])]
    miou = json.loads(imported.stdout)["task_metrics"]["metrics"]["miou"]
    failures = []
    for side, want in (("reported", logged["miou"]), ("per_rank_mean", logged["miou_rank_mean"]),
                       ("true", truth)):
        if miou[side] is None or abs(miou[side] - want) > TOL:
            failures.append("%d ranks: mIoU %s: ShardLens %s, Lightning/torchmetrics %s" % (
                world, side, miou[side], want))
    print("%d ranks (%.0f s): mIoU logged %.6f, sync_dist mean of the ranks' %.6f, one process "
          "%.6f; ShardLens reported %s, per-rank mean %s, true %s" % (
              world, time.time() - started, logged["miou"], logged["miou_rank_mean"], truth,
              miou["reported"], miou["per_rank_mean"], miou["true"]), flush=True)
    if abs(logged["miou_rank_mean"] - logged["miou"]) < 1e-4:
        failures.append("%d ranks: the per-rank mean equals the synced mIoU: no mistake shown"
                        % world)
    return failures


def main():
    truth = one_process_miou()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        failures += check(3, tmp, truth)  # one Trainer launch: the file stays under a minute
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
