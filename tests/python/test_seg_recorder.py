"""ShardLensRecorder.add_dense / add_multilabel (plain loops) against torchmetrics' own
confusion matrices, batch by batch and image by image, and the inputs they refuse.

Needs torch and numpy (torchmetrics where a test says so): it also runs under Debian's torch
1.13 (recorder.py.seg_recorder.torch1).
"""
import json
import os

import pytest

np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")

from shardlens_recorder import ShardLensRecorder  # noqa: E402
from shardlens_recorder._dense import DenseCells  # noqa: E402
from shardlens_recorder._tensors import ShardLensInputError  # noqa: E402


def per_record(z, classes):
    """Each record's matrix from the dump's cells."""
    ends = np.cumsum(z["cells_per_record"])
    out = []
    for k, n in enumerate(z["cells_per_record"]):
        m = np.zeros((classes, classes), np.int64)
        sl = slice(ends[k] - n, ends[k])
        m[z["cell_target"][sl], z["cell_prediction"][sl]] = z["cell_count"][sl]
        out.append(m)
    return out


def one_image(t, p, classes, ignore):
    """The matrix of one image by hand: every (target, prediction) pixel not ignored."""
    t, p = t.reshape(-1).long(), p.reshape(-1).long()
    keep = t != ignore if ignore is not None else torch.ones_like(t, dtype=torch.bool)
    return np.bincount((t[keep] * classes + p[keep]).numpy(), minlength=classes * classes
                       ).reshape(classes, classes)


@pytest.mark.parametrize("ignore", [None, 255, 0, -100, 2, 1 << 30])
def test_segmentation_cells_are_each_images_pixels(tmp_path, ignore):
    torch.manual_seed(1)
    c = 5
    dtype = torch.uint8 if ignore in (None, 255, 0, 2) else torch.int64
    rec = ShardLensRecorder(str(tmp_path), num_classes=c, ignore_index=ignore, rank=0,
                            world_size=1, dataset_size=11)
    images, start = [], 0
    for n in (4, 4, 3):
        t = torch.randint(0, c, (n, 6, 7)).to(dtype)
        if ignore is not None:
            t[torch.rand(t.shape) < 0.25] = ignore
            t[n - 1] = ignore  # an image of ignored pixels only: no cells
        logits = torch.randn(n, c, 6, 7)
        ids = rec.add_dense(torch.arange(start, start + n), t, logits)
        assert torch.equal(ids, logits.argmax(1))
        images += [(t[k], ids[k]) for k in range(n)]
        start += n
    (path,) = rec.save()
    z = np.load(path)
    settings = json.loads(bytes(z["settings_json"]))
    assert (settings["task"], settings["ignore_index"], settings["num_classes"]) == \
        ("segmentation", ignore, c)
    mats = per_record(z, c)
    for k, (t, p) in enumerate(images):
        want = one_image(t, p, c, ignore)
        assert np.array_equal(mats[k], want), k
        ignored = int((t.long() == ignore).sum()) if ignore is not None else 0
        assert (z["ignored"][k], z["sample_size"][k]) == (ignored, 42)
        if want.sum():
            assert (z["target"][k], z["prediction"][k]) == (want.sum(1).argmax(),
                                                            want.sum(0).argmax())
        else:
            assert z["cells_per_record"][k] == 0 and (z["target"][k], z["prediction"][k]) \
                == (0, 0)
    assert (z["cell_count"] > 0).all()
    assert np.array_equal(np.asarray(rec.local_matrix()), sum(mats))


def test_against_torchmetrics_state(tmp_path):
    tm = pytest.importorskip("torchmetrics.classification")
    torch.manual_seed(2)
    c = 7
    metric = tm.MulticlassJaccardIndex(c, ignore_index=255)
    rec = ShardLensRecorder(str(tmp_path), num_classes=c, ignore_index=255, rank=0,
                            world_size=1)
    for b in range(3):
        t = torch.randint(0, c, (3, 10, 12))
        t[:, :2] = 255
        logits = torch.randn(3, c, 10, 12)
        metric.update(rec.add_dense(torch.arange(3 * b, 3 * b + 3), t, logits), t)
    assert np.array_equal(np.asarray(rec.local_matrix()), metric.confmat.numpy())


