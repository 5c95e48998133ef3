"""The verdict: rank 0 imports every rank's dump with shardlens-cli, diagnoses it, and
turns the report into the line, scalars and heatmap users see."""
import json
import os



# -- the verdict: rank 0 imports every rank's dump and diagnoses it --------------------------
def _find_cli(cli):
    """The shardlens-cli to run: cli=, else $SHARDLENS_CLI, else the one on PATH, or None."""
    import shutil
    for candidate in (cli, os.environ.get("SHARDLENS_CLI"), shutil.which("shardlens-cli")):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def _wait_for(paths, timeout):
    """Without torch.distributed, rank 0 polls until every rank's dump exists (atomic
    renames: a path that exists is complete)."""
    import time
    deadline = time.time() + timeout
    while time.time() < deadline:
        if all(os.path.exists(p) for p in paths):
            return []
        time.sleep(0.05)
    return [p for p in paths if not os.path.exists(p)]


def _run_json(cli, *args):
    import subprocess
    proc = subprocess.run([cli, *args, "--format", "json"], capture_output=True, text=True)
    if proc.returncode not in (0, 1):  # diagnose exits 1 on a wrong matrix
        raise RuntimeError("%s %s exited %d: %s" % (os.path.basename(cli), args[0],
                                                    proc.returncode, proc.stderr.strip()[-500:]))
    return json.loads(proc.stdout) if proc.stdout.strip() else {}


def _verdict_of(report, run):
    """rows_wrong, duplicates, never_evaluated, patterns and the one line printed."""
    if "epochs" in report and report["epochs"]:
        report = report["epochs"][0]
    rows = report.get("row_sums") or {}
    summary = report.get("summary") or {}
    v = {"rows_wrong": len(rows.get("mismatched") or []),
         "duplicates": int(summary.get("duplicated_samples") or 0),
         "never_evaluated": int(summary.get("missing_samples") or 0),
         "patterns": sorted({d.get("pattern") for d in report.get("diagnosis") or []
                             if d.get("pattern")}),
         "correct": bool(report.get("correct")), "classes": report.get("classes"),
         "synced": report.get("synced"), "expected": report.get("expected") or
         report.get("expected_distinct"), "run": run}
    if v["correct"] and not v["patterns"]:
        v["line"] = "ShardLens: the reported matrix is exact (%s classes); see %s" % (
            v["classes"], run)
    else:
        v["line"] = "ShardLens: %d of %s rows != class counts, %d duplicated, %d never " \
            "evaluated: %s; see %s" % (v["rows_wrong"], v["classes"], v["duplicates"],
                                       v["never_evaluated"],
                                       ", ".join(v["patterns"]) or "no pattern named", run)
    return v


def _judge(cli, files, run, say=None):
    """Imports one evaluation's dumps (every rank's) into RUN, diagnoses it, prints the line
    (through say, e.g. a progress bar's print, so it gets a line of its own)."""
    _run_json(cli, "import", *files, "--out", run)
    v = _verdict_of(_run_json(cli, "diagnose", "--run", run), run)
    (say or (lambda line: print(line, flush=True)))(v["line"])
    return v


def _heatmap(synced, expected, cell=16):
    """An RGB uint8 image (H, W, 3) of synced - expected: red where the synced matrix counts
    more, blue where fewer, white where equal (numpy only)."""
    import numpy as np
    s = np.asarray(synced, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64) if expected is not None else np.zeros_like(s)
    d = s - e
    scale = max(float(np.abs(d).max()), 1.0)
    t = d / scale
    rgb = np.ones(d.shape + (3,))
    rgb[..., 1] -= np.abs(t)
    rgb[..., 2] -= np.clip(t, 0, 1)
    rgb[..., 0] -= np.clip(-t, 0, 1)
    cell = max(1, min(cell, 1024 // max(1, d.shape[0])))
    return (np.kron(rgb, np.ones((cell, cell, 1))) * 255).astype(np.uint8)
