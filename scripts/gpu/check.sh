#!/usr/bin/env bash
# Every GPU check in one command, for a machine with an NVIDIA GPU (nothing here needs the
# network): configure and build what the checks need, run the GPU tests (the kernel against
# a CPU bincount, NCCL collectives, `run --backend nccl` against Gloo), the bandwidth
# benchmark at n = 1e9 (GB/s as a fraction of the device's peak and of the H200's 4.8 TB/s)
# and, in the background meanwhile, scripts/oracles/modern_oracles.py (docs/GPU.md).
#
# Usage: scripts/gpu/check.sh BUNDLE        a folder made by scripts/gpu/bundle.sh: built
#                                           with the machine's CMake, ninja, nvcc and the
#                                           python3 torch's LibTorch, nothing from -dev packages
#        scripts/gpu/check.sh [BUILD_DIR]   this checkout with Debian's packages (default
#                                           build/gpu)
# Writes under $OUT (else BUILD_DIR/gpu-check/), at most 8 files: summary.txt (the results),
# gpu-check.log (every step), build.log, gpu-tests.log, bench.log, oracles.log and
# modern_oracles.json. Every step has a time limit, so the whole stays within
# GPU_CHECK_BUDGET_S (default 470 s; the device tool allows 8 minutes a command).
# Exit: 0 every check passed; 1 a check failed; 3 no CUDA device (everything before the
# first CUDA call worked: the dry run, scripts/gpu/dryrun.sh, expects this).
# Environment:
#   GPU_CHECK_BENCH_ARGS  extra cuda_bench flags (e.g. "--n 5e8 --repeats 3")
#   GPU_CHECK_JOBS        build parallelism (default: every core)
#   GPU_CHECK_BUDGET_S    the whole command's time (default 470)
#   GPU_CHECK_ORACLES     0 skips scripts/oracles/modern_oracles.py
#   GPU_CHECK_PYTHON      the python with torch (default: python3 on PATH)
#   GPU_CHECK_CUDA_ARCHITECTURES  e.g. 90-real (default: the GPU's, from nvidia-smi)
#   GPU_CHECK_TIME_SCALE  multiplies every step's limit (the dry run builds on 2 cores)
set -u -o pipefail

start_time=$SECONDS
budget=${GPU_CHECK_BUDGET_S:-470}
jobs=${GPU_CHECK_JOBS:-$(nproc)}
python=${GPU_CHECK_PYTHON:-python3}
time_scale=${GPU_CHECK_TIME_SCALE:-1}
h200_peak_gbs=4800

# --- where things are ---------------------------------------------------------------------
if [ -n "${1:-}" ] && [ -f "$1/MANIFEST.txt" ] && [ -d "$1/src" ] && [ -d "$1/deps" ]; then
  mode=bundle
  bundle=$(cd "$1" && pwd)
  src=$bundle/src
  build_dir=${GPU_CHECK_BUILD_DIR:-$bundle/build}
