"""`shardlens-cli run` when a rank dies or hangs mid-run (real processes, Gloo).

Usage: run_faults.py SHARDLENS_CLI. Uses the CLI's test hook SHARDLENS_TEST_FAULT=kill:R:B
(rank R raises SIGKILL after B batches) or hang:R:B (rank R stops making progress). The
run must end within the --timeout (plus the launcher's grace), exit non-zero, name the
failed rank, and keep the results gathered so far in a run file marked incomplete.
Exits 77 (ctest SKIP) when the CLI has no LibTorch.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile

TIMEOUT = 5


def run_with_fault(cli, fault, out):
    env = dict(os.environ, SHARDLENS_TEST_FAULT=fault)
    for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(key, None)
    start = time.monotonic()
    r = subprocess.run([cli, "run", "--world-size", "3", "--batch-size", "500", "--timeout",
                        str(TIMEOUT), "--out", out], capture_output=True, text=True, env=env,
                       timeout=120)
    return r, time.monotonic() - start


def main():
    cli = sys.argv[1]
    probe = subprocess.run([cli, "run", "--world-size", "1", "--dataset", "synthetic:classes=2,per-class=1"],
                           capture_output=True, text=True)
    if "no LibTorch" in probe.stderr:
        print("SKIP: shardlens-cli was built without LibTorch")
        sys.exit(77)
    failures = []
    with tempfile.TemporaryDirectory() as d:
        for kind, rank, limit in (("kill", 2, TIMEOUT + 15), ("hang", 1, 2 * TIMEOUT + 25)):
            out = os.path.join(d, kind + ".slrun")
            r, took = run_with_fault(cli, "%s:%d:1" % (kind, rank), out)
            label = "%s rank %d" % (kind, rank)
            if r.returncode == 0:
                failures.append(label + ": exit 0")
            if "rank %d" % rank not in r.stderr:
                failures.append(label + ": error does not name the rank: " + r.stderr)
            if took > limit:
                failures.append(label + ": took %.1f s (limit %d s)" % (took, limit))
            if not os.path.exists(out):
                failures.append(label + ": no run file kept")
                continue
            meta = json.loads(zipfile.ZipFile(out).read("meta.json"))
            if meta["complete"] or meta["failed_ranks"] != [rank]:
                failures.append(label + ": meta says complete=%s failed=%s"
                                % (meta["complete"], meta["failed_ranks"]))
            if "rank %d" % rank not in meta["incomplete_reason"]:
                failures.append(label + ": reason does not name the rank")
            survivors = [k for k in range(3) if k != rank]
            sizes = meta["records_per_rank"]
            if any(sizes[k] == 0 for k in survivors) or (kind == "kill" and sizes[rank] != 0):
                failures.append(label + ": records kept per rank %s" % sizes)
            check = subprocess.run([cli, "diagnose", "--run", out], capture_output=True, text=True)
            if check.returncode != 2 or "incomplete" not in check.stderr:
                failures.append(label + ": diagnose of the partial run: %d %s"
                                % (check.returncode, check.stderr))
            print("%s: ended in %.1f s, exit %d, run file incomplete with ranks %s"
                  % (label, took, r.returncode, sizes))
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
