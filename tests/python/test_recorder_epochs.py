"""The Python recorder over several epochs of a real 3-process gloo evaluation.

Run by pytest (tests/python, with --cli SHARDLENS_CLI). Each rank evaluates 3 epochs with a
shuffled DistributedSampler (set_epoch every epoch) and a batch limit of 2 batches per rank per epoch (Lightning's
limit_val_batches=2), recording with ShardLensRecorder. Checks: one dump per rank and epoch
named eval_epoch{e}_rank{r}.npz/.pt with a scalar int64 `epoch`; every dump's records are
what the rank evaluated that epoch (torch's own sampler indices); the rows drift across
epochs (per-epoch bincount of the targets) while the total stays the same.

Multi-epoch import: all epochs' dumps are imported into one run file and `diagnose --run R
--format json` must print {"epochs": [...]} with one entry per epoch whose per_rank matrices
are torch.bincount of what each rank evaluated that epoch, whose synced matrix is the ranks'
all_reduce, whose reported rows drift from epoch to epoch, and exit 1.
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

N, C, W, B = 50, 5, 3, 4  # 50 % 3 != 0: the sampler pads, but the limit never reaches it
EPOCHS, LIMIT = 3, 2  # LIMIT: batches per rank per epoch (limit_val_batches=2)


def labels():
    i = torch.arange(N)
    return (i * 7 + i // 4) % C  # unbalanced enough that subsets differ in class counts


def predict(index):
    """A stand-in model: deterministic class id per dataset index, often wrong."""
    return (index * 3 + 1) % C


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, port, out_dir):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=W)
    x = torch.arange(N, dtype=torch.float32).reshape(N, 1)
    data = IndexedDataset(torch.utils.data.TensorDataset(x, labels()))
    sampler = torch.utils.data.DistributedSampler(data, num_replicas=W, rank=rank, shuffle=True,
                                                  seed=0)
    loader = torch.utils.data.DataLoader(data, batch_size=B, sampler=sampler)
    rec = ShardLensRecorder(out_dir, num_classes=C, sampler=sampler, batch_size=B,
                            formats=("npz", "pt"))
    truth = []
    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)  # the recorder takes the epoch from here
        rec.reset()
        local = torch.zeros(C * C, dtype=torch.int64)
        for b, (index, xb, yb) in enumerate(loader):
            if b == LIMIT:
                break
            logits = torch.nn.functional.one_hot(predict(xb[:, 0].long()), C).float()
            rec.update(index, yb, logits)
            local += torch.bincount(yb * C + logits.argmax(1), minlength=C * C)
        synced = local.clone()
        dist.all_reduce(synced)
        rec.set_matrix(local.reshape(C, C))
        rec.set_reported(synced.reshape(C, C))
        written = rec.save()
        # torch's own account of what this rank evaluated: the sampler's order, cut by the limit.
        evaluated = list(iter(sampler))[:LIMIT * B]
        truth.append({"indices": evaluated, "local": local.reshape(C, C).tolist(),
                      "synced": synced.reshape(C, C).tolist(),
                      "written": [os.path.basename(p) for p in written]})
    with open(os.path.join(out_dir, "truth_rank%d.json" % rank), "w") as f:
        json.dump(truth, f)
    dist.destroy_process_group()


def cli(args):
    return subprocess.run([CLI] + args, capture_output=True, text=True, timeout=120)


def bincount_matrix(indices):
    idx = torch.tensor(indices, dtype=torch.int64)
    y = labels()[idx]
    return torch.bincount(y * C + predict(idx), minlength=C * C).reshape(C, C).tolist()


def check_dumps(out_dir, truths):
    y = labels()
    expected_files = {"eval_epoch%d_rank%d.%s" % (e, r, ext)
                      for e in range(EPOCHS) for r in range(W) for ext in ("npz", "pt")}
    found = {f for f in os.listdir(out_dir) if f.startswith("eval_")}
    assert found == expected_files, (sorted(found), sorted(expected_files))
    for r in range(W):
        for e in range(EPOCHS):
            t = truths[r][e]
            assert t["written"] == ["eval_epoch%d_rank%d.npz" % (e, r),
                                    "eval_epoch%d_rank%d.pt" % (e, r)], t["written"]
            d = np.load(os.path.join(out_dir, "eval_epoch%d_rank%d.npz" % (e, r)))
            assert d["epoch"].shape == () and d["epoch"].dtype == np.int64, d["epoch"]
            assert int(d["epoch"]) == e and int(d["rank"]) == r and int(d["world_size"]) == W
            assert "sanity" not in d.files, d.files
            assert d["index"].tolist() == t["indices"], (r, e, d["index"].tolist(), t["indices"])
            assert d["target"].tolist() == y[torch.tensor(t["indices"])].tolist()
            assert d["prediction"].tolist() == predict(torch.tensor(t["indices"])).tolist()
            assert d["flags"].tolist() == [0] * (LIMIT * B), d["flags"]
            assert d["matrix"].tolist() == t["local"] == bincount_matrix(t["indices"])
            assert d["reported"].tolist() == t["synced"]
            p = torch.load(os.path.join(out_dir, "eval_epoch%d_rank%d.pt" % (e, r)))
            assert p["epoch"].dim() == 0 and p["epoch"].dtype == torch.int64 and \
                int(p["epoch"]) == e, p["epoch"]
            assert p["index"].tolist() == t["indices"]
    # The shuffle moves with the epoch: what the ranks evaluated differs from epoch to epoch.
    per_epoch = [sorted(i for r in range(W) for i in truths[r][e]["indices"])
                 for e in range(EPOCHS)]
    assert len({tuple(s) for s in per_epoch}) == EPOCHS, per_epoch
    # Row sums drift (the class counts of the evaluated subset), the total does not.
    rows = [torch.bincount(y[torch.tensor(s)], minlength=C).tolist() for s in per_epoch]
    assert len({tuple(r) for r in rows}) > 1, rows
    assert all(sum(r) == W * LIMIT * B for r in rows), rows
    print("dumps: %d epochs x %d ranks, records match the sampler; row sums per epoch %s"
          % (EPOCHS, W, rows))


def check_single_epoch_import(out_dir, truths, labels_path):
    """One epoch's dumps (with their `epoch` array) import as an ordinary run."""
    dumps = [os.path.join(out_dir, "eval_epoch0_rank%d.npz" % r) for r in range(W)]
    r = cli(["import"] + dumps + ["--dataset", "npy:" + labels_path, "--out",
                                  os.path.join(out_dir, "epoch0.slrun"), "--format", "json"])
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    for k in range(W):
        assert report["per_rank"][k] == truths[k][0]["local"], (k, report["per_rank"][k])
    assert report["synced"] == truths[0][0]["synced"], report["synced"]
    print("epoch 0 dumps import as one run")


