#!/usr/bin/env bash
# GPU acceptance on the CUDA host of ../shared/gpu-host/ (a Python torch with a
# CUDA LibTorch, CUDA 13, no package registry): builds only what the GPU run
# needs into build-gpu/, then runs, each step with its own time limit,
#   1. the CUDA-vs-CPU tests (ctest -R Cuda),
#   2. dgcn-spmm-bench on the device,
#   3. the first 64 batches of a `products`-preset epoch with --device cuda,
#      and the same batches on the CPU for the ratio,
#   4. a 1-rank NCCL run (--backend nccl),
# and writes one JSON report (default $OUT/gpu-check.json, else
# build-gpu/gpu-check.json). Meant to finish within 8 minutes there.
#
#   scripts/gpu-check.sh [--deps DIR] [--report FILE] [--jobs N] [--skip-build]
#   scripts/gpu-check.sh --cpu-only [--build DIR]   (the CPU epoch and the report, on any machine)
#
#   --deps DIR    the folder made by scripts/gpu-pack-deps.sh (its env.sh is sourced);
#                 default: $DGCN_GPU_DEPS, else shared/gpu-host-debs, else none (system packages)
#   --cpu-only    no GPU steps: checks the script's CPU parts where no GPU is lent
# Exit status: 0 all steps passed; 1 a step failed (the report says which);
# 2 usage; 3 no CUDA device found (nothing was built or run).
set -uo pipefail
cd "$(dirname "$0")/.."

deps=${DGCN_GPU_DEPS:-}
report=""
jobs=$(nproc)
skip_build=0
cpu_only=0
build=build-gpu
usage() { sed -n 2,20p "$0"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --deps) deps=${2:?--deps needs a folder}; shift 2 ;;
    --report) report=${2:?--report needs a file}; shift 2 ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
    --build) build=${2:?--build needs a folder}; shift 2 ;;
    --skip-build) skip_build=1; shift ;;
    --cpu-only) cpu_only=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if ! [[ "$jobs" =~ ^[1-9][0-9]*$ ]]; then echo "gpu-check: --jobs '$jobs' is not a positive number" >&2; exit 2; fi
if [ -n "$deps" ] && [ ! -f "$deps/env.sh" ]; then
  echo "gpu-check: --deps $deps has no env.sh (make it with scripts/gpu-pack-deps.sh DIR)" >&2
  exit 2
fi
[ -z "$deps" ] && [ -f shared/gpu-host-debs/env.sh ] && deps=shared/gpu-host-debs
if [ -z "$report" ]; then
  if [ -n "${OUT:-}" ]; then report=$OUT/gpu-check.json; else report=$build/gpu-check.json; fi
fi

# --- Is there a GPU? ---------------------------------------------------------
gpu_name=""
if [ "$cpu_only" -eq 0 ]; then
  if command -v nvidia-smi >/dev/null 2>&1; then
    gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  fi
  if [ -z "$gpu_name" ]; then
    echo "gpu-check: no CUDA device found (nvidia-smi is $(command -v nvidia-smi >/dev/null && echo 'present but lists no GPU' || echo absent));" \
      "nothing was built or run. On a machine without a GPU, --cpu-only checks the CPU parts." >&2
    exit 3
  fi
  echo "gpu-check: device: $gpu_name"
fi
mkdir -p "$(dirname "$report")" "$build"
log_dir=$(dirname "$report")/gpu-check-logs
mkdir -p "$log_dir"

# --- Steps ---------------------------------------------------------------------
steps_json=""
failed=0
# step NAME LIMIT_S COMMAND...: runs it with a time limit, logs to $log_dir/NAME.log,
# records {name, ok, seconds, exit_code} for the report.
step() {
  local name=$1 limit=$2
  shift 2
  local start end rc
  start=$(date +%s.%N)
  echo "gpu-check: $name ..." >&2
  timeout --kill-after=10 "$limit" "$@" >"$log_dir/$name.log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  local seconds
  seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
  local ok=true
  [ "$rc" -eq 0 ] || { ok=false; failed=1; }
  [ "$rc" -eq 124 ] && echo "gpu-check: $name ran past its ${limit} s" >&2
  echo "gpu-check: $name: exit $rc in ${seconds} s" >&2
  steps_json+="${steps_json:+,}{\"name\":\"$name\",\"ok\":$ok,\"exit_code\":$rc,\"seconds\":$seconds,\"log\":\"$log_dir/$name.log\"}"
  return "$rc"
}
# The last JSON object a step printed on stdout (its summary), or null.
last_json() { grep -E '^\{' "$log_dir/$1.log" | tail -1 || true; }

