"""ShardLensCallback("runs/") on an unchanged LightningModule, against real Lightning.

Run by pytest (tests/python, with --cli SHARDLENS_CLI). Runs lightning_metrics_worker.py (4
CPU ranks over gloo, a TensorBoardLogger) three times:
  limited: shuffled loader, limit_val_batches=3, sanity 2, 2 epochs. Per rank and
    validation, the watched metrics hold what unwatched twins of them hold (state,
    compute()), the dump's indices are the items the dataset served, its matrix is the
    MulticlassConfusionMatrix's own state, its reported matrix that metric's compute(); every
    array of the dump is one dump_format.json names (no metric states); the recorder's host
    transfers do not grow with batches (0 per batch); the MulticlassAUROC is named once, on
    rank 0; rank 0 printed one verdict line per validation naming batch-limit-subset and
    shuffled-eval; the TensorBoard event file holds shardlens/ scalars, the patterns' text and
    the heatmap image.
  fail: fail_on_wrong=True stops fit with the diagnosis as the error.
  badout: rank 2's dumps cannot be written: fit finishes, rank 0 names the missing dumps once
    per validation, no run file (nothing that would read as exact).
"""
import glob
import json
import os
import time

import frameworks
import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("lightning")
pytest.importorskip("torchmetrics")

HERE = os.path.dirname(os.path.abspath(__file__))

from shardlens_recorder._format import ARRAYS as SCHEMA_ARRAYS  # noqa: E402

W = 4
PER_VALIDATION = set()  # host transfers per validation (setup + end), whatever the batches


def run(config, out, cli):
    os.makedirs(out, exist_ok=True)
    start = time.time()
    proc = frameworks.lightning_worker(os.path.join(HERE, "lightning_metrics_worker.py"),
                                       [config, out], cli)
    print("%s: 4-rank Trainer ran in %.0f s (exit %d)" % (config, time.time() - start,
                                                         proc.returncode), flush=True)
    return proc.returncode, proc.stdout + proc.stderr


def check(what, got, want):
    if got != want:
        raise AssertionError("%s:\n  got  %s\n  want %s" % (what, got, want))


def limited(out, cli):
    rc, log = run("limited", out, cli)
    assert rc == 0, log[-5000:]
    oracle = {r: json.load(open(os.path.join(out, "oracle_rank%d.json" % r))) for r in range(W)}
    names = ["eval_sanity_epoch0", "eval_epoch0", "eval_epoch1"]
    for v, name in enumerate(names):
        for r in range(W):
            o = oracle[r][v]
            d = np.load(os.path.join(out, "runs", "%s_rank%d.npz" % (name, r)))
            n = len(d["index"])
            check("%s rank %d: indices = the items served" % (name, r),
                  d["index"].tolist(), o["fetched"][:n])
            check("%s rank %d: the records' matrix = the metric's state" % (name, r),
                  frameworks.records_matrix(d, len(o["local"])), o["local"])
            check("%s rank %d: no matrix computed from the records is stored" % (name, r),
                  "matrix" in d.files, False)
            check("%s rank %d: watched metric = its unwatched twin" % (name, r),
                  (o["local"], o["synced"], o["acc"]),
                  (o["twin_local"], o["twin_synced"], o["twin_acc"]))
            check("%s rank %d: reported = compute()" % (name, r),
                  d["reported"].tolist(), o["synced"])
            check("%s rank %d: every array one the dump format names" % (name, r),
                  sorted(set(d.files) - set(SCHEMA_ARRAYS)), [])
            s = json.loads(bytes(d["settings_json"]).decode())
            check("settings", (s["num_classes"], s["shuffle"], s["limit_batches"],
                               s["world_size"]), (5, True, "3" if v else "3", W))
            calls = o["host_calls"]
            check("%s rank %d: host transfers after each batch (0 per batch)" % (name, r),
                  calls[2:], [calls[1]] * (len(calls) - 2))
            PER_VALIDATION.add(calls[-1])
    check("unknown metric said once", log.count("metric auroc (MulticlassAUROC)"), 1)
    lines = ["ShardLens: " + line.split("ShardLens: ", 1)[1] for line in log.splitlines()
             if "ShardLens: " in line and "Warning" not in line]
    check("one verdict line per validation", len(lines), 2)
    for e, line in enumerate(lines):
        assert line.startswith("ShardLens: rows not checked against the true class counts "
                               "(dataset labels unknown: pass labels=...); 0 duplicated, 55 "
                               "never evaluated: "), line
        assert "batch-limit-subset" in line and "shuffled-eval" in line, line
        assert line.endswith("eval_epoch%d.slrun" % e), line
        assert os.path.exists(line.rsplit("see ", 1)[1]), line
    print("verdict:", lines[0])
    print("host transfers by the recorder: 0 per batch; per validation %s" % sorted(PER_VALIDATION))
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(glob.glob(os.path.join(out, "tb", "version_0"))[0],
                           size_guidance={"images": 0, "tensors": 0})
    acc.Reload()
    tags = acc.Tags()
    never = [e.value for e in acc.Scalars("shardlens/never_evaluated")]
    check("never_evaluated scalars", never, [55.0, 55.0])
    assert "shardlens/rows_wrong" not in tags["scalars"], tags["scalars"]  # not checked
    check("duplicates", [e.value for e in acc.Scalars("shardlens/duplicates")], [0.0, 0.0])
    texts = [t for t in tags.get("tensors", []) if t.startswith("shardlens/patterns")]
    assert texts, tags
    text = acc.Tensors(texts[0])[0].tensor_proto.string_val[0].decode()
    assert "batch-limit-subset" in text, text
    images = acc.Images("shardlens/synced_minus_expected")
    check("heatmap images", len(images), 2)
    import io
    from PIL import Image
    img = Image.open(io.BytesIO(images[0].encoded_image_string))
    check("heatmap size", img.size, (81, 81))  # 5 x 5 cells of 16 px and a 1 px frame
    print("TensorBoard: scalars %s, text %r, %d images %s" % (
        sorted(t for t in tags["scalars"] if t.startswith("shardlens/")), text, len(images),
        img.size))


