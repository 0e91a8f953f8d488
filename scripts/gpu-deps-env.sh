# Sourced on the CUDA host (copied into the bundle as DIR/env.sh by
# scripts/gpu-pack-deps.sh):  source DIR/env.sh
# Unpacks the bundled .deb files into a private prefix (never into /) and
# exports what a CMake configure and the built binaries need. The CUDA
# LibTorch is the one of the `python3` on PATH, as on the host.
_dgcn_debs=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export DGCN_DEPS_PREFIX=${DGCN_DEPS_PREFIX:-/tmp/dgcn-deps}
# The stamp names the bundle, so a prefix unpacked from another bundle is redone.
_dgcn_stamp="$DGCN_DEPS_PREFIX/.unpacked-from-$(ls "$_dgcn_debs"/*.deb | md5sum | cut -c1-12)"
if [ ! -f "$_dgcn_stamp" ]; then
  rm -rf "$DGCN_DEPS_PREFIX"
  mkdir -p "$DGCN_DEPS_PREFIX"
  for f in "$_dgcn_debs"/*.deb; do dpkg -x "$f" "$DGCN_DEPS_PREFIX"; done
  touch "$_dgcn_stamp"
fi
_dgcn_torch=$(python3 -c 'import torch.utils, sys; sys.stdout.write(torch.utils.cmake_prefix_path)' 2>/dev/null || true)
export CMAKE_PREFIX_PATH="$DGCN_DEPS_PREFIX/usr${_dgcn_torch:+:$_dgcn_torch}${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export LD_LIBRARY_PATH="$DGCN_DEPS_PREFIX/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CPATH="$DGCN_DEPS_PREFIX/usr/include${CPATH:+:$CPATH}"
# The bundle's pkg-config files say prefix=/usr: CMake finds the packages
# through CMAKE_PREFIX_PATH (config files, find_path/find_library) instead.
echo "dgcn deps: $DGCN_DEPS_PREFIX  torch cmake: ${_dgcn_torch:-none found}"
unset _dgcn_debs _dgcn_torch _dgcn_stamp
