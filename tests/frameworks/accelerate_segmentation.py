"""Segmentation under real Accelerate gathers, recorded by shardlens_recorder.watch, against
`shardlens-cli`.

Usage: accelerate_segmentation.py SHARDLENS_CLI. Runs in the framework venv (frameworks.py).

Three processes (gloo, CPU) prepare a loader of 41 masks of 4 x 5 pixels (4 classes, some
pixels 255, torchmetrics' ignore_index) in batches of 4, and gather the model's scores
[B, C, H, W] with the masks [B, H, W]:
- gather_for_metrics: Accelerate cuts the last round's even_batches copies;
- gather: the copies reach the metric, every pixel of each copied image counted again.
For each case: every rank's records are the images it evaluated, each with its own (true,
predicted, pixels) cells; the reported matrix is what the real gather returned; `shardlens-cli
import` gives each rank's pixel matrix, the synced one equal to the real gather's and the
expected one equal to one process counting every image once; `simulate --like RUN` with no
other flag equals the run.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import frameworks  # noqa: E402

frameworks.require_venv()

import numpy as np  # noqa: E402

W, B, C, N = 3, 4, 4, 41
H, WIDTH = 4, 5
IGNORE = 255
CASES = ("gather_for_metrics", "gather")


def mask(i):
    return [[IGNORE if (i + r + 2 * c) % 7 == 0 else (i * 3 + r * 5 + c * 7 + (i * r * c) % 5) % C
             for c in range(WIDTH)] for r in range(H)]


def predicted(i):
    """The model's predicted class of each pixel: right two times in three."""
    return [[(v + (1 if (i + r + c) % 3 == 0 else 0)) % C if v != IGNORE else (i + r) % C
             for c, v in enumerate(row)] for r, row in enumerate(mask(i))]


def pixel_matrix(pairs):
    m = np.zeros((C, C), np.int64)
    for y, p in pairs:
        y, p = np.asarray(y).reshape(-1), np.asarray(p).reshape(-1)
        keep = y != IGNORE
        np.add.at(m, (y[keep], p[keep]), 1)
    return m


def worker(out_dir, cli):
    import torch
    from accelerate import Accelerator
    from torch.utils.data import DataLoader, Dataset

    sys.path.insert(0, frameworks.RECORDER_DIR)
    import shardlens_recorder

    class Masks(Dataset):
        def __len__(self):
            return N

        def __getitem__(self, i):
            ids = torch.tensor(predicted(i))
            scores = torch.nn.functional.one_hot(ids, C).permute(2, 0, 1).float()
            return {"mask": torch.tensor(mask(i)), "scores": scores}

    torch.set_num_threads(1)
    rank = int(os.environ["RANK"])
    results = {}
    for method in CASES:
        acc = Accelerator(cpu=True)
        loader = acc.prepare(DataLoader(Masks(), batch_size=B))
        original = getattr(acc, method)
        setattr(acc, method, shardlens_recorder.watch(
            acc, os.path.join(out_dir, method), cli=cli, verdict=rank == 0, gather=method,
            ignore_index=IGNORE))
        gather = getattr(acc, method)
        own, gathered = [], []
        for batch in loader:
            y, p = batch["mask"], batch["scores"]
            own += [[yy.tolist(), pp.argmax(0).tolist()] for yy, pp in zip(y, p)]
            p_g, y_g = gather((p, y))
            gathered += [[yy.tolist(), pp.argmax(0).tolist()] for yy, pp in zip(y_g, p_g)]
        verdicts = [v.get("line") for v in gather.verdicts] if rank == 0 else []
        setattr(acc, method, original)
        results[method] = {"own": own, "gathered": gathered, "verdicts": verdicts}
        acc.wait_for_everyone()
    with open(os.path.join(out_dir, "rank%d.json" % rank), "w") as f:
        json.dump(results, f)
    acc.wait_for_everyone()
    torch.distributed.destroy_process_group()


