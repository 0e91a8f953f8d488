#!/usr/bin/env bash
# Bundles what the CUDA host needs to build dgcn: it has a compiler, CMake,
# ninja, CUDA and a Python with a CUDA torch, but no package registry. The
# bundle is the Debian 12 packages below (downloaded here, where apt works)
# and scripts/gpu-deps-env.sh as DIR/env.sh, which unpacks them into a private
# prefix there. Boost is the headers alone (dgcn uses Boost.Graph header-only).
#
#   scripts/gpu-pack-deps.sh [DIR]   (default shared/gpu-host-debs, the folder
#                                     scripts/gpu-check.sh looks in; .gitignore keeps it out of git)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-shared/gpu-host-debs}
packages=(
  libboost1.74-dev                               # Boost.Graph's headers (all of Boost's)
  libzstd-dev libzstd1 zlib1g-dev                # .gcn sections, npz readers
  libxxhash-dev libxxhash0                       # checksums (header-only use)
  libzip-dev libzip4                             # npz readers
  libmetis-dev libmetis5                         # dgcn-prep partition --method metis
  libcli11-dev nlohmann-json3-dev                # CLI, JSON
  libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 # logging
  libgtest-dev libgmock-dev                      # the tests
  libgloo-dev                                    # headers c10d's ProcessGroupGloo.hpp includes
)
mkdir -p "$out"
rm -f "$out"/*.deb
(cd "$out" && apt-get -o APT::Sandbox::User=root download "${packages[@]}" >/dev/null) ||
  { echo "gpu-pack-deps: apt-get download failed (run apt-get update first?)" >&2; exit 1; }
cp scripts/gpu-deps-env.sh "$out/env.sh"
echo "gpu-pack-deps: $(ls "$out"/*.deb | wc -l) packages in $out ($(du -sh "$out" | cut -f1))"
