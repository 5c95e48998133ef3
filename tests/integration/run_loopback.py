"""`shardlens-cli run` in local mode must not listen on the network.

Usage: run_loopback.py SHARDLENS_CLI. Exits 77 (ctest SKIP) when the CLI has no LibTorch.

LibTorch 1.13's TCPStore server binds every interface whatever address it is given, so the
launcher's ranks meet through a FileStore in a private directory instead, and Gloo binds
127.0.0.1. While a 2-rank run is in progress this test samples the listening TCP sockets
that belong to the run's own processes (the launcher and its children, matched through
/proc/PID/fd socket inodes against /proc/PID/net/tcp and tcp6), so other processes on a
shared machine cannot make it flaky. A hang fault (SHARDLENS_TEST_FAULT=hang:1:1) holds
the ranks connected for the --timeout, giving a long, deterministic window.

Checks: no listener of the run on a non-loopback address; at least one loopback listener
(Gloo's) was seen, so the sampling demonstrably works; the store's private directory is mode
0700 while the run lasts and is gone afterwards. A control run with --master-addr (the user
asks for a TCPStore) must show a listener of the launcher, again proving the sampler sees
what it should; its address is reported, not judged.
"""
import glob
import os
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_probe import require_libtorch  # noqa: E402  (same directory)

TIMEOUT = 3
LISTEN = "0A"


def decode(hex_addr):
    """'0100007F:1F90' or a 32-digit IPv6 form from /proc/net/tcp* -> (address, port)."""
    host, port = hex_addr.split(":")
    raw = bytes.fromhex(host)
    # The kernel prints each 32-bit word in host byte order (little-endian here).
    words = [raw[i:i + 4][::-1] for i in range(0, len(raw), 4)]
    packed = b"".join(words)
    family = socket.AF_INET if len(packed) == 4 else socket.AF_INET6
    return socket.inet_ntop(family, packed), int(port, 16)


def is_loopback(addr):
    return addr.startswith("127.") or addr == "::1" or addr.startswith("::ffff:127.")


def run_pids(launcher):
    """The launcher and every process whose parent is one of the run's processes."""
    parents = {}
    for stat_path in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat_path) as f:
                text = f.read()
            pid = int(stat_path.split("/")[2])
            parents[pid] = int(text[text.rindex(")") + 2:].split()[1])
        except (OSError, ValueError):
            continue
    pids = {launcher}
    grew = True
    while grew:
        grew = False
        for pid, ppid in parents.items():
            if ppid in pids and pid not in pids:
                pids.add(pid)
                grew = True
    return pids


def listeners(pids):
    """(pid, address, port) of every listening TCP socket the given processes hold."""
    found = []
    for pid in pids:
        inodes = set()
        try:
            for fd in os.listdir("/proc/%d/fd" % pid):
                try:
                    target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
                except OSError:
                    continue
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
            tables = []
            for name in ("tcp", "tcp6"):
                path = "/proc/%d/net/%s" % (pid, name)
                if os.path.exists(path):
                    with open(path) as f:
                        tables.extend(f.read().splitlines()[1:])
        except OSError:
            continue  # the process ended while we looked
        for line in tables:
            fields = line.split()
            if len(fields) > 9 and fields[3] == LISTEN and fields[9] in inodes:
                addr, port = decode(fields[1])
                found.append((pid, addr, port))
    return found


def sample_run(cmd, env):
    """Runs cmd, sampling its listeners and private store directories every 10 ms."""
    seen = set()
    dir_modes = {}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        for entry in listeners(run_pids(proc.pid)):
            seen.add(entry)
        for d in glob.glob(os.path.join(env["TMPDIR"], "shardlens-run-*")):
            try:
                dir_modes[d] = stat.S_IMODE(os.stat(d).st_mode)
            except OSError:
                pass
        time.sleep(0.01)
    if proc.poll() is None:
        proc.kill()
    _, err = proc.communicate()
    return proc.pid, seen, dir_modes, err


def main():
    cli = sys.argv[1]
    require_libtorch(cli)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, TMPDIR=tmp, SHARDLENS_TEST_FAULT="hang:1:1")
        for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
            env.pop(key, None)
        base = [cli, "run", "--world-size", "2", "--batch-size", "500", "--timeout",
                str(TIMEOUT)]

        # On a busy machine a sampling pass can miss Gloo's short-lived listener (it listens
        # only while the ranks connect); attempts until one is seen make "we saw the run at
        # all" reliable (a fresh-clone CI run once missed it four times in a row while the
        # machine was loaded). Exposure is checked on every attempt.
        seen, dir_modes = set(), {}
        for _attempt in range(12):
            _, more, modes, err = sample_run(base, env)
            seen |= more
            dir_modes.update(modes)
            if any(is_loopback(s[1]) for s in seen):
                break
        for pid, addr, port in sorted(seen):
            print("local run: pid %d listens on %s port %d" % (pid, addr, port))
        exposed = [s for s in seen if not is_loopback(s[1])]
        if exposed:
            failures.append("local run listens beyond loopback: %s" % sorted(exposed))
        if not any(is_loopback(s[1]) for s in seen):
            failures.append("no loopback listener seen (Gloo's): the sampling missed the run; "
                            "stderr: " + err)
        if not dir_modes:
            failures.append("no private store directory seen under TMPDIR")
        for d, mode in dir_modes.items():
            if mode != 0o700:
                failures.append("%s has mode %o, not 700" % (d, mode))
        left = glob.glob(os.path.join(tmp, "shardlens-run-*"))
        if left:
            failures.append("store directory left behind: %s" % left)

        # Control: the user names an address, so a TCPStore listens; the sampler must see it.
        # No hang window is needed here, so the ranks get a generous timeout: on a loaded
        # machine Gloo's connect can take longer than the hang runs' short one.
        env.pop("SHARDLENS_TEST_FAULT")
        control_run = [cli, "run", "--world-size", "2", "--batch-size", "500", "--timeout", "60",
                       "--master-addr", "127.0.0.1", "--limit-batches", "1"]
        launcher, control, _, err = sample_run(control_run, env)
        for pid, addr, port in sorted(control):
            print("control run (--master-addr 127.0.0.1): %s pid %d listens on %s port %d"
                  % ("launcher" if pid == launcher else "rank", pid, addr, port))
        if not any(pid == launcher for pid, _, _ in control):
            failures.append("control run: the launcher's TCPStore listener was not seen; "
                            "stderr: " + err)
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
