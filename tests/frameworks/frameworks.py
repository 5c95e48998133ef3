"""What every framework oracle test shares: the project's venv (scripts/venv.sh), the CLI,
and one policy for a missing framework.

A test script imports this module first (it runs under any python3) and calls
`require_venv()`: when the script is not already running in the venv's interpreter it
re-executes itself there. When the venv is missing it skips (exit 77, the reason printed),
and under CI=true it fails instead: in CI a missing framework is an error, never a skip.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
RECORDER_DIR = os.path.join(ROOT, "integrations", "python")
VENV = os.environ.get("SHARDLENS_VENV", os.path.join(ROOT, "build", "venv"))
VENV_PYTHON = os.path.join(VENV, "bin", "python")
SKIP = 77


def in_ci():
    return os.environ.get("CI", "").lower() == "true"


def skip(reason):
    """Ends the test as skipped, or as failed under CI=true."""
    if in_ci():
        print("FAIL (CI=true, a missing framework fails): %s" % reason, flush=True)
        sys.exit(1)
    print("SKIP: %s" % reason, flush=True)
    sys.exit(SKIP)


def require_venv():
    """Runs the calling script in the venv's interpreter (re-executing it when needed)."""
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV):
        return
    if not os.path.exists(VENV_PYTHON):
        skip("no framework venv at %s: run scripts/venv.sh (needs PyPI)" % VENV)
    os.execv(VENV_PYTHON, [VENV_PYTHON] + sys.argv)


def lightning_worker(script, args, cli, timeout=400):
    """Runs SCRIPT (a worker that starts a Lightning Trainer, which launches its own ranks)
    with ARGS: the recorder and the script's folder importable, shardlens-cli as SHARDLENS_CLI,
    one thread a process, every ShardLensWarning shown, the launcher's variables of any
    enclosing run removed and a free MASTER_PORT. Returns the CompletedProcess (text)."""
    env = dict(os.environ, PYTHONPATH=RECORDER_DIR + os.pathsep + os.path.dirname(script),
               OMP_NUM_THREADS="1", PYTHONWARNINGS="default", SHARDLENS_CLI=cli)
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_PORT", "PL_GLOBAL_SEED"):
        env.pop(var, None)
    env["MASTER_PORT"] = str(free_port())  # Lightning launches there
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def rank_processes(script, world, args):
    """Starts WORLD processes of `SCRIPT --worker ARGS...` as torchrun would (RANK,
    WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, a free loopback MASTER_PORT, one thread each),
    their output piped (text, stderr into stdout). Returns the Popen objects, rank order."""
    port = str(free_port())
    procs = []
    for r in range(world):
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=port, RANK=str(r),
                   WORLD_SIZE=str(world), LOCAL_RANK=str(r), LOCAL_WORLD_SIZE=str(world),
                   OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen([sys.executable, os.path.abspath(script), "--worker",
                                       *args], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    return procs


def free_port():
    """A loopback port for MASTER_PORT, outside the kernel's ephemeral range: a port taken
    from that range (bind to 0) can be handed out again as the source port of another test's
    gloo connections before rank 0 binds it, which ctest -j2 made happen."""
    import random
    import socket
    low, _ = (int(v) for v in open("/proc/sys/net/ipv4/ip_local_port_range").read().split())
    for _ in range(200):
        port = random.randrange(20000, min(low, 32768))
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError("no free loopback port in 20000..%d" % low)


def versions():
    import importlib.metadata as m
    out = {}
    for p in ("torch", "lightning", "torchmetrics", "accelerate", "numpy"):
        try:
            out[p] = m.version(p)
        except m.PackageNotFoundError:
            pass
    return out


def cli_json(cli, *args, env=None):
    """Runs shardlens-cli ARGS --format json and returns the parsed output; asserts exit 0/1
    (diagnose exits 1 on a wrong matrix)."""
    import json
    proc = subprocess.run([cli, *args, "--format", "json"], capture_output=True, text=True,
                          env=env)
    if proc.returncode not in (0, 1):
        raise AssertionError("%s %s exited %d: %s" % (cli, " ".join(args), proc.returncode,
                                                      proc.stderr[-2000:]))
    return json.loads(proc.stdout)


def records_matrix(dump, classes):
    """The confusion matrix of a dump's records (row = target, column = prediction), as a
    nested list: what a rank's own metric state must equal when the recorder saw every
    update it made."""
    import numpy as np
    cells = dump["target"].astype(np.int64) * classes + dump["prediction"].astype(np.int64)
    return np.bincount(cells, minlength=classes * classes).reshape(classes, classes).tolist()
