"""The dump contract both ways: the recorder writes every array and every settings_json key of
dump_format.json, and the C++ reader reads each back as written.

The dump is made by the real ShardLensRecorder (a DistributedSampler's padding flags, a
sanity check, both matrices, every settings key given a value of its type), then read by
dump_format_probe (the import's own reader, printing what it read: --probe) and imported by
`shardlens-cli import` (.npz and, where the CLI has LibTorch, .pt). The probe's fields are
compared with the values Python wrote, one by one; ARRAY_FIELDS must name every array of the
schema, so a field added to it without a way to read it back fails here. A dump of a newer
format version is refused by the CLI with a message naming the file and both versions.
"""
import json
import os
import subprocess
import sys

import pytest

np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")

from shardlens_recorder import ShardLensRecorder, _format  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
N, C, W, RANK = 11, 3, 2, 1  # 11 over 2 ranks: rank 1 gets one padding duplicate

# Where the probe shows each array of the schema: (probe field, value written -> value read).
# format_version and settings_json are checked on their own below.
ARRAY_FIELDS = {
    "index": "records.index", "target": "records.target", "prediction": "records.prediction",
    "flags": "records.flags", "rank": "records.rank", "world_size": "world_size",
    "epoch": "epoch", "dataloader_idx": "dataloader_idx",
    "validation_in_epoch": "validation_in_epoch", "sanity": "sanity",
    "dataset_size": "dataset_size", "batch_size": "batch_size", "matrix": "matrix",
    "reported": "reported", "format_version": None, "settings_json": "settings",
    # The sparse forms of the two matrices replace them at 4096 cells and more: this dump's
    # 3 x 3 matrices stay dense (test_sparse_dump.py writes and reads the sparse ones).
    "matrix_sparse": None, "reported_sparse": None, "sparse_classes": None,
    # The cells of a sample of many counts: written for segmentation, token and multilabel
    # dumps only, not this classification one.
    "cells_per_record": None, "cell_target": None, "cell_prediction": None,
    "cell_count": None, "sample_size": None, "ignored": None,
}
NOT_IN_THIS_DUMP = {"matrix_sparse", "reported_sparse", "sparse_classes", "cells_per_record",
                    "cell_target", "cell_prediction", "cell_count", "sample_size", "ignored"}


def every_setting(rank, epoch, sanity):
    """A value for every key, of its type: the evaluation's own where the import checks
    them against the arrays, otherwise a distinct value per key."""
    values = {}
    for k, spec in enumerate(_format.SCHEMA["settings"]):
        key, kind = spec["key"], spec["type"]
        lowest = spec.get("minimum", -5)
        values[key] = {"string": "%s-%d" % (key, k), "bool": k % 2 == 0,
                       "int": lowest + 3 + k, "versions": {"torch": "2.15.0", "other": key}}[kind]
    values.update(world_size=W, rank=rank, epoch=epoch, sanity=sanity, dataset_size=N,
                  batch_size=2, num_classes=C, dataloader_idx=1, validation_in_epoch=2,
                  stage="validate", framework="lightning", task="classification",
                  ignore_index=None, num_labels=None)
    return _format.new_settings(values.pop("framework"), **values)


def make_dump(out, sanity):
    """One rank's dump from the real recorder, with every optional array set."""
    data = list(range(N))
    sampler = torch.utils.data.DistributedSampler(data, num_replicas=W, rank=RANK, shuffle=False)
    rec = ShardLensRecorder(out, num_classes=C, rank=RANK, world_size=W, batch_size=2,
                            sampler=sampler, formats=("npz", "pt"), epoch=3)
    rec.sanity = sanity
    rec.dataloader_idx, rec.validation = 1, 2
    index = torch.tensor(list(iter(sampler)))
    target = index % C
    logits = torch.nn.functional.one_hot((index * 2) % C, C).float()
    rec.update(index[:4], target[:4], logits[:4])
    rec.update(index[4:], target[4:], logits[4:])
    local = torch.bincount(target * C + (index * 2) % C, minlength=C * C).reshape(C, C)
    rec.set_matrix(local)
    rec.set_reported(local * 2)
    rec.settings = every_setting(RANK, 3, sanity)
    paths = rec.save()
    return paths, {"index": index.tolist(), "target": target.tolist(),
                   "prediction": ((index * 2) % C).tolist(), "matrix": local.tolist(),
                   "reported": (local * 2).tolist(), "settings": rec.settings}


