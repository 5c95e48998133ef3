"""What the Lightning oracle tests share: the data, the LightningModule, the worker launch and
the comparison with shardlens-cli.

A prediction is a fixed function of the dataset index (a table written by the test), so
`shardlens-cli simulate --dataset npy:labels.npy --predictor npy:preds.npy` knows every
prediction: each dataset item carries its index, its table prediction and its label, and the
model turns the prediction into logits through an identity Linear layer whose learning rate
is 0 (trainable, so DDP and the optimizer run for real, yet training never changes what it
predicts). Under bf16 autocast the logits are bfloat16 one-hot rows: argmax stays exact.

The worker (lightning_worker.py CONFIG OUT) runs one real Trainer; Lightning's DDP launcher
re-runs it once per extra rank. Every rank writes OUT/results_rank<r>.json: per evaluation
(stage, sanity, epoch, validation within the epoch, dataloader) the torchmetrics states it
saw (the local confmat before sync, compute() after), the indices its batches carried, and
its sampler. The test then compares those with simulate, and with what ShardLensCallback
recorded (import + diagnose).
"""
import glob
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import frameworks  # noqa: E402

sys.path.insert(0, frameworks.RECORDER_DIR)
from shardlens_recorder import SETTINGS_KEYS  # noqa: E402,F401

C = 5  # classes
W = 4  # ranks (devices=4)


