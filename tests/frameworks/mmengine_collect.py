"""mmengine's DefaultSampler and collect_results in real processes against `shardlens-cli`.

Usage: mmengine_collect.py SHARDLENS_CLI. Runs in the framework venv (frameworks.py).

For W = 2, 3 and 4, W processes (gloo, CPU) run the cases below as mmengine's ValLoop does:
a DataLoader over a DefaultSampler, a metric's `process` appending results, then
`collect_results(results, len(dataset))` on rank 0. Each result names its dataset index and
holds what a metric keeps: a segmentation image's pixel histogram (target x prediction over
its pixels, 255 ignored, as mmseg's IoUMetric keeps areas per image; the images are ShardLens's
`seg:` dataset and noisy predictor, each image's histogram read from a run of one image a rank)
and a classification sample's (target, prediction). Compared with ShardLens:
- each rank's sampler order equals `shardlens-cli shards --sampler mmengine-default`;
- how many times collect_results kept each sample equals the diagonal of `simulate --sync
  collect-results` (or collect-batch-results) over a dataset whose sample i is class i;
- the classification matrix of what it kept equals `simulate`'s synced matrix;
- the pixel matrix of the kept histograms equals `simulate --dataset seg:...`'s synced one;
- ShardLens calls the run correct exactly when collect_results kept every sample once.
A metric that appends two results per sample is not modelled: the test shows the cut to
len(dataset) then leaves samples out.
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

try:
    import mmengine  # noqa: E402,F401
except ImportError as e:
    frameworks.skip("mmengine is not installed in the venv (requirements/frameworks.txt): %s" % e)

CLASSES = 5
SEG_CLASSES = 4
SEG = "seg:n=%d,classes=4,size=8x8"
SEG_PREDICTOR = "noisy:accuracy=0.7,seed=1"
WORLD_SIZES = (2, 3, 4)


def case(n, b, shuffle=False, round_up=True, limit=None, drop_last=False, unit="sample",
         device="cpu"):
    name = "n%d-b%d%s%s%s%s-%s%s" % (n, b, "-shuffle" if shuffle else "",
                                     "" if round_up else "-no-round-up",
                                     "-limit%d" % limit if limit else "",
                                     "-drop-last" if drop_last else "", unit,
                                     "-gpu" if device == "gpu" else "")
    return dict(name=name, n=n, b=b, shuffle=shuffle, round_up=round_up, limit=limit,
                drop_last=drop_last, unit=unit, device=device)


CASES = [
    case(37, 4),                              # padded: the cut drops the padding (right)
    case(37, 4, shuffle=True),                # randperm(seed + epoch), then padded
    case(37, 4, round_up=False),              # unpadded: nothing to cut (right)
    case(37, 4, shuffle=True, round_up=False),
    case(12, 3),                              # n a multiple of some W: no padding there
    case(5, 2),                               # fewer samples than 2 W: padding wraps round
    case(37, 4, limit=2),                     # a batch limit: samples never evaluated
    case(37, 4, drop_last=True),              # DataLoader drop_last: the tail never evaluated
    case(37, 4, unit="batch"),                # a result per batch: the padding is kept
    case(37, 4, shuffle=True, unit="batch"),
    case(37, 4, unit="twice"),                # two results per sample: not modelled
    case(37, 4, device="gpu"),                # all_gather_object instead of files
]
SEED = 7
EPOCH = 1


def label_of(i):
    return (i * 7 + i // 11) % CLASSES


def prediction_of(i):
    return label_of(i) if i % 3 else (label_of(i) + 1) % CLASSES


def seg_histograms(cli, n):
    """Every image's pixel histogram [target, prediction] of the seg: dataset and predictor,
    ignored pixels left out: rank i's matrix of a run with one image a rank."""
    run = frameworks.cli_json(cli, "simulate", "--dataset", SEG % n, "--predictor",
                              SEG_PREDICTOR, "--world-size", str(n), "--sampler", "sequential",
                              "--batch-size", "1")
    return np.array(run["per_rank"], dtype=np.int64)


def worker(out_dir):
    import torch
    import torch.distributed as dist
    from mmengine.dataset import DefaultSampler
    from mmengine.dist import collect_results
    from torch.utils.data import DataLoader

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    out = {}
    for c in CASES:
        hist = np.load(os.path.join(out_dir, "hist%d.npy" % c["n"]))  # [image, target, pred]
        dataset = list(range(c["n"]))
        sampler = DefaultSampler(dataset, shuffle=c["shuffle"], seed=SEED, round_up=c["round_up"])
        sampler.set_epoch(EPOCH)
        loader = DataLoader(dataset, batch_size=c["b"], sampler=sampler, drop_last=c["drop_last"],
                            collate_fn=list)
        order, results = [], []
        for k, batch in enumerate(loader):
            if c["limit"] is not None and k >= c["limit"]:
                break
            order += batch
            if c["unit"] == "sample":  # mmseg's IoUMetric, mmpretrain's Accuracy
                results += [dict(index=[i], hist=hist[i].tolist()) for i in batch]
            elif c["unit"] == "batch":  # one result for the whole batch
                results.append(dict(index=batch, hist=sum(hist[i] for i in batch).tolist()))
            else:  # a prediction and a ground-truth result for every sample
                for i in batch:
                    results += [dict(index=[i], hist=hist[i].tolist()),
                                dict(index=[], hist=np.zeros((SEG_CLASSES,) * 2).tolist())]
        kept = collect_results(results, c["n"], device=c["device"])
        out[c["name"]] = dict(order=order, kept=kept)
    with open(os.path.join(out_dir, "rank%d.json" % rank), "w") as f:
        json.dump(out, f)
    dist.barrier()
    dist.destroy_process_group()


