"""The Python recorder in a real 2-process gloo evaluation, imported by shardlens-cli.

Run by pytest (tests/python, with --cli SHARDLENS_CLI). Checks that the imported run has
exactly the per-rank and synced matrices the Python ranks computed (bincount + a summing collective: torchmetrics all_gathers the states and sums them, the same counts), the padding flags
of DistributedSampler, the expected matrix (every index was evaluated), and that .pt dumps
import to the same run when the CLI has LibTorch. A second run whose ranks never sync and
each report their own matrix imports with every report kept and is diagnosed `unsynced`.
"""
import json
import os
import socket
import subprocess
import tempfile

import pytest

np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

from shardlens_recorder import IndexedDataset, ShardLensRecorder  # noqa: E402

CLI = None  # the shardlens-cli under test (set by the test)

N, C, W, B = 23, 3, 2, 4  # 23 % 2 != 0: DistributedSampler pads rank 1


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, port, out_dir, synced_metric=True):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=W)
    x = torch.arange(N, dtype=torch.float32).reshape(N, 1)
    y = torch.arange(N) % C
    data = IndexedDataset(torch.utils.data.TensorDataset(x, y))
    sampler = torch.utils.data.DistributedSampler(data, num_replicas=W, rank=rank, shuffle=True,
                                                  seed=0)
    loader = torch.utils.data.DataLoader(data, batch_size=B, sampler=sampler)
    rec = ShardLensRecorder(out_dir, num_classes=C, sampler=sampler, batch_size=B,
                            formats=("npz", "pt"))
    local = torch.zeros(C * C, dtype=torch.int64)
    for index, xb, yb in loader:
        # A stand-in model: deterministic logits per sample, argmax = (7 * x) % C.
        logits = torch.nn.functional.one_hot((xb[:, 0].long() * 7) % C, C).float()
        rec.update(index, yb, logits)
        local += torch.bincount(yb * C + logits.argmax(1), minlength=C * C)
    synced = local.clone()
    if synced_metric:
        dist.all_reduce(synced)  # torchmetrics' dist_reduce_fx="sum"
    # else the unsynced pitfall: each rank reports (and logs) its own local matrix.
    rec.set_matrix(local.reshape(C, C))
    rec.set_reported(synced.reshape(C, C))
    rec.save()
    with open(os.path.join(out_dir, "truth_rank%d.json" % rank), "w") as f:
        json.dump({"local": local.reshape(C, C).tolist(), "synced": synced.reshape(C, C).tolist(),
                   "flags": rec.flags}, f)
    dist.destroy_process_group()


def cli(args):
    return subprocess.run([CLI] + args, capture_output=True, text=True)


def check_import(out_dir, ext, truths):
    dumps = sorted(os.path.join(out_dir, f) for f in os.listdir(out_dir) if f.endswith("." + ext))
    assert len(dumps) == W, dumps
    run_path = os.path.join(out_dir, "run_%s.slrun" % ext)
    r = cli(["import"] + dumps + ["--out", run_path, "--format", "json"])
    if r.returncode != 0:
        return r
    report = json.loads(r.stdout)
    for rank in range(W):
        assert report["per_rank"][rank] == truths[rank]["local"], (rank, report["per_rank"][rank])
    assert report["synced"] == truths[0]["synced"], report["synced"]
    run = np.load(run_path)
    for rank in range(W):
        assert run["rank%d_flags" % rank].tolist() == truths[rank]["flags"]
    # n = 23 over 2 ranks: rank 1 carries one padding duplicate.
    assert sum(truths[1]["flags"]) == 1 and sum(truths[0]["flags"]) == 0
    assert any(f["pattern"] == "padding-duplicates" for f in report["diagnosis"]), report["diagnosis"]
    # Padding or not, every index was evaluated: every prediction is known, and the expected
    # matrix is torch.bincount over the whole dataset.
    y = torch.arange(N) % C
    expected = torch.bincount(y * C + (torch.arange(N) * 7) % C, minlength=C * C).reshape(C, C)
    assert report["expected"] == expected.tolist(), (report["expected"], expected.tolist())
    return r


def check_unsynced(out_dir, truths):
    """Each rank reported its own matrix: the import keeps every report, logs rank 0's, and
    the diagnosis names `unsynced`."""
    dumps = sorted(os.path.join(out_dir, f) for f in os.listdir(out_dir) if f.endswith(".npz"))
    run_path = os.path.join(out_dir, "unsynced.slrun")
    r = cli(["import"] + dumps + ["--out", run_path, "--format", "json"])
    assert r.returncode == 0, "unsynced import refused: " + r.stderr
    report = json.loads(r.stdout)
    assert report["reported_per_rank"] == [truths[k]["local"] for k in range(W)], report
    assert report["synced"] == truths[0]["local"], report["synced"]
    patterns = [f["pattern"] for f in report["diagnosis"]]
    assert "unsynced" in patterns, patterns
    assert any("disagree" in f["explanation"] for f in report["diagnosis"]), report["diagnosis"]
    run = np.load(run_path)
    for k in range(W):
        assert run["rank%d_reported" % k].tolist() == truths[k]["local"]
    d = cli(["diagnose", "--run", run_path])
    assert d.returncode == 1 and "[unsynced]" in d.stdout, (d.returncode, d.stdout, d.stderr)


def test_gloo_run_imports_exactly(cli):
    global CLI
    CLI = cli
    with tempfile.TemporaryDirectory() as out_dir:
        mp.spawn(worker, args=(free_port(), out_dir), nprocs=W, join=True)
        truths = [json.load(open(os.path.join(out_dir, "truth_rank%d.json" % r))) for r in range(W)]
        r = check_import(out_dir, "npz", truths)
        assert r.returncode == 0, r.stderr
        print("npz dumps: imported run matches the gloo run")
        r = check_import(out_dir, "pt", truths)
        if r.returncode != 0:
            assert "LibTorch" in r.stderr, r.stderr
            print("pt dumps: skipped, this shardlens-cli has no LibTorch (%s)" % r.stderr.strip())
        else:
            print("pt dumps: imported run matches the gloo run")
    with tempfile.TemporaryDirectory() as out_dir:
        mp.spawn(worker, args=(free_port(), out_dir, False), nprocs=W, join=True)
        truths = [json.load(open(os.path.join(out_dir, "truth_rank%d.json" % r))) for r in range(W)]
        assert truths[0]["local"] != truths[1]["local"]
        check_unsynced(out_dir, truths)
        print("unsynced gloo run: imported with every rank's report, diagnosed unsynced")

