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
import socket
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
        world_size_disagreement(cli, failures)
        silent_master_port(cli, failures)
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_env(rank, world, port):
    env = {k: v for k, v in os.environ.items() if k != "SHARDLENS_TEST_FAULT"}
    env.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank),
               MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    return env


def world_size_disagreement(cli, failures):
    """Gloo's "enforce fail ... address.cc:45 136 vs 272": ranks 0 and 1 were started with
    WORLD_SIZE 2, rank 2 with 3. Rank 2 must be told, naming both sizes, before any
    rendezvous, within the timeout; the world of 2 is whole and finishes."""
    port = free_port()
    start = time.monotonic()
    procs = [subprocess.Popen([cli, "run", "--batch-size", "500", "--limit-batches", "2",
                               "--timeout", str(TIMEOUT)], env=rank_env(k, w, port),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for k, w in ((0, 2), (1, 2), (2, 3))]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    took = time.monotonic() - start
    said = "the ranks disagree on WORLD_SIZE: rank 0 has 2, rank 2 has 3"
    # Nor a guess at peers it waited for: it waited for none ("no records yet from ...").
    if procs[2].returncode == 0 or said not in errors[2] or "enforce" in errors[2] or \
            "no records yet" in errors[2]:
        failures.append("WORLD_SIZE 3 beside 2: rank 2 exit %d: %s"
                        % (procs[2].returncode, errors[2]))
    for k in (0, 1):
        if procs[k].returncode != 0:
            failures.append("WORLD_SIZE 3 beside 2: rank %d of the world of 2 exit %d: %s"
                            % (k, procs[k].returncode, errors[k]))
    if took > TIMEOUT + 30:
        failures.append("WORLD_SIZE 3 beside 2: took %.1f s" % took)
    print("WORLD_SIZE 3 beside 2: rank 2 said %r, the world of 2 finished (%.1f s)"
          % (errors[2].strip().splitlines()[-1] if errors[2].strip() else "", took))


def silent_master_port(cli, failures):
    """A listener at MASTER_PORT that accepts and never answers (not a store): rank 1 must
    give up within --timeout (plus start-up), not wait for the OS's own timeouts."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        port = silent.getsockname()[1]
        start = time.monotonic()
        r = subprocess.run([cli, "run", "--batch-size", "500", "--timeout", str(TIMEOUT)],
                           env=rank_env(1, 2, port), capture_output=True, text=True,
                           timeout=120)
        took = time.monotonic() - start
    if r.returncode == 0 or "127.0.0.1:%d" % port not in r.stderr:
        failures.append("silent MASTER_PORT: exit %d, does not name the store: %s"
                        % (r.returncode, r.stderr))
    if took > TIMEOUT + 10:
        failures.append("silent MASTER_PORT: took %.1f s with --timeout %d" % (took, TIMEOUT))
    print("silent MASTER_PORT: exit %d after %.1f s: %s"
          % (r.returncode, took, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""))


if __name__ == "__main__":
    main()
