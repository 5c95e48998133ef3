"""`shardlens-cli run` when a rank dies or hangs mid-run (real processes, Gloo).

Usage: run_faults.py SHARDLENS_CLI. Uses the CLI's test hook SHARDLENS_TEST_FAULT=kill:R:B
(rank R raises SIGKILL after B batches) or hang:R:B (rank R stops making progress). The
run must end within the --timeout (plus the launcher's grace), exit non-zero, name the
failed rank, and keep the results gathered so far in a run file marked incomplete, which
`diagnose --run` reports as wrong (exit 1, incomplete-run) and `export --run` draws.
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
            # The partial run is diagnosed like any evaluation: wrong (exit 1), with the
            # incomplete-run finding naming the failed rank.
            check = subprocess.run([cli, "diagnose", "--run", out], capture_output=True, text=True)
            if (check.returncode != 1 or "[incomplete-run]" not in check.stdout
                    or "rank %d" % rank not in check.stdout):
                failures.append(label + ": diagnose of the partial run: %d %s %s"
                                % (check.returncode, check.stdout, check.stderr))
            # ... and exported like any evaluation: per-rank figures, no synced matrix.
            figs = os.path.join(d, kind + "-export")
            exp = subprocess.run([cli, "export", "--run", out, "--out", figs, "--formats",
                                  "csv,json,png,svg,pdf"], capture_output=True, text=True)
            if exp.returncode != 0:
                failures.append(label + ": export --run: %d %s" % (exp.returncode, exp.stderr))
            else:
                for name in ("per-rank.png", "per-rank.svg", "per-rank.pdf", "per_rank_0.csv",
                             "report.json"):
                    if not os.path.getsize(os.path.join(figs, name)):
                        failures.append(label + ": export wrote an empty " + name)
                for name in ("synced.png", "synced.csv"):
                    if os.path.exists(os.path.join(figs, name)):
                        failures.append(label + ": export wrote %s for a run never synced" % name)
                report = json.load(open(os.path.join(figs, "report.json")))
                if report["synced"] is not None or "rank %d" % rank not in report["incomplete"]:
                    failures.append(label + ": report.json synced=%s incomplete=%s"
                                    % (report["synced"], report.get("incomplete")))
                with open(os.path.join(figs, "per-rank.png"), "rb") as f:
                    if f.read(8) != b"\x89PNG\r\n\x1a\n":
                        failures.append(label + ": per-rank.png is not a PNG")
            print("%s: ended in %.1f s, exit %d, run file incomplete with ranks %s"
                  % (label, took, r.returncode, sizes))
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
