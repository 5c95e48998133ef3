"""The torch parts of scripts/oracles/modern_oracles.py (randperm, DistributedSampler shards, the
large-sampler summaries) drawn live from the venv's torch 2.x at test time, then read by the
C++ test that reads the committed vectors (tests/core/test_modern_vectors.cpp): all three
tests must pass, none may skip.

Usage: modern_live.py MODERN_VECTOR_TESTS MODERN_ORACLES_PY
"""
import os
import re
import subprocess
import sys
import tempfile
import time

import frameworks

frameworks.require_venv()

PARTS = ("randperm", "distributed_sampler", "distributed_sampler_large")


def main():
    tests, script = sys.argv[1], sys.argv[2]
    t0 = time.time()
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run([sys.executable, script, "--quick", "--out", d, "--only",
                            ",".join(PARTS)], capture_output=True, text=True,
                           env=dict(os.environ, OMP_NUM_THREADS="1"))
        print(p.stdout + p.stderr)
        assert p.returncode == 0, "modern_oracles.py exited %d" % p.returncode
        for part in PARTS:
            assert re.search(r"^done %s " % part, p.stdout, re.M), "part %s did not run" % part
        env = dict(os.environ, SHARDLENS_MODERN_VECTORS=os.path.join(d, "modern_oracles.json"))
        env.pop("SHARDLENS_FULL_SIZE", None)
        g = subprocess.run([tests, "--gtest_color=no",
                            "--gtest_filter=ModernVectors.Randperm:ModernVectors.DistributedSampler*"],
                           capture_output=True, text=True, env=env)
        print(g.stdout + g.stderr)
        assert g.returncode == 0, "modern_vector_tests disagree with torch"
        assert "[  SKIPPED ]" not in g.stdout, "a part was skipped, not checked"
        assert "[  PASSED  ] 3 tests" in g.stdout, "expected 3 tests to pass"
    import torch
    print("modern vectors drawn live from torch %s agree with the C++ samplers (%.1f s)"
          % (torch.__version__, time.time() - t0))


if __name__ == "__main__":
    main()
