#!/usr/bin/env bash
# Builds the LibTorch plugin (libshardlens_torch.so) against the torch of a Python
# environment (a pip wheel, e.g. the project's venv of scripts/venv.sh) instead of Debian's
# LibTorch 1.13, in its own build folder, linking the core of an existing build
# (core/torch/standalone). Only the wheel's CPU libraries are linked
# (cmake/TorchFromPython.cmake), so no CUDA toolkit is needed.
#
#   scripts/build/build-torch2-plugin.sh [PYTHON] [BUILD_DIR] [CORE_BUILD]
#     PYTHON      default build/venv/bin/python
#     BUILD_DIR   default build/torch2
#     CORE_BUILD  default build/default (configured and built: its CLI loads the plugin)
# Then: SHARDLENS_TORCH_PLUGIN=$BUILD_DIR/lib/shardlens/libshardlens_torch.so shardlens-cli run
#
# Without that python (no venv) it says so and exits 0, and the tests that need the plugin
# skip; under CI=true that is an error (exit 1), as in scripts/venv.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/build/ccache_env.sh
source scripts/build/ccache_env.sh
python=${1:-build/venv/bin/python}
dir=${2:-build/torch2}
core=${3:-build/default}
if ! "$python" -c 'import torch' 2>/dev/null; then
  echo "build-torch2-plugin.sh: $python cannot import torch (run scripts/venv.sh)" >&2
  if [ "${CI:-}" = true ]; then exit 1; fi
  exit 0
fi
abs() { (cd "$(dirname "$1")" && echo "$(pwd)/$(basename "$1")"); }
start=$(date +%s)
mkdir -p "$dir"
cmake -S core/torch/standalone -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DSHARDLENS_TORCH_PYTHON="$(abs "$python")" -DSHARDLENS_CORE_BUILD="$(abs "$core")" \
  >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log" >&2; exit 1; }
cmake --build "$dir" -j "${SHARDLENS_JOBS:-2}"
echo "build-torch2-plugin.sh: $dir/lib/shardlens/libshardlens_torch.so" \
  "(torch $("$python" -c 'import torch; print(torch.__version__)'), $(( $(date +%s) - start )) s)"