def check_multi_epoch_import(out_dir, truths, labels_path):
    # The CLI groups the dumps by their `epoch`.
    dumps = sorted(os.path.join(out_dir, f) for f in os.listdir(out_dir)
                   if f.startswith("eval_epoch") and f.endswith(".npz"))
    assert len(dumps) == EPOCHS * W, dumps
    run_path = os.path.join(out_dir, "epochs.slrun")
    r = cli(["import"] + dumps + ["--dataset", "npy:" + labels_path, "--out", run_path])
    assert r.returncode == 0, "multi-epoch import failed (%d): %s" % (r.returncode, r.stderr)
    d = cli(["diagnose", "--run", run_path, "--format", "json"])
    assert d.returncode == 1, (d.returncode, d.stdout[:2000], d.stderr)
    report = json.loads(d.stdout)
    assert isinstance(report, dict) and "epochs" in report, d.stdout[:2000]
    epochs = report["epochs"]
    assert [ep["epoch"] for ep in epochs] == list(range(EPOCHS)), [ep.get("epoch") for ep in epochs]
    for e, ep in enumerate(epochs):
        for k in range(W):
            want = bincount_matrix(truths[k][e]["indices"])
            assert ep["per_rank"][k] == want, (e, k, ep["per_rank"][k], want)
        assert ep["synced"] == truths[0][e]["synced"], (e, ep["synced"])
        assert not ep["correct"], e  # a batch limit: every epoch misses samples
    # The rows drift: the reported row sums are not the same in every epoch.
    rows = [ep["row_sums"]["observed"] for ep in epochs]
    assert any(r != rows[0] for r in rows[1:]), rows
    print("multi-epoch import: diagnose prints %d epochs matching torch, exit 1" % EPOCHS)


def test_epochs_import_as_one_run(cli):
    global CLI
    CLI = cli
    with tempfile.TemporaryDirectory() as out_dir:
        mp.spawn(worker, args=(free_port(), out_dir), nprocs=W, join=True)
        truths = [json.load(open(os.path.join(out_dir, "truth_rank%d.json" % r)))
                  for r in range(W)]
        check_dumps(out_dir, truths)
        labels_path = os.path.join(out_dir, "labels.npy")
        np.save(labels_path, labels().numpy().astype(np.int64))
        check_single_epoch_import(out_dir, truths, labels_path)
        check_multi_epoch_import(out_dir, truths, labels_path)