def launch(out_dir, cli):
    procs = frameworks.rank_processes(__file__, W, [out_dir, cli])
    logs = [p.communicate(timeout=240)[0] for p in procs]
    if any(p.returncode for p in procs):
        raise AssertionError("the Accelerate processes failed: %s" % [g[-2000:] for g in logs])
    return [json.load(open(os.path.join(out_dir, "rank%d.json" % r))) for r in range(W)]


def cells_of_dump(path):
    """Each record's sorted (true, predicted, pixels) cells, and the dump."""
    d = np.load(path)
    ends = np.cumsum(d["cells_per_record"])
    out = []
    for k in range(len(d["index"])):
        at = slice(ends[k] - d["cells_per_record"][k], ends[k])
        out.append(sorted(zip(d["cell_target"][at].tolist(), d["cell_prediction"][at].tolist(),
                              d["cell_count"][at].tolist())))
    return out, d


def cells_of(y, p):
    m = pixel_matrix([(y, p)])
    return sorted((int(t), int(q), int(m[t, q])) for t, q in zip(*np.nonzero(m)))


def check_case(cli, d, method, ranks, failures):
    reference = pixel_matrix([(mask(i), predicted(i)) for i in range(N)])
    real = pixel_matrix(ranks[0][method]["gathered"])
    dumps = [os.path.join(d, method, "eval_epoch0_rank%d.npz" % r) for r in range(W)]
    per_rank = []
    for r, path in enumerate(dumps):
        cells, dump = cells_of_dump(path)
        own = ranks[r][method]["own"]
        if len(cells) != len(own) or any(c != cells_of(y, p) for c, (y, p) in zip(cells, own)):
            failures.append("%s rank %d: the dump's cells are not the images' pixels" % (
                method, r))
        if str(json.loads(bytes(dump["settings_json"]).decode()).get("task")) != "segmentation":
            failures.append("%s rank %d: the dump does not say segmentation" % (method, r))
        if dump["reported"].tolist() != real.tolist():
            failures.append("%s rank %d: reported %s, gathered %s" % (
                method, r, dump["reported"].tolist(), real.tolist()))
        per_rank.append(pixel_matrix(own).tolist())
    copies = len(ranks[0][method]["gathered"]) - N
    if (method == "gather_for_metrics") != (copies == 0) or \
            (copies == 0 and real.tolist() != reference.tolist()):
        failures.append("%s: gathered %d images for %d" % (method, N + copies, N))
    run = os.path.join(d, method + ".slrun")
    proc = subprocess.run([cli, "import", *dumps, "--out", run, "--format", "json"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        failures.append("%s: import exited %d: %s" % (method, proc.returncode, proc.stderr[-600:]))
        return 3
    report = json.loads(proc.stdout)
    for key, value in (("per_rank", per_rank), ("synced", real.tolist()),
                       ("expected", reference.tolist())):
        if report.get(key) != value:
            failures.append("%s: imported %s %s, real %s" % (method, key, report.get(key), value))
    like = subprocess.run([cli, "simulate", "--like", run], capture_output=True, text=True)
    if like.returncode != 0 or "the simulation EQUALS the run" not in like.stdout:
        failures.append("%s: simulate --like exited %d: %s" % (
            method, like.returncode, (like.stdout + like.stderr)[-800:]))
    print("%s: %d images gathered for %d, %d pixels counted for %d; rank 0 said: %s" % (
        method, N + copies, N, real.sum(), reference.sum(), ranks[0][method]["verdicts"]))
    return 7


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3])
        return 0
    cli = os.path.abspath(sys.argv[1])
    sys.path.insert(0, frameworks.RECORDER_DIR)
    start = time.time()
    failures, checks = [], 0
    with tempfile.TemporaryDirectory() as d:
        ranks = launch(d, cli)
        for method in CASES:
            checks += check_case(cli, d, method, ranks, failures)
    for f in failures:
        print("FAIL:", f)
    print("%d cases, %d checks, %d failures, %.1f s" % (
        len(CASES), checks, len(failures), time.time() - start))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
