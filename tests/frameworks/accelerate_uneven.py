"""Accelerate's even_batches=False in 4 real processes against `shardlens-cli`.

Usage: accelerate_uneven.py SHARDLENS_CLI. Runs in the framework venv (frameworks.py).

Four processes (gloo, CPU) prepare a DataLoader with `even_batches=False` for each batch
layout below and iterate it. For each layout, what Accelerate did is compared with ShardLens's
model (`shardlens-cli shards` and `simulate`):
- every rank's step count and last batch length (the batches its prepared loader yielded);
- whether an unpadded per-step gather runs: the ranks' step counts differ (it would hang:
  not run, `uneven-steps`), or the same steps end on last batches of different lengths (run,
  it fails: `unequal-last-batches`), or every step is even (run, it is exact);
- with `accelerator.pad_across_processes` before `gather_for_metrics`, the matrix of what
  Accelerate returned equals `simulate --pad-across-processes`;
- `shardlens_recorder.watch` around that padded gather writes dumps whose import with the
  true labels counts every sample once (the padded rows flagged PAD_ROW, none counted), its
  own verdict says exact, and `simulate --like` of the run, given no other flag, equals it.
The unpadded gather of unequal last batches runs last, as in the run where it was found:
its outcome on each rank (an error, or no answer in 20 s) is read by the parent.
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

W = 4
CLASSES = 5


def label_of(i):
    return (i * 7 + i // 11) % CLASSES


def prediction_of(i):
    return label_of(i) if i % 3 else (label_of(i) + 1) % CLASSES


def case(name, n, b, split=False):
    return dict(name=name, n=n, b=b, split=split)


CASES = [
    case("even", 1024, 32),                        # 32 batches: 8 full steps everywhere
    case("short-last", 1000, 32),                  # 8 steps each, rank 3's last holds 8
    case("different-steps", 1000, 40),             # 25 batches: 7, 6, 6, 6 steps
    case("split-even", 1024, 32, split=True),      # slices of 8, every step full
    case("split-short-last", 1020, 32, split=True),  # last batch 28: slices 8, 8, 8, 4
    case("split-different-steps", 1000, 32, split=True),  # last batch 8: rank 0 alone
]
# The unpadded gather that fails, run after every other gather (a failed collective leaves
# the group unusable).
FAILING = "short-last"


def worker(out_dir, cli):
    import torch
    import torch.distributed as dist
    from accelerate import Accelerator
    from accelerate.utils import DataLoaderConfiguration
    from torch.utils.data import DataLoader, Dataset

    sys.path.insert(0, frameworks.RECORDER_DIR)
    import shardlens_recorder

    class Items(Dataset):
        def __init__(self, n):
            self.n = n

        def __len__(self):
            return self.n

        def __getitem__(self, i):
            return torch.tensor(i), torch.tensor(label_of(i)), torch.tensor(prediction_of(i))

    torch.set_num_threads(1)
    rank = int(os.environ["RANK"])
    results = {}
    failing = None
    for c in CASES:
        acc = Accelerator(cpu=True, dataloader_config=DataLoaderConfiguration(
            split_batches=c["split"], even_batches=False))
        loader = acc.prepare(DataLoader(Items(c["n"]), batch_size=c["b"]))
        lengths = [len(index) for index, _, _ in loader]  # no gather: any layout runs
        layout = [None] * W
        dist.all_gather_object(layout, lengths)
        steps = {len(r) for r in layout}
        out = dict(lengths=lengths, plain=None, padded=None, pad_rows=0)
        if len(steps) == 1 and len({r[-1] for r in layout}) == 1:
            plain = []
            for index, _, _ in loader:
                plain += acc.gather_for_metrics(index).tolist()
            out["plain"] = plain
        if len(steps) == 1:
            runs = os.path.join(out_dir, c["name"])
            watched = c["name"] == FAILING  # the verdict printed as a user sees it
            labels = np.array([label_of(i) for i in range(c["n"])], dtype=np.int64)
            acc.gather_for_metrics = shardlens_recorder.watch(
                acc, runs, cli=cli, verdict=watched, labels=labels if watched else None,
                num_classes=CLASSES)
            padded = []
            for index, y, p in loader:
                sent = [acc.pad_across_processes(t, dim=0) for t in (index, p, y)]
                out["pad_rows"] += len(sent[0]) - len(index)
                index_g, p_g, y_g = acc.gather_for_metrics(tuple(sent))
                padded += [[int(i), int(t), int(q)]
                           for i, t, q in zip(index_g.tolist(), y_g.tolist(), p_g.tolist())]
            out["padded"] = padded
            out["verdicts"] = [dict(correct=v.get("correct"), line=v.get("line"))
                               for v in acc.gather_for_metrics.verdicts]
            if c["name"] == FAILING:
                failing = (acc, loader)
        results[c["name"]] = out
        acc.wait_for_everyone()
    with open(os.path.join(out_dir, "rank%d.json" % rank), "w") as f:
        json.dump(results, f)
    acc.wait_for_everyone()
    # The unpadded gather of unequal last batches, as a user first writes it.
    acc, loader = failing
    acc.gather_for_metrics = acc.gather_for_metrics.original
    outcome = "returned"
    try:
        for index, _, _ in loader:
            acc.gather_for_metrics(index)
    except Exception as e:  # noqa: BLE001 - the failure is what is measured
        outcome = "error: %s" % str(e).splitlines()[0][:200]
    with open(os.path.join(out_dir, "failing%d.txt" % rank), "w") as f:
        f.write(outcome)
    os._exit(0)  # the group is broken: no collective (and no teardown) after it


def launch(out_dir, cli):
    procs = frameworks.rank_processes(__file__, W, [out_dir, cli])
    results = [os.path.join(out_dir, "rank%d.json" % r) for r in range(W)]
    deadline = time.time() + 180
    while not all(os.path.exists(p) for p in results):
        if time.time() > deadline or any(p.poll() not in (None, 0) for p in procs):
            for p in procs:
                p.kill()
            logs = [p.communicate()[0][-1500:] for p in procs]
            raise AssertionError("the Accelerate processes did not finish their cases: %s"
                                 % logs)
        time.sleep(0.2)
    # The failing gather: each rank raises, or is left waiting (killed after 20 s).
    hung, logs = [], []
    until = time.time() + 20
    for r, p in enumerate(procs):
        try:
            p.wait(timeout=max(0.1, until - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
            hung.append(r)
        log = p.communicate()[0]
        logs.append(log)
        if "ShardLens" in log:
            print("rank %d: %s" % (r, "\n".join(line for line in log.splitlines()
                                                if "ShardLens" in line)[-600:]))
    outcome = []
    for r in range(W):
        path = os.path.join(out_dir, "failing%d.txt" % r)
        said = [line.strip()[:160] for line in logs[r].splitlines() if "preamble" in line]
        outcome.append(open(path).read() if os.path.exists(path) else
                       "no answer (killed)" if r in hung else
                       "died (exit %d)%s" % (procs[r].returncode,
                                             ": " + said[0] if said else ""))
    return [json.load(open(p)) for p in results], outcome


def matrix(triples):
    m = np.zeros((CLASSES, CLASSES), dtype=np.int64)
    for _, t, p in triples:
        m[t, p] += 1
    return m.tolist()


def index_matrix(indices):
    return matrix([(i, label_of(i), prediction_of(i)) for i in indices])


def simulate_flags(c, d):
    args = ["--dataset", "npy:%s/labels%d.npy" % (d, c["n"]), "--predictor",
            "npy:%s/preds%d.npy" % (d, c["n"]), "--sampler", "accelerate", "--world-size",
            str(W), "--batch-size", str(c["b"]), "--no-even-batches"]
    return args + (["--split-batches"] if c["split"] else [])


def check_case(cli, d, c, ranks, failures):
    """Compares what Accelerate did for one layout with ShardLens's model; returns checks."""
    name, n = c["name"], c["n"]
    data = simulate_flags(c, d)
    lengths = [ranks[r][name]["lengths"] for r in range(W)]
    shards = frameworks.cli_json(cli, "shards", *data)
    b = shards["batch_size"]
    for r in range(W):
        got = shards["ranks"][r]
        steps, size = got["batches"], len(got["evaluated"])
        last = size - (steps - 1) * b if steps else 0
        want = lengths[r]
        if (steps, last, size) != (len(want), want[-1] if want else 0, sum(want)):
            failures.append("%s rank %d: Accelerate %d steps, last %s, %d samples; ShardLens "
                            "%d, %d, %d" % (name, r, len(want), want[-1] if want else None,
                                            sum(want), steps, last, size))
    different_steps = len({len(x) for x in lengths}) > 1
    unequal_last = not different_steps and len({x[-1] for x in lengths}) > 1
    plain = frameworks.cli_json(cli, "simulate", *data, "--sync", "gather-for-metrics")
    pats = [f.get("pattern") for f in plain["diagnosis"]]
    padded = frameworks.cli_json(cli, "simulate", *data, "--sync", "gather-for-metrics",
                                 "--pad-across-processes")
    real_plain = ranks[0][name]["plain"]
    real_padded = ranks[0][name]["padded"]
    if different_steps:
        for label, sim in (("unpadded", plain), ("padded", padded)):
            sim_pats = [f.get("pattern") for f in sim["diagnosis"]]
            if sim.get("synced") is not None or sim_pats != ["uneven-steps"]:
                failures.append("%s %s: different step counts %s, ShardLens %s" % (
                    name, label, [len(x) for x in lengths], sim_pats))
        return 3
    if unequal_last:
        if plain.get("synced") is not None or pats != ["unequal-last-batches"]:
            failures.append("%s: last batches %s, ShardLens %s (synced %s)" % (
                name, [x[-1] for x in lengths], pats, plain.get("synced") is not None))
        text = subprocess.run([cli, "simulate", *data, "--sync", "gather-for-metrics"],
                              capture_output=True, text=True).stdout
        if "different step counts" in text or "hang" in text:
            failures.append("%s: the text still speaks of a hang: %s" % (name, text[:600]))
    else:
        if real_plain is None or plain.get("synced") != index_matrix(real_plain):
            failures.append("%s: unpadded gather_for_metrics differs (%s)" % (name, pats))
    if any(ranks[r][name]["padded"] != real_padded for r in range(W)):
        failures.append("%s: the ranks gathered differently" % name)
    if padded.get("synced") != matrix(real_padded) or len(real_padded) != n:
        failures.append("%s: padded gather_for_metrics kept %d rows, ShardLens %s" % (
            name, len(real_padded), None if padded.get("synced") is None else
            int(np.array(padded["synced"]).sum())))
    return 4 + check_dumps(cli, d, c, ranks, failures)


