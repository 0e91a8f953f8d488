// Per-rank seed partitioning for data-parallel training: every rank derives
// the same shuffle of the training nodes from (seed, epoch), takes its own
// disjoint shard, and gets the same number of batches, so collectives issued
// once per batch can never hang on a rank that ran out of batches.
//
// Remainder policy: PAD, as PyTorch's DistributedSampler does. With N nodes
// and W ranks every rank gets ceil(N / W) seeds: the epoch's order is
// extended by its own first W * ceil(N / W) - N (< W) nodes, so every node is
// trained every epoch and a few of them (different ones each epoch) twice;
// rank r takes the r-th contiguous slice. With N divisible by W nothing is
// repeated. Fewer nodes than ranks (0 < N < W) is an error: some rank would
// train on copies only.
//
//   nodes = [10 .. 19] (N = 10), world_size 3, batch_size 2, shuffle off:
//   padded order 10 .. 19, 10, 11
//   rank 0: seeds 10 11 12 13 -> batches [10 11] [12 13]
//   rank 1: seeds 14 15 16 17 -> batches [14 15] [16 17]
//   rank 2: seeds 18 19 10 11 -> batches [18 19] [10 11]   (10 and 11 twice)
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
  // seeds[i] is nodes[positions[i]], the `nodes` plan_epoch was given (PyG's
  // input_id); empty from plan_local_epoch.
  std::vector<int64_t> positions;
  int64_t num_batches = 0;  // the same on every rank
  // Empty: batch b is seeds[b * batch_size, ...) (plan_epoch). Else batch b
  // is seeds[bounds[b], bounds[b + 1]) (plan_local_epoch).
  std::vector<int64_t> bounds;
  // Seeds trained twice this epoch (the padding, < W), and with drop_last the
  // seeds of the partial batches that no rank trains. Every rank computes
  // the same values.
  int64_t repeated = 0;
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

// A rank's own seeds for one epoch, e.g. its part's training nodes in a
// partitioned job (dgcn-train --seeds local): `nodes` in the order of a
// shuffle keyed by (seed, epoch, rank), spread over exactly `num_batches`
// batches whose sizes differ by at most one, so every rank runs the same
// number of batches however many nodes it holds. Keys as plan_epoch's.
// Throws dgcn::Error unless 1 <= num_batches <= nodes.size() (an empty
// batch would have nothing to train) and 0 <= rank < world_size.
//
//   nodes = [40 .. 46] (7 nodes), num_batches 3: batches of 2, 2, 3 seeds
EpochPlan plan_local_epoch(std::span<const int64_t> nodes, int64_t num_batches, const ShardOptions& options);

// Plans `nodes` (e.g. GraphStore::train_nodes()) for one rank and epoch.
// Throws dgcn::Error unless 0 <= rank < world_size, batch_size >= 1 and
// there are no nodes or at least one per rank.
EpochPlan plan_epoch(std::span<const int64_t> nodes, const ShardOptions& options);

}  // namespace dgcn
