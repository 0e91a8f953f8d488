#!/usr/bin/env bash
# Fresh Debian 12: install the dependencies, build dgcn, generate the
# synthetic 'small' graph (100k nodes, products-like) unless it exists, and
# train a GCN on it with sampled mini-batches on 2 ranks (the built-in
# launcher; gradients averaged over Gloo, or NCCL with --device cuda): the
# main job, in a few minutes. Rank 0 writes the metrics, the plot and the
# JSON summary line.
#   scripts/quickstart.sh [extra dgcn-train flags, e.g. --epochs 10 --device cuda]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
mkdir -p data runs
if [ ! -f data/small.gcn ]; then
  build/bin/dgcn-prep synthetic --preset small --seed 0 --out data/small.gcn
fi
# The metrics of an earlier quickstart: dgcn-train refuses to replace a
# metrics file that holds lines, so a rerun starts from a fresh one.
rm -f runs/quickstart.jsonl
build/bin/dgcn-train --nproc-per-node 2 --data data/small.gcn --num-neighbors 15,10,5 --batch-size 1024 --hidden 128 \
  --epochs 5 --lr 0.01 --dropout 0.5 --seed 0 \
  --metrics-out runs/quickstart.jsonl --plot runs/quickstart.png "$@"
echo "quickstart: per-epoch metrics in runs/quickstart.jsonl, curves in runs/quickstart.png" >&2
