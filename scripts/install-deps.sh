#!/usr/bin/env bash
# Installs every Debian 12 package dgcn builds, tests or runs against.
# Idempotent: when everything is present it only runs dpkg-query and exits.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config clang-format
  # clang with its sanitizer and libFuzzer runtimes (scripts/sanitize.sh, scripts/fuzz.sh)
  clang-14 libclang-rt-14-dev
  # LibTorch (CPU) with c10d's Gloo backend; Python torch reads our checkpoints in tests
  libtorch-dev libgloo-dev python3-torch
  # an optimized BLAS behind LibTorch's dense layers (Debian's default libblas is the
  # reference one: ~3 GFLOP/s against ~100 with OpenBLAS on two cores); the OpenMP
  # build shares LibTorch's thread pool
  libopenblas0-openmp
  # graph store and readers
  libboost-graph-dev libzstd-dev libxxhash-dev zlib1g-dev libzip-dev
  # graph partitioning (dgcn-prep partition --method metis)
  libmetis-dev
  # CLI, JSON, logging
  libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
  # tests and benchmarks; numpy/scipy write fixtures in the real outside layouts
  libgtest-dev libgmock-dev libbenchmark-dev python3-numpy python3-scipy
  # data and plots
  dataset-fashion-mnist gnuplot-nox
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = "installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
# apt-get update once per fresh machine (lists are empty there).
if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v -e lock -e partial)" ]; then
  "${sudo_cmd[@]}" apt-get update -q
fi
if ! "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"; then
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
