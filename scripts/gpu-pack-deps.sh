#!/usr/bin/env bash
# Bundles what the CUDA host needs to build dgcn (it has a compiler, CMake,
# CUDA and a CUDA LibTorch, but no package registry): the Debian packages of
# ../shared/gpu-host/pack-debs.sh plus the few dgcn needs beyond them
# (xxhash's header, zstd's runtime the -dev symlink points at, METIS, and
# gloo's headers, which c10d's ProcessGroupGloo.hpp includes and no torch wheel ships).
# Run here, where apt works:  scripts/gpu-pack-deps.sh [DIR]   (default shared/gpu-host-debs,
# the folder scripts/gpu-check.sh looks in; keep it out of git: .git/info/exclude)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-shared/gpu-host-debs}
pack=${DGCN_PACK_DEBS:-../shared/gpu-host/pack-debs.sh}
[ -x "$pack" ] || [ -f "$pack" ] || { echo "gpu-pack-deps: $pack not found (set DGCN_PACK_DEBS)" >&2; exit 2; }
bash "$pack" "$out"
(cd "$out" && apt-get download libxxhash-dev libxxhash0 libzstd1 libmetis-dev libmetis5 libgloo-dev >/dev/null 2>&1) ||
  { echo "gpu-pack-deps: apt-get download failed (run apt-get update first?)" >&2; exit 1; }
echo "gpu-pack-deps: $(ls "$out"/*.deb | wc -l) packages in $out ($(du -sh "$out" | cut -f1))"
