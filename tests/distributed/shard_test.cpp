#include "distributed/shard.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "base/error.h"

namespace dgcn {
namespace {

TEST(Shard, PermutationDependsOnlyOnSeedAndEpoch) {
  auto p = epoch_permutation(1000, 5, 2);
  std::vector<int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(sorted[i], i);
  EXPECT_EQ(p, epoch_permutation(1000, 5, 2));
  EXPECT_NE(p, epoch_permutation(1000, 5, 3));
  EXPECT_NE(p, epoch_permutation(1000, 6, 2));
}

TEST(Shard, DistributedSamplerRule) {
  for (int64_t n : {1, 5, 60, 61, 64}) {
    for (int world : {1, 2, 3, 4, 8}) {
      auto perm = epoch_permutation(n, 11, 1);
      std::set<int64_t> covered;
      int64_t per_rank = (n + world - 1) / world;
      for (int rank = 0; rank < world; ++rank) {
        auto shard = shuffled_shard(n, world, rank, 11, 1);
        ASSERT_EQ(static_cast<int64_t>(shard.size()), per_rank) << "equal batch counts on every rank";
        for (int64_t k = 0; k < per_rank; ++k) ASSERT_EQ(shard[k], perm[(rank + k * world) % n]);
        covered.insert(shard.begin(), shard.end());
      }
      EXPECT_EQ(static_cast<int64_t>(covered.size()), n) << "every example is trained on";
    }
  }
}

TEST(Shard, DisjointWhenWorldDividesN) {
  std::set<int64_t> seen;
  for (int rank = 0; rank < 4; ++rank) {
    for (int64_t i : shuffled_shard(100, 4, rank, 3, 0)) EXPECT_TRUE(seen.insert(i).second) << i;
  }
  EXPECT_EQ(seen.size(), 100u);
}

TEST(Shard, RejectsBadArguments) {
  EXPECT_THROW(shuffled_shard(0, 1, 0, 0, 0), Error);
  EXPECT_THROW(shuffled_shard(10, 2, 2, 0, 0), Error);
  EXPECT_THROW(shuffled_shard(10, 0, 0, 0, 0), Error);
}

}  // namespace
}  // namespace dgcn
