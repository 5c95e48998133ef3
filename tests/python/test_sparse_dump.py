"""Matrices written as their nonzero cells, and the verdict read without a matrix.

A real torch DistributedSampler shards 251 samples over 2 ranks (one padding duplicate on
rank 1), each rank's confusion matrix is counted with torch.bincount and the reported one is
their sum, as an all-reduce gives it; at 100 classes both are mostly zeros. The recorder
writes them as `<name>_sparse` [K, 3] with `sparse_classes`, the C++ reader (dump_format_probe,
`shardlens-cli import`) reads back exactly what torch counted, integers and fractions alike;
`import --format verdict` says what the full JSON report says (the same line, counts, row
differences and heatmap) without a matrix, and a shardlens-cli without --format verdict
still gets the verdict through the full report.
"""
import json
import os
import stat
import subprocess

import pytest

np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")

from shardlens_recorder import ShardLensRecorder, _verdict  # noqa: E402

N, C, W = 251, 100, 2


def run_ranks(out, formats=("npz",), reported_scale=None):
    """Every rank records its shard and the synced matrix; returns (paths by rank, labels,
    the synced matrix torch counted)."""
    g = torch.Generator().manual_seed(7)
    labels = torch.randint(0, C, (N,), generator=g)
    logits = torch.randn(N, C, generator=g)
    ranks, local = [], []
    for r in range(W):
        sampler = torch.utils.data.DistributedSampler(range(N), num_replicas=W, rank=r,
                                                      shuffle=False)
        index = torch.tensor(list(iter(sampler)))
        rec = ShardLensRecorder(out, num_classes=C, rank=r, world_size=W, sampler=sampler,
                                formats=formats, batch_size=32)
        for start in range(0, len(index), 32):
            i = index[start:start + 32]
            rec.update(i, labels[i], logits[i])
        local.append(torch.bincount(labels[index] * C + logits[index].argmax(1),
                                    minlength=C * C).reshape(C, C))
        rec.set_matrix(local[-1])
        ranks.append(rec)
    synced = sum(local)
    reported = synced if reported_scale is None else synced.double() * reported_scale
    paths = []
    for rec in ranks:
        rec.set_reported(reported)
        paths.append(rec.save())
    return paths, labels.numpy(), reported


def nonzero_cells(m):
    m = np.asarray(m)
    rows, cols = np.nonzero(m)
    return np.stack([rows, cols, m[rows, cols]], axis=1)


@pytest.mark.parametrize("scale", [None, 0.125])
def test_large_matrices_are_written_sparse_and_read_back_exactly(tmp_path, probe, scale):
    paths, _, reported = run_ranks(str(tmp_path), reported_scale=scale)
    npz = np.load(paths[0][0])
    assert "reported" not in npz.files and "matrix" not in npz.files, npz.files
    assert int(npz["sparse_classes"]) == C
    assert npz["reported_sparse"].dtype == (np.int64 if scale is None else np.float64)
    np.testing.assert_array_equal(npz["reported_sparse"], nonzero_cells(reported.numpy()))
    assert npz["matrix_sparse"].dtype == np.int64
    # What the C++ reader builds from them is what torch counted, cell for cell.
    read = json.loads(subprocess.run([probe, paths[0][0]], capture_output=True, text=True,
                                     check=True, timeout=60).stdout)
    assert read["reported"] == reported.tolist()
    dense_local = np.zeros((C, C), np.int64)
    cells = npz["matrix_sparse"]
    dense_local[cells[:, 0], cells[:, 1]] = cells[:, 2]
    assert read["matrix"] == dense_local.tolist()


def test_small_matrices_stay_dense(tmp_path):
    rec = ShardLensRecorder(str(tmp_path), num_classes=3, rank=0, world_size=1)
    rec.update([0, 1, 2], [0, 1, 2], [0, 1, 1])
    rec.set_reported(torch.eye(3, dtype=torch.int64))
    npz = np.load(rec.save()[0])
    assert "reported" in npz.files and "reported_sparse" not in npz.files


