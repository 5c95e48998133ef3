"""`shardlens-cli run` across two hosts: two network namespaces joined by a veth pair.

Usage: run_netns.py SHARDLENS_CLI. Exits 77 (ctest SKIP) when the CLI has no LibTorch or
network namespaces cannot be made here (not root, no `ip`, no veth), saying which.

The test makes the namespaces itself (host A = 10.77.0.1, host B = 10.77.0.2, each with its
own loopback) and removes them afterwards, then starts ranks 0-1 in A and 2-3 in B with the
variables a user sets by hand for a multi-node run (RANK, WORLD_SIZE, LOCAL_RANK,
MASTER_ADDR=10.77.0.1, MASTER_PORT). Each rank has its own working and temporary directory,
and only rank 0 is given --out, so the records of ranks 2-3 can reach the run file only over
the network.

Checks:
 1. The run completes, and every matrix and record of its run file (per rank, synced,
    expected, indices, predictions, flags) equals a local 4-rank run with the same
    settings; the run file says the ranks were started from the environment.
 2. Each rank listens only on its own host's veth address: rank 0's store on 10.77.0.1,
    and every Gloo pair on its host's address, never 127.0.0.1 or a wildcard. Rank 3 is
    started a few seconds after the others, so the pairs of ranks 0-2 wait for it in the
    listening state, which gives the sampling a deterministic window; at least one Gloo
    listener must be seen on each host, proving the sampling works.
 3. Host B's ranks killed mid-run (SHARDLENS_TEST_FAULT=kill:R:1, the rank raises SIGKILL
    after its first batch): ranks 0 and 1 end within --timeout (plus slack), exit non-zero
    and name ranks 2 and 3, and rank 0 keeps a run file marked incomplete with ranks 2 and 3
    as the failed ones.
"""
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_probe import require_libtorch  # noqa: E402  (same directory)
from run_loopback import listeners  # noqa: E402

HOST_A, HOST_B = "10.77.0.1", "10.77.0.2"
SETTINGS = ["--batch-size", "500"]
TIMEOUT = 30
KILL_TIMEOUT = 6


def sh(*cmd, check=True):
    return subprocess.run(list(cmd), capture_output=True, text=True, check=check)


class Hosts:
    """Two network namespaces joined by a veth pair; removed on exit."""

    def __init__(self):
        tag = "%d" % (os.getpid() % 100000)
        self.a, self.b = "sla" + tag, "slb" + tag
        self.made = []

    def __enter__(self):
        try:
            for ns in (self.a, self.b):
                sh("ip", "netns", "add", ns)
                self.made.append(ns)
            sh("ip", "link", "add", self.a, "type", "veth", "peer", "name", self.b)
            for ns, addr in ((self.a, HOST_A), (self.b, HOST_B)):
                sh("ip", "link", "set", ns, "netns", ns)
                sh("ip", "-n", ns, "addr", "add", addr + "/24", "dev", ns)
                sh("ip", "-n", ns, "link", "set", ns, "up")
                sh("ip", "-n", ns, "link", "set", "lo", "up")
        except (OSError, subprocess.CalledProcessError) as e:
            self.__exit__(None, None, None)
            detail = getattr(e, "stderr", "") or str(e)
            print("SKIP: cannot make network namespaces here: %s" % detail.strip())
            sys.exit(77)
        return self

    def __exit__(self, *exc):
        for ns in self.made:
            sh("ip", "netns", "del", ns, check=False)  # removes the veth with it

    def ns_of(self, rank):
        return self.a if rank < 2 else self.b

    def addr_of(self, rank):
        return HOST_A if rank < 2 else HOST_B


