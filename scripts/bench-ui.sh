#!/usr/bin/env bash
# GUI benchmark: time from a setting change to every view repainted at 10,000, 1,000,000 and
# 10,000,000 samples, the paint time of a 1000 x 1000 heatmap, and a cell's sample list at
# 10^8 samples (docs/TARGETS.md; the last needs about 1.5 GB of memory).
# Runs offscreen, so it works without a display. Not part of ctest: timings on a shared
# machine are noisy.
#
#   scripts/bench-ui.sh            # builds the default preset's ui_bench first
#   BUILD_DIR=build/x REPS=30 scripts/bench-ui.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build/default}
REPS=${REPS:-15}
JOBS=${JOBS:-2}
[[ -f "$BUILD_DIR/build.ninja" ]] || cmake --preset default >/dev/null
ninja -C "$BUILD_DIR" -j "$JOBS" ui_bench >/dev/null
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
export SHARDLENS_LESSONS_DIR=${SHARDLENS_LESSONS_DIR:-$PWD/resources/lessons}
"$BUILD_DIR/bench/ui_bench" "$REPS" 2>&1 | grep -v XDG_RUNTIME_DIR
