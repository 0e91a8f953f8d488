#!/usr/bin/env bash
# Configures and builds dgcn into build/ (binaries in build/bin/), against the
# LibTorch of scripts/install-deps.sh's Python environment (scripts/env.sh).
# Extra arguments go to CMake, e.g. scripts/build.sh -DDGCN_CUDA=OFF, or
# -DTorch_DIR=<libtorch>/share/cmake/Torch for another LibTorch.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@"
elif [ $# -gt 0 ]; then
  cmake -S . -B build "$@"
fi
cmake --build build --parallel "${DGCN_BUILD_JOBS:-$(nproc)}"
