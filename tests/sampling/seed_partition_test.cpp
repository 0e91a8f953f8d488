#include "sampling/seed_partition.h"

#include <gtest/gtest.h>

#include <map>
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

TEST(SeedPartition, ShardsCoverEveryNodeAndAreEqualInBatches) {
  for (int64_t n : {0, 8, 100, 1001, 4096}) {
    const auto nodes = iota_nodes(n, 1000);
    for (int world = 1; world <= 8; ++world) {
      for (int64_t batch_size : {1, 7, 64}) {
        for (bool drop_last : {false, true}) {
          SCOPED_TRACE(fmt::format("n {} world {} batch {} drop_last {}", n, world, batch_size, drop_last));
          std::map<int64_t, int> times;
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
            ASSERT_EQ(p.repeated, plans[0].repeated);
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
                ++times[s];
              }
              in_batches += static_cast<int64_t>(seeds.size());
              BatchKey k = p.key(b);
              ASSERT_TRUE(keys.emplace(k.seed, k.epoch, k.batch).second) << "two batches share a random key";
            }
            ASSERT_EQ(in_batches, static_cast<int64_t>(p.seeds.size()));
            trained += in_batches;
          }
          const int64_t per_rank = (n + world - 1) / world;
          EXPECT_EQ(plans[0].repeated, per_rank * world - n);
          ASSERT_LT(plans[0].repeated, world);
          EXPECT_EQ(plans[0].dropped, drop_last ? world * (per_rank % batch_size) : 0);
          EXPECT_EQ(trained + plans[0].dropped, n + plans[0].repeated);
          if (!drop_last) {
            // Every node trained, the padding's nodes twice, no node more often.
            EXPECT_EQ(static_cast<int64_t>(times.size()), n);
            int64_t twice = 0;
            for (const auto& [node, k] : times) {
              ASSERT_LE(k, 2) << "node " << node;
              twice += k == 2;
            }
            EXPECT_EQ(twice, plans[0].repeated);
          }
        }
      }
    }
  }
}

// positions[i] is where seeds[i] sits in the nodes given (PyG's input_id):
// every position of every rank's shard, each once but for the padding, also
// when `nodes` repeats a node.
TEST(SeedPartition, PositionsPointEachSeedBackIntoTheNodesGiven) {
  std::vector<int64_t> nodes = iota_nodes(101, 500);
  nodes[7] = nodes[50] = 512;  // a node given three times
  for (bool shuffle : {false, true}) {
    for (int world : {1, 3}) {
      SCOPED_TRACE(fmt::format("shuffle {} world {}", shuffle, world));
      std::map<int64_t, int> times;
      for (int rank = 0; rank < world; ++rank) {
        const EpochPlan p = plan_epoch(
            nodes,
            {.seed = 9, .epoch = 2, .rank = rank, .world_size = world, .batch_size = 8, .shuffle = shuffle});
        ASSERT_EQ(p.positions.size(), p.seeds.size());
        for (size_t i = 0; i < p.seeds.size(); ++i) {
          ASSERT_GE(p.positions[i], 0);
          ASSERT_LT(p.positions[i], static_cast<int64_t>(nodes.size()));
          EXPECT_EQ(nodes[static_cast<size_t>(p.positions[i])], p.seeds[i]) << "seed " << i;
          ++times[p.positions[i]];
        }
      }
      EXPECT_EQ(times.size(), nodes.size());
      int repeated = 0;
      for (const auto& [position, n] : times) repeated += n - 1;
      EXPECT_EQ(repeated, (world - static_cast<int>(nodes.size()) % world) % world);
    }
  }
  EXPECT_TRUE(plan_local_epoch(nodes, 4, {}).positions.empty());
}

