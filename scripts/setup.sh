#!/usr/bin/env bash
# Installs what ShardLens needs from Debian's packages (only what is missing; one
# apt-get update), then configures and builds the given CMake presets with Ninja.
# Usage: scripts/setup.sh [preset...]   (default: "default"): everything, tests included
#        scripts/setup.sh --app         the application only (scripts/run.sh): APP_PACKAGES,
#                                       preset "app", targets shardlens and shardlens-cli
set -euo pipefail
cd "$(dirname "$0")/.."

# What the GUI and the CLI (with its figure renderer) need to build and run, the
# Fashion-MNIST dataset they offer included.
APP_PACKAGES=(
  build-essential cmake ninja-build pkgconf ccache
  nlohmann-json3-dev libcli11-dev libzip-dev zlib1g-dev libssl-dev
  qt6-base-dev qt6-base-dev-tools qt6-charts-dev qt6-svg-dev libgl-dev libqt6opengl6-dev
  qt6-qpa-plugins fonts-dejavu-core
  dataset-fashion-mnist
)
# The rest of a full build and its tests: LibTorch (real runs, .pt import; its c10d headers
# include fmt), the test frameworks and oracles, and the tools the tests drive.
FULL_PACKAGES=(
  "${APP_PACKAGES[@]}"
  git
  libtorch-dev libgloo-dev libfmt-dev python3-torch python3-numpy
  googletest libgtest-dev libgmock-dev python3-pytest
  xvfb xauth imagemagick desktop-file-utils appstream dpkg-dev file
  iproute2 patchelf debootstrap
)

# shellcheck source=scripts/build/install_packages.sh
source scripts/build/install_packages.sh
# shellcheck source=scripts/build/ccache_env.sh
source scripts/build/ccache_env.sh

targets=()
if [ "${1:-}" = --app ]; then
  install_packages "${APP_PACKAGES[@]}"
  presets=(app)
  targets=(--target shardlens shardlens-cli)
else
  install_packages "${FULL_PACKAGES[@]}"
  presets=("$@")
  [ ${#presets[@]} -gt 0 ] || presets=(default)
fi
for preset in "${presets[@]}"; do
  cmake --preset "$preset" >"build-$preset.log" 2>&1 || { cat "build-$preset.log"; exit 1; }
  # The feature summary: which of GUI, LibTorch, CUDA this build has.
  features=$(awk '/^-- The following features have been (en|dis)abled:/ { p = 1; print; next }
                  /^--/ { p = 0 } p && /^ \* /' "build-$preset.log")
  echo "$features"
  rm -f "build-$preset.log"
  if [ "$preset" = app ] && sed -n '/disabled:/,$p' <<<"$features" | grep -q "^ \* LibTorch"; then
    echo "Real runs and .pt imports need LibTorch: scripts/setup.sh installs it and builds" \
      "everything (build/default, tests included)."
  fi
  cmake --build --preset "$preset" "${targets[@]}" -- -j"${SHARDLENS_JOBS:-2}"
done
