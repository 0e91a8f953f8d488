#!/usr/bin/env bash
# Builds dgcn under sanitizers and runs the tests there.
#   scripts/sanitize.sh torch-free [ctest args...]
#       clang-14: ASan+UBSan, -Wthread-safety, no LibTorch (build-asan/): the tests of
#       base/ graph/ sampling/ datasets/ bench/ and the torch-free apps, and
#       the fuzz regression replays; then a 2 s fuzz smoke run of every
#       harness (scripts/fuzz.sh shares this build). CI runs this mode.
#   scripts/sanitize.sh address [ctest args...]
#       gcc: ASan+UBSan over the whole suite, LibTorch included (build-asan-torch/).
#   scripts/sanitize.sh thread [ctest args...]
#       gcc: TSan over the threaded parts: sampler (partitioned too), loader, launcher, DDP,
#       inference over parts (ranks as threads) and the
#       multi-rank apps (build-tsan/), suppressions in scripts/tsan.supp.
# A sanitizer report fails the test that caused it (UBSan does not recover,
# ASan/TSan exit non-zero). Exit status: ctest's.
set -euo pipefail
cd "$(dirname "$0")/.."
# LibTorch and the tests' Python: the environment of scripts/install-deps.sh.
source scripts/env.sh
mode=${1:-}
[ $# -gt 0 ] && shift
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
jobs=${DGCN_BUILD_JOBS:-$(nproc)}

# configure DIR cmake-args...: the LibTorch builds use gcc, the compiler the
# torch wheel is built with (LibTorch 1.13's headers did not even compile with
# clang-14 in C++20); -Wthread-safety (clang) is checked by the torch-free build.
configure() {
  local dir=$1
  shift
  [ -f "$dir/CMakeCache.txt" ] && return 0
  cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Sanitize -DCMAKE_C_COMPILER=gcc \
    -DCMAKE_CXX_COMPILER=g++ -DDGCN_CUDA=OFF -DDGCN_BUILD_TESTS=ON "$@" >/dev/null
}

# LSan's leak report at exit stays on; ASan aborts so a report is a failure.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_stack_use_after_return=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

case "$mode" in
  torch-free)
    scripts/fuzz.sh --configure-only
    cmake --build build-asan --parallel "$jobs"
    ctest --test-dir build-asan --no-tests=error --output-on-failure --parallel "$(nproc)" --timeout 900 "$@"
    scripts/fuzz.sh --seconds 2
    ;;
  address)
    # LibTorch is not instrumented; its own leaks at exit (static registries)
    # are not ours, so leak checking is off in this mode.
    export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
    configure build-asan-torch -DDGCN_WITH_TORCH=ON "-DDGCN_SANITIZE=address;undefined"
    cmake --build build-asan-torch --parallel "$jobs"
    ctest --test-dir build-asan-torch --no-tests=error --output-on-failure --parallel "$(nproc)" --timeout 1800 "$@"
    ;;
  thread)
    configure build-tsan -DDGCN_WITH_TORCH=ON -DDGCN_SANITIZE=thread
    cmake --build build-tsan --parallel "$jobs"
    export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1} suppressions=$PWD/scripts/tsan.supp"
    ctest --test-dir build-tsan --no-tests=error --output-on-failure --parallel "$(nproc)" --timeout 1800 \
      -R '(Sampler|Loader|NeighborSampler|BatchMemory|Launcher|Ddp|DistributedDataParallel|DgcnTrain|Parallel|Mutex|Inference)' "$@"
    ;;
  *)
    sed -n 2,15p "$0" >&2
    exit 2
    ;;
esac
