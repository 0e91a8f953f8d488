#!/usr/bin/env bash
# Installs the dependencies, builds dgcn (CUDA sources too when the toolkit is
# present) and runs the whole test suite with ctest; then the torch-free
# suite again under ASan+UBSan with clang (-Wthread-safety), the fuzz
# regression inputs and a short run of every fuzz harness
# (scripts/sanitize.sh torch-free). Extra arguments go to the first ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each phase says how long it took, so a slow CI run shows where its time went.
phase() {
  local name=$1 start
  shift
  start=$(date +%s)
  "$@"
  echo "test.sh: $name took $(( $(date +%s) - start )) s" >&2
}
phase install-deps scripts/install-deps.sh
source scripts/env.sh
phase format-check scripts/format.sh --check
# CUDA sources (when the toolkit is here) compile for Hopper only: this build
# keeps them compiling; a build for use (scripts/build.sh) targets sm_80 and sm_90.
phase build scripts/build.sh -DCMAKE_CUDA_ARCHITECTURES=90
phase tests ctest --test-dir build --output-on-failure --parallel "$(nproc)" --timeout 600 "$@"
phase sanitize-torch-free scripts/sanitize.sh torch-free
