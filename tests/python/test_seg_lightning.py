"""ShardLensCallback on an unchanged segmentation and multilabel LightningModule, against real
Lightning DDP Trainers (CPU ranks over gloo) and torchmetrics' own states.

seg_lightning_worker.py runs once per configuration ("three": 3 ranks, 2 validations, a
shuffled loader of 203 images limited to 12 batches of 4, a sequential one of 97, 101
multilabel items; "two": 2 ranks, no limit, a sanity check of 2 batches first, whose records
are flagged SANITY). For every rank, validation and loader:
  - the dump's indices are the items the rank's loader fetched;
  - each record's cells are the one-image (one-item) torchmetrics confusion matrix of that
    dataset index (ignore pixels not cells; `ignored` and `sample_size` their counts; the
    records' target / prediction the dominant classes);
  - the cells summed are the metric's own confmat state on that rank (MulticlassJaccardIndex,
    MulticlassConfusionMatrix, MultilabelConfusionMatrix as 2 L classes);
  - the reported matrix is the state summed over the ranks (all_reduce), which is also the
    metric's compute() for the confusion matrices;
  - the whole dataset's one-process matrix differs from the synced one by exactly the cells
    of the padding duplicates (flag PADDING) and of the images the limit left out;
and `shardlens-cli import` of the dumps gives those per-rank and synced matrices, the expected
matrix (the distinct images' cells; the one-process matrix when no image was cut), the row
check on exactly the rows the padding duplicates changed (the true counts of a dump of images
are those of its distinct images, so the limit shows as batch-limit-subset, not in a row),
`simulate --like RUN` the same run, and `diagnose` the run's mIoU and the mean of each rank's
own mIoU as torchmetrics computes them.
"""
import glob
import json
import os
import subprocess
import time

import frameworks
import pytest

np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")
pytest.importorskip("lightning")
tm = pytest.importorskip("torchmetrics.classification")

import seg_common as S  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PADDING, SANITY = 1, 2
RUNS = {}  # config -> out dir of its one Trainer launch (shared by the checks)


def launch(config, tmp_path_factory, cli):
    if config not in RUNS:
        out = str(tmp_path_factory.mktemp(config))
        start = time.time()
        proc = frameworks.lightning_worker(os.path.join(HERE, "seg_lightning_worker.py"),
                                           [config, out], cli)
        print("%s: Trainer ran in %.0f s (exit %d)" % (config, time.time() - start,
                                                      proc.returncode), flush=True)
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-6000:]
        RUNS[config] = (out, proc.stdout + proc.stderr)
    return RUNS[config]


# -- what torchmetrics says of one item, computed here in one process ------------------------
_ONE = {}


def one_item(loader, i):
    """(C x C matrix of item i alone, ignored, sample size) by a fresh torchmetrics metric."""
    key = (loader, i)
    if key not in _ONE:
        if loader < 2:
            m = tm.MulticlassConfusionMatrix(S.seg_classes(loader), ignore_index=S.IGNORE)
            t = S.seg_target(i)
            logits = S.seg_logits(i)[None]
            m.update(S.with_extra_class(logits) if loader == 1 else logits, t[None])
            _ONE[key] = (m.confmat.numpy(), int((t == S.IGNORE).sum()), t.numel())
        else:
            m = tm.MultilabelConfusionMatrix(S.L, ignore_index=S.ML_IGNORE)
            t = S.ml_target(i)
            m.update(S.ml_logits(i)[None], t[None])
            _ONE[key] = (square(m.confmat.numpy()), int((t == S.ML_IGNORE).sum()), S.L)
    return _ONE[key]


def square(confmat):
    """[L, 2, 2] -> [2 L, 2 L]: label l's block at (2 l + t, 2 l + p)."""
    a = np.asarray(confmat)
    out = np.zeros((2 * len(a), 2 * len(a)), np.int64)
    for label, block in enumerate(a):
        out[2 * label:2 * label + 2, 2 * label:2 * label + 2] = block
    return out


_WHOLE = {}


def whole_dataset(loader, indices=None):
    """The matrix of the given items (default: the whole dataset, by one metric updated with
    every item in one process; a subset: its items' own matrices summed)."""
    n = S.SEG_SIZES[loader] if loader < 2 else S.ML_SIZE
    if indices is not None:
        return sum((one_item(loader, i)[0] for i in indices),
                   np.zeros_like(whole_dataset(loader)))
    if loader not in _WHOLE:
        _WHOLE[loader] = _one_process(loader, range(n))
    return _WHOLE[loader]


