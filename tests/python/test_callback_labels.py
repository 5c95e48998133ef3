"""The labels each evaluation is checked against, per loader, stage and run, against real
Lightning (lightning_labels_worker.py: DDP on CPU ranks over gloo).

  loaders  fit with two val loaders: the first dataset's own `targets` are read (no labels=),
           the second's come from labels={1: ...}; then trainer.validate(dataloaders=X) on a
           TensorDataset: its labels (its last tensor) land in a file of their own, the files
           the fit's run files name stay as they were, and those runs import and diagnose the
           same again. Each run's rows are checked against counts computed here from torch's
           DistributedSampler and the datasets' labels.
  limited  a batch limit and two loaders of different lengths: labels= one array applies to
           the loader of its length only (the other said once, its rows not checked), then
           labels= one array per loader checks both.
"""
import json
import os
import sys
import time

import frameworks
import pytest

np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")
pytest.importorskip("lightning")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lightning_labels_worker as worker  # noqa: E402


def run(config, out, cli):
    start = time.time()
    proc = frameworks.lightning_worker(os.path.join(HERE, "lightning_labels_worker.py"), [config, out], cli,
                                       timeout=300)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-5000:]
    print("%s: the Trainer ran in %.0f s" % (config, time.time() - start))
    with open(os.path.join(out, "verdicts.json")) as f:
        return json.load(f), log


def evaluated(name, world, batches=None, batch_size=4):
    """The dataset indices torch's DistributedSampler (no shuffle) gives the ranks, each
    rank's first `batches` batches when limited."""
    from torch.utils.data import DistributedSampler
    n = worker.DATASETS[name][0]
    out = []
    for r in range(world):
        order = list(DistributedSampler(range(n), num_replicas=world, rank=r, shuffle=False))
        out += order[:batches * batch_size] if batches else order
    return out


def rows_wrong(name, indices):
    truth = np.array(worker.labels(name))
    return int((np.bincount(truth[indices], minlength=worker.C) !=
                np.bincount(truth, minlength=worker.C)).sum())


def labels_file(cli, run_file):
    """The labels file a run file was imported with (its --dataset npy:FILE)."""
    report = frameworks.cli_json(cli, "diagnose", "--run", run_file)
    dataset = report.get("dataset") or ""
    assert dataset.startswith("npy:"), (run_file, dataset)
    return dataset[4:], report


def check_run(cli, v, name, world, batches=None):
    path, report = labels_file(cli, v["run"])
    got = np.load(path)
    assert (got.dtype.name, got.tolist()) == ("int64", worker.labels(name)), (v["run"], path)
    indices = evaluated(name, world, batches)
    want = rows_wrong(name, indices)
    assert v["rows_wrong"] == want, (v, want)
    assert v["duplicates"] == len(indices) - len(set(indices)), v
    return path, report


def test_labels_per_loader_and_run(cli, tmp_path):
    out = str(tmp_path / "loaders")
    said, log = run("loaders", out, cli)
    assert [os.path.basename(v["run"]) for v in said] == [
        "eval_epoch0.slrun", "eval_epoch0_dl1.slrun", "eval_epoch1.slrun"], said
    files = []
    for v, name in zip(said, ("tv", "plain", "tensor")):
        path, report = check_run(cli, v, name, 3)
        files.append((path, report))
    paths = [p for p, _ in files]
    assert len(set(paths)) == 3, paths  # the later validate wrote its own file
    assert all(os.path.dirname(p) == os.path.join(out, "runs") for p in paths), paths
    # The fit's first run, after the later validate: its labels file is the one it names,
    # unchanged, and importing its dumps with it again diagnoses the same.
    first, before = files[0]
    again = os.path.join(out, "again.slrun")
    dumps = [os.path.join(out, "runs", "eval_epoch0_rank%d.npz" % r) for r in range(3)]
    frameworks.cli_json(cli, "import", *dumps, "--dataset", "npy:" + first, "--out", again)
    after = frameworks.cli_json(cli, "diagnose", "--run", again)
    for key in ("row_sums", "summary", "correct", "synced"):
        assert after[key] == before[key], (key, after[key], before[key])
    assert "ShardLens: labels=" not in log, log[-3000:]
    print("3 runs, 3 labels files (%s); rows wrong %s as DistributedSampler's padding gives"
          % (", ".join(os.path.basename(p) for p in paths), [v["rows_wrong"] for v in said]))


