#!/usr/bin/env bash
# Installs everything dgcn builds, tests or runs against on Debian 12, in two
# parts; idempotent (a second run only checks and exits within seconds):
#   1. Debian packages: toolchain, the graph store's and readers' libraries,
#      gloo's headers (LibTorch's c10d Gloo backend includes them; the torch
#      wheel does not ship them), data and plots.
#   2. The Python environment of scripts/requirements.lock, every package
#      pinned, among them torch==2.11.0 (CUDA 13 wheels): dgcn builds against
#      that wheel's LibTorch and its tests use that Python. It lives in a
#      virtual environment outside the clone ($DGCN_VENV, default
#      ~/.cache/dgcn/venv; see scripts/env.sh): ~2.6 GB to download, ~4.9 GB
#      installed.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  # toolchain (ccache: build folders after the first reuse its objects,
  # cmake/DgcnCcache.cmake)
  build-essential cmake ninja-build pkg-config clang-format ccache
  # clang with its sanitizer and libFuzzer runtimes (scripts/sanitize.sh, scripts/fuzz.sh)
  clang-14 libclang-rt-14-dev
  # the Python the environment below is made from
  python3 python3-venv python3-dev
  # gloo's headers, for c10d's ProcessGroupGloo.hpp (headers only: the
  # wheel's libtorch_cpu holds gloo itself; the Gloo tests prove they match)
  libgloo-dev
  # graph store and readers
  libboost-graph-dev libzstd-dev libxxhash-dev zlib1g-dev libzip-dev
  # graph partitioning (dgcn-prep partition --method metis)
  libmetis-dev
  # CLI, JSON, logging
  libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # data and plots
  dataset-fashion-mnist gnuplot-nox
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = "installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} Debian packages present"
else
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
fi

# --- The pinned Python environment -------------------------------------------
# shellcheck source=scripts/env.sh
source scripts/env.sh
# Two locks, each with its own stamp: scripts/requirements.lock (torch and
# what dgcn's C++ builds and tests against), then
# scripts/requirements-python.lock (the `dgcn` Python package's build and
# test tools: scikit-build-core, pytest, PyG).
install_lock() {
  local lock=$1 name=$2 stamp want start
  stamp="$DGCN_VENV/.dgcn-$name.sha256"
  want=$(sha256sum "$lock" | cut -d' ' -f1)
  # The stamp is written only after a complete install, so an interrupted one
  # is finished by the next run.
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$DGCN_VENV/bin/python" ]; then
    echo "install-deps: Python environment $DGCN_VENV matches $lock"
    return 0
  fi
  start=$(date +%s)
  if [ ! -x "$DGCN_VENV/bin/python" ]; then
    echo "install-deps: creating the Python environment $DGCN_VENV"
    mkdir -p "$(dirname "$DGCN_VENV")"
    /usr/bin/python3 -m venv "$DGCN_VENV"
  fi
  echo "install-deps: installing $lock into $DGCN_VENV"
  # Exactly the lock (--no-deps), then pip check: a lock that misses a
  # dependency or pins two that disagree stops here instead of drifting.
  "$DGCN_VENV/bin/python" -m pip install --disable-pip-version-check -q --no-deps -r "$lock"
  "$DGCN_VENV/bin/python" -m pip check
  echo "$want" > "$stamp"
  echo "install-deps: $lock installed in $(( $(date +%s) - start )) s"
}
# ~2.6 GB download the first time.
install_lock scripts/requirements.lock requirements
install_lock scripts/requirements-python.lock requirements-python
