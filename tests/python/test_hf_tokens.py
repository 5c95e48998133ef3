"""shardlens_recorder.watch(trainer) against real Hugging Face Trainer token-classification
evaluations: one sequence is one sample, its tokens labelled -100 left out.

Run by pytest (tests/python, with --cli SHARDLENS_CLI). Starts hf_tokens_worker.py as 3 CPU
processes (gloo; the variables torchrun sets): a tiny BertForTokenClassification from a
config, 41 sequences of 3 to 16 tokens in batches of 4 per device, padded by the collator with
-100 labels; the Trainer pads the logits and labels across processes with -100 before
gathering. Cases: a map-style dataset (evaluate and predict; then with eval_do_concat_batches
off and preprocess_logits_for_metrics reducing the logits to ids; with batch_eval_metrics), an
IterableDataset dispatched by rank 0 and one sharded on every rank (dispatch_batches=False,
whose cycled copies gather_for_metrics returns to compute_metrics: accelerate#3013). Per case, evaluation and
rank: each record's cells are the (label, prediction) tokens of the sequence the model
evaluated at that place on that rank (a forward hook), the reported matrix is the one of
what compute_metrics was given (and its token accuracy), the records that are not padding
copies cover the dataset once and give the matrix of a single process running each sequence
alone; `shardlens-cli import` gives each rank's token matrix, the synced one (the copies
counted again where compute_metrics counted them) and the expected one, and `simulate --like`
on the watch's run file, with no other flag, equals the run; diagnose's token accuracy is the
one compute_metrics returned, and its true one the single process's. Then the documented example
(integrations/python/examples/hf_token_classification_example.py) runs as 2 processes.
"""
import json
import os
import shutil
import subprocess
import tempfile
import time

import frameworks
import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("transformers")

from test_hf_trainer import launch  # noqa: E402  (the same 4 lines of torchrun's variables)

HERE = os.path.dirname(os.path.abspath(__file__))
W, N, B, C = 3, 41, 4, 5
IGNORE = -100
CASES = ("map", "map_steps", "map_batch_metrics", "stream_dispatched", "stream_sharded")


def token_matrix(sequences):
    """The token confusion matrix of [labels, predicted ids] pairs, -100 left out."""
    m = np.zeros((C, C), np.int64)
    for y, p in sequences:
        y, p = np.asarray(y), np.asarray(p)
        keep = y != IGNORE
        np.add.at(m, (y[keep], p[keep]), 1)
    return m


def cells_of(y, p):
    """A sequence's (label, prediction, count) cells, sorted."""
    m = token_matrix([(y, p)])
    return sorted((int(t), int(q), int(m[t, q])) for t, q in zip(*np.nonzero(m)))


def dump_records(path):
    """Each record of a dump: (index, flags, cells, sample_size, ignored)."""
    d = np.load(path)
    offsets = np.concatenate([[0], np.cumsum(d["cells_per_record"])])
    out = []
    for k, index in enumerate(d["index"].tolist()):
        at = slice(offsets[k], offsets[k + 1])
        cells = sorted(zip(d["cell_target"][at].tolist(), d["cell_prediction"][at].tolist(),
                           d["cell_count"][at].tolist()))
        out.append((index, int(d["flags"][k]), cells, int(d["sample_size"][k]),
                    int(d["ignored"][k])))
    return out, d


@pytest.fixture(scope="module")
def trainer_run(request):
    cli = request.config.getoption("--cli")
    if not cli or not os.path.exists(cli):
        pytest.skip("shardlens-cli not given (--cli)")
    cli = os.path.abspath(cli)
    out = tempfile.mkdtemp()
    start = time.time()
    logs = launch(os.path.join(HERE, "hf_tokens_worker.py"), [out], W, out, cli)
    print("%d Trainer processes, %d cases, ran in %.0f s" % (W, len(CASES), time.time() - start))
    yield out, logs, cli
    shutil.rmtree(out, ignore_errors=True)


def evaluations(case):
    return ("eval_epoch0", "eval_test_epoch0") if case == "map" else ("eval_epoch0",)


