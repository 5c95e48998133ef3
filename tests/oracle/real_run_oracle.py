"""Oracle: `shardlens-cli run` against a real torch.distributed evaluation in Python.

Usage: real_run_oracle.py SHARDLENS_CLI MODEL. Python side: gloo, 4 processes,
DistributedSampler(shuffle=True, seed=0), DataLoader(batch_size=32), the reference model on
the first 1001 Fashion-MNIST test images (1001 % 4 != 0, so padding happens), recorded
with integrations/python's recorder; once with a batch limit of 3 and once without.
The CLI's run must give identical records, per-rank and synced matrices, and importing the
Python dumps (.npz and .pt) must give the same run.

Float counters: on the whole Fashion-MNIST train set (where float16 sums pass 2048 and
round), Python keeps float16 and bfloat16 states (`state += bincount` per batch) and
all_reduces them over gloo, once and twice. The CLI's synced matrices must equal gloo's, whose
summation order is not rank order; where this torch's gloo rejects bfloat16, the CLI must say
so and sum the gathered matrices in rank order as torch would. Exits 77 (ctest SKIP) when
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


def join_gloo_group(rank, port, model_path):
    """Joins the 4-rank gloo group and returns the reference model, ready to evaluate."""
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=W)
    model = torch.jit.load(model_path)
    model.eval()
    return model


def worker(rank, port, out_dir, model_path, x, y):
    model = join_gloo_group(rank, port, model_path)
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


FLOAT_B = 256


def float_worker(rank, port, out_dir, model_path, x, y):
    """Float16/bfloat16 states over gloo; rank 0 saves what every collective returned."""
    model = join_gloo_group(rank, port, model_path)
    data = torch.utils.data.TensorDataset(x, y)
    sampler = torch.utils.data.DistributedSampler(data, num_replicas=W, rank=rank,
                                                  shuffle=True, seed=SEED)
    states = {dt: torch.zeros(100, dtype=dt) for dt in (torch.float16, torch.bfloat16)}
    with torch.no_grad():
        for xb, yb in torch.utils.data.DataLoader(data, batch_size=FLOAT_B, sampler=sampler):
            counts = torch.bincount(yb * 10 + model(xb.float()).argmax(1), minlength=100)
            for dt, state in states.items():
                state += counts.to(dt)
    saved = {}
    for dt, state in states.items():
        name = str(dt).split(".")[1]
        # Gathered as float32 (exact for both), since gloo 1.13 cannot even gather bfloat16.
        gathered = [torch.zeros(100, dtype=torch.float32) for _ in range(W)]
        dist.all_gather(gathered, state.float())
        gathered = [g.to(dt) for g in gathered]
        saved[name + "_per_rank"] = torch.stack(gathered).float().numpy()
        try:
            once = state.clone()
            dist.all_reduce(once)
            twice = once.clone()
            dist.all_reduce(twice)
            saved[name + "_once"] = once.float().numpy()
            saved[name + "_twice"] = twice.float().numpy()
        except RuntimeError as e:  # gloo without this dtype: what a user's run would hit
            saved[name + "_error"] = np.array(str(e).splitlines()[0])
            in_rank_order = gathered[0].clone()
            for other in gathered[1:]:
                in_rank_order += other
            saved[name + "_rank_order"] = in_rank_order.float().numpy()
    if rank == 0:
        np.savez(os.path.join(out_dir, "float_states.npz"), **saved)
    dist.destroy_process_group()


def check_float_counters(d, model_path, failures):
    labels = read_idx(os.path.join(FMNIST, "train-labels-idx1-ubyte.gz"))
    images = read_idx(os.path.join(FMNIST, "train-images-idx3-ubyte.gz"))
    n = len(labels) - 8
    x = torch.frombuffer(bytearray(images[16:]), dtype=torch.uint8).reshape(n, 1, 28, 28)
    y = torch.frombuffer(bytearray(labels[8:]), dtype=torch.uint8).long()
    mp.spawn(float_worker, args=(free_port(), d, model_path, x, y), nprocs=W, join=True)
    py = np.load(os.path.join(d, "float_states.npz"))
    common = ["run", "--model", model_path, "--dataset", "fashion-mnist:train", "--world-size",
              str(W), "--batch-size", str(FLOAT_B), "--shuffle", "--seed", str(SEED),
              "--format", "json"]
    cases = [("float16", "all-reduce", "_once"), ("float16", "double", "_twice"),
             ("bfloat16", "all-reduce", "_once")]
    for dtype, sync, which in cases:
        name = "%s %s" % (dtype, sync)
        r = cli(*common, "--counter-dtype", dtype, "--sync", sync)
        if r.returncode != 0:
            failures.append("%s: run failed (%d): %s" % (name, r.returncode, r.stderr))
            continue
        report = json.loads(r.stdout)
        per_rank = py[dtype + "_per_rank"].reshape(W, 10, 10).tolist()
        if report["per_rank"] != per_rank:
            failures.append("%s: per-rank matrices differ from Python's %s states" % (name, dtype))
        if dtype + "_error" in py:  # this gloo cannot sum the dtype: rank order, and a note
            expected = py[dtype + "_rank_order"]
            if "cannot all_reduce " + dtype not in r.stderr:
                failures.append("%s: no note that gloo cannot all_reduce it (python: %s)"
                                % (name, py[dtype + "_error"]))
            how = "gloo rejects it (%s); rank-order sum" % py[dtype + "_error"]
        else:
            expected = py[dtype + which]
            how = "gloo's all_reduce"
            if dtype == "float16" and sync == "all-reduce":  # information: why the wire matters
                ranks = py[dtype + "_per_rank"].astype(np.float16)
                in_order = ranks[0]
                for other in ranks[1:]:
                    in_order = in_order + other
                how += ", which differs from a rank-order sum in %d cells" % int(
                    (in_order.astype(np.float32) != expected).sum())
        if report["synced"] != expected.reshape(10, 10).tolist():
            failures.append("%s: synced matrix differs from Python's (%s)" % (name, how))
        else:
            print("%s: synced matrix equals Python's (%s; largest cell %g)"
                  % (name, how, expected.max()))


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
            dumps = [np.load(os.path.join(d, name, "eval_epoch0_rank%d.npz" % k)) for k in range(W)]
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
                paths = [os.path.join(d, name, "eval_epoch0_rank%d.%s" % (k, ext)) for k in range(W)]
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
        check_float_counters(d, model_path, failures)
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