def free_port():
    # Any port works inside the namespaces; pick one that is free here to avoid a guess.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_rank(cli, hosts, rank, port, work, extra_env=None, out=None, timeout=TIMEOUT):
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT",
                        "SHARDLENS_TEST_FAULT", "GLOO_SOCKET_IFNAME")}
    own = os.path.join(work, "rank%d" % rank)
    os.makedirs(own, exist_ok=True)
    env.update(RANK=str(rank), WORLD_SIZE="4", LOCAL_RANK=str(rank % 2), MASTER_ADDR=HOST_A,
               MASTER_PORT=str(port), TMPDIR=own)
    env.update(extra_env or {})
    cmd = ["ip", "netns", "exec", hosts.ns_of(rank), cli, "run"] + SETTINGS + [
        "--timeout", str(timeout)]
    if out:
        cmd += ["--out", out]
    # `ip netns exec` execs the command, so the pid is the rank's own.
    return subprocess.Popen(cmd, cwd=own, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def members(path):
    z = zipfile.ZipFile(path)
    arrays = {n: z.read(n) for n in z.namelist() if n.endswith(".npy")}
    return arrays, json.loads(z.read("meta.json"))


def main():
    cli = sys.argv[1]
    require_libtorch(cli)
    if os.geteuid() != 0 or not shutil.which("ip"):
        print("SKIP: network namespaces need root and iproute2's `ip`")
        sys.exit(77)
    failures = []
    with tempfile.TemporaryDirectory() as tmp, Hosts() as hosts:
        local = os.path.join(tmp, "local.slrun")
        env = {k: v for k, v in os.environ.items()
               if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
        r = subprocess.run([cli, "run", "--world-size", "4"] + SETTINGS + ["--out", local],
                           capture_output=True, text=True, env=env, timeout=300)
        if r.returncode != 0:
            print("FAIL: the local 4-rank reference run failed:", r.stderr)
            sys.exit(1)

        # --- 1 and 2: the run across hosts, rank 3 late -------------------------------------
        work = os.path.join(tmp, "across")
        out = os.path.join(work, "rank0", "across.slrun")
        port = free_port()
        ranks = {k: start_rank(cli, hosts, k, port, work, out=out if k == 0 else None)
                 for k in range(3)}
        seen = set()
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            for k, p in ranks.items():
                for _pid, addr, lport in listeners({p.pid}):
                    seen.add((k, addr, lport))
            time.sleep(0.02)
        ranks[3] = start_rank(cli, hosts, 3, port, work)
        while any(p.poll() is None for p in ranks.values()):
            for k, p in ranks.items():
                for _pid, addr, lport in listeners({p.pid}):
                    seen.add((k, addr, lport))
            time.sleep(0.02)
        errors = {k: p.communicate()[1] for k, p in ranks.items()}
        for k, p in sorted(ranks.items()):
            if p.returncode != 0:
                failures.append("across hosts: rank %d exited %d: %s" % (k, p.returncode, errors[k]))
        for k, addr, lport in sorted(seen):
            print("rank %d listens on %s port %d" % (k, addr, lport))
            if addr != hosts.addr_of(k):
                failures.append("rank %d listens on %s:%d, not only on its host's %s"
                                % (k, addr, lport, hosts.addr_of(k)))
        if (0, HOST_A, port) not in seen:
            failures.append("rank 0's store was not seen listening on %s:%d" % (HOST_A, port))
        for host, group in ((HOST_A, (0, 1)), (HOST_B, (2,))):
            if not any(k in group and lport != port for k, _a, lport in seen):
                failures.append("no Gloo listener of ranks %s seen on %s: the sampling missed "
                                "them" % (list(group), host))
        if not os.path.exists(out):
            failures.append("rank 0 wrote no run file")
        else:
            a, meta = members(out)
            b, _ = members(local)
            if sorted(a) != sorted(b):
                failures.append("members differ: %s vs %s" % (sorted(a), sorted(b)))
            for name in sorted(set(a) & set(b)):
                if a[name] != b[name]:
                    failures.append("%s differs from the local 4-rank run" % name)
            if not meta["complete"] or meta.get("launcher") != "env":
                failures.append("meta: complete=%s launcher=%s" % (meta["complete"],
                                                                  meta.get("launcher")))
            print("across hosts: %d arrays equal to the local run" % len(set(a) & set(b)))
        for k in (1, 2, 3):
            if os.path.exists(os.path.join(work, "rank%d" % k, "across.slrun")):
                failures.append("rank %d wrote a run file" % k)

        # --- 3: host B lost mid-run -----------------------------------------------------------
        work = os.path.join(tmp, "lost")
        out = os.path.join(work, "rank0", "lost.slrun")
        port = free_port()
        start = time.monotonic()
        ranks = {k: start_rank(cli, hosts, k, port, work, out=out if k == 0 else None,
                               timeout=KILL_TIMEOUT,
                               extra_env={"SHARDLENS_TEST_FAULT": "kill:%d:1" % k} if k >= 2
                               else None)
                 for k in range(4)}
        ended = {}
        while len(ended) < 2 and time.monotonic() - start < 120:
            for k in (0, 1):
                if k not in ended and ranks[k].poll() is not None:
                    ended[k] = time.monotonic() - start
            time.sleep(0.05)
        for p in ranks.values():
            if p.poll() is None:
                p.kill()
        errors = {k: p.communicate()[1] for k, p in ranks.items()}
        for k in (0, 1):
            took = ended.get(k)
            # Start-up (LibTorch, the dataset) comes before the timeout's clock; 40 s is far
            # beyond both on a loaded 2-core machine, and far below a hang.
            if took is None or took > KILL_TIMEOUT + 40:
                failures.append("lost host: rank %d did not end in time (%s s)" % (k, took))
            if ranks[k].returncode == 0:
                failures.append("lost host: rank %d exited 0" % k)
            if "2" not in errors[k] or "3" not in errors[k]:
                failures.append("lost host: rank %d does not name ranks 2 and 3: %s"
                                % (k, errors[k]))
            print("lost host: rank %d ended after %.1f s: %s" % (k, took or -1,
                                                                 errors[k].strip()[-300:]))
        if not os.path.exists(out):
            failures.append("lost host: rank 0 kept no run file")
        else:
            _, meta = members(out)
            if meta["complete"] or sorted(meta["failed_ranks"]) != [2, 3]:
                failures.append("lost host: meta complete=%s failed_ranks=%s"
                                % (meta["complete"], meta["failed_ranks"]))
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