def failing(out, cli):
    rc, log = run("fail", out, cli)
    assert rc != 0, "fail_on_wrong did not stop fit:\n" + log[-3000:]
    import lightning_metrics_worker as worker
    truth = [worker.label(worker.PERM[j]) for j in range(worker.N)]  # Subset index j
    runs = os.path.join(out, "runs")
    written = glob.glob(os.path.join(runs, "eval_labels_val_dl0_*.npy"))  # named by content
    check("one labels file beside the dumps", len(written), 1)
    check("labels written beside the dumps", np.load(written[0]).tolist(), truth)
    evaluated = np.concatenate([np.load(os.path.join(runs, "eval_epoch0_rank%d.npz" % r))[
        "index"] for r in range(W)])
    true_counts = np.bincount(truth, minlength=5)
    seen_counts = np.bincount([truth[i] for i in evaluated], minlength=5)
    wrong = int((true_counts != seen_counts).sum())
    said = "ShardLensVerdictError: ShardLens: %d of 5 rows != class counts" % wrong
    assert said in log, (said, log[-3000:])
    # Every rank raises, and their tracebacks interleave on the shared stderr (a rank's
    # "raise ShardLensVerdictError(...)" source line may precede another rank's frames), so
    # look at the error's own lines: one of them names the pattern.
    verdicts = [line for line in log.splitlines() if said in line]
    assert any("batch-limit-subset" in line for line in verdicts), (verdicts, log[-3000:])
    print("fail_on_wrong: fit stopped with %s (%d evaluated, true counts %s, evaluated %s)"
          % (said, len(evaluated), true_counts.tolist(), seen_counts.tolist()))
    # The heatmap logged before the stop: 5 x 5 cells of 16 px (and a 1 px frame), a gap of 8,
    # then each row's sum minus its true class count, blue where the run counted fewer, red
    # where more.
    # Its cells alone may all be white: they compare with one process on the same samples.
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(os.path.join(out, "tb", "version_0"), size_guidance={"images": 0})
    acc.Reload()
    import io
    from PIL import Image
    img = np.asarray(Image.open(io.BytesIO(
        acc.Images("shardlens/synced_minus_expected")[0].encoded_image_string)).convert("RGB"))
    check("heatmap with the row column (height, width)", img.shape[:2], (81, 81 + 8 + 17))
    signs = []
    for k in range(5):
        r, g, b = (int(c) for c in img[k * 16 + 8, 81 + 8 + 8])
        signs.append(0 if (r, g, b) == (255, 255, 255) else -1 if b == 255 and r < 255
                     else 1 if r == 255 and b < 255 else None)
    check("row column: the sign of each row's sum minus its true count", signs,
          np.sign(seen_counts - true_counts).tolist())
    print("heatmap row column: %s (evaluated minus true counts %s)"
          % (signs, (seen_counts - true_counts).tolist()))


