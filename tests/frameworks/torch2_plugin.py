"""The LibTorch plugin built against the venv's torch 2.x (scripts/build/build-torch2-plugin.sh,
core/torch/standalone) does what Debian's LibTorch 1.13 plugin does:

  run     a 2-rank Gloo `shardlens-cli run` (reference model, Fashion-MNIST test subset,
          shuffled, n odd so rank 1 gets a padding duplicate) with the torch 2.x plugin: its
          run file records torch 2.x (meta and the scenario it imitated) and its records and
          matrices equal the same run with Debian's plugin, and a simulation of the run's
          predictions
  import  the run's records written by the recorder with torch 2.x's torch.save (zip
          format) as .pt dumps and as .npz: `import` of the .pt through the torch 2.x plugin
          equals the .npz import (and Debian's plugin reads the same .pt alike)

Usage: torch2_plugin.py CLI TORCH2_PLUGIN_DIR MODEL
Skips (77; fails under CI=true) when the plugin was not built (no venv).
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile

import frameworks

frameworks.require_venv()
import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, frameworks.RECORDER_DIR)
from shardlens_recorder import ShardLensRecorder  # noqa: E402

CLI, PLUGIN_DIR, MODEL = sys.argv[1], sys.argv[2], sys.argv[3]
PLUGIN = os.path.join(PLUGIN_DIR, "lib", "shardlens", "libshardlens_torch.so")
DATASET = "fashion-mnist:test,first=1001"
W = 2
RUN_FLAGS = ["--model", MODEL, "--dataset", DATASET, "--world-size", str(W), "--batch-size", "64",
             "--shuffle", "--seed", "7", "--timeout", "120"]


def env_with(plugin):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("SHARDLENS_TORCH_PLUGIN", None)
    if plugin:
        env["SHARDLENS_TORCH_PLUGIN"] = plugin
    return env


def cli(*args, plugin=None):
    t = time.time()
    p = subprocess.run([CLI, *args], capture_output=True, text=True, env=env_with(plugin),
                       timeout=600)
    if p.returncode != 0:
        raise AssertionError("shardlens-cli %s exited %d: %s" % (" ".join(args), p.returncode,
                                                                p.stderr[-3000:]))
    return p, time.time() - t


def arrays(path):
    with np.load(path) as z:
        return {k: z[k] for k in z.files if k != "meta.json"}


def meta(path):
    with zipfile.ZipFile(path) as z:
        return json.loads(z.read("meta.json"))


def same_arrays(a, b, what):
    assert sorted(a) == sorted(b), "%s: members %s != %s" % (what, sorted(a), sorted(b))
    for k in a:
        assert np.array_equal(a[k], b[k]), "%s: member %s differs" % (what, k)


def main():
    if not os.path.exists(PLUGIN):
        frameworks.skip("%s was not built: run scripts/build/build-torch2-plugin.sh" % PLUGIN)
    version = torch.__version__.split("+")[0]
    with tempfile.TemporaryDirectory() as d:
        # (a) the run, with the torch 2.x plugin
        mine = os.path.join(d, "torch2.slrun")
        p, seconds = cli("run", *RUN_FLAGS, "--out", mine, "--format", "json", plugin=PLUGIN)
        report = json.loads(p.stdout)
        m = meta(mine)
        assert m["torch_version"] == version, "run file records torch %s" % m["torch_version"]
        assert report["torch_version"] == version, report["torch_version"]
        major_minor = ".".join(version.split(".")[:2])
        assert m["scenario"]["torch_version"] == major_minor, m["scenario"]["torch_version"]
        assert m["complete"] and m["backend"] == "gloo", m
        flags = sum(int(a.sum()) for k, a in arrays(mine).items() if k.endswith("_flags"))
        assert flags == 1, "expected one padding record on 2 ranks of 1001, got %d" % flags
        print("run: 2 Gloo ranks with torch %s's plugin in %.1f s, run file records torch %s"
              % (torch.__version__, seconds, m["torch_version"]))

        # A plugin that SHARDLENS_TORCH_PLUGIN names is the only one tried: a wrong path is an
        # error naming it, never a silent run with another torch.
        missing = os.path.join(d, "no-such-plugin.so")
        p = subprocess.run([CLI, "run", *RUN_FLAGS, "--out", os.path.join(d, "x.slrun")],
                           capture_output=True, text=True, env=env_with(missing))
        assert p.returncode != 0 and "SHARDLENS_TORCH_PLUGIN=" + missing in p.stderr, p.stderr

        # ... equals the same run with Debian's plugin (the build tree's, LibTorch 1.13)
        debian = os.path.join(d, "debian.slrun")
        has_debian = True
        try:
            p, seconds = cli("run", *RUN_FLAGS, "--torch-version", major_minor, "--out", debian)
        except AssertionError as e:
            if "LibTorch" not in str(e):
                raise
            has_debian = False
            print("run: no Debian LibTorch plugin in this build (%s); compared with the "
                  "simulation only" % str(e).splitlines()[-1])
        if has_debian:
            same_arrays(arrays(mine), arrays(debian), "run with torch %s vs Debian's plugin"
                        % version)
            print("run: records and matrices equal the same run with Debian's plugin "
                  "(LibTorch %s, %.1f s)" % (meta(debian)["torch_version"], seconds))

        # ... and a simulation from the run's own predictions (every index was evaluated)
        run = arrays(mine)
        n = 1001
        predictions = np.zeros(n, dtype=np.int64)
        for r in range(W):
            predictions[run["rank%d_index" % r]] = run["rank%d_prediction" % r]
        npy = os.path.join(d, "pred.npy")
        np.save(npy, predictions)
        sim, _ = cli("simulate", "--dataset", DATASET, "--predictor", "npy:" + npy,
                     "--world-size", str(W), "--batch-size", "64", "--shuffle", "--seed", "7",
                     "--format", "json")
        sim = json.loads(sim.stdout)
        for key in ("per_rank", "synced", "class_counts"):
            assert sim[key] == report[key], "run vs simulation: %s differs" % key
        print("run: per-rank and synced matrices equal the simulation of its predictions")

        # (b) .pt dumps from torch 2.x's torch.save, read through the torch 2.x plugin
        dumps = os.path.join(d, "dumps")
        for r in range(W):
            rec = ShardLensRecorder(dumps, rank=r, world_size=W, num_classes=10, dataset_size=n,
                                    batch_size=64, formats=("npz", "pt"), epoch=0)
            rec.update(torch.from_numpy(run["rank%d_index" % r]),
                       torch.from_numpy(run["rank%d_target" % r]),
                       torch.from_numpy(run["rank%d_prediction" % r]),
                       flags=torch.from_numpy(run["rank%d_flags" % r].astype(np.int64)))
            rec.set_reported(torch.from_numpy(run["synced"]))
            rec.save()
        pts = sorted(os.path.join(dumps, f) for f in os.listdir(dumps) if f.endswith(".pt"))
        npzs = [p[:-3] + ".npz" for p in pts]
        assert len(pts) == W and all(zipfile.is_zipfile(p) for p in pts), pts  # torch.save's zip
        reports = {}
        for name, files, plugin in (("pt", pts, PLUGIN), ("npz", npzs, PLUGIN),
                                    ("pt-debian", pts, None)):
            if name == "pt-debian" and not has_debian:
                continue
            out = os.path.join(d, name + ".slrun")
            p, _ = cli("import", *files, "--dataset", DATASET, "--out", out, "--format", "json",
                       plugin=plugin)
            reports[name] = (json.loads(p.stdout), arrays(out))
        for name in reports:
            if name == "npz":
                continue
            same_arrays(reports[name][1], reports["npz"][1], "import of .%s vs .npz" % name)
            for key in ("per_rank", "synced", "class_counts", "diagnosis"):
                assert reports[name][0][key] == reports["npz"][0][key], "%s: %s" % (name, key)
        for key in ("per_rank", "synced"):
            assert reports["pt"][0][key] == report[key], "import vs run: %s" % key
        print("import: %d .pt dumps saved by torch %s (zip format) read through its plugin equal "
              "the .npz import%s and the run" % (W, torch.__version__,
                                                 ", Debian's plugin reads them alike" if has_debian
                                                 else ""))


if __name__ == "__main__":
    main()
