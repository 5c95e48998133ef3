"""shardlens_recorder.watch(trainer) and ShardLensTrainerCallback against real Hugging Face
Trainer evaluations.

Run by pytest (tests/python, with --cli SHARDLENS_CLI). Starts hf_trainer_worker.py as 4 CPU
processes (gloo; the variables torchrun sets): a tiny BERT sequence classifier from a config,
103 samples in batches of 4 per device, Trainer.evaluate then Trainer.predict for each case:
a map-style dataset with eval_do_concat_batches on (watch) and off (the callback) and with
batch_eval_metrics, an IterableDataset dispatched by rank 0 (Accelerate's default for one)
and sharded on every rank (dispatch_batches=False). Per case, evaluation and rank: the dump's
rows are the rows the model evaluated on that rank (a forward hook decodes the index from the
token ids), the padding copies are flagged and the rest cover the dataset once, the reported
matrix is the one of what compute_metrics was given (or predict returned), and equals a
single-process reference where Accelerate trims its padding; where it cannot (the sharded
stream), the verdict counts the copies and the warning names the fix; `simulate --like` on
each run file with no other flag reproduces it (EQUALS), the dispatched stream too. Then
the documented example (integrations/python/examples/hf_trainer_example.py) runs as 2
processes.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import frameworks
import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("transformers")

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(frameworks.RECORDER_DIR, "examples", "hf_trainer_example.py")
W, N, B = 4, 103, 4
CASES = ("map_concat", "map_lists", "map_batch_metrics", "stream_dispatched", "stream_sharded")


def launch(script, args, world, cwd, cli):
    port = str(frameworks.free_port())
    procs = []
    for r in range(world):
        env = dict(os.environ, PYTHONPATH=frameworks.RECORDER_DIR, OMP_NUM_THREADS="1",
                   RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(world),
                   LOCAL_WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=port,
                   SHARDLENS_CLI=cli, PYTHONWARNINGS="default")
        procs.append(subprocess.Popen([sys.executable, script] + args, cwd=cwd, env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True))
    logs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0] * world, "\n".join(g[-3000:] for g in logs)
    return logs


def padding_bit():
    from shardlens_recorder import PADDING
    return PADDING


def matrix(rows):
    m = np.zeros((3, 3), np.int64)
    for _, y, p in rows:
        m[y, p] += 1
    return m


@pytest.fixture(scope="module")
def trainer_run(request):
    cli = request.config.getoption("--cli")  # (the cli fixture is per test)
    if not cli or not os.path.exists(cli):
        pytest.skip("shardlens-cli not given (--cli)")
    cli = os.path.abspath(cli)
    out = tempfile.mkdtemp()
    start = time.time()
    logs = launch(os.path.join(HERE, "hf_trainer_worker.py"), [out], W, out, cli)
    print("4 Trainer processes, %d cases, ran in %.0f s" % (len(CASES), time.time() - start))
    yield out, logs, cli
    shutil.rmtree(out, ignore_errors=True)


def verdict_lines(log, case):
    return [line for line in log.splitlines()
            if line.startswith("ShardLens: ") and "/%s/" % case in line]


@pytest.mark.parametrize("case", CASES)
def test_records_equal_what_the_trainer_computed(trainer_run, case):
    out, logs, _ = trainer_run
    pad = padding_bit()
    lines = verdict_lines(logs[0], case)
    assert len(lines) == 2, logs[0][-3000:]  # evaluate and predict
    assert not any(verdict_lines(log, case) for log in logs[1:])
    for e, stem in enumerate(("eval_epoch0", "eval_test_epoch0")):
        oracles = [json.load(open(os.path.join(out, case, "oracle_rank%d.json" % r)))[e]
                   for r in range(W)]
        real, copies, gathered = [], [], oracles[0]["gathered"]
        for r in range(W):
            d = np.load(os.path.join(out, case, "runs", "%s_rank%d.npz" % (stem, r)))
            rows = np.stack([d["index"], d["target"], d["prediction"]], 1).tolist()
            assert rows == oracles[r]["rows"], (case, stem, r)
            assert d["reported"].tolist() == oracles[r]["gathered"] == gathered, (case, r)
            flagged = (d["flags"] & pad) != 0
            real += [row for row, f in zip(rows, flagged) if not f]
            copies += [row for row, f in zip(rows, flagged) if f]
        assert sorted(i for i, _, _ in real) == list(range(N)), (case, stem)
        reference = json.load(open(os.path.join(out, case, "oracle_rank0.json")))[0]["reference"]
        assert matrix(real).tolist() == reference, (case, stem)
        gathered_rows = oracles[0]["gathered_rows"]
        if case == "stream_sharded":
            # gather_for_metrics returned the cycled copies: the metric counted them.
            assert gathered_rows == N + len(copies) == 7 * W * B, (gathered_rows, len(copies))
            assert (matrix(real) + matrix(copies)).tolist() == gathered
            assert "%d duplicated" % len(copies) in lines[e], lines[e]
            assert "dispatch_batches" in logs[0] and "%d extra" % len(copies) in logs[0]
        else:
            assert gathered_rows == N and gathered == reference, (case, stem, gathered_rows)
            assert lines[e].startswith("ShardLens: the reported matrix is exact"), lines[e]
            # map-style: even_batches cycled 9 samples; dispatched: the last round of 7 was
            # completed with 1 of the first items
            assert len(copies) == {"stream_dispatched": 1}.get(case, 7 * W * B - N), copies
        like = simulate_like(trainer_run[2], os.path.join(out, case, "runs", stem + ".slrun"))
        print("%s %s: %d rows on %d ranks, %d padding copies flagged, metric saw %d rows: %s"
              "; simulate --like: %s" % (case, "predict" if e else "evaluate",
                                         len(real) + len(copies), W, len(copies),
                                         gathered_rows, lines[e], like))


def simulate_like(cli, run):
    """`simulate --like RUN` with no other flag reproduces the run, every rank's rows (the
    dispatched stream's uneven last round too) and the synced matrix."""
    r = subprocess.run([cli, "simulate", "--like", run], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "the simulation EQUALS the run" in r.stdout, r.stdout + r.stderr
    return "EQUALS"


def test_documented_example_runs(cli):
    with tempfile.TemporaryDirectory() as work:
        start = time.time()
        logs = launch(EXAMPLE, [], 2, work, cli)
        lines = ["ShardLens: " + line.split("ShardLens: ", 1)[1] for line in
                 logs[0].splitlines() if "ShardLens: " in line and "Warning" not in line]
        assert len(lines) == 1 and "exact" in lines[0], logs[0][-3000:]
        run = os.path.join(work, lines[0].rsplit("see ", 1)[1])
        like = simulate_like(cli, run)
        print("hf_trainer_example.py (2 processes, %.0f s): %s; simulate --like: %s" % (
            time.time() - start, lines[0], like))