def bad_output(out, cli):
    rc, log = run("badout", out, cli)
    assert rc == 0, log[-5000:]
    for e in range(2):
        said = "no verdict for eval_epoch%d: no dump from eval_epoch%d_rank2.npz" % (e, e)
        check("said once: " + said, log.count(said), 1)
    runs = os.path.join(out, "runs")
    check("dumps of the ranks that could write", sorted(os.listdir(runs)), sorted(
        "eval_epoch%d_rank%d.npz" % (e, r) for e in range(2) for r in (0, 1, 3)))
    assert not ["ShardLens: " + line.split("ShardLens: ", 1)[1] for line in log.splitlines()
             if "ShardLens: " in line and "Warning" not in line]
    print("a rank that cannot write: fit finished, rank 0 named the missing dumps, no run")


def labels_argument(tmp):
    """labels= in every accepted form becomes the same int64 .npy; others are refused."""
    import torch
    from shardlens_recorder._verdict import dataset_labels as _dataset_labels
    from shardlens_recorder._verdict import labels_file as _labels_file
    want = [2, 0, 1, 1, 4]
    np.save(os.path.join(tmp, "given.npy"), np.array(want, dtype=np.int32))
    for form in (want, torch.tensor(want), np.array(want, dtype=np.uint8),
                 np.array(want, dtype=np.float32), os.path.join(tmp, "given.npy")):
        path = _labels_file(form, 5, os.path.join(tmp, "out.npy"))
        got = np.load(path)
        check("labels= %s" % type(form).__name__, (got.dtype.name, got.tolist()),
              ("int64", want))
    for bad in (want[:4], [0.5] * 5, [[1]] * 5, [-1, 0, 0, 0, 0], ["a"] * 5):
        check("labels= %r refused" % (bad,), _labels_file(bad, 5, os.path.join(tmp, "x.npy")),
              None)

    class Tv:  # torchvision style, under a Subset
        targets = torch.tensor(want)

        def __len__(self):
            return 5
    sub = torch.utils.data.Subset(Tv(), [4, 0])
    check("Subset of a dataset with targets", _dataset_labels(sub).tolist(), [4, 2])
    check("no labels attribute", _dataset_labels(torch.utils.data.TensorDataset(
        torch.zeros(3))), None)
    print("labels=: list, tensor, ndarray, .npy path written as int64; bad ones refused")


def argmax_reading():
    """The recorder's argmax (numpy's on the CPU) picks what torch.argmax picks, which is
    what torchmetrics uses: first maximum on ties, first NaN, all -inf, -0.0 against 0.0,
    float64, views with strides; a tensor off the CPU keeps torch's own argmax."""
    import torch
    from shardlens_recorder._tensors import argmax_ids
    g = torch.Generator().manual_seed(3)
    x = torch.randint(-3, 4, (300, 1000), generator=g).float()  # many ties
    x[1, 5] = x[1, 9] = float("nan")
    x[2] = float("-inf")
    x[3, :4] = torch.tensor([-0.0, 0.0, -0.0, 0.0])
    x[3, 4:] = -1
    x[4, 7] = float("inf")
    x[4, 8] = float("nan")
    x[5] = float("nan")
    for name, t in (("float32", x), ("float64", x.double()), ("a column slice", x[:, 1:600]),
                    ("a transposed view", x[:20, :20].t()), ("random scores",
                    torch.randn(257, 1000, generator=g)), ("1000 x 2", x[:, :2])):
        want = t.argmax(dim=1)
        got = argmax_ids(t)
        check("argmax of %s" % name, (got.dtype, got.tolist()), (want.dtype, want.tolist()))
    for dtype in (torch.float16, torch.bfloat16, torch.int64):
        t = x.nan_to_num(0.0, 100.0, -100.0).to(dtype)
        check("argmax of %s" % dtype, argmax_ids(t).tolist(), t.argmax(dim=1).tolist())
    meta = torch.empty(8, 1000, device="meta")  # .numpy() would raise: torch's path is taken
    check("a tensor off the CPU stays there", argmax_ids(meta).device.type, "meta")
    print("argmax: numpy's on the CPU equals torch.argmax on ties, NaN, inf and views")


def test_argmax_reads_as_torch():
    argmax_reading()


def test_labels_argument(tmp_path):
    labels_argument(str(tmp_path))


def test_limited_validations(cli, tmp_path):
    limited(str(tmp_path / "limited"), cli)


def test_fail_on_wrong_stops_fit(cli, tmp_path):
    failing(str(tmp_path / "fail"), cli)


def test_a_rank_that_cannot_write(cli, tmp_path):
    bad_output(str(tmp_path / "badout"), cli)
