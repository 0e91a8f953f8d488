#!/usr/bin/env bash
# Configures and builds dgcn into build/ (binaries in build/bin/).
# Extra arguments go to CMake, e.g. scripts/build.sh -DDGCN_CUDA=OFF
set -euo pipefail
cd "$(dirname "$0")/.."
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@"
elif [ $# -gt 0 ]; then
  cmake -S . -B build "$@"
fi
cmake --build build --parallel "${DGCN_BUILD_JOBS:-$(nproc)}"
