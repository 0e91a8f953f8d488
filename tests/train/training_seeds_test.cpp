// Which seeds every epoch trains: the store's training nodes, or over the
// parts of a partitioned graph, the same plans as the whole graph's
// (kGlobal) or each part's own in equal batch counts (kLocal).
#include "train/training_seeds.h"

#include <gtest/gtest.h>

#include <memory>

#include "base/error.h"
#include "fixtures.h"
#include "graph/store_format.h"
#include "in_process_collectives.h"
#include "partition/partition.h"
#include "partition/partition_files.h"
#include "scratch_dir.h"

namespace dgcn {
namespace {

ShardOptions shard(int rank, int world, int64_t batch_size) {
  ShardOptions s;
  s.seed = 9;
  s.rank = rank;
  s.world_size = world;
  s.batch_size = batch_size;
  return s;
}

struct Parts {
  GraphStore whole = testing::community_store();
  std::vector<GraphStore> parts;
  std::vector<std::unique_ptr<PartMap>> maps;
  explicit Parts(int count) {
    const Buffer owner =
        Buffer::from_vector(assign_parts(whole, {.parts = count, .method = PartitionMethod::kRandom}));
    for (int r = 0; r < count; ++r) parts.push_back(extract_part(whole, owner, r, count, "{}", 1));
    for (int r = 0; r < count; ++r)
      maps.push_back(std::make_unique<PartMap>(parts[static_cast<size_t>(r)].part));
  }
};

TEST(TrainingSeeds, GlobalSeedsOverThePartsPlanEveryEpochAsTheWholeGraph) {
  Parts p(2);
  testing::InProcessGroup group(2);
  testing::run_ranks(2, [&](int r) {
    const TrainingSeeds over_parts =
        TrainingSeeds::of_parts(p.parts[static_cast<size_t>(r)], *p.maps[static_cast<size_t>(r)], group.at(r),
                                SeedMode::kGlobal, shard(r, 2, 32));
    const TrainingSeeds whole = TrainingSeeds::of_store(p.whole, shard(r, 2, 32));
    for (int64_t epoch : {0, 3}) {
      const EpochPlan a = over_parts.plan(epoch), b = whole.plan(epoch);
      EXPECT_EQ(a.seeds, b.seeds) << "rank " << r << ", epoch " << epoch;
      EXPECT_EQ(a.num_batches, b.num_batches);
      EXPECT_EQ(a.epoch, epoch);
    }
    EXPECT_FALSE(over_parts.union_mean_loss()) << "every training node is labelled";
  });
}

TEST(TrainingSeeds, LocalSeedsAreEachPartsOwnInEqualBatchCounts) {
  Parts p(3);
  testing::InProcessGroup group(3);
  std::vector<int64_t> batches(3);
  testing::run_ranks(3, [&](int r) {
    const GraphStore& part = p.parts[static_cast<size_t>(r)];
    const TrainingSeeds s = TrainingSeeds::of_parts(part, *p.maps[static_cast<size_t>(r)], group.at(r),
                                                    SeedMode::kLocal, shard(r, 3, 16));
    const EpochPlan plan = s.plan(1);
    batches[static_cast<size_t>(r)] = plan.num_batches;
    std::vector<int64_t> got(plan.seeds), own(part.train_nodes().begin(), part.train_nodes().end());
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, own) << "rank " << r << " trains exactly its part's training nodes";
    EXPECT_TRUE(s.union_mean_loss()) << "batches differ in size: the loss is the union mean";
  });
  EXPECT_EQ(batches[0], batches[1]);
  EXPECT_EQ(batches[1], batches[2]);
}

TEST(TrainingSeeds, AStoreWithoutLabelledTrainingNodesIsAnError) {
  GraphStore s = testing::community_store();
  const TrainingSeeds some = TrainingSeeds::of_store(s, shard(0, 1, 8));
  EXPECT_FALSE(some.union_mean_loss());
  auto labels = testing::damage<int32_t>(s.labels);
  for (int64_t v : s.train_nodes()) labels[static_cast<size_t>(v)] = -1;
  try {
    TrainingSeeds::of_store(s, shard(0, 1, 8));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("none of the"), std::string::npos) << e.what();
  }
  labels[static_cast<size_t>(s.train_nodes()[0])] = 1;
  EXPECT_TRUE(TrainingSeeds::of_store(s, shard(0, 1, 8)).union_mean_loss()) << "some unlabelled";
}

TEST(TrainingSeeds, SeedModesParseBack) {
  for (SeedMode m : {SeedMode::kGlobal, SeedMode::kLocal}) EXPECT_EQ(parse_seed_mode(seed_mode_name(m)), m);
  EXPECT_THROW(parse_seed_mode("all"), Error);
}

// The one rule dgcn-train (as a usage error) and run_train_job (on every
// rank) both apply: a seed mode needs a partition folder as its data.
TEST(SeedModeMisfit, ASeedModeNeedsAPartitionFolder) {
  testing::ScratchDir dir;
  const std::string store = dir.file("c.gcn");
  save_store(testing::community_store(), store, {});
  WritePartitionOptions o;
  o.partition = {.parts = 2, .threads = 1};
  write_partition(testing::community_store(), dir.file("p2"), o);
  EXPECT_EQ(seed_mode_misfit(dir.file("p2")), "");
  EXPECT_EQ(seed_mode_misfit(""),
            "seeds are chosen per rank on a partitioned graph (--data DIR from dgcn-prep partition); the "
            "synthetic preset is not one");
  EXPECT_EQ(seed_mode_misfit(store),
            "seeds are chosen per rank on a partitioned graph (--data DIR from dgcn-prep partition); " +
                store + " is not one");
}

}  // namespace
}  // namespace dgcn
