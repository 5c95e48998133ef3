#!/usr/bin/env bash
# Runs clang-tidy with the repository's .clang-tidy over the project's sources, using the
# compile_commands.json of a configured build tree (the top CMakeLists.txt exports it).
#
# Usage: scripts/dev/clang-tidy.sh [BUILD_DIR] [PATH...]
#   BUILD_DIR  build tree holding compile_commands.json (default: build/default)
#   PATH       files or folders to check, relative to the repository root (default: every
#              project source the build compiles; generated files and CUDA sources are left out)
# Environment: JOBS parallel clang-tidy processes (default: nproc); CLANG_TIDY the binary.
# Installs Debian's clang-tidy with apt-get when it is missing.
#
# Prints every finding once (a header's are reported by each file including it, deduplicated
# here), then a count per check; the full output is in BUILD_DIR/clang-tidy.log.
# Exit status: 0 when clang-tidy reports no error (warnings are listed, counted and pass);
# 1 when it does: a finding that .clang-tidy's WarningsAsErrors makes an error, or a file
# that does not compile; 2 on a usage or setup problem.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-build/default}
[ $# -gt 0 ] && shift
case $build in /*) ;; *) build=$root/$build ;; esac
db=$build/compile_commands.json
if [ ! -f "$db" ]; then
  echo "clang-tidy.sh: $db not found; configure that build first (cmake -S . -B ${build#"$root"/})" >&2
  exit 2
fi

tidy=${CLANG_TIDY:-clang-tidy}
if ! command -v "$tidy" >/dev/null 2>&1; then
  echo "clang-tidy.sh: $tidy not found; installing Debian's clang-tidy" >&2
  sudo=""
  [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo=sudo
  $sudo apt-get install -y clang-tidy >&2 || { echo "clang-tidy.sh: apt-get failed" >&2; exit 2; }
  command -v "$tidy" >/dev/null 2>&1 || { echo "clang-tidy.sh: still no $tidy" >&2; exit 2; }
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A database clang can use: GCC's precompiled headers (.gch) are unreadable to clang, so each
# "-include .../cmake_pch.hxx" points at a copy of that header with no .gch beside it. Only
# the project's own C++ sources, within the PATHs asked for.
python3 - "$root" "$build" "$db" "$work" "$@" <<'EOF'
import json, os, shlex, sys

root, build, db, work, *paths = sys.argv[1:]
wanted = [os.path.normpath(os.path.join(root, p)) for p in paths]
copies = {}

def copy_of(header):
    if header not in copies:
        copies[header] = os.path.join(work, f"pch{len(copies)}.hxx")
        with open(header) as src, open(copies[header], "w") as dst:
            dst.write(src.read())
    return copies[header]

out, files = [], []
for entry in json.load(open(db)):
    path = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
    if not path.startswith(root + os.sep) or path.startswith(build + os.sep):
        continue
    if not path.endswith((".cpp", ".cc")):  # .cu goes through nvcc
        continue
    if wanted and not any(path == w or path.startswith(w + os.sep) for w in wanted):
        continue
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    fixed = []
    for i, a in enumerate(args):
        if i > 0 and args[i - 1] == "-include" and a.endswith("cmake_pch.hxx"):
            a = copy_of(a)
        if a != "-Winvalid-pch":
            fixed.append(a)
    out.append({"directory": entry["directory"], "file": path, "arguments": fixed})
    if path not in files:
        files.append(path)
json.dump(out, open(os.path.join(work, "compile_commands.json"), "w"))
open(os.path.join(work, "files"), "w").write("\n".join(files) + ("\n" if files else ""))
EOF

count=$(wc -l <"$work/files")
if [ "$count" -eq 0 ]; then
  echo "clang-tidy.sh: no source of ${*:-the project} in $db" >&2
  exit 2
fi
jobs=${JOBS:-$(nproc)}
echo "clang-tidy.sh: $($tidy --version | grep -m1 -o 'version [0-9.]*'), $count files, $jobs jobs" >&2

mkdir "$work/out"
export tidy work root
# One clang-tidy per file; each leaves its output and exit status in $work/out.
# shellcheck disable=SC2016  # expanded by the inner bash
xargs -a "$work/files" -d '\n' -P "$jobs" -I{} bash -c '
  f=$1; key=$(printf "%s" "$f" | md5sum | cut -c1-16)
  "$tidy" -p "$work" --quiet --header-filter="^$root/(app|bench|core|fuzz|tests|ui)/" \
    --extra-arg=-Wno-unknown-warning-option "$f" >"$work/out/$key.txt" 2>&1
  echo $? >"$work/out/$key.rc"' _ {}

log=$build/clang-tidy.log
cat "$work"/out/*.txt >"$log"
findings=$(grep -E "^/[^ ]+:[0-9]+:[0-9]+: (warning|error): " "$log" | sort -u || true)
[ -n "$findings" ] && printf '%s\n' "$findings"
n=$(printf '%s' "$findings" | grep -c . || true)
errors=$(printf '%s' "$findings" | grep -c ": error: " || true)
failed=$(cat "$work"/out/*.rc | grep -vcx 0 || true)
echo
echo "clang-tidy.sh: $n finding(s), $errors error(s); $failed of $count files failed; log: $log"
if [ "$n" -gt 0 ]; then
  printf '%s\n' "$findings" | grep -o '\[[^]]*\]$' | sort | uniq -c | sort -rn
fi
[ "$failed" -eq 0 ] && [ "$errors" -eq 0 ]
