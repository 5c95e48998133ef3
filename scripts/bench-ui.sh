#!/usr/bin/env bash
# GUI benchmark: time from a setting change to every view repainted, and the longest stall of
# the GUI thread meanwhile, at 10 classes x 4 ranks (10^4, 10^6, 10^7 samples) and at
# ImageNet's scale (1000 classes: 8 ranks x 50,000, 64 ranks x 10^6 and x 10^7); the paint
# time of a 1000 x 1000 heatmap; a cell's sample list at 10^8 samples (docs/TARGETS.md; the
# last needs about 1.5 GB of memory).
# Runs offscreen, so it works without a display. Not part of ctest: timings on a shared
# machine are noisy.
#
#   scripts/bench-ui.sh            # builds the default preset's ui_bench first
#   BUILD_DIR=build/x REPS=30 scripts/bench-ui.sh
#   ROWS=imagenet scripts/bench-ui.sh   # only the 1000-class rows (ROWS=small: the others)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build/default}
REPS=${REPS:-15}
JOBS=${JOBS:-2}
[[ -f "$BUILD_DIR/build.ninja" ]] || cmake --preset default >/dev/null
ninja -C "$BUILD_DIR" -j "$JOBS" ui_bench >/dev/null
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
export SHARDLENS_LESSONS_DIR=${SHARDLENS_LESSONS_DIR:-$PWD/resources/lessons}
"$BUILD_DIR/bench/ui_bench" "$REPS" "${ROWS:-all}" 2>&1 | grep -v "XDG_RUNTIME_DIR\|propagateSizeHints"
