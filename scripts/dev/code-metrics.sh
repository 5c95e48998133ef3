#!/bin/bash
# How changeable the code is, in figures: the largest functions (lizard, from PyPI into a
# cached venv of its own) and, when the `duplicates` tool is on PATH, the pairs of places
# that repeat each other. Usage: scripts/dev/code-metrics.sh [N largest functions, default 15]
set -euo pipefail
cd "$(dirname "$0")/../.."
most=${1:-15}
reqs=requirements/tools.txt
venv="${XDG_CACHE_HOME:-$HOME/.cache}/shardlens/tools-$(sha256sum "$reqs" | cut -c1-8)"
if [[ ! -x "$venv/bin/lizard" ]]; then
  python3 -m venv "$venv.tmp"
  "$venv.tmp/bin/pip" install --quiet -r "$reqs"
  rm -rf "$venv" && mv "$venv.tmp" "$venv"
  # the venv's scripts name their interpreter by the temporary path
  sed -i "1s|$venv.tmp|$venv|" "$venv/bin/lizard"
fi
echo "# largest functions (lines of code, name@lines@file) in core/ ui/ app/"
"$venv/bin/lizard" -l cpp core ui app --csv 2>/dev/null | python3 -c '
import csv, sys
rows = sorted(csv.reader(sys.stdin), key=lambda r: -int(r[0]))
for r in rows[:int(sys.argv[1])]:
    print(r[0], r[7], "(%s:%s)" % (r[6], r[9]))' "$most"
echo "# functions over 60 lines: $("$venv/bin/lizard" -l cpp core ui app --csv 2>/dev/null |
  awk -F, '$1 > 60' | wc -l)"
if command -v duplicates > /dev/null; then
  echo "# duplicates"
  duplicates --most 200 --seconds 120 | awk 'NR == 1'
fi
