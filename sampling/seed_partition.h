// Per-rank seed partitioning for data-parallel training: every rank derives
// the same shuffle of the training nodes from (seed, epoch), takes its own
// disjoint shard, and gets the same number of batches, so collectives issued
// once per batch can never hang on a rank that ran out of batches.
//
// Remainder policy: DROP. With N nodes and W ranks each rank gets exactly
// floor(N / W) seeds; the N mod W (< W) nodes at the end of the epoch's
// shuffle are not trained this epoch. They differ from epoch to epoch, and no
// node is trained twice in one epoch (padding by repetition would do that).
//
//   nodes = [10 .. 19] (N = 10), world_size 3, batch_size 2, shuffle off:
//   rank 0: seeds 10 11 12 -> batches [10 11] [12]
//   rank 1: seeds 13 14 15 -> batches [13 14] [15]
//   rank 2: seeds 16 17 18 -> batches [16 17] [18]     (19 is dropped)
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sampling/neighbor_sampler.h"

namespace dgcn {

struct ShardOptions {
  uint64_t seed = 0;
  int64_t epoch = 0;
  int rank = 0;
  int world_size = 1;
  int64_t batch_size = 1024;
  bool shuffle = true;     // false keeps the input order (evaluation)
  bool drop_last = false;  // also drop the last, partial batch of each rank
};

// One rank's seeds for one epoch, cut into batches.
struct EpochPlan {
  uint64_t seed = 0;
  int64_t epoch = 0;
  int rank = 0;
  int world_size = 1;
  int64_t batch_size = 1;
  std::vector<int64_t> seeds;  // this rank's seeds in batch order
  int64_t num_batches = 0;     // the same on every rank
  // Nodes no rank trains this epoch: N mod W, plus W x (the partial batch)
  // with drop_last. Every rank computes the same value.
  int64_t dropped = 0;

  // Seeds of batch b in [0, num_batches): batch_size of them, fewer in the
  // last batch when drop_last is off.
  std::span<const int64_t> batch(int64_t b) const;
  // The random key of batch b: (seed, epoch, b * world_size + rank), distinct
  // across the batches of all ranks.
  BatchKey key(int64_t b) const;
};

// `items` in the epoch's shuffled order, which depends only on (seed, epoch):
// the order plan_epoch cuts into rank shards, and the MNIST baseline's
// permutation (distributed/shard.h).
std::vector<int64_t> epoch_shuffle(std::span<const int64_t> items, uint64_t seed, int64_t epoch);

// Plans `nodes` (e.g. GraphStore::train_nodes()) for one rank and epoch.
// Throws dgcn::Error unless 0 <= rank < world_size and batch_size >= 1.
EpochPlan plan_epoch(std::span<const int64_t> nodes, const ShardOptions& options);

}  // namespace dgcn
