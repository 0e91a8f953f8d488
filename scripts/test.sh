#!/usr/bin/env bash
# Installs the dependencies, builds dgcn (CUDA sources too when the toolkit is
# present) and runs the whole test suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/format.sh --check
scripts/build.sh
ctest --test-dir build --output-on-failure --parallel "$(nproc)" --timeout 600 "$@"
