#!/usr/bin/env bash
# GPU acceptance, one call on the CUDA host (a Python torch with a CUDA
# LibTorch, CUDA 13, no package registry), within 8 minutes. Each step runs
# under its own time limit (seconds; they add up to 470 s):
#
#   build        220  configure and build the GPU run's targets into build-gpu/
#                     (scripts/gpu-build.sh: the bundle, python3's torch, nvcc)
#   ldd           10  every binary finds every library (RUNPATH, no loader cache)
#   prep          40  the synthetic `products` preset store
#   cuda-tests    50  ctest -R Cuda with DGCN_REQUIRE_GPU=1: a skipped CUDA
#                     test fails, no matching test fails (--no-tests=error);
#                     includes the repeated-SpMM bit-equality test
#   spmm-bench    30  dgcn-spmm-bench --device cuda
#   epoch-cuda    40  the first 64 batches of a products epoch on the GPU
#                     (the training path: pinned buffers, non_blocking copies;
#                     dropout 0 so both devices compute the same function)
#   epoch-cpu     50  the same 64 batches on the CPU
#   compare       10  the two losses agree (relative difference <= 5e-3)
#   nccl          20  a 1-rank NCCL run of 16 batches (--backend nccl)
#
# The report (gpu-check.json) is rewritten after every step, so a run killed
# midway still leaves one; the step logs travel in one archive
# (gpu-check-logs.tar.gz). Both land in $OUT when it is set (the device
# tool brings back at most 8 files: these are 2), else in the build folder.
#
#   scripts/gpu-check.sh [--deps DIR] [--jobs N] [--build DIR] [--skip-build]
#   scripts/gpu-check.sh --no-device [--deps DIR] [--jobs N] [--build DIR]
#
#   --no-device   on a machine without a GPU (CI): the build exactly as the
#                 GPU host does it (the bundle unpacked in a private prefix,
#                 python3's torch), with this machine's development packages,
#                 bundled runtime libraries and CUDA's loader-cache entries
#                 hidden in a mount namespace (scripts/gpu-host-view.sh; needs
#                 root), then ldd, prep and epoch-cpu in that view, and the
#                 report. It builds only what it runs or ldd-checks: not
#                 models_test (the CUDA tests' other binary; gnn_layers_test
#                 stands for both, same libraries). Its limits are this
#                 machine's: build 1500 s, prep and epoch-cpu 150 s.
#   --deps DIR    the bundle of scripts/gpu-pack-deps.sh (DIR/env.sh);
#                 default $DGCN_GPU_DEPS, else shared/gpu-host-debs; --no-device
#                 makes one in BUILD/bundle when neither exists
#   --build DIR   build folder (default build-gpu)
#   --jobs N      parallel compile jobs (default: the cores)
#   --skip-build  use the build folder as it is
#   --preset P    the synthetic preset the epochs train on (default products;
#                 CI's --no-device run takes `small` to save its 2 cores a minute)
# Exit status: 0 every step passed; 1 a step failed (the report says which);
# 2 usage; 3 no CUDA device found (nothing was built or run).
set -uo pipefail
cd "$(dirname "$0")/.."

deps=${DGCN_GPU_DEPS:-}
jobs=$(nproc)
skip_build=0
no_device=0
in_view=0
build=build-gpu
preset=products
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --deps) deps=${2:?--deps needs a folder}; shift 2 ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
    --build) build=${2:?--build needs a folder}; shift 2 ;;
    --skip-build) skip_build=1; shift ;;
    --preset) preset=${2:?--preset needs a name}; shift 2 ;;
    --no-device) no_device=1; shift ;;
    --in-host-view) in_view=1; shift ;;  # internal: --no-device re-runs itself in the view
    -h|--help) usage; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if ! [[ "$jobs" =~ ^[1-9][0-9]*$ ]]; then echo "gpu-check: --jobs '$jobs' is not a positive number" >&2; exit 2; fi
