#include "distributed/shard.h"

#include <algorithm>
#include <numeric>

#include "base/error.h"
#include "sampling/seed_partition.h"

namespace dgcn {

// The permutation is seed_partition's epoch shuffle (one shuffle in the
// project); only the split differs: DistributedSampler's padding and stride
// here, seed_partition's drop-remainder slices for graph training.
std::vector<int64_t> epoch_permutation(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> identity(static_cast<size_t>(std::max<int64_t>(n, 0)));
  std::iota(identity.begin(), identity.end(), int64_t{0});
  return epoch_shuffle(identity, seed, epoch);
}

std::vector<int64_t> shuffled_shard(int64_t n, int world_size, int rank, uint64_t seed, int64_t epoch) {
  DGCN_CHECK(n >= 1, "shuffled_shard: no examples to shard (n = {})", n);
  DGCN_CHECK(world_size >= 1 && rank >= 0 && rank < world_size,
             "shuffled_shard: rank {} is outside [0, world_size = {})", rank, world_size);
  std::vector<int64_t> perm = epoch_permutation(n, seed, epoch);
  int64_t per_rank = (n + world_size - 1) / world_size;
  std::vector<int64_t> shard;
  shard.reserve(static_cast<size_t>(per_rank));
  for (int64_t k = 0; k < per_rank; ++k) shard.push_back(perm[(rank + k * world_size) % n]);
  return shard;
}

}  // namespace dgcn
