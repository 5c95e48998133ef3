"""What a module logged beside its true value, against real Lightning
(lightning_logged_worker.py: DDP on CPU ranks over gloo).

  metric      4 ranks evaluate 103 samples, so DistributedSampler pads 1. The values the
              callback reports as logged are what Lightning logged (its callback_metrics), and
              they are what the 104 records give (computed here from torch's
              DistributedSampler); the true values are the accuracy and macro F1 of the 103
              samples computed here with numpy; each is printed once with its cause and
              logged as shardlens/true_<name> (the CSVLogger's file).
  unrecorded  validation_step returns nothing: the one padded sample the logged values count
              is said once per value; then a batch limit (no duplicate): logged = true, no line.
"""
import csv
import json
import os
import sys
import time

import frameworks
import pytest

np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")
pytest.importorskip("lightning")
pytest.importorskip("torchmetrics")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lightning_logged_worker as worker  # noqa: E402


def run(config, out, cli):
    start = time.time()
    proc = frameworks.lightning_worker(os.path.join(HERE, "lightning_logged_worker.py"), [config, out], cli,
                                       timeout=300)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-5000:]
    print("%s: the Trainer ran in %.0f s" % (config, time.time() - start))
    with open(os.path.join(out, "logged.json")) as f:
        return json.load(f), log


def served(n, world, batches=None, batch_size=4):
    """The dataset indices torch's DistributedSampler (no shuffle) gives the ranks."""
    from torch.utils.data import DistributedSampler
    out = []
    for r in range(world):
        order = list(DistributedSampler(range(n), num_replicas=world, rank=r, shuffle=False))
        out.append(order[:batches * batch_size] if batches else order)
    return out


def table(indices):
    y = np.array([worker.label(i) for i in indices])
    p = np.array([worker.prediction(i) for i in indices])
    return y, p


def macro_f1(y, p):
    scores = []
    for c in range(worker.C):
        tp = np.sum((p == c) & (y == c))
        fp, fn = np.sum((p == c) & (y != c)), np.sum((p != c) & (y == c))
        scores.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0)
    return float(np.mean(scores))


def close(a, b, tol=1e-6):
    return abs(a - b) <= tol


def by_key(result):
    return {f["key"]: f for f in result["shardlens"]}


def test_logged_values_beside_true_ones(cli, tmp_path):
    out = str(tmp_path / "metric")
    results, log = run("metric", out, cli)
    assert len(results) == 1
    lightning, found = results[0]["lightning"], by_key(results[0])
    ranks = served(103, 4)
    every = [i for r in ranks for i in r]
    assert len(every) == 104 and len(set(every)) == 103  # one padded sample
    y_all, p_all = table(every)
    y, p = table(range(103))
    truth = {"val_acc": float(np.mean(y == p)), "batch_acc": float(np.mean(y == p)),
             "rank_acc": float(np.mean(y == p)), "val_f1": macro_f1(y, p)}
    counted = {"val_acc": float(np.mean(y_all == p_all)), "batch_acc": float(np.mean(
        y_all == p_all)), "rank_acc": float(np.mean([np.mean(np.equal(*table(r)))
                                                    for r in ranks])),
               "val_f1": macro_f1(y_all, p_all)}
    assert sorted(found) == sorted(truth), found
    rows = list(csv.DictReader(open(os.path.join(out, "csv", "version_0", "metrics.csv"))))
    for key, f in found.items():
        # What ShardLens says was logged is what Lightning logged, which counts the padded
        # sample; the true value is the 103 samples'.
        assert f["logged"] == lightning[key], (key, f, lightning)
        assert close(lightning[key], counted[key]), (key, lightning[key], counted[key])
        assert close(f["true"], truth[key]), (key, f["true"], truth[key])
        assert (f["samples"], f["duplicates"], f["padding"]) == (103, 1, 1), f
        line = "ShardLens: %s logged %.6g, true %.6g over the 103 distinct samples " \
            "evaluated: 1 padding duplicate counted" % (key, lightning[key], f["true"])
        assert log.count(line) == 1, (line, log[-4000:])
        logged = [float(r["shardlens/true_" + key]) for r in rows if r.get("shardlens/true_" + key)]
        assert len(logged) == 1 and close(logged[0], truth[key]), (key, logged)
        print("%s: Lightning logged %.7f, true %.7f (numpy: %.7f)" % (
            key, lightning[key], f["true"], truth[key]))


def test_unrecorded_said_and_limited_exact(cli, tmp_path):
    out = str(tmp_path / "unrecorded")
    results, log = run("unrecorded", out, cli)
    assert len(results) == 2
    for key in ("batch_acc", "rank_acc"):
        note = "%s is logged with sync_dist=True over dataloader 0's DistributedSampler, " \
            "which repeats 1 sample (12 places for 11 samples, world size 2): the logged " \
            "value counts it" % key
        assert log.count(note) == 1, (note, log[-4000:])
    assert results[0]["shardlens"] == []
    limited = by_key(results[1])
    y, p = table([i for r in served(11, 2, batches=1) for i in r])
    assert len(y) == 8
    for key in ("batch_acc", "rank_acc"):
        f = limited[key]
        assert f["logged"] == results[1]["lightning"][key], (f, results[1])
        assert close(f["true"], float(np.mean(y == p))), f
        assert (f["samples"], f["duplicates"], f["cause"]) == (8, 0, None), f
        assert "ShardLens: %s logged" % key not in log, log[-3000:]
    print("unrecorded: the padded sample said once per value; limited: logged = true = %.4f"
          % float(np.mean(y == p)))


def test_no_note_where_the_padding_is_never_evaluated():
    """A batch limit stops before the padded places: the logged value does not count them."""
    from torch.utils.data import DistributedSampler
    from shardlens_recorder._logged import _Call, unrecorded_notes

    class Part:
        recorder, failed = None, "validation_step returned None"

        def __init__(self, batches):
            self.sampler = DistributedSampler(range(11), num_replicas=2, rank=0, shuffle=False)
            self.loader = torch.utils.data.DataLoader(range(11), batch_size=4)
            self.batches = [(0, 0)] * batches

    call = _Call("val_acc", 0.5, None, True, "validation_step", 0, 0)
    assert unrecorded_notes([call], {0: Part(1)}) == []
    assert [k for k, _ in unrecorded_notes([call], {0: Part(2)})] == ["val_acc"]
    unsynced = _Call("val_acc", 0.5, None, False, "validation_step", 0, 0)
    assert unrecorded_notes([unsynced], {0: Part(2)}) == []
