#include "sampling/partitioned_sampler.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "base/error.h"
#include "fixtures.h"
#include "in_process_collectives.h"
#include "partition/partition.h"
#include "sampling/seed_partition.h"
#include "test_graphs.h"

namespace dgcn {
namespace {

using testing::InProcessGroup;
using testing::run_ranks;
using testing::same_batch;

// A whole store and its parts, each with the owner map every rank builds.
struct Partitioned {
  GraphStore whole;
  std::vector<GraphStore> parts;
  std::vector<std::unique_ptr<PartMap>> maps;
};

Partitioned partition(GraphStore whole, int count, PartitionMethod method) {
  Partitioned p;
  p.whole = std::move(whole);
  const Buffer owner =
      Buffer::from_vector(assign_parts(p.whole, {.parts = count, .method = method, .seed = 3}));
  for (int r = 0; r < count; ++r) {
    p.parts.push_back(extract_part(p.whole, owner, r, count, "{}", 1));
    p.parts.back().validate("part", 1);
  }
  for (int r = 0; r < count; ++r)
    p.maps.push_back(std::make_unique<PartMap>(p.parts[static_cast<size_t>(r)].part));
  return p;
}

// Rank r's seeds for batch b: distinct, spread over every part.
std::vector<int64_t> seeds_of(int64_t n, int rank, int64_t b, int64_t count) {
  std::vector<int64_t> seeds;
  for (int64_t i = 0; i < count; ++i) seeds.push_back((i * 7919 + rank * 104729 + b * 31) % n);
  std::sort(seeds.begin(), seeds.end());
  seeds.erase(std::unique(seeds.begin(), seeds.end()), seeds.end());
  std::reverse(seeds.begin(), seeds.end());
  return seeds;
}

// Every rank samples and fetches three batches of its own at the same time;
// each must equal sample_neighbors on the whole graph and the whole store's rows.
void expect_whole_graph_batches(const Partitioned& p, const SamplerOptions& o) {
  const int count = static_cast<int>(p.parts.size());
  const GraphStore& whole = p.whole;
  InProcessGroup group(count);
  run_ranks(count, [&](int rank) {
    PartitionedSampler sampler(p.parts[static_cast<size_t>(rank)], *p.maps[static_cast<size_t>(rank)],
                               group.at(rank), o);
    SamplerScratch scratch;
    SampledBatch batch;  // reused, as the loader does
    for (int64_t b = 0; b < 3; ++b) {
      const std::vector<int64_t> seeds = seeds_of(whole.num_nodes(), rank, b, 40 + 30 * rank);
      const BatchKey key{11, 2, b * count + rank};
      sampler.sample(seeds, key, batch);
      const SampledBatch expected = sample_neighbors(whole.graph, seeds, o, key, scratch);
      ASSERT_TRUE(same_batch(expected, batch)) << "rank " << rank << " batch " << b;

      const auto rows = static_cast<int64_t>(batch.n_id.size());
      std::vector<float> features(static_cast<size_t>(rows * whole.num_features));
      std::vector<std::byte> labels(static_cast<size_t>(batch.num_seeds) * sizeof(int32_t));
      sampler.fetch(batch, features, labels);
      ASSERT_EQ(batch.degrees.size(), static_cast<size_t>(rows));
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t v = batch.n_id[static_cast<size_t>(i)];
        ASSERT_EQ(batch.degrees[static_cast<size_t>(i)], whole.degrees()[static_cast<size_t>(v)]) << v;
        const auto row = whole.features_of(v);
        ASSERT_EQ(0, std::memcmp(features.data() + i * whole.num_features, row.data(), row.size_bytes()))
            << v;
      }
      for (int64_t i = 0; i < batch.num_seeds; ++i) {
        int32_t label;
        std::memcpy(&label, labels.data() + i * 4, 4);
        ASSERT_EQ(label, whole.label(batch.n_id[static_cast<size_t>(i)]));
      }
    }
  });
}

TEST(PartitionedSampler, BatchesAndRowsEqualTheWholeGraphs) {
  GraphStore whole = testing::make_store(testing::skewed_random_edges(3000, 12, 7), 5, 4);
  for (int count : {2, 3, 4}) {
    for (PartitionMethod method : {PartitionMethod::kRandom, PartitionMethod::kMetis}) {
      const Partitioned p = partition(whole, count, method);
      for (bool replace : {false, true}) {
        for (auto fanouts : std::vector<std::vector<int64_t>>{{5, 3, 2}, {-1, 2}, {40, 0, 1}}) {
          SCOPED_TRACE(fmt::format("{} parts ({}), fanouts {}, replace {}", count,
                                   partition_method_name(method), fmt::join(fanouts, ","), replace));
          expect_whole_graph_batches(p, {.fanouts = fanouts, .replace = replace});
        }
      }
    }
  }
}

TEST(PartitionedSampler, MultiLabelRowsComeFromTheirOwners) {
  const Partitioned p = partition(testing::community_store(Task::kMultiLabel), 3, PartitionMethod::kRandom);
  InProcessGroup group(3);
  run_ranks(3, [&](int rank) {
    PartitionedSampler sampler(p.parts[static_cast<size_t>(rank)], *p.maps[static_cast<size_t>(rank)],
                               group.at(rank), {.fanouts = {4, 4}});
    SampledBatch batch;
    const std::vector<int64_t> seeds = seeds_of(p.whole.num_nodes(), rank, 0, 25);
    sampler.sample(seeds, {1, 0, rank}, batch);
    const int64_t lb = p.whole.label_row_bytes();
    ASSERT_EQ(sampler.label_bytes(), lb);
    std::vector<std::byte> labels(static_cast<size_t>(batch.num_seeds * lb));
    sampler.fetch(batch, {}, labels);  // no features wanted
    for (int64_t i = 0; i < batch.num_seeds; ++i) {
      const int64_t v = batch.n_id[static_cast<size_t>(i)];
      ASSERT_EQ(0,
                std::memcmp(labels.data() + i * lb, p.whole.labels.data() + v * lb, static_cast<size_t>(lb)));
    }
  });
}

TEST(PartitionedSampler, CountsTheBytesSentToOtherRanks) {
  const Partitioned p =
      partition(testing::make_store(testing::skewed_random_edges(800, 8, 2)), 2, PartitionMethod::kRandom);
  std::vector<ExchangeCounters> counters(2);
  InProcessGroup group(2);
  run_ranks(2, [&](int rank) {
    PartitionedSampler sampler(p.parts[static_cast<size_t>(rank)], *p.maps[static_cast<size_t>(rank)],
                               group.at(rank), {.fanouts = {3, 3}});
    SampledBatch batch;
    sampler.sample(seeds_of(800, rank, 0, 50), {1, 0, rank}, batch);
    std::vector<float> features(batch.n_id.size() * 4);
    std::vector<std::byte> labels(static_cast<size_t>(batch.num_seeds) * 4);
    sampler.fetch(batch, features, labels);
    counters[static_cast<size_t>(rank)] = sampler.counters();
  });
  for (const auto& c : counters) {
    EXPECT_EQ(c.exchanges, 2 * 2 + 2);  // two per hop, two for the rows
    EXPECT_GT(c.id_bytes, 0);
    EXPECT_GT(c.pick_bytes, 0);
    // Every remote row carries 4 floats and a degree (and 4 label bytes): far more than its id.
    EXPECT_GT(c.feature_bytes, c.id_bytes / 2);
  }
  // One rank alone sends nothing to others.
  const Partitioned one =
      partition(testing::make_store(testing::cycle_edges(20)), 1, PartitionMethod::kRandom);
  InProcessGroup solo(1);
  PartitionedSampler sampler(one.parts[0], *one.maps[0], solo.at(0), {.fanouts = {2}});
  SampledBatch batch;
  sampler.sample(std::vector<int64_t>{3, 4}, {1, 0, 0}, batch);
  EXPECT_EQ(sampler.counters().id_bytes + sampler.counters().pick_bytes, 0);
}

TEST(PartitionedSampler, BadSeedsAndAWrongPartAreErrors) {
  const Partitioned p = partition(testing::make_store(testing::cycle_edges(30)), 2, PartitionMethod::kRandom);
  InProcessGroup group(2);
  // Rank 0 holding part 1.
  EXPECT_THROW(PartitionedSampler(p.parts[1], *p.maps[1], group.at(0), {.fanouts = {2}}), Error);
  // A part's rows are no graph to sample on their own.
  SamplerScratch scratch0;
  EXPECT_THROW(sample_neighbors(p.parts[0].graph, p.parts[0].part.ids().first(1), {.fanouts = {2}}, {1, 0, 0},
                                scratch0),
               Error);
  InProcessGroup solo(1);
  const Partitioned one =
      partition(testing::make_store(testing::cycle_edges(30)), 1, PartitionMethod::kRandom);
  PartitionedSampler sampler(one.parts[0], *one.maps[0], solo.at(0), {.fanouts = {2}});
  SampledBatch batch;
  EXPECT_THROW(sampler.sample(std::vector<int64_t>{1, 30}, {1, 0, 0}, batch), Error);
  EXPECT_THROW(sampler.sample(std::vector<int64_t>{5, 5}, {1, 0, 0}, batch), Error);
  // The map is clean after the failures: a good batch equals the whole graph's.
  sampler.sample(std::vector<int64_t>{5, 6}, {1, 0, 0}, batch);
  SamplerScratch scratch;
  EXPECT_TRUE(same_batch(
      sample_neighbors(one.whole.graph, std::vector<int64_t>{5, 6}, {.fanouts = {2}}, {1, 0, 0}, scratch),
      batch));
}

// The loader with the partitioned producer hands out, on every rank, the
// batches the whole graph's loader would.
TEST(PartitionedSampler, LoaderBatchesEqualTheWholeGraphLoaders) {
  const Partitioned p =
      partition(testing::make_store(testing::skewed_random_edges(2000, 10, 4)), 2, PartitionMethod::kMetis);
  const SamplerOptions o{.fanouts = {4, 3}};
  InProcessGroup group(2);
  run_ranks(2, [&](int rank) {
    PartitionedBatchProducer producer(p.parts[static_cast<size_t>(rank)], *p.maps[static_cast<size_t>(rank)],
                                      group.at(rank), o, /*gather_features=*/true);
    NeighborLoader partitioned(p.parts[static_cast<size_t>(rank)],
                               {.sampler = o, .num_workers = 1, .queue_depth = 2}, nullptr, &producer);
    NeighborLoader whole(p.whole, {.sampler = o, .num_workers = 2, .queue_depth = 3});
    for (int64_t epoch = 0; epoch < 2; ++epoch) {
      const ShardOptions s{.seed = 5, .epoch = epoch, .rank = rank, .world_size = 2, .batch_size = 64};
      partitioned.start_epoch(plan_epoch(p.whole.train_nodes(), s));
      whole.start_epoch(plan_epoch(p.whole.train_nodes(), s));
      int64_t batches = 0;
      while (auto a = partitioned.next()) {
        auto b = whole.next();
        ASSERT_TRUE(b.has_value());
        ASSERT_TRUE(same_batch(b->sample, a->sample)) << "epoch " << epoch << " batch " << batches;
        ASSERT_EQ(a->features.size(), b->features.size());
        ASSERT_EQ(0, std::memcmp(a->features.data(), b->features.data(), a->features.size_bytes()));
        ASSERT_EQ(0, std::memcmp(a->labels.data(), b->labels.data(), a->labels.size_bytes()));
        partitioned.recycle(std::move(*a));
        ++batches;
      }
      EXPECT_FALSE(whole.next().has_value());
      EXPECT_EQ(batches, 8);  // 1000 training nodes, 500 per rank, batches of 64
    }
    EXPECT_GT(producer.counters().exchanges, 0);
  });
}

TEST(PartitionedSampler, AnOrderedProducerNeedsOneWorker) {
  const Partitioned p = partition(testing::make_store(testing::cycle_edges(30)), 1, PartitionMethod::kRandom);
  InProcessGroup solo(1);
  PartitionedBatchProducer producer(p.parts[0], *p.maps[0], solo.at(0), {.fanouts = {2}}, true);
  EXPECT_THROW(
      NeighborLoader(p.parts[0], {.sampler = {.fanouts = {2}}, .num_workers = 2}, nullptr, &producer), Error);
}

}  // namespace
}  // namespace dgcn