TEST(SeedPartition, FewerNodesThanRanksIsAnError) {
  try {
    plan_epoch(iota_nodes(3), {.rank = 0, .world_size = 4});
    FAIL() << "planned 3 seeds on 4 ranks";
  } catch (const Error& e) {
    EXPECT_STREQ(
        e.what(),
        "plan_epoch: 3 seed nodes for 4 ranks; every rank needs at least one (train on fewer ranks)");
  }
  EXPECT_EQ(plan_epoch(iota_nodes(0), {.rank = 1, .world_size = 4}).num_batches, 0);
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
  // The repeated nodes move from epoch to epoch.
  std::set<int64_t> repeated;
  for (int64_t epoch = 0; epoch < 30; ++epoch) {
    std::map<int64_t, int> times;
    for (int rank = 0; rank < 3; ++rank) {
      auto p = plan_epoch(iota_nodes(10),
                          {.seed = 4, .epoch = epoch, .rank = rank, .world_size = 3, .batch_size = 2});
      EXPECT_EQ(p.repeated, 2);
      for (int64_t s : p.seeds) ++times[s];
    }
    for (const auto& [node, k] : times) {
      if (k == 2) repeated.insert(node);
    }
  }
  EXPECT_GT(repeated.size(), 4u);
}

TEST(SeedPartition, UnshuffledPlanMatchesTheHeaderExample) {
  const auto nodes = iota_nodes(10, 10);
  std::vector<std::vector<int64_t>> want = {{10, 11, 12, 13}, {14, 15, 16, 17}, {18, 19, 10, 11}};
  for (int rank = 0; rank < 3; ++rank) {
    auto p = plan_epoch(nodes, {.rank = rank, .world_size = 3, .batch_size = 2, .shuffle = false});
    EXPECT_EQ(p.seeds, want[rank]);
    ASSERT_EQ(p.num_batches, 2);
    EXPECT_EQ(std::vector<int64_t>(p.batch(1).begin(), p.batch(1).end()),
              (std::vector<int64_t>{want[rank][2], want[rank][3]}));
    EXPECT_EQ(p.repeated, 2);
    EXPECT_EQ(p.dropped, 0);
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

namespace dgcn {
namespace {

TEST(LocalSeedPlan, SpreadsARanksOwnNodesOverTheAskedBatches) {
  std::vector<int64_t> nodes;
  for (int64_t v = 40; v < 47; ++v) nodes.push_back(v);
  const EpochPlan p =
      plan_local_epoch(nodes, 3, {.seed = 1, .epoch = 0, .rank = 0, .world_size = 2, .shuffle = false});
  ASSERT_EQ(p.num_batches, 3);
  EXPECT_EQ(std::vector<int64_t>(p.batch(0).begin(), p.batch(0).end()), (std::vector<int64_t>{40, 41}));
  EXPECT_EQ(std::vector<int64_t>(p.batch(1).begin(), p.batch(1).end()), (std::vector<int64_t>{42, 43}));
  EXPECT_EQ(std::vector<int64_t>(p.batch(2).begin(), p.batch(2).end()), (std::vector<int64_t>{44, 45, 46}));
  EXPECT_EQ(p.key(2).batch, 2 * 2 + 0);

  // Shuffled: every node once, the order keyed by (seed, epoch, rank).
  const ShardOptions o{.seed = 1, .epoch = 4, .rank = 1, .world_size = 2};
  const EpochPlan a = plan_local_epoch(nodes, 2, o);
  std::vector<int64_t> all;
  for (int64_t b = 0; b < a.num_batches; ++b) all.insert(all.end(), a.batch(b).begin(), a.batch(b).end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, nodes);
  EXPECT_EQ(plan_local_epoch(nodes, 2, o).seeds, a.seeds);
  ShardOptions other_rank = o;
  other_rank.rank = 0;
  ShardOptions other_epoch = o;
  other_epoch.epoch = 5;
  EXPECT_NE(plan_local_epoch(nodes, 2, other_rank).seeds, a.seeds);
  EXPECT_NE(plan_local_epoch(nodes, 2, other_epoch).seeds, a.seeds);

  EXPECT_THROW(plan_local_epoch(nodes, 8, o), Error);  // an empty batch
  EXPECT_THROW(plan_local_epoch(nodes, 0, o), Error);
}

}  // namespace
}  // namespace dgcn