def launch(out_dir, w):
    port = str(frameworks.free_port())
    procs = []
    for r in range(w):
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=port, RANK=str(r),
                   WORLD_SIZE=str(w), LOCAL_RANK=str(r), OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker",
                                       out_dir], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, cwd=out_dir))
    logs = [p.communicate(timeout=180)[0] for p in procs]
    if any(p.returncode != 0 for p in procs):
        raise AssertionError("the mmengine processes failed: %s" % [x[-1500:] for x in logs])
    return [json.load(open(os.path.join(out_dir, "rank%d.json" % r))) for r in range(w)]


def flags(c, d, w, labels, preds):
    args = ["--dataset", "npy:%s/%s.npy" % (d, labels), "--predictor", "npy:%s/%s.npy" % (d, preds),
            "--world-size", str(w), "--batch-size", str(c["b"]), "--sampler", "mmengine-default",
            "--seed", str(SEED), "--epoch", str(EPOCH)]
    args += ["--shuffle"] if c["shuffle"] else []
    args += [] if c["round_up"] else ["--no-round-up"]
    args += ["--limit-batches", str(c["limit"])] if c["limit"] else []
    args += ["--loader-drop-last"] if c["drop_last"] else []
    return args + ["--sync", "collect-batch-results" if c["unit"] == "batch" else
                   "collect-results"]


def check_case(cli, d, w, c, ranks, failures):
    """Compares one case's real run with ShardLens; returns the number of checks."""
    name, n = "W=%d %s" % (w, c["name"]), c["n"]
    run = [ranks[r][c["name"]] for r in range(w)]
    kept = run[0]["kept"]
    shards = frameworks.cli_json(cli, "shards", *flags(c, d, w, "identity%d" % n,
                                                       "identity%d" % n)[:-2])
    for r in range(w):
        sim = shards["ranks"][r]["evaluated"]
        if sim != run[r]["order"]:
            failures.append("%s rank %d: DefaultSampler yielded %s, ShardLens %s" % (
                name, r, run[r]["order"], sim))
    times = np.zeros(n, dtype=np.int64)
    for result in kept:
        for i in result["index"]:
            times[i] += 1
    pixels = sum((np.array(x["hist"], dtype=np.int64) for x in kept),
                 np.zeros((SEG_CLASSES,) * 2, dtype=np.int64))
    print("%s: %d results kept, %d samples once, %d more than once, %d never" % (
        name, len(kept), (times == 1).sum(), (times > 1).sum(), (times == 0).sum()))
    if c["unit"] == "twice":
        # collect_results cut 2 x n results to n: half the samples' results are gone.
        if (times > 0).sum() >= n:
            failures.append("%s: two results per sample kept every sample (%s)" % (
                name, times.tolist()))
        return w + 1
    identity = frameworks.cli_json(cli, "simulate", *flags(c, d, w, "identity%d" % n,
                                                           "identity%d" % n))
    sim_times = np.diag(np.array(identity["synced"], dtype=np.int64))
    if sim_times.tolist() != times.tolist():
        failures.append("%s: collect_results kept samples %s times, ShardLens %s" % (
            name, times.tolist(), sim_times.tolist()))
    labels = [i for result in kept for i in result["index"]]
    real = np.zeros((CLASSES, CLASSES), dtype=np.int64)
    for i in labels:
        real[label_of(i), prediction_of(i)] += 1
    classified = frameworks.cli_json(cli, "simulate", *flags(c, d, w, "labels%d" % n,
                                                             "preds%d" % n))
    if classified["synced"] != real.tolist():
        failures.append("%s: classification matrix %s, ShardLens %s" % (
            name, real.tolist(), classified["synced"]))
    seg = frameworks.cli_json(cli, "simulate", *flags(c, d, w, "identity%d" % n,
                                                      "identity%d" % n)[4:],
                              "--dataset", SEG % n, "--predictor", SEG_PREDICTOR)
    if seg["synced"] != pixels.tolist():
        failures.append("%s: pixel matrix %s, ShardLens %s" % (name, pixels.tolist(),
                                                               seg["synced"]))
    right = bool((times == 1).all())
    if classified["correct"] != right:
        failures.append("%s: collect_results kept every sample once: %s, ShardLens says "
                        "correct: %s (%s)" % (name, right, classified["correct"],
                                              [f.get("pattern") for f in
                                               classified["diagnosis"]]))
    return w + 4


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        worker(sys.argv[2])
        return 0
    cli = os.path.abspath(sys.argv[1])
    start = time.time()
    failures, checks, cases = [], 0, 0
    with tempfile.TemporaryDirectory() as d:
        for n in sorted({c["n"] for c in CASES}):
            np.save(os.path.join(d, "identity%d.npy" % n), np.arange(n, dtype=np.int64))
            np.save(os.path.join(d, "labels%d.npy" % n),
                    np.array([label_of(i) for i in range(n)], dtype=np.int64))
            np.save(os.path.join(d, "preds%d.npy" % n),
                    np.array([prediction_of(i) for i in range(n)], dtype=np.int64))
            np.save(os.path.join(d, "hist%d.npy" % n), seg_histograms(cli, n))
        for w in WORLD_SIZES:
            ranks = launch(d, w)
            for c in CASES:
                checks += check_case(cli, d, w, c, ranks, failures)
                cases += 1
    for f in failures:
        print("FAIL:", f)
    print("mmengine %s: %d cases on W = %s, %d checks, %d failures, %.1f s" % (
        mmengine.__version__, cases, list(WORLD_SIZES), checks, len(failures),
        time.time() - start))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
