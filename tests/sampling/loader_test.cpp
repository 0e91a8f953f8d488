#include "sampling/loader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "base/digest.h"
#include "base/error.h"
#include "test_graphs.h"

namespace dgcn {
namespace {

GraphStore test_store() {
  return testing::make_store(testing::skewed_random_edges(2000, 8, 21), 5, 7);
}

uint64_t digest_of(const SampledBatch& b) {
  Digest d;
  d.update(std::span<const int64_t>(b.n_id));
  for (const Block& blk : b.blocks) {
    d.update(std::span<const int64_t>(blk.indptr));
    d.update(std::span<const int32_t>(blk.indices));
  }
  return d.value();
}

// Counts live leases; remembers the most alive at once.
struct CountingAllocator {
  std::atomic<int64_t> live{0}, peak{0}, calls{0};
  BatchAllocator make() {
    return [this](int64_t rows, int64_t f, int64_t seeds, int64_t label_bytes) {
      BatchMemory m = allocate_batch_memory(rows, f, seeds, label_bytes);
      calls++;
      int64_t now = ++live;
      int64_t p = peak.load();
      while (now > p && !peak.compare_exchange_weak(p, now)) {
      }
      std::shared_ptr<void> inner = std::move(m.lease);
      m.lease = std::shared_ptr<void>(inner.get(), [this, inner](void*) mutable {
        inner.reset();
        --live;
      });
      return m;
    };
  }
};

TEST(Loader, HandsOutTheSampledBatchesInOrderWithTheirRows) {
  GraphStore store = test_store();
  SamplerOptions sampler{.fanouts = {4, 3}};
  EpochPlan plan = plan_epoch(store.train_nodes(), {.seed = 8, .epoch = 2, .batch_size = 37});
  ASSERT_GT(plan.num_batches, 20);
  for (int workers : {1, 2, 5}) {
    for (int depth : {1, 3}) {
      SCOPED_TRACE(fmt::format("workers {} depth {}", workers, depth));
      NeighborLoader loader(store, {.sampler = sampler, .num_workers = workers, .queue_depth = depth});
      loader.start_epoch(plan);
      SamplerScratch scratch;
      int64_t b = 0;
      while (auto batch = loader.next()) {
        ASSERT_EQ(batch->sample.index, b);
        ASSERT_EQ(batch->sample.epoch, 2);
        SampledBatch direct = sample_neighbors(store.graph, plan.batch(b), sampler, plan.key(b), scratch);
        ASSERT_EQ(digest_of(batch->sample), digest_of(direct)) << "batch " << b;
        const auto& n_id = batch->sample.n_id;
        ASSERT_EQ(batch->features.size(), n_id.size() * 5);
        for (size_t i = 0; i < n_id.size(); ++i) {
          auto want = store.features_of(n_id[i]);
          ASSERT_EQ(std::memcmp(batch->features.data() + i * 5, want.data(), 5 * sizeof(float)), 0);
        }
        ASSERT_EQ(batch->labels.size(), static_cast<size_t>(batch->sample.num_seeds) * 4);
        for (int64_t i = 0; i < batch->sample.num_seeds; ++i) {
          int32_t label;
          std::memcpy(&label, batch->labels.data() + i * 4, 4);
          ASSERT_EQ(label, store.label(n_id[i]));
        }
        ++b;
      }
      EXPECT_EQ(b, plan.num_batches);
      EXPECT_FALSE(loader.next().has_value());
      EXPECT_EQ(loader.stats().batches, plan.num_batches);
    }
  }
}

TEST(Loader, GathersOnlyLabelsWhenAskedNotToGatherFeatures) {
  GraphStore store = test_store();
  NeighborLoader loader(store, {.sampler = {.fanouts = {4, 3}}, .gather_features = false});
  loader.start_epoch(plan_epoch(store.train_nodes(), {.seed = 3, .batch_size = 50}));
  int64_t batches = 0;
  while (auto batch = loader.next()) {
    EXPECT_TRUE(batch->features.empty());
    ASSERT_EQ(batch->labels.size(), static_cast<size_t>(batch->sample.num_seeds) * 4);
    for (int64_t i = 0; i < batch->sample.num_seeds; ++i) {
      int32_t label;
      std::memcpy(&label, batch->labels.data() + i * 4, 4);
      ASSERT_EQ(label, store.label(batch->sample.n_id[i])) << "seed " << i;
    }
    ++batches;
  }
  EXPECT_GT(batches, 10);
}

TEST(Loader, SameBatchesForAnyWorkerCountAndAcrossEpochs) {
  GraphStore store = test_store();
  auto run = [&](int workers, int threads_per_batch, bool recycle = false) {
    NeighborLoader loader(store, {.sampler = {.fanouts = {5, 5}, .num_threads = threads_per_batch},
                                  .num_workers = workers,
                                  .gather = false});
    Digest d;
    for (int64_t epoch = 0; epoch < 3; ++epoch) {
      loader.start_epoch(plan_epoch(store.train_nodes(), {.seed = 1, .epoch = epoch, .batch_size = 300}));
      while (auto batch = loader.next()) {
        d.update_value(digest_of(batch->sample));
        EXPECT_TRUE(batch->features.empty());
        // Recycled batches come back holding old data; it must all be overwritten.
        if (recycle) loader.recycle(std::move(*batch));
      }
    }
    return d.value();
  };
  const uint64_t reference = run(1, 1);
  EXPECT_EQ(run(2, 1), reference);
  EXPECT_EQ(run(16, 1), reference);
  EXPECT_EQ(run(2, 3), reference);
  EXPECT_EQ(run(1, 1, true), reference);
  EXPECT_EQ(run(3, 2, true), reference);
}

// A resumed epoch (Note [In-epoch checkpoints]): started at batch b, the
// loader hands out exactly batches b, b+1, ... of the whole epoch.
TEST(Loader, AnEpochStartedInsideHandsOutTheRestOfTheSameBatches) {
  GraphStore store = test_store();
  NeighborLoader loader(store, {.sampler = {.fanouts = {5, 5}}, .num_workers = 2, .gather = false});
  const EpochPlan plan = plan_epoch(store.train_nodes(), {.seed = 4, .epoch = 2, .batch_size = 100});
  ASSERT_GT(plan.num_batches, 4);
  std::vector<uint64_t> whole;
  loader.start_epoch(plan);
  while (auto batch = loader.next()) whole.push_back(digest_of(batch->sample));
  for (int64_t first : {int64_t{1}, int64_t{3}, plan.num_batches}) {
    std::vector<uint64_t> rest;
    loader.start_epoch(plan, first);
    while (auto batch = loader.next()) rest.push_back(digest_of(batch->sample));
    EXPECT_EQ(rest, std::vector<uint64_t>(whole.begin() + first, whole.end())) << "from batch " << first;
  }
  EXPECT_THROW(loader.start_epoch(plan, plan.num_batches + 1), Error);
  EXPECT_THROW(loader.start_epoch(plan, -1), Error);
}

TEST(Loader, NeverHoldsMoreThanTheQueueDepth) {
  GraphStore store = test_store();
  for (int depth : {1, 2, 4}) {
    CountingAllocator counting;
    NeighborLoader loader(store, {.sampler = {.fanouts = {3, 3}}, .num_workers = 4, .queue_depth = depth},
                          counting.make());
    loader.start_epoch(plan_epoch(store.train_nodes(), {.batch_size = 25}));
    int64_t n = 0;
    while (auto batch = loader.next()) {
      // A slow consumer: the workers fill the window and must stop there.
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      ++n;
    }
    LoaderStats s = loader.stats();
    EXPECT_EQ(n, 40);
    EXPECT_LE(s.peak_in_flight, depth);
    EXPECT_EQ(s.peak_in_flight, depth) << "a slow consumer should let the window fill";
    // Leases alive at once: the window plus the one batch the consumer holds.
    EXPECT_LE(counting.peak.load(), depth + 1);
    EXPECT_EQ(counting.live.load(), 0) << "every lease is returned";
    EXPECT_GT(s.worker_blocked_s, 0.0);
    EXPECT_GT(s.worker_busy_s, 0.0);
  }
}

// LoaderStats::buffers_created counts the fresh buffers of the loader's own
// pool: a consumer that keeps every batch needs one each; one that drops each
// batch before the next reuses them; a caller's allocator is not counted.
TEST(Loader, CountsTheFreshBuffersOfItsOwnPool) {
  GraphStore store = test_store();
  const EpochPlan plan = plan_epoch(store.train_nodes(), {.batch_size = 25});
  ASSERT_GE(plan.num_batches, 8);
  const LoaderOptions options{.sampler = {.fanouts = {3, 3}}, .num_workers = 1, .queue_depth = 2};
  {
    NeighborLoader loader(store, options);
    loader.start_epoch(plan);
    std::vector<LoadedBatch> kept;
    while (auto batch = loader.next()) kept.push_back(std::move(*batch));
    EXPECT_EQ(loader.stats().buffers_created, plan.num_batches);
  }
  {
    NeighborLoader loader(store, options);
    loader.start_epoch(plan);
    while (auto batch = loader.next()) {
    }
    const int64_t created = loader.stats().buffers_created;
    EXPECT_GE(created, 1);
    EXPECT_LT(created, plan.num_batches) << "dropped batches' buffers are reused";
  }
  CountingAllocator counting;
  NeighborLoader loader(store, options, counting.make());
  loader.start_epoch(plan);
  while (auto batch = loader.next()) {
  }
  EXPECT_EQ(counting.calls.load(), plan.num_batches);
  EXPECT_EQ(loader.stats().buffers_created, 0);
}

TEST(Loader, WorkerErrorReachesTheConsumerWithItsMessage) {
  GraphStore store = test_store();
  NeighborLoader loader(store, {.sampler = {.fanouts = {2}}, .num_workers = 3, .queue_depth = 2});
  EpochPlan plan = plan_epoch(store.train_nodes(), {.epoch = 4, .batch_size = 10, .shuffle = false});
  plan.seeds[2 * 10 + 1] = 5000;  // batch 2 holds a node the graph does not have
  loader.start_epoch(plan);
  ASSERT_TRUE(loader.next().has_value());
  ASSERT_TRUE(loader.next().has_value());
  try {
    loader.next();
    FAIL() << "batch 2 must fail";
  } catch (const Error& e) {
    EXPECT_STREQ(
        e.what(),
        "loader: batch 2 of epoch 4: sample_neighbors: seeds[1] = 5000 is not a node id in [0, 2000)");
  }
  EXPECT_FALSE(loader.next().has_value()) << "the failed epoch is abandoned";
  // The loader stays usable.
  loader.start_epoch(plan_epoch(store.train_nodes(), {.batch_size = 500}));
  int64_t n = 0;
  while (loader.next()) ++n;
  EXPECT_EQ(n, 2);
}

TEST(Loader, AllocatorErrorsAndShortBuffersAreReported) {
  GraphStore store = test_store();
  NeighborLoader throwing(store, {.sampler = {.fanouts = {2}}},
                          [](int64_t, int64_t, int64_t, int64_t) -> BatchMemory {
                            throw std::runtime_error("pinned pool exhausted");
                          });
  throwing.start_epoch(plan_epoch(store.train_nodes(), {.batch_size = 100}));
  EXPECT_THROW(
      {
        try {
          throwing.next();
        } catch (const Error& e) {
          EXPECT_STREQ(e.what(), "loader: batch 0 of epoch 0: pinned pool exhausted");
          throw;
        }
      },
      Error);

  NeighborLoader short_memory(store, {.sampler = {.fanouts = {2}}},
                              [](int64_t rows, int64_t f, int64_t seeds, int64_t lb) {
                                BatchMemory m = allocate_batch_memory(rows, f, seeds, lb);
                                m.features = m.features.first(m.features.size() - 1);
                                return m;
                              });
  short_memory.start_epoch(plan_epoch(store.train_nodes(), {.batch_size = 100}));
  try {
    short_memory.next();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the batch allocator gave"), std::string::npos) << e.what();
  }
}

TEST(Loader, ShutsDownMidEpochWithoutHanging) {
  GraphStore store = test_store();
  const auto t0 = std::chrono::steady_clock::now();
  for (int workers : {1, 4}) {
    { NeighborLoader idle(store, {.sampler = {.fanouts = {2}}, .num_workers = workers}); }
    {
      // Workers blocked on a full window, consumer holding a batch.
      NeighborLoader loader(store,
                            {.sampler = {.fanouts = {3, 3}}, .num_workers = workers, .queue_depth = 2});
      loader.start_epoch(plan_epoch(store.train_nodes(), {.batch_size = 5}));
      auto held = loader.next();
      ASSERT_TRUE(held.has_value());
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    {
      // Restarting mid-epoch abandons the old batches.
      NeighborLoader loader(store, {.sampler = {.fanouts = {3}}, .num_workers = workers, .queue_depth = 3});
      loader.start_epoch(plan_epoch(store.train_nodes(), {.epoch = 0, .batch_size = 5}));
      ASSERT_TRUE(loader.next().has_value());
      EpochPlan second = plan_epoch(store.train_nodes(), {.epoch = 1, .batch_size = 50});
      loader.start_epoch(second);
      int64_t b = 0;
      while (auto batch = loader.next()) {
        EXPECT_EQ(batch->sample.epoch, 1);
        EXPECT_EQ(batch->sample.index, b++);
      }
      EXPECT_EQ(b, second.num_batches);
    }
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(60)) << "shutdown took too long";
}

TEST(Loader, RejectsBadOptions) {
  GraphStore store = test_store();
  EXPECT_THROW(NeighborLoader(store, {.sampler = {.fanouts = {2}}, .num_workers = 0}), Error);
  EXPECT_THROW(NeighborLoader(store, {.sampler = {.fanouts = {2}}, .queue_depth = 0}), Error);
  EXPECT_THROW(NeighborLoader(store, {.sampler = {.fanouts = {}}}), Error);
}

}  // namespace
}  // namespace dgcn
