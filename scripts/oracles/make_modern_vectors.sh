#!/usr/bin/env bash
# Regenerates tests/data/reference/modern/modern_oracles.json, the vectors of today's torch,
# Lightning, torchmetrics and Accelerate that modern_vector_tests checks in every test run,
# with the project's venv (scripts/venv.sh: the pins of requirements/frameworks.txt). Every
# part runs, at full size (torch.randperm at n = 214,748,363 and 214,748,364, minutes on a
# busy 2-core machine, about 2 GB); DistributedSampler is iterated for real up to
# SHARDLENS_ORACLE_ITER_MAX_N (default 2e7: its list costs ~36 bytes an index).
# Commit the file when a pin changes.
set -euo pipefail
cd "$(dirname "$0")/../.."
python=${1:-build/venv/bin/python}
out=tests/data/reference/modern
"$python" -c 'import torch, lightning, torchmetrics, accelerate' ||
  { echo "make_modern_vectors.sh: $python lacks the frameworks (run scripts/venv.sh)" >&2; exit 1; }
mkdir -p "$out"
OMP_NUM_THREADS=1 "$python" scripts/oracles/modern_oracles.py --out "$out" --time-limit 3600
"$python" - "$out/modern_oracles.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
bad = {k: v for k, v in doc["parts"].items() if v.get("status") != "ok"}
assert not bad, "parts not ok: %s" % bad
print("make_modern_vectors.sh: every part ok with %s" % doc["versions"])
PY
