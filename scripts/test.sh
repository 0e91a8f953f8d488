#!/usr/bin/env bash
# Installs the dependencies, builds dgcn (CUDA sources too when the toolkit is
# present) and runs the whole test suite with ctest; then the torch-free
# suite again under ASan+UBSan with clang (-Wthread-safety), the fuzz
# regression inputs and a short run of every fuzz harness
# (scripts/sanitize.sh torch-free). Extra arguments go to the first ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/format.sh --check
scripts/build.sh
ctest --test-dir build --output-on-failure --parallel "$(nproc)" --timeout 600 "$@"
scripts/sanitize.sh torch-free
