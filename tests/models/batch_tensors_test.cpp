// The bridge from a loader batch to tensors (models/batch_tensors.h): both
// first-layer inputs (gathered rows, the store's rows) give the same model
// output bit for bit, and the intra-op chunk loop covers every chunk once.
#include "models/batch_tensors.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <atomic>
#include <vector>

#include "fixtures.h"
#include "sampling/seed_partition.h"

namespace dgcn {
namespace {

LoadedBatch first_batch(const GraphStore& store, bool gather_features) {
  LoaderOptions lo;
  lo.sampler.fanouts = {3, 3};
  lo.gather_features = gather_features;
  NeighborLoader loader(store, lo);
  ShardOptions so;
  so.batch_size = 16;
  loader.start_epoch(plan_epoch(store.train_nodes(), so));
  std::optional<LoadedBatch> b = loader.next();
  EXPECT_TRUE(b.has_value());
  return std::move(*b);
}

TEST(BatchTensors, StoreRowsAndGatheredRowsGiveTheSameLogits) {
  const GraphStore store = testing::community_store();
  const at::Tensor features = torch::from_blob(const_cast<float*>(store.features.as<float>().data()),
                                               {store.num_nodes(), store.num_features}, torch::kFloat);
  GcnOptions g;
  g.in_features = store.num_features, g.hidden = 16, g.num_classes = store.num_classes, g.num_layers = 2;
  torch::manual_seed(3);
  Gcn model(g);
  model->train();
  const LoadedBatch gathered = first_batch(store, true);
  const LoadedBatch bare = first_batch(store, false);
  ASSERT_EQ(gathered.sample.n_id, bare.sample.n_id) << "same plan, same key: the same sample";
  EXPECT_TRUE(bare.features.empty());
  const BatchTensorOptions options;
  const BatchTensors a = batch_tensors(gathered, store, features, *model, options);
  const BatchTensors b = batch_tensors(bare, store, features, *model, options);
  EXPECT_EQ(a.x.size(0), static_cast<int64_t>(gathered.sample.n_id.size()));
  EXPECT_EQ(b.blocks.front().num_cols, store.num_nodes()) << "columns renumbered to global ids";
  EXPECT_TRUE(b.x.is_same(features)) << "the store's rows, no copy";
  EXPECT_TRUE(torch::equal(a.y, b.y));
  model->eval();  // no dropout: one forward each
  EXPECT_TRUE(torch::equal(model->forward(a.blocks, a.x), model->forward(b.blocks, b.x)));
}

TEST(BatchTensors, IntraOpChunksRunEveryChunkOnceOnTheLibTorchPool) {
  const int saved = at::get_num_threads();
  for (int threads : {1, 2}) {
    at::set_num_threads(threads);
    std::vector<std::atomic<int>> seen(1003);
    intra_op_chunks()(1003, 10, [&](int64_t begin, int64_t end) {
      EXPECT_EQ(begin % 10, 0);
      EXPECT_EQ(end, std::min<int64_t>(begin + 10, 1003));
      for (int64_t i = begin; i < end; ++i) seen[i]++;
    });
    for (const auto& s : seen) EXPECT_EQ(s.load(), 1);
  }
  at::set_num_threads(saved);
  EXPECT_THROW(intra_op_chunks()(100, 1,
                                 [](int64_t b, int64_t) {
                                   if (b == 57) throw Error("chunk 57");
                                 }),
               Error);
}

}  // namespace
}  // namespace dgcn
