#!/usr/bin/env bash
# Builds the `dgcn` Python package into dgcn's environment and runs its tests
# (tests/python, PyG as the oracle). The build folder (build-python) persists,
# so a second run recompiles only what changed; after scripts/build.sh, with
# ccache, it compiles only the bindings (it takes build/'s compilers, as
# scikit-build-core would otherwise take Python's x86_64-linux-gnu-g++ name
# for the same compiler, which ccache keys apart). Needs scripts/install-deps.sh's
# environment; the Cora tests also need build/bin/dgcn-prep (scripts/build.sh)
# and /work/shared/datasets/cora.npz or $DGCN_CORA_NPZ (else they are skipped;
# in CI, DGCN_CI=1, a skip fails: tests/python/conftest.py). Every skip prints
# its reason (-rs). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
export CMAKE_BUILD_PARALLEL_LEVEL="${DGCN_BUILD_JOBS:-$(nproc)}"
if [ -f build/CMakeCache.txt ] && [ -z "${CC:-}${CXX:-}" ]; then
  CC=$(sed -n 's/^CMAKE_C_COMPILER:FILEPATH=//p' build/CMakeCache.txt)
  CXX=$(sed -n 's/^CMAKE_CXX_COMPILER:FILEPATH=//p' build/CMakeCache.txt)
  export CC CXX
fi
python -m pip install --disable-pip-version-check --no-build-isolation -q .
# `import dgcn` finds the installed package (the sources are in python/dgcn,
# which is not on sys.path).
DGCN_SOURCE_DIR="$PWD" python -m pytest -q -rs tests/python -p no:cacheprovider "$@"
