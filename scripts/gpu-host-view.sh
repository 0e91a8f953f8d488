#!/usr/bin/env bash
# Runs a command in this machine as the GPU host will look to dgcn's build:
# no system development packages, no runtime libraries but the bundle's, and
# CUDA's libraries not in the loader's cache. For scripts/gpu-check.sh
# --no-device; needs root and a mount namespace of its own:
#
#   unshare -m scripts/gpu-host-view.sh COMMAND [ARGS...]
#
# /usr is overlaid (the overlay's changes live in a tmpfs of the namespace
# and vanish with it; the machine itself is never touched) and in it the files
# of these packages are removed: every -dev package dgcn builds against
# (scripts/install-deps.sh installs them; the bundle of scripts/gpu-pack-deps.sh
# must bring its own) and the runtime libraries the bundle carries. The
# loader's cache is rebuilt without CUDA's folders.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: unshare -m gpu-host-view.sh COMMAND [ARGS...]" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "gpu-host-view: needs root (a mount namespace and overlayfs)" >&2; exit 2; }
hidden='^(libboost.*-dev|libzstd-dev|libxxhash-dev|libxxhash0|zlib1g-dev|libzip-dev|libzip4|libmetis-dev|libmetis5|libcli11-dev|nlohmann-json3-dev|libspdlog-dev|libspdlog1\.10|libfmt-dev|libfmt9|libgtest-dev|libgmock-dev|googletest|libbenchmark-dev|libgloo-dev)$'

scratch=$(mktemp -d /tmp/gpu-host-view.XXXXXX)
mount --make-rprivate /
mount -t tmpfs tmpfs "$scratch"
mkdir "$scratch/upper" "$scratch/work"
mount -t overlay overlay -o "lowerdir=/usr,upperdir=$scratch/upper,workdir=$scratch/work" /usr

packages=$(dpkg-query -W -f '${Package}\n' | grep -E "$hidden" || true)
n_files=0
if [ -n "$packages" ]; then
  # Files and links only (a package's folders may hold other packages' files).
  # shellcheck disable=SC2086
  n_files=$(dpkg -L $packages | python3 -c '
import os, sys
paths = [p.strip() for p in sys.stdin if p.startswith("/usr/")]
gone = [p for p in paths if os.path.islink(p) or os.path.isfile(p)]
for p in gone:
    os.remove(p)
print(len(gone))')
fi
# CUDA's runtime out of the loader's cache (and the copy in /usr/local/lib):
# the binaries must find libcudart and libcusparse through their RUNPATH.
rm -f /usr/local/lib/libcudart*
conf="$scratch/ld.so.conf"
cat /etc/ld.so.conf.d/*.conf 2>/dev/null | grep -v -e '^#' -e '^include' -e cuda >"$conf" || true
ldconfig -C "$scratch/ld.so.cache" -f "$conf" 2>/dev/null
mount --bind "$scratch/ld.so.cache" /etc/ld.so.cache
echo "gpu-host-view: hid $n_files files of $(wc -w <<<"$packages") packages and CUDA's libraries from the loader's cache" >&2
exec "$@"
