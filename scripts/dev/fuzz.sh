#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang in build/fuzz, without Qt or CUDA (with
# LibTorch only for the .pt target, and only its reader), and runs each for a while on its
# seed corpus under AddressSanitizer and UBSan. New corpus entries go to
# build/fuzz/corpus/<target>, crashes to build/fuzz/findings/<target>/. Exits non-zero if
# any target found something.
# Usage: scripts/dev/fuzz.sh [SECONDS] [TARGET...]   (SECONDS: per target, default $FUZZ_SECONDS
#        or 60; TARGETs: npy npz csv idx scenario labels import runfile cells pt, default all;
#        pt needs LibTorch (Debian's libtorch-dev, installed when pt is asked for by name) and
#        is left out of the default list, with a note, where it is not installed)
#        FUZZ_PARALLEL=1 runs the targets at the same time (SECONDS of wall time each), e.g.
#        FUZZ_PARALLEL=1 nice -n 19 scripts/dev/fuzz.sh 600 on a shared machine.
#        FUZZ_CXX=clang++-16 builds with another clang (a new build/fuzz is needed to switch).
# Replay a finding: build/fuzz/fuzz/fuzz_<target> build/fuzz/findings/<target>/crash-...
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds="${FUZZ_SECONDS:-60}"
if [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then
  seconds="$1"
  shift
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(npy npz csv idx scenario labels import runfile cells)
  if dpkg-query -W -f='${Status}' libtorch-dev 2>/dev/null | grep -q "install ok installed"; then
    targets+=(pt)
  else
    echo "fuzz: no LibTorch (libtorch-dev): the pt target is left out"
  fi
fi
want_pt=0
for t in "${targets[@]}"; do [ "$t" != pt ] || want_pt=1; done

# Longest input per target: a few times the largest valid seed, so mutations can grow it.
declare -A max_len=([npy]=4096 [npz]=8192 [csv]=4096 [idx]=4096 [scenario]=4096
  [labels]=4096 [import]=8192 [runfile]=16384 [cells]=16384 [pt]=8192)
declare -A dict=([npy]=npy [labels]=npy [import]=npy [scenario]=json [runfile]=json [cells]=npy
  [pt]=pt)

for t in "${targets[@]}"; do
  [ -n "${max_len[$t]:-}" ] || { echo "fuzz: unknown target '$t'"; exit 2; }
done

# libFuzzer ships in clang's runtime package; the rest is what the minimal build needs.
PACKAGES=(clang libclang-rt-14-dev cmake ninja-build pkgconf nlohmann-json3-dev libcli11-dev
  libzip-dev zlib1g-dev)
# shellcheck source=scripts/build/install_packages.sh
source scripts/build/install_packages.sh
[ "$want_pt" = 0 ] || PACKAGES+=(libtorch-dev)
install_packages "${PACKAGES[@]}"

build=build/fuzz
# LibTorch is looked for only when the pt target is wanted: fuzz_pt builds the .pt reader
# (core/torch/pt_dump.cpp) alone over the io layer, never the plugin's other LibTorch files.
# A build directory configured without it is reconfigured when pt is asked for.
if [ ! -f "$build/build.ninja" ] ||
  { [ "$want_pt" = 1 ] && ! grep -q "fuzz_pt" "$build/build.ninja"; }; then
  torch=OFF
  [ "$want_pt" = 0 ] || torch=ON
  cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="${FUZZ_CXX:-clang++}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHARDLENS_FUZZ=ON -DSHARDLENS_BUILD_TESTS=OFF \
    -DSHARDLENS_WITH_QT=OFF -DSHARDLENS_WITH_TORCH=$torch -DSHARDLENS_WITH_CUDA=OFF \
    >"$build.log" 2>&1 || { cat "$build.log"; exit 1; }
  rm -f "$build.log"
  if [ "$want_pt" = 1 ] && ! grep -q "fuzz_pt" "$build/build.ninja"; then
    echo "fuzz: LibTorch was not found, so there is no pt target"
    exit 1
  fi
fi
# Only the targets asked for (the pt target's LibTorch headers are slow to compile).
cmake --build "$build" --target "${targets[@]/#/fuzz_}" -- -j"${SHARDLENS_JOBS:-2}"

# Runs one target; its log is build/fuzz/findings/<target>.log, its exit status libFuzzer's.
fuzz_target() {
  local t="$1"
  mkdir -p "$build/corpus/$t" "$build/findings/$t"
  # -malloc_limit_mb: the load budget the targets set (kFuzzLoadBudgetMb in fuzz/fuzz_util.h);
  # one allocation above it means a reader trusted a size it had not checked.
  local args=(-max_total_time="$seconds" -max_len="${max_len[$t]}" -timeout=10 -rss_limit_mb=2048
    -malloc_limit_mb="$(grep -oP 'kFuzzLoadBudgetMb = \K[0-9]+' fuzz/fuzz_util.h)"
    -artifact_prefix="$build/findings/$t/" -print_final_stats=1)
  [ -z "${dict[$t]:-}" ] || args+=(-dict="fuzz/dict/${dict[$t]}.dict")
  # The first directory receives new inputs; the committed seeds are only read.
  # pt: no leak checks. LibTorch 1.13 leaks on some files it refuses (PyTorchStreamReader's
  # miniz state, 152 bytes, when its constructor throws), and LeakSanitizer's scan of
  # LibTorch's heap after every input makes the target 75 times slower (6 against 454
  # inputs/s); AddressSanitizer and the malloc limit still apply.
  local asan="${ASAN_OPTIONS:-}"
  if [ "$t" = pt ]; then
    args+=(-detect_leaks=0)
    asan="${asan:+$asan:}detect_leaks=0"  # nor the check at exit
  fi
  ASAN_OPTIONS="$asan" "$build/fuzz/fuzz_$t" "${args[@]}" "$build/corpus/$t" "fuzz/corpus/$t" \
    >"$build/findings/$t.log" 2>&1
}

# Prints what a finished target found and its totals (executions, cov:, ft:, exec/s).
report_target() {
  local t="$1" rc="$2"
  echo "== fuzz_$t for ${seconds}s =="
  if [ "$rc" -ne 0 ]; then
    failed+=("$t")
    echo "fuzz_$t FOUND A PROBLEM: see $build/findings/$t.log and $build/findings/$t/"
    grep -m3 -E "ERROR|SUMMARY|fuzz:|terminate|malloc" "$build/findings/$t.log" || true
  fi
  grep -E "^#[0-9]+" "$build/findings/$t.log" | tail -1 || true
  grep -E "stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)" \
    "$build/findings/$t.log" || true
}

failed=()
if [ "${FUZZ_PARALLEL:-0}" = 1 ]; then
  declare -A pids=()
  for t in "${targets[@]}"; do
    fuzz_target "$t" &
    pids[$t]=$!
  done
  for t in "${targets[@]}"; do
    rc=0
    wait "${pids[$t]}" || rc=$?
    report_target "$t" "$rc"
  done
else
  for t in "${targets[@]}"; do
    rc=0
    fuzz_target "$t" || rc=$?
    report_target "$t" "$rc"
  done
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]}"
  exit 1
fi
echo "fuzz: every target ran ${seconds}s clean"
