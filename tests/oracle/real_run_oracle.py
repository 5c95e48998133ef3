"""Oracle: `shardlens-cli run` against a real torch.distributed evaluation in Python.

Usage: real_run_oracle.py SHARDLENS_CLI MODEL. Python side: gloo, 4 processes,
DistributedSampler(shuffle=True, seed=0), DataLoader(batch_size=32), the reference model on
the first 1001 Fashion-MNIST test images (1001 % 4 != 0, so padding happens), recorded
with integrations/python's recorder; once with a batch limit of 3 and once without.
The CLI's run must give identical records, per-rank and synced matrices, and importing the
Python dumps (.npz and .pt) must give the same run. Exits 77 (ctest SKIP) when
/usr/bin/python3 has no torch/numpy or the CLI was built without LibTorch.
"""
import gzip
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "integrations", "python"))
try:
    import numpy as np
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
except ImportError as e:
    print("SKIP: torch/numpy not available for %s (%s)" % (sys.executable, e))
    sys.exit(77)
from shardlens_recorder import IndexedDataset, ShardLensRecorder  # noqa: E402

FMNIST = "/usr/share/datasets/fashion-mnist"
N, W, B, SEED = 1001, 4, 32, 0
CONFIGS = {"limited": 3, "full": None}  # limit_val_batches


def read_idx(path):
    with gzip.open(path, "rb") as f:
        return f.read()


def write_subset(out_dir):
    labels = read_idx(os.path.join(FMNIST, "t10k-labels-idx1-ubyte.gz"))
    images = read_idx(os.path.join(FMNIST, "t10k-images-idx3-ubyte.gz"))
    lab = os.path.join(out_dir, "sub-labels-idx1-ubyte")
    img = os.path.join(out_dir, "sub-images-idx3-ubyte")
    with open(lab, "wb") as f:
        f.write(struct.pack(">II", 0x801, N) + labels[8:8 + N])
    with open(img, "wb") as f:
        f.write(struct.pack(">IIII", 0x803, N, 28, 28) + images[16:16 + N * 784])
    x = torch.frombuffer(bytearray(images[16:16 + N * 784]), dtype=torch.uint8)
    y = torch.frombuffer(bytearray(labels[8:8 + N]), dtype=torch.uint8).long()
    return lab, x.reshape(N, 1, 28, 28), y


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, port, out_dir, model_path, x, y):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=W)
    model = torch.jit.load(model_path)
    model.eval()
    data = IndexedDataset(torch.utils.data.TensorDataset(x, y))
    for name, limit in CONFIGS.items():
        sampler = torch.utils.data.DistributedSampler(data, num_replicas=W, rank=rank,
                                                      shuffle=True, seed=SEED)
        loader = torch.utils.data.DataLoader(data, batch_size=B, sampler=sampler)
        rec = ShardLensRecorder(os.path.join(out_dir, name), num_classes=10, sampler=sampler,
                                batch_size=B, formats=("npz", "pt"))
        local = torch.zeros(100, dtype=torch.int64)
        with torch.no_grad():
            for k, (index, xb, yb) in enumerate(loader):
                if limit is not None and k >= limit:
                    break
                pred = model(xb.float()).argmax(1)
                rec.update(index, yb, pred)
                local += torch.bincount(yb * 10 + pred, minlength=100)
        synced = local.clone()
        dist.all_reduce(synced)
        rec.set_matrix(local.reshape(10, 10))
        rec.set_reported(synced.reshape(10, 10))
        rec.save()
    dist.destroy_process_group()


def cli(*args):
    r = subprocess.run([sys.argv[1]] + list(args), capture_output=True, text=True, timeout=300)
    return r


