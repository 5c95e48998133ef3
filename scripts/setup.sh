#!/usr/bin/env bash
# Installs what ShardLens needs from Debian's packages (only what is missing; one
# apt-get update), then configures and builds the given CMake presets with Ninja.
# Usage: scripts/setup.sh [preset...]   (default: "default")
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake ninja-build pkgconf ccache git
  nlohmann-json3-dev libcli11-dev libzip-dev zlib1g-dev libfmt-dev libssl-dev
  googletest libgtest-dev libgmock-dev
  qt6-base-dev qt6-base-dev-tools qt6-charts-dev qt6-svg-dev libgl-dev libqt6opengl6-dev
  qt6-qpa-plugins fonts-dejavu-core
  libtorch-dev libgloo-dev python3-torch python3-numpy
  dataset-fashion-mnist
  xvfb xauth imagemagick desktop-file-utils appstream dpkg-dev file
  iproute2 patchelf debootstrap
)

# shellcheck source=scripts/install_packages.sh
source scripts/install_packages.sh
# shellcheck source=scripts/ccache_env.sh
source scripts/ccache_env.sh
install_packages "${PACKAGES[@]}"

presets=("$@")
[ ${#presets[@]} -gt 0 ] || presets=(default)
for preset in "${presets[@]}"; do
  cmake --preset "$preset" >"build-$preset.log" 2>&1 || { cat "build-$preset.log"; exit 1; }
  grep -A20 "enabled features" "build-$preset.log" | sed -n '1,12p' || true
  rm -f "build-$preset.log"
  cmake --build --preset "$preset" -- -j"${SHARDLENS_JOBS:-2}"
done
