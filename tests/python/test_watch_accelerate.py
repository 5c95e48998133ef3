"""shardlens_recorder.watch(accelerator, "runs/") against a real Accelerate evaluation.

Run by pytest (tests/python, with --cli SHARDLENS_CLI). Starts accelerate_watch_worker.py as 4 CPU
processes (gloo; RANK/WORLD_SIZE/MASTER_* as torchrun sets them), 103 samples in batches of 4:
Accelerate's even_batches pads the last round with samples from the start. Per rank and
evaluation, the dump's indices are the items the loader fetched, its padded copies are
flagged, the records without the padding give the matrix torchmetrics computed from
gather_for_metrics, which the dump holds as reported; rank 0 printed one verdict line per
evaluation.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import frameworks
import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("accelerate")
pytest.importorskip("torchmetrics")

HERE = os.path.dirname(os.path.abspath(__file__))

W, C = 4, 5


def launch(out, cli):
    port = str(frameworks.free_port())
    procs = []
    start = time.time()
    for r in range(W):
        env = dict(os.environ, PYTHONPATH=frameworks.RECORDER_DIR, OMP_NUM_THREADS="1",
                   RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(W), LOCAL_WORLD_SIZE=str(W),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=port, SHARDLENS_CLI=cli,
                   PYTHONWARNINGS="default")
        procs.append(subprocess.Popen([sys.executable, os.path.join(
            HERE, "accelerate_watch_worker.py"), out], env=env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True))
    logs = [p.communicate(timeout=300)[0] for p in procs]
    codes = [p.returncode for p in procs]
    print("4 Accelerate processes ran in %.0f s (exits %s)" % (time.time() - start, codes))
    return codes, logs


def test_watch_records_every_rank(cli):
    with tempfile.TemporaryDirectory() as out:
        codes, logs = launch(out, cli)
        assert codes == [0] * W, "\n".join(log[-3000:] for log in logs)
        padded_total = 0
        for e in range(2):
            per_rank, flagged = [], []
            for r in range(W):
                oracle = json.load(open(os.path.join(out, "oracle_rank%d.json" % r)))[e]
                d = np.load(os.path.join(out, "runs", "eval_epoch%d_rank%d.npz" % (e, r)))
                n = len(d["index"])
                assert d["index"].tolist() == oracle["fetched"][:n], (e, r)
                assert d["reported"].tolist() == oracle["gathered"], (e, r)
                keep = (d["flags"] & shardlens_recorder_padding()) == 0
                padded_total += int((~keep).sum())
                m = np.zeros((C, C), np.int64)
                np.add.at(m, (d["target"][keep], d["prediction"][keep]), 1)
                per_rank.append(m)
                flagged.append(d["index"][~keep].tolist())
            got = sum(per_rank).tolist()
            assert got == oracle["gathered"], (got, oracle["gathered"])
        lines = [line for line in logs[0].splitlines() if line.startswith("ShardLens: ")]
        assert len(lines) == 2, logs[0][-3000:]
        assert not any(line.startswith("ShardLens: ") for log in logs[1:]
                       for line in log.splitlines())
        print("padding flagged: %d records (both evaluations); verdict: %s"
              % (padded_total, lines[0]))
        assert padded_total == 2 * (W * 4 * 7 - 103), padded_total
        # gather_for_metrics drops the padding: the matrix it reported is exact.
        assert "0 of 5 rows" in lines[0] or "exact" in lines[0], lines[0]


def shardlens_recorder_padding():
    from shardlens_recorder import PADDING
    return PADDING
