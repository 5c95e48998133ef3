#!/usr/bin/env bash
# scripts/gpu/bundle.sh makes a bundle under 64 MiB that holds the sources, the vendored
# headers with their CMake package files, libzip's shared libraries resolving each other
# through RUNPATH $ORIGIN (and nothing but glibc and the C++ runtime from the system), the
# GoogleTest sources, Gloo's headers, and the one command; the tarball unpacks to the same.
# Usage: gpu_bundle_test.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
bundle=$work/bundle
"$src/scripts/gpu/bundle.sh" "$bundle" >"$work/log" 2>&1 || { cat "$work/log"; exit 1; }
cat "$work/log"
fail() { echo "FAILED: $*"; exit 1; }
bytes=$(du -sb "$bundle" | cut -f1)
[ "$bytes" -lt $((64 * 1024 * 1024)) ] || fail "bundle is $bytes bytes"
for f in gpu-check MANIFEST.txt src/CMakeLists.txt src/scripts/gpu/check.sh \
  src/scripts/oracles/modern_oracles.py src/integrations/python/shardlens_recorder/__init__.py \
  src/core/cuda/confusion_kernel.cu deps/include/nlohmann/json.hpp deps/include/CLI/CLI.hpp \
  deps/include/zip.h deps/include/zipconf.h deps/include/zlib.h \
  deps/share/cmake/nlohmann_json/nlohmann_jsonConfig.cmake deps/share/cmake/CLI11/CLI11Config.cmake \
  deps/lib/libzip.so deps/lib/libz.so deps/googletest/CMakeLists.txt \
  deps/gloo/include/gloo/algorithm.h; do
  [ -e "$bundle/$f" ] || fail "$f missing"
done
[ -x "$bundle/gpu-check" ] || fail "gpu-check is not executable"
# The sources are the checkout's: the same file list git knows.
want=$(cd "$src" && git ls-files --cached --others --exclude-standard | while read -r f; do
  [ -f "$f" ] && echo "$f"; done | sort | wc -l)
have=$(cd "$bundle/src" && find . -type f | wc -l)
[ "$want" -eq "$have" ] || fail "src has $have files, the checkout $want"
# Every vendored library finds its dependencies beside itself, or is glibc / C++ runtime.
for lib in "$bundle"/deps/lib/*.so.*; do
  [ "$(patchelf --print-rpath "$lib")" = '$ORIGIN' ] || fail "$lib: RUNPATH is not \$ORIGIN"
  needed=$(objdump -p "$lib" | awk '/NEEDED/ {print $2}')
  for n in $needed; do
    case "$n" in libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | ld-linux*) continue ;; esac
    [ -e "$bundle/deps/lib/$n" ] || fail "$(basename "$lib") needs $n, which the bundle lacks"
  done
done
# The tarball is the folder.
mkdir "$work/untar"
tar -xzf "$bundle.tar.gz" -C "$work/untar"
diff -r "$bundle" "$work/untar/bundle" >/dev/null || fail "the tarball differs from the folder"
echo "gpu bundle: $((bytes / 1024)) KiB, $(find "$bundle" -type f | wc -l) files: complete"