def main():
    cli_path, model_path = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as d:
        lab, x, y = write_subset(d)
        if "no LibTorch" in cli("run", "--dataset", "idx:" + lab, "--world-size", "1",
                                "--timeout", "5").stderr:
            print("SKIP: shardlens-cli was built without LibTorch")
            sys.exit(77)
        mp.spawn(worker, args=(free_port(), d, model_path, x, y), nprocs=W, join=True)
        for name, limit in CONFIGS.items():
            out = os.path.join(d, name + ".slrun")
            args = ["run", "--model", model_path, "--dataset", "idx:" + lab, "--world-size",
                    str(W), "--batch-size", str(B), "--shuffle", "--seed", str(SEED),
                    "--format", "json", "--out", out]
            if limit is not None:
                args += ["--limit-batches", str(limit)]
            r = cli(*args)
            if r.returncode != 0:
                failures.append("%s: run failed (%d): %s" % (name, r.returncode, r.stderr))
                continue
            report = json.loads(r.stdout)
            dumps = [np.load(os.path.join(d, name, "eval_rank%d.npz" % k)) for k in range(W)]
            for k in range(W):
                if report["per_rank"][k] != dumps[k]["matrix"].tolist():
                    failures.append("%s: rank %d matrix differs from Python's" % (name, k))
            if report["synced"] != dumps[0]["reported"].tolist():
                failures.append("%s: synced matrix differs from Python's all_reduce" % name)
            run = np.load(out)
            for k in range(W):
                for field, key in (("index", "index"), ("target", "target"),
                                   ("prediction", "prediction"), ("flags", "flags")):
                    if run["rank%d_%s" % (k, field)].tolist() != dumps[k][key].tolist():
                        failures.append("%s: rank %d %s differ from Python's" % (name, k, field))
            padded = sum(int(run["rank%d_flags" % k].sum()) for k in range(W))
            expect_pad = 0 if limit is not None else (-N) % W
            if padded != expect_pad:
                failures.append("%s: %d padding records, expected %d" % (name, padded, expect_pad))
            for ext in ("npz", "pt"):
                paths = [os.path.join(d, name, "eval_rank%d.%s" % (k, ext)) for k in range(W)]
                r = cli("import", *paths, "--dataset", "idx:" + lab, "--format", "json",
                        "--out", os.path.join(d, name + "_" + ext + ".slrun"))
                if r.returncode != 0:
                    failures.append("%s: import of .%s dumps failed: %s" % (name, ext, r.stderr))
                    continue
                imported = json.loads(r.stdout)
                for key in ("per_rank", "synced", "class_counts"):
                    if imported[key] != report[key]:
                        failures.append("%s: imported .%s %s differs from the CLI run"
                                        % (name, ext, key))
            print("%s: run and imports agree with Python (%d padding records)" % (name, padded))
        # Inference alone: C++ predicts exactly what Python predicts on the whole test set.
        out = os.path.join(d, "whole.slrun")
        r = cli("run", "--model", model_path, "--dataset", "fashion-mnist:test", "--world-size",
                "1", "--batch-size", "1000", "--out", out)
        if r.returncode != 0:
            failures.append("whole test set: run failed: " + r.stderr)
        else:
            torch.set_num_threads(1)
            model = torch.jit.load(model_path)
            images = read_idx(os.path.join(FMNIST, "t10k-images-idx3-ubyte.gz"))
            xs = torch.frombuffer(bytearray(images[16:]), dtype=torch.uint8).reshape(-1, 1, 28, 28)
            with torch.no_grad():
                pred = torch.cat([model(xs[i:i + 1000].float()).argmax(1)
                                  for i in range(0, len(xs), 1000)])
            run = np.load(out)
            if run["rank0_index"].tolist() != list(range(len(xs))):
                failures.append("whole test set: unexpected order")
            elif run["rank0_prediction"].tolist() != pred.tolist():
                diff = int((torch.tensor(run["rank0_prediction"]) != pred).sum())
                failures.append("whole test set: %d predictions differ from Python's" % diff)
            else:
                print("whole test set: %d C++ predictions equal Python's" % len(xs))
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