@pytest.mark.parametrize("scale", [None, 0.125])
def test_pt_dumps_carry_the_same_sparse_arrays(tmp_path, cli, cli_reads_pt, scale):
    paths, _, reported = run_ranks(str(tmp_path), formats=("npz", "pt"), reported_scale=scale)
    pt = torch.load(paths[0][1])
    npz = np.load(paths[0][0])
    assert "reported" not in pt and int(pt["sparse_classes"]) == C
    assert pt["reported_sparse"].dtype == (torch.int64 if scale is None else torch.float64)
    np.testing.assert_array_equal(pt["reported_sparse"].numpy(), npz["reported_sparse"])
    run = str(tmp_path / "pt.slrun")
    result = subprocess.run([cli, "import", *(p[1] for p in paths), "--out", run],
                            capture_output=True, text=True, timeout=120)
    if not cli_reads_pt:  # a CLI without LibTorch says so, naming the file
        assert result.returncode != 0 and "LibTorch" in result.stderr, result.stderr
        return
    assert result.returncode == 0, result.stderr
    assert _verdict.run_json(cli, "diagnose", "--run", run)["synced"] == reported.tolist()


def full_path_verdict(cli, files, run, labels):
    """The verdict as the recorder read it before --format verdict: the full JSON report."""
    subprocess.run([cli, "import", *files, "--out", run, "--dataset", "npy:" + labels],
                   check=True, capture_output=True, timeout=120)
    report = _verdict.run_json(cli, "diagnose", "--run", run)
    v = _verdict.verdict_of(report, run)
    return v, report


def test_the_compact_verdict_says_what_the_full_report_says(tmp_path, cli):
    paths, labels, reported = run_ranks(str(tmp_path))
    labels_npy = str(tmp_path / "labels.npy")
    np.save(labels_npy, labels.astype(np.int64))
    files = [p[0] for p in paths]
    run = str(tmp_path / "eval.slrun")
    lines = []
    v = _verdict.judge(cli, files, run, lines.append, labels_npy)
    full, report = full_path_verdict(cli, files, run, labels_npy)  # the same run, again
    # The truth, from torch's own counts: the padding duplicate (rank 1's last sample, the
    # sampler's index 0) adds one to the row of labels[0] in the reported matrix.
    assert v["duplicates"] == 1
    truth = np.bincount(labels, minlength=C)
    wrong = np.nonzero(reported.sum(1).numpy() != truth)[0]
    assert wrong.tolist() == [labels[0]]
    assert v["rows_wrong"] == len(wrong) == 1
    assert v["row_difference"] == (reported.sum(1).numpy() - truth).tolist()
    assert lines == [v["line"]]
    for key in ("line", "rows_wrong", "duplicates", "never_evaluated", "patterns", "correct",
                "classes", "labels_known", "row_difference"):
        assert v[key] == full[key], key
    # The heatmap from the nonzero differences is the one the dense matrices gave.
    dense = _verdict.heatmap(report["synced"], report["expected"] or report["expected_distinct"],
                             full["row_difference"])
    np.testing.assert_array_equal(_verdict.heatmap_of(v), dense)
    # Without a matrix: the summary of 100 classes is a few hundred bytes.
    out = subprocess.run([cli, "import", *files, "--out", run, "--dataset", "npy:" + labels_npy,
                          "--format", "verdict"], capture_output=True, text=True, check=True)
    assert len(out.stdout) < 2000, len(out.stdout)
    assert "synced" not in json.loads(out.stdout)


def test_a_cli_without_format_verdict_still_gives_the_verdict(tmp_path, cli):
    paths, labels, _ = run_ranks(str(tmp_path))
    labels_npy = str(tmp_path / "labels.npy")
    np.save(labels_npy, labels.astype(np.int64))
    files = [p[0] for p in paths]
    older = tmp_path / "older-cli"
    older.write_text("#!/bin/sh\n"
                     "for a in \"$@\"; do [ \"$a\" = verdict ] && { echo 'shardlens-cli: "
                     "--format: verdict not in {text,json} (see --help)' >&2; exit 2; }; done\n"
                     "exec '%s' \"$@\"\n" % cli)
    older.chmod(older.stat().st_mode | stat.S_IEXEC)
    v = _verdict.judge(str(older), files, str(tmp_path / "old.slrun"), lambda line: None,
                       labels_npy)
    new = _verdict.judge(cli, files, str(tmp_path / "new.slrun"), lambda line: None, labels_npy)
    assert os.path.exists(tmp_path / "old.slrun")
    for key in ("rows_wrong", "duplicates", "never_evaluated", "patterns", "row_difference"):
        assert v[key] == new[key], key
    np.testing.assert_array_equal(_verdict.heatmap_of(v), _verdict.heatmap_of(new))