def labels_of(n, mult):
    return [(i * mult + i // 11) % C for i in range(n)]


def predictions_of(labels):
    """Right on two samples of three, so rows and columns both carry information."""
    return [y if i % 3 else (y + 1 + i % 2) % C for i, y in enumerate(labels)]


def write_table(out, name, n, mult):
    """OUT/<name>_labels.npy and OUT/<name>_preds.npy (int64)."""
    import numpy as np
    labels = labels_of(n, mult)
    np.save(os.path.join(out, name + "_labels.npy"), np.array(labels, dtype=np.int64))
    np.save(os.path.join(out, name + "_preds.npy"),
            np.array(predictions_of(labels), dtype=np.int64))


def launch(config, out, timeout=420):
    """Runs lightning_worker.py CONFIG OUT (4 ranks) and returns its combined output and
    every rank's results (a list of evaluations). SHARDLENS_LIGHTNING_REUSE=1 reads a
    previous run's OUT instead (for working on a test, with a fixed OUT)."""
    start = time.time()
    log_path = os.path.join(out, "worker.log")
    if not (os.environ.get("SHARDLENS_LIGHTNING_REUSE") and os.path.exists(log_path)):
        env = dict(os.environ, PYTHONPATH=frameworks.RECORDER_DIR + os.pathsep + HERE,
                   OMP_NUM_THREADS="1", PYTHONWARNINGS="default")
        for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_PORT", "PL_GLOBAL_SEED"):
            env.pop(var, None)
        env["MASTER_PORT"] = str(frameworks.free_port())  # Lightning launches there
        proc = subprocess.run([sys.executable, os.path.join(HERE, "lightning_worker.py"),
                               config, out], capture_output=True, text=True, timeout=timeout,
                              env=env)
        log = proc.stdout + proc.stderr
        if proc.returncode != 0:
            raise AssertionError("the %s Trainer failed (exit %d):\n%s"
                                 % (config, proc.returncode, log[-6000:]))
        with open(log_path, "w") as f:
            f.write(log)
    with open(log_path) as f:
        log = f.read()
    results = {}
    for r in range(W):
        with open(os.path.join(out, "results_rank%d.json" % r)) as f:
            results[r] = json.load(f)
    print("%s: Trainer with %d ranks ran in %.0f s" % (config, W, time.time() - start), flush=True)
    return log, results


def workdir():
    """A temporary folder, or SHARDLENS_LIGHTNING_OUT (kept, for working on a test)."""
    import contextlib
    import tempfile
    keep = os.environ.get("SHARDLENS_LIGHTNING_OUT")
    if keep:
        os.makedirs(keep, exist_ok=True)
        return contextlib.nullcontext(keep)
    return tempfile.TemporaryDirectory()


def evaluations(results):
    """(stage, sanity, epoch, validation, dataloader) -> {rank: that rank's record}."""
    out = {}
    for r, records in results.items():
        for e in records:
            key = (e["stage"], e["sanity"], e["epoch"], e["val"], e["dl"])
            out.setdefault(key, {})[r] = e
    return out


def simulate(cli, table, batch_size, limit, shuffle=False, seed=0, epoch=0, extra=()):
    """simulate's JSON for a table's dataset (TABLE_labels.npy, TABLE_preds.npy; TABLE is a
    path without the suffix)."""
    args = ["simulate", "--dataset", "npy:" + table + "_labels.npy",
            "--predictor", "npy:" + table + "_preds.npy", "--world-size", str(W),
            "--batch-size", str(batch_size), "--limit-batches", str(limit),
            "--seed", str(seed), "--epoch", str(epoch)]
    args.append("--shuffle" if shuffle else "--no-shuffle")
    return frameworks.cli_json(cli, *args, *extra)


def simulate_like(cli, table, settings):
    """simulate's JSON for the run a dump's settings_json describes: only what the dump
    recorded chooses the flags (what `simulate --like RUN.slrun` will do in the CLI).
    Returns None for a sampler simulate cannot take from the settings alone (a wrapper's
    inner draws are not in them)."""
    sampler = {"distributed": "distributed", "unrepeated": "unrepeated", "none": "none"}.get(
        settings["sampler"])
    if sampler is None:
        return None
    limit = settings["limit_batches"]
    limit = "1.0" if limit == "all" else limit
    if settings["sanity"]:  # the sanity check runs min(num_sanity_val_steps, limit) batches
        limit = str(settings["sanity_steps"])
    args = ["simulate", "--dataset", "npy:" + table + "_labels.npy",
            "--predictor", "npy:" + table + "_preds.npy",
            "--world-size", str(settings["world_size"]),
            "--batch-size", str(settings["batch_size"]), "--limit-batches", limit,
            "--sampler", sampler, "--seed", str(settings["seed"] or 0),
            "--epoch", str(settings["sampler_epoch"]),
            "--shuffle" if settings["shuffle"] else "--no-shuffle"]
    if settings["sampler_drop_last"]:
        args.append("--sampler-drop-last")
    if settings["loader_drop_last"]:
        args.append("--loader-drop-last")
    return frameworks.cli_json(cli, *args)


def check_like(cli, table, files, ranks):
    """Every rank's metric state and compute() equal the simulation of the dump's settings."""
    s = simulate_like(cli, table, settings_of(files[0]))
    for r in range(W):
        check_equal("settings_json re-simulated: rank %d local" % r, ranks[r]["local"],
                    s["per_rank"][r])
        check_equal("settings_json re-simulated: compute()", ranks[r]["synced"], s["synced"])


def dump_files(out, name="eval", stage="", sanity=False, epoch=0, val=0, dl=0, ext="npz"):
    """The callback's dump of every rank for one evaluation, by its documented name."""
    parts = [name] + ([stage] if stage else []) + (["sanity"] if sanity else [])
    parts.append("epoch%d" % epoch)
    if val:
        parts.append("val%d" % val)
    if dl:
        parts.append("dl%d" % dl)
    files = [os.path.join(out, "dumps", "_".join(parts + ["rank%d.%s" % (r, ext)]))
             for r in range(W)]
    missing = [f for f in files if not os.path.exists(f)]
    assert not missing, "missing dumps %s; have %s" % (missing, sorted(
        os.path.basename(p) for p in glob.glob(os.path.join(out, "dumps", "*"))))
    return files


def import_and_diagnose(cli, files, table, run):
    """import FILES --dataset npy:<table>_labels.npy, then diagnose --run: its JSON."""
    proc = subprocess.run([cli, "import", *files, "--dataset", "npy:" + table + "_labels.npy",
                           "--out", run], capture_output=True, text=True)
    assert proc.returncode == 0, "import failed: %s" % (proc.stdout + proc.stderr)
    return diagnose(cli, run)


def diagnose(cli, run):
    """diagnose --run RUN's JSON of a run holding one evaluation."""
    report = frameworks.cli_json(cli, "diagnose", "--run", run)
    if "epochs" in report:
        assert len(report["epochs"]) == 1, [e.get("epoch") for e in report["epochs"]]
        report = report["epochs"][0]
    return report


def patterns(report):
    return sorted({d["pattern"] for d in report.get("diagnosis", [])})


def settings_of_raw(path):
    import numpy as np
    with np.load(path) as d:
        return bytes(d["settings_json"].tolist())


def settings_of(path):
    return json.loads(settings_of_raw(path).decode("utf-8"))


def check_equal(what, got, want):
    if got != want:
        raise AssertionError("%s:\n  got  %s\n  want %s" % (what, got, want))
