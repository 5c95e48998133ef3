#!/usr/bin/env bash
# The GPU check's dry run (docs/GPU.md): the bundle of scripts/gpu/bundle.sh run by
# scripts/gpu/check.sh in a Debian 12 chroot that has none of the -dev packages ShardLens
# builds with here (minbase + cmake, ninja-build, g++, python3, ccache: no nlohmann-json,
# CLI11, libzip, zlib, GoogleTest, Gloo or LibTorch headers), with this machine's CUDA
# toolkit (/usr/local/cuda: nvcc 13 and NCCL, which the GPU machine has too) bind-mounted
# read-only, and no GPU or NVIDIA driver. It must configure, build and link everything from
# the bundle, start the binaries, and stop at the first CUDA call with "no CUDA device"
# (scripts/gpu/check.sh exit 3).
#
# What it cannot show: anything on a GPU (kernel, NCCL, bandwidth), the build against the
# GPU machine's torch 2.x (the chroot has no torch, so the plugin and `run --backend nccl`
# are configured out, as scripts/gpu/check.sh does wherever LibTorch fails), and the newer
# distribution's compiler and glibc.
#
# Usage: scripts/gpu/dryrun.sh [OUT_DIR]    (default build/dryrun-out)
# The chroot is made once (debootstrap, a few minutes, Debian's archive) and kept in
# build/dryrun-root; its compiler cache in build/dryrun-ccache. Needs root.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
chroot_dir=$root/build/dryrun-root
bundle=$root/build/dryrun-bundle
out=${1:-$root/build/dryrun-out}
ccache_dir=$root/build/dryrun-ccache
cuda=$(readlink -f /usr/local/cuda 2>/dev/null || true)

fail() {
  echo "gpu-dryrun: FAILED: $*" >&2
  exit 1
}
[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, chroot, mounts)"
[ -n "$cuda" ] && [ -x "$cuda/bin/nvcc" ] || fail "no CUDA toolkit in /usr/local/cuda (nvcc)"

# shellcheck source=scripts/build/install_packages.sh
source scripts/build/install_packages.sh
install_packages debootstrap patchelf

# 1. The bare machine, once.
if [ ! -f "$chroot_dir/.shardlens-dryrun" ]; then
  rm -rf "$chroot_dir.tmp"
  echo "gpu-dryrun: making the chroot (debootstrap minbase bookworm) in $chroot_dir"
  debootstrap --variant=minbase --include=cmake,ninja-build,g++,python3,ccache bookworm \
    "$chroot_dir.tmp" http://deb.debian.org/debian >"$root/build/dryrun-debootstrap.log" 2>&1 ||
    fail "debootstrap (see build/dryrun-debootstrap.log)"
  rm -rf "$chroot_dir"
  mv "$chroot_dir.tmp" "$chroot_dir"
  touch "$chroot_dir/.shardlens-dryrun"
fi
# None of the packages the bundle replaces may be there.
for pkg in nlohmann-json3-dev libcli11-dev libzip-dev zlib1g-dev googletest libgtest-dev \
  libgloo-dev libtorch-dev pkgconf python3-torch; do
  if chroot "$chroot_dir" dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed'; then
    fail "the chroot has $pkg installed"
  fi
done
for f in /usr/include/nlohmann /usr/include/CLI /usr/include/zip.h /usr/include/zlib.h \
  /usr/include/gtest /usr/include/gloo /usr/include/torch; do
  [ ! -e "$chroot_dir$f" ] || fail "the chroot has $f"
done
echo "gpu-dryrun: chroot $(chroot "$chroot_dir" sh -c '. /etc/os-release; echo $PRETTY_NAME'):" \
  "$(chroot "$chroot_dir" cmake --version | head -1), $(chroot "$chroot_dir" g++ --version | head -1);" \
  "no nlohmann/CLI11/libzip/zlib/gtest/gloo/torch headers, no pkg-config"

# 2. The bundle, copied in as the device tool would carry it.
scripts/gpu/bundle.sh "$bundle" >"$root/build/dryrun-bundle.log"
head -1 "$root/build/dryrun-bundle.log"
rm -rf "$chroot_dir/bundle" "$chroot_dir/out"
cp -a "$bundle" "$chroot_dir/bundle"
mkdir -p "$chroot_dir/out" "$chroot_dir/ccache" "$chroot_dir$cuda" "$ccache_dir"

# 3. scripts/gpu/check.sh in the chroot, in a private mount namespace (the mounts vanish with it).
set +e
unshare -m bash -c '
  set -e
  r=$1 cuda=$2 cache=$3
  mount --make-rprivate /
  mount -t proc proc "$r/proc"
  mount --bind /dev "$r/dev"
  mount --bind -o ro "$cuda" "$r$cuda"
  mount -o remount,bind,ro "$r$cuda"
  ln -sfn "$cuda" "$r/usr/local/cuda"
  mount --bind "$cache" "$r/ccache"
  exec chroot "$r" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root OUT=/out CCACHE_DIR=/ccache CCACHE_SLOPPINESS=pch_defines,time_macros \
    GPU_CHECK_JOBS=2 GPU_CHECK_BUDGET_S=3000 \
    GPU_CHECK_CUDA_ARCHITECTURES=90-real GPU_CHECK_TIME_SCALE=8 bash /bundle/gpu-check
' dryrun "$chroot_dir" "$cuda" "$ccache_dir"
rc=$?
set -e
rm -rf "$out"
cp -a "$chroot_dir/out" "$out"
echo "gpu-dryrun: gpu-check exit $rc; its files are in $out"
sed 's/^/  | /' "$out/summary.txt"

# 4. What the dry run must show.
[ "$rc" -eq 3 ] || fail "scripts/gpu/check.sh exited $rc, not 3 (no CUDA device); see $out"
grep -q '^configure: CUDA on' "$out/summary.txt" || fail "the CUDA backend was not configured"
grep -q '^device: SKIP: no CUDA device available' "$out/summary.txt" ||
  fail "the first CUDA call did not say 'no CUDA device'"
grep -q '^shardlens-cli: shardlens-cli ' "$out/summary.txt" || fail "shardlens-cli did not start"
grep -q 'unresolved libraries' "$out/summary.txt" && fail "a binary has unresolved libraries"
grep -q '^\[  SKIPPED \].*Cuda' "$out/gpu-tests.log" || fail "the GPU tests did not start and skip"
if grep -q '^\[  FAILED  \]' "$out/gpu-tests.log"; then fail "a GPU test failed without a GPU"; fi
echo "gpu-dryrun: PASSED: configure, build, link and start from the bundle alone; the first" \
  "CUDA call fails cleanly with 'no CUDA device'"
