"""The verdict: rank 0 imports every rank's dump with shardlens-cli, diagnoses it, and
turns the report into the line, scalars and heatmap users see."""
import json
import os

from ._labels import dataset_labels, labels_file  # noqa: F401  (moved there)


def find_cli(cli):
    """The shardlens-cli to run: cli=, else $SHARDLENS_CLI, else the one on PATH, or None."""
    import shutil
    for candidate in (cli, os.environ.get("SHARDLENS_CLI"), shutil.which("shardlens-cli")):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def wait_for(paths, timeout):
    """Without torch.distributed, rank 0 polls until every rank's dump exists (atomic
    renames: a path that exists is complete)."""
    import time
    deadline = time.time() + timeout
    while time.time() < deadline:
        if all(os.path.exists(p) for p in paths):
            return []
        time.sleep(0.05)
    return [p for p in paths if not os.path.exists(p)]


def run_json(cli, *args, fmt="json"):
    """shardlens-cli ARGS --format FMT, its output parsed as JSON where FMT prints JSON
    (exit 1 is diagnose's wrong matrix)."""
    import subprocess
    proc = subprocess.run([cli, *args, "--format", fmt], capture_output=True, text=True)
    if proc.returncode not in (0, 1):  # diagnose exits 1 on a wrong matrix
        raise RuntimeError("%s %s exited %d: %s" % (os.path.basename(cli), args[0],
                                                    proc.returncode, proc.stderr.strip()[-500:]))
    return json.loads(proc.stdout) if fmt != "text" and proc.stdout.strip() else {}


def summary_of_report(report):
    """The full JSON report of one evaluation (`diagnose --format json`) as the summary
    `import --format verdict` prints (core/report/verdict_summary.h), for a shardlens-cli
    that has no --format verdict."""
    import numpy as np
    rows = report.get("row_sums") or {}
    summary = report.get("summary") or {}
    synced = report.get("synced")
    expected = report.get("expected") or report.get("expected_distinct")
    out = {"classes": report.get("classes"), "correct": bool(report.get("correct")),
           "duplicated_samples": int(summary.get("duplicated_samples") or 0),
           "missing_samples": int(summary.get("missing_samples") or 0),
           "mismatched_rows": rows.get("mismatched") or [],
           "patterns": [d.get("pattern") for d in report.get("diagnosis") or []],
           "row_difference": None, "difference": None}
    if report.get("dataset"):
        out["dataset"] = report["dataset"]
    observed, counts = rows.get("observed"), rows.get("expected")
    if observed and counts:
        out["row_difference"] = [[r, o - c] for r, (o, c) in enumerate(zip(observed, counts))
                                 if o != c]
    if synced is not None:
        s = np.asarray(synced, dtype=np.float64)
        d = s - (np.asarray(expected, dtype=np.float64) if expected is not None else 0)
        out["difference"] = [[int(r), int(c), float(d[r, c])] for r, c in zip(*np.nonzero(d))]
    return out


def verdict_of(summary, run):
    """rows_wrong, duplicates, never_evaluated, patterns and the one line printed, from the
    summary `import --format verdict` prints (or a full report, summary_of_report).
    rows_wrong is None when the rows were not checked against the true class counts: the
    import had no dataset (no "dataset" in the summary, the class counts are those of the
    distinct samples evaluated) and some samples were never evaluated, so those counts are
    not the dataset's. difference: the synced matrix's cells minus the expected ones that
    differ, [[row, column, value], ...] (None without a synced matrix), for heatmap_of."""
    if "epochs" in summary and summary["epochs"]:
        summary = summary["epochs"][0]
    if "row_sums" in summary:  # a full report
        summary = summary_of_report(summary)
    never = int(summary.get("missing_samples") or 0)
    checked = bool(summary.get("dataset")) or never == 0
    classes = summary.get("classes")
    v = {"rows_wrong": len(summary.get("mismatched_rows") or []) if checked else None,
         "labels_known": bool(summary.get("dataset")),
         "duplicates": int(summary.get("duplicated_samples") or 0),
         "never_evaluated": never,
         "patterns": sorted({p for p in summary.get("patterns") or [] if p}),
         "correct": bool(summary.get("correct")), "classes": classes,
         "difference": summary.get("difference"), "run": run}
    # Each row's sum minus its true class count, where the rows were checked against them.
    rows = summary.get("row_difference")
    v["row_difference"] = None
    if checked and rows is not None and classes:
        v["row_difference"] = [0] * int(classes)
        for r, d in rows:
            v["row_difference"][int(r)] = d
    if v["correct"] and not v["patterns"]:
        v["line"] = "ShardLens: the reported matrix is exact (%s classes); see %s" % (
            v["classes"], run)
    elif v["rows_wrong"] is None:
        # A dense task's true pixel / token counts need every image's mask, not a label each.
        unit = {"segmentation": "pixel", "tokens": "token", "multilabel": "label"}.get(
            summary.get("task"))
        hint = ("the %s counts of the samples never evaluated are unknown: an evaluation "
                "of every sample once counts them" % unit) if unit else \
            "dataset labels unknown: pass labels=..."
        v["line"] = "ShardLens: rows not checked against the true class counts (%s); %d " \
            "duplicated, %d never evaluated: %s; see %s" % (
                hint, v["duplicates"], v["never_evaluated"],
                ", ".join(v["patterns"]) or "no pattern named", run)
    else:
        v["line"] = "ShardLens: %d of %s rows != class counts, %d duplicated, %d never " \
            "evaluated: %s; see %s" % (v["rows_wrong"], v["classes"], v["duplicates"],
                                       v["never_evaluated"],
                                       ", ".join(v["patterns"]) or "no pattern named", run)
    return v


