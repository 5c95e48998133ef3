#!/usr/bin/env bash
# Builds ShardLens (full build and the minimal build without Qt/LibTorch/CUDA) and runs
# every test with ctest. Oracle tests use Debian's python3-torch (/usr/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh default minimal
export QT_QPA_PLATFORM=offscreen
status=0
echo "== minimal build (core and CLI only) =="
ctest --preset minimal -j2 --timeout 600 || status=1
echo "== full build =="
ctest --preset default -j2 --timeout 600 || status=1
exit $status
