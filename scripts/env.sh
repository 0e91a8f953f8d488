# Puts dgcn's Python environment and its built binaries on PATH, for this shell:
#
#   source scripts/env.sh
#
# After it, `python` is the environment's (torch 2.11.0, numpy, ... pinned in
# scripts/requirements.lock) and `dgcn-train`, `dgcn-prep`, ... are the ones in
# build/bin. DGCN_VENV chooses the environment (default ~/.cache/dgcn/venv,
# outside the clone, so every clone and CI run on this machine shares it);
# scripts/install-deps.sh creates it. Safe to source more than once.
_dgcn_root=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)
export DGCN_VENV="${DGCN_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/dgcn/venv}"
export VIRTUAL_ENV="$DGCN_VENV"
for _dgcn_dir in "$_dgcn_root/build/bin" "$DGCN_VENV/bin"; do
  case ":$PATH:" in
    *":$_dgcn_dir:"*) ;;
    *) PATH="$_dgcn_dir:$PATH" ;;
  esac
done
export PATH
unset _dgcn_root _dgcn_dir
