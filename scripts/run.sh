#!/usr/bin/env bash
# Builds the ShardLens application (scripts/setup.sh --app: its packages only, build/app, no
# tests) and opens it on the seed lesson. Without a display (or without the Qt build) it runs
# the seed lesson with the CLI, prints the report and writes the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --app
bin=build/app/app
if [ -x "$bin/gui/shardlens" ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; }; then
  exec "$bin/gui/shardlens" --preset seed-lesson "$@"
fi
"$bin/cli/shardlens-cli" simulate --preset seed-lesson "$@"
out=out/seed-lesson
if "$bin/cli/shardlens-cli" export --preset seed-lesson --out "$out" \
    --formats csv,json,png,svg,pdf >/dev/null 2>&1; then
  echo "No display: figures and data of the seed lesson written to $out/"
else
  "$bin/cli/shardlens-cli" export --preset seed-lesson --out "$out" --formats csv,json >/dev/null
  echo "No display: data of the seed lesson written to $out/ (this build has no figure renderer)"
fi