@pytest.mark.parametrize("case", CASES)
def test_token_records_equal_what_the_trainer_computed(trainer_run, case):
    out, logs, cli = trainer_run
    from shardlens_recorder import PADDING
    for e, stem in enumerate(evaluations(case)):
        oracles = [json.load(open(os.path.join(out, case, "oracle_rank%d.json" % r)))[e]
                   for r in range(W)]
        gathered = np.array(oracles[0]["gathered"])
        real, copies, per_rank, dumps = [], [], [], []
        for r in range(W):
            path = os.path.join(out, case, "runs", "%s_rank%d.npz" % (stem, r))
            dumps.append(path)
            records, d = dump_records(path)
            rows = oracles[r]["rows"]  # what the model evaluated on this rank, in order
            assert [rec[0] for rec in records] == [i for i, _, _ in rows], (case, stem, r)
            for rec, (i, y, p) in zip(records, rows):
                assert rec[2] == cells_of(y, p), (case, stem, r, i)
                assert (rec[3], rec[4]) == (len(y), y.count(IGNORE)), (case, stem, r, i)
            settings = json.loads(bytes(d["settings_json"]).decode())
            assert (settings["task"], settings["ignore_index"]) == ("tokens", IGNORE)
            # The reported matrix: every token compute_metrics (predict) was given.
            assert d["reported"].tolist() == oracles[r]["gathered"] == gathered.tolist()
            per_rank.append(token_matrix([(y, p) for _, y, p in rows]))
            for rec, (_, y, p) in zip(records, rows):
                (copies if rec[1] & PADDING else real).append((rec[0], y, p))
        assert sorted(i for i, _, _ in real) == list(range(N)), (case, stem)
        reference = np.array(oracles[0]["reference"]) if e == 0 else np.array(
            json.load(open(os.path.join(out, case, "oracle_rank0.json")))[0]["reference"])
        assert token_matrix([(y, p) for _, y, p in real]).tolist() == reference.tolist()
        accuracy = np.trace(gathered) / gathered.sum()
        assert abs(oracles[0]["accuracy"] - accuracy) < 1e-12, (oracles[0]["accuracy"], accuracy)
        if case == "stream_sharded":
            # gather_for_metrics returned the cycled copies: their tokens counted again.
            assert copies and oracles[0]["gathered_rows"] == N + len(copies)
            assert (gathered == reference + token_matrix([(y, p) for _, y, p in copies])).all()
        else:
            assert oracles[0]["gathered_rows"] == N and (gathered == reference).all()
            assert len(copies) == {"stream_dispatched": 1}.get(case, 4 * W * B - N), copies
        report = imported(cli, dumps, os.path.join(out, case, "runs", stem + "_check.slrun"))
        assert report["per_rank"] == [m.tolist() for m in per_rank], (case, stem)
        assert report["synced"] == gathered.tolist(), (case, stem, report["synced"])
        assert report["expected"] == reference.tolist(), (case, stem, report["expected"])
        like = subprocess.run([cli, "simulate", "--like", os.path.join(
            out, case, "runs", stem + ".slrun")], capture_output=True, text=True, timeout=120)
        assert like.returncode == 0 and "the simulation EQUALS the run" in like.stdout, \
            (case, stem, like.stdout + like.stderr)
        # diagnose's token accuracy: what compute_metrics returned, beside the true one
        d = subprocess.run([cli, "diagnose", "--run", os.path.join(out, case, "runs",
                                                                   stem + ".slrun"),
                            "--format", "json"], capture_output=True, text=True, timeout=120)
        acc = json.loads(d.stdout)["task_metrics"]["metrics"]["accuracy"]
        assert abs(acc["reported"] - oracles[0]["accuracy"]) < 1e-12, (case, stem, acc)
        assert abs(acc["true"] - np.trace(reference) / reference.sum()) < 1e-12, (case, acc)
        print("%s %s: %d sequences on %d ranks (%d padding copies), %d tokens gathered, "
              "%d expected; accuracy %.4f reported, %.4f expected" % (
                  case, "predict" if e else "evaluate", len(real) + len(copies), W,
                  len(copies), gathered.sum(), reference.sum(), accuracy,
                  np.trace(reference) / reference.sum()))


def imported(cli, dumps, run):
    r = subprocess.run([cli, "import"] + dumps + ["--out", run, "--format", "json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout)


EXAMPLE = os.path.join(frameworks.RECORDER_DIR, "examples", "hf_token_classification_example.py")


def test_documented_example_runs(cli):
    with tempfile.TemporaryDirectory() as work:
        start = time.time()
        logs = launch(EXAMPLE, [], 2, work, cli)
        lines = ["ShardLens: " + line.split("ShardLens: ", 1)[1] for line in
                 logs[0].splitlines() if "ShardLens: " in line and "Warning" not in line]
        assert len(lines) == 1 and "exact" in lines[0], logs[0][-3000:]
        run = os.path.join(work, lines[0].rsplit("see ", 1)[1])
        r = subprocess.run([cli, "simulate", "--like", run], capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0 and "the simulation EQUALS the run" in r.stdout, \
            r.stdout + r.stderr
        print("hf_token_classification_example.py (2 processes, %.0f s): %s; simulate "
              "--like: EQUALS" % (time.time() - start, lines[0]))
