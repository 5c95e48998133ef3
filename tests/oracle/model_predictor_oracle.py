"""Oracle: the `model:` predictor and `shardlens-cli predict` against Python's torch.

Usage: model_predictor_oracle.py SHARDLENS_CLI MODEL. Python computes
torch.jit.load(MODEL)(x).argmax(1) on the whole Fashion-MNIST test set (x: raw pixels
[N, 1, 28, 28] float32 in [0, 255], the reference model's contract). Checks, with a private
prediction cache:
  - `predict` writes exactly those predictions as an int64 .npy (first run: computed);
  - a second `predict` reads them from the cache (the times of both are printed, for the
    record; they are not asserted), and a subset (first=300) reuses the cached file;
  - `simulate --predictor model:MODEL` reports the confusion matrix of those predictions;
  - a changed model file at the same path misses the cache and gives the new model's
    predictions;
  - a dataset without inputs and a file that is no model are refused (exit 2), named.
Exits 77 (ctest SKIP) when /usr/bin/python3 has no torch/numpy, Fashion-MNIST is absent or
the CLI was built without LibTorch.
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    import torch
except ImportError as e:
    print("SKIP: torch/numpy not available for %s (%s)" % (sys.executable, e))
    sys.exit(77)

FMNIST = "/usr/share/datasets/fashion-mnist"


def read_idx(path, header):
    with gzip.open(path, "rb") as f:
        return f.read()[header:]


def oracle_predictions(model_path, x):
    model = torch.jit.load(model_path)
    model.eval()
    with torch.no_grad():
        return model(x).argmax(1).numpy().astype(np.int64)


def main():
    cli_path, model_path = sys.argv[1], sys.argv[2]
    images_file = os.path.join(FMNIST, "t10k-images-idx3-ubyte.gz")
    if not os.path.exists(images_file):
        print("SKIP: Debian's dataset-fashion-mnist is not installed (%s)" % images_file)
        sys.exit(77)
    work = tempfile.mkdtemp(prefix="shardlens-model-oracle-")
    env = dict(os.environ, SHARDLENS_PREDICTION_CACHE=os.path.join(work, "cache"))

    def cli(*args):
        return subprocess.run([cli_path] + list(args), capture_output=True, text=True, env=env,
                              timeout=600)

    def predict(model, dataset, out):
        start = time.monotonic()
        r = cli("predict", "--model", model, "--dataset", dataset, "--out", out)
        seconds = time.monotonic() - start
        if "no LibTorch" in r.stderr:
            print("SKIP: shardlens-cli was built without LibTorch")
            sys.exit(77)
        assert r.returncode == 0, r.stderr
        return np.load(out), r.stderr, seconds

    pixels = np.frombuffer(read_idx(images_file, 16), dtype=np.uint8)
    labels = np.frombuffer(read_idx(os.path.join(FMNIST, "t10k-labels-idx1-ubyte.gz"), 8),
                           dtype=np.uint8).astype(np.int64)
    x = torch.from_numpy(pixels.copy()).reshape(-1, 1, 28, 28).float()
    expected = oracle_predictions(model_path, x)
    n = len(expected)

    model = os.path.join(work, "model.pt")
    shutil.copyfile(model_path, model)
    first, log, t_first = predict(model, "fashion-mnist:test", os.path.join(work, "a.npy"))
    assert first.dtype == np.int64 and first.shape == (n,), (first.dtype, first.shape)
    assert "computed" in log, log
    bad = np.flatnonzero(first != expected)
    assert bad.size == 0, "%d predictions differ from torch, first at index %d" % (bad.size,
                                                                                   bad[0])
    second, log, t_second = predict(model, "fashion-mnist:test", os.path.join(work, "b.npy"))
    assert "from the cache" in log, log
    assert (second == expected).all()
    subset, log, _ = predict(model, "fashion-mnist:test,first=300", os.path.join(work, "c.npy"))
    assert "from the cache" in log, log
    assert (subset == expected[:300]).all()
    print("predict: %d predictions equal torch's; first run %.2f s (computed), second %.2f s "
          "(cache)" % (n, t_first, t_second))

    # The model: predictor in simulate: the matrix of those predictions.
    start = time.monotonic()
    r = cli("simulate", "--dataset", "fashion-mnist:test", "--predictor", "model:" + model,
            "--world-size", "2", "--format", "json")
    t_sim = time.monotonic() - start
    assert r.returncode in (0, 1), r.stderr
    report = json.loads(r.stdout)
    matrix = np.bincount(labels * 10 + expected, minlength=100).reshape(10, 10)
    assert (np.array(report["expected"]) == matrix).all(), report["expected"]
    print("simulate --predictor model: (cached) %.2f s; its matrix equals torch's" % t_sim)

    # A changed model at the same path misses the cache: favour class 3 in the last layer.
    changed = torch.jit.load(model_path)
    last_bias = [p for name, p in changed.named_parameters() if name.endswith("bias")][-1]
    with torch.no_grad():
        last_bias[3] += 5.0
    torch.jit.save(changed, model)
    new_expected = oracle_predictions(model, x)
    assert (new_expected != expected).any(), "the changed model predicts the same"
    third, log, _ = predict(model, "fashion-mnist:test", os.path.join(work, "d.npy"))
    assert "computed" in log, log
    assert (third == new_expected).all()
    print("a changed model file missed the cache and gave the new model's predictions")

    # Refusals: synthetic labels cannot be fed to a model; a file that is no model is named.
    r = cli("simulate", "--dataset", "synthetic:classes=10,per-class=5", "--predictor",
            "model:" + model)
    assert r.returncode == 2 and "no inputs" in r.stderr, (r.returncode, r.stderr)
    junk = os.path.join(work, "junk.pt")
    with open(junk, "w") as f:
        f.write("not a model\n")
    r = cli("predict", "--model", junk, "--dataset", "fashion-mnist:test,first=10", "--out",
            os.path.join(work, "e.npy"))
    assert r.returncode == 2 and "junk.pt" in r.stderr, (r.returncode, r.stderr)
    shutil.rmtree(work)
    print("OK")


if __name__ == "__main__":
    main()
