"""Dumps of samples of many counts written by hand with numpy (and torch.save), as
docs/FORMATS.md's dump format 3 describes them, imported by `shardlens-cli import`: each
rank's matrix is torchmetrics' own confusion-matrix state after that rank's samples (the
samples torch's DistributedSampler deals it, padding duplicates included), and the expected
matrix is the state after every sample once. Segmentation (MulticlassConfusionMatrix with
ignore_index 255 over [H, W] masks), tokens (ignore_index -100 over padded sequences) and
multilabel (MultilabelConfusionMatrix [L, 2, 2] as 2 L classes).
"""
import json
import os
import subprocess

import numpy as np
import pytest

torch = pytest.importorskip("torch")
tm = pytest.importorskip("torchmetrics.classification")

N, W = 13, 4  # 13 samples on 4 ranks: DistributedSampler pads 3 duplicates


def dominant(values, classes):
    """The sample's largest class by count (lower on a tie; 0 when empty)."""
    if values.size == 0:
        return 0
    return int(np.argmax(np.bincount(values, minlength=classes)))


def cells_of(target, prediction, classes, ignore):
    """One sample's (true, predicted, count) cells, its size and its ignored count."""
    keep = target != ignore
    keys = target[keep].astype(np.int64) * classes + prediction[keep]
    counts = np.bincount(keys, minlength=classes * classes)
    nonzero = np.flatnonzero(counts)
    return (nonzero // classes, nonzero % classes, counts[nonzero], target.size,
            int((~keep).sum()), dominant(target[keep], classes),
            dominant(prediction[keep], classes))


def write_dumps(tmp_path, samples, classes, settings, container):
    """Each rank's dump of `samples` (index -> (target, prediction) arrays, or cells for
    multilabel), dealt as DistributedSampler(shuffle=False) deals them. Returns the paths and
    each rank's indices."""
    paths, ranks = [], []
    for r in range(W):
        sampler = torch.utils.data.DistributedSampler(range(N), num_replicas=W, rank=r,
                                                      shuffle=False)
        index = list(iter(sampler))
        ranks.append(index)
        flags = [1 if r + k * W >= N else 0 for k in range(len(index))]
        per, ct, cp, cc, size, ignored, tg, pr = [], [], [], [], [], [], [], []
        for i in index:
            t, p, c, s, ig, dt, dp = samples[i]
            per.append(len(c))
            ct += list(t)
            cp += list(p)
            cc += list(c)
            size.append(s)
            ignored.append(ig)
            tg.append(dt)
            pr.append(dp)
        s = dict(settings, rank=r, world_size=W, dataset_size=N, num_classes=classes)
        arrays = {
            "format_version": np.array(3), "index": np.array(index), "target": np.array(tg),
            "prediction": np.array(pr), "flags": np.array(flags, np.uint8),
            "rank": np.array(r), "world_size": np.array(W), "dataset_size": np.array(N),
            "cells_per_record": np.array(per), "cell_target": np.array(ct, np.int64),
            "cell_prediction": np.array(cp, np.int64), "cell_count": np.array(cc, np.int64),
            "sample_size": np.array(size), "ignored": np.array(ignored),
            "settings_json": np.frombuffer(json.dumps(s).encode(), np.uint8)}
        arrays = {k: v.astype(np.uint8 if k in ("flags", "settings_json") else np.int64)
                  for k, v in arrays.items()}
        path = str(tmp_path / ("dump_rank%d.%s" % (r, container)))
        if container == "npz":
            np.savez(path, **arrays)
        else:
            torch.save({k: torch.from_numpy(np.array(v)) for k, v in arrays.items()}, path)
        paths.append(path)
    return paths, ranks


