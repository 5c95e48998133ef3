"""A process on the host talking to a run's store: it can neither read nor forge the result.

Usage: store_peer.py SHARDLENS_CLI. Exits 77 (ctest SKIP) when the CLI has no LibTorch.

A 2-rank `run --master-addr 127.0.0.1 --sync double` (the store on a port every process of
the host reaches) is held for 4 s by rank 1 (SHARDLENS_TEST_FAULT=pause:1:1) while rank 0 has
published its matrix. Meanwhile this script, which does not hold the run's secret, speaks
the store's wire format (core/platform/socket_store.h) as an attacker would: it asks for
rank 0's matrix and sets `synced` to a forged matrix, with a made-up tag and with none, and
opens 300 idle connections. Checks: the store greets with a nonce and refuses every request
(an error naming the missing secret, nothing of rank 0's matrix), the run completes anyway,
its synced matrix is the honest double sync (twice the sum of the ranks', read back from the
run file) and `diagnose` says so (exit 1, double-sync); the secret is on no process's command
line. Twice: ShardLens's launcher (its secret), and two ranks started by hand with no secret
given (rank 0 makes one and leaves it for the ranks of its host in a 0600 file, removed when
the run ends).
"""
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_probe import require_libtorch  # noqa: E402  (same directory)

OP_SET, OP_GET = 1, 2
HELLO = 3


def npy_values(data):
    """The cells of a little-endian int64 or float64 .npy (what run files hold), flat."""
    assert data[:6] == b"\x93NUMPY", "not an .npy"
    (header_len,) = struct.unpack("<H", data[8:10])
    header = data[10:10 + header_len].decode()
    body = data[10 + header_len:]
    kind = "q" if "'<i8'" in header else "d"
    return list(struct.unpack("<%d%s" % (len(body) // 8, kind), body))


def frame(op, items):
    out = struct.pack("<BI", op, len(items))
    for item in items:
        out += struct.pack("<Q", len(item)) + item
    return out


def read_frame(sock, timeout=5.0):
    """(status, items) of the next frame, or None when the store closed first."""
    sock.settimeout(timeout)
    buf = b""

    def need(n):
        nonlocal buf
        while len(buf) < n:
            chunk = sock.recv(65536)
            if not chunk:
                raise EOFError
            buf += chunk

    try:
        need(5)
        status, count = struct.unpack("<BI", buf[:5])
        at, items = 5, []
        for _ in range(count):
            need(at + 8)
            (length,) = struct.unpack("<Q", buf[at:at + 8])
            need(at + 8 + length)
            items.append(buf[at + 8:at + 8 + length])
            at += 8 + length
        return status, items
    except (EOFError, ConnectionResetError, socket.timeout):
        return None


def attack(port, forged, failures):
    """Every attempt; returns what the store answered to each."""
    seen = []
    for label, request, tag in (
            ("get rank0/matrix, made-up tag", frame(OP_GET, [b"shardlens/rank0/matrix",
                                                             struct.pack("<Q", 1000)]), b"\0" * 32),
            ("set synced, made-up tag", frame(OP_SET, [b"shardlens/synced", forged]), b"\1" * 32),
            ("get rank0/matrix, no tag", frame(OP_GET, [b"shardlens/rank0/matrix",
                                                        struct.pack("<Q", 1000)]), b"")):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        hello = read_frame(s)
        if not hello or hello[0] != HELLO or len(hello[1]) != 1 or len(hello[1][0]) != 16:
            failures.append("%s: the store did not greet with a 16-byte nonce: %r"
                            % (label, hello))
        s.sendall(request + tag)
        answer = read_frame(s, timeout=2.0)
        seen.append((label, answer))
        if answer and answer[0] == 0:
            failures.append("%s: the store served it: %r" % (label, answer[1][:1]))
        if tag and (not answer or answer[0] != 2 or b"secret" not in answer[1][0]):
            failures.append("%s: no refusal naming the secret: %r" % (label, answer))
        s.close()
    return seen


def wait_for_port(port):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)


def attack_run(cli, label, start_ranks, port, out, failures):
    """Starts the run (start_ranks: its processes, rank 0's first), attacks its store while
    rank 1 pauses, then checks what the run wrote."""
    procs = start_ranks()
    run = procs[0]
    wait_for_port(port)
    time.sleep(0.5)  # rank 0 has published its matrix by now
    secret_file = "/tmp/shardlens-%d/store-%d.secret" % (os.geteuid(), port)
    file_mode = os.stat(secret_file).st_mode & 0o777 if os.path.exists(secret_file) else None
    forged = struct.pack("<i", 10) + struct.pack("<100d", *([0.0] * 100))
    for what, answer in attack(port, forged, failures):
        print("%s: %s -> %r" % (label, what, answer if answer is None else
                                (answer[0], [a[:120] for a in answer[1]])))
    idle = []
    for _ in range(300):
        try:
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=1))
        except OSError:
            break
    cmdlines = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    cmdlines.append(f.read())
            except OSError:
                pass
    try:
        stdout, stderr = run.communicate(timeout=120)
        for p in procs[1:]:
            p.wait(timeout=60)
    finally:
        for s in idle:
            s.close()
    print("%s: run exit %d; %d idle connections opened; host secret file mode %s"
          % (label, run.returncode, len(idle), oct(file_mode) if file_mode else None))
    if run.returncode not in (0, 1):
        failures.append("%s: the run failed (exit %d): %s"
                        % (label, run.returncode, stderr[-2000:]))
    else:
        with zipfile.ZipFile(out) as z:
            synced = npy_values(z.read("synced.npy"))
            ranks = [sum(v) for v in zip(*(npy_values(z.read("rank%d_matrix.npy" % r))
                                            for r in range(2)))]
        if synced != [2 * v for v in ranks] or sum(synced) == 0:
            failures.append("%s: synced is not twice the ranks' sum: a forgery was written"
                            % label)
        d = subprocess.run([cli, "diagnose", "--run", out], capture_output=True, text=True)
        print("%s: diagnose exit %d" % (label, d.returncode))
        if d.returncode != 1 or "double" not in d.stdout.lower():
            failures.append("%s: diagnose did not name the double sync (exit %d): %s"
                            % (label, d.returncode, d.stdout[-800:]))
    leaked = [c for c in cmdlines if b"SHARDLENS_STORE_SECRET" in c]
    if leaked:
        failures.append("%s: a command line holds the secret: %r" % (label, leaked[0][:200]))
    if "refused the client" not in stderr:
        failures.append("%s: the store did not log the refusals: %s" % (label, stderr[-1000:]))
    return file_mode, secret_file