configure_and_build() {
  # shellcheck disable=SC1091
  [ -n "$deps" ] && source "$deps/env.sh"
  local generator=() keep_going=(-k)
  command -v ninja >/dev/null && { generator=(-G Ninja); keep_going=(-k 0); }
  # nvcc: on PATH, else the toolkit's usual place. NCCL: the nvidia-nccl wheel
  # the Python torch loads, when the toolkit has none. LibTorch: that Python's
  # torch (cmake/DgcnTorch.cmake asks python3).
  local nvcc nccl_root
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  nccl_root=$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null || true)
  echo "nvcc: $nvcc ($("$nvcc" --version | tail -1)); NCCL_ROOT: ${nccl_root:-none}"
  # The same LibTorch as CI: the host's Python torch must be the version
  # scripts/requirements.lock pins (CI builds against that wheel).
  local pinned have
  pinned=$(sed -n 's/^torch==//p' scripts/requirements.lock)
  have=$(python3 -c 'import torch; print(torch.__version__.split("+")[0])' 2>/dev/null || echo none)
  echo "python torch $have (scripts/requirements.lock pins $pinned)"
  if [ "$have" != "$pinned" ]; then
    echo "gpu-check: this host's Python torch is $have, CI builds against $pinned" >&2
    return 1
  fi
  cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DDGCN_CUDA=ON \
    -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DDGCN_PYTHON="$(command -v python3)" ${nccl_root:+-DNCCL_ROOT="$nccl_root"} -DDGCN_BUILD_TESTS=ON &&
    # Keep going past a failed translation unit: one run shows every error.
    cmake --build "$build" --parallel "$jobs" --target models_test dgcn-spmm-bench dgcn-train dgcn-prep \
      -- "${keep_going[@]}"
}

if [ "$cpu_only" -eq 0 ] && [ "$skip_build" -eq 0 ]; then
  step build 300 configure_and_build || { echo "gpu-check: the build failed, see $log_dir/build.log" >&2; }
fi
bin=$build/bin
products=$build/products.gcn
# The same first 64 batches of a products epoch (a third of it) on both
# devices: equal work for the ratio, bounded time on a slow CPU.
epoch_flags=(--num-neighbors 15,10,5 --batch-size 1024 --hidden 128 --head linear --epochs 1 --eval none
  --max-batches 64 --seed 0 --metrics-out)

if [ -x "$bin/dgcn-prep" ] && [ ! -f "$products" ]; then
  step prep-products 120 "$bin/dgcn-prep" synthetic --preset products --seed 0 --out "$products"
fi
if [ "$cpu_only" -eq 0 ] && [ -x "$bin/dgcn-train" ]; then
  step cuda-tests 120 ctest --test-dir "$build" --output-on-failure -R 'Cuda'
  step spmm-bench-cuda 120 "$bin/dgcn-spmm-bench" --device cuda --reps 20
  step epoch-cuda 180 "$bin/dgcn-train" --data "$products" --device cuda "${epoch_flags[@]}" "$log_dir/epoch-cuda.jsonl"
  step nccl-1-rank 120 "$bin/dgcn-train" --data "$products" --device cuda --backend nccl --nproc-per-node 1 \
    --num-neighbors 15,10,5 --batch-size 1024 --hidden 128 --head linear --epochs 1 --eval none --seed 0
fi
if [ -x "$bin/dgcn-train" ] && [ -f "$products" ]; then
  step epoch-cpu 240 "$bin/dgcn-train" --data "$products" --device cpu "${epoch_flags[@]}" "$log_dir/epoch-cpu.jsonl"
fi

# --- Report --------------------------------------------------------------------
epoch_seconds() {  # the epoch's train seconds (64 batches) from a metrics file, or null
  local f=$log_dir/$1.jsonl
  [ -f "$f" ] || { echo null; return; }
  /usr/bin/env python3 - "$f" <<'EOF' 2>/dev/null || echo null
import json, sys
for line in open(sys.argv[1]):
    j = json.loads(line)
    for key in ("epoch_s",):
        if key in j and "epoch" in j:
            print(j[key]); sys.exit(0)
print("null")
EOF
}
cuda_s=$(epoch_seconds epoch-cuda)
cpu_s=$(epoch_seconds epoch-cpu)
ratio=null
if [ "$cuda_s" != null ] && [ "$cpu_s" != null ]; then
  ratio=$(awk -v a="$cpu_s" -v b="$cuda_s" 'BEGIN { printf "%.2f", a / b }')
fi
spmm=$( [ -f "$log_dir/spmm-bench-cuda.log" ] && last_json spmm-bench-cuda )
nccl=$( [ -f "$log_dir/nccl-1-rank.log" ] && last_json nccl-1-rank )
cat >"$report" <<EOF
{"device": "${gpu_name:-none (--cpu-only)}", "host": "$(hostname)", "cores": $(nproc),
 "steps": [${steps_json}],
 "seconds_64_products_batches": {"cuda": $cuda_s, "cpu": $cpu_s, "cpu_over_cuda": $ratio},
 "spmm_bench_cuda": ${spmm:-null},
 "nccl_1_rank_summary": ${nccl:-null},
 "ok": $([ "$failed" -eq 0 ] && echo true || echo false)}
EOF
echo "gpu-check: report $report" >&2
cat "$report"
exit "$failed"