def check_dumps(cli, d, c, ranks, failures):
    """The watch's dumps: the padded rows flagged, none imported; the import exact."""
    name, n = c["name"], c["n"]
    runs = os.path.join(d, name)
    dumps = sorted(os.path.join(runs, f) for f in os.listdir(runs) if f.endswith(".npz"))
    if len(dumps) != W:
        failures.append("%s: %d dumps" % (name, len(dumps)))
        return 1
    pad_bit = 4
    flagged = sum(int((np.load(p)["flags"] & pad_bit != 0).sum()) for p in dumps)
    pad_rows = sum(ranks[r][name]["pad_rows"] for r in range(W))
    settings = [json.loads(bytes(np.load(p)["settings_json"]).decode()) for p in dumps]
    if flagged != pad_rows:
        failures.append("%s: %d rows pad_across_processes added, %d flagged PAD_ROW" % (
            name, pad_rows, flagged))
    if any(s.get("pad_across_processes") != (pad_rows > 0) for s in settings):
        failures.append("%s: pad_across_processes recorded %s" % (
            name, [s.get("pad_across_processes") for s in settings]))
    run = os.path.join(d, name + ".slrun")
    proc = subprocess.run([cli, "import", *dumps, "--dataset", "npy:%s/labels%d.npy" % (d, n),
                           "--out", run], capture_output=True, text=True)
    if proc.returncode != 0:
        failures.append("%s: import exited %d: %s" % (name, proc.returncode, proc.stderr[-600:]))
        return 2
    if pad_rows and "%d rows pad_across_processes added" % pad_rows not in proc.stderr:
        failures.append("%s: import did not say the padded rows: %s" % (name, proc.stderr[-400:]))
    diag = frameworks.cli_json(cli, "diagnose", "--run", run)
    s = diag["summary"]
    if not diag["correct"] or s["evaluated_records"] != n or s["reported_total"] != n:
        failures.append("%s: imported run not exact: %s, %s" % (
            name, s, [f.get("pattern") for f in diag["diagnosis"]]))
    # The run as recorded, simulated with no other flag: the padding comes from the dumps.
    like = subprocess.run([cli, "simulate", "--like", run], capture_output=True, text=True)
    if like.returncode != 0 or "EQUALS" not in like.stdout or \
            ("--pad-across-processes" in like.stdout) != (pad_rows > 0):
        failures.append("%s: simulate --like exited %d: %s" % (
            name, like.returncode, (like.stdout + like.stderr)[-600:]))
    if c["name"] == FAILING:
        verdicts = ranks[0][name].get("verdicts") or []
        if not verdicts or not verdicts[-1]["correct"] or "exact" not in verdicts[-1]["line"]:
            failures.append("%s: the watch's verdict: %s" % (name, verdicts))
    return 5


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3])
        return 0
    cli = os.path.abspath(sys.argv[1])
    start = time.time()
    failures = []
    checks = 0
    with tempfile.TemporaryDirectory() as d:
        for c in CASES:
            n = c["n"]
            np.save(os.path.join(d, "labels%d.npy" % n),
                    np.array([label_of(i) for i in range(n)], dtype=np.int64))
            np.save(os.path.join(d, "preds%d.npy" % n),
                    np.array([prediction_of(i) for i in range(n)], dtype=np.int64))
        ranks, outcome = launch(d, cli)
        for c in CASES:
            lengths = [ranks[r][c["name"]]["lengths"] for r in range(W)]
            print("%s (n=%d, B=%d, split=%d): steps %s, last batches %s, padded rows %d" % (
                c["name"], c["n"], c["b"], c["split"], [len(x) for x in lengths],
                [x[-1] for x in lengths], sum(ranks[r][c["name"]]["pad_rows"]
                                              for r in range(W))))
            checks += check_case(cli, d, c, ranks, failures)
        print("unpadded gather_for_metrics of unequal last batches: %s" % outcome)
        checks += 1
        if all(o == "returned" for o in outcome):
            failures.append("the unpadded gather of unequal last batches: %s" % outcome)
    for f in failures:
        print("FAIL:", f)
    print("%d layouts, %d checks, %d failures, %.1f s" % (len(CASES), checks, len(failures),
                                                          time.time() - start))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
