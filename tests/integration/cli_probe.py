"""What the real-run tests ask of the CLI before they start: a build with LibTorch."""
import subprocess
import sys


def require_libtorch(cli):
    """Exits 77 (ctest SKIP) with the reason when `cli run` has no LibTorch plugin."""
    probe = subprocess.run([cli, "run", "--world-size", "1", "--dataset",
                            "synthetic:classes=2,per-class=1"], capture_output=True, text=True)
    if "no LibTorch" in probe.stderr:
        print("SKIP: shardlens-cli was built without LibTorch")
        sys.exit(77)
