#!/usr/bin/env bash
# Installs the dependencies, builds dgcn (with the CUDA toolkit present: every
# CUDA source, the torch-facing glue included, which this script checks) and
# runs the whole test suite with ctest; then the Python package (pip install
# ., pytest tests/python: scripts/python-check.sh); then the CPU-only path with the
# toolkit hidden (scripts/cpu-only-check.sh); then the GPU check's
# --no-device mode (scripts/gpu-check.sh); then the torch-free suite
# again under ASan+UBSan with clang (-Wthread-safety), the fuzz regression
# inputs and a short run of every fuzz harness (scripts/sanitize.sh
# torch-free). Extra arguments go to the first ctest.
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
# With nvcc here the build must have compiled the torch CUDA glue (cuSPARSE
# SpMM on tensors, NCCL): no silent fallback to a CPU-only build.
cuda_glue_check() {
  local version
  version=$(build/bin/dgcn-train --version)
  echo "$version" >&2
  if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
    grep -q "compiled in (cuSPARSE: yes, NCCL .*: yes)" <<<"$version" || {
      echo "test.sh: nvcc is here but the torch CUDA glue was not built (see the configure output)" >&2
      return 1
    }
  fi
}
phase cuda-glue-check cuda_glue_check
phase tests ctest --test-dir build --no-tests=error --output-on-failure --parallel "$(nproc)" --timeout 600 "$@"
phase python scripts/python-check.sh
phase cpu-only scripts/cpu-only-check.sh
# The GPU host's recipe without a GPU: the bundle, the build in a view of
# this machine with its development packages hidden, ldd, a CPU epoch and the
# report, so scripts/gpu-check.sh cannot rot before a GPU is lent.
phase gpu-check-no-device scripts/gpu-check.sh --no-device --preset small
phase sanitize-torch-free scripts/sanitize.sh torch-free