def imported(cli, paths, out):
    r = subprocess.run([cli, "import", *paths, "--out", out, "--format", "json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("container", ["npz", "pt"])
def test_segmentation_ranks_are_torchmetrics_states(tmp_path, cli, cli_reads_pt, container):
    C, ignore = 5, 255
    masks = {}
    for i in range(N):
        g = np.random.default_rng(i)
        t = g.integers(0, C, (12, 10))
        t[g.random(t.shape) < 0.15] = ignore
        if i == 4:
            t[:] = ignore  # an image of ignored pixels only: a record of no cells
        p = np.where(g.random(t.shape) < 0.6, np.where(t == ignore, 0, t), g.integers(0, C, t.shape))
        masks[i] = (t, p)
    samples = {i: cells_of(t.ravel(), p.ravel(), C, ignore) for i, (t, p) in masks.items()}
    paths, ranks = write_dumps(tmp_path, samples, C, {"task": "segmentation",
                                                      "ignore_index": ignore}, container)
    out = str(tmp_path / "seg.slrun")
    if container == "pt" and not cli_reads_pt:  # a build without LibTorch says so and fails
        r = subprocess.run([cli, "import", *paths, "--out", out], capture_output=True,
                           text=True, timeout=120)
        assert r.returncode != 0 and "LibTorch" in r.stderr, r.stderr
        return
    report = imported(cli, paths, out)
    for r, index in enumerate(ranks):
        m = tm.MulticlassConfusionMatrix(C, ignore_index=ignore)
        for i in index:
            t, p = masks[i]
            m.update(torch.from_numpy(p)[None], torch.from_numpy(t)[None])
        assert report["per_rank"][r] == m.confmat.tolist(), r
    whole = tm.MulticlassConfusionMatrix(C, ignore_index=ignore)
    for i in range(N):
        t, p = masks[i]
        whole.update(torch.from_numpy(p)[None], torch.from_numpy(t)[None])
    assert report["expected"] == whole.confmat.tolist()
    text = subprocess.run([cli, "import", *paths, "--out", out], capture_output=True,
                          text=True, timeout=120).stdout
    counted = sum(sum(map(sum, m)) for m in report["per_rank"])
    assert "segmentation dump: 13 images (16 records), 5 classes, %s pixels counted" % (
        "{:,}".format(counted)) in text
    # The run file reads back and diagnoses the duplicates (exit 1: the matrix is wrong).
    d = subprocess.run([cli, "diagnose", "--run", out], capture_output=True, text=True,
                       timeout=120)
    assert d.returncode == 1, d.stderr


def test_tokens_with_padding_labels_are_torchmetrics_states(tmp_path, cli):
    C, ignore = 7, -100
    seqs = {}
    for i in range(N):
        g = np.random.default_rng(100 + i)
        length = int(g.integers(3, 12))
        t = np.full(12, ignore)
        t[:length] = g.integers(0, C, length)
        t[1] = ignore  # a continuation sub-word
        p = np.where(g.random(12) < 0.7, np.maximum(t, 0), g.integers(0, C, 12))
        seqs[i] = (t, p)
    samples = {i: cells_of(t, p, C, ignore) for i, (t, p) in seqs.items()}
    paths, ranks = write_dumps(tmp_path, samples, C, {"task": "tokens", "ignore_index": ignore},
                               "npz")
    report = imported(cli, paths, str(tmp_path / "tok.slrun"))
    for r, index in enumerate(ranks):
        m = tm.MulticlassConfusionMatrix(C, ignore_index=ignore)
        for i in index:
            t, p = seqs[i]
            m.update(torch.from_numpy(p)[None], torch.from_numpy(t)[None])
        assert report["per_rank"][r] == m.confmat.tolist(), r


def test_multilabel_blocks_are_torchmetrics_states(tmp_path, cli):
    L, ignore = 4, -1
    items = {}
    for i in range(N):
        g = np.random.default_rng(200 + i)
        t = g.integers(0, 2, L)
        t[g.random(L) < 0.2] = ignore
        p = g.integers(0, 2, L)
        items[i] = (t, p)
    samples = {}
    for i, (t, p) in items.items():
        keep = t != ignore
        labels = np.flatnonzero(keep)
        ct, cp = 2 * labels + t[keep], 2 * labels + p[keep]
        order = np.argsort(ct * 2 * L + cp)
        samples[i] = (ct[order], cp[order], np.ones(len(labels), np.int64), L,
                      int((~keep).sum()), 0, 0)
    paths, ranks = write_dumps(tmp_path, samples, 2 * L, {"task": "multilabel", "num_labels": L,
                                                          "ignore_index": ignore}, "npz")
    report = imported(cli, paths, str(tmp_path / "ml.slrun"))
    for r, index in enumerate(ranks):
        m = tm.MultilabelConfusionMatrix(L, ignore_index=ignore)
        for i in index:
            t, p = items[i]
            m.update(torch.from_numpy(p)[None], torch.from_numpy(t)[None])
        got = np.array(report["per_rank"][r])
        want = np.zeros((2 * L, 2 * L), np.int64)
        for label, block in enumerate(m.confmat.tolist()):
            want[2 * label:2 * label + 2, 2 * label:2 * label + 2] = block
        assert got.tolist() == want.tolist(), r
