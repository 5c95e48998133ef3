"""`shardlens-cli run` started the way Slurm, MPI and torchrun start ranks.

Usage: run_launchers.py SHARDLENS_CLI. Runs under Debian's /usr/bin/python3 (python3-torch
hosts the torchrun-style store). Exits 77 (ctest SKIP) when the CLI has no LibTorch.

Four processes on this machine are given only one launcher's variables each time, never
RANK/WORLD_SIZE:
  - srun:   SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_STEP_ID (+ MASTER_ADDR/PORT);
  - mpirun (Open MPI): OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK (+ MASTER_ADDR/PORT);
  - PMI (MPICH, Intel MPI): PMI_RANK, PMI_SIZE (+ MASTER_ADDR/PORT).
Each run must equal a local 4-rank run of the same settings in every array of its run file
and record the launcher it saw. A torchrun-style run, whose agent hosts the store
(TORCHELASTIC_USE_AGENT_STORE=True: here torch's own c10d TCPStore, hosted by this script),
must do the same with every rank a client of that store. Slurm's variables without a job
step (an sbatch script running the command once) must not be taken for a rank: that
process launches its own ranks.
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_probe import require_libtorch  # noqa: E402  (same directory)

SETTINGS = ["--batch-size", "500", "--limit-batches", "3", "--timeout", "60"]
CLEAN = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "SLURM_PROCID",
         "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_STEP_ID", "SLURM_STEPID", "OMPI_COMM_WORLD_RANK",
         "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK", "PMI_SIZE",
         "TORCHELASTIC_USE_AGENT_STORE", "TORCHELASTIC_RUN_ID", "GROUP_RANK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def base_env():
    return {k: v for k, v in os.environ.items() if k not in CLEAN}


def arrays(path):
    z = zipfile.ZipFile(path)
    return ({n: z.read(n) for n in z.namelist() if n.endswith(".npy")},
            json.loads(z.read("meta.json")))


def run_ranks(cli, variables_of, out, port):
    procs = []
    for rank in range(4):
        env = base_env()
        env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        env.update(variables_of(rank))
        cmd = [cli, "run"] + SETTINGS + (["--out", out] if rank == 0 else [])
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True))
    errors = []
    for rank, p in enumerate(procs):
        try:
            _, err = p.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
        if p.returncode != 0:
            errors.append("rank %d exited %s: %s" % (rank, p.returncode, err.strip()))
    return errors


def compare(cli, label, out, reference, launcher, failures):
    if not os.path.exists(out):
        failures.append(label + ": no run file")
        return
    d = subprocess.run([cli, "diagnose", "--run", out], capture_output=True, text=True)
    if "ranks started by " + launcher not in d.stdout:
        failures.append(label + ": diagnose --run does not say who started the ranks:\n"
                        + d.stdout[:400])
    a, meta = arrays(out)
    b, _ = arrays(reference)
    if sorted(a) != sorted(b):
        failures.append(label + ": members %s, the local run has %s" % (sorted(a), sorted(b)))
    differ = [n for n in sorted(set(a) & set(b)) if a[n] != b[n]]
    if differ:
        failures.append(label + ": differs from the local 4-rank run in " + ", ".join(differ))
    if not meta["complete"] or meta.get("launcher") != launcher:
        failures.append(label + ": complete=%s launcher=%s (expected %s)"
                        % (meta["complete"], meta.get("launcher"), launcher))
    print("%s: %d arrays equal to the local run, launcher %s" % (label, len(set(a) & set(b)),
                                                                 meta.get("launcher")))


def main():
    cli = sys.argv[1]
    require_libtorch(cli)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        reference = os.path.join(tmp, "local.slrun")
        r = subprocess.run([cli, "run", "--world-size", "4"] + SETTINGS + ["--out", reference],
                           capture_output=True, text=True, env=base_env(), timeout=300)
        if r.returncode != 0:
            print("FAIL: the local reference run failed: " + r.stderr)
            sys.exit(1)
        a, meta = arrays(reference)
        if meta.get("launcher") != "shardlens":
            failures.append("local run: launcher %s, not shardlens" % meta.get("launcher"))

        schemes = {
            "slurm": lambda k: {"SLURM_PROCID": str(k), "SLURM_NTASKS": "4",
                                "SLURM_LOCALID": str(k), "SLURM_STEP_ID": "0"},
            "openmpi": lambda k: {"OMPI_COMM_WORLD_RANK": str(k), "OMPI_COMM_WORLD_SIZE": "4",
                                  "OMPI_COMM_WORLD_LOCAL_RANK": str(k)},
            "pmi": lambda k: {"PMI_RANK": str(k), "PMI_SIZE": "4"},
        }
        for launcher, variables in schemes.items():
            out = os.path.join(tmp, launcher + ".slrun")
            errors = run_ranks(cli, variables, out, free_port())
            failures.extend(launcher + ": " + e for e in errors)
            compare(cli, launcher, out, reference, launcher, failures)

        # torchrun's agent hosts the store; the ranks join it as clients.
        try:
            import torch.distributed as dist
            from datetime import timedelta
        except ImportError:
            failures.append("torchrun-style run needs /usr/bin/python3 with python3-torch")
        else:
            port = free_port()
            agent_store = dist.TCPStore("127.0.0.1", port, 5, True, timedelta(seconds=120),
                                        wait_for_workers=False)
            out = os.path.join(tmp, "torchrun.slrun")
            errors = run_ranks(cli, lambda k: {
                "RANK": str(k), "WORLD_SIZE": "4", "LOCAL_RANK": str(k),
                "TORCHELASTIC_USE_AGENT_STORE": "True", "TORCHELASTIC_RUN_ID": "test",
                "TORCHELASTIC_RESTART_COUNT": "0", "GROUP_RANK": "0"}, out, port)
            failures.extend("torchrun: " + e for e in errors)
            compare(cli, "torchrun (agent store)", out, reference, "torchrun", failures)
            try:
                agent_store.wait(["/worker/attempt_0/shardlens//rank0/done"],
                                 timedelta(seconds=2))
            except RuntimeError:
                failures.append("torchrun: the ranks did not use the agent's store under "
                                "/worker/attempt_0")
            del agent_store

        # sbatch running the command once: SLURM_PROCID=0 and SLURM_NTASKS=4 without a step.
        env = base_env()
        env.update(SLURM_PROCID="0", SLURM_NTASKS="4", SLURM_LOCALID="0")
        out = os.path.join(tmp, "batch.slrun")
        r = subprocess.run([cli, "run", "--world-size", "2"] + SETTINGS + ["--out", out],
                           capture_output=True, text=True, env=env, timeout=300)
        if r.returncode != 0 or not os.path.exists(out):
            failures.append("sbatch-style single command failed: " + r.stderr)
        elif arrays(out)[1].get("launcher") != "shardlens":
            failures.append("sbatch-style single command did not launch its own ranks")
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
