#!/usr/bin/env bash
# GUI benchmark: time from a setting change to every view repainted, and the longest stall of
# the GUI thread meanwhile, at 10 classes x 4 ranks (10^4, 10^6, 10^7 samples) and at
# ImageNet's scale (1000 classes: 8 ranks x 50,000, 64 ranks x 10^6 and x 10^7); the paint
# time of a 1000 x 1000 heatmap; a cell's sample list at 10^8 samples (docs/TARGETS.md; the
# last needs about 1.5 GB of memory); at ImageNet's scale also `shardlens-cli export` of every
# figure in PNG, SVG and PDF, as a user types it: wall time and peak RSS (median of
# EXPORT_REPS runs; targets 3 s and 600 MB, docs/TARGETS.md); segmentation at Cityscapes' size
# (500 images of 1024 x 2048, 19 classes) and ADE20K's (2,000 images, 150 classes) on 8 ranks,
# and a segmentation cell's images with their pixels.
# Runs offscreen, so it works without a display. Not part of ctest: timings on a shared
# machine are noisy.
#
#   scripts/bench-ui.sh            # builds the default preset's ui_bench first
#   BUILD_DIR=build/x REPS=30 scripts/bench-ui.sh
#   ROWS=imagenet scripts/bench-ui.sh   # only the 1000-class rows (ROWS=small: the others)
#   ROWS=segmentation scripts/bench-ui.sh  # only the Cityscapes and ADE20K rows
#   ROWS=export scripts/bench-ui.sh     # only the export row
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build/default}
REPS=${REPS:-15}
JOBS=${JOBS:-2}
[[ -f "$BUILD_DIR/build.ninja" ]] || cmake --preset default >/dev/null
ninja -C "$BUILD_DIR" -j "$JOBS" ui_bench shardlens-cli >/dev/null
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
export SHARDLENS_LESSONS_DIR=${SHARDLENS_LESSONS_DIR:-$PWD/resources/lessons}
ROWS=${ROWS:-all}
if [[ "$ROWS" != export ]]; then
  "$BUILD_DIR/bench/ui_bench" "$REPS" "$ROWS" 2>&1 | grep -v "XDG_RUNTIME_DIR\|propagateSizeHints"
fi
[[ "$ROWS" == small || "$ROWS" == segmentation ]] && exit 0

# The export row: the command a user types, timed by GNU time (wall seconds, peak RSS in KiB;
# printed in MB of 2^20 bytes, as scripts/bench.sh prints it).
[[ -x /usr/bin/time ]] || { echo "bench-ui.sh: the export row needs GNU time (/usr/bin/time)" >&2; exit 2; }
EXPORT_REPS=${EXPORT_REPS:-3}
out_dir=$(mktemp -d)
trap 'rm -rf "$out_dir"' EXIT
export_cmd=("$BUILD_DIR/app/cli/shardlens-cli" export --dataset synthetic:classes=1000,per-class=1000
  --world-size 64 --batch-size 32 --shuffle --formats png,svg,pdf --out "$out_dir/figures")
walls=() rss=()
for ((i = 0; i < EXPORT_REPS; ++i)); do
  rm -rf "$out_dir/figures"
  /usr/bin/time -f "%e %M" -o "$out_dir/time" "${export_cmd[@]}" >/dev/null 2>"$out_dir/err" ||
    { cat "$out_dir/err" >&2; exit 1; }
  read -r wall kb <"$out_dir/time"
  walls+=("$wall") rss+=("$kb")
done
row() {  # row LABEL UNIT TARGET VALUES...: median, p90 and max as ui_bench prints them
  local label=$1 unit=$2 target=$3
  shift 3
  printf '%s\n' "$@" | sort -g | awk -v label="$label" -v unit="$unit" -v target="$target" '
    { v[NR] = $1 }
    END {
      med = v[int(NR / 2) + 1]; p90 = v[int(NR * 9 / 10) < NR ? int(NR * 9 / 10) + 1 : NR]
      printf "%-46s median %8.0f %s  p90 %8.0f %s  max %8.0f %s  target %6.0f %s  %s\n",
             label, med, unit, p90, unit, v[NR], unit, target, unit,
             med < target ? "MET" : "MISSED"
    }'
}
ms=() mb=()
for w in "${walls[@]}"; do ms+=("$(awk -v s="$w" 'BEGIN { print s * 1000 }')"); done
for k in "${rss[@]}"; do mb+=("$(awk -v k="$k" 'BEGIN { print k / 1024 }')"); done
echo "export: ${export_cmd[*]/$out_dir\/figures/DIR}"
row "export C=1000 W=64 n=1e6 png,svg,pdf: time" ms 3000 "${ms[@]}"
row "export C=1000 W=64 n=1e6 png,svg,pdf: peak RSS" MB 600 "${mb[@]}"