def scalars(v):
    """The verdict's numbers for a logger. rows_wrong is None when the rows were not checked
    (dataset labels unknown): it is then not logged at all, so no point (a 0 or a NaN a chart
    may draw or drop) reads as a count of rows; the line printed says why."""
    return {"shardlens/" + k: float(v[k]) for k in ("rows_wrong", "duplicates", "never_evaluated")
            if v[k] is not None}


def judge(cli, files, run, say=None, labels=None):
    """Imports one evaluation's dumps (every rank's) into RUN (labels: an int64 .npy of the
    dataset's labels, the true class counts) and diagnoses it in one call that prints the
    verdict alone (`import --format verdict`: no matrix, a few hundred bytes where the full
    report was 49 MB at 1000 classes), then prints the line (through say, e.g. a progress
    bar's print, so it gets a line of its own)."""
    dataset = ["--dataset", "npy:" + labels] if labels else []
    try:
        summary = run_json(cli, "import", *files, "--out", run, *dataset, fmt="verdict")
    except RuntimeError as e:
        if "--format" not in str(e) or "verdict" not in str(e):
            raise
        # A shardlens-cli before --format verdict: the import, then the full report.
        run_json(cli, "import", *files, "--out", run, *dataset, fmt="text")
        summary = run_json(cli, "diagnose", "--run", run)
    v = verdict_of(summary, run)
    (say or (lambda line: print(line, flush=True)))(v["line"])
    return v


def heatmap_of(v, cell=16):
    """The heatmap of a verdict (verdict_of): its synced - expected cells and row
    differences, drawn as heatmap() draws them; None without a synced matrix."""
    import numpy as np
    if v.get("difference") is None or not v.get("classes"):
        return None
    c = int(v["classes"])
    cells = np.asarray(v["difference"] or np.zeros((0, 3)), dtype=np.float64).reshape(-1, 3)
    rows, cols = cells[:, 0].astype(np.int64), cells[:, 1].astype(np.int64)
    if max(1, min(cell, 1024 // max(1, c))) > 1:
        d = np.zeros((c, c))
        d[rows, cols] = cells[:, 2]
        return difference_image(d, v.get("row_difference"), cell)
    # One pixel a cell and no grid (more than 512 classes): white, and the differing cells
    # coloured as difference_image colours them, without 3 x C x C floats (40 ms at 1000).
    image = np.full((c, c, 3), 255, np.uint8)
    image[rows, cols] = (_colours(cells[:, 2]) * 255).astype(np.uint8)
    row_difference = v.get("row_difference")
    if row_difference is None:
        return image
    return np.concatenate([image, (_row_column(row_difference, c, 1) * 255).astype(np.uint8)],
                          axis=1)


def heatmap(synced, expected, row_difference=None, cell=16):
    """An RGB uint8 image (H, W, 3) of synced - expected (difference_image)."""
    import numpy as np
    s = np.asarray(synced, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64) if expected is not None else np.zeros_like(s)
    return difference_image(s - e, row_difference, cell)


def difference_image(difference, row_difference=None, cell=16):
    """An RGB uint8 image (H, W, 3) of a synced - expected matrix: red where the synced matrix
    counts more, blue where fewer, white where equal (numpy only). With row_difference (each
    row's sum minus the true class count), a last column, after a grey gap, shows it on its
    own scale: a batch limit or padding changes the rows even where every evaluated cell
    equals what one process gives for the same samples (the expected matrix of the distinct
    samples, when the predictions of the samples never evaluated are unknown)."""
    import numpy as np
    d = np.asarray(difference, dtype=np.float64)
    cell = max(1, min(cell, 1024 // max(1, d.shape[0])))
    image = _cells(_colours(d), cell)
    if row_difference is not None:
        image = np.concatenate([image, _row_column(row_difference, image.shape[0], cell)],
                               axis=1)
    return (image * 255).astype(np.uint8)


def _colours(d):
    """RGB in [0, 1] of each value: white at 0, red above, blue below, on the scale of the
    largest |value| (at least 1)."""
    import numpy as np
    t = d / max(float(np.abs(d).max(initial=0.0)), 1.0)
    rgb = np.ones(d.shape + (3,))
    rgb[..., 1] -= np.abs(t)
    rgb[..., 2] -= np.clip(t, 0, 1)
    rgb[..., 0] -= np.clip(-t, 0, 1)
    return rgb


def _cells(rgb, cell, width=None):
    """Each value a cell; at 4 px or more, a light grey line at each cell's top and left and
    around the block, so a matrix without a difference reads as white cells."""
    import numpy as np
    width = cell if width is None else width
    block = np.kron(rgb, np.ones((cell, width, 1)))
    if cell >= 4:
        block = np.pad(block, ((0, 1), (0, 1), (0, 0)), constant_values=1.0)
        block[::cell, :] = block[:, ::width] = 0.85
    return block


def _row_column(row_difference, height, cell):
    """A grey gap, then each row's difference on its own scale: at 1000 classes a cell is one
    pixel, and the column stays 8 pixels wide to be seen."""
    import numpy as np
    rows = _colours(np.asarray(row_difference, dtype=np.float64).reshape(-1, 1))
    gap = np.full((height, max(2, cell // 2), 3), 0.6)
    return np.concatenate([gap, _cells(rows, cell, max(cell, 8))], axis=1)
