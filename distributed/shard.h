// Which examples each rank trains on in an epoch, for datasets of independent
// examples (the MNIST baseline). The rule is torch.utils.data.DistributedSampler's:
// a permutation of [0, n) derived from (seed, epoch), padded by wrapping
// around to a multiple of the world size, then every world_size-th index
// starting at the rank. Every rank gets ceil(n / world_size) indices, so all
// ranks run the same number of batches (a rank with one batch fewer would
// leave its peers waiting in an all-reduce).
//
// Example, n = 5, world_size = 2, permutation [3, 0, 4, 1, 2]:
//   padded [3, 0, 4, 1, 2, 3]; rank 0 -> [3, 4, 2], rank 1 -> [0, 1, 3]
#pragma once

#include <cstdint>
#include <vector>

namespace dgcn {

// A permutation of [0, n) that depends only on (seed, epoch): the epoch
// shuffle of sampling/seed_partition.h applied to 0, 1, ..., n-1.
std::vector<int64_t> epoch_permutation(int64_t n, uint64_t seed, int64_t epoch);

// Rank `rank`'s indices for `epoch` (see above). Throws dgcn::Error when
// n < 1, world_size < 1 or rank is outside [0, world_size).
std::vector<int64_t> shuffled_shard(int64_t n, int world_size, int rank, uint64_t seed, int64_t epoch);

}  // namespace dgcn