def main():
    cli = sys.argv[1]
    require_libtorch(cli)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, SHARDLENS_TEST_FAULT="pause:1:1")
        for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT",
                    "SHARDLENS_STORE_SECRET", "SHARDLENS_STORE_SECRET_FILE"):
            env.pop(key, None)
        flags = ["--world-size", "2", "--batch-size", "500", "--limit-batches", "2",
                 "--sync", "double", "--timeout", "60"]

        def free_port():
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                return probe.getsockname()[1]

        # ShardLens's own launcher, its store on loopback: the launcher's secret.
        port = free_port()
        out = os.path.join(tmp, "launcher.slrun")
        attack_run(cli, "launcher", lambda: [subprocess.Popen(
            [cli, "run"] + flags + ["--master-addr", "127.0.0.1", "--master-port", str(port),
                                    "--out", out],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)],
            port, out, failures)

        # Ranks started by hand (as torchrun, srun or mpirun start them), no secret given:
        # rank 0 makes one and leaves it for the ranks of its host.
        port = free_port()
        out = os.path.join(tmp, "by-hand.slrun")

        def by_hand():
            procs = []
            for rank in (0, 1):
                e = dict(env, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2",
                         MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
                procs.append(subprocess.Popen(
                    [cli, "run"] + flags + (["--out", out] if rank == 0 else []), env=e,
                    stdout=subprocess.PIPE if rank == 0 else subprocess.DEVNULL,
                    stderr=subprocess.PIPE if rank == 0 else subprocess.DEVNULL, text=True))
            return procs

        mode, secret_file = attack_run(cli, "by hand", by_hand, port, out, failures)
        if mode != 0o600:
            failures.append("by hand: the host's secret file %s had mode %s while the run "
                            "lasted, not 0600" % (secret_file, oct(mode) if mode else None))
        if os.path.exists(secret_file):
            failures.append("by hand: %s is left after the run" % secret_file)
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
