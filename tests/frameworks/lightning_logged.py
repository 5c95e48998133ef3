"""What `self.log(..., sync_dist=True)` logs with uneven shards, against real Lightning.

Usage: lightning_logged.py SHARDLENS_CLI. A real 4-rank Trainer (gloo) validates 10 samples
through Lightning's UnrepeatedDistributedSampler (3, 3, 2, 2 samples a rank) and logs the
accuracy two ways users do:
  epoch_acc  each rank's own accuracy, logged in on_validation_epoch_end with sync_dist=True:
             Lightning averages the ranks' values with equal weights, which is not the
             accuracy when the shards are uneven; ShardLens shows it as
             metrics.rank_mean_accuracy (the metrics row "accuracy, mean of ranks").
  batch_acc  each batch's accuracy, logged in validation_step with sync_dist=True and the
             batch size: Lightning averages the ranks' weighted sums and their batch-size
             totals, the latter in place in an int64 tensor, so 10 / 4 = 2.5 becomes 2 and it
             logs 0.75 for an accuracy of 0.6 (metrics.batch_logged_accuracy).
Both are compared with `shardlens-cli simulate --sampler unrepeated` of the same table.
With WORKER as the first argument the script is the Trainer (Lightning's launcher re-runs it
for ranks 1..3).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import frameworks  # noqa: E402

C, W, N, B = 5, 4, 10, 2


def labels_of(n):
    return [(i * 7 + i // 11) % C for i in range(n)]


def predictions_of(labels):
    return [y if i % 3 else (y + 1 + i % 2) % C for i, y in enumerate(labels)]


def worker(out):
    import lightning.pytorch as L
    import torch
    import torch.nn.functional as F
    from lightning.pytorch.overrides.distributed import UnrepeatedDistributedSampler
    from lightning.pytorch.strategies import DDPStrategy
    from torch.utils.data import DataLoader, TensorDataset

    labels = labels_of(N)
    data = TensorDataset(torch.tensor(predictions_of(labels)), torch.tensor(labels))

    class Module(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(C, C, bias=False)
            with torch.no_grad():
                self.lin.weight.copy_(torch.eye(C))

        def forward(self, p):
            return self.lin(F.one_hot(p, C).float())

        def on_validation_epoch_start(self):
            self.correct, self.seen = 0, 0

        def validation_step(self, batch, batch_idx):
            p, y = batch
            hit = self(p).argmax(1) == y
            self.log("batch_acc", hit.float().mean(), sync_dist=True, batch_size=len(y))
            self.correct += int(hit.sum())
            self.seen += len(y)

        def on_validation_epoch_end(self):
            self.log("epoch_acc", torch.tensor(self.correct / self.seen), sync_dist=True)

        def val_dataloader(self):
            return DataLoader(data, batch_size=B,
                              sampler=UnrepeatedDistributedSampler(data, shuffle=False))

    trainer = L.Trainer(accelerator="cpu", devices=W, num_nodes=1,
                        strategy=DDPStrategy(process_group_backend="gloo"),
                        use_distributed_sampler=False, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.validate(Module())
    if trainer.global_rank == 0:
        logged = {k: float(v) for k, v in trainer.callback_metrics.items()}
        with open(os.path.join(out, "logged.json"), "w") as f:
            json.dump(logged, f)


def main():
    cli = os.path.abspath(sys.argv[1])
    import numpy as np
    with tempfile.TemporaryDirectory() as out:
        labels = labels_of(N)
        np.save(os.path.join(out, "labels.npy"), np.array(labels, dtype=np.int64))
        np.save(os.path.join(out, "preds.npy"), np.array(predictions_of(labels), dtype=np.int64))
        env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=HERE)
        for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_PORT", "PL_GLOBAL_SEED"):
            env.pop(var, None)
        env["MASTER_PORT"] = str(frameworks.free_port())
        start = time.time()
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "WORKER", out],
                              capture_output=True, text=True, timeout=400, env=env)
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
        with open(os.path.join(out, "logged.json")) as f:
            logged = json.load(f)
        report = frameworks.cli_json(
            cli, "simulate", "--dataset", "npy:" + os.path.join(out, "labels.npy"),
            "--predictor", "npy:" + os.path.join(out, "preds.npy"), "--world-size", str(W),
            "--batch-size", str(B), "--sampler", "unrepeated", "--no-shuffle")
    metrics = report["metrics"]
    print("Trainer (4 ranks, %.0f s) logged %s; ShardLens: rank mean %s, accuracy %s"
          % (time.time() - start, logged, metrics["rank_mean_accuracy"],
             metrics["reported"]["accuracy"]))
    # float32 in Lightning: equal to a few ulps.
    assert abs(logged["epoch_acc"] - metrics["rank_mean_accuracy"]) < 1e-6, (logged, metrics)
    assert abs(logged["batch_acc"] - metrics["batch_logged_accuracy"]) < 1e-6, (logged, metrics)
    # The point of the row: the mean of the ranks is not the accuracy here (3, 3, 2, 2 samples).
    truth = sum(a == b for a, b in zip(labels, predictions_of(labels))) / N
    assert abs(metrics["expected"]["accuracy"] - truth) < 1e-12, metrics["expected"]
    assert abs(logged["epoch_acc"] - truth) > 0.01, (logged, truth)
    assert abs(logged["batch_acc"] - truth) > 0.1, (logged, truth)
    print("PASS")


if __name__ == "__main__":
    if sys.argv[1] == "WORKER":
        worker(sys.argv[2])
    else:
        frameworks.require_venv()
        main()