def test_tokens_with_class_last_logits(tmp_path):
    torch.manual_seed(3)
    c = 9
    rec = ShardLensRecorder(str(tmp_path), num_classes=c, ignore_index=-100, rank=0,
                            world_size=1)
    labels = torch.randint(0, c, (4, 13))
    labels[:, 10:] = -100  # padding tokens
    logits = torch.randn(4, 13, c)  # a Hugging Face model's [N, T, C]
    rec.add_dense(torch.arange(4), labels, logits, task="tokens", class_dim=-1)
    z = np.load(rec.save()[0])
    assert json.loads(bytes(z["settings_json"]))["task"] == "tokens"
    ids = logits.argmax(-1)
    for k, m in enumerate(per_record(z, c)):
        assert np.array_equal(m, one_image(labels[k], ids[k], c, -100))
    assert z["ignored"].tolist() == [3] * 4 and z["sample_size"].tolist() == [13] * 4


@pytest.mark.parametrize("ignore", [None, -1])
def test_multilabel_is_2l_classes(tmp_path, ignore):
    tm = pytest.importorskip("torchmetrics.classification")
    torch.manual_seed(4)
    labels = 5
    metric = tm.MultilabelConfusionMatrix(labels, ignore_index=ignore)
    rec = ShardLensRecorder(str(tmp_path), num_labels=labels, ignore_index=ignore, rank=0,
                            world_size=1)
    items = []
    for b, probs in enumerate((False, True, False)):
        t = torch.randint(0, 2, (6, labels))
        if ignore is not None:
            t[torch.rand(t.shape) < 0.2] = ignore
        p = torch.rand(6, labels) if probs else torch.randn(6, labels) * 3
        rec.add_multilabel(torch.arange(6 * b, 6 * b + 6), t, p)
        metric.update(p, t)
        decided = (p if probs else p.sigmoid()) > 0.5
        items += [(t[k], decided[k]) for k in range(6)]
    rec.set_reported(metric.confmat)  # [L, 2, 2]: written as the [2 L, 2 L] matrix
    z = np.load(rec.save()[0])
    settings = json.loads(bytes(z["settings_json"]))
    assert (settings["task"], settings["num_labels"], settings["num_classes"]) == \
        ("multilabel", labels, 2 * labels)
    mats = per_record(z, 2 * labels)
    for k, (t, p) in enumerate(items):
        want = np.zeros((2 * labels, 2 * labels), np.int64)
        for label in range(labels):
            if ignore is None or t[label] != ignore:
                want[2 * label + int(t[label]), 2 * label + int(p[label])] = 1
        assert np.array_equal(mats[k], want), k
    total = sum(mats)
    cm = metric.confmat.numpy()
    for label in range(labels):
        block = slice(2 * label, 2 * label + 2)
        assert np.array_equal(total[block, block], cm[label])
        assert np.array_equal(z["reported"][block, block], cm[label])
    assert (z["cells_per_record"] + z["ignored"] == labels).all()


def refused(call, *words):
    with pytest.raises(ShardLensInputError) as e:
        call()
    for w in words:
        assert w in str(e.value), str(e.value)


def test_bad_inputs_are_refused_naming_the_sample_and_value(tmp_path):
    rec = ShardLensRecorder(str(tmp_path), num_classes=4, ignore_index=255)
    t = torch.zeros(3, 5, 5, dtype=torch.long)
    t[2, 4, 4] = 9  # between the classes and the ignore index
    refused(lambda: rec.add_dense(torch.arange(3), t, torch.randn(3, 4, 5, 5)),
            "sample 2 of batch 0", "target value 9")
    t[2, 4, 4] = 300  # past the ignore index
    refused(lambda: rec.add_dense(torch.arange(3), t, torch.randn(3, 4, 5, 5)),
            "sample 2", "300")
    t[2, 4, 4] = -3
    refused(lambda: rec.add_dense(torch.arange(3), t, torch.randn(3, 4, 5, 5)), "-3")
    t[2, 4, 4] = 1
    refused(lambda: rec.add_dense(torch.arange(3), t.float(), torch.randn(3, 4, 5, 5)),
            "float")
    refused(lambda: rec.add_dense(torch.arange(3), t, torch.randn(3, 4, 5, 6)), "shape")
    refused(lambda: rec.add_dense(torch.arange(3), t, torch.randn(3, 3, 5, 5)), "scores")
    ids = torch.zeros(3, 5, 5, dtype=torch.long)
    ids[1, 0, 0] = 4
    refused(lambda: rec.add_dense(torch.arange(3), t, ids), "sample 1", "predicted class 4")
    refused(lambda: rec.add_dense(torch.arange(3.0), t, torch.randn(3, 4, 5, 5)), "float")
    assert rec.count == 0  # nothing refused was recorded
    rec.add_dense(torch.arange(3), t, torch.randn(3, 4, 5, 5))
    with pytest.raises(ValueError):
        rec.update(torch.arange(2), torch.tensor([0, 1]), torch.tensor([0, 1]))
    ml = ShardLensRecorder(str(tmp_path), num_labels=3, ignore_index=-1)
    bad = torch.tensor([[0, 1, 2], [1, 0, -1]])
    refused(lambda: ml.add_multilabel(torch.arange(2), bad, torch.rand(2, 3)),
            "sample 0", "target value 2")
    refused(lambda: ml.add_multilabel(torch.arange(2), bad[:, :2], torch.rand(2, 2)), "[N, 3")


