#include "distributed/shard.h"

#include <numeric>
#include <utility>

#include "graph/error.h"

namespace dgcn {
namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

std::vector<int64_t> epoch_permutation(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  uint64_t state = seed * 0x100000001b3ULL ^ (static_cast<uint64_t>(epoch) + 0x51ed270b27a3c2f1ULL);
  // Fisher-Yates with our own generator, so the order is the same with every
  // standard library (std::shuffle's algorithm is unspecified).
  for (int64_t i = n - 1; i > 0; --i) {
    auto j = static_cast<int64_t>(splitmix64(state) % static_cast<uint64_t>(i + 1));
    std::swap(perm[i], perm[j]);
  }
  return perm;
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