[ -z "$deps" ] && [ -f shared/gpu-host-debs/env.sh ] && deps=shared/gpu-host-debs
[ "$no_device" -eq 1 ] && mkdir -p "$build"
if [ "$no_device" -eq 1 ] && [ -z "$deps" ]; then
  echo "gpu-check: no bundle given; making one in $build/bundle (scripts/gpu-pack-deps.sh)" >&2
  scripts/gpu-pack-deps.sh "$build/bundle" >&2 || exit 1
  deps=$build/bundle
fi
if [ -n "$deps" ] && [ ! -f "$deps/env.sh" ]; then
  echo "gpu-check: --deps $deps has no env.sh (make it with scripts/gpu-pack-deps.sh DIR)" >&2
  exit 2
fi
deps=${deps:+$(cd "$deps" && pwd)}

# --no-device: the rest runs in the GPU host's view of this machine.
if [ "$no_device" -eq 1 ] && [ "$in_view" -eq 0 ]; then
  command -v unshare >/dev/null || { echo "gpu-check: --no-device needs unshare (util-linux)" >&2; exit 2; }
  # The bundle's private prefix, inside the build folder (never /tmp's shared one).
  DGCN_DEPS_PREFIX="$(cd "$build" && pwd)/deps-prefix"
  export DGCN_DEPS_PREFIX
  exec unshare -m scripts/gpu-host-view.sh "$0" --no-device --in-host-view --deps "$deps" --jobs "$jobs" \
    --build "$build" --preset "$preset" $([ "$skip_build" -eq 1 ] && echo --skip-build)
fi

# --- Is there a GPU? ---------------------------------------------------------
gpu_name=""
if [ "$no_device" -eq 0 ]; then
  if command -v nvidia-smi >/dev/null 2>&1; then
    gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  fi
  if [ -z "$gpu_name" ]; then
    echo "gpu-check: no CUDA device found (nvidia-smi is $(command -v nvidia-smi >/dev/null && echo 'present but lists no GPU' || echo absent));" \
      "nothing was built or run. Without a GPU, --no-device checks everything else." >&2
    exit 3
  fi
  echo "gpu-check: device: $gpu_name" >&2
fi

mkdir -p "$build"
out_dir=${OUT:-$build}
mkdir -p "$out_dir"
report=$out_dir/gpu-check.json
archive=$out_dir/gpu-check-logs.tar.gz
log_dir=$build/gpu-check-logs  # never under $OUT: only the archive travels
rm -rf "$log_dir"
mkdir -p "$log_dir"
steps_tsv=$log_dir/steps.tsv
: >"$steps_tsv"
failed=0
bin=$build/bin
store=$build/$preset.gcn  # the preset store the epochs train on
batches=64
mode=$([ "$no_device" -eq 1 ] && echo no-device || echo gpu)
# Each step's limit on the GPU host (the table in --help and docs/building.md):
# together under the 8 minutes one device call is planned for (the tool
# allows 600 s), so a slow step cannot cost the whole report.
declare -A limit=([build]=220 [ldd]=10 [prep]=40 [cuda-tests]=50 [spmm-bench]=30 [epoch-cuda]=40
  [epoch-cpu]=50 [compare]=10 [nccl]=20)
total_limit=0
for s in "${limit[@]}"; do total_limit=$((total_limit + s)); done
if [ "$total_limit" -gt 480 ]; then
  echo "gpu-check: the step limits add up to ${total_limit} s, over the 480 s planned" >&2
  exit 2
fi
# --no-device: this machine's 2 cores, not the host's 16.
[ "$no_device" -eq 1 ] && limit[build]=1500 limit[prep]=150 limit[epoch-cpu]=150
# What a complete run has done; a step that never ran makes the report not ok
# (prep is skipped when the store is already there).
if [ "$no_device" -eq 1 ]; then
  planned="build ldd epoch-cpu"
else
  planned="build ldd cuda-tests spmm-bench epoch-cuda epoch-cpu compare nccl"
