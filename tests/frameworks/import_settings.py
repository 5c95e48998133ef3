"""Dumps written by real numpy and torch 2.x as the recorder writes them, imported.

Per-rank dumps of a real torch DistributedSampler (shuffled, padded) carry `settings_json`
(UTF-8 JSON in a uint8 array, in .npz and in .pt alike), two validation dataloaders and two
validations in one epoch. The import keeps them as four evaluations (no false overlap), the
report names the recorded settings, `simulate --like` reproduces every one per rank and
synced (torch's recorded version choosing --torch-version), and dumps without records are
refused, each named.

Usage: import_settings.py SHARDLENS_CLI
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import frameworks  # noqa: E402

frameworks.require_venv()

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch.utils.data.distributed import DistributedSampler  # noqa: E402

CLI = sys.argv[1]
N, W, B, C, SEED = 23, 4, 2, 3, 5
TARGETS = [(7 * i) % C for i in range(N)]
PRED = [(t + (i % 4 == 0)) % C for i, t in enumerate(TARGETS)]


def settings(rank, epoch, validation, loader):
    return {"framework": "lightning", "sampler": "distributed", "inner_sampler": None,
            "shuffle": True, "seed": SEED, "sampler_epoch": epoch, "sampler_drop_last": False,
            "loader_drop_last": False, "batch_size": B, "limit_batches": "all",
            "sanity_steps": 0, "sanity": False, "stage": "validate", "dataloader_idx": loader,
            "validation_in_epoch": validation, "val_check_interval": "0.5", "world_size": W,
            "rank": rank, "dataset_size": N, "num_classes": C, "epoch": epoch,
            "global_step": 10, "versions": {"torch": torch.__version__}}


def arrays(rank, epoch, validation, loader):
    sampler = DistributedSampler(range(N), num_replicas=W, rank=rank, shuffle=True, seed=SEED)
    sampler.set_epoch(epoch)
    index = np.array(list(sampler), dtype=np.int64)
    text = json.dumps(settings(rank, epoch, validation, loader)).encode()
    return {"index": index, "target": np.array([TARGETS[i] for i in index], dtype=np.int64),
            "prediction": np.array([PRED[i] for i in index], dtype=np.int64),
            "rank": np.array(rank), "world_size": np.array(W),
            "settings_json": np.frombuffer(text, dtype=np.uint8).copy()}


def run(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True)


def main():
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory() as d:
        labels = os.path.join(d, "labels.npy")
        np.save(labels, np.array(TARGETS, dtype=np.int64))
        paths = []
        for validation in (0, 1):
            for loader in (0, 1):
                for rank in range(W):
                    p = os.path.join(d, "val_e1_v%d_dl%d_rank%d.npz" % (validation, loader, rank))
                    np.savez(p, **arrays(rank, 1, validation, loader))
                    paths.append(p)
        out = os.path.join(d, "run.slrun")
        proc = run("import", *paths, "--dataset", "npy:" + labels, "--out", out,
                   "--format", "json")
        check(proc.returncode == 0, "import of 16 .npz dumps: %s" % proc.stderr.strip())
        report = json.loads(proc.stdout) if proc.returncode == 0 else {"epochs": []}
        labels_seen = [e.get("label") for e in report.get("epochs", [])]
        check(labels_seen == ["epoch 1, validation 0, dataloader 0",
                              "epoch 1, validation 0, dataloader 1",
                              "epoch 1, validation 1, dataloader 0",
                              "epoch 1, validation 1, dataloader 1"],
              "four evaluations, labelled: %s" % labels_seen)
        patterns = {f["pattern"] for e in report.get("epochs", []) for f in e["diagnosis"]}
        check("rank-overlap" not in patterns and "padding-duplicates" in patterns,
              "no false overlap, the padding found: %s" % sorted(patterns))
        check(all(e.get("recorded_settings", {}).get("seed") == SEED
                  for e in report.get("epochs", [])), "recorded settings in the JSON report")
        like = run("simulate", "--like", out, "--format", "json")
        check(like.returncode == 0, "simulate --like exits 0: %s" % like.stderr.strip())
        if like.returncode in (0, 1):
            j = json.loads(like.stdout)
            check(j["equal"] and len(j["evaluations"]) == 4,
                  "simulate --like equals every evaluation per rank and synced")
            flags = j["evaluations"][0]["flags"]
            major, minor = torch.__version__.split(".")[:2]
            check("--torch-version %s.%s" % (major, minor) in flags,
                  "the recorded torch version chooses --torch-version: %s" % flags)
        other = run("simulate", "--like", out, "--seed", str(SEED + 1))
        check(other.returncode == 1 and "DIFFERS" in other.stdout,
              "another seed differs from the run (exit %d)" % other.returncode)

        # torch.save of the same dict (the .pt form of a dump), when the CLI reads .pt.
        pt = os.path.join(d, "pt_rank%d.pt")
        for rank in range(W):
            torch.save({k: torch.from_numpy(np.asarray(v)) for k, v in
                        arrays(rank, 1, 0, 0).items()}, pt % rank)
        proc = run("import", *[pt % r for r in range(W)], "--out", os.path.join(d, "pt.slrun"),
                   "--format", "json")
        if "needs LibTorch" in proc.stderr:
            print("skip .pt: %s" % proc.stderr.strip(), flush=True)
        else:
            ok = proc.returncode == 0 and \
                json.loads(proc.stdout).get("recorded_settings", {}).get("seed") == SEED
            check(ok, ".pt dumps of torch %s carry settings_json: %s" %
                  (torch.__version__, proc.stderr.strip()))

        empty = []
        for rank in range(2):
            p = os.path.join(d, "empty_rank%d.npz" % rank)
            np.savez(p, index=np.zeros(0, np.int64), target=np.zeros(0, np.int64),
                     prediction=np.zeros(0, np.int64), world_size=np.array(2))
            empty.append(p)
        proc = run("import", *empty, "--out", os.path.join(d, "empty.slrun"))
        check(proc.returncode == 2 and all(p + ": holds no records" in proc.stderr for p in empty),
              "empty dumps refused, each named: %s" % proc.stderr.strip())

    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
