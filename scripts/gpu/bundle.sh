#!/usr/bin/env bash
# Prepares everything a GPU check needs on a bare machine in one folder under 64 MiB (and a
# tarball of it): this checkout's sources plus the libraries that a machine without Debian's
# -dev packages lacks, so that scripts/gpu/check.sh BUNDLE builds there with that machine's
# own CMake, ninja, nvcc and torch (docs/GPU.md).
#
# Usage: scripts/gpu/bundle.sh [BUNDLE_DIR]        (default build/gpu-bundle)
# Writes BUNDLE_DIR and BUNDLE_DIR.tar.gz; exits non-zero when a part is missing or the
# folder is 64 MiB or more (what the device tool carries in all).
#
# Why sources and not binaries: the GPU machine's LibTorch is the torch 2.x of its python
# (LibTorch 1.13 alone is far over 64 MiB), and its nvcc builds the kernel for the GPU that
# is there, so the plugin and the kernel are built there. What it cannot get there is what
# Debian's -dev packages give here, vendored below:
#   include/ + share/cmake/  nlohmann-json and CLI11 (header-only, with their CMake configs)
#   include/ + lib/          libzip and zlib headers, libzip.so.4 with the shared libraries
#                            it needs beside it (ldd; RUNPATH $ORIGIN), glibc excluded: the
#                            machine's is newer than Debian 12's 2.36, which these need
#   googletest/              Debian's GoogleTest sources (/usr/src/googletest), built there
#                            with the machine's compiler, so no C++ ABI is assumed
#   gloo/include/            Debian's Gloo headers, used only where the machine's LibTorch
#                            ships none (ProcessGroupGloo.hpp includes them)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
bundle=${1:-build/gpu-bundle}
limit_bytes=$((64 * 1024 * 1024))
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
libdir=/usr/lib/$multiarch

# shellcheck source=scripts/build/install_packages.sh
source scripts/build/install_packages.sh
install_packages nlohmann-json3-dev libcli11-dev libzip-dev zlib1g-dev googletest \
  libgloo-dev patchelf git

fail() {
  echo "gpu-bundle: $*" >&2
  exit 1
}
need() { [ -e "$1" ] || fail "$1 is missing (is its Debian package installed?)"; }

rm -rf "$bundle" "$bundle.tar.gz"
mkdir -p "$bundle"/{src,deps/include,deps/lib,deps/share/cmake,deps/gloo/include}
deps=$bundle/deps

# 1. The sources: every file git tracks or would track (untracked, not ignored), as they
# are in the working tree, so a bundle made before committing tests what is there.
git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do
    [ -f "$f" ] && printf '%s\0' "$f"
  done | tar --null -T - -cf - | tar -xf - -C "$bundle/src"
commit=$(git rev-parse --short HEAD)
git diff --quiet HEAD -- 2>/dev/null || commit="$commit+changes"

# 2. Header-only libraries with their CMake package files (they locate their include/
# three folders above themselves, so they work from any prefix).
for d in /usr/include/nlohmann /usr/include/CLI /usr/share/cmake/nlohmann_json \
  /usr/share/cmake/CLI11; do
  need "$d"
done
cp -r /usr/include/nlohmann /usr/include/CLI "$deps/include/"
cp -r /usr/share/cmake/nlohmann_json /usr/share/cmake/CLI11 "$deps/share/cmake/"

# 3. libzip and zlib: headers, and the shared libraries with what they load (not glibc, the
# C++ runtime or the dynamic loader, which the machine has). The copies find each other
# through RUNPATH $ORIGIN; the binaries built there find them through CMake's build RPATH.
for f in /usr/include/zip.h /usr/include/zipconf.h /usr/include/zlib.h /usr/include/zconf.h; do
  need "$f"
  cp "$f" "$deps/include/"