fi
[ "$skip_build" -eq 1 ] && planned=${planned#build }

# The report from what the steps left; rewritten after every step.
write_report() {
  python3 - "$steps_tsv" "$log_dir" "$report" "$mode" "${gpu_name:-none}" "$batches" "$planned" "$preset" <<'EOF' || true
import json, os, socket, sys
steps_tsv, log_dir, report, mode, device, batches, planned, preset = sys.argv[1:]
steps = []
for line in open(steps_tsv):
    name, rc, seconds, limit = line.rstrip("\n").split("\t")
    steps.append({"name": name, "ok": rc == "0", "exit_code": int(rc), "seconds": float(seconds),
                  "limit_s": int(limit), "log": name + ".log"})

def last_json(name):
    try:
        lines = [l for l in open(os.path.join(log_dir, name + ".log")) if l.startswith("{")]
        return json.loads(lines[-1]) if lines else None
    except (OSError, ValueError):
        return None

def epoch(name):
    try:
        for line in open(os.path.join(log_dir, name + ".jsonl")):
            j = json.loads(line)
            if "epoch" in j:
                return {"seconds": j.get("epoch_s"), "loss": j.get("loss")}
    except (OSError, ValueError):
        pass
    return None

def text(name):
    try:
        return open(os.path.join(log_dir, name)).read().strip()
    except OSError:
        return None

cuda, cpu = epoch("epoch-cuda"), epoch("epoch-cpu")
out = {"mode": mode, "device": device, "host": socket.gethostname(), "cores": os.cpu_count(),
       "version": text("version.txt"), "steps": steps,
       "preset": preset, "batches": int(batches), "epoch_cuda": cuda, "epoch_cpu": cpu,
       "cpu_over_cuda_seconds": (cpu["seconds"] / cuda["seconds"]
                                 if cuda and cpu and cuda.get("seconds") and cpu.get("seconds") else None),
       "loss_comparison": last_json("compare"),
       "spmm_bench_cuda": last_json("spmm-bench"), "nccl_1_rank_summary": last_json("nccl"),
       "not_run": [p for p in planned.split() if p not in {s["name"] for s in steps}]}
out["ok"] = all(s["ok"] for s in steps) and not out["not_run"]
tmp = report + ".tmp"
with open(tmp, "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
os.replace(tmp, report)
EOF
  tar -czf "$archive.tmp" -C "$log_dir" . 2>/dev/null && mv -f "$archive.tmp" "$archive"
}

# step NAME LIMIT_S COMMAND...: runs a program (not a shell function: timeout
# runs programs) with a time limit, logs to $log_dir/NAME.log, records the
# result and rewrites the report.
step() {
  local name=$1 limit=$2
  shift 2
  local start rc seconds
  start=$(date +%s.%N)
  echo "gpu-check: $name (limit ${limit} s) ..." >&2
  timeout --kill-after=5 "$limit" "$@" >"$log_dir/$name.log" 2>&1
  rc=$?
  seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  [ "$rc" -eq 0 ] || failed=1
  [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && echo "gpu-check: $name ran past its ${limit} s" >&2
  echo "gpu-check: $name: exit $rc in ${seconds} s" >&2
  printf '%s\t%s\t%s\t%s\n' "$name" "$rc" "$seconds" "$limit" >>"$steps_tsv"
  write_report
  return "$rc"
}

# The binaries ldd checks: the apps and the CUDA tests' binaries (the
# --no-device run builds one of the two, which links the same libraries).
test_bins=(gnn_layers_test models_test)
[ "$no_device" -eq 1 ] && test_bins=(gnn_layers_test)
build_targets=()
[ "$no_device" -eq 1 ] && build_targets=("${test_bins[@]}" dgcn-spmm-bench dgcn-train dgcn-prep)

write_report
if [ "$skip_build" -eq 0 ]; then
  step build "${limit[build]}" scripts/gpu-build.sh "$build" "$jobs" "$deps" "${build_targets[@]}" ||
    echo "gpu-check: the build failed; see build.log in $archive" >&2
fi
if [ -x "$bin/dgcn-train" ]; then
  "$bin/dgcn-train" --version >"$log_dir/version.txt" 2>&1
  # Without the bundle's LD_LIBRARY_PATH, as a user's shell would run them.
  step ldd "${limit[ldd]}" env -u LD_LIBRARY_PATH bash -c 'status=0
    for f in "$@"; do
      [ -e "$f" ] || { echo "$f: not built"; status=1; continue; }
      echo "$f: $(readelf -d "$f" | grep -E "RUNPATH|RPATH" || echo "no RUNPATH")"
      if ldd "$f" | grep "not found"; then status=1; fi
    done
    exit $status' ldd "$bin/dgcn-train" "$bin/dgcn-prep" "$bin/dgcn-spmm-bench" "${test_bins[@]/#/$build/tests/bin/}"
fi
if [ -x "$bin/dgcn-prep" ] && [ ! -f "$store" ]; then
  step prep "${limit[prep]}" "$bin/dgcn-prep" synthetic --preset "$preset" --seed 0 --out "$store"
fi
# One products-style job for every training step; the epochs run the same
# first batches on both devices: equal work for the ratio and the same
# function (dropout 0) for the loss comparison.
train_flags=(--data "$store" --num-neighbors 15,10,5 --batch-size 1024 --hidden 128 --head linear --epochs 1
  --eval none --seed 0)
epoch_flags=("${train_flags[@]}" --dropout 0 --max-batches "$batches" --metrics-out)
can_train=0
[ -x "$bin/dgcn-train" ] && [ -f "$store" ] && can_train=1
if [ "$no_device" -eq 0 ] && [ "$can_train" -eq 1 ]; then
  step cuda-tests "${limit[cuda-tests]}" env DGCN_REQUIRE_GPU=1 ctest --test-dir "$build" --output-on-failure --no-tests=error -R 'Cuda'
  step spmm-bench "${limit[spmm-bench]}" "$bin/dgcn-spmm-bench" --device cuda --reps 20
  step epoch-cuda "${limit[epoch-cuda]}" "$bin/dgcn-train" --device cuda "${epoch_flags[@]}" "$log_dir/epoch-cuda.jsonl"
fi
if [ "$can_train" -eq 1 ]; then
  step epoch-cpu "${limit[epoch-cpu]}" "$bin/dgcn-train" --device cpu "${epoch_flags[@]}" "$log_dir/epoch-cpu.jsonl"
fi
if [ "$no_device" -eq 0 ] && [ -f "$log_dir/epoch-cuda.jsonl" ] && [ -f "$log_dir/epoch-cpu.jsonl" ]; then
  step compare "${limit[compare]}" python3 -c '
import json, sys
def loss(path):
    return [json.loads(l) for l in open(path) if "\"epoch\"" in l][0]["loss"]
cuda, cpu, tol = loss(sys.argv[1]), loss(sys.argv[2]), 5e-3
rel = abs(cuda - cpu) / max(abs(cpu), 1e-12)
print(json.dumps({"loss_cuda": cuda, "loss_cpu": cpu, "relative_difference": rel, "tolerance": tol}))
sys.exit(0 if rel <= tol else 1)' "$log_dir/epoch-cuda.jsonl" "$log_dir/epoch-cpu.jsonl"
fi
if [ "$no_device" -eq 0 ] && [ "$can_train" -eq 1 ]; then
  step nccl "${limit[nccl]}" "$bin/dgcn-train" --device cuda --backend nccl --nproc-per-node 1 "${train_flags[@]}" \
    --max-batches 16
fi

write_report
echo "gpu-check: report $report, logs $archive" >&2
cat "$report"
python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))["ok"] else 1)' "$report" || failed=1
exit "$failed"
