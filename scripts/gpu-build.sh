#!/usr/bin/env bash
# The GPU host's build recipe, one program so scripts/gpu-check.sh can run it
# under `timeout`: sources the bundle (scripts/gpu-pack-deps.sh) when given,
# checks that python3's torch is the version CI builds against, configures
# with that torch, nvcc and the NCCL of the nvidia-nccl wheel torch loads, and
# builds only what the check runs (keeping going past a failed translation
# unit, so one run shows every error): by default every target the GPU run
# needs; TARGET... names fewer (the --no-device run builds only what it runs
# or ldd-checks).
#
#   scripts/gpu-build.sh BUILD_DIR JOBS [DEPS_DIR [TARGET...]]
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: gpu-build.sh BUILD_DIR JOBS [DEPS_DIR [TARGET...]]"
build=${1:?$usage}
jobs=${2:?$usage}
deps=${3:-}
targets=("${@:4}")
[ ${#targets[@]} -gt 0 ] || targets=(models_test gnn_layers_test dgcn-spmm-bench dgcn-train dgcn-prep)
# shellcheck disable=SC1091
[ -n "$deps" ] && source "$deps/env.sh"
generator=() keep_going=(-k)
command -v ninja >/dev/null && { generator=(-G Ninja); keep_going=(-k 0); }
# nvcc: on PATH, else the toolkit's usual place. NCCL: the nvidia-nccl wheel
# the Python torch loads, when the toolkit has none.
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
nccl_root=$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null || true)
echo "nvcc: $nvcc ($("$nvcc" --version | tail -1)); NCCL_ROOT: ${nccl_root:-none}"
pinned=$(sed -n 's/^torch==//p' scripts/requirements.lock)
have=$(python3 -c 'import torch; print(torch.__version__.split("+")[0])' 2>/dev/null || echo none)
echo "python3: $(command -v python3), torch $have (scripts/requirements.lock pins $pinned)"
if [ "$have" != "$pinned" ]; then
  echo "gpu-build: this host's Python torch is $have, CI builds against $pinned" >&2
  exit 1
fi
# The CUDA architectures are the default (Note [CUDA architectures]): what
# --version then says is what a user's build says. No ccache: with the
# bundle's include paths no compile here matches another folder's, so it
# could only add its own cost (Note [ccache across build folders]).
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DDGCN_CUDA=ON \
  -DCMAKE_CUDA_COMPILER="$nvcc" -DDGCN_PYTHON="$(command -v python3)" \
  ${nccl_root:+-DNCCL_ROOT="$nccl_root"} -DDGCN_BUILD_TESTS=ON -DDGCN_CCACHE=OFF
cmake --build "$build" --parallel "$jobs" --target "${targets[@]}" -- "${keep_going[@]}"
