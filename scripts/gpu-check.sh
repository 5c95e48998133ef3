#!/usr/bin/env bash
# Every GPU check in one command, for a machine with an NVIDIA GPU (nothing here needs the
# network): configure and build what the checks need, run the GPU tests (the kernel against
# a CPU bincount, NCCL collectives, `run --backend nccl` against Gloo) and the bandwidth
# benchmark (achieved GB/s as a fraction of the device's peak).
#
# Usage: scripts/gpu-check.sh [BUILD_DIR]      (default build/gpu)
# Writes everything it prints to $OUT/gpu-check.txt (BUILD_DIR/gpu-check.txt without OUT) as
# it goes, so a run cut short still leaves its results. Exits non-zero when any step fails. Environment:
#   GPU_CHECK_BENCH_ARGS  extra cuda_bench flags (e.g. "--n 5e8 --repeats 3")
#   GPU_CHECK_JOBS        build parallelism (default: every core)
set -u -o pipefail

cd "$(dirname "$0")/.." || exit 2
build_dir=${1:-build/gpu}
jobs=${GPU_CHECK_JOBS:-$(nproc)}
if [ -n "${OUT:-}" ]; then
  log=$OUT/gpu-check.txt
else
  log=$build_dir/gpu-check.txt
fi
mkdir -p "$(dirname "$log")"
: >"$log"
failed=()

say() { printf '%s\n' "$*" | tee -a "$log"; }
# Runs a step, its output to the terminal and the log; records its failure by name.
step() {
  local name=$1
  shift
  say ""
  say "=== $name: $*"
  local start=$SECONDS
  "$@" 2>&1 | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  say "=== $name: exit $rc after $((SECONDS - start)) s"
  [ "$rc" -eq 0 ] || failed+=("$name (exit $rc)")
  return "$rc"
}

say "ShardLens GPU check, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null || echo 'no git')"
if command -v nvidia-smi >/dev/null; then
  step nvidia-smi nvidia-smi --query-gpu=index,name,memory.total,memory.used,driver_version \
    --format=csv
else
  say "nvidia-smi not found (the CUDA runtime decides below whether there is a device)"
fi

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# No GUI; LibTorch when installed (the CLI comparison with Gloo needs it, and skips without).
if ! step configure cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DSHARDLENS_WITH_QT=OFF -DSHARDLENS_BUILD_TESTS=ON; then
  say "FAILED: configure"
  exit 1
fi
if ! grep -q '^#define SHARDLENS_HAS_CUDA 1' "$build_dir/generated/shardlens/config.h"; then
  say "FAILED: this build has no CUDA backend (nvcc or NCCL not found under /usr/local/cuda)"
  exit 1
fi
targets=(cuda_tests cuda_bench)
grep -q '^#define SHARDLENS_HAS_TORCH 1' "$build_dir/generated/shardlens/config.h" &&
  targets+=(shardlens-cli)
if ! step build cmake --build "$build_dir" --parallel "$jobs" --target "${targets[@]}"; then
  say "FAILED: build"
  exit 1
fi

# Starting without a driver library must work (static CUDA runtime, NCCL dlopen'ed).
for bin in "$build_dir/tests/cuda/cuda_tests" "$build_dir/bench/cuda_bench" \
  "$build_dir/app/cli/shardlens-cli"; do
  [ -x "$bin" ] || continue
  if ldd "$bin" | grep -q 'not found'; then
    say "unresolved libraries in $bin:"
    ldd "$bin" | grep 'not found' | tee -a "$log"
    failed+=("ldd $bin")
  fi
done

# The GPU tests in one process (one CUDA context; skips print their reason). ctest -L gpu
# runs the same tests one process each.
step gpu-tests "$build_dir/tests/cuda/cuda_tests" --gtest_color=no
skipped=$(grep -c '^\[  SKIPPED \]' "$log" || true)
[ "$skipped" -gt 0 ] && say "NOTE: $skipped GPU test lines report SKIPPED (see the reasons above)"

# shellcheck disable=SC2086  # GPU_CHECK_BENCH_ARGS is a list of flags on purpose
step bandwidth "$build_dir/bench/cuda_bench" ${GPU_CHECK_BENCH_ARGS:-}
if grep -q 'NOT met' "$log"; then
  failed+=("bandwidth below half of peak (DESIGN target)")
fi

say ""
if [ "${#failed[@]}" -eq 0 ]; then
  say "GPU check: all steps passed"
  exit 0
fi
say "GPU check: FAILED steps: ${failed[*]}"
exit 1
