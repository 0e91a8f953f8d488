#!/usr/bin/env bash
# Formats every C++/CUDA source with the root .clang-format.
#   scripts/format.sh          rewrite files in place
#   scripts/format.sh --check  list unformatted files and exit 1 (CI)
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.h' '*.hpp' '*.cpp' '*.cu' '*.cuh')
[ ${#files[@]} -gt 0 ] || exit 0
if [ "${1:-}" = "--check" ]; then
  # One clang-format per file (so a failure names it), on every core.
  mapfile -t bad < <(printf '%s\0' "${files[@]}" | xargs -0 -n 8 -P "$(nproc)" sh -c \
    'for f do clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || echo "$f"; done' sh | sort)
  if [ ${#bad[@]} -gt 0 ]; then
    echo "format: these files differ from .clang-format (run scripts/format.sh):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files clean"
else
  clang-format -i "${files[@]}"
fi