done
system_lib() {
  case "$(basename "$1")" in
    libc.so* | libm.so* | libdl.so* | librt.so* | libpthread.so* | ld-linux* | libgcc_s.so* | \
      libstdc++.so* | linux-vdso*) return 0 ;;
  esac
  return 1
}
copy_with_deps() {
  local lib=$1 real name dep
  real=$(readlink -f "$lib")
  name=$(objdump -p "$real" | awk '/SONAME/ {print $2}')
  [ -n "$name" ] || name=$(basename "$lib")
  [ -e "$deps/lib/$name" ] && return 0
  cp "$real" "$deps/lib/$name"
  chmod u+w "$deps/lib/$name"
  patchelf --set-rpath '$ORIGIN' "$deps/lib/$name"
  ldd "$real" | awk '/=> \// {print $3}' | while read -r dep; do
    system_lib "$dep" || copy_with_deps "$dep"
  done
}
need "$libdir/libzip.so"
need "$libdir/libz.so"
copy_with_deps "$libdir/libzip.so"
copy_with_deps "$libdir/libz.so"
# The link-time names CMake's find_library looks for.
ln -sf "$(objdump -p "$(readlink -f "$libdir/libzip.so")" | awk '/SONAME/ {print $2}')" \
  "$deps/lib/libzip.so"
ln -sf libz.so.1 "$deps/lib/libz.so"

# 4. GoogleTest sources and Gloo headers.
need /usr/src/googletest/CMakeLists.txt
cp -r /usr/src/googletest "$deps/googletest"
need /usr/include/gloo/algorithm.h
cp -r /usr/include/gloo "$deps/gloo/include/"

# 5. What it is, and the one command that runs it.
ver() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo unknown; }
cat >"$bundle/MANIFEST.txt" <<EOF
ShardLens GPU bundle (scripts/gpu/bundle.sh), sources at $commit, made $(date -u +%Y-%m-%dT%H:%M:%SZ)
Run on the GPU machine:  $(basename "$bundle")/gpu-check      (writes under \$OUT; docs/GPU.md)
Vendored from Debian $(cut -d. -f1 /etc/debian_version 2>/dev/null || echo '?') ($multiarch):
  nlohmann-json3-dev $(ver nlohmann-json3-dev), libcli11-dev $(ver libcli11-dev), libzip-dev $(ver libzip-dev),
  zlib1g-dev $(ver zlib1g-dev), googletest $(ver googletest), libgloo-dev $(ver libgloo-dev)
  shared libraries in deps/lib: $(cd "$deps/lib" && find . -maxdepth 1 -type f -printf '%f ' | sort)
Built there with the machine's own tools: CMake, ninja, a C++20 compiler, nvcc (the kernel and
the NCCL backend), and the python3 torch's LibTorch (TorchConfig.cmake) for the plugin.
No binaries built here are shipped: binaries (glibc 2.36, static CUDA runtime, NCCL dlopen'ed)
would run there and cover the kernel, NCCL and bandwidth checks, but not run --backend nccl
against Gloo, whose plugin needs a LibTorch (1.13 is far over 64 MiB; the machine's 2.x needs a
build there), so the sources are built there, which covers all of them.
Covers, when the machine has them:
  kernel tests       cuda_tests (CUDA kernel against a CPU bincount)            needs nvcc + a GPU
  NCCL tests         cuda_tests (NCCL collectives, 1..N GPUs)                    needs NCCL (CUDA toolkit or pip nvidia-nccl)
  run --backend nccl cuda_tests' CLI test, NCCL against Gloo                     needs torch's LibTorch too
  bandwidth          cuda_bench at n = 1e9, as a fraction of the H200's 4.8 TB/s
  modern oracles     scripts/oracles/modern_oracles.py with the machine's torch, Lightning, torchmetrics, Accelerate
EOF
cat >"$bundle/gpu-check" <<'EOF'
#!/usr/bin/env bash
# Every GPU check from this bundle (src/scripts/gpu/check.sh; docs/GPU.md).
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/src/scripts/gpu/check.sh" "$here" "$@"
EOF
chmod +x "$bundle/gpu-check"

bytes=$(du -sb "$bundle" | cut -f1)
tar -C "$(dirname "$bundle")" -czf "$bundle.tar.gz" "$(basename "$bundle")"
tar_bytes=$(stat -c %s "$bundle.tar.gz")
echo "gpu-bundle: $bundle: $((bytes / 1024)) KiB in $(find "$bundle" -type f | wc -l) files" \
  "(limit $((limit_bytes / 1024)) KiB); $bundle.tar.gz: $((tar_bytes / 1024)) KiB"
[ "$bytes" -lt "$limit_bytes" ] || fail "$bundle is $bytes bytes, not under 64 MiB"
sed -n '/^No binaries/,$p' "$bundle/MANIFEST.txt"
echo "Run it on the GPU machine as: $bundle/gpu-check   (carry $bundle; see docs/GPU.md)"
cd "$root"
