#!/usr/bin/env bash
# Builds the .deb: build/default/packages/shardlens_<version>_amd64.deb
# Install it with: sudo apt-get install ./build/default/packages/shardlens_*.deb
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/setup.sh default
cpack -G DEB --config build/default/CPackConfig.cmake -B build/default/packages
ls -1 build/default/packages/*.deb