else
  mode=checkout
  src=$(cd "$(dirname "$0")/../.." && pwd)
  build_dir=${1:-build/gpu}
  case "$build_dir" in /*) ;; *) build_dir=$src/$build_dir ;; esac
fi
out=${OUT:-$build_dir/gpu-check}
mkdir -p "$out" "$build_dir"
log=$out/gpu-check.log
summary=$out/summary.txt
: >"$log"
: >"$summary"
failed=()
notes=()

say() { printf '%s\n' "$*" | tee -a "$log"; }
result() { printf '%s\n' "$*" | tee -a "$summary" >>"$log"; }
left() { echo $((budget - (SECONDS - start_time))); }
# step NAME LIMIT_S LOGFILE CMD...: runs CMD under a time limit (at most what the budget has
# left, less RESERVE_S for the steps after it), its output to LOGFILE and gpu-check.log.
reserve=0
step() {
  local name=$1 limit=$2 file=$3
  shift 3
  local have=$(($(left) - reserve))
  limit=$((limit * time_scale))
  [ "$limit" -gt "$have" ] && limit=$have
  if [ "$limit" -lt 5 ]; then
    say "=== $name: not run, the time budget is spent"
    failed+=("$name (no time left)")
    return 124
  fi
  say ""
  say "=== $name (limit ${limit}s): $*"
  local t0=$SECONDS
  timeout --kill-after=10 "$limit" "$@" 2>&1 | tee -a "$file" >>"$log"
  local rc=${PIPESTATUS[0]}
  [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && say "=== $name: TIMED OUT after ${limit}s"
  say "=== $name: exit $rc after $((SECONDS - t0)) s"
  return "$rc"
}
finish() {
  local code=$1
  if [ -n "${oracle_pid:-}" ] && kill -0 "$oracle_pid" 2>/dev/null; then
    local wait_s=$(($(left) - 5))
    say "waiting up to ${wait_s}s for scripts/oracles/modern_oracles.py"
    while [ "$wait_s" -gt 0 ] && kill -0 "$oracle_pid" 2>/dev/null; do
      sleep 1
      wait_s=$((wait_s - 1))
    done
    kill -- "$oracle_pid" 2>/dev/null && notes+=("modern_oracles.py stopped: the budget was spent")
  fi
  if [ -n "${oracle_pid:-}" ]; then
    wait "$oracle_pid" 2>/dev/null
    local orc=$?
    result "modern oracles: exit $orc ($(grep -c '^SKIPPED' "$out/oracles.log" 2>/dev/null || echo 0) parts skipped; see oracles.log, modern_oracles.json)"
    grep -E '^(SKIPPED|FAILED|done)' "$out/oracles.log" 2>/dev/null | sed 's/^/  /' >>"$summary"
    [ "$orc" -eq 0 ] || failed+=("modern oracles (exit $orc)")
  fi
  # Keep every log small enough to come back: its last 2 MB (errors are at the end).
  local f
  for f in "$out"/*.log; do
    if [ -f "$f" ] && [ "$(stat -c %s "$f")" -gt 2097152 ]; then
      tail -c 2097152 "$f" >"$f.tmp" && mv "$f.tmp" "$f"
      notes+=("$(basename "$f") cut to its last 2 MB")
    fi
  done
  for n in "${notes[@]}"; do result "NOTE: $n"; done
  result "elapsed: $((SECONDS - start_time)) s of a ${budget} s budget"
  if [ "$code" -eq 3 ]; then
    result "GPU check: NO CUDA DEVICE (configure, build and start worked; nothing GPU-side ran)"
  elif [ "${#failed[@]}" -eq 0 ] && [ "$code" -eq 0 ]; then
    result "GPU check: all steps passed"
  else
    result "GPU check: FAILED: ${failed[*]}"
    code=1
  fi
  exit "$code"
}

result "ShardLens GPU check ($mode), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
if [ "$mode" = bundle ]; then
  result "bundle: $bundle ($(head -1 "$bundle/MANIFEST.txt" | sed 's/.*sources at //'))"
else
  result "checkout: $src ($(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo 'no git'))"
fi

# --- the machine --------------------------------------------------------------------------
gpu_arch=${GPU_CHECK_CUDA_ARCHITECTURES:-}
if command -v nvidia-smi >/dev/null; then
  step nvidia-smi 20 /dev/null nvidia-smi \
    --query-gpu=index,name,memory.total,memory.used,driver_version,compute_cap --format=csv
  cap=$(timeout 10 nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
    head -1 | tr -d ' .')
  [ -n "$cap" ] && [ -z "$gpu_arch" ] && gpu_arch="${cap}-real"
  result "GPU: $(timeout 10 nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -1)"
else
  say "nvidia-smi not found (the CUDA runtime decides below whether there is a device)"
  result "GPU: nvidia-smi not found"
fi
nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)
result "tools: $(cmake --version 2>/dev/null | head -1), ninja $(ninja --version 2>/dev/null || echo missing), $(${CXX:-c++} --version 2>/dev/null | head -1), nvcc ${nvcc:-missing} $($nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' || true)"

# The python3 with torch: its LibTorch for the plugin, its NCCL (pip nvidia-nccl) when the
# CUDA toolkit has none.
torch_prefix="" nccl_dir=""
if command -v "$python" >/dev/null; then
  torch_info=$(timeout 60 "$python" - <<'EOF' 2>/dev/null
import os
try:
    import torch
    print("torch", torch.__version__, torch.utils.cmake_prefix_path)
except Exception as e:
    print("notorch", type(e).__name__)
try:
    import nvidia.nccl as m
    print("nccl", list(m.__path__)[0])
except Exception:
    pass
EOF
  )
  torch_prefix=$(awk '$1 == "torch" {print $3}' <<<"$torch_info")
  nccl_dir=$(awk '$1 == "nccl" {print $2}' <<<"$torch_info")
  result "python: $($python --version 2>&1), $(awk '$1 == "torch" {print "torch " $2} $1 == "notorch" {print "no torch"}' <<<"$torch_info")"
else
  result "python: $python not found"
fi

# --- modern oracles, in the background while the build runs (CPU only) ------------------
if [ "${GPU_CHECK_ORACLES:-1}" != 0 ] && command -v "$python" >/dev/null; then
  : >"$out/oracles.log"
  oracle_limit=$(($(left) - 20))
  [ "$oracle_limit" -gt 240 ] && oracle_limit=240
  timeout --kill-after=10 "$oracle_limit" nice -n 5 "$python" "$src/scripts/oracles/modern_oracles.py" \
    --out "$out" --time-limit $((oracle_limit - 15)) >"$out/oracles.log" 2>&1 &
  oracle_pid=$!
  say "modern_oracles.py started in the background (pid $oracle_pid, limit ${oracle_limit}s)"
fi

# --- configure ------------------------------------------------------------------------------
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake_args=(-S "$src" -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release
  -DSHARDLENS_WITH_QT=OFF -DSHARDLENS_BUILD_TESTS=ON)
prefix_path=""
if [ "$mode" = bundle ]; then
  prefix_path="$bundle/deps"
  cmake_args+=(-DSHARDLENS_GTEST_SOURCE_DIR="$bundle/deps/googletest"
    -DSHARDLENS_GLOO_INCLUDE_DIR="$bundle/deps/gloo/include")
fi
[ -n "$torch_prefix" ] && prefix_path="${prefix_path:+$prefix_path;}$torch_prefix"
[ -n "$prefix_path" ] && cmake_args+=(-DCMAKE_PREFIX_PATH="$prefix_path")
[ -n "$nvcc" ] && cmake_args+=(-DCMAKE_CUDA_COMPILER="$nvcc")
[ -n "$gpu_arch" ] && cmake_args+=(-DSHARDLENS_CUDA_ARCHITECTURES="$gpu_arch")
if [ -n "$nccl_dir" ] && [ -f "$nccl_dir/include/nccl.h" ]; then
  nccl_lib=$(ls "$nccl_dir"/lib/libnccl.so* 2>/dev/null | head -1)
  [ -n "$nccl_lib" ] && cmake_args+=(-DNCCL_INCLUDE_DIR="$nccl_dir/include"
    -DNCCL_LIBRARY="$nccl_lib")
fi

reserve=240 # build, tests and the benchmark after this
torch_on=1
if ! step configure 150 "$out/build.log" cmake "${cmake_args[@]}"; then
  notes+=("configure with LibTorch failed (build.log); configured again without it: no run --backend nccl test")
  torch_on=0
  rm -rf "$build_dir/CMakeCache.txt" "$build_dir/CMakeFiles"
  step configure-without-torch 90 "$out/build.log" cmake "${cmake_args[@]}" \
    -DSHARDLENS_WITH_TORCH=OFF || {
    failed+=("configure")
    finish 1
  }
fi
config_h=$build_dir/generated/shardlens/config.h
has() { grep -q "^#define SHARDLENS_HAS_$1 1" "$config_h"; }
has TORCH || torch_on=0
result "configure: CUDA $(has CUDA && echo on || echo OFF), LibTorch $(has TORCH && echo "on ($(grep -o 'SHARDLENS_TORCH_VERSION "[^"]*"' "$config_h" | cut -d'"' -f2))" || echo OFF)"
if ! has CUDA; then
  result "FAILED: this build has no CUDA backend (nvcc or NCCL not found; see build.log)"
  failed+=("no CUDA backend")
  finish 1
fi

# --- build ----------------------------------------------------------------------------------
reserve=120
targets=(cuda_tests cuda_bench)
[ "$torch_on" = 1 ] && targets+=(shardlens-cli)
if ! step build 420 "$out/build.log" cmake --build "$build_dir" --parallel "$jobs" \
  --target "${targets[@]}"; then
  if [ "$torch_on" = 1 ]; then
    # The LibTorch plugin is what differs most between torch versions: keep the kernel,
    # NCCL and bandwidth checks by building without it.
    notes+=("the build with LibTorch $torch_prefix failed (build.log); built again without it: no run --backend nccl test")
    torch_on=0
    step reconfigure-without-torch 60 "$out/build.log" cmake "${cmake_args[@]}" \
      -DSHARDLENS_WITH_TORCH=OFF
    step build-without-torch 300 "$out/build.log" cmake --build "$build_dir" --parallel \
      "$jobs" --target cuda_tests cuda_bench || {
      failed+=("build")
      finish 1
    }
  else
    failed+=("build")
    finish 1
  fi
fi
grep -E '^(FAILED|.*error:)' "$out/build.log" | head -5 >>"$log"

# Starting without a driver library must work (static CUDA runtime, NCCL dlopen'ed).
tests_bin=$build_dir/tests/cuda/cuda_tests
bench_bin=$build_dir/bench/cuda_bench
cli_bin=$build_dir/app/cli/shardlens-cli
for bin in "$tests_bin" "$bench_bin" "$cli_bin"; do
  [ -x "$bin" ] || continue
  if ldd "$bin" | grep -q 'not found'; then
    result "unresolved libraries in $bin: $(ldd "$bin" | grep 'not found' | tr '\n' ' ')"
    failed+=("ldd $(basename "$bin")")
  fi
done
[ -x "$cli_bin" ] && result "shardlens-cli: $("$cli_bin" --version 2>&1 | head -1)"

# --- the first CUDA call: is there a device? ------------------------------------------------
reserve=90
probe_log=$build_dir/device-probe.txt
: >"$probe_log"
step device-probe 30 "$probe_log" "$bench_bin" --n 1000 --repeats 1 --classes 10
probe=$?
if [ "$probe" -eq 77 ]; then
  result "device: $(grep -m1 'no CUDA device' "$probe_log")"
  # The tests still start and skip with the reason (this is what a CPU-only machine shows).
  step gpu-tests 60 "$out/gpu-tests.log" "$tests_bin" --gtest_color=no
  result "gpu tests without a device: exit $? ($(grep -c '^\[  SKIPPED \]' "$out/gpu-tests.log") skip lines)"
  grep -A1 ': Skipped$' "$out/gpu-tests.log" | grep -v -E ': Skipped$|^--$' | sort -u |
    head -5 | sed 's/^/  why skipped: /' >>"$summary"
  finish 3
fi
[ "$probe" -eq 0 ] || failed+=("device probe (exit $probe)")

# --- GPU tests (one process: one CUDA context; skips print their reason) -------------------
reserve=60
step gpu-tests 240 "$out/gpu-tests.log" "$tests_bin" --gtest_color=no
tests_rc=$?
[ "$tests_rc" -eq 0 ] || failed+=("gpu tests (exit $tests_rc)")
result "gpu tests: exit $tests_rc; $(grep -m1 -E '^\[  PASSED  \]' "$out/gpu-tests.log" || echo 'no PASSED line')"
grep -E '^\[ *(FAILED|SKIPPED) *\]' "$out/gpu-tests.log" | sort -u | sed 's/^/  /' >>"$summary"
# gtest prints "file:line: Skipped" and the reason on the next line.
grep -A1 ': Skipped$' "$out/gpu-tests.log" | grep -v -E ': Skipped$|^--$' | sort -u |
  head -10 | sed 's/^/  why skipped: /' >>"$summary"

# --- bandwidth at n = 1e9 --------------------------------------------------------------------
reserve=10
: >"$out/bench.log"
# shellcheck disable=SC2086  # GPU_CHECK_BENCH_ARGS is a list of flags on purpose
step bandwidth 120 "$out/bench.log" "$bench_bin" ${GPU_CHECK_BENCH_ARGS:-}
bench_rc=$?
[ "$bench_rc" -eq 0 ] || failed+=("bandwidth benchmark (exit $bench_rc)")
grep -E '^(device|peak|n =|NOTE|C =|target)' "$out/bench.log" | sed 's/^/  /' >>"$summary"
# The same GB/s against the H200's published 4.8 TB/s (docs/TARGETS.md: >= 50 %).
awk -v peak="$h200_peak_gbs" '/^C = / {for (i = 1; i <= NF; i++) if ($(i+1) == "GB/s") {
  printf "  %s %s: %.0f GB/s = %.1f%% of the H200 peak %d GB/s\n", $1 $2 $3, $4, $i,
  100 * $i / peak, peak}}' "$out/bench.log" | tee -a "$log" >>"$summary"
grep -q 'NOT met' "$out/bench.log" && failed+=("bandwidth below half of peak (docs/TARGETS.md)")

# --- torchrun of today's torch: its agent hosts the store, the ranks join it -----------------
# A run of 2 Gloo ranks under the machine's own torchrun, on 600 noise images written here,
# with the plugin built against the machine's torch: the run file must be complete and say
# torchrun started the ranks. Skipped when the plugin was not built.
if [ "$torch_on" = 1 ] && [ -x "$cli_bin" ]; then
  idx_dir=$build_dir/torchrun-data
  mkdir -p "$idx_dir"
  "$python" - "$idx_dir" <<'PYEOF' >>"$log" 2>&1
import os, struct, sys
d = sys.argv[1]
n = 600
with open(os.path.join(d, "noise-labels-idx1-ubyte"), "wb") as f:
    f.write(struct.pack(">II", 0x801, n) + bytes(i % 10 for i in range(n)))
with open(os.path.join(d, "noise-images-idx3-ubyte"), "wb") as f:
    f.write(struct.pack(">IIII", 0x803, n, 28, 28) + os.urandom(n * 28 * 28))
PYEOF
  torchrun_log=$build_dir/torchrun.txt
  : >"$torchrun_log"
  step torchrun 90 "$torchrun_log" "$python" -m torch.distributed.run --nproc-per-node 2 \
    --no-python "$cli_bin" run --world-size 2 --batch-size 64 --timeout 60 \
    --dataset "idx:$idx_dir/noise-labels-idx1-ubyte" --out "$build_dir/torchrun.slrun"
  torchrun_rc=$?
  diagnosis=$("$cli_bin" diagnose --run "$build_dir/torchrun.slrun" 2>&1)
  printf '%s\n' "$diagnosis" >>"$log"
  if [ "$torchrun_rc" -eq 0 ] && grep -q 'ranks started by torchrun' <<<"$diagnosis"; then
    result "torchrun (torch $(awk '$1 == "torch" {print $2}' <<<"$torch_info")): 2 ranks through the agent's store, run complete"
  else
    result "torchrun: FAILED (exit $torchrun_rc); last lines:"
    tail -n 5 "$torchrun_log" | sed 's/^/  /' >>"$summary"
    failed+=("torchrun run")
  fi
fi

# --- the recorder waits for no device per batch --------------------------------------------
# recorder.update given logits and the callback's metric watch, 20 batches at 100 and 1000
# classes under torch.cuda's sync debug mode "error" (any wait for the device raises).
if command -v "$python" >/dev/null &&
  timeout 60 "$python" -c 'import torch, torchmetrics; assert torch.cuda.is_available()' 2>/dev/null; then
  rec_log=$build_dir/recorder-sync.txt
  : >"$rec_log"
  if step recorder-sync 120 "$rec_log" "$python" "$src/bench/recorder_bench.py" --cuda-sync-check &&
    [ "$(grep -c 'syncs_per_batch=0' "$rec_log")" -eq 2 ]; then
    result "recorder: no device synchronisation per batch (100 and 1000 classes, logits and the metric watch)"
  else
    result "recorder sync check: FAILED; last lines:"
    tail -n 5 "$rec_log" | sed 's/^/  /' >>"$summary"
    failed+=("recorder sync check")
  fi
else
  result "recorder sync check: SKIPPED ($python lacks torch with CUDA, or torchmetrics)"
fi

finish 0