def test_an_ignore_index_far_from_the_classes_is_folded():
    """An ignore index whose row would make the histogram huge becomes one extra row."""
    cells = DenseCells(3, ignore_index=1 << 40)
    t = torch.tensor([[0, 1 << 40, 2, 2]])
    cells.add(t, torch.tensor([[0, 1, 2, 1]]))
    a = cells.arrays()
    assert a["ignored"].tolist() == [1] and a["cell_count"].sum() == 3
    assert cells.matrix().tolist() == [[1, 0, 0], [0, 0, 0], [0, 1, 1]]
    refused(lambda: cells.add(torch.tensor([[5]]), torch.tensor([[0]])), "target value 5")


def test_the_device_path_counts_the_same_and_refuses_at_the_end():
    """The path a GPU takes (scatter_add histogram, checks kept as device summaries and read
    once at the end), run on CPU tensors: the same cells as the CPU path; a bad value is
    refused when the cells are read, naming its batch, sample and value."""
    torch.manual_seed(5)
    for ignore in (None, 255, -100):
        host, device = DenseCells(6, ignore), DenseCells(6, ignore)
        device._device_path_on_cpu = True
        for _ in range(3):
            t = torch.randint(0, 6, (4, 5, 8))
            if ignore is not None:
                t[:, 0] = ignore
            logits = torch.randn(4, 6, 5, 8)
            host.add(t, logits)
            device.add(t, logits)
        a, b = host.arrays(), device.arrays()
        for k in a:
            assert np.array_equal(a[k], b[k]), (ignore, k)
    device = DenseCells(6, 255)
    device._device_path_on_cpu = True
    device.add(torch.zeros(2, 3, 3, dtype=torch.long), torch.zeros(2, 3, 3, dtype=torch.long))
    t = torch.zeros(3, 3, 3, dtype=torch.long)
    t[2, 1, 1] = 40
    device.add(t, torch.zeros(3, 3, 3, dtype=torch.long))  # not refused yet: no wait
    refused(device.arrays, "sample 2 of batch 1", "target value 40")
    ml = DenseCells(3, -1, task="multilabel")
    ml._device_path_on_cpu = True
    ml.add_multilabel(torch.tensor([[0, 1, -1], [1, 1, 0]]), torch.tensor([[0.2, 0.9, 0.1],
                                                                         [0.7, 0.3, 0.6]]))
    assert ml.matrix()[:2, :2].tolist() == [[1, 0], [0, 1]]
    assert ml.arrays()["ignored"].tolist() == [1, 0]
    ml.add_multilabel(torch.tensor([[0, 3, 1]]), torch.rand(1, 3))
    refused(ml.arrays, "sample 0 of batch 1", "target value 3")


def test_watched_binary_segmentation_is_two_classes(tmp_path):
    """A BinaryJaccardIndex updated with [N, H, W] probabilities (the callback's metric
    watch): each image's cells are its thresholded pixels, as the metric's own state counts
    them, ignore_index left out."""
    tm = pytest.importorskip("torchmetrics.classification")
    from shardlens_recorder._metrics import MetricWatch, dense_inputs

    class Module(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.iou = tm.BinaryJaccardIndex(ignore_index=255)

    torch.manual_seed(6)
    module, watch = Module(), MetricWatch()
    watch.attach(module)
    rec = ShardLensRecorder(str(tmp_path), num_classes=2, ignore_index=255)
    for b, logits in enumerate((True, False)):
        t = torch.randint(0, 2, (3, 8, 9))
        t[:, :, 0] = 255
        p = torch.randn(3, 8, 9) * 2 if logits else torch.rand(3, 8, 9)
        module.iou.update(p, t)
        ((target, ids),) = watch.take()["iou"]
        (w,) = watch.watched
        assert dense_inputs(w, target) and w.num_classes == 2
        rec.add_dense(torch.arange(3 * b, 3 * b + 3), target, ids)
    watch.detach()
    assert np.array_equal(np.asarray(rec.local_matrix()), module.iou.confmat.numpy())
    assert rec._cells.arrays()["ignored"].tolist() == [8] * 6