def probe_json(probe, path):
    r = subprocess.run([probe, path], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def field(read, dotted):
    for part in dotted.split("."):
        read = read[part]
    return read


def test_every_schema_array_has_a_field_here():
    assert sorted(ARRAY_FIELDS) == sorted(_format.ARRAYS)


def test_python_writes_every_field_and_cpp_reads_each(tmp_path, probe):
    paths, wrote = make_dump(str(tmp_path), sanity=True)
    npz = np.load(paths[0])
    assert sorted(npz.files) == sorted(set(_format.ARRAYS) - NOT_IN_THIS_DUMP), \
        "the recorder wrote %s" % npz.files
    for name in npz.files:  # each in the schema's dtype
        want = _format.ARRAYS[name]["dtype"]
        assert npz[name].dtype.name in want.split(" or "), (name, npz[name].dtype, want)
    read = probe_json(probe, paths[0])
    padded = [1 if p >= N else 0 for p in range(RANK, RANK + 2 * 6, 2)]  # r + k * W >= N
    expected = {
        "index": wrote["index"], "target": wrote["target"], "prediction": wrote["prediction"],
        "flags": [f | _format.FLAG_BITS["SANITY"] for f in padded], "rank": [RANK] * 6,
        "world_size": W, "epoch": 3, "dataloader_idx": 1, "validation_in_epoch": 2,
        "sanity": True, "dataset_size": N, "batch_size": 2, "matrix": wrote["matrix"],
        "reported": wrote["reported"], "settings_json": wrote["settings"]}
    assert sum(padded) == 1  # the sampler's one duplicate is flagged
    for name, where in ARRAY_FIELDS.items():
        if where is not None:
            assert field(read, where) == expected[name], (name, field(read, where))
    assert read["stage"] == "validate"
    # Every key of settings_json, through the C++ members generated from the schema.
    assert sorted(read["settings"]) == sorted(_format.SETTINGS_KEYS)
    assert int(npz["format_version"]) == _format.FORMAT_VERSION


def assert_pt_refused_without_libtorch(result, path):
    """A CLI built without LibTorch cannot read .pt: it says so, naming the file, and fails."""
    assert result.returncode != 0, result.stdout
    assert "LibTorch" in result.stderr and os.path.basename(path) in result.stderr, \
        result.stderr


@pytest.mark.parametrize("container", ["npz", "pt"])
def test_the_cli_imports_what_the_recorder_wrote(tmp_path, cli, cli_reads_pt, container):
    paths, wrote = make_dump(str(tmp_path), sanity=False)
    path = [p for p in paths if p.endswith("." + container)][0]
    # The other rank's dump, so the world is whole.
    other = str(tmp_path / ("eval_epoch3_val2_dl1_rank0." + container))
    arrays = dict(np.load(paths[0]))
    arrays.update(rank=np.array(0), index=np.array([0]), target=np.array([0]),
                  prediction=np.array([0]), flags=np.zeros(1, np.uint8),
                  matrix=np.array([[1, 0, 0], [0, 0, 0], [0, 0, 0]]))
    arrays["settings_json"] = np.frombuffer(json.dumps(dict(
        wrote["settings"], rank=0)).encode(), np.uint8)
    if container == "npz":
        np.savez(other, **arrays)
    else:
        torch.save({k: torch.from_numpy(np.array(v)) for k, v in arrays.items()},
                   other)
    r = subprocess.run([cli, "import", other, path, "--out", str(tmp_path / "run.slrun"),
                        "--format", "json"], capture_output=True, text=True, timeout=120)
    if container == "pt" and not cli_reads_pt:
        assert_pt_refused_without_libtorch(r, other)
        return
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    report = report["epochs"][0] if "epochs" in report else report
    assert report["per_rank"][RANK] == wrote["matrix"]
    assert report["reported_per_rank"][RANK] == wrote["reported"]
    recorded = report["recorded_settings"]
    for key in _format.SETTINGS_KEYS:
        if key != "rank":
            assert recorded[key] == wrote["settings"][key], key


@pytest.mark.parametrize("container", ["npz", "pt"])
def test_a_newer_format_version_is_refused_naming_both(tmp_path, cli, cli_reads_pt,
                                                       container):
    paths, _ = make_dump(str(tmp_path), sanity=False)
    path = [p for p in paths if p.endswith("." + container)][0]
    newer = _format.FORMAT_VERSION + 1
    if container == "npz":
        arrays = dict(np.load(path))
        arrays["format_version"] = np.array(newer)
        np.savez(path, **arrays)
    else:
        arrays = torch.load(path)
        arrays["format_version"] = torch.tensor(newer)
        torch.save(arrays, path)
    r = subprocess.run([cli, "import", path, "--out", str(tmp_path / "run.slrun")],
                       capture_output=True, text=True, timeout=120)
    if container == "pt" and not cli_reads_pt:
        assert_pt_refused_without_libtorch(r, path)
        return
    assert r.returncode == 2, (r.returncode, r.stderr)
    said = "%s: dump format version %d is newer than this ShardLens reads (%d)" % (
        path, newer, _format.FORMAT_VERSION)
    assert said in r.stderr, r.stderr


def test_names_outside_the_schema_are_refused_by_the_writer(tmp_path):
    from shardlens_recorder import _writer
    with pytest.raises(KeyError, match="seeed"):
        _format.new_settings("torch", seeed=1)
    with pytest.raises(KeyError, match="metrics_json"):
        _writer.write_npz({"metrics_json": [1]}, str(tmp_path / "x.npz"))


def test_docs_page_is_the_schema_rendered():
    script = os.path.join(ROOT, "scripts", "dev", "dump_format_doc.py")
    r = subprocess.run([sys.executable, script, "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