def test_labels_array_or_one_per_loader(cli, tmp_path):
    out = str(tmp_path / "limited")
    said, log = run("limited", out, cli)
    assert len(said) == 4, said
    check_run(cli, said[0], "a", 2, batches=2)
    note = "labels= holds 30 labels, validate dataloader 1's dataset 26 samples: not used"
    assert log.count(note) == 1, log[-3000:]
    b = said[1]
    assert (b["labels_known"], b["rows_wrong"]) == (False, None), b
    assert "rows not checked" in b["line"], b
    check_run(cli, said[2], "a", 2, batches=2)
    check_run(cli, said[3], "b", 2, batches=2)
    print("one array: dataloader 0 checked, dataloader 1 said once and not checked; one per "
          "loader: rows wrong %s" % [v["rows_wrong"] for v in said[2:]])


def test_labels_read_from_datasets():
    """What the callback reads as a dataset's own labels, with no iteration."""
    from shardlens_recorder._labels import dataset_labels, labels_array, pick
    y = torch.tensor([2, 0, 1, 1, 4])
    tensor_data = torch.utils.data.TensorDataset(torch.zeros(5, 3), y)
    assert dataset_labels(tensor_data).tolist() == y.tolist()
    assert dataset_labels(torch.utils.data.TensorDataset(torch.zeros(5, 3), y.float())) is None
    assert dataset_labels(torch.utils.data.Subset(tensor_data, [4, 1])).tolist() == [4, 0]

    class Columns:  # a datasets.Dataset's surface: column_names, features, dataset[column]
        column_names = ["text", "label"]
        features = {}

        def __len__(self):
            return 5

        def __getitem__(self, key):
            if key != "label":
                raise AssertionError("read another column: %r" % key)
            return [2, 0, 1, 1, 4]
    assert dataset_labels(Columns()).tolist() == [2, 0, 1, 1, 4]
    one, many = [1, 2, 3], [[1, 2], [3, 4, 0]]
    assert pick(one, "validate", 1) == (one, False)
    assert pick(many, "validate", 1) == ([3, 4, 0], True)
    assert pick(many, "validate", 2) == (None, True)
    assert pick({1: one}, "validate", 0) == (None, True)
    assert pick({"test": many, "val": one}, "test", 0) == ([1, 2], True)
    assert pick({"test": many}, "validate", 0) == (None, True)
    assert pick((np.array(one), torch.tensor(one)), "validate", 1)[1] is True
    assert labels_array(one, 4) is None and labels_array(one, 3).tolist() == one
    with pytest.raises(ValueError):
        pick({"vali": one}, "validate", 0)


def test_content_named_files(tmp_path):
    """The same labels give the same file, written once; others another file."""
    from shardlens_recorder._labels import content_file
    a = content_file(np.array([1, 2, 3], dtype=np.int64), str(tmp_path), "eval_labels_val_dl0")
    stamp = os.stat(a).st_mtime_ns
    time.sleep(0.01)
    assert content_file(np.array([1, 2, 3], dtype=np.int64), str(tmp_path),
                        "eval_labels_val_dl0") == a
    assert os.stat(a).st_mtime_ns == stamp
    b = content_file(np.array([1, 2, 4], dtype=np.int64), str(tmp_path), "eval_labels_val_dl0")
    assert b != a and np.load(a).tolist() == [1, 2, 3] and np.load(b).tolist() == [1, 2, 4]
