#!/usr/bin/env bash
# Partitioned vs replicated training on one store, on this machine's loopback
# (Gloo): per-rank graph bytes and peak RSS, bytes exchanged per batch (ids,
# picks, rows) for METIS and random parts, and time per batch, split into
# waiting for the loader, compute and other, beside the loader's time in
# the all-to-alls. Prints one JSON object on stdout; progress on stderr.
#
#   bench/partition-bench.sh [--data F.gcn] [--parts 2,4] [--batches N] [--work DIR]
#                              [--seeds global,local] [--methods metis,random] [--threads T]
#   bench/partition-bench.sh --accuracy EPOCHS [--seeds-list 0,1,2] ...
#
# Defaults: the products preset (made in --work if absent), 2 and 4 parts,
# 16 batches per rank (one epoch's first batches, --eval none), both seed
# modes, both methods. Parts are made with dgcn-prep partition in --work
# (reused when present). --accuracy E instead trains E epochs, replicated
# (2 ranks) and partitioned (2 METIS parts, --seeds local) for each seed of
# --seeds-list, and reports the test accuracies.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/bin
data=
work=partition-bench
parts_list=2,4
batches=16
seeds_modes=global,local
methods=metis,random
threads=0
accuracy=0
seed_list=0,1,2
while [ $# -gt 0 ]; do
  case "$1" in
    --data) data=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --parts) parts_list=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    --seeds) seeds_modes=$2; shift 2 ;;
    --methods) methods=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --accuracy) accuracy=$2; shift 2 ;;
    --seeds-list) seed_list=$2; shift 2 ;;
    -h|--help) sed -n 2,17p "$0"; exit 0 ;;
    *) echo "partition-bench: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for b in dgcn-train dgcn-prep; do
  [ -x "$bin/$b" ] || { echo "partition-bench: $bin/$b is missing; run scripts/build.sh first" >&2; exit 2; }
done
mkdir -p "$work"
if [ -z "$data" ]; then
  data=$work/products.gcn
  if [ ! -f "$data" ]; then
    echo "partition-bench: making the products preset in $data" >&2
    "$bin/dgcn-prep" synthetic --preset products --seed 0 --out "$data" >/dev/null
  fi
fi
[ -f "$data" ] || { echo "partition-bench: --data $data does not exist" >&2; exit 2; }

# parts_dir P METHOD: the partition folder, made once.
parts_dir() {
  local dir=$work/parts-$2-$1
  if [ ! -f "$dir/partition.json" ]; then
    echo "partition-bench: partitioning into $1 parts ($2)" >&2
    rm -rf "$dir"
    "$bin/dgcn-prep" partition "$data" --parts "$1" --method "$2" --out "$dir" > "$work/partition-$2-$1.json"
  fi
  echo "$dir"
}

# run NAME ARGS...: one dgcn-train run; its summary and metrics land in $work/NAME.*
run() {
  local name=$1
  shift
  echo "partition-bench: $name" >&2
  # This bench's own result of an earlier run: dgcn-train refuses to replace
  # a metrics file that holds lines, so the rerun removes it first.
  rm -f "$work/$name.jsonl"
  "$bin/dgcn-train" --num-neighbors 15,10,5 --batch-size 1024 --hidden 128 --head linear --threads "$threads" \
    --timeout 600 --metrics-out "$work/$name.jsonl" "$@" > "$work/$name.json" 2> "$work/$name.log" ||
    { echo "partition-bench: $name failed; see $work/$name.log" >&2; tail -5 "$work/$name.log" >&2; exit 1; }
}

names=()
if [ "$accuracy" -gt 0 ]; then
  dir=$(parts_dir 2 metis)
  for seed in ${seed_list//,/ }; do
    run "acc-replicated-s$seed" --data "$data" --load private --nproc-per-node 2 --epochs "$accuracy" \
      --eval-every "$accuracy" --seed "$seed"
    run "acc-partitioned-s$seed" --data "$dir" --seeds local --nproc-per-node 2 --epochs "$accuracy" \
      --eval-every "$accuracy" --seed "$seed"
    names+=("acc-replicated-s$seed" "acc-partitioned-s$seed")
  done
else
  for p in ${parts_list//,/ }; do
    run "replicated-$p" --data "$data" --load private --nproc-per-node "$p" --epochs 1 --max-batches "$batches" \
      --eval none
    names+=("replicated-$p")
    for method in ${methods//,/ }; do
      dir=$(parts_dir "$p" "$method")
      for seeds in ${seeds_modes//,/ }; do
        run "partitioned-$method-$seeds-$p" --data "$dir" --seeds "$seeds" --nproc-per-node "$p" --epochs 1 \
          --max-batches "$batches" --eval none
        names+=("partitioned-$method-$seeds-$p")
      done
    done
  done
fi

/usr/bin/python3 - "$work" "$data" "${names[@]}" <<'PY'
import json, os, sys
work, data, names = sys.argv[1], sys.argv[2], sys.argv[3:]
whole_bytes = None
runs = []
for name in names:
    summary = json.load(open(os.path.join(work, name + ".json")))
    epochs = [l for l in map(json.loads, open(os.path.join(work, name + ".jsonl"))) if "epoch" in l]
    last = epochs[-1]
    cfg = summary["config"]["run"]
    graph = summary["memory"]["graph_bytes"]
    if cfg.get("partition") is None and whole_bytes is None:
        whole_bytes = graph[0]
    r = {"name": name, "ranks": summary["world_size"],
         "mode": "partitioned" if "partition" in cfg else "replicated",
         "method": cfg.get("partition", {}).get("method"), "seeds": cfg.get("seeds"),
         "graph_bytes": graph, "peak_rss_bytes": summary["memory"]["peak_rss_bytes"],
         "batches": last["batches"], "epoch_s": last["epoch_s"],
         "per_batch_s": last["epoch_s"] / max(1, last["batches"]),
         "sampling_wait_s": last["sampling_wait_s"], "compute_s": last["compute_s"], "other_s": last["other_s"],
         "test_acc": summary.get("test_acc"), "seed": summary["config"]["seed"]}
    if "exchange" in last:
        r["exchange_per_batch"] = last["exchange"]["per_batch"]
        # The loader's time in all-to-alls, per batch of one rank.
    runs.append(r)
for r in runs:
    if whole_bytes:
        r["graph_fraction"] = [b / whole_bytes for b in r["graph_bytes"]]
by = {r["name"]: r for r in runs}
ratios = {}
for r in runs:
    base = by.get("replicated-%d" % r["ranks"])
    if r["mode"] == "partitioned" and base:
        ratios[r["name"]] = {"per_batch_s_vs_replicated": r["per_batch_s"] / base["per_batch_s"],
                             "peak_rss_vs_replicated": max(r["peak_rss_bytes"]) / max(base["peak_rss_bytes"])}
partitions = {}
for f in sorted(os.listdir(work)):
    if f.startswith("partition-") and f.endswith(".json"):
        p = json.load(open(os.path.join(work, f)))
        partitions[f[len("partition-"):-5]] = {"cut_fraction": p["quality"]["cut_fraction"],
                                               "node_balance": p["quality"]["node_balance"],
                                               "train_balance": p["quality"]["train_balance"],
                                               "entry_balance": p["quality"]["entry_balance"],
                                               "seconds": p["seconds"]}
print(json.dumps({"data": data, "whole_graph_bytes": whole_bytes, "hardware_threads": os.cpu_count(),
                  "partitions": partitions, "runs": runs, "ratios": ratios}))
PY