def _one_process(loader, indices):
    if loader < 2:
        m = tm.MulticlassConfusionMatrix(S.seg_classes(loader), ignore_index=S.IGNORE)
        for i in indices:
            logits = S.seg_logits(i)[None]
            m.update(S.with_extra_class(logits) if loader == 1 else logits,
                     S.seg_target(i)[None])
        return m.confmat.numpy()
    m = tm.MultilabelConfusionMatrix(S.L, ignore_index=S.ML_IGNORE)
    for i in indices:
        m.update(S.ml_logits(i)[None], S.ml_target(i)[None])
    return square(m.confmat.numpy())


def miou_of(matrix):
    """torchmetrics' MulticlassJaccardIndex.compute() of a confusion matrix (its own state)."""
    m = tm.MulticlassJaccardIndex(len(matrix), ignore_index=S.IGNORE)
    m.confmat = torch.as_tensor(matrix, dtype=torch.int64)
    m._update_count = 1
    return float(m.compute())


def cells_matrix(z, classes):
    return np.bincount(z["cell_target"] * classes + z["cell_prediction"],
                       weights=z["cell_count"], minlength=classes * classes
                       ).astype(np.int64).reshape(classes, classes)


def stem(validation, loader):
    """validation: "epoch0", "sanity_epoch0", ..."""
    return "eval_%s%s" % (validation, "_dl%d" % loader if loader else "")


def dumps_of(out, world):
    oracle = {r: json.load(open(os.path.join(out, "oracle_rank%d.json" % r)))
              for r in range(world)}
    return oracle


def check_dumps(out, world, validations):
    """The Python-side checks of every rank's dumps against torchmetrics' own states.
    validations: the file-name part of each validation, in order ("sanity_epoch0", ...)."""
    oracle = dumps_of(out, world)
    for v, name in enumerate(validations):
        for d in range(3):
            classes = S.seg_classes(d) if d < 2 else 2 * S.L
            synced = np.zeros((classes, classes), np.int64)
            padded = np.zeros_like(synced)
            seen = set()
            for r in range(world):
                o = oracle[r][v]["loaders"][str(d)]
                path = os.path.join(out, "runs", "%s_rank%d.npz" % (stem(name, d), r))
                z = np.load(path)
                where = "%s rank %d" % (os.path.basename(path), r)
                settings = json.loads(bytes(z["settings_json"]))
                assert settings["task"] == ("segmentation" if d < 2 else "multilabel"), where
                assert settings["ignore_index"] == (S.IGNORE if d < 2 else S.ML_IGNORE), where
                assert settings["num_classes"] == classes, where
                assert settings["num_labels"] == (None if d < 2 else S.L), where
                assert z["index"].tolist() == o["fetched"], where
                local = np.asarray(o["local"]) if d < 2 else square(o["local"])
                mine = cells_matrix(z, classes)
                assert np.array_equal(mine, local), "%s: cells %s, metric state %s" % (
                    where, mine.tolist(), local.tolist())
                reported = np.asarray(o["synced"]) if d < 2 else square(o["synced"])
                assert np.array_equal(z["reported"], reported), where
                if d == 1:  # normalize="true": compute() is the synced state's rows as fractions
                    rows = reported.sum(1, keepdims=True)
                    assert np.allclose(o["compute"], np.where(rows > 0, reported / np.maximum(
                        rows, 1), 0.0), atol=1e-6), where
                if d == 2:  # a confusion matrix's compute() is the synced state
                    assert np.array_equal(reported, square(o["compute"])), where
                synced += mine
                # each record: the item's own matrix
                ends = np.cumsum(z["cells_per_record"])
                for k, i in enumerate(z["index"].tolist()):
                    sl = slice(ends[k] - z["cells_per_record"][k], ends[k])
                    got = np.zeros((classes, classes), np.int64)
                    got[z["cell_target"][sl], z["cell_prediction"][sl]] = z["cell_count"][sl]
                    want, ignored, size = one_item(d, i)
                    assert np.array_equal(got, want), "%s record %d (index %d)" % (where, k, i)
                    assert z["ignored"][k] == ignored and z["sample_size"][k] == size, where
                    if want.sum():
                        assert z["target"][k] == want.sum(1).argmax(), where
                        assert z["prediction"][k] == want.sum(0).argmax(), where
                    if z["flags"][k] & PADDING:
                        padded += want
                    else:
                        assert i not in seen, "%s: index %d twice unflagged" % (where, i)
                        seen.add(i)
            assert np.array_equal(synced, reported), "synced %s" % stem(name, d)
            if d == 0:  # the mIoU the run computed is the one of ShardLens's synced matrix
                assert oracle[0][v]["loaders"]["0"]["miou"] == pytest.approx(
                    miou_of(synced), abs=1e-6), stem(name, d)
            sanity = name.startswith("sanity")
            assert (z["flags"] & SANITY).all() if sanity else not (z["flags"] & SANITY).any()
            # the one-process matrix + padding duplicates - images never evaluated
            n = S.SEG_SIZES[d] if d < 2 else S.ML_SIZE
            never = [i for i in range(n) if i not in seen]
            assert np.array_equal(whole_dataset(d) + padded - whole_dataset(d, never), synced)
            if not sanity:  # the sanity check's few batches are recorded, not imported
                yield v, name, d, synced, padded, never


