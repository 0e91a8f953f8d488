#!/usr/bin/env bash
# Proves the CPU-only path: configures and builds dgcn with the CUDA toolkit
# out of reach, as on a laptop or a CPU cluster with only the pinned torch
# wheel (a CUDA wheel, which runs on a CPU), then runs it briefly:
#   - nvcc off PATH, CUDA_HOME/CUDA_PATH/CUDACXX unset, and, in a private
#     mount namespace, an empty folder over the toolkit (/usr/local/cuda);
#   - build-cpu/: dgcn-train only (no tests): every LibTorch part it links is
#     what the toolkit's absence changes; dgcn-prep is torch-free, the same
#     code with or without CUDA, and builds in CI's main and sanitizer builds;
#   - dgcn-train --version must say CUDA is not compiled in, the binary must
#     not load libtorch_cuda, and 2 ranks train 2 epochs on the tiny preset
#     (generated in memory: --preset, no store from dgcn-prep).
#   scripts/cpu-only-check.sh [--build DIR]
# CI runs it. Exit status: 0 proven, 1 a check failed, 2 usage or the
# toolkit could not be hidden.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-cpu
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=${2:?--build needs a folder}; shift 2 ;;
    -h|--help) sed -n 2,15p "$0"; exit 0 ;;
    *) echo "cpu-only-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

if [ -z "${DGCN_CPU_ONLY_INSIDE:-}" ]; then
  # Outside: hide the toolkit, then run this script again inside.
  toolkit=$(readlink -f /usr/local/cuda 2>/dev/null || true)
  if [ -z "$toolkit" ] || [ ! -d "$toolkit" ]; then
    exec env DGCN_CPU_ONLY_INSIDE=1 "$0" --build "$build"  # no toolkit here: nothing to hide
  fi
  unshare_cmd=(unshare --mount)
  [ "$(id -u)" -eq 0 ] || unshare_cmd=(unshare --map-root-user --mount)
  if ! "${unshare_cmd[@]}" true 2>/dev/null; then
    echo "cpu-only-check: cannot make a mount namespace here (${unshare_cmd[*]}) to hide $toolkit" >&2
    exit 2
  fi
  empty=$(mktemp -d)
  trap 'rmdir "$empty"' EXIT
  "${unshare_cmd[@]}" env DGCN_CPU_ONLY_INSIDE=1 DGCN_EMPTY="$empty" DGCN_TOOLKIT="$toolkit" \
    bash -c 'mount --bind "$DGCN_EMPTY" "$DGCN_TOOLKIT" && exec "$0" --build "$1"' "$0" "$build"
  exit $?
fi

# Inside: no toolkit on any path a build looks at.
unset CUDA_HOME CUDA_PATH CUDACXX CUDAToolkit_ROOT LIBRARY_PATH
path=""
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [ -e "$d/nvcc" ] || path+="${path:+:}$d"
done
export PATH=$path
if command -v nvcc >/dev/null 2>&1 && nvcc --version >/dev/null 2>&1; then
  echo "cpu-only-check: nvcc still runs ($(command -v nvcc)); the toolkit is not hidden" >&2
  exit 2
fi
source scripts/env.sh
fail() { echo "cpu-only-check: FAILED: $*" >&2; exit 1; }

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
rm -rf "$build"
mkdir -p "$build"
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DDGCN_BUILD_TESTS=OFF >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log" >&2; fail "configure"; }
grep -E "^-- dgcn:" "$build/configure.log" >&2
cmake --build "$build" --parallel "${DGCN_BUILD_JOBS:-$(nproc)}" --target dgcn-train >/dev/null ||
  fail "build (run: cmake --build $build)"

version=$("$build/bin/dgcn-train" --version)
echo "$version" >&2
grep -q "^CUDA: not compiled in" <<<"$version" || fail "dgcn-train --version does not say CUDA is not compiled in"
! ldd "$build/bin/dgcn-train" | grep -q "libtorch_cuda" || fail "dgcn-train loads libtorch_cuda"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
summary=$("$build/bin/dgcn-train" --preset tiny --nproc-per-node 2 --epochs 2 --seed 0 2>"$work/train.log") ||
  { cat "$work/train.log" >&2; fail "dgcn-train on 2 ranks"; }
grep -q '"test_acc"' <<<"$summary" || fail "dgcn-train printed no test_acc: $summary"
echo "cpu-only-check: ok: built and trained without a CUDA toolkit: $(grep -o '"test_acc":[^,]*' <<<"$summary")" >&2
