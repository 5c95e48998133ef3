#!/usr/bin/env bash
# Makes (or reuses) the project's Python virtual environment with the frameworks ShardLens
# reproduces (requirements/frameworks.txt: torch 2.x, Lightning, torchmetrics, Accelerate,
# numpy from PyPI) and points build/venv at it.
#
# The venv lives outside the checkout, in ${SHARDLENS_VENV_ROOT:-~/.cache/shardlens}, keyed by
# the hash of the requirements file and the interpreter's version, so every clone on this
# machine (CI's fresh clones too) reuses it; a changed pin makes a new one. It is built in a
# temporary folder and renamed when complete, so an interrupted install is never reused.
#
# Without it the framework oracles skip with the reason; under CI=true they fail, and so
# does this script.
set -euo pipefail
cd "$(dirname "$0")/.."

req=requirements/frameworks.txt
python=/usr/bin/python3  # Debian's interpreter (python3-venv), the same on every machine
root=${SHARDLENS_VENV_ROOT:-$HOME/.cache/shardlens}
key=$({ cat "$req"; "$python" -c 'import sys; print(sys.version)'; } | sha256sum | cut -c1-16)
venv=$root/venv-$key
link=build/venv

fail() {
  echo "venv.sh: $*" >&2
  rm -f "$link"
  if [ "${CI:-}" = true ]; then exit 1; fi
  echo "venv.sh: the framework oracles will skip (CI=true makes this an error)" >&2
  exit 0
}

mkdir -p build "$root"
# One install at a time per venv: a second clone waits for the first, then reuses it.
exec 9>"$root/.lock-$key"
flock 9
if [ ! -f "$venv/.complete" ]; then
  echo "venv.sh: installing $(grep -cvE '^(#|$)' "$req") pinned frameworks from PyPI into $venv"
  start=$(date +%s)
  rm -rf "$venv.partial"
  "$python" -m venv "$venv.partial" || fail "cannot create a venv with $python (python3-venv)"
  if ! "$venv.partial/bin/python" -m pip install --quiet --disable-pip-version-check \
      --no-input -r "$req"; then
    rm -rf "$venv.partial"
    fail "pip could not install $req from PyPI"
  fi
  rm -rf "$venv"
  mv "$venv.partial" "$venv"
  # The scripts' shebangs and activate name the build path: point them at the final one.
  grep -rlF "$venv.partial" "$venv/bin" 2>/dev/null | xargs -r sed -i "s#$venv.partial#$venv#g"
  touch "$venv/.complete"
  echo "venv.sh: installed in $(( $(date +%s) - start )) s, $(du -sh "$venv" | cut -f1) on disk"
fi
ln -sfn "$venv" "$link"
"$link/bin/python" - <<'PY' || fail "the venv at $venv does not import its frameworks"
import importlib.metadata as m
print("venv.sh: " + ", ".join("%s %s" % (p, m.version(p)) for p in
      ("torch", "lightning", "torchmetrics", "accelerate", "numpy")))
PY
