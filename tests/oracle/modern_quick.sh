#!/bin/sh
# scripts/oracles/modern_oracles.py --quick with Debian's torch (1.13: randperm and
# DistributedSampler; Lightning and Accelerate are not packaged, so those parts must say
# SKIPPED with their reason), then the C++ reading of its vectors (modern_vector_tests)
# must pass on the randperm and sampler parts, not skip them.
# Usage: modern_quick.sh MODERN_VECTOR_TESTS MODERN_ORACLES_PY
PY=/usr/bin/python3
if [ ! -x "$PY" ] || ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "SKIPPED: $PY with torch not found; this test needs Debian's python3-torch"
  exit 77
fi
tests=$1
script=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$PY" "$script" --quick --out "$dir" >"$dir/log" 2>&1
rc=$?
cat "$dir/log"
[ "$rc" -eq 0 ] || { echo "FAILED: modern_oracles.py --quick exited $rc"; exit 1; }
for part in randperm distributed_sampler distributed_sampler_large; do
  grep -q "^done $part" "$dir/log" || { echo "FAILED: part $part did not run"; exit 1; }
done
for part in lightning accelerate; do
  grep -q -E "^(done|SKIPPED) $part" "$dir/log" || { echo "FAILED: no word on part $part"; exit 1; }
done
SHARDLENS_MODERN_VECTORS=$dir/modern_oracles.json "$tests" --gtest_color=no \
  --gtest_filter='ModernVectors.Randperm:ModernVectors.DistributedSampler*' >"$dir/tests" 2>&1
rc=$?
cat "$dir/tests"
[ "$rc" -eq 0 ] || { echo "FAILED: modern_vector_tests disagree with torch"; exit 1; }
if grep -q '^\[  SKIPPED \]' "$dir/tests"; then
  echo "FAILED: the randperm or sampler vectors were skipped, not checked"
  exit 1
fi
grep -q '^\[  PASSED  \] 3 tests' "$dir/tests" || { echo "FAILED: expected 3 tests to pass"; exit 1; }
echo "modern oracles (--quick, torch $("$PY" -c 'import torch; print(torch.__version__)')) agree with the C++ samplers"