def check_import(out, cli, world, found):
    """shardlens-cli import of each evaluation's dumps: per rank, synced, expected, the row
    check and the patterns; simulate --like of the run file reproduces it."""
    oracle = dumps_of(out, world)
    for v, name, d, synced, padded, never in found:
        files = sorted(glob.glob(os.path.join(out, "runs", "%s_rank*.npz" % stem(name, d))))
        assert len(files) == world
        run = os.path.join(out, "%s.slrun" % stem(name, d))
        proc = subprocess.run([cli, "import", *files, "--out", run, "--format", "json"],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        j = json.loads(proc.stdout)
        where = "import of %s" % stem(name, d)
        for r in range(world):
            local = oracle[r][v]["loaders"][str(d)]["local"]
            assert np.array_equal(j["per_rank"][r], local if d < 2 else square(local)), where
        assert np.array_equal(j["synced"], synced), where
        assert j["verdict"]["synced_origin"] == "recorded", where
        n = S.SEG_SIZES[d] if d < 2 else S.ML_SIZE
        seen = [i for i in range(n) if i not in set(never)]
        assert np.array_equal(j["expected_distinct"], whole_dataset(d, seen)), where
        if not never:  # every image evaluated: ShardLens's expected is the one-process matrix
            assert np.array_equal(j["expected"], whole_dataset(d)), where
        # the row check: without the dataset's own pixel counts, the true counts are those of
        # the distinct images; exactly the rows padding duplicates added to differ
        assert j["row_sums"]["mismatched"] == np.flatnonzero(padded.sum(1)).tolist(), where
        assert np.array_equal(j["row_sums"]["expected"], whole_dataset(d, seen).sum(1)), where
        patterns = {p["pattern"] for p in j["diagnosis"]}
        assert ("padding-duplicates" in patterns) == bool(padded.sum()), (where, patterns)
        assert ("batch-limit-subset" in patterns) == bool(never), (where, patterns)
        assert j["correct"] == (not padded.sum() and not never), where
        if d == 0:  # ShardLens's mIoU: the run's, and each rank's own mIoU averaged
            diag = subprocess.run([cli, "diagnose", "--run", run, "--format", "json"],
                                  capture_output=True, text=True, timeout=120)
            assert diag.returncode in (0, 1), diag.stderr  # 1: the run is wrong
            miou = json.loads(diag.stdout)["task_metrics"]["metrics"]["miou"]
            assert miou["reported"] == pytest.approx(oracle[0][v]["loaders"]["0"]["miou"],
                                                     abs=1e-6), where
            per_rank = [miou_of(oracle[r][v]["loaders"]["0"]["local"]) for r in range(world)]
            assert miou["per_rank_mean"] == pytest.approx(np.mean(per_rank), abs=1e-6), where
        like = subprocess.run([cli, "simulate", "--like", run, "--format", "json"],
                              capture_output=True, text=True, timeout=120)
        assert like.returncode == 0, like.stdout[-3000:] + like.stderr
        assert json.loads(like.stdout)["equal"] is True, where


def test_three_ranks_limited_and_shuffled(tmp_path_factory, cli):
    out, _ = launch("three", tmp_path_factory, cli)
    found = list(check_dumps(out, 3, ["epoch0", "epoch1"]))
    check_import(out, cli, 3, found)
    # the limit cut loader 0 (12 batches of 4 of 68 a rank), padding duplicated the others
    assert all(len(never) == 203 - 3 * 48 for _, _, d, _, _, never in found if d == 0)
    assert all(padded.sum() > 0 and not never for _, _, d, _, padded, never in found if d > 0)


def test_two_ranks_unlimited(tmp_path_factory, cli):
    out, _ = launch("two", tmp_path_factory, cli)
    found = list(check_dumps(out, 2, ["sanity_epoch0", "epoch0"]))
    assert all(not never for *_, never in found)
    check_import(out, cli, 2, found)
