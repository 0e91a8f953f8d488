#include "sampling/seed_partition.h"

#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "base/error.h"

namespace dgcn {
namespace {

std::vector<int64_t> iota_nodes(int64_t n, int64_t first = 0) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

TEST(SeedPartition, ShardsAreDisjointCoveringAndEqualInBatches) {
  for (int64_t n : {0, 1, 7, 100, 1001, 4096}) {
    const auto nodes = iota_nodes(n, 1000);
    for (int world = 1; world <= 8; ++world) {
      for (int64_t batch_size : {1, 7, 64}) {
        for (bool drop_last : {false, true}) {
          SCOPED_TRACE(fmt::format("n {} world {} batch {} drop_last {}", n, world, batch_size, drop_last));
          std::set<int64_t> seen;
          std::set<std::tuple<uint64_t, int64_t, int64_t>> keys;
          int64_t trained = 0;
          std::vector<EpochPlan> plans;
          for (int rank = 0; rank < world; ++rank) {
            plans.push_back(plan_epoch(nodes, {.seed = 3,
                                               .epoch = 5,
                                               .rank = rank,
                                               .world_size = world,
                                               .batch_size = batch_size,
                                               .drop_last = drop_last}));
          }
          for (const EpochPlan& p : plans) {
            ASSERT_EQ(p.num_batches, plans[0].num_batches) << "rank " << p.rank;
            ASSERT_EQ(p.dropped, plans[0].dropped);
            ASSERT_EQ(p.seeds.size(), plans[0].seeds.size());
            int64_t in_batches = 0;
            for (int64_t b = 0; b < p.num_batches; ++b) {
              auto seeds = p.batch(b);
              ASSERT_GE(seeds.size(), 1u);
              ASSERT_LE(static_cast<int64_t>(seeds.size()), batch_size);
              if (drop_last || b + 1 < p.num_batches) {
                ASSERT_EQ(static_cast<int64_t>(seeds.size()), batch_size);
              }
              for (int64_t s : seeds) {
                ASSERT_GE(s, 1000);
                ASSERT_LT(s, 1000 + n);
                ASSERT_TRUE(seen.insert(s).second) << "seed " << s << " trained twice";
              }
              in_batches += static_cast<int64_t>(seeds.size());
              BatchKey k = p.key(b);
              ASSERT_TRUE(keys.emplace(k.seed, k.epoch, k.batch).second) << "two batches share a random key";
            }
            ASSERT_EQ(in_batches, static_cast<int64_t>(p.seeds.size()));
            trained += in_batches;
          }
          // Covering: only the documented remainder is left out.
          ASSERT_EQ(trained + plans[0].dropped, n);
          const int64_t per_rank = n / world;
          const int64_t partial = drop_last ? per_rank % batch_size : 0;
          ASSERT_EQ(plans[0].dropped, n % world + world * partial);
          ASSERT_LT(n % world, world);
        }
      }
    }
  }
}

TEST(SeedPartition, ShuffleDependsOnSeedAndEpochOnly) {
  const auto nodes = iota_nodes(500);
  auto order = [&](uint64_t seed, int64_t epoch) {
    return plan_epoch(nodes, {.seed = seed, .epoch = epoch, .batch_size = 10}).seeds;
  };
  EXPECT_EQ(order(1, 0), order(1, 0));
  EXPECT_NE(order(1, 0), order(1, 1));
  EXPECT_NE(order(1, 0), order(2, 0));
  EXPECT_NE(order(1, 0), nodes);
  auto sorted = order(1, 3);
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, nodes);
  // Over many epochs every node is trained: the dropped remainder moves.
  std::set<int64_t> ever;
  for (int64_t epoch = 0; epoch < 30; ++epoch) {
    for (int rank = 0; rank < 3; ++rank) {
      auto p = plan_epoch(iota_nodes(10),
                          {.seed = 4, .epoch = epoch, .rank = rank, .world_size = 3, .batch_size = 2});
      EXPECT_EQ(p.dropped, 1);
      ever.insert(p.seeds.begin(), p.seeds.end());
    }
  }
  EXPECT_EQ(ever.size(), 10u);
}

TEST(SeedPartition, UnshuffledPlanMatchesTheHeaderExample) {
  const auto nodes = iota_nodes(10, 10);
  std::vector<std::vector<int64_t>> want = {{10, 11, 12}, {13, 14, 15}, {16, 17, 18}};
  for (int rank = 0; rank < 3; ++rank) {
    auto p = plan_epoch(nodes, {.rank = rank, .world_size = 3, .batch_size = 2, .shuffle = false});
    EXPECT_EQ(p.seeds, want[rank]);
    ASSERT_EQ(p.num_batches, 2);
    EXPECT_EQ(std::vector<int64_t>(p.batch(1).begin(), p.batch(1).end()),
              std::vector<int64_t>{want[rank][2]});
    EXPECT_EQ(p.dropped, 1);
    EXPECT_EQ(p.key(1).batch, 1 * 3 + rank);
  }
}

TEST(SeedPartition, RejectsBadOptions) {
  const auto nodes = iota_nodes(10);
  auto message = [&](ShardOptions o) -> std::string {
    try {
      plan_epoch(nodes, o);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(message({.rank = 2, .world_size = 2}), "plan_epoch: rank = 2 is not in [0, world_size = 2)");
  EXPECT_EQ(message({.world_size = 0}), "plan_epoch: world_size = 0, expected >= 1");
  EXPECT_EQ(message({.batch_size = 0}), "plan_epoch: batch_size = 0, expected >= 1");
  auto p = plan_epoch(nodes, {.batch_size = 4});
  EXPECT_THROW(p.batch(3), Error);
}

}  // namespace
}  // namespace dgcn
